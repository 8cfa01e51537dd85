"""User elementwise ops (`sg.elementwise`) built on SymPy functions beyond symgrad's namespace.

Piecewise-constant functions (floor, ceiling, sign, Heaviside, and frac / Mod written with
floor) differentiate to 0 and lower on both backends; functions scipy.special evaluates
(loggamma, besselj, ...) run through SciPy on both backends (NumPy: its ufuncs; LLVM: its
C functions) when SciPy is installed; anything else, or those without SciPy, raises
`sg.UnsupportedOpError` naming the op, the SymPy function and the backend.
"""
from __future__ import annotations

import itertools
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import sympy

import symgrad as sg

from gradcheck import assert_grads_match_finite_differences, numeric_grad

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
    number = ~np.isnan(expected)  # and zeros keep NumPy's sign: sign(-0.0) is 0.0
    np.testing.assert_array_equal(np.signbit(value[number]), np.signbit(expected[number]))
    empty_value, empty_grad = values_and_grads(op, np.zeros(0, dtype), backend)
    assert empty_value.shape == empty_grad.shape == (0,) and empty_value.dtype == dtype


@pytest.mark.parametrize("case", sorted(PIECEWISE))
def test_piecewise_constant_gradients_match_finite_differences_between_jumps(case):
    builder, value_of, _ = PIECEWISE[case]
    op = sg.elementwise(fresh_name(case), builder)
    x = np.array([-2.2, -0.7, 0.3, 1.3, 2.9])  # no jump within eps of these
    assert_grads_match_finite_differences(lambda x: sg.sum(op(x) * x), [x], rtol=1e-6, reference=lambda x: np.sum(value_of(x) * x))


def test_piecewise_constant_gradients_in_eager_mode():
    floor = sg.elementwise(fresh_name("floor"), sympy.floor)
    for dtype in (np.float64, np.float32):
        x = sg.tensor(np.array([-1.5, 0.0, 2.5], dtype), requires_grad=True)
        sg.sum(floor(x) * x).backward()
        np.testing.assert_allclose(x.grad.numpy(), np.floor([-1.5, 0.0, 2.5]))
        assert x.grad.numpy().dtype == dtype


# ----------------------------------------------------------------------------- functions SciPy evaluates

def _special():
    return pytest.importorskip("scipy.special")


SCIPY_CASES = {  # builder, scipy value, scipy derivative, points where the function is smooth
    "loggamma": (sympy.loggamma, lambda s, x: s.gammaln(x), lambda s, x: s.psi(x), [0.3, 1.5, 4.0, -0.5, -2.7]),
    "gamma": (sympy.gamma, lambda s, x: s.gamma(x), lambda s, x: s.gamma(x) * s.psi(x), [0.3, 1.5, 4.0, -0.5]),
    "digamma": (sympy.digamma, lambda s, x: s.psi(x), lambda s, x: s.polygamma(1, x), [0.3, 1.5, 4.0, -0.5]),
    "erfc": (sympy.erfc, lambda s, x: s.erfc(x), lambda s, x: -2 * np.exp(-x * x) / np.sqrt(np.pi),
             [-2.0, -0.3, 0.0, 0.7, 3.0]),
    "erfinv": (sympy.erfinv, lambda s, x: s.erfinv(x), lambda s, x: np.sqrt(np.pi) / 2 * np.exp(s.erfinv(x) ** 2),
               [-0.9, -0.2, 0.0, 0.5, 0.95]),
    "erfcinv": (sympy.erfcinv, lambda s, x: s.erfcinv(x),
                lambda s, x: -np.sqrt(np.pi) / 2 * np.exp(s.erfcinv(x) ** 2), [0.1, 0.6, 1.0, 1.5, 1.9]),
    "besselj2": (lambda a: sympy.besselj(2, a), lambda s, x: s.jv(2, x), lambda s, x: (s.jv(1, x) - s.jv(3, x)) / 2,
                 [-3.0, -0.4, 0.0, 1.1, 7.5]),
    "bessely1": (lambda a: sympy.bessely(1, a), lambda s, x: s.yv(1, x), lambda s, x: (s.yv(0, x) - s.yv(2, x)) / 2,
                 [0.2, 1.1, 7.5]),
    "besseli0": (lambda a: sympy.besseli(0, a), lambda s, x: s.iv(0, x), lambda s, x: s.iv(1, x),
                 [-2.0, 0.0, 0.8, 5.0]),
    "besselk1": (lambda a: sympy.besselk(1, a), lambda s, x: s.kv(1, x), lambda s, x: -(s.kv(0, x) + s.kv(2, x)) / 2,
                 [0.2, 1.1, 7.5]),
    "Ei": (sympy.Ei, lambda s, x: s.expi(x), lambda s, x: np.exp(x) / x, [-3.0, -0.5, 0.4, 2.0]),
    "expint2": (lambda a: sympy.expint(2, a), lambda s, x: s.expn(2, x), lambda s, x: -s.expn(1, x), [0.2, 1.1, 4.0]),
}


