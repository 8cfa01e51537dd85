"""sg.autograd.functional: PyTorch's jacobian, hessian, vjp, jvp, hvp and vhp, checked against PyTorch (results,
shapes, nesting, requires_grad, create_graph's second derivatives, strict-mode errors), against float64 central
differences, and against symgrad's own transforms."""
import numpy as np
import pytest

import symgrad as sg
from symgrad.autograd import functional as F

RNG = np.random.default_rng(0)
X = RNG.normal(size=(3, 4))
U, W = RNG.normal(size=3), RNG.normal(size=3)


def exp_reducer(x):
    return x.exp().sum(dim=1)


def pair(x, y):  # two inputs, two outputs
    return 2 * x + 3 * y, (x * y).sin()


def cubic(x, y):  # one element, every second derivative nonzero
    return (x.pow(3) * y).sum() + (x * x).sum() * y.tanh().sum()


def _tensors(lib, value):
    if isinstance(value, tuple):
        return tuple(_tensors(lib, v) for v in value)
    return lib.tensor(value)


CASES = [  # (name, function, inputs, v)
    ("vjp", exp_reducer, X, np.arange(3.0)),
    ("vjp", pair, (U, W), (np.ones(3), np.arange(3.0))),
    ("jvp", exp_reducer, X, np.ones((3, 4))),
    ("jvp", pair, (U, W), (np.ones(3), np.arange(3.0))),
    ("jacobian", exp_reducer, X, None),
    ("jacobian", pair, (U, W), None),
    ("jacobian", lambda x: x.sin(), (U,), None),  # a tuple of one input: a tuple back
    ("hessian", cubic, (U, W), None),
    ("hessian", lambda x: (x.pow(3) * x.sum()).sum(), U, None),
    ("hvp", cubic, (U, W), (np.ones(3), np.arange(3.0))),
    ("vhp", cubic, (U, W), (np.ones(3), np.arange(3.0))),
    ("hvp", lambda x: x.pow(4).sum(), U, np.arange(3.0)),
]


def _call(lib, module, name, fn, inputs, v, **options):
    args = (_tensors(lib, inputs),) + (() if v is None else (_tensors(lib, v),))
    return getattr(module, name)(fn, *args, **options)


def _assert_same(ours, theirs, rtol=1e-12):
    if isinstance(theirs, tuple):
        assert isinstance(ours, tuple) and len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _assert_same(a, b, rtol)
        return
    assert isinstance(ours, sg.Tensor) and tuple(ours.shape) == tuple(theirs.shape)
    assert ours.requires_grad == theirs.requires_grad
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=rtol, atol=1e-13)


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("name, fn, inputs, v", CASES)
def test_as_pytorch(name, fn, inputs, v, create_graph):
    torch = pytest.importorskip("torch")
    from torch.autograd import functional as TF
    theirs = _call(torch, TF, name, fn, inputs, v, create_graph=create_graph)
    _assert_same(_call(sg, F, name, fn, inputs, v, create_graph=create_graph), theirs)


def _central_jacobian(fn, inputs, j, eps=1e-6):
    """d fn(*inputs) / d inputs[j] by float64 central differences, shape output + input."""
    def value(shifted):
        with sg.no_grad():
            return fn(*[sg.tensor(a) for a in shifted]).numpy()
    columns = []
    for k in range(inputs[j].size):
        step = np.zeros(inputs[j].size)
        step[k] = eps
        plus, minus = list(inputs), list(inputs)
        plus[j] = inputs[j] + step.reshape(inputs[j].shape)
        minus[j] = inputs[j] - step.reshape(inputs[j].shape)
        columns.append((value(plus) - value(minus)) / (2 * eps))
    return np.moveaxis(np.array(columns), 0, -1).reshape(np.shape(value(inputs)) + inputs[j].shape)


