"""Findings of random_programs_torch.py (random programs over PyTorch's tensor surface), each minimized to the
program that showed it: symgrad's values, dtypes, shapes, aliasing and gradients against PyTorch's."""
import numpy as np
import pytest

import symgrad as sg


def _both():
    """symgrad, and torch when installed (the spec)."""
    try:
        import torch
    except ImportError:
        return [sg]
    return [sg, torch]


def _same(results):
    """Every library's results equal symgrad's (nested lists of numbers, NaN equal to NaN)."""
    ours = results["symgrad"]
    for name, theirs in results.items():
        np.testing.assert_equal(ours, theirs, err_msg=name)


def test_ops_that_change_nothing_give_tensors_of_their_own():
    """x.sum(0) of a 0-d x, t.reshape(t.shape), t[:], the one piece of t.split(n) gave t itself: y = x.sum(0);
    y.add_(1) wrote x, and the results of a leaf were leaves. PyTorch's reductions
    give copies and its view ops views of their own (a write reaches the base, requires_grad_ does not); flatten
    over one axis is PyTorch's exception, which gives t."""
    results = {}
    for lib in _both():
        a = lib.tensor(0.5, dtype=lib.float64, requires_grad=True)
        x = a * 3
        x.sum(0).add_(1)
        x.amax(0, keepdim=True).add_(1)
        x.max(0).values.add_(1)
        x.min().add_(1)
        x.median().add_(1)
        lib.sum(x).add_(1)
        lib.amax(x, dim=0).add_(1)
        x.squeeze().mul_(2)  # a view: writes x
        x.backward()
        t = lib.tensor([[1.0, 2.0]], dtype=lib.float64, requires_grad=True)
        views = [t[:], t[...], t.reshape(1, 2), t.view(1, 2), t.split([1, 0])[0], t.chunk(1)[0], t.narrow(1, 0, 2),
                 t.squeeze(1), t.expand(1, 2), t.permute(0, 1)]
        n = t * 1
        n.reshape(1, 2).mul_(10)  # a view of a non-leaf: writes n
        total = n.sum(dim=())  # PyTorch's dim=() reduces every axis
        results[lib.__name__] = [x.item(), a.grad.item(), [v is t or v.is_leaf for v in views], n.tolist(),
                                 total.item(), x.grad_fn.name().split("::")[-1], t.flatten(0, 0) is t]
    assert results["symgrad"][:5] == [3.0, 6.0, [False] * 10, [[10.0, 20.0]], 30.0]
    _same(results)


def test_cumsum_and_cumprod_of_a_0d_tensor_are_0d():
    """NumPy's cumsum of a 0-d value is 1-d: x.cumsum(0) had shape (1,) where PyTorch's is ()."""
    for lib in _both():
        x = lib.tensor(0.5, dtype=lib.float64, requires_grad=True)
        y, z = x.cumsum(0), x.cumprod(dim=-1)
        assert tuple(y.shape) == tuple(z.shape) == ()
        (y * 3 + z).backward()
        assert x.grad.item() == 4.0


def test_masked_fill_keeps_self_dtype():
    """m.masked_fill(m, 2) of a bool m was int64 and i.masked_fill(mask, 2.5) of an int64 i float64 (NumPy's
    promotion); PyTorch casts the value to self's dtype. A float tensor's gradient still flows where unfilled."""
    results = {}
    for lib in _both():
        m = lib.tensor([True, False, True])
        i = lib.tensor([1, 2, 3])
        x = lib.tensor([1.0, -2.0, 3.0], dtype=lib.float32, requires_grad=True)
        y = x.masked_fill(m, 0.25)
        (y * lib.tensor([1.0, 2.0, 3.0], dtype=lib.float32)).sum().backward()
        results[lib.__name__] = [[str(r.dtype).split(".")[-1], r.tolist()] for r in
                                 (m.masked_fill(~m, 2), i.masked_fill(m, 2.5), y, x.grad)]
    assert results["symgrad"][:2] == [["bool", [True, True, True]], ["int64", [2, 2, 2]]]
    _same(results)