def _points(case, dtype):
    return np.array(SCIPY_CASES[case][3], dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", sorted(SCIPY_CASES))
def test_scipy_functions_value_and_derivative(case, backend, dtype):
    special = _special()
    builder, value_of, derivative_of, _ = SCIPY_CASES[case]
    op = sg.elementwise(fresh_name(case), builder)
    x = _points(case, dtype)
    value, grad = values_and_grads(op, x, backend)
    x64 = x.astype(np.float64)
    tolerance = 1e-12 if dtype == np.float64 else 2e-6
    assert value.dtype == grad.dtype == dtype
    np.testing.assert_allclose(value, value_of(special, x64), rtol=tolerance, atol=tolerance)
    np.testing.assert_allclose(grad, derivative_of(special, x64), rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("case", sorted(SCIPY_CASES))
def test_scipy_function_gradients_match_finite_differences(case):
    special = _special()
    builder, value_of, _, _ = SCIPY_CASES[case]
    op = sg.elementwise(fresh_name(case), builder)
    x = _points(case, np.float64)
    reference = lambda x: np.sum(value_of(special, x) * x)  # noqa: E731
    assert_grads_match_finite_differences(lambda x: sg.sum(op(x) * x), [x], rtol=1e-6, reference=reference)  # LLVM, the default
    numpy_grad = sg.compile(sg.grad(lambda x: sg.sum(op(x) * x)), backend="numpy")(x)
    np.testing.assert_allclose(numpy_grad, numeric_grad(reference, [x], 0), rtol=1e-6)
    assert_grads_match_finite_differences(lambda x: sg.sum(op(x) * x), [x.astype(np.float32)], rtol=1e-4, atol=1e-5, reference=reference)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", sorted(SCIPY_CASES))
def test_scipy_functions_at_edge_points_match_scipy(case, backend):
    special = _special()
    builder, value_of, _, _ = SCIPY_CASES[case]
    op = sg.elementwise(fresh_name(case), builder)
    for dtype in (np.float64, np.float32):
        x = EDGES.astype(dtype)
        with np.errstate(all="ignore"):
            expected = value_of(special, x.astype(np.float64)).astype(dtype)
            value = sg.compile(lambda x: op(x), backend=backend)(x)
        np.testing.assert_allclose(value, expected, rtol=2e-6, equal_nan=True)
        assert sg.compile(lambda x: op(x), backend=backend)(np.zeros((0, 3), dtype)).shape == (0, 3)


def test_two_argument_scipy_function_and_backend_parity():
    special = _special()
    beta = sg.elementwise(fresh_name("beta"), lambda a, b: sympy.beta(a, b))
    a, b = np.array([0.5, 1.5, 3.0]), np.array([2.0, 0.7, 1.2])
    f = lambda a, b: sg.sum(beta(a, b))  # noqa: E731
    results = [sg.compile(sg.value_and_grad(f, argnums=(0, 1)), backend=backend)(a, b) for backend in BACKENDS]
    np.testing.assert_allclose(results[0][0], np.sum(special.beta(a, b)), rtol=1e-12)
    for (value, (da, db)), other in zip(results, results[::-1]):
        np.testing.assert_allclose(value, other[0], rtol=1e-13)
        np.testing.assert_allclose(da, special.beta(a, b) * (special.psi(a) - special.psi(a + b)), rtol=1e-12)
        np.testing.assert_allclose(db, special.beta(a, b) * (special.psi(b) - special.psi(a + b)), rtol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_hurwitz_zeta_of_two_arrays(backend):
    special = _special()
    zeta = sg.elementwise(fresh_name("zeta"), lambda s, q: sympy.zeta(s, q))
    s = np.array([2.5, 3.0, 1.0, 0.5, 4.0, 2.0, 7.25])
    q = np.array([1.5, 0.2, 2.0, 1.0, -1.5, -2.0, 1e6])
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(sg.compile(lambda s, q: zeta(s, q), backend=backend)(s, q), special.zeta(s, q),
                                   rtol=1e-13, equal_nan=True)
    q = np.array([0.3, 2.0, 40.0])
    grad = sg.compile(sg.grad(lambda q: sg.sum(zeta(2.5, q))), backend=backend)(q)  # d/dq = -s zeta(s + 1, q)
    np.testing.assert_allclose(grad, -2.5 * special.zeta(3.5, q), rtol=1e-13)


def test_scipy_functions_in_eager_mode():
    special = _special()
    loggamma = sg.elementwise(fresh_name("loggamma"), sympy.loggamma)
    x = sg.tensor([0.5, 2.5, 7.0], requires_grad=True)
    y = sg.sum(loggamma(x))
    y.backward()
    np.testing.assert_allclose(y.item(), np.sum(special.gammaln([0.5, 2.5, 7.0])), rtol=1e-13)
    np.testing.assert_allclose(x.grad.numpy(), special.psi([0.5, 2.5, 7.0]), rtol=1e-13)
    np.testing.assert_allclose(loggamma(np.array([0.5, 2.5])), special.gammaln([0.5, 2.5]), rtol=1e-13)


@pytest.mark.parametrize("backend", BACKENDS)
def test_polygamma_of_every_order_and_second_derivatives(backend):
    """Orders >= 1 are Hurwitz zetas: scipy.special.zeta on NumPy, symgrad's native kernel on LLVM."""
    special = _special()
    x = np.array([1e-3, 0.3, 1.0, 1.7, 9.5, 30.0, 1e5, 1e9, -0.5, -2.25, -999.5, -3.0, 0.0, np.inf, -np.inf, np.nan])
    for order in (1, 2, 5):
        op = sg.elementwise(fresh_name("polygamma"), lambda a, order=order: sympy.polygamma(order, a))
        with np.errstate(all="ignore"):
            np.testing.assert_allclose(sg.compile(lambda x: op(x), backend=backend)(x), special.polygamma(order, x),
                                       rtol=1e-13, equal_nan=True)
    loggamma = sg.elementwise(fresh_name("loggamma"), sympy.loggamma)
    second = sg.compile(sg.grad(sg.grad(lambda x: loggamma(x))), backend=backend)
    np.testing.assert_allclose(second(np.float64(1.7)), special.polygamma(1, 1.7), rtol=1e-13)
    hessian = sg.compile(sg.hessian(lambda x: sg.sum(loggamma(x))), backend=backend)(np.array([0.5, 4.0]))
    np.testing.assert_allclose(hessian, np.diag(special.polygamma(1, [0.5, 4.0])), rtol=1e-13)


def test_llvm_object_cache_holds_symbol_names_not_addresses(tmp_path):
    """Code calling SciPy is cached on disk; another process links it to its own SciPy."""
    _special()
    script = textwrap.dedent("""
        import numpy as np, sympy, symgrad as sg, scipy.special as s
        op = sg.elementwise("cached_loggamma", sympy.loggamma)
        x = np.array([0.5, 2.5, 7.0])
        g = sg.compile(sg.value_and_grad(lambda x: sg.sum(op(x))))
        value, grad = g(x)
        assert np.allclose(value, s.gammaln(x).sum(), rtol=1e-13) and np.allclose(grad, s.psi(x), rtol=1e-13)
        assert "symgrad_scipy_psi" in g.lower(x).as_text()
    """)
    env = {**os.environ, "SYMGRAD_CACHE_DIR": str(tmp_path)}
    for _ in range(2):  # the second run loads the first one's object code
        subprocess.run([sys.executable, "-c", script], check=True, env=env)
    assert list((tmp_path / "llvm").glob("*.o"))


# ----------------------------------------------------------------------------- clear errors

def _raises_for_every_path(op, x, *patterns):
    """op applied through sg.compile on both backends, sg.value_and_grad and eager tensors raises UnsupportedOpError
    (sg.grad alone may need only the derivative, e.g. fresnels' = sin(pi x**2 / 2), and then runs)."""
    calls = {
        "NumPy": [lambda: sg.compile(lambda x: op(x), backend="numpy")(x), lambda: op(x)],
        "LLVM": [lambda: sg.compile(lambda x: op(x))(x), lambda: sg.value_and_grad(lambda x: sg.sum(op(x)))(x)],
    }
    for backend, backend_calls in calls.items():
        for call in backend_calls:
            with pytest.raises(sg.UnsupportedOpError) as info:
                call()
            message = str(info.value)
            assert f"{backend} backend" in message and repr(op.name) in message, message
            for pattern in patterns:
                assert pattern in message, message
    with pytest.raises(sg.UnsupportedOpError, match=repr(op.name)):
        op(sg.tensor(x, requires_grad=True))


@pytest.mark.parametrize("function, builder", [
    ("LambertW", sympy.LambertW),
    ("hyper", lambda a: sympy.hyper([1], [2], a)),  # its arguments are no numbers either
    ("fresnels", sympy.fresnels),
])
def test_a_function_no_backend_lowers_is_one_clear_error(function, builder):
    op = sg.elementwise(fresh_name(function.lower()), builder)
    assert issubclass(sg.UnsupportedOpError, TypeError)
    assert not issubclass(sg.UnsupportedOpError, NotImplementedError)
    _raises_for_every_path(op, np.array([0.5, 1.0]), function, "Write the op with functions symgrad lowers")


def test_a_derivative_sympy_does_not_know_is_the_same_error_type():
    """besselj's derivative in its order is unknown to SymPy; a Python number as order is a constant."""
    special = _special()
    bessel = sg.elementwise(fresh_name("besselj"), lambda nu, x: sympy.besselj(nu, x))
    x = np.array([0.5, 2.0])
    with pytest.raises(sg.UnsupportedOpError, match=f"{bessel.name!r}.*unevaluated derivative.*as Python numbers"):
        sg.grad(lambda nu, x: sg.sum(bessel(nu, x)))(np.ones(2), x)
    expected = (special.jv(0, x) - special.jv(2, x)) / 2
    np.testing.assert_allclose(sg.grad(lambda x: sg.sum(bessel(1.0, x)))(x), expected, rtol=1e-13)
    np.testing.assert_allclose(sg.jacobian(lambda x: bessel(1, x))(x), np.diag(expected), rtol=1e-13)
    tensor = sg.tensor(x, requires_grad=True)  # eager: the number stays a constant of the expression too
    sg.sum(bessel(1, tensor)).backward()
    np.testing.assert_allclose(tensor.grad.numpy(), expected, rtol=1e-13)


def test_without_scipy_a_scipy_function_names_the_missing_dependency(monkeypatch):
    for module in ("scipy", "scipy.special", "scipy.special.cython_special"):
        monkeypatch.setitem(sys.modules, module, None)  # `import scipy.special` now raises ImportError
    # A fresh expression, so no compiled code cached by an earlier test is reused (a factor of 1 would leave
    # loggamma(a) itself, which library ops compile: the counter starts at 0 in each worker).
    factor = 2 + next(_fresh)
    loggamma = sg.elementwise(fresh_name("loggamma"), lambda a: sympy.loggamma(a) * factor)
    _raises_for_every_path(loggamma, np.array([0.5, 1.0]), "loggamma", "pip install scipy")


def test_a_user_op_cannot_take_the_name_of_a_library_op_but_can_be_redefined():
    with pytest.raises(ValueError, match="'subtract' names symgrad's own sg.subtract"):
        sg.elementwise("subtract", lambda a: a)
    assert sg.subtract(3.0, 1.0) == 2.0
    first = sg.elementwise("redefined_test", lambda x: 2 * x)
    second = sg.elementwise("redefined_test", lambda x: 3 * x)
    assert float(first(1.0)) == 2.0 and float(second(1.0)) == 3.0


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_undefined_function_named_like_a_known_one_is_not_lowered_as_it(backend):
    """Backends look SymPy functions up by class: an undefined sympy.Function('exp') is not sympy.exp."""
    op = sg.elementwise("undefined_exp_test", lambda x: sympy.Function("exp")(x))
    with pytest.raises(sg.UnsupportedOpError, match="SymPy function exp"):
        sg.compile(lambda x: op(x), backend=backend)(np.ones(2))
