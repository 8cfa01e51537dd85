"""NumPy's names on traced values (issue 13, item 4): edge points and oracles beyond the generated tests.

The elementwise ops among them are registered ops, so tests/test_ops.py already checks their values and
gradients; here: their edge points (0, +-inf, NaN, empty, 0-d) in float32 and float64 on every path
(eager, NumPy backend, LLVM backend, eager tensors), integer division as NumPy's, and PyTorch as an oracle.
"""
from __future__ import annotations

import numpy as np
import pytest

import symgrad as sg

from gradcheck import value_and_grad_everywhere

EDGES = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 0.5, -0.5, 1.5, 2.5, -2.5, 1.0, -7.3, 0.9999, 1e-300, 3e38])
DIVISORS = np.array([0.1, 2.0, -2.0, 0.0, -0.0, np.inf, -np.inf, np.nan, 3.0, -1.5, 1.0, 0.1, 7.0, -0.3, 2.0])

UNARY = ["floor", "ceil", "rint", "trunc", "log2", "log10", "exp2", "arcsinh", "arccosh", "arctanh", "deg2rad",
         "rad2deg", "sinc", "isnan", "isinf", "isfinite"]
BINARY = ["floor_divide", "mod", "remainder", "hypot"]


def _paths(fn, *args):
    """{path: result} of fn on every path a user can take."""
    return {"eager": fn(*args), "numpy": sg.compile(fn, backend="numpy")(*args), "llvm": sg.compile(fn)(*args),
            "tensor": fn(*map(sg.tensor, args)).numpy()}


def _assert_same(got, expected, path):
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.shape == expected.shape and got.dtype == expected.dtype, (path, got.dtype, expected.dtype)
    if got.dtype.kind == "f":
        np.testing.assert_allclose(got, expected, rtol=2e-6 if got.dtype == np.float32 else 1e-14, atol=1e-30,
                                   err_msg=path)
        finite = ~np.isnan(expected) & ((np.abs(expected) > 1e-30) | (expected == 0))
        np.testing.assert_array_equal(np.signbit(got[finite]), np.signbit(expected[finite]), err_msg=f"sign, {path}")
    else:
        np.testing.assert_array_equal(got, expected, err_msg=path)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", UNARY)
def test_unary_edges_match_numpy(name, dtype):
    with np.errstate(all="ignore"):
        for x in (EDGES.astype(dtype), np.zeros((0, 2), dtype), dtype(-2.5)):
            expected = getattr(np, name)(x)
            for path, got in _paths(getattr(sg, name), x).items():
                _assert_same(got, expected, path)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", BINARY)
def test_binary_edges_match_numpy(name, dtype):
    a, b = EDGES.astype(dtype), DIVISORS.astype(dtype)
    with np.errstate(all="ignore"):
        expected = getattr(np, name)(a, b)
        for path, got in _paths(getattr(sg, name), a, b).items():
            _assert_same(got, expected, path)
        for path, got in _paths(getattr(sg, name), np.zeros((0,), dtype), dtype(2.0)).items():
            assert got.shape == (0,) and got.dtype == dtype, path


@pytest.mark.parametrize("dtype", [np.int64, np.int32])
def test_integer_division_and_remainder_follow_numpy(dtype):
    """Floor division and the remainder of traced integers: by zero gives 0 (as NumPy, with no trap), the
    most negative value by -1 wraps, signs follow the divisor; a Python int argument drives % and // too."""
    info = np.iinfo(dtype)
    a = np.array([7, -7, 7, -7, 0, 5, info.min, info.min, 3, info.max], dtype)
    b = np.array([2, 2, -2, -2, 3, 0, -1, 2, -1, -3], dtype)
    with np.errstate(all="ignore"):
        for fn in (lambda x, y: x // y, lambda x, y: x % y, lambda x, y: divmod(x, y)[0], lambda x, y: 100 % x,
                   lambda x, y: x // 3, lambda x, y: -x % 4):
            expected = fn(a, b)
            for path in ("numpy", "llvm"):
                _assert_same(sg.compile(fn, backend=path)(a, b), expected, path)
            _assert_same(fn(sg.tensor(a), sg.tensor(b)).numpy(), expected, "tensor")


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
    for path, got in _paths(lambda a: sg.round(a, decimals), x).items():
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
    for path, got in _paths(sg.hypot, a, b).items():
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
    for path, got in _paths(fn, x).items():
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
    for path, got in _paths(fn, x).items():
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
    for path, got in _paths(fn, a, b).items():
        np.testing.assert_allclose(got, out.detach().numpy(), rtol=1e-6, err_msg=path)
    if name != "floor_divide":  # torch does not differentiate floor_divide; its derivative is 0 here
        out.sum().backward()
        for path, (_, (ga, gb)) in value_and_grad_everywhere(lambda x, y: sg.sum(fn(x, y)), (a, b), (0, 1)).items():
            np.testing.assert_allclose(ga, ta.grad.numpy(), rtol=1e-5, err_msg=path)
            np.testing.assert_allclose(gb, tb.grad.numpy(), rtol=1e-5, err_msg=path)
