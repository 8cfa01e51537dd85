"""NumPy's names on traced values (issue 13, item 4): edge points and oracles beyond the generated tests.

The elementwise ops among them are registered ops, so tests/test_ops.py already checks their values and
gradients; here: their edge points (0, +-inf, NaN, empty, 0-d) in float32 and float64 on every path
(eager, NumPy backend, LLVM backend, eager tensors), integer division as NumPy's, and PyTorch as an oracle.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import symgrad as sg
from symgrad.numpy_api.updates import IndexUpdateHelper

from gradcheck import assert_grads_match_finite_differences, value_and_grad_everywhere, values_everywhere

EDGES = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 0.5, -0.5, 1.5, 2.5, -2.5, 1.0, -7.3, 0.9999, 1e-300, 3e38])
DIVISORS = np.array([0.1, 2.0, -2.0, 0.0, -0.0, np.inf, -np.inf, np.nan, 3.0, -1.5, 1.0, 0.1, 7.0, -0.3, 2.0])

UNARY = ["floor", "ceil", "rint", "trunc", "log2", "log10", "exp2", "arcsinh", "arccosh", "arctanh", "deg2rad",
         "rad2deg", "sinc", "isnan", "isinf", "isfinite",
         "cbrt", "signbit", "isposinf", "isneginf", "positive", "fabs", "absolute", "degrees", "radians"]
BINARY = ["floor_divide", "mod", "remainder", "hypot",
          "copysign", "fmax", "fmin", "fmod", "logaddexp2", "heaviside", "pow"]


def _assert_same(got, expected, path, signed_zeros=True):
    """Same shape, dtype and values (NaN where NaN; the sign of a zero too, unless signed_zeros=False)."""
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.shape == expected.shape and got.dtype == expected.dtype, (path, got.dtype, expected.dtype)
    if got.dtype.kind == "f":
        np.testing.assert_allclose(got, expected, rtol=2e-6 if got.dtype == np.float32 else 1e-14, atol=1e-30,
                                   err_msg=path)
        finite = ~np.isnan(expected) & ((np.abs(expected) > 1e-30) | ((expected == 0) & signed_zeros))
        np.testing.assert_array_equal(np.signbit(got[finite]), np.signbit(expected[finite]), err_msg=f"sign, {path}")
    else:
        np.testing.assert_array_equal(got, expected, err_msg=path)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", UNARY)
def test_unary_edges_match_numpy(name, dtype):
    with np.errstate(all="ignore"):
        for x in (EDGES.astype(dtype), np.zeros((0, 2), dtype), dtype(-2.5)):
            expected = getattr(np, name)(x)
            for path, got in values_everywhere(getattr(sg, name), x).items():
                _assert_same(got, expected, path)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", BINARY)
def test_binary_edges_match_numpy(name, dtype):
    a, b = EDGES.astype(dtype), DIVISORS.astype(dtype)
    with np.errstate(all="ignore"):
        expected = getattr(np, name)(a, b)
        for path, got in values_everywhere(getattr(sg, name), a, b).items():
            _assert_same(got, expected, path)
        for path, got in values_everywhere(getattr(sg, name), np.zeros((0,), dtype), dtype(2.0)).items():
            assert got.shape == (0,) and got.dtype == dtype, path


@pytest.mark.parametrize("dtype", [np.int64, np.int32])
def test_integer_division_and_remainder_follow_numpy(dtype):
    """Floor division and the remainder of traced integers: by zero gives 0 (as NumPy, with no trap), the
    most negative value by -1 wraps, signs follow the divisor; a Python int argument drives % and // too. Eager
    tensors divide as PyTorch's: a zero divisor is its ZeroDivisionError (tests/test_torch_edge_values.py)."""
    info = np.iinfo(dtype)
    a = np.array([7, -7, 7, -7, 0, 5, info.min, info.min, 3, info.max], dtype)
    b = np.array([2, 2, -2, -2, 3, 0, -1, 2, -1, -3], dtype)
    with np.errstate(all="ignore"):
        for fn, divisor in ((lambda x, y: x // y, b), (lambda x, y: x % y, b), (lambda x, y: divmod(x, y)[0], b),
                            (lambda x, y: 100 % x, a), (lambda x, y: x // 3, 3), (lambda x, y: -x % 4, 4)):
            expected = fn(a, b)
            for path in ("numpy", "llvm"):
                _assert_same(sg.compile(fn, backend=path)(a, b), expected, path)
            if np.all(divisor):
                _assert_same(fn(sg.tensor(a), sg.tensor(b)).numpy(), expected, "tensor")
            else:
                with pytest.raises(RuntimeError, match="ZeroDivisionError"):
                    fn(sg.tensor(a), sg.tensor(b))


def test_operators_on_traced_floats():
    x = np.array([2.5, -3.7, 7.0, -0.0])
    fn = lambda a: (a % 2, a // 2, 7.0 % a, 7 // a, divmod(a, 3), np.round(a, 1), a.round(-1))  # noqa
    with np.errstate(all="ignore"):
        expected = fn(x)
        for backend in ("numpy", "llvm"):
            for got, want in zip(sg.compile(fn, backend=backend)(x), expected):
                np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


@pytest.mark.parametrize("decimals", [0, 1, 2, -1, -2])
def test_round_to_decimals_matches_numpy(decimals):
    x = np.array([0.125, -2.5, 3.5, 1234.5678, -0.05, np.inf, np.nan, 0.0])
    for path, got in values_everywhere(lambda a: sg.round(a, decimals), x).items():
        np.testing.assert_allclose(got, np.round(x, decimals), rtol=1e-15, err_msg=path)
    ints = np.array([125, -250, 7])
    np.testing.assert_array_equal(sg.compile(lambda a: sg.round(a, decimals))(ints), np.round(ints, decimals))


@pytest.mark.parametrize("name", ["floor", "ceil", "rint", "trunc", "round", "floor_divide"])
def test_step_functions_have_zero_gradient(name):
    x = np.array([0.3, -1.7, 2.5, 0.0, -0.0, np.inf])
    fn = (lambda a: sg.sum(getattr(sg, name)(a) * a)) if name != "floor_divide" else (
        lambda a: sg.sum(sg.floor_divide(a, 0.7) * a))
    with np.errstate(all="ignore"):
        step = getattr(np, name)(x) if name != "floor_divide" else np.floor_divide(x, 0.7)
        for path, (_, (g,)) in value_and_grad_everywhere(fn, (x,)).items():
            np.testing.assert_array_equal(g, step, err_msg=path)  # d(step(x) * x)/dx = step(x)


def test_mod_gradient_is_one_and_minus_the_quotient():
    """As autograd and JAX: d(a % b)/da = 1, d(a % b)/db = -floor(a / b)."""
    a, b = np.array([5.3, -2.2, 7.0, 0.5]), np.array([2.0, 1.5, -3.0, 0.3])
    for path, (_, (ga, gb)) in value_and_grad_everywhere(lambda a, b: sg.sum(a % b), (a, b), (0, 1)).items():
        np.testing.assert_array_equal(ga, np.ones(4), err_msg=path)
        np.testing.assert_array_equal(gb, -np.floor_divide(a, b), err_msg=path)


def test_hypot_neither_overflows_nor_underflows():
    a, b = np.array([3e300, 3e-300, 3.0]), np.array([4e300, 4e-300, 4.0])
    for path, got in values_everywhere(sg.hypot, a, b).items():
        np.testing.assert_allclose(got, [5e300, 5e-300, 5.0], rtol=1e-15, err_msg=path)
    for path, (_, (ga, gb)) in value_and_grad_everywhere(lambda a, b: sg.sum(sg.hypot(a, b)), (a, b), (0, 1)).items():
        np.testing.assert_allclose(ga, [0.6, 0.6, 0.6], rtol=1e-15, err_msg=path)
        np.testing.assert_allclose(gb, [0.8, 0.8, 0.8], rtol=1e-15, err_msg=path)


def test_sinc_is_one_with_zero_slope_at_zero():
    for path, (value, (g,)) in value_and_grad_everywhere(lambda a: sg.sum(sg.sinc(a)), (np.zeros(2),)).items():
        assert value == 2.0 and np.all(g == 0.0), path


def test_ieee_classes_drive_where():
    x = np.array([1.0, np.nan, np.inf, -np.inf, 0.0])
    fn = lambda a: sg.where(sg.isnan(a), -1.0, sg.where(sg.isinf(a), 2.0, sg.where(sg.isfinite(a), a * 3, 9.0)))  # noqa
    for path, got in values_everywhere(fn, x).items():
        np.testing.assert_array_equal(got, [3.0, -1.0, 2.0, 2.0, 0.0], err_msg=path)
    ints = np.array([1, -2])
    for name in ("isnan", "isinf", "isfinite"):
        np.testing.assert_array_equal(sg.compile(getattr(sg, name))(ints), getattr(np, name)(ints))


TORCH_UNARY = {"floor": "floor", "ceil": "ceil", "rint": "round", "trunc": "trunc", "log2": "log2", "log10": "log10",
               "exp2": "exp2", "arcsinh": "asinh", "arccosh": "acosh", "arctanh": "atanh", "deg2rad": "deg2rad",
               "rad2deg": "rad2deg", "sinc": "sinc", "isnan": "isnan", "isinf": "isinf", "isfinite": "isfinite"}


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", sorted(TORCH_UNARY))
def test_unary_values_and_gradients_match_torch(name, dtype):
    torch = pytest.importorskip("torch")
    x = np.linspace(-2.7, 2.9, 13).astype(dtype)
    if name == "arccosh":
        x = np.abs(x) + 1.05
    if name == "arctanh":
        x = x / 3.1
    if name in ("log2", "log10"):
        x = np.abs(x) + 0.05
    t = torch.tensor(x, requires_grad=True)
    out = getattr(torch, TORCH_UNARY[name])(t)
    fn = getattr(sg, name)
    for path, got in values_everywhere(fn, x).items():
        np.testing.assert_allclose(np.asarray(got, np.float64), out.detach().numpy().astype(np.float64),
                                   rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-6, err_msg=path)
    if out.dtype.is_floating_point:
        out.sum().backward()
        for path, (_, (g,)) in value_and_grad_everywhere(lambda a: sg.sum(fn(a)), (x,)).items():
            np.testing.assert_allclose(g, t.grad.numpy(), rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-6,
                                       err_msg=path)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name,torch_name", [("mod", "remainder"), ("floor_divide", "floor_divide"),
                                             ("hypot", "hypot")])
def test_binary_values_and_gradients_match_torch(name, torch_name, dtype):
    torch = pytest.importorskip("torch")
    a, b = np.array([5.3, -2.2, 7.1, 0.5, -4.4], dtype), np.array([2.0, 1.5, -3.0, 0.3, -0.7], dtype)
    ta, tb = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    out = getattr(torch, torch_name)(ta, tb)
    fn = getattr(sg, name)
    for path, got in values_everywhere(fn, a, b).items():
        np.testing.assert_allclose(got, out.detach().numpy(), rtol=1e-6, err_msg=path)
    if name != "floor_divide":  # torch does not differentiate floor_divide; its derivative is 0 here
        out.sum().backward()
        for path, (_, (ga, gb)) in value_and_grad_everywhere(lambda x, y: sg.sum(fn(x, y)), (a, b), (0, 1)).items():
            np.testing.assert_allclose(ga, ta.grad.numpy(), rtol=1e-5, err_msg=path)
            np.testing.assert_allclose(gb, tb.grad.numpy(), rtol=1e-5, err_msg=path)


# ----------------------------------------------------------------------------- sorting, searching, comparing

SORT_EDGES = np.array([[3.0, np.nan, -np.inf, 1.0, 1.0, np.inf, -0.0, 0.0, np.nan, -2.5],
                       [0.5, 0.5, 0.5, -1.0, 7.0, 2.0, -7.0, 0.0, 1e-300, -1e300]])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name,kwargs", [("sort", {}), ("argsort", {}), ("sort", {"axis": 0}), ("argsort", {"axis": None}),
                                         ("argmax", {}), ("argmax", {"axis": 1}), ("argmin", {"axis": 0, "keepdims": True}),
                                         ("argmin", {"axis": -1})])
