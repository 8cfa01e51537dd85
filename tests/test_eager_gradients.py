"""Eager backward agrees with the functional transforms (sg.grad), finite differences and PyTorch."""
import numpy as np
import pytest
import sympy

import symgrad as sg
from gradcheck import numeric_grad

try:
    import torch
except ImportError:  # the PyTorch comparisons are skipped
    torch = None

RNG = np.random.default_rng(7)
LIBRARIES = [sg] + ([] if torch is None else [torch])  # symgrad, and PyTorch as a second answer when installed

# Functions of (w, b, x): written once with sg.* and operators, run on arrays and on tensors.
FUNCTIONS = {
    "mlp_mse": lambda w, b, x: sg.mean((sg.tanh(x @ w + b) - 0.5) ** 2),
    "softmax_xent": lambda w, b, x: -sg.sum(sg.log_softmax(x @ w + b, axis=1)[:, 0]),
    "exp_log_sqrt": lambda w, b, x: sg.sum(sg.log1p(sg.exp(w)) * sg.sqrt(b * b + 1.0)) + sg.sum(x) * 0,
    "reductions": lambda w, b, x: sg.max(w, axis=0).sum() + sg.prod(b) + sg.var(x @ w),
    "indexing": lambda w, b, x: (w[1:, ::-1] ** 2).sum() + sg.take(b, np.array([0, 0, 1])).sum() + x[0, 1],
    "broadcast_where": lambda w, b, x: sg.sum(sg.where(x @ w > 0, sg.sigmoid(x @ w), b * 0.1)),
    "concat_stack": lambda w, b, x: sg.sum(sg.concatenate([w, w * 2], axis=1) ** 2) + sg.stack([b, b]).mean(),
}