def test_against_finite_differences():
    x, y = RNG.normal(size=(2, 3)), RNG.normal(size=3)
    f = lambda x, y: (x.tanh() @ y.exp()) * y.sum()  # noqa: E731
    jac = F.jacobian(f, (sg.tensor(x), sg.tensor(y)))
    for j, inp in enumerate((x, y)):
        np.testing.assert_allclose(jac[j].numpy(), _central_jacobian(f, (x, y), j), rtol=1e-7, atol=1e-9)
    scalar = lambda x, y: (f(x, y) ** 2).sum()  # noqa: E731
    gradient = lambda x, y: F.vjp(scalar, (x, y))[1][1]  # noqa: E731
    hess = F.hessian(scalar, (sg.tensor(x), sg.tensor(y)))
    np.testing.assert_allclose(hess[1][1].numpy(), _central_jacobian(gradient, (x, y), 1), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(hess[1][0].numpy(), _central_jacobian(gradient, (x, y), 0), rtol=1e-6, atol=1e-8)
    v = (np.ones((2, 3)), np.arange(3.0))
    out, jv = F.jvp(f, (sg.tensor(x), sg.tensor(y)), tuple(sg.tensor(t) for t in v))
    expected = sum(np.tensordot(_central_jacobian(f, (x, y), j), v[j], axes=v[j].ndim) for j in range(2))
    np.testing.assert_allclose(jv.numpy(), expected, rtol=1e-7, atol=1e-9)


def test_same_as_symgrads_transforms():
    f = lambda x: sg.sum(sg.tanh(x) ** 3, axis=0)  # noqa: E731
    np.testing.assert_allclose(F.jacobian(f, sg.tensor(X)).numpy(), sg.jacobian(f)(X), rtol=1e-13, atol=1e-15)
    g = lambda x: sg.sum(sg.sin(x) * x ** 2)  # noqa: E731
    np.testing.assert_allclose(F.hessian(g, sg.tensor(U)).numpy(), sg.hessian(g)(U), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(F.hvp(g, sg.tensor(U), sg.tensor(W))[1].numpy(), sg.hvp(g, (U,), (W,))[0],
                               rtol=1e-13, atol=1e-15)


def test_create_graph_differentiates_again_as_pytorch():
    """A Jacobian or Hessian made with create_graph is a function of the inputs, and of what they came from."""
    torch = pytest.importorskip("torch")
    from torch.autograd import functional as TF
    results = []
    for lib, module in ((sg, F), (torch, TF)):
        base = lib.tensor(U, requires_grad=True)
        inp = base * 2  # not a leaf: the gradient goes through it to base
        jac = module.jacobian(lambda x: x.sin() * x.sum(), inp, create_graph=True)
        hess = module.hessian(lambda x: x.pow(3).sum() * x.cos().sum(), inp, create_graph=True)
        _, hv = module.hvp(lambda x: x.pow(3).sum(), inp, lib.tensor(W), create_graph=True)
        (jac.pow(2).sum() + hess.sum() + hv.sum()).backward()
        results.append(base.grad.numpy())
    np.testing.assert_allclose(*results, rtol=1e-12)


def test_without_create_graph_results_hold_no_history():
    x = sg.tensor(U, requires_grad=True)
    out, grads = F.vjp(lambda x: x.sin().sum(), x)
    assert not out.requires_grad and not grads.requires_grad and x.grad is None
    assert not F.jacobian(lambda x: x.sin(), x).requires_grad


def test_independent_inputs_get_zeros_or_a_strict_error():
    f = lambda x, y: x.sin()  # noqa: E731
    x, y = sg.tensor(U), sg.tensor(W)
    jac = F.jacobian(f, (x, y))
    np.testing.assert_array_equal(jac[1].numpy(), np.zeros((3, 3)))
    np.testing.assert_array_equal(F.vjp(f, (x, y), sg.tensor(np.ones(3)))[1][1].numpy(), np.zeros(3))
    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function is independent of input 1"):
        F.jacobian(f, (x, y), strict=True)
    with pytest.raises(RuntimeError, match="independent of input 1. This is not allowed in strict mode"):
        F.vjp(f, (x, y), sg.tensor(np.ones(3)), strict=True)
    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function does not require gradients"):
        F.vjp(lambda x: sg.tensor(np.ones(3)), x, sg.tensor(np.ones(3)), strict=True)
    with pytest.raises(RuntimeError, match="jacobian of the user-provided function with respect to input 0 is "
                                           "independent"):
        F.hessian(lambda x: (2 * x).sum(), x, strict=True)
    np.testing.assert_array_equal(F.hessian(lambda x: (2 * x).sum(), x).numpy(), np.zeros((3, 3)))


def test_argument_errors_are_pytorchs():
    x = sg.tensor(U)
    with pytest.raises(TypeError, match="inputs given to jacobian must be either a Tensor or a tuple of Tensors"):
        F.jacobian(lambda x: x, U)
    with pytest.raises(RuntimeError, match="v can only be None if the user-provided function returns a single"):
        F.vjp(lambda x: x.sin(), x)
    with pytest.raises(RuntimeError, match=r"v has invalid size: should be sg.Size\(\[3\]\) but got"):
        F.jvp(lambda x: x.sin(), x, sg.tensor(np.ones(2)))
    with pytest.raises(RuntimeError, match="v is a tuple of invalid length: should be 2 but got 1"):
        F.vjp(pair, (x, x), (x,))
    with pytest.raises(RuntimeError, match="should return a single Tensor"):
        F.hessian(pair, (x, x))
    with pytest.raises(RuntimeError, match="should contain a single element"):
        F.hvp(lambda x: x.sin(), x, x)
    with pytest.raises(RuntimeError, match="strict=True` and `vectorized=True` are not supported together"):
        F.jacobian(lambda x: x, x, strict=True, vectorize=True)
    with pytest.raises(NotImplementedError, match="only implemented for `vectorize=True`"):
        F.jacobian(lambda x: x, x, strategy="forward-mode")


def test_vectorize_and_forward_mode_give_the_same_values():
    x = sg.tensor(X)
    expected = F.jacobian(exp_reducer, x).numpy()
    for options in ({"vectorize": True}, {"vectorize": True, "strategy": "forward-mode"}):
        np.testing.assert_array_equal(F.jacobian(exp_reducer, x, **options).numpy(), expected)
    np.testing.assert_array_equal(F.hessian(lambda x: x.pow(3).sum(), x, vectorize=True,
                                            outer_jacobian_strategy="forward-mode").numpy(),
                                  F.hessian(lambda x: x.pow(3).sum(), x).numpy())


def test_edge_shapes_and_values():
    scalar = sg.tensor(0.5)
    assert F.jacobian(lambda x: x.exp(), scalar).shape == ()
    np.testing.assert_allclose(F.hessian(lambda x: x.exp(), scalar).numpy(), np.exp(0.5))
    np.testing.assert_array_equal(F.vjp(lambda x: x.exp().sum(), scalar)[1].numpy(), np.exp(0.5))  # v=None: one
    empty = sg.tensor(np.zeros((0, 2)))
    assert F.jacobian(lambda x: x * 2, empty).shape == (0, 2, 0, 2)
    assert F.jacobian(lambda x: (x * 2).sum(), empty).shape == (0, 2)
    inf = F.jacobian(lambda x: x.exp(), sg.tensor([np.inf, -np.inf, 0.0]))
    np.testing.assert_array_equal(np.diag(inf.numpy()), [np.inf, 0.0, 1.0])
    float32 = F.jacobian(lambda x: x.sin(), sg.tensor(U.astype(np.float32)))
    assert float32.dtype == np.float32
    np.testing.assert_allclose(np.diag(float32.numpy()), np.cos(U), rtol=1e-6)


def test_nn_module_and_custom_function():
    sg.manual_seed(0)
    model = sg.nn.Sequential(sg.nn.Linear(3, 4), sg.nn.Tanh(), sg.nn.Linear(4, 2)).double()
    jac = F.jacobian(model, sg.tensor(U))
    np.testing.assert_allclose(jac.numpy(), _central_jacobian(model, (U,), 0), rtol=1e-7, atol=1e-9)
    assert all(p.grad is None for p in model.parameters())

    class Cube(sg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 3 * x ** 2 * g

    np.testing.assert_allclose(F.jacobian(Cube.apply, sg.tensor(U)).numpy(), np.diag(3 * U ** 2), rtol=1e-14)
    np.testing.assert_allclose(F.hessian(lambda x: Cube.apply(x).sum(), sg.tensor(U)).numpy(), np.diag(6 * U),
                               rtol=1e-14)


def test_importable_as_pytorchs_module():
    from symgrad.autograd.functional import hessian, jacobian  # noqa: F401
    assert sg.autograd.functional.jacobian is F.jacobian


TRACED_CASES = [  # functions of sg.* calls, which trace: (name, function, inputs, v)
    ("vjp", lambda x, y: (2 * x + 3 * y, sg.sin(x * y)), (U, W), (np.ones(3), np.arange(3.0))),
    ("vjp", lambda x: sg.sum(sg.exp(x) * x), U, None),
    ("jvp", lambda x, y: (2 * x + 3 * y, sg.sin(x * y)), (U, W), (np.ones(3), np.arange(3.0))),
    ("jacobian", lambda x, y: (2 * x + 3 * y, sg.sin(x * y)), (U, W), None),
    ("jacobian", lambda x: sg.sin(x) * sg.sum(x), U, None),
    ("hessian", lambda x, y: sg.sum(x ** 3 * y) + sg.sum(x * x) * sg.sum(sg.tanh(y)), (U, W), None),
    ("hessian", lambda x: sg.sum(sg.exp(x) * x), U, None),
    ("hvp", lambda x, y: sg.sum(x ** 3 * y) + sg.sum(x * x) * sg.sum(sg.tanh(y)), (U, W), (np.ones(3), W)),
    ("vhp", lambda x, y: sg.sum(x ** 3 * y) + sg.sum(x * x) * sg.sum(sg.tanh(y)), (U, W), (np.ones(3), W)),
    ("hvp", lambda x: sg.sum(sg.exp(x) * x), U, W),
]


def _flat(args):
    return [leaf for a in args for leaf in (a if isinstance(a, tuple) else (a,))]


def _nested(flat, like):
    leaves = iter(flat)
    return [tuple(next(leaves) for _ in a) if isinstance(a, tuple) else next(leaves) for a in like]


def _assert_values(ours, expected):
    if isinstance(expected, tuple):
        assert isinstance(ours, tuple) and len(ours) == len(expected)
        for a, b in zip(ours, expected):
            _assert_values(a, b)
        return
    np.testing.assert_allclose(ours, expected.numpy(), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name, fn, inputs, v", TRACED_CASES)
def test_on_traced_values_the_transforms_give_the_eager_results(name, fn, inputs, v):
    """Inside sg.compile the inputs are traced values: symgrad's transforms compute the same results, nested as
    the eager path nests them."""
    args = (inputs,) if v is None else (inputs, v)
    expected = _call(sg, F, name, fn, inputs, v)
    compiled = sg.compile(lambda *flat: getattr(F, name)(fn, *_nested(flat, args)))
    _assert_values(compiled(*_flat(args)), expected)


def test_hessian_on_traced_values_of_a_one_element_output_or_several():
    """The output's one element is differentiated as a 0-d value, as on tensors; a tuple or several elements are
    PyTorch's errors (the transform gave a (1, 3, 3) Hessian, and one per element or per output)."""
    one = sg.compile(lambda x: F.hessian(lambda y: sg.reshape(sg.sum(y ** 3), (1,)), x))(U)
    np.testing.assert_allclose(one, np.diag(6 * U), rtol=1e-14)
    for fn, match in [(lambda y: y * y, "single element"), (lambda y: (sg.sum(y), sg.sum(y * y)), "single Tensor")]:
        with pytest.raises(RuntimeError, match=match):
            sg.compile(lambda x: F.hessian(fn, x))(U)


@pytest.mark.parametrize("name", ["vjp", "jvp", "hvp", "vhp"])
def test_v_none_on_traced_values_needs_one_element(name):
    """PyTorch's error on tensors, not a v of ones (the transforms took ones for v of any size); with one element,
    the result of a v of one."""
    fn = (lambda y: y * 2) if name in ("vjp", "jvp") else (lambda y: sg.sum(y ** 3))
    with pytest.raises(RuntimeError, match="v can only be None"):
        sg.compile(lambda x: getattr(F, name)(fn, x))(U)
    one = np.array([1.5])
    _assert_values(sg.compile(lambda x: getattr(F, name)(fn, x))(one), _call(sg, F, name, fn, one, None))


def test_strict_on_traced_values_is_an_error():
    with pytest.raises(sg.UnsupportedOpError, match=r"jacobian\(strict=True\) on traced values"):
        sg.compile(lambda x: F.jacobian(sg.sin, x, strict=True))(U)


def test_on_traced_values_under_grad_and_vmap():
    gradient = sg.grad(lambda x: sg.sum(F.jacobian(lambda y: sg.sin(y) * y, x)))(U)
    np.testing.assert_allclose(gradient, 2 * np.cos(U) - U * np.sin(U), rtol=1e-14)
    rows = np.stack([U, 2 * U, np.zeros(3)])
    products = sg.vmap(lambda x: F.hvp(lambda y: sg.sum(y ** 4), x, x)[1])(rows)
    np.testing.assert_allclose(products, 12 * rows ** 3, rtol=1e-14)