def test_sorting_and_searching_edges_match_numpy(name, kwargs, dtype):
    """NaN sorts last and is argmax's and argmin's answer (its first position), ties keep their order."""
    x = SORT_EDGES.astype(dtype)
    expected = getattr(np, name)(x, **kwargs, **({"kind": "stable"} if name == "argsort" else {}))
    for path, got in values_everywhere(lambda a: getattr(sg, name)(a, **kwargs), x).items():
        _assert_same(got, expected, path)
    for path, got in values_everywhere(lambda a: getattr(sg, name)(a), x[0, :1]).items():  # one element
        _assert_same(got, getattr(np, name)(x[0, :1]), path)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_cumulative_extrema_match_numpy(dtype):
    x = SORT_EDGES.astype(dtype) if dtype != np.int64 else np.array([[3, 1, 4, 1, 5, 9, 2, 6], [5, 5, 3, 8, 8, 1, 0, 9]])
    with np.errstate(invalid="ignore"):
        for axis in (0, 1, None):
            for name, ufunc in (("cummax", np.maximum), ("cummin", np.minimum)):
                expected = ufunc.accumulate(x, axis=axis) if axis is not None else ufunc.accumulate(x.ravel())
                for path, got in values_everywhere(lambda a: getattr(sg, name)(a, axis=axis), x).items():
                    _assert_same(got, expected, path)