def _args():
    return RNG.standard_normal((3, 2)), RNG.standard_normal(2) + 2.0, RNG.standard_normal((4, 3))


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_eager_matches_functional_and_finite_differences(name):
    fn = FUNCTIONS[name]
    w, b, x = _args()
    tw, tb, tx = (sg.tensor(a, requires_grad=True) for a in (w, b, x))
    loss = fn(tw, tb, tx)
    loss.backward()
    assert loss.item() == pytest.approx(float(fn(w, b, x)), rel=1e-12)
    functional = sg.grad(fn, argnums=(0, 1, 2))(w, b, x)
    for tensor_arg, expected, argnum in zip((tw, tb, tx), functional, range(3)):
        if tensor_arg.grad is None:  # unused by the function, as PyTorch leaves it
            assert not np.any(expected)
            continue
        np.testing.assert_allclose(tensor_arg.grad.numpy(), expected, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(tensor_arg.grad.numpy(), numeric_grad(fn, (w, b, x), argnum),
                                   rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_repeated_backward_through_the_lowered_adjoint_stays_correct(name):
    fn = FUNCTIONS[name]
    w, b, x = _args()
    expected = sg.grad(fn, argnums=(0, 1, 2))(w, b, x)
    for _ in range(3):  # first call op by op, then through the lowered graph
        tensors = [sg.tensor(a, requires_grad=True) for a in (w, b, x)]
        fn(*tensors).backward()
        for t, e in zip(tensors, expected):
            got = t.grad.numpy() if t.grad is not None else np.zeros_like(e)
            np.testing.assert_allclose(got, e, rtol=1e-9, atol=1e-12)


def test_second_order_matches_hessian():
    f = lambda v: sg.sum(sg.sin(v) * v[::-1] ** 2)  # noqa: E731
    v = RNG.standard_normal(3)
    tv = sg.tensor(v, requires_grad=True)
    g, = sg.autograd.grad(f(tv), tv, create_graph=True)
    rows = [sg.autograd.grad(g[i], tv, retain_graph=True)[0].numpy() for i in range(3)]
    np.testing.assert_allclose(np.stack(rows), sg.hessian(f)(v), rtol=1e-9, atol=1e-12)


@pytest.fixture
def torch_module():
    return pytest.importorskip("torch")


def test_against_pytorch_on_a_tutorial_program(torch_module):
    torch = torch_module
    x_np, w_np, b_np = RNG.standard_normal((5, 3)), RNG.standard_normal((3, 1)), RNG.standard_normal(1)

    def program(lib, x, w, b):
        h = (x @ w + b).tanh()
        h.retain_grad()
        y = (h * h).sigmoid().sum() + (w ** 3).mean()
        y.backward()
        return y, h

    sx, sw, sb = sg.tensor(x_np), sg.tensor(w_np, requires_grad=True), sg.tensor(b_np, requires_grad=True)
    tx = torch.tensor(x_np)
    tw, tb = torch.tensor(w_np, requires_grad=True), torch.tensor(b_np, requires_grad=True)
    sy, sh = program(sg, sx, sw, sb)
    ty, th = program(torch, tx, tw, tb)
    assert sy.item() == pytest.approx(ty.item(), rel=1e-12)
    for ours, theirs in ((sw.grad, tw.grad), (sb.grad, tb.grad), (sh.grad, th.grad)):
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-10)


# Graphs whose derivative is zero everywhere: PyTorch materializes zeros (x.grad is a zero tensor).
ZERO_DERIVATIVE = {
    "sign": lambda lib, x: lib.sign(x).sum(),
    "sign method": lambda lib, x: x.sign().sum(),
    "sign of sign": lambda lib, x: lib.sign(lib.sign(x)).sum(),
    "sign of a 0-d element": lambda lib, x: lib.sign(x[1]),
    "times zero": lambda lib, x: (x * 0).sum(),
    "where of constants": lambda lib, x: (lib.where(x > 0, 1.0, 2.0) + x * 0).sum(),
    "clamp outside the range": lambda lib, x: x.clamp(5.0, 6.0).sum(),
}
_POINTS = np.array([-1.5, 0.0, 0.4, 2.6])


@pytest.mark.parametrize("name", sorted(ZERO_DERIVATIVE))
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_zero_derivatives_give_zero_gradients_not_none(name, dtype):
    """sg.sign's derivative is 0: x.grad used to stay None, where PyTorch gives zeros."""
    fn = ZERO_DERIVATIVE[name]
    for _ in range(3):  # the first backward, then the cached (lowered) adjoint
        x = sg.tensor(_POINTS.astype(dtype), requires_grad=True)
        fn(sg, x).backward()
        assert x.grad is not None and x.grad.dtype == dtype
        np.testing.assert_array_equal(x.grad.numpy(), np.zeros(4, dtype))
        g, = sg.autograd.grad(fn(sg, x), [x])
        np.testing.assert_array_equal(g.numpy(), np.zeros(4, dtype))
        g, = sg.autograd.grad(fn(sg, x), [x], create_graph=True)
        np.testing.assert_array_equal(g.detach().numpy(), np.zeros(4, dtype))


def test_zero_derivative_gives_zeros_to_a_parent_and_finite_differences_agree():
    x = sg.tensor(_POINTS + 0.25, requires_grad=True)
    y = sg.sin(x)  # a non-leaf parent that receives zeros and passes them on
    (sg.sign(y).sum() + sg.sum(x * 0.0)).backward()
    fd = numeric_grad(lambda v: np.sum(np.sign(np.sin(v))), [_POINTS + 0.25], 0)
    np.testing.assert_array_equal(x.grad.numpy(), fd)


def test_a_user_defined_piecewise_constant_op_gives_zeros_as_the_functional_gradient_does():
    step = sg.elementwise("unit_step", lambda v: sympy.Piecewise((1, v > 0), (0, True)))
    for dtype in (np.float64, np.float32):
        x = sg.tensor(_POINTS.astype(dtype), requires_grad=True)
        sg.sum(step(x) * 3.0).backward()
        expected = sg.grad(lambda v: sg.sum(step(v) * 3.0))(_POINTS.astype(dtype))
        assert x.grad.dtype == dtype
        np.testing.assert_array_equal(x.grad.numpy(), expected)
        np.testing.assert_array_equal(x.grad.numpy(), np.zeros(4, dtype))


def test_an_input_no_cotangent_reaches_keeps_grad_none():
    """A custom Function returning None sends no gradient: x.grad stays None, as in PyTorch."""
    class Stop(sg.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return None

    x = sg.tensor([1.0, 2.0], requires_grad=True)
    Stop.apply(sg.sign(x * 3)).sum().backward()
    assert x.grad is None


@pytest.mark.parametrize("name", sorted(ZERO_DERIVATIVE))
def test_zero_derivatives_match_pytorch(name, torch_module):
    fn = ZERO_DERIVATIVE[name]
    grads = []
    for lib in (sg, torch_module):
        x = lib.tensor(_POINTS, requires_grad=True)
        fn(lib, x).backward()
        grads.append(x.grad.detach().numpy())
    np.testing.assert_array_equal(*grads)


# One tensor in several output slots: every slot's cotangent is summed, as in PyTorch.
_A, _B = np.array([1.0, 10.0]), np.array([100.0, 1000.0])


def _repeated_outputs(lib):
    """{case: result} for programs that pass one tensor as several outputs of backward/grad."""
    def t(values, requires_grad=False):
        return lib.tensor(np.asarray(values, float), requires_grad=requires_grad)

    results = {}
    x = t([1.0, 2.0], True)
    y = x * x
    results["grad, non-leaf twice"] = lib.autograd.grad([y, y], [x], grad_outputs=[t(_A), t(_B)])[0].tolist()
    results["grad, leaf twice"] = lib.autograd.grad([x, x], [x], grad_outputs=[t(_A), t(_B)])[0].tolist()
    s = (x * x).sum()
    results["grad, scalar three times"] = lib.autograd.grad([s, s, s], [x])[0].tolist()
    results["grad, twice with another output between"] = lib.autograd.grad(
        [y, y * 3, y], [y], [t(_A), t(_B), t(_A)])[0].tolist()
    seen = []
    x = t([1.0, 2.0], True)
    y = x * x
    y.retain_grad()
    y.register_hook(lambda g: seen.append(g.tolist()))
    lib.autograd.backward([y, y], [t(_A), t(_B)])
    results["backward: x.grad, y.grad, hook calls"] = (x.grad.tolist(), y.grad.tolist(), seen)
    x = t([1.0, 2.0], True)
    lib.autograd.backward([x, x], [t(_A), t(_B)])
    results["backward, leaf twice"] = x.grad.tolist()
    x = t([1.0, 2.0], True)
    g, = lib.autograd.grad([x ** 3, x ** 3], [x], [t(_A), t(_B)], create_graph=True)
    results["create_graph: g and its gradient"] = (g.tolist(), lib.autograd.grad(g.sum(), [x])[0].tolist())
    return results


def test_repeated_outputs_sum_their_cotangents():
    results = _repeated_outputs(sg)
    x = np.array([1.0, 2.0])
    total = _A + _B
    assert results["grad, non-leaf twice"] == (total * 2 * x).tolist()
    assert results["grad, leaf twice"] == total.tolist()
    assert results["grad, scalar three times"] == (3 * 2 * x).tolist()
    assert results["grad, twice with another output between"] == (2 * _A + 3 * _B).tolist()
    assert results["backward: x.grad, y.grad, hook calls"] == ((total * 2 * x).tolist(), total.tolist(),
                                                             [total.tolist()])
    assert results["backward, leaf twice"] == total.tolist()
    assert results["create_graph: g and its gradient"] == ((total * 3 * x ** 2).tolist(), (total * 6 * x).tolist())
    fd = numeric_grad(lambda v: np.sum(_A * v ** 2) + np.sum(_B * v ** 2), [x], 0)
    np.testing.assert_allclose(results["grad, non-leaf twice"], fd, rtol=1e-7)


def test_repeated_outputs_match_pytorch(torch_module):
    assert _repeated_outputs(sg) == _repeated_outputs(torch_module)


# Python numbers at edge values, as run-time operands: value and gradient as NumPy's arithmetic gives them.
NUMBER_OPS = {  # name: (op, value(x, b), gradient(x, b))
    "x * b": (lambda x, b: x * b, lambda x, b: x * b, lambda x, b: b + 0 * x),
    "x / b": (lambda x, b: x / b, lambda x, b: x / b, lambda x, b: 1 / b + 0 * x),
    "b / x": (lambda x, b: b / x, lambda x, b: b / x, lambda x, b: -b / x ** 2),
    "b - x": (lambda x, b: b - x, lambda x, b: b - x, lambda x, b: -1 + 0 * x),
    "clamp(max=b)": (lambda x, b: x.clamp(max=b), lambda x, b: np.minimum(x, b), lambda x, b: (x <= b) + 0 * x),
}


@pytest.mark.parametrize("name", sorted(NUMBER_OPS))
@pytest.mark.parametrize("shape", [(0,), (), (3,)], ids=["empty", "0-d", "1-d"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_numbers_at_edge_values(name, shape, dtype):
    op, value, gradient = NUMBER_OPS[name]
    with np.errstate(divide="ignore", invalid="ignore"):
        for b in (np.inf, -np.inf, 0.0, -0.0, 2.5, np.nan if name != "clamp(max=b)" else 1.0):
            x_np = np.full(shape, 1.5, dtype)
            x = sg.tensor(x_np, requires_grad=True)
            y = op(x, b)
            y.sum().backward()
            assert y.dtype == dtype and y.shape == shape, (name, b)
            rtol = 1e-6 if dtype == np.float32 else 1e-14  # infinities and NaNs must match exactly
            np.testing.assert_allclose(y.detach().numpy(), value(x_np, dtype(b)), rtol=rtol, err_msg=str(b))
            np.testing.assert_allclose(x.grad.numpy(), gradient(x_np, dtype(b)), rtol=rtol, err_msg=str(b))


@pytest.mark.parametrize("name", sorted(NUMBER_OPS))
def test_numbers_at_edge_values_match_pytorch(name, torch_module):
    op = NUMBER_OPS[name][0]
    for dtype in (np.float64, np.float32):
        for b in (np.inf, -np.inf, 0.0, -0.0, 2.5, np.nan if name != "clamp(max=b)" else 1.0):
            results = []
            for lib in (sg, torch_module):
                x = lib.tensor(np.array([1.5, -2.0, 0.0], dtype), requires_grad=True)
                with np.errstate(divide="ignore", invalid="ignore"):
                    y = op(x, b)
                    y.sum().backward()
                results.append((y.detach().numpy(), x.grad.numpy()))
            for ours, theirs in zip(*results):
                np.testing.assert_allclose(ours, theirs, rtol=1e-6 if dtype == np.float32 else 1e-14,
                                           err_msg=f"{dtype.__name__} {b}")


def test_zero_in_place_as_pytorch():
    """zero_() writes through shared data, bumps the version, keeps a leaf's error and records in grad mode."""
    torch = pytest.importorskip("torch")
    for lib in (sg, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 3
        y.sum().backward()
        held = x.grad.detach()
        x.grad.zero_()
        assert held.tolist() == [0.0, 0.0]  # the same storage
        z = lib.tensor([4.0, 5.0])
        w = x * z  # saves z
        with lib.no_grad():
            z.zero_()
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            w.sum().backward()
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            x.zero_()
        with lib.no_grad():
            x.zero_()
        assert x.tolist() == [0.0, 0.0]
        h = x * 1
        h.zero_()  # recorded: the gradient through h is zero
        (h + x).sum().backward()
        assert x.grad.tolist() == [1.0, 1.0]
    frozen = sg.from_numpy(np.broadcast_to(np.ones(1), (3,)))  # a read-only view: zeroed in a copy of its own
    frozen.zero_()
    assert frozen.tolist() == [0.0, 0.0, 0.0]


def test_autograd_variable_is_a_detached_tensor_as_pytorchs():
    """torch.autograd.Variable(t): t's memory, no history, requires_grad as given; every tensor is a Variable."""
    from symgrad.autograd import Variable
    base = sg.tensor([1.0, 2.0], requires_grad=True)
    made = base * 3.0
    plain, leaf = Variable(made), Variable(sg.tensor([0.0, 0.0]), requires_grad=True)
    assert plain.grad_fn is None and not plain.requires_grad and leaf.requires_grad and leaf.is_leaf
    assert isinstance(made, Variable) and isinstance(leaf, Variable) and not isinstance(np.ones(2), Variable)
    with sg.no_grad():
        plain[0] = 7.0
    assert made.tolist() == [7.0, 6.0]  # the same memory, as PyTorch's
    (leaf * sg.tensor([2.0, 5.0])).sum().backward()
    assert leaf.grad.tolist() == [2.0, 5.0]
    with pytest.warns(UserWarning, match="volatile was removed"):  # PyTorch 0.3's keyword: no effect, as PyTorch's
        frozen = Variable(made, volatile=True)
    assert frozen.grad_fn is None and not frozen.requires_grad


def test_autograd_grad_takes_only_inputs_as_pytorchs():
    """autograd.grad's deprecated only_inputs (WGAN-GP's gan_toy.py passes True) is ignored, with PyTorch's
    FutureWarning when False; the gradient of a gradient penalty through it is PyTorch's."""
    seen = []
    for lib in LIBRARIES:
        w = lib.tensor([[0.5, -1.0], [2.0, 0.25]], dtype=lib.float64, requires_grad=True)
        x = lib.tensor([[1.0, 2.0], [-3.0, 0.5], [0.0, 1.5]], dtype=lib.float64, requires_grad=True)
        d = lib.tanh(x @ w).sum(1)
        g, = lib.autograd.grad(outputs=d, inputs=x, grad_outputs=lib.ones(3, dtype=lib.float64),
                               create_graph=True, only_inputs=True)
        with pytest.warns(FutureWarning, match="only_inputs argument is deprecated"):
            again, = lib.autograd.grad(d.sum(), [x], retain_graph=True, only_inputs=False)
        ((g.norm(2, dim=1) - 1) ** 2).mean().backward()
        seen.append(np.concatenate([g.detach().numpy().ravel(), w.grad.numpy().ravel(), again.numpy().ravel()]))
    assert seen[0] == pytest.approx(seen[-1], rel=1e-12)


@pytest.mark.parametrize("create_graph", [False, True])
def test_retain_grad_is_filled_by_autograd_grad_too_as_pytorchs(create_graph):
    """A retained non-leaf's .grad is filled in autograd.grad's pass as in backward's (PyTorch's retains_grad hook
    runs in both; the leaves' .grad stays untouched by autograd.grad), and under create_graph a later backward does
    not find the gradient graph's values written (it once raised a false in-place error: random_programs_eager.py
    seed 414)."""
    seen = {}
    for lib in LIBRARIES:
        w = lib.tensor([1.0, -2.0, 0.0], dtype=lib.float64, requires_grad=True)
        h = w * 3.0
        h.retain_grad()
        loss = (h ** 2).sum()
        g, = lib.autograd.grad(loss, [w], create_graph=create_graph, retain_graph=True)
        after_grad = h.grad.detach().numpy().copy()
        if create_graph:
            loss = loss + (g ** 2).sum()
        loss.backward(retain_graph=True)
        loss.backward()
        seen[lib.__name__] = (after_grad, h.grad.detach().numpy().copy(), w.grad.numpy().copy(), g.detach().numpy())
    h = np.array([3.0, -6.0, 0.0])
    each = 2 * h + (72 * h if create_graph else 0)  # d loss/dh (the penalty (g^2).sum(), g = 6h, adds 72h), twice
    expected = (2 * h, 2 * h + 2 * each, 3 * 2 * each, 6 * h)
    for ours, wanted in zip(seen["symgrad"], expected):
        np.testing.assert_allclose(ours, wanted, rtol=1e-14, atol=0)
    for ours, theirs in zip(seen["symgrad"], seen.get("torch", seen["symgrad"])):
        np.testing.assert_allclose(ours, theirs, rtol=1e-14, atol=0)


def test_retained_grad_is_a_new_tensor_each_pass_and_a_leafs_create_graph_grad_a_copy():
    """PyTorch's retains_grad hook sets a new .grad each pass (the one held before keeps its value), where a leaf's
    .grad is added into in place; backward(create_graph=True) stores a copy of the gradient in a leaf's .grad, so a
    later backward does not write the caller's gradient= tensor (symgrad wrote [5, 7] to [10, 14])."""
    for lib in LIBRARIES:
        w = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        h = w * 3.0
        h.retain_grad()
        (h ** 2).sum().backward(retain_graph=True)
        first_h, first_w = h.grad, w.grad
        (h ** 2).sum().backward()
        assert first_h.tolist() == [6.0, 12.0] and h.grad.tolist() == [12.0, 24.0] and h.grad is not first_h
        assert w.grad is first_w and first_w.tolist() == [36.0, 72.0]
        seed = lib.tensor([5.0, 7.0], dtype=lib.float64)
        v = w + 0.0
        w.grad = None
        v.backward(gradient=seed, create_graph=True)
        assert w.grad is not seed
        v.backward(gradient=seed)
        assert seed.tolist() == [5.0, 7.0] and w.grad.tolist() == [10.0, 14.0], lib.__name__


def test_scatter_of_an_empty_batch_keeps_the_graph():
    """A scatter, scatter_add or index_put_ of no elements (a batch of 0 rows) still depends on its source, as in
    PyTorch: the update returned the tensor written to, so zeros_like(h).scatter(1, index, h) did not require grad
    and the layer before h got no gradient at all (None, where PyTorch gives zeros and AdamW still decays)."""
    w = sg.tensor(np.ones((3, 3)), requires_grad=True)
    index = sg.zeros(0, 3, dtype=sg.long)
    for scatter in (lambda h: sg.zeros_like(h).scatter(1, index, h),
                    lambda h: sg.zeros_like(h).scatter_add(1, index, h),
                    lambda h: sg.zeros(2, 3, dtype=sg.float64).scatter(1, index, h)):
        out = scatter(sg.tanh(sg.zeros(0, 3, dtype=sg.float64) @ w))
        assert out.requires_grad
        w.grad = None
        (out.sum() + 1.0).backward()
        np.testing.assert_array_equal(w.grad.numpy(), np.zeros((3, 3)))
    x = np.arange(4.0)  # (a traced update of no elements: x itself)
    np.testing.assert_array_equal(sg.grad(lambda v: sg.sum(v.at[np.zeros(0, int)].set(2.0) * v))(x), 2 * x)

def test_a_non_leaf_input_gets_its_hooks_and_grad_as_pytorchs():
    """backward(inputs=[h]) fills a non-leaf h's .grad (PyTorch retains it; symgrad left it None), and autograd.grad
    with respect to h alone runs its hooks and retain_grad (the pass stops at h), while a pass that goes on through h
    to x returns h's gradient before its hooks, x's after them (PyTorch's engine captures it before h's node runs)."""
    seen = {}
    for lib in LIBRARIES:
        x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        h = x * 3.0
        h.register_hook(lambda g: g * 10.0)
        loss = (h * h).sum()
        alone, = lib.autograd.grad(loss, [h], retain_graph=True)
        on_h, on_x = lib.autograd.grad(loss, [h, x], retain_graph=True)
        k = x * 2.0
        k.retain_grad()
        lib.autograd.grad((k * k).sum(), [k])
        retained = k.grad.numpy().copy()
        loss.backward(inputs=[h], retain_graph=True)
        first = h.grad.numpy().copy()
        loss.backward(inputs=[h, x])
        seen[lib.__name__] = (alone, on_h, on_x, retained, first, h.grad, x.grad)
    h = np.array([3.0, 6.0])
    expected = (20 * h, 2 * h, 60 * h, [4.0, 8.0], 20 * h, 40 * h, 60 * h)  # (d loss/dh = 2h, times 10 by the hook)
    for ours, wanted in zip(seen["symgrad"], expected):
        np.testing.assert_allclose(np.asarray(ours), wanted, rtol=1e-14, atol=0)
    for ours, theirs in zip(seen["symgrad"], seen.get("torch", seen["symgrad"])):
        np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-14, atol=0)
