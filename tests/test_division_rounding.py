"""A quotient by a Python number is NumPy's and PyTorch's division, on both backends and after pickling: SymPy
folded x / 49.0 into x * 0.0204..., which rounds otherwise (a compiled floor(49.0 / 49.0) was 0 and the mean of
49 ones 0.9999999999999999), and the LLVM printer wrote 3.0 / x as (1 / x) * 3.0."""
import pickle

import numpy as np
import pytest

import symgrad as sg

BACKENDS = ["llvm", "numpy"]
QUOTIENTS = [lambda a: a / 3.0, lambda a: a / 3, lambda a: -a / 3, lambda a: 2 * a / 3, lambda a: a / 255.0,
             lambda a: (a + 1) / 7.0, lambda a: 3.0 / a, lambda a: -10 / a, lambda a: a / 0.1, lambda a: 1e300 / a,
             lambda a: a / 2.0, lambda a: 1 / a, lambda a: a / np.float64(49.0)]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_quotients_by_numbers_round_as_numpy(backend, dtype):
    x = np.random.default_rng(0).normal(size=1000).astype(dtype)
    x = np.concatenate([x, np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, 1e308, 49.0], dtype)])
    with np.errstate(all="ignore"):
        for i, f in enumerate(QUOTIENTS):
            np.testing.assert_array_equal(sg.compile(f, backend=backend)(x), f(x), err_msg=f"quotient {i}")


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("divisor", [5e-324, 2.0 ** -1023, 2.0 ** -130, 2.0 ** -149, 2.0 ** 127, 2.0 ** 1000])
def test_a_power_of_two_whose_reciprocal_overflows_divides(backend, dtype, divisor):
    """Its reciprocal is not a float (x / 5e-324 was x * inf: NaN at 0, and a printed inf the NumPy backend lacked)."""
    x = np.array([0.0, -0.0, 5e-324, 1e-300, 1.0, -3.5, 1e300, np.inf, np.nan]).astype(dtype)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(sg.compile(lambda a: a / divisor, backend=backend)(x), x / divisor)


@pytest.mark.parametrize("backend", BACKENDS)
def test_floor_of_an_exact_quotient(backend):
    x = np.arange(1.0, 2000.0) * 49.0
    np.testing.assert_array_equal(sg.compile(lambda a: sg.floor(a / 49.0), backend=backend)(x), np.floor(x / 49.0))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("n", [3, 7, 49, 100, 1000])
def test_mean_and_var_of_equal_values(backend, n):
    """np.mean divides the sum by the count; so do sg.mean and sg.var, compiled or not."""
    x = np.full(n, 1.0)
    assert sg.mean(x) == np.mean(x) == 1.0
    assert sg.compile(sg.mean, backend=backend)(x) == 1.0
    assert sg.compile(lambda a: sg.mean(a * 3.0), backend=backend)(x) == np.mean(x * 3.0)
    y = np.random.default_rng(n).normal(size=n)
    assert sg.compile(sg.var, backend=backend)(y) == pytest.approx(np.var(y), rel=1e-15)


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradient_of_a_quotient(backend):
    """The divisor as a run-time operand keeps the derivative: d/dx (x / 3 + 5 / x) = 1/3 - 5/x**2."""
    x = np.array([0.5, 1.5, -2.0, 49.0])
    grad = sg.compile(sg.grad(lambda a: sg.sum(a / 3.0 + 5.0 / a)), backend=backend)(x)
    np.testing.assert_allclose(grad, 1 / 3.0 - 5.0 / x ** 2, rtol=1e-15)


def test_a_pickled_compiled_quotient_gives_the_same_bits():
    """The representation survives pickling (an unevaluated SymPy Pow(3.0, -1) would not: SymPy evaluates it
    again when the graph is loaded, and the unpickled function gave other bits)."""
    f = sg.compile(lambda a: sg.mean(a / 3.0))
    x = np.random.default_rng(1).normal(size=999)
    want = f(x)
    assert want == pytest.approx(np.mean(x / 3.0), rel=1e-14)  # (NumPy sums pairwise)
    assert pickle.loads(pickle.dumps(f))(x) == want


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("decimals", [1, 2, 3, -1])
def test_round_to_decimals_is_numpys(backend, decimals):
    """np.round(x, 1) divides the rounded x * 10 by 10: sg.round multiplied by 0.1, 1 ulp off for 35% of x
    (12.3 was 12.299999999999999), compiled or not."""
    x = np.random.default_rng(decimals + 5).normal(size=10000) * 100
    np.testing.assert_array_equal(sg.round(x, decimals), np.round(x, decimals))
    np.testing.assert_array_equal(sg.compile(lambda a: sg.round(a, decimals), backend=backend)(x),
                                  np.round(x, decimals))


def test_linspace_is_numpys():
    """np.linspace's step is the span divided by the count of divisions; sg.linspace multiplied by its reciprocal
    (65 of 600 random calls differed, by up to 4.5e-13), eager or compiled."""
    rng = np.random.default_rng(0)
    calls = []
    for _ in range(100):
        start, stop = rng.normal(size=2) * 10.0 ** rng.integers(-3, 4)
        calls.append((start, stop, int(rng.integers(0, 60)), bool(rng.integers(0, 2))))
    wants = [np.linspace(start, stop, num, endpoint=endpoint) for start, stop, num, endpoint in calls]
    for (start, stop, num, endpoint), want in zip(calls, wants):
        np.testing.assert_array_equal(sg.linspace(start, stop, num, endpoint=endpoint), want)
    # every call in one compiled function (one compile, not 100), each from its own traced 0-d start and stop
    compiled = sg.compile(lambda starts, stops: [sg.linspace(starts[k], stops[k], num, endpoint=endpoint)
                                                 for k, (_, _, num, endpoint) in enumerate(calls)])
    starts, stops = (np.array([call[j] for call in calls]) for j in (0, 1))
    for k, (got, want) in enumerate(zip(compiled(starts, stops), wants)):
        np.testing.assert_array_equal(got, want, err_msg=str(calls[k]))


def test_a_user_op_whose_builder_needs_its_number():
    """sg.elementwise keeps a Python number written in: a builder may convert it (int(k)), with or without a
    quotient (each failed with 'Cannot convert symbols to int' when the op was asked whether it divides)."""
    x = np.array([0.5, 1.5, -2.0])
    series = sg.elementwise("series_of_k", lambda a, k: sum(a ** i for i in range(int(k))) / k)
    power = sg.elementwise("power_of_k", lambda a, k: a ** int(k) + 1)
    np.testing.assert_allclose(series(x, 3), (1 + x + x ** 2) / 3, rtol=1e-15)
    np.testing.assert_allclose(sg.compile(lambda a: series(a, 3))(x), (1 + x + x ** 2) / 3, rtol=1e-15)
    np.testing.assert_allclose(sg.grad(lambda a: sg.sum(series(a, 3)))(x), (1 + 2 * x) / 3, rtol=1e-15)
    np.testing.assert_array_equal(power(x, 3), x ** 3 + 1)