NUMPY_KEYWORDS = ["t.std(axis=1)", "t.var(axis=1, keepdims=True)", "t.softmax(axis=1)", "t.log_softmax(axis=0)",
                  "t.logsumexp(axis=1, keepdims=True)", "t[None].squeeze(axis=0)", "t.unsqueeze(axis=0)",
                  "t.median(axis=1)", "t.sort(axis=1)", "t.amax(axis=1)", "t.amin(axis=0, keepdims=True)",
                  "t.topk(1, axis=1)", "t.kthvalue(1, axis=1, keepdims=True)", "t.nansum(axis=1)",
                  "t.count_nonzero(axis=1)", "t.cummax(axis=1)", "t.argsort(axis=1)"]


EMPTY_DIMS = ["t.std(dim=())", "t.var((), keepdim=True)", "t.std(dim=[], correction=0)", "t.norm(dim=())",
              "t.norm(3, (), True)", "t.count_nonzero(dim=())", "T.sum(t, dim=())",
              "T.mean(t, dim=[], keepdim=True)", "T.amax(t, dim=())", "T.linalg.vector_norm(t, dim=())",
              "T.linalg.vector_norm(t, 1, dim=(), keepdim=True)"]


@pytest.mark.parametrize("expression", EMPTY_DIMS)
def test_an_empty_dim_reduces_every_axis(expression):
    """PyTorch's dim=() (or []) reduces every axis; the methods that handed it to NumPy's axis=() reduced none
    (t.std(dim=()) was a matrix of NaN, sg.sum(t, dim=()) and t.norm(dim=()) t itself or its magnitudes). PyTorch's
    gradient is taken with dim=None (its std's and var's with dim=() are infinite)."""
    results = {}
    for lib in _both():
        t = lib.tensor([[0.5, -3.0, 1.25], [0.0, 2.0, -1.5]], dtype=lib.float64, requires_grad=True)
        r = eval(expression, {"t": t, "T": lib})
        if r.is_floating_point():
            differentiated = expression.replace("()", "None").replace("[]", "None") if lib is not sg else expression
            eval(differentiated, {"t": t, "T": lib}).sum().backward()
        results[lib.__name__] = [list(r.shape), np.round(r.tolist(), 12).tolist(),
                                 None if t.grad is None else np.round(t.grad.numpy(), 12).tolist()]
    _same(results)


@pytest.mark.parametrize("expression", NUMPY_KEYWORDS)
def test_tensor_methods_take_numpy_keywords(expression):
    """PyTorch's parser takes axis=/keepdims= for dim=/keepdim= on every method with a dim: t.std(axis=1),
    t.softmax(axis=1), t.median(axis=1) ... were TypeErrors; argsort's axis= stays NumPy's (the same order here)."""
    results = {}
    for lib in _both():
        t = lib.tensor(np.array([[0.0, 3.0, 1.0], [2.0, -1.0, 5.0]]), requires_grad=True)
        result = eval(expression, {"t": t, "T": lib})
        pieces = list(result) if isinstance(result, tuple) else [result]
        floats = [p for p in pieces if p.is_floating_point()]
        if floats:
            sum((p * (k + 1)).sum() for k, p in enumerate(floats)).backward()
        results[lib.__name__] = [np.round(p.detach().numpy(), 12).tolist() for p in pieces] + \
            [None if t.grad is None else np.round(t.grad.numpy(), 12).tolist()]
    _same(results)


