"""The NumPy backend prints a product with repeated factors as written: SymPy's cse takes an unevaluated product's
factors as a set, after flattening a product nested in it, so a repeated factor could be printed once (the gradient
of where(x != 0, 1.0 / x, 0) was -1.0 / x, of the wrong sign at x < 0)."""
import numpy as np
import pytest
import sympy as sp

import symgrad as sg
from symgrad.ops.numpy_expressions import elementwise_function

POINTS = np.array([-1.0, 4.0, 0.0, -0.5, 3.0])


@pytest.mark.parametrize("numerator", [1.0, np.float64(1.0), 2.5, np.float64(-3.0)])
def test_gradient_of_a_masked_reciprocal(numerator):
    g = sg.grad(lambda a: sg.sum(sg.where(a != 0, numerator / a, 0.0)))
    safe = np.where(POINTS != 0, POINTS, 1.0)
    want = np.where(POINTS != 0, -float(numerator) / safe ** 2, 0.0)
    np.testing.assert_allclose(g(POINTS), want, rtol=1e-15)
    for backend in ("llvm", "numpy"):
        np.testing.assert_allclose(sg.compile(g, backend=backend)(POINTS), want, rtol=1e-15)


def test_nested_products_with_repeated_factors():
    x, c = sp.symbols("x c", real=True)
    with sp.evaluate(False):
        nested = [sp.Mul(-1, c, sp.Mul(c, sp.Pow(x, -1)), sp.Pow(x, -1)),
                  sp.Mul(x, sp.Mul(x, sp.Mul(x, c))),
                  sp.Add(x, sp.Add(x, sp.Mul(c, x)), c)]
    values = {x: np.array([-1.5, 2.0, 7.0]), c: np.array([3.0, -0.25, 2.0])}
    for expr in nested:
        want = sp.lambdify((x, c), expr, "numpy")(values[x], values[c])
        got = elementwise_function(expr, (x, c), np.dtype(np.float64))(values[x], values[c])
        np.testing.assert_allclose(got, want, rtol=1e-15, err_msg=str(expr))



def test_a_rolled_loop_whose_merged_powers_repeat():
    """a, b = 0.5 * b * c, a for 23 steps (test_reroll's hypothesis found it): merging the repeats of the compiled
    loop's product made 0.5**2 twice among its factors, and cse printed it once (the result lost a factor 2**-2)."""
    def f(a, b, c):
        for _ in range(23):
            a, b = b * c * 0.5, a
        return a + b * 2.0 + c * 3.0

    base = np.linspace(0.1, 0.5, 3)
    args = (base, -base, 2 * base)
    np.testing.assert_allclose(sg.compile(f, backend="numpy")(*args), f(*args), rtol=1e-12, atol=1e-14)
