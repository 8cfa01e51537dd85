"""Numerically delicate functions stay finite and accurate at extreme inputs, value and gradient.

References are computed in 50-digit arithmetic with mpmath (a SymPy dependency), then rounded.
float64 inputs go up to |x| = 1e3 and float32 inputs up to |x| = 80: far past where a naive
exp overflows. Also: the NumPy backend's vectorized erf against math.erf.
"""
import math
import warnings

import mpmath
import numpy as np
import pytest

import symgrad as sg
from symgrad.ops import numpy_expressions
from gradcheck import value_and_grad_everywhere

mpmath.mp.dps = 50

RANGES = {np.float64: 1e3, np.float32: 80.0}
# float32 results go through exp of a rounded float32 logaddexp, so allow a few ulps there.
RTOL = {np.float64: 1e-12, np.float32: 3e-5}
TINY = {np.float64: 1e-300, np.float32: 1e-37}  # below this, underflow to 0 is the right answer


def grid(dtype):
    m = RANGES[dtype]
    return np.array([-m, -m / 2, -60, -30, -1, -1e-8, 0.0, 1e-8, 1, 30, 60, m / 2, m], dtype=dtype)


def mp_array(fn, xs):
    return np.array([float(fn(mpmath.mpf(float(v)))) for v in np.ravel(xs)]).reshape(np.shape(xs))


def assert_close(got, ref, dtype, atol=None):
    got = np.asarray(got)
    assert got.dtype == dtype
    finite_ref = np.isfinite(ref.astype(dtype))
    assert np.isfinite(got[finite_ref]).all(), f"inf/NaN where the true value is finite: {got}"
    atol = TINY[dtype] if atol is None else atol
    np.testing.assert_allclose(got.astype(np.float64), ref, rtol=RTOL[dtype], atol=atol)


def runners(fn):
    """Value and gradient of sum(fn(x)): through sg.compile(backend='numpy') and the plain transform."""
    total = lambda x: sg.sum(fn(x))  # noqa: E731
    return [("numpy", sg.compile(fn, backend="numpy"), sg.compile(sg.value_and_grad(total), backend="numpy")),
            ("default", None, sg.value_and_grad(total))]


def sigmoid(t):
    return 1 / (1 + mpmath.exp(-t))


UNARY = {
    # name: (symgrad fn, reference value, reference derivative, input filter)
    "sigmoid": (sg.sigmoid, sigmoid, lambda t: sigmoid(t) * sigmoid(-t), None),
    "softplus": (sg.softplus, lambda t: mpmath.log1p(mpmath.exp(t)), sigmoid, None),
    "log1p": (sg.log1p, mpmath.log1p, lambda t: 1 / (1 + t), np.abs),
    "expm1": (sg.expm1, mpmath.expm1, mpmath.exp, lambda x: np.minimum(x, 700 if x.dtype == np.float64 else 80)),
    "erf": (sg.erf, mpmath.erf, lambda t: 2 / mpmath.sqrt(mpmath.pi) * mpmath.exp(-t * t), None),
}


ACCURACY_CASES = sorted(UNARY)
# sigmoid' is s (1 - s), PyTorch's form (symgrad/ops/functions.py): where 1 - s rounds it is off by up to an ulp of 1
# times s, absolutely, not relatively (0 where the true value is s(-x) < eps); expm1' is y + 1, PyTorch's and JAX's
# form (it reads the output): off by below an ulp of 1 where y rounds near -1 (0 where exp(x) < eps / 2)
GRADIENT_ATOL = {"sigmoid": {np.float64: 2 ** -53, np.float32: 2 ** -24},
                 "expm1": {np.float64: 2 ** -53, np.float32: 2 ** -24}}


