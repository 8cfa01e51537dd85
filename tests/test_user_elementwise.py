"""User elementwise ops (`sg.elementwise`) built on SymPy functions beyond symgrad's namespace.

Piecewise-constant functions (floor, ceiling, sign, Heaviside, and frac / Mod written with
floor) differentiate to 0 and lower on both backends.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest
import sympy

import symgrad as sg

from gradcheck import check_grads

BACKENDS = ["numpy", "llvm"]
EDGES = np.array([-2.5, -1.0, -0.0, 0.0, 0.5, 1.0, 2.5, np.inf, -np.inf, np.nan])
_fresh = itertools.count()


def fresh_name(base):
    """A name no other test registered (ops are global, and compiled code is cached by expression)."""
    return f"{base}_{next(_fresh)}"


def values_and_grads(op, x, backend):
    """(op(x), d sum(op(x)) / dx), compiled on `backend`."""
    value = sg.compile(lambda x: op(x), backend=backend)(x)
    grad = sg.compile(sg.grad(lambda x: sg.sum(op(x))), backend=backend)(x)
    return value, grad


# ----------------------------------------------------------------------------- piecewise-constant functions

PIECEWISE = {  # builder, NumPy value, NumPy derivative (where it exists)
    "floor": (sympy.floor, np.floor, np.zeros_like),
    "ceiling": (sympy.ceiling, np.ceil, np.zeros_like),
    "sign": (sympy.sign, np.sign, np.zeros_like),
    "heaviside": (sympy.Heaviside, lambda x: np.heaviside(x, 0.5), np.zeros_like),
    "frac": (sympy.frac, lambda x: x - np.floor(x), np.ones_like),
    "mod2": (lambda a: sympy.Mod(a, 2), lambda x: np.mod(x, 2), np.ones_like),
    "floor_chain": (lambda a: sympy.floor(a ** 2) * sympy.sin(a), lambda x: np.floor(x ** 2) * np.sin(x),
                    lambda x: np.floor(x ** 2) * np.cos(x)),
}


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", sorted(PIECEWISE))
def test_piecewise_constant_functions_lower_and_differentiate(case, backend, dtype):
    builder, value_of, derivative_of = PIECEWISE[case]
    op = sg.elementwise(fresh_name(case), builder)
    x = EDGES.astype(dtype)
    with np.errstate(invalid="ignore"):
        value, grad = values_and_grads(op, x, backend)
        expected = value_of(x)
        finite = np.isfinite(x)
        expected_grad = derivative_of(x)
    assert value.dtype == grad.dtype == dtype
    np.testing.assert_allclose(value, expected, rtol=1e-6, equal_nan=True)
    np.testing.assert_allclose(grad[finite], expected_grad[finite], rtol=1e-6)
    empty_value, empty_grad = values_and_grads(op, np.zeros(0, dtype), backend)
    assert empty_value.shape == empty_grad.shape == (0,) and empty_value.dtype == dtype


@pytest.mark.parametrize("case", sorted(PIECEWISE))
def test_piecewise_constant_gradients_match_finite_differences_between_jumps(case):
    builder, value_of, _ = PIECEWISE[case]
    op = sg.elementwise(fresh_name(case), builder)
    x = np.array([-2.2, -0.7, 0.3, 1.3, 2.9])  # no jump within eps of these
    check_grads(lambda x: sg.sum(op(x) * x), [x], rtol=1e-6, reference=lambda x: np.sum(value_of(x) * x))


def test_piecewise_constant_gradients_in_eager_mode():
    floor = sg.elementwise(fresh_name("floor"), sympy.floor)
    for dtype in (np.float64, np.float32):
        x = sg.tensor(np.array([-1.5, 0.0, 2.5], dtype), requires_grad=True)
        sg.sum(floor(x) * x).backward()
        np.testing.assert_allclose(x.grad.numpy(), np.floor([-1.5, 0.0, 2.5]))
        assert x.grad.numpy().dtype == dtype