SPECIAL = np.array([[0.5, -3.0, 1.25, -0.0], [2.0, -1.5, 5.0, 0.75], [np.inf, 1.0, -2.0, np.nan]])
ADDED = ["t.frac()", "T.frac(t)", "t.take(T.tensor([[0, -1], [5, 3]]))", "T.take(t, T.tensor([2]))", "t.aminmax()",
         "t.aminmax(dim=1)", "T.aminmax(t, dim=0, keepdim=True)", "t[:2].logcumsumexp(1)",
         "T.logcumsumexp(t[:2], dim=0)", "t.diag_embed()", "T.diag_embed(t[0])", "T.xlogy(t, t.abs() + 1)",
         "T.argwhere(t)", "t.argwhere()", "T.broadcast_tensors(t, t[0])", "t.add(t, alpha=2)",
         "t.sub(t * 2, alpha=0.5)", "t.add(3, alpha=2)", "t.div(t[1], rounding_mode='floor')",
         "t.div(1.5, rounding_mode='trunc')", "T.div(t, -2.0, rounding_mode='trunc')",
         "T.tensor([7, -7, 5]).div(T.tensor([2, 2, -3]), rounding_mode='trunc')",
         "T.tensor([7, -7]).div(2, rounding_mode='floor')", "t.softmax(1, dtype=T.float32)",
         "T.softmax(t, 0, dtype=T.float32)", "T.nn.functional.log_softmax(t, 1, dtype=T.float32)",
         "T.cross(t[:, :3], t[:, 1:], dim=1)", "T.linalg.vector_norm(t, ord=3, dim=1)",
         "T.linalg.vector_norm(t, 1, dim=0, keepdim=True)", "T.linalg.vector_norm(t[0, 1], ord=3, dim=-1)",
         "T.linalg.vector_norm(t[1, 0], 2, dim=0, keepdim=True)"]