def _evaluate(name, dtype):
    fn, _, _, prepare = UNARY[name]
    x = grid(dtype)
    if prepare is not None:
        x = prepare(x).astype(dtype)
    results = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow/invalid warnings from the generated code either
        for label, forward, value_and_grad in runners(fn):
            value = forward(x) if forward is not None else None
            total, g = value_and_grad(x)
            results.append((label, value, total, g))
    return x, results


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_value_and_gradient_finite_at_extremes(name, dtype):
    x, results = _evaluate(name, dtype)
    for label, value, total, g in results:
        for got in (value, g):
            if got is not None:
                assert np.asarray(got).dtype == dtype, label
                assert np.isfinite(got).all(), f"{name} ({label}): inf/NaN at {x[~np.isfinite(got)]}"
        assert np.isfinite(total)


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("name", ACCURACY_CASES)
def test_unary_value_and_gradient_accurate_at_extremes(name, dtype):
    _, ref_value, ref_grad, _ = UNARY[name]
    x, results = _evaluate(name, dtype)
    for label, value, total, g in results:
        if value is not None:
            assert_close(value, mp_array(ref_value, x), dtype)
        assert_close(g, mp_array(ref_grad, x), dtype, GRADIENT_ATOL.get(name, TINY)[dtype])


def test_sigmoid_gradient_is_finite_and_small_for_large_inputs():
    # What holds today even with the cancellation above: bounded, non-negative, no NaN.
    x = np.array([-1e3, -40.0, 40.0, 1e3])
    _, g = sg.compile(sg.value_and_grad(lambda a: sg.sum(sg.sigmoid(a))), backend="numpy")(x)
    assert np.isfinite(g).all() and (g >= 0).all() and (g <= 1e-17).all()


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
def test_llvm_sigmoid_of_x_and_of_minus_x_and_its_gradient(dtype):
    """The LLVM backend computes sigmoid(x) and sigmoid(-x) from one exp(-|x|): both accurate at every x, and at
    0, -0, inf, -inf and NaN; the gradient as accurate as the other backend's."""
    x = np.concatenate([grid(dtype), np.linspace(-50, 50, 41)]).astype(dtype)
    both = sg.compile(lambda a: (sg.sigmoid(a), sg.sigmoid(-a)), backend="llvm")
    value, mirrored = both(x)
    assert_close(value, mp_array(sigmoid, x), dtype)
    assert_close(mirrored, mp_array(lambda t: sigmoid(-t), x), dtype)
    _, g = sg.compile(sg.value_and_grad(lambda a: sg.sum(sg.sigmoid(a))), backend="llvm")(x)
    assert_close(g, mp_array(lambda t: sigmoid(t) * sigmoid(-t), x), dtype, GRADIENT_ATOL["sigmoid"][dtype])
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan], dtype)
    value, mirrored = both(special)
    np.testing.assert_array_equal(value, np.array([0.5, 0.5, 1, 0, np.nan], dtype))
    np.testing.assert_array_equal(mirrored, np.array([0.5, 0.5, 0, 1, np.nan], dtype))


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
def test_logaddexp_value_and_gradients(dtype):
    x = grid(dtype)
    y = -x[::-1] * 0.5 + 3
    ref = np.array([float(mpmath.log(mpmath.exp(a) + mpmath.exp(b)))
                    for a, b in zip(map(mpmath.mpf, map(float, x)), map(mpmath.mpf, map(float, y)))])
    pairs = [(mpmath.mpf(float(a)), mpmath.mpf(float(b))) for a, b in zip(x, y)]
    wx = np.array([float(1 / (1 + mpmath.exp(b - a))) for a, b in pairs])  # d/da = exp(a - logaddexp(a, b))
    wy = np.array([float(1 / (1 + mpmath.exp(a - b))) for a, b in pairs])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_close(sg.compile(sg.logaddexp, backend="numpy")(x, y), ref, dtype)
        _, (gx, gy) = sg.compile(sg.value_and_grad(lambda a, b: sg.sum(sg.logaddexp(a, b)), argnums=(0, 1)),
                                 backend="numpy")(x, y)
    assert_close(gx, wx, dtype)
    assert_close(gy, wy, dtype)


def _mp_logsumexp(row):
    return mpmath.log(mpmath.fsum(mpmath.exp(mpmath.mpf(float(v))) for v in row))