def test_sort_and_cummax_gradients_go_to_the_elements_picked():
    x = np.array([[0.3, -1.2, 2.0, 0.3, 5.0], [1.0, 1.0, -3.0, 4.0, 4.0]])
    w = np.arange(1.0, 6.0)
    order = np.argsort(x, axis=1, kind="stable")
    expected_sort = np.zeros_like(x)
    np.put_along_axis(expected_sort, order, np.broadcast_to(w, x.shape), axis=1)
    for path, (_, (g,)) in value_and_grad_everywhere(lambda a: sg.sum(sg.sort(a) * w), (x,)).items():
        np.testing.assert_array_equal(g, expected_sort, err_msg=path)
    # cummax: each position's cotangent goes to the latest element setting the running maximum (ties: the later)
    expected_cummax = np.array([[1.0 + 2.0, 0.0, 3.0 + 4.0, 0.0, 5.0], [1.0, 2.0 + 3.0, 0.0, 4.0, 5.0]])
    for path, (_, (g,)) in value_and_grad_everywhere(lambda a: sg.sum(sg.cummax(a, axis=1) * w), (x,)).items():
        np.testing.assert_array_equal(g, expected_cummax, err_msg=path)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sort_and_cummax_match_torch(dtype):
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(5).normal(size=(3, 7)).astype(dtype)
    for ours, theirs in ((lambda a: sg.sort(a, axis=1), lambda t: torch.sort(t, dim=1, stable=True).values),
                         (lambda a: sg.cummax(a, axis=1), lambda t: torch.cummax(t, dim=1).values),
                         (lambda a: sg.cummin(a, axis=0), lambda t: torch.cummin(t, dim=0).values),
                         (lambda a: sg.tril(a, 1) + sg.flip(a, 1), lambda t: torch.tril(t, 1) + torch.flip(t, (1,))),
                         (lambda a: sg.trace(a[:, :3]), lambda t: torch.trace(t[:, :3])),
                         (lambda a: sg.tensordot(a, a, ([1], [1])), lambda t: torch.tensordot(t, t, ([1], [1]))),
                         (lambda a: sg.diag(a[0]), lambda t: torch.diag(t[0]))):
        t = torch.tensor(x, requires_grad=True)
        out = theirs(t)
        weights = np.random.default_rng(7).normal(size=out.shape).astype(dtype)
        (out * torch.tensor(weights)).sum().backward()
        for path, (value, (g,)) in value_and_grad_everywhere(lambda a: sg.sum(ours(a) * weights), (x,)).items():
            np.testing.assert_allclose(value, (out.detach().numpy() * weights).sum(), rtol=1e-5, err_msg=path)
            np.testing.assert_allclose(g, t.grad.numpy(), rtol=1e-5, atol=1e-6, err_msg=path)
    np.testing.assert_array_equal(sg.compile(lambda a: sg.argmax(a, axis=1))(x), torch.argmax(torch.tensor(x), 1))


