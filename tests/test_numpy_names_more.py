"""NumPy's names added in issue 13 item 4 (continued): elementwise ops' edge points on every path, and array
functions' values against NumPy (eager arrays, both backends, eager tensors) with gradients checked by central
finite differences and, where PyTorch has the function, by PyTorch.

The elementwise ops are registered ops, so tests/test_ops.py generates their value and gradient tests too.
"""
from __future__ import annotations

import numpy as np
import pytest

import symgrad as sg

from gradcheck import value_and_grad_everywhere, values_everywhere

EDGES = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 0.5, -0.5, 1.5, 2.5, -2.5, 1.0, -7.3, 0.9999, 1e-300, 3e38,
                  27.0, -8.0])
OTHERS = np.array([0.1, 2.0, -2.0, 0.0, -0.0, np.inf, -np.inf, np.nan, 3.0, -1.5, 1.0, 0.1, 7.0, -0.3, 2.0, -0.0,
                   0.0])

UNARY = ["cbrt", "signbit", "isposinf", "isneginf", "positive", "fabs", "absolute", "degrees", "radians"]
BINARY = ["copysign", "fmax", "fmin", "fmod", "logaddexp2", "heaviside", "float_power", "pow"]


def _assert_same(got, expected, path, rtol=None):
    """Same shape, dtype and values: NaN where NaN, the sign of zeros too; float32 to a few ulp."""
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.shape == expected.shape and got.dtype == expected.dtype, (path, got.shape, expected.shape, got.dtype,
                                                                         expected.dtype)
    if got.dtype.kind != "f":
        np.testing.assert_array_equal(got, expected, err_msg=path)
        return
    if rtol is None:
        rtol = 2e-6 if got.dtype == np.float32 else 1e-15
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=0, err_msg=path)
    numbers = ~np.isnan(expected)
    np.testing.assert_array_equal(np.signbit(got[numbers]), np.signbit(expected[numbers]), err_msg=f"sign, {path}")


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", UNARY)
def test_unary_edges_match_numpy(name, dtype):
    with np.errstate(all="ignore"):
        for x in (EDGES.astype(dtype), np.zeros((0, 2), dtype), dtype(-8.0)):
            expected = getattr(np, name)(x)
            for path, got in values_everywhere(getattr(sg, name), x).items():
                _assert_same(got, expected, path)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", BINARY)
def test_binary_edges_match_numpy(name, dtype):
    # float32's logaddexp2 goes through logaddexp of a * ln 2: an ulp or two from NumPy's
    rtol = 5e-7 if dtype == np.float32 and name == "logaddexp2" else None
    with np.errstate(all="ignore"):
        for a, b in ((EDGES.astype(dtype), OTHERS.astype(dtype)), (np.zeros((0,), dtype), dtype(2.0)),
                     (dtype(-7.5), dtype(2.0))):
            expected = getattr(np, name)(a, b)
            for path, got in values_everywhere(getattr(sg, name), a, b).items():
                _assert_same(got, expected, path, rtol)


@pytest.mark.parametrize("dtype", [np.int64, np.int32])
def test_integer_fmod_fmax_fmin_follow_numpy(dtype):
    a = np.array([7, -7, 7, -7, 0, 5, 3], dtype)
    b = np.array([2, 2, -2, -2, 3, 0, 3], dtype)
    with np.errstate(all="ignore"):
        for name in ("fmod", "fmax", "fmin", "positive"):
            fn = getattr(sg, name)
            args = (a, b) if name != "positive" else (a,)
            expected = getattr(np, name)(*args)
            for path, got in values_everywhere(fn, *args).items():
                _assert_same(got, expected, path)