def _rows(dtype):
    m = RANGES[dtype]
    return np.array([[m, m - 1, 0.0, -m], [-m, -m, -m + 2, -m], [m, m, m, m], [1.0, 2.0, 3.0, 4.0]], dtype=dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
def test_logsumexp_softmax_log_softmax_at_extremes(dtype):
    x = _rows(dtype)
    lse = np.array([float(_mp_logsumexp(r)) for r in x])
    soft = np.array([[float(mpmath.exp(mpmath.mpf(float(v)) - _mp_logsumexp(r))) for v in r] for r in x])
    log_soft = np.array([[float(mpmath.mpf(float(v)) - _mp_logsumexp(r)) for v in r] for r in x])
    weights = np.arange(1.0, 5.0, dtype=dtype)  # a cotangent that is not constant along the axis
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        value, g = sg.compile(sg.value_and_grad(lambda a: sg.sum(sg.logsumexp(a, axis=1))), backend="numpy")(x)
        assert_close(sg.compile(lambda a: sg.logsumexp(a, axis=1), backend="numpy")(x), lse, dtype)
        assert_close(g, soft, dtype)  # d logsumexp / dx = softmax
        assert_close(sg.compile(sg.softmax, backend="numpy")(x), soft, dtype)
        assert_close(sg.compile(sg.log_softmax, backend="numpy")(x), log_soft, dtype)
        _, g_soft = sg.compile(sg.value_and_grad(lambda a: sg.sum(sg.softmax(a) * weights)), backend="numpy")(x)
        _, g_log = sg.compile(sg.value_and_grad(lambda a: sg.sum(sg.log_softmax(a) * weights)), backend="numpy")(x)
        # closed forms: softmax vjp = s * (w - <w, s>); log_softmax vjp = w - s * sum(w)
        ref_soft = soft * (weights - (soft * weights).sum(axis=1, keepdims=True))
        ref_log = weights - soft * weights.sum()
    assert np.isfinite(g_soft).all() and np.isfinite(g_log).all()
    atol = 1e-12 if dtype == np.float64 else 1e-5
    np.testing.assert_allclose(g_soft, ref_soft, atol=atol)
    np.testing.assert_allclose(g_log, ref_log, atol=atol * 10)
    assert np.isfinite(value)


# ----------------------------------------------------------------------------- the NumPy backend's erf

@pytest.fixture(scope="module")
def helper_erf():
    return numpy_expressions._namespace({"_erf"})["_erf"]


def test_erf_helper_matches_math_erf_on_dense_grid(helper_erf):
    x = np.linspace(-10.0, 10.0, 400_001)
    ref = np.array([math.erf(v) for v in x])
    got = helper_erf(x)
    assert got.dtype == np.float64 and got.shape == x.shape
    rel = np.abs(got - ref) / np.maximum(np.abs(ref), np.finfo(float).tiny)
    assert rel.max() < 1e-15, f"max relative error {rel.max():.3g} at x={x[rel.argmax()]}"


def test_erf_helper_matches_mpmath_around_branch_points(helper_erf):
    x = np.concatenate([b + np.linspace(-1e-3, 1e-3, 201) for b in (0.46875, 4.0, -0.46875, -4.0)])
    x = np.concatenate([x, np.geomspace(1e-300, 1e-2, 50), -np.geomspace(1e-300, 1e-2, 50)])
    ref = mp_array(mpmath.erf, x)
    np.testing.assert_allclose(helper_erf(x), ref, rtol=1e-15, atol=0)


def test_erf_helper_extreme_values_and_dtypes(helper_erf):
    x = np.array([np.inf, -np.inf, 1e300, -1e300, 27.0, -27.0, 5e-324, -5e-324, 0.0, -0.0])
    got = helper_erf(x)
    np.testing.assert_array_equal(got[:6], [1, -1, 1, -1, 1, -1])
    assert got[6] > 0 and got[7] < 0  # erf(x) ~ 2x/sqrt(pi): sign kept even at the smallest subnormal
    assert got[8] == 0 and not np.signbit(got[8]) and np.signbit(got[9])
    assert np.isnan(helper_erf(np.array([np.nan, 1.0]))[0])
    x32 = np.linspace(-6, 6, 1001, dtype=np.float32)
    got32 = helper_erf(x32)
    assert got32.dtype == np.float32
    np.testing.assert_array_equal(got32, np.array([math.erf(v) for v in x32.astype(float)]).astype(np.float32))
    assert np.asarray(helper_erf(0.5)).dtype == np.float64
    assert np.isclose(helper_erf(0.5), math.erf(0.5), rtol=1e-15)
    assert helper_erf(np.arange(-3, 4)).dtype == np.float64  # integers compute in float64


def test_compiled_erf_source_is_standalone():
    compiled = sg.compile(sg.value_and_grad(lambda x: sg.sum(sg.erf(x))), backend="numpy")
    x = np.linspace(-5, 5, 11)
    source = compiled.lower(x).source
    assert "def _erf(x):" in source and "np.vectorize" not in source
    namespace = {}
    exec(source, namespace)  # the helper is inlined: the module defines _erf itself
    assert namespace["_erf"](np.array([1.0])) == pytest.approx(math.erf(1.0), rel=1e-15)


# ----------------------------------------------------------------------------- infinities, as PyTorch

INF = np.inf
# (row, logsumexp, its gradient): PyTorch's values, except that PyTorch gives 1 for each entry of
# the last row (exp(x - lse) with lse rounded to x); the softmax there is 1/2.
LOGSUMEXP_ROWS = [
    ([1.0, INF], INF, [0.0, np.nan]),
    ([-INF, -INF], -INF, [np.nan, np.nan]),  # a fully masked row
    ([INF, -INF], INF, [np.nan, 0.0]),
    ([-INF, 1.0], 1.0, [0.0, 1.0]),
    ([1e30, INF], INF, [0.0, np.nan]),  # exp(1e30 - inf) = 0, not exp(1e30) / inf
    ([1e30, 1e30], 1e30, [0.5, 0.5]),
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
def test_logsumexp_with_infinities(dtype):
    x = np.array([row for row, _, _ in LOGSUMEXP_ROWS], dtype=dtype)
    value = np.array([v for _, v, _ in LOGSUMEXP_ROWS], dtype=dtype)
    weights = np.arange(1.0, len(x) + 1, dtype=dtype)  # a different cotangent for each row
    grad = np.array([g for _, _, g in LOGSUMEXP_ROWS]) * weights[:, None]
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(sg.logsumexp(x, axis=1), value)
        np.testing.assert_array_equal(sg.compile(lambda a: sg.logsumexp(a, axis=1), backend="numpy")(x), value)
        np.testing.assert_array_equal(sg.compile(lambda a: sg.logsumexp(a, axis=1))(x), value)
        paths = value_and_grad_everywhere(lambda a: sg.sum(sg.logsumexp(a, axis=1) * weights), (x,))
        weighted = sg.scipy.special.logsumexp  # (its b=None path is sg.logsumexp; b given, its own sum)
        paths.update({"scipy b " + path: result for path, result in value_and_grad_everywhere(
            lambda a: sg.sum(weighted(a, axis=1, b=np.ones_like(x)) * weights), (x,), eager=False).items()})
    for path, (_, (g,)) in paths.items():
        assert g.dtype == dtype, path
        np.testing.assert_allclose(g, grad, rtol=1e-6, err_msg=path)  # NaN exactly where PyTorch has NaN


def test_logsumexp_with_infinities_matches_torch():
    torch = pytest.importorskip("torch")
    x = np.array([row for row, _, _ in LOGSUMEXP_ROWS[:-1]])
    t = torch.tensor(x, requires_grad=True)
    torch.logsumexp(t, 1).sum().backward()
    with np.errstate(all="ignore"):
        paths = value_and_grad_everywhere(lambda a: sg.sum(sg.logsumexp(a, axis=1)), (x,))
    for path, (value, (g,)) in paths.items():
        np.testing.assert_allclose(g, t.grad.numpy(), err_msg=path)


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
def test_logaddexp_of_equal_large_arguments_splits_the_gradient_evenly(dtype):
    for a in (1e30, 3e38, 1e300 if dtype == np.float64 else 1e38):
        x = np.array(a, dtype=dtype)
        for path, (value, (ga, gb)) in value_and_grad_everywhere(lambda p, q: sg.logaddexp(p, q), (x, x),
                                                                  (0, 1)).items():
            assert value == x and ga == gb == 0.5 and ga.dtype == dtype, (path, a, value, ga, gb)


def test_logaddexp_with_infinities_matches_torch():
    torch = pytest.importorskip("torch")
    a = np.array([1e30, 1.0, -INF, INF, -INF, 1e30])
    b = np.array([1e30, INF, 1.0, INF, -INF, -1e30])
    ta, tb = (torch.tensor(v, requires_grad=True) for v in (a, b))
    torch.logaddexp(ta, tb).sum().backward()
    with np.errstate(all="ignore"):
        paths = value_and_grad_everywhere(lambda p, q: sg.sum(sg.logaddexp(p, q)), (a, b), (0, 1))
    for path, (_, (ga, gb)) in paths.items():
        np.testing.assert_allclose(ga, ta.grad.numpy(), err_msg=path)
        np.testing.assert_allclose(gb, tb.grad.numpy(), err_msg=path)


@pytest.mark.parametrize("infinity", [INF, -INF])
def test_logaddexp_with_a_python_infinity(infinity):
    """An infinite Python number written into the compiled expression: d/dx logaddexp(x, inf) = sigmoid(x - inf),
    which SymPy folded to 0 (and to 1 for -inf) where IEEE (and PyTorch) gives NaN at x = inf (x = -inf)."""
    x = np.array([-2.0, 0.0, 1e30, INF, -INF])
    expected = [0.0, 0.0, 0.0, np.nan, 0.0] if infinity > 0 else [1.0, 1.0, 1.0, 1.0, np.nan]
    for f in (lambda a: sg.sum(sg.logaddexp(a, infinity)), lambda a: sg.sum(sg.logaddexp(infinity, a))):
        with np.errstate(all="ignore"):
            paths = value_and_grad_everywhere(f, (x,))
        for path, (_, (g,)) in paths.items():
            np.testing.assert_array_equal(g, expected, err_msg=path)
    torch = pytest.importorskip("torch")
    t = torch.tensor(x, requires_grad=True)
    torch.logaddexp(t, torch.tensor(infinity, dtype=t.dtype)).sum().backward()
    np.testing.assert_array_equal(t.grad.numpy(), expected)


def _through_sigmoid():
    """(name, f(lib, x, y)) of losses whose gradient divides by a rounded 1 - sigmoid(x) of the forward."""
    return [("log(1 - sigmoid)", lambda lib, x, y: lib.log(1 - lib.sigmoid(x)).sum()),
            ("bce(sigmoid)", lambda lib, x, y: lib.nn.functional.binary_cross_entropy(lib.sigmoid(x), y,
                                                                                       reduction="sum"))]


def _sigmoid_loss_data():
    rng = np.random.default_rng(3)
    x = np.concatenate([np.linspace(-16, 16, 65), rng.standard_normal(200) * 4]).astype(np.float32)
    y = (rng.random(x.shape) > 0.5).astype(np.float32)
    s = 1 / (1 + np.exp(-x.astype(np.float64)))
    return x, y, {"log(1 - sigmoid)": -s, "bce(sigmoid)": s - y}


def _eager_gradient(lib, f, x, y):
    xt = lib.tensor(x, requires_grad=True)
    f(lib, xt, lib.tensor(y)).backward()
    return xt.grad.numpy().astype(np.float64)


@pytest.mark.parametrize("how", ["eager", "traced"])
@pytest.mark.parametrize("name, f", _through_sigmoid(), ids=[n for n, _ in _through_sigmoid()])
def test_float32_gradient_through_one_minus_sigmoid_is_accurate(name, f, how):
    """sigmoid' = s (1 - s) cancels the forward's rounded 1 - s, as PyTorch's does: an error of a few float32 ulps
    of the gradient (PyTorch's is 1.8e-7 here), not s(-x)'s relative error of 1 - s (1e-2 at x = 16)."""
    x, y, exact = _sigmoid_loss_data()
    if how == "eager":
        g = _eager_gradient(sg, f, x, y)
    else:
        g = np.asarray(sg.grad(lambda a: f(sg, a, y))(x), np.float64)
    assert np.abs(g - exact[name]).max() < 3e-7


@pytest.mark.parametrize("name, f", _through_sigmoid(), ids=[n for n, _ in _through_sigmoid()])
def test_float32_gradient_through_one_minus_sigmoid_is_as_accurate_as_pytorchs(name, f):
    torch = pytest.importorskip("torch")
    x, y, exact = _sigmoid_loss_data()
    ours, theirs = (np.abs(_eager_gradient(lib, f, x, y) - exact[name]).max() for lib in (sg, torch))
    assert ours <= 1.5 * theirs