def test_isclose_and_allclose_match_numpy():
    a = np.array([1.0, np.inf, -np.inf, np.nan, 0.0, 1e-9, 1.0, np.inf])
    b = np.array([1.0 + 1e-6, np.inf, np.inf, np.nan, 1e-9, 0.0, 1.1, 1.0])
    for kwargs in ({}, {"equal_nan": True}, {"rtol": 0.2}, {"atol": 0.0}):
        for path, got in values_everywhere(lambda x, y: sg.isclose(x, y, **kwargs), a, b).items():
            _assert_same(got, np.isclose(a, b, **kwargs), path)
        close = lambda x, y: sg.allclose(x[:2], y[:2], **kwargs)  # noqa: E731
        want = np.allclose(a[:2], b[:2], **kwargs)
        for path, got in {"eager": close(a, b), "numpy": sg.compile(close, backend="numpy")(a, b),
                          "llvm": sg.compile(close)(a, b)}.items():
            _assert_same(got, np.asarray(want), path)
        assert close(sg.tensor(a), sg.tensor(b)) is bool(want)  # (of tensors, torch.allclose: a Python bool)
    for name in ("all", "any"):
        for x, axis in ((a > 0, None), (np.zeros((0, 2)), 0), (np.array([[1, 0], [2, 3]]), 1)):
            for path, got in values_everywhere(lambda v: getattr(sg, name)(v, axis=axis), x).items():
                _assert_same(got, getattr(np, name)(x, axis=axis), path)


# ----------------------------------------------------------------------------- creation, names, errors

