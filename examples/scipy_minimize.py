"""Minimize the N=10 Rosenbrock function with SciPy, using a symgrad gradient.

`sg.value_and_grad(f)` of a function of one flat array returns (value, gradient), which is
exactly what `scipy.optimize.minimize(..., jac=True)` expects.

Run: python examples/scipy_minimize.py
"""
import sys

import numpy as np

import symgrad as sg

try:
    from scipy.optimize import minimize
except ImportError:
    print("SciPy is not installed; `pip install scipy` to run this example.")
    sys.exit(0)


def rosen(x):
    """sum 100 (x[i+1] - x[i]^2)^2 + (1 - x[i])^2; minimum 0 at x = 1."""
    return sg.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


N = 10
x0 = np.full(N, -1.2)
x0[1::2] = 1.0  # the classic starting point (-1.2, 1, -1.2, 1, ...)

fun = sg.value_and_grad(rosen)  # traced and compiled on the first call, then reused
result = minimize(fun, x0, jac=True, method="L-BFGS-B", options={"gtol": 1e-10})

print(result.message)
print(f"success: {result.success}")
print(f"iterations: {result.nit}, function+gradient evaluations: {result.nfev}")
print(f"f(x*) = {result.fun:.3e}")
print(f"x* = {np.array2string(result.x, precision=6)}")
print(f"max |x* - 1| = {np.max(np.abs(result.x - 1)):.2e}")
assert result.success and np.allclose(result.x, 1.0, atol=1e-4)