@pytest.mark.parametrize("data", ["finite", "special"])
@pytest.mark.parametrize("expression", ADDED)
def test_added_pytorch_names_match_pytorch(expression, data):
    """Names the random programs met missing (frac, take, aminmax, logcumsumexp, diag_embed, argwhere, xlogy and
    broadcast_tensors as functions, add/sub's alpha=, div's rounding_mode=, softmax's dtype=, torch.cross's dim=,
    linalg.vector_norm's dim=/keepdim=): values (with 0, -0, inf and NaN too) and gradients against PyTorch."""
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(5).standard_normal((3, 4)) if data == "finite" else SPECIAL
    results = []
    for lib in (sg, torch):
        t = lib.tensor(x, requires_grad=True)
        result = eval(expression, {"t": t, "T": lib})
        pieces = list(result) if isinstance(result, tuple) else [result]
        floats = [p for p in pieces if p.is_floating_point() and p.requires_grad]
        if floats and data == "finite":  # (the derivatives at edge values are another matter)
            sum((p * lib.tensor(np.cos(np.arange(p.numel()) + k).reshape(tuple(p.shape)), dtype=p.dtype)).sum()
                for k, p in enumerate(floats)).backward()
        results.append(([(str(p.dtype).split(".")[-1], p.detach().numpy()) for p in pieces], t.grad))
    (ours, our_grad), (theirs, their_grad) = results
    assert [d for d, _ in ours] == [d for d, _ in theirs]
    for (_, a), (_, b) in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-6 if a.dtype == np.float32 else 1e-12, atol=1e-12)
    assert (our_grad is None) == (their_grad is None)
    if our_grad is not None:
        np.testing.assert_allclose(our_grad.numpy(), their_grad.numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("call, write", [("t.unfold(2, 2, 1)", None), ("t.unfold(2, 2, 2)", "v.mul_(3)"),
                                         ("t.unfold(1, 3, 1)", None), ("t.unfold(-1, 1, 3)", "v.add_(1)"),
                                         ("t[0, 0, 0].unfold(0, 1, 1)", None), ("t.unfold(0, 2, 1)", "v.zero_()"),
                                         ("t.unfold(2, 0, 1)", None)])
def test_unfold_is_a_view_of_windows(call, write):
    """Tensor.unfold was missing: its windows as a new last dimension, a view (a write to windows that do not
    overlap reaches t), gradients to each window's elements."""
    results = {}
    for lib in _both():
        leaf = lib.tensor(np.arange(24.0).reshape(2, 3, 4) * 0.5 - 3, requires_grad=True)
        t = leaf * 1
        v = eval(call, {"t": t})
        if write:
            eval(write, {"v": v})
        weights = lib.tensor(np.cos(np.arange(t.numel())).reshape(tuple(t.shape)))
        ((t * weights).sum() + (v * 2).sum()).backward()
        results[lib.__name__] = [list(v.shape), v.tolist(), t.tolist(), np.round(leaf.grad.numpy(), 12).tolist()]
    _same(results)


def test_a_write_to_overlapping_windows_is_refused():
    """Windows that overlap share elements: a write to them (PyTorch applies mul_ once per window an element is
    in) is the error an expand()'s write gets, not one of the possible results."""
    t = sg.tensor(np.arange(4.0)) * 1
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        t.unfold(0, 2, 1).mul_(3)
    assert t.tolist() == [0.0, 1.0, 2.0, 3.0]


PUTS = ["u.index_put((T.tensor([0, 2, 0]),), T.tensor(5.0, dtype=T.float64))",
        "u.index_put((T.tensor([0, 2, 0]), T.tensor([1, 1, 1])), T.tensor([1.0, 2.0, 3.0], dtype=T.float64), "
        "accumulate=True)", "u.index_put((T.tensor([1]),), u[0] * 3)",
        "u.index_put_((T.tensor([0, 0]),), u[2].detach() * 2, accumulate=True)", "u.masked_scatter(u > 0, u * 10)",
        "u.masked_scatter(T.tensor([True, False, True, False]), t.flip(0))", "u.masked_scatter(u > 100, u)",
        "u.masked_scatter_(u < 0, t[:, :2] + 1)"]


@pytest.mark.parametrize("expression", PUTS)
def test_index_put_and_masked_scatter_match_pytorch(expression):
    """index_put(_) (repeated positions summing with accumulate) and masked_scatter(_) were missing: values, the
    tensor written in place, and gradients to self and to the values against PyTorch."""
    results = {}
    for lib in _both():
        t = lib.tensor(np.arange(12.0).reshape(3, 4) * 0.5 - 2, requires_grad=True)
        u = t * 1
        r = eval(expression, {"t": t, "u": u, "T": lib})
        ((r * lib.tensor(np.cos(np.arange(12.0)).reshape(3, 4))).sum() + (u * 0.5).sum()).backward()
        results[lib.__name__] = [np.round(a, 12).tolist() for a in (r.detach().numpy(), u.detach().numpy(),
                                                                     t.grad.numpy())]
    _same(results)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_logcumsumexp_of_elements_far_apart(dtype):
    """logcumsumexp shifted every element by the dimension's largest: exp(1 - 1000) underflowed, so the first
    element's value was -inf and its gradient NaN (PyTorch's: 1 and 1). Values and gradients against PyTorch and
    central differences, along either dimension of a matrix and in a 0-d tensor."""
    x = np.array([[1.0, 1000.0, -2.0, 999.5, -1e4], [-50.0, 3.0, 3.0, 700.0, 0.5]])
    weights = np.cos(np.arange(10.0)).reshape(2, 5)
    results = {}
    for lib in _both():  # (PyTorch in float64: its float32 gradients are further from float64's than symgrad's)
        for dim in (0, 1, -1):
            t = lib.tensor(x, dtype=getattr(lib, dtype if lib is sg else "float64"), requires_grad=True)
            y = t.logcumsumexp(dim)
            (y * lib.tensor(weights, dtype=y.dtype)).sum().backward()
            results.setdefault(lib.__name__, []).append([y.detach().numpy(), t.grad.numpy()])
        scalar = lib.tensor(-3.0, requires_grad=True)
        lib.logcumsumexp(scalar, 0).backward()
        results[lib.__name__].append([scalar.logcumsumexp(-1).detach().numpy(), scalar.grad.numpy()])
    assert {str(a.dtype) for a, _ in results["symgrad"][:3]} == {dtype}
    for ours, theirs in zip(results["symgrad"], results.get("torch", [])):  # (without PyTorch: differences only)
        for a, b in zip(ours, theirs):
            assert a.shape == b.shape
            np.testing.assert_allclose(a, b, rtol=1e-6 if dtype == "float32" else 1e-13, atol=1e-5)
    t = sg.tensor(x[:, :3] / 100, requires_grad=True)
    (t.logcumsumexp(1) * sg.tensor(weights[:, :3])).sum().backward()
    for index in np.ndindex(2, 3):
        step = np.zeros((2, 3))
        step[index] = 1e-6
        ends = [(sg.tensor(x[:, :3] / 100 + s * step).logcumsumexp(1) * sg.tensor(weights[:, :3])).sum().item()
                for s in (1, -1)]
        assert t.grad[index].item() == pytest.approx((ends[0] - ends[1]) / 2e-6, rel=1e-6, abs=1e-8)


def test_logcumsumexp_along_one_element_at_minus_infinity_has_pytorchs_nan_gradient():
    """Along an axis of one element nothing was added, so the gradient at -inf was 1, where PyTorch's
    exp(x - result) is NaN, as ours already was for the first of several elements (random_programs_torch seed
    21018); a 0-d tensor's is a copy in both (gradient 1)."""
    for data, dim, expected in [([[-np.inf, 1.0]], 0, [[np.nan, 1.0]]), ([[-np.inf, 1.0]], 1, [[np.nan, 1.0]]),
                                ([-np.inf], 0, [np.nan]), (-np.inf, 0, 1.0), (np.zeros((2, 0)), 1, np.zeros((2, 0)))]:
        t = sg.tensor(data, requires_grad=True)
        y = t.logcumsumexp(dim)
        np.testing.assert_array_equal(y.detach().numpy(), np.asarray(data))
        y.sum().backward()
        np.testing.assert_array_equal(t.grad.numpy(), expected)


def test_integer_division_toward_zero_is_exact():
    """div(rounding_mode='trunc') of integers truncated a float64 quotient: 2**62 + 1 divided by 1 came back
    2**62 (and by 0 the float's infinity cast, the smallest int64); now integer arithmetic, as PyTorch's, by 0
    PyTorch's ZeroDivisionError (floor division's 0 was a silent wrong answer)."""
    big = [2 ** 62 + 1, -(2 ** 62) - 3, -7, 7, -6, 0, -2 ** 63 + 1]
    divisors = [1, 3, 2, -2, -4, 5, 7]
    expected = [int(a / b) if abs(a) < 2 ** 53 else (abs(a) // abs(b)) * (1 if (a < 0) == (b < 0) else -1)
                for a, b in zip(big, divisors)]
    assert sg.tensor(big).div(sg.tensor(divisors), rounding_mode="trunc").tolist() == expected
    assert sg.tensor(big).div(3, rounding_mode="trunc").tolist() == [
        (abs(a) // 3) * (1 if a >= 0 else -1) for a in big]
    small = sg.tensor([-7, 7, -128, 127], dtype=sg.int8).div(-2, rounding_mode="trunc")
    assert small.dtype == sg.int8 and small.tolist() == [3, -3, 64, -63]
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        sg.tensor([5, -5]).div(0, rounding_mode="trunc")
    for lib in _both()[1:]:
        assert lib.tensor(big).div(lib.tensor(divisors), rounding_mode="trunc").tolist() == expected


@pytest.mark.parametrize("values", [[0.5, -2.0, 3.0], [1.0], [], 2.0, [np.inf, np.nan, 0.0]],
                         ids=["1-d", "one", "empty", "0-d", "inf-nan"])
def test_add_and_sub_take_pytorchs_deprecated_number_alpha_first(values):
    """`p.data.add_(-learning_rate, p.grad.data)` (char_rnn_generation's step) was refused as 'Boolean value of
    Tensor with 1264 values is ambiguous': PyTorch still takes a number, then a tensor, as alpha and other. The
    results and the gradients through the recorded forms are PyTorch's; `t.add_(other, 2)` is refused by both, but
    where other is 0-d (PyTorch reads it as the number alpha)."""
    results = {}
    for lib in _both():
        t = lib.tensor(values, dtype=lib.float64, requires_grad=True)
        u = lib.tensor(np.full(np.shape(values), 1.5), dtype=lib.float64, requires_grad=True)
        shifted = t * 1
        shifted.add_(-0.5, u)
        shifted.sub_(2, t)
        out = t.add(3, u) + t.sub(0.25, u) + shifted
        out.sum().backward()
        with lib.no_grad():
            step = t.detach().clone()
            step.add_(-0.1, u.detach())
        if np.ndim(values):
            with pytest.raises(TypeError):
                t.detach().add_(u.detach(), 2)
        else:  # (PyTorch reads a 0-d tensor as a number: the alpha)
            step.add_(u.detach(), 2)
        results[lib.__name__] = [out.tolist(), step.tolist(), t.grad.tolist(), u.grad.tolist()]
    _same(results)


def test_allclose_of_tensors_is_a_python_bool():
    """super_resolution's check `print(torch.allclose(rows @ rows.T, eye))` printed tensor(True) where PyTorch prints
    True: sg.allclose of tensors is Tensor.allclose (NaN, infinities, empty and 0-d inputs, rtol/atol/equal_nan as
    PyTorch's); of arrays it stays NumPy's."""
    cases = [([1.0, 2.0], [1.0, 2.0000001], {}), ([1.0, 2.0], [1.0, 2.0000001], {"rtol": 0, "atol": 0}),
             ([np.nan, np.inf], [np.nan, np.inf], {}), ([np.nan, -np.inf], [np.nan, -np.inf], {"equal_nan": True}),
             ([], [], {}), (0.0, -0.0, {}), (1.0, 1.5, {"atol": 0.5})]
    results = {}
    for lib in _both():
        results[lib.__name__] = [lib.allclose(lib.tensor(a, dtype=lib.float64), lib.tensor(b, dtype=lib.float64), **kw)
                                 for a, b, kw in cases]
        assert all(type(result) is bool for result in results[lib.__name__])
    _same(results)
    assert isinstance(sg.allclose(np.ones(2), np.ones(2)), np.ndarray)


REFUSED = {  # calls PyTorch refuses that symgrad answered: (call, the error's type, a word of its message)
    "diag_embed-0d": (lambda T: T.diag_embed(T.tensor(2.)), IndexError, "Dimension out of range"),
    "frac-int": (lambda T: T.frac(T.tensor([1, 2])), RuntimeError, "frac"),
    "frac-bool-method": (lambda T: T.tensor([True]).frac(), RuntimeError, "frac"),
    "logcumsumexp-int": (lambda T: T.logcumsumexp(T.tensor([1, 2]), 0), RuntimeError, "logcumsumexp"),
    "vector_norm-dim-of-0d": (lambda T: T.linalg.vector_norm(T.tensor(2.), dim=1), Exception, "out of"),
    "vector_norm-dim-past-matrix": (lambda T: T.linalg.vector_norm(T.ones(2, 3), dim=5), Exception, "out of"),
    "add-float-alpha-int": (lambda T: T.tensor([1, 2]).add(T.tensor([1, 1]), alpha=0.5), RuntimeError, "alpha"),
    "sub-float-alpha-int": (lambda T: T.tensor([1, 2]).sub(3, alpha=1.0), RuntimeError, "alpha"),
    "add_-float-alpha-int": (lambda T: T.tensor([1, 2]).add_(T.tensor([1, 1]), alpha=0.5), RuntimeError, "alpha"),
    "scatter_reduce-float64-into-float32": (
        lambda T: T.zeros(3, dtype=T.float32, device="cpu").scatter_reduce(
            0, T.tensor([0, 1]), T.tensor([1., 2.], dtype=T.float64), "sum"), RuntimeError, "dtype"),
    "scatter_add-float64-into-float32": (
        lambda T: T.zeros(3, dtype=T.float32, device="cpu").scatter_add(
            0, T.tensor([0, 1]), T.tensor([1., 2.], dtype=T.float64)), RuntimeError, "dtype"),
}


@pytest.mark.parametrize("name", list(REFUSED))
def test_calls_pytorch_refuses_are_refused(name):
    """Each was a value (diag_embed of a 0-d tensor a 1x1 matrix, frac of ints zeros, a float alpha promoting
    ints to floats, a float64 src cast into float32, vector_norm's dim wrapped modulo the rank)."""
    call, kind, word = REFUSED[name]
    for T in _both():
        with pytest.raises(kind, match=f"(?i){word}"):
            call(T)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_what_those_refusals_leave_still_answers(dtype):
    """The floats, a float alpha on floats, an int alpha on ints, dim 0 of a 0-d vector_norm, diag_embed of a
    vector: PyTorch's values (and frac's and logcumsumexp's gradients)."""
    results = {}
    for T in _both():
        dt = getattr(T, dtype)
        x = T.tensor([-2.5, 0.0, 1.75, 30.0], dtype=dt, requires_grad=True)
        values = [T.frac(x[:3]), T.logcumsumexp(x, 0), T.tensor([1, 2]).add(T.tensor([1, 1]), alpha=2),
                  T.tensor([1., 2.], dtype=dt).sub(T.tensor([1., 1.], dtype=dt), alpha=0.5),
                  T.linalg.vector_norm(T.tensor(-2., dtype=dt), dim=0), T.diag_embed(x[:2])]
        (values[0].sum() + values[1][:3].sum()).backward()
        results[T.__name__] = [v.detach().numpy() for v in values] + [x.grad.numpy()]
    for ours, theirs in zip(results["symgrad"], results.get("torch", results["symgrad"])):
        assert ours.dtype == theirs.dtype
        np.testing.assert_allclose(ours, theirs, rtol=1e-6 if dtype == "float32" else 1e-14)


def test_add_takes_alpha_as_sub_does():
    """sg.add(x, y, alpha=2) was a TypeError where sg.sub and Tensor.add took alpha; on NumPy arrays x + alpha y;
    0-d and empty operands too. Values and gradients as PyTorch's."""
    results = {}
    for T in _both():
        x = T.tensor([[1.5, -2.0], [0.0, 4.0]], requires_grad=True)
        y = T.tensor([0.5, -1.0], requires_grad=True)
        z = T.tensor(3.0, requires_grad=True)
        values = [T.add(x, y, alpha=2), T.add(x, z, alpha=-0.5), T.add(T.ones(0, 2), y, alpha=3), T.sub(x, y, alpha=2)]
        sum(v.sum() for v in values).backward()
        results[T.__name__] = [v.tolist() for v in values] + [t.grad.tolist() for t in (x, y, z)]
    _same(results)
    a, b = np.arange(4.0).reshape(2, 2), np.array([1.0, -1.0])
    np.testing.assert_array_equal(sg.add(a, b, alpha=2), a + 2 * b)
    np.testing.assert_array_equal(sg.add(a, b), a + b)


def test_take_along_dim_without_dim_and_cross_without_dim_are_pytorchs():
    """take_along_dim(t, idx) picks from t flattened (a ShapeError before); sg.cross(a, b) of tensors without dim
    where PyTorch's (deprecated) default, the first dimension of size 3, is not NumPy's last axis (a 3x3 pair) is an
    error asking for dim (it took NumPy's: the rows' cross products for the columns'); Tensor.cross keeps
    PyTorch's default; NumPy's arrays keep NumPy's, its take_along_axis(axis=None) too."""
    results = {}
    for T in _both():
        t = T.tensor([[1.0, 5.0, -2.0], [3.0, 2.0, 0.5]], requires_grad=True)
        a = T.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 10.0]], requires_grad=True)
        b = T.tensor([[0.5, 0.0, 1.0], [0.0, 1.0, 0.0], [2.0, 0.0, 1.0]])
        values = [T.take_along_dim(t, T.tensor([[5, 0], [1, 1]])), t.take_along_dim(T.tensor([2])),
                  a.cross(b), T.cross(a[:2], b[:2]), T.cross(a, b, dim=0), T.cross(a, b, dim=1)]
        sum((v * v).sum() for v in values).backward()
        results[T.__name__] = [v.tolist() for v in values] + [t.grad.tolist(), a.grad.tolist()]
        with pytest.raises(RuntimeError, match="no dimension of size 3"):
            T.ones(2, 2).cross(T.ones(2, 2))
    with pytest.raises(ValueError, match="pass dim="):  # torch's default (dim 0) or NumPy's (the last axis)?
        sg.cross(sg.tensor(np.eye(3)), sg.tensor(np.ones((3, 3))))
    for ours, theirs in zip(results["symgrad"], results.get("torch", results["symgrad"])):
        np.testing.assert_allclose(ours, theirs, rtol=1e-15)  # (a gradient's zero may differ in sign)
    a, b = np.arange(9.0).reshape(3, 3), np.eye(3)[::-1]
    np.testing.assert_array_equal(sg.cross(a, b), np.cross(a, b))
    np.testing.assert_array_equal(sg.take_along_axis(a, np.array([7, 0]), None), [7.0, 0.0])
    with pytest.raises(Exception, match="indices"):  # NumPy's ValueError: axis None needs one-dimensional indices
        sg.take_along_axis(a, np.array([[7, 0]]), None)