def test_creation_functions_match_numpy():
    assert np.array_equal(sg.linspace(0.0, 1.0, 7), np.linspace(0.0, 1.0, 7))
    assert np.array_equal(sg.arange(2, 9, 3), np.arange(2, 9, 3)) and sg.arange(4.0).dtype == np.float64
    assert np.array_equal(sg.eye(3, 4, 1), np.eye(3, 4, 1)) and np.array_equal(sg.identity(2), np.identity(2))
    x = np.ones((2, 3), np.float32)
    for ours, theirs in ((sg.full_like(x, 2.5), np.full_like(x, 2.5)), (sg.empty_like(x), np.zeros_like(x)),
                         (sg.empty((2,)), np.zeros(2))):
        _assert_same(ours, theirs, "eager")
    f = sg.compile(lambda a: (sg.zeros_like(a) + sg.eye(3)[0] + sg.linspace(a[0], a[2], 3), sg.array(2.0, ndmin=2)))
    got, two = f(np.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(got, [2.0, 2.0, 3.0])
    assert two.shape == (1, 1)


def test_trace_is_numpys_on_an_array_and_tracing_on_a_function():
    a = np.arange(12.0).reshape(3, 4)
    assert sg.trace(a) == np.trace(a) and sg.trace(a, offset=1) == np.trace(a, offset=1)
    assert "reduce_sum" in str(sg.trace(lambda x: sg.trace(x), a))
    assert sg.trace(sg.tensor(a)).item() == np.trace(a)


def test_a_numpy_constant_indexed_by_a_traced_integer():
    table = np.array([10.0, 20.0, 30.0, 40.0])
    fn = lambda x: sg.array(table)[sg.argmax(x, axis=1)] + sg.take(table, sg.argmin(x, axis=1))  # noqa
    x = np.array([[0.1, 0.9, 0.3], [2.0, -1.0, 0.0]])
    for path in ("numpy", "llvm"):
        np.testing.assert_array_equal(sg.compile(fn, backend=path)(x), [20.0 + 10.0, 10.0 + 20.0])
    with pytest.raises(sg.TracerError, match=r"sg.array\(c\)\[i\]"):
        sg.compile(lambda x: table[sg.argmax(x)])(x)


def test_a_list_of_traced_integers_indexes_as_jnp():
    """min-char-rnn's one-hot code `sg.array(eye)[:, [i]]` with a traced i failed ('np.size was applied to a traced
    value'): a list holding traced integers is an array of them, as in JAX; values on both backends, a gradient
    against finite differences, nested lists, vmap over i and an empty list."""
    w = np.arange(16.0).reshape(4, 4) - 5.0
    fn = lambda w, i: sg.sum(sg.array(np.eye(4))[:, [i]] * w[:, [i, 0]] ** 2) + sg.sum(w[[i, 0], [[1], [i]]])  # noqa
    i = np.int64(2)
    want = np.sum(np.eye(4)[:, [i]] * w[:, [i, 0]] ** 2) + np.sum(w[[i, 0], [[1], [i]]])
    for path in ("numpy", "llvm"):
        assert sg.compile(fn, backend=path)(w, i) == want
    assert_grads_match_finite_differences(fn, [w, i], argnums=0)
    np.testing.assert_array_equal(sg.vmap(lambda i: sg.array(w)[[i, 0]])(np.array([3, 1])), [w[[3, 0]], w[[1, 0]]])
    assert sg.compile(lambda w: w[[]])(w).shape == (0, 4)


@pytest.mark.parametrize("program,message", [
    (lambda x: sg.repeat(x, sg.argmax(x)), "repeat: the length of its result"),
    (lambda x: sg.arange(sg.argmax(x)), "arange: the length"),
    (lambda x: sg.split(x, 4), "equal division"),
    (lambda x: sg.pad(x, 1, mode="mean"), "mode 'mean' is not supported"),
    (lambda x: sg.argmax(x[:0]), "argmax of an empty sequence"),
    (lambda x: sg.convolve(x, x[:0]), "v cannot be empty"),
    (lambda x: sg.einsum("ij,j", x, x), "has 2 letters"),
])
def test_unsupported_uses_are_clear_errors(program, message):
    with pytest.raises((TypeError, ValueError)) as info:
        sg.compile(program)(np.arange(6.0))
    assert message in str(info.value) and "test_numpy_names.py" in str(info.value)


# ----------------------------------------------------------------------------- errors that help (item 5)


def _named_functions_exist(message):
    """Every sg.<path> a message names is a function symgrad has."""
    for path in re.findall(r"sg\.([A-Za-z_][\w.]*)", message):
        value = sg
        for part in path.rstrip(".").split("."):
            value = getattr(value, part)
        assert callable(value), path


NUMPY_ON_TRACED = [
    (lambda a: np.unwrap(a[0]), "np.unwrap was applied to a traced value f64[3], and symgrad has no equivalent"),
    (lambda a: np.tril(a), "use sg.tril"),
    (lambda a: np.modf(a), "the closest: sg.mod"),
    (lambda a: np.nanmedian(a), "symgrad has no function of that name; the closest: sg.nanmean"),
    (lambda a: np.cross(a[0], a[1]), "use sg.cross"),
    (lambda a: np.median(a), "use sg.median"),
    (lambda a: np.maximum.accumulate(a), "sg.cummax"),
    (lambda a: np.sin(a, out=a), "use sg.sin without keywords"),
    (lambda a: np.linalg.det(a), "np.linalg.det was applied to a traced value f64[3,3]"),
    (lambda a: np.zeros(3)[sg.argmax(a)], "sg.array(c)[i] or sg.take(c, i)"),
    (lambda a: np.asarray(a), "converted to a NumPy array"),
]


@pytest.mark.parametrize("program,message", NUMPY_ON_TRACED)
def test_numpy_functions_on_traced_values_name_what_symgrad_has(program, message):
    """A NumPy function symgrad lacks says so and names symgrad's closest way, which exists (it once said
    'use the sg.* function of the same name' for np.cross, which has none)."""
    with pytest.raises(sg.TracerError) as info:
        sg.compile(program)(np.ones((3, 3)) + np.eye(3))
    text = str(info.value)
    assert message in text and "test_numpy_names.py" in text
    assert "of the same name" not in text
    _named_functions_exist(text)


def test_scipy_functions_on_traced_values_route_or_name_what_symgrad_has():
    """scipy.special's ufuncs route to sg.scipy.special's functions, as NumPy's to sg's; its other functions
    (multigammaln is Python) name the symgrad function to call."""
    special = pytest.importorskip("scipy.special")
    x = np.array([0.5, 3.0, 7.5])
    for name, args in (("gammaln", (x,)), ("xlogy", (2.0, x)), ("expit", (x,)), ("erfc", (x,))):
        compiled = sg.compile(lambda a: getattr(special, name)(*(a if arg is x else arg for arg in args)))(x)
        np.testing.assert_allclose(compiled, getattr(special, name)(*args), rtol=1e-12, err_msg=name)
    with pytest.raises(sg.TracerError) as info:
        sg.compile(lambda a: special.multigammaln(a, 2))(np.float64(3.0))
    text = str(info.value)
    assert "scipy.special.multigammaln was applied to a traced value" in text and "test_numpy_names.py" in text
    _named_functions_exist(text)


def test_item_assignment_explains_the_functional_update():
    def program(x):
        x[0] = 1.0
        return x
    with pytest.raises(sg.TracerError, match=r"x = x\.at\[key\]\.set\(v\)") as info:
        sg.compile(program)(np.zeros(3))
    assert "test_numpy_names.py" in str(info.value)


# ----------------------------------------------------------------------------- x.at[key] updates

UPDATE_KEYS = [("int", 1), ("slice", (slice(None), slice(1, 3))), ("array", (np.array([0, 1]), np.array([2, 0]))),
               ("repeated", (0, np.array([2, 0, 2, 2]))), ("mask", np.array([[True, False, True], [False, True, True]])),
               ("0-d", ()), ("empty", np.array([], dtype=np.int64))]
NUMPY_UPDATES = {"add": np.add, "multiply": np.multiply, "min": np.minimum, "max": np.maximum}


def _numpy_update(x, key, values, how):
    out = np.array(x)
    if how == "set":
        flat = np.arange(out.size).reshape(out.shape)[key].ravel()  # the last of repeated positions wins
        out.reshape(-1)[flat] = np.broadcast_to(values, np.shape(out[key])).ravel()
    else:
        NUMPY_UPDATES[how].at(out, key, values)
    return out


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
@pytest.mark.parametrize("how", ["set", "add", "multiply", "min", "max"])
@pytest.mark.parametrize("key_id,key", UPDATE_KEYS, ids=[k for k, _ in UPDATE_KEYS])
def test_at_updates_match_numpy(key_id, key, how, dtype):
    x = (np.arange(6).reshape(2, 3) * 1.5 - 2).astype(dtype) if key_id != "0-d" else np.asarray(2.5).astype(dtype)
    shape = np.shape(x[key])
    values = (np.arange(np.prod(shape)).reshape(shape) * 1.5 - 3).astype(dtype)
    expected = _numpy_update(x, key, values, how)
    for path in ("numpy", "llvm"):
        got = sg.compile(lambda a, v: getattr(a.at[key], how)(v), backend=path)(x, values)
        _assert_same(got, expected, path, signed_zeros=False)  # a scatter adds its values to +0.0
        got = sg.compile(lambda a: getattr(a.at[key], how)(2), backend=path)(x)  # a scalar value
        _assert_same(got, _numpy_update(x, key, 2, how), path, signed_zeros=False)
    np.testing.assert_array_equal(getattr(IndexUpdateHelper(x)[key], how)(values), expected)  # eager, on arrays


@pytest.mark.parametrize("how", ["set", "add", "multiply", "min", "max"])
def test_at_updates_with_a_traced_index_match_numpy(how):
    x, values = np.array([[0.5, -1.0, 2.0], [3.0, 1.0, -2.0]]), np.array([10.0, -3.0, 7.0, 0.25])
    index = np.array([2, 0, 2, -1])
    expected = _numpy_update(x, (0, index), values, how)
    for path in ("numpy", "llvm"):
        got = sg.compile(lambda a, v, i: getattr(a.at[0, i], how)(v), backend=path)(x, values, index)
        _assert_same(got, expected, path)


@pytest.mark.parametrize("traced_index", [False, True])
@pytest.mark.parametrize("how", ["set", "add", "multiply", "min", "max"])
def test_at_update_gradients_match_finite_differences(how, traced_index):
    x = np.array([[0.5, -1.0, 2.0], [3.0, 1.0, -2.0]])
    values = np.array([1.7, -3.0, 0.3, 2.9])
    index = np.array([2, 0, 2, 1])
    weights = np.arange(1.0, 7.0).reshape(2, 3)
    if traced_index:
        def loss(a, v):
            i = sg.astype(sg.argsort(sg.array([3.0, 1.0, 4.0, 2.0])), np.int64) * 0 + index  # traced, same values
            return sg.sum(getattr(a.at[0, i], how)(v) * weights)
    else:
        def loss(a, v):
            return sg.sum(getattr(a.at[0, index], how)(v) * weights)
    reference = lambda a, v: np.sum(_numpy_update(a, (0, index), v, how) * weights)  # noqa: E731
    assert_grads_match_finite_differences(loss, (x, values), (0, 1), reference=reference)
    results = value_and_grad_everywhere(loss, (x, values), (0, 1), eager=False)
    first = results.pop("transform")
    for path, (value, grads) in results.items():
        np.testing.assert_allclose(value, first[0], err_msg=path)
        for g, expected in zip(grads, first[1]):
            np.testing.assert_allclose(g, expected, err_msg=path)


@pytest.mark.parametrize("how", ["set", "add", "multiply", "min", "max"])
def test_at_updates_on_eager_tensors_record_their_gradient(how):
    x, values = np.array([[0.5, -1.0, 2.0], [3.0, 1.0, -2.0]]), np.array([1.7, -3.0, 0.3, 2.9])
    index, weights = np.array([2, 0, 2, 1]), np.arange(1.0, 7.0).reshape(2, 3)
    loss = lambda a, v: sg.sum(getattr(a.at[0, index], how)(v) * weights)  # noqa: E731
    results = value_and_grad_everywhere(loss, (x, values), (0, 1))
    first = results.pop("transform")
    np.testing.assert_allclose(results["eager"][0], first[0])
    for g, expected in zip(results["eager"][1], first[1]):
        np.testing.assert_allclose(g, expected)


def test_at_updates_inside_a_loop():
    def program(x):
        return sg.fori_loop(0, 3, lambda i, y: y.at[i].set(y[i] * 2.0 + y[i + 1]), x)
    x = np.array([1.0, 2.0, 3.0, 4.0])
    expected = x.copy()
    for i in range(3):
        expected[i] = expected[i] * 2 + expected[i + 1]
    for path, (value, (g,)) in value_and_grad_everywhere(lambda a: sg.sum(program(a)), (x,), eager=False).items():
        np.testing.assert_allclose(value, expected.sum(), err_msg=path)
    np.testing.assert_allclose(sg.compile(program)(x), expected)


def test_numpy_functions_calling_array_methods_work_on_traced_values():
    """np.argmax(t), np.cumsum(t), np.repeat(t, n), np.all(t) ... call t.argmax(...) as on any array-like."""
    x = np.array([[3.0, 1.0, 2.0], [0.5, 4.0, -1.0]])
    def program(a):
        return (np.argmax(a, axis=1), np.argmin(a), np.argsort(a), np.cumsum(a, axis=0), np.cumprod(a), a.trace(),
                np.repeat(a, 2, axis=0), np.all(a > 0, axis=1), np.any(a > 3), a.diagonal(), a.cumsum(dtype=np.float32))
    for backend in ("numpy", "llvm"):
        for got, expected in zip(sg.compile(program, backend=backend)(x), program(x)):
            _assert_same(got, expected, backend)
    np.testing.assert_allclose(sg.grad(lambda a: a.trace() + np.sum(np.cumsum(a, axis=1)))(x), [[4, 2, 1], [3, 3, 1]])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_reflexive_comparisons_see_nan_after_fusion(dtype):
    """x == x is False and x != x True at NaN: once fusion substituted one value for both operands, SymPy
    folded them to True and False (sg.where(x != x, 1, 0) gave 0 at NaN)."""
    x = np.array([1.0, np.nan, np.inf, -0.0], dtype)
    def program(a):
        return [sg.where(c, 1.0, 0.0) for c in (a == a, a != a, a <= a, a >= a, a < a, a > a)]
    with np.errstate(invalid="ignore"):
        expected = [np.where(c, 1.0, 0.0) for c in (x == x, x != x, x <= x, x >= x, x < x, x > x)]
    for path, got in (("numpy", sg.compile(program, backend="numpy")(x)), ("llvm", sg.compile(program)(x))):
        for g, e in zip(got, expected):
            _assert_same(g, e, path)
    ints, bools = np.array([3, -1]), np.array([True, False])
    for v in (ints, bools):
        got = sg.compile(lambda a: (a == a, a != a, a <= a))(v)
        np.testing.assert_array_equal(got, (v == v, v != v, v <= v))


EDGE_PROGRAMS = [  # fn(ns, x) on arrays holding 0, -0, +-inf, NaN; and on 0-d and empty arrays
    ("flip", lambda ns, x: ns.flip(x)), ("tile", lambda ns, x: ns.tile(x, 2)), ("repeat", lambda ns, x: ns.repeat(x, 2)),
    ("pad", lambda ns, x: ns.pad(x, 1)), ("pad-edge", lambda ns, x: ns.pad(x, 1, mode="edge")),
    ("atleast_2d", lambda ns, x: ns.atleast_2d(x)), ("hstack", lambda ns, x: ns.hstack([x, x])),
    ("append", lambda ns, x: ns.append(x, x)), ("cummax", lambda ns, x: ns.maximum.accumulate(ns.ravel(x))
                                                   if ns is np else ns.cummax(x)),
    ("cummin", lambda ns, x: ns.minimum.accumulate(ns.ravel(x)) if ns is np else ns.cummin(x)),
    ("argmax", lambda ns, x: ns.argmax(x)),
    ("sort-flat", lambda ns, x: ns.sort(x, axis=None)), ("isclose", lambda ns, x: ns.isclose(x, x * 1.0000001)),
    ("round", lambda ns, x: ns.round(x, 2)), ("mod", lambda ns, x: ns.mod(x, 1.5)), ("floor_divide", lambda ns, x: x // 0.5),
    ("vdot", lambda ns, x: ns.vdot(x, x)), ("tensordot0", lambda ns, x: ns.tensordot(x, x, 0)),
]
EDGE_INPUTS = {"ieee": np.array([[0.0, -0.0, np.inf], [-np.inf, np.nan, 2.5]]), "0-d": np.array(-1.5),
               "empty": np.zeros((0, 3))}


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("input_id", sorted(EDGE_INPUTS))
@pytest.mark.parametrize("name,program", EDGE_PROGRAMS, ids=[n for n, _ in EDGE_PROGRAMS])
def test_edge_inputs_on_every_path(name, program, input_id, dtype):
    x = EDGE_INPUTS[input_id].astype(dtype)
    if name in ("pad-edge", "argmax") and x.size == 0:  # an error in NumPy: an error on every path too
        f = lambda a: program(sg, a)  # noqa: E731
        for run in (lambda: program(np, x), lambda: f(x), lambda: sg.compile(f, backend="numpy")(x),
                    lambda: sg.compile(f)(x), lambda: f(sg.tensor(x))):
            with pytest.raises(ValueError):
                run()
        return
    with np.errstate(all="ignore"):
        expected = np.asarray(program(np, x))
        for path, got in values_everywhere(lambda a: program(sg, a), x).items():
            _assert_same(got, expected, path, signed_zeros=name not in ("vdot", "tensordot0", "mod"))


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
@pytest.mark.parametrize("n", [1, 2, 5, 37])
def test_both_argsort_decompositions_match_numpy(n, dtype):
    """The LLVM backend lowers argsort by ranking pairs (short axes) or by a bitonic network (long ones):
    both give NumPy's stable order with NaN last, on every path they can run."""
    from symgrad.ops import sorting
    rng = np.random.default_rng(n)
    x = rng.integers(-3, 4, size=(3, n)).astype(dtype)  # many ties
    if dtype != np.int64:
        x.ravel()[rng.permutation(x.size)[:4]] = [np.nan, np.inf, -np.inf, -0.0][:min(4, x.size)]
    expected = np.argsort(x, axis=-1, kind="stable")
    for decomposition in (sorting._argsort_by_ranks, sorting._argsort_by_network):
        np.testing.assert_array_equal(decomposition(x), expected)  # eager
        for backend in ("numpy", "llvm"):
            np.testing.assert_array_equal(sg.compile(decomposition, backend=backend)(x), expected)


@pytest.mark.parametrize("num,endpoint", [(0, True), (1, True), (1, False), (2, True), (5, False)])
def test_linspace_with_traced_end_points_matches_numpy(num, endpoint):
    start, stop = np.array([0.5, -1.0]), np.array([2.0, 3.0])
    expected, step = np.linspace(start, stop, num, endpoint, retstep=True, axis=1)
    for backend in ("numpy", "llvm"):
        got, got_step = sg.compile(lambda a, b: sg.linspace(a, b, num, endpoint, retstep=True, axis=1),
                                   backend=backend)(start, stop)
        _assert_same(got, expected, backend)
        _assert_same(got_step, step, backend)


def test_numpy_positional_arguments_and_out():
    x = np.array([[3.0, 1.0, 2.0], [0.5, 4.0, -1.0]])
    got = sg.compile(lambda a: (sg.cumsum(a, 0, np.float32), sg.argmax(a, 1, None), sg.all(a > 0, 0, None, True),
                                sg.trace(a, 1, 0, 1, np.float32)))(x)
    expected = (np.cumsum(x, 0, np.float32), np.argmax(x, 1, None), np.all(x > 0, 0, None, True),
                np.trace(x, 1, 0, 1, np.float32))
    for g, e in zip(got, expected):
        _assert_same(g, e, "llvm")
    for program in (lambda a: sg.cumsum(a, out=a), lambda a: sg.argmin(a, 0, np.zeros(3)), lambda a: sg.trace(a, out=a)):
        with pytest.raises(TypeError, match="out=") as info:
            sg.compile(program)(x)
        assert "test_numpy_names.py" in str(info.value)


def test_new_names_under_vmap():
    """argsort has a batching rule (the batch axis is one more leading axis); the compositions batch as
    their primitives do. vmap of each (and of its gradient) gives the per-example results."""
    x = np.random.default_rng(0).normal(size=(4, 6))
    x[1, 2] = np.nan
    def f(a):
        return (sg.sum(sg.sort(a) * np.arange(6.0)) + sg.cummax(a)[-1] + sg.argmax(a) + sg.trace(sg.outer(a, a))
                + sg.sum(sg.pad(a, 1, mode="reflect") % 0.7) + sg.sum(a.at[sg.argmin(a)].set(0.0) ** 2))
    with np.errstate(invalid="ignore"):
        expected = np.array([f(sg.tensor(row)).item() for row in x])
        np.testing.assert_allclose(sg.vmap(f)(x), expected)
        np.testing.assert_allclose(sg.compile(sg.vmap(f))(x), expected)
        grads = np.stack([sg.grad(f)(row) for row in x])
        np.testing.assert_allclose(sg.compile(sg.vmap(sg.grad(f)))(x), grads)


@pytest.mark.parametrize("call", [lambda x: sg.sum(x, 0, np.float64), lambda x: sg.mean(x, 1, "float32"),
                                  lambda x: sg.max(x, 0, np.dtype(np.float32)), lambda x: sg.var(x, 0, np.float32),
                                  lambda x: sg.std(x, None, float)])
def test_a_dtype_in_numpys_third_position_is_refused_not_read_as_keepdims(call):
    with pytest.raises(TypeError, match="third positional argument"):
        call(np.ones((2, 3)))
    with pytest.raises(TypeError, match="third positional argument"):
        sg.compile(call)(np.ones((2, 3)))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sinc_derivative_is_accurate_near_zero(dtype):
    """sinc's quotient rule cancels near 0 (float32 gave 8 where the derivative is 0 at x = 1e-8): the
    derivative matches mpmath's to a few ulp at 0, tiny x, both sides of the series' threshold and beyond."""
    mpmath = pytest.importorskip("mpmath")
    x = np.array([0.0, 1e-30, 1e-8, -1e-3, 0.3, 0.4999, 0.5, -0.5001, 1.3, 2.5, -7.25], dtype)

    def exact(v):
        return 0.0 if v == 0 else float(mpmath.diff(lambda t: mpmath.sin(mpmath.pi * t) / (mpmath.pi * t), mpmath.mpf(v)))

    expected = np.array([exact(float(v)) for v in x])
    tolerance = 1e-6 if dtype == np.float32 else 1e-14
    for path, (value, (grad,)) in value_and_grad_everywhere(lambda v: sg.sum(sg.sinc(v)), (x,)).items():
        np.testing.assert_allclose(grad, expected, rtol=tolerance, atol=tolerance, err_msg=path)
        np.testing.assert_allclose(value, np.sum(np.sinc(x)), rtol=tolerance, err_msg=path)