def test_fmax_and_fmin_ignore_nan_and_split_ties():
    a, b = np.array([np.nan, 1.0, 2.0, 3.0]), np.array([4.0, np.nan, 2.0, 1.0])
    for name, winner in (("fmax", [0, 1, None, 0]), ("fmin", [0, 1, None, 1])):
        expected_a = np.array([0.0, 1.0, 0.5, 1.0 if winner[3] == 0 else 0.0])
        expected_b = np.array([1.0, 0.0, 0.5, 0.0 if winner[3] == 0 else 1.0])
        for path, (_, (ga, gb)) in value_and_grad_everywhere(lambda x, y: sg.sum(getattr(sg, name)(x, y)),
                                                             (a, b), (0, 1)).items():
            np.testing.assert_array_equal(ga, expected_a, err_msg=f"{name} {path}")
            np.testing.assert_array_equal(gb, expected_b, err_msg=f"{name} {path}")


def test_fmod_is_exact_and_takes_the_dividends_sign():
    a = np.array([1e-20 - 1.0, -5.5, 5.5, 1e300, -0.0, 7.0])
    b = np.array([1.0, 2.0, -2.0, 3.0, 2.0, 0.0])
    with np.errstate(all="ignore"):
        for path, got in values_everywhere(sg.fmod, a, b).items():
            _assert_same(got, np.fmod(a, b), path)


def test_float_power_computes_in_float64():
    x = np.array([1.5, 2.0, 0.5], np.float32)
    for path, got in values_everywhere(lambda a: sg.float_power(a, 3), x).items():
        _assert_same(got, np.float_power(x, 3), path)
    assert sg.float_power(2, 3) == 8.0 and np.asarray(sg.float_power(2, 3)).dtype == np.float64


TORCH_BINARY = {"copysign": "copysign", "fmax": "fmax", "fmin": "fmin", "fmod": "fmod", "logaddexp2": "logaddexp2",
                "float_power": "float_power"}


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", sorted(TORCH_BINARY))
def test_binary_values_and_gradients_match_torch(name, dtype):
    torch = pytest.importorskip("torch")
    a = np.array([5.3, -2.2, 7.1, 0.5, -4.4, 1.25], dtype)
    b = np.array([2.0, 1.5, -3.0, 0.3, -0.7, -1.0], dtype)
    if name == "float_power":
        a = np.abs(a)
    ta, tb = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    out = getattr(torch, TORCH_BINARY[name])(ta, tb)
    fn = getattr(sg, name)
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    for path, got in values_everywhere(fn, a, b).items():
        np.testing.assert_allclose(got, out.detach().numpy(), rtol=rtol, err_msg=path)
    out.sum().backward()
    for path, (_, (ga, gb)) in value_and_grad_everywhere(lambda x, y: sg.sum(fn(x, y)), (a, b), (0, 1)).items():
        np.testing.assert_allclose(ga, ta.grad.numpy(), rtol=rtol, atol=1e-6, err_msg=path)
        np.testing.assert_allclose(gb, tb.grad.numpy(), rtol=rtol, atol=1e-6, err_msg=path)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_cbrt_and_heaviside_match_torch(dtype):
    torch = pytest.importorskip("torch")
    x = np.array([-8.0, -0.3, 0.7, 27.0, 2.5], dtype)
    t = torch.tensor(x, requires_grad=True)
    out = torch.sign(t) * torch.abs(t) ** (1 / 3)
    out.sum().backward()
    for path, (value, (g,)) in value_and_grad_everywhere(lambda a: sg.sum(sg.cbrt(a)), (x,)).items():
        np.testing.assert_allclose(value, out.sum().item(), rtol=1e-5, err_msg=path)
        np.testing.assert_allclose(g, t.grad.numpy(), rtol=1e-5, err_msg=path)
    h = np.array([-1.0, 0.0, 2.0], dtype)  # NaN: NumPy's and sg's NaN, torch's 0
    expected = torch.heaviside(torch.tensor(h), torch.tensor(np.array(0.25, dtype))).numpy()
    for path, got in values_everywhere(lambda a: sg.heaviside(a, 0.25), h).items():
        _assert_same(got, expected, path)
