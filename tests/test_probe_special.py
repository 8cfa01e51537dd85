"""Probes of sg.scipy.special / sg.scipy.stats at edge values and under vmap, against SciPy and JAX."""
import numpy as np
import pytest

import symgrad as sg

from gradcheck import values_everywhere

stats = pytest.importorskip("scipy.stats")
special = pytest.importorskip("scipy.special")


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_t_logpdf_keeps_its_digits_for_a_large_df(dtype):
    """The normalizer gammaln((df+1)/2) - gammaln(df/2) - log(pi df)/2 cancelled: df = 1e16 gave -19.2 (SciPy's
    -1.164, the normal's limit), df = 1e10 was off in the 7th digit. As -(betaln(df/2, 1/2) + log(df)/2) it is not."""
    df = np.array([0.3, 1.0, 3.0, 1e8, 1e10, 1e12, 1e16, 1e20, 1e300 if dtype == np.float64 else 1e30], dtype)
    want = stats.t.logpdf(0.7, df.astype(np.float64), 0.25, 1.5)
    for path, got in values_everywhere(lambda d: sg.scipy.stats.t.logpdf(0.7, d, 0.25, 1.5), df).items():
        np.testing.assert_allclose(got, want, rtol=1e-13 if dtype == np.float64 else 1e-6, err_msg=path)
    mp = pytest.importorskip("mpmath")  # its derivative of the exact formula (SciPy's differences lose digits)
    mp.mp.dps = 30

    def exact(d):
        return mp.loggamma((d + 1) / 2) - mp.loggamma(d / 2) - mp.log(mp.pi * d) / 2 - (d + 1) / 2 * mp.log1p(0.49 / d)
    points = (0.5, 3.0, 40.0)
    grad = sg.grad(lambda d: sg.sum(sg.scipy.stats.t.logpdf(0.7, d)))(np.array(points))
    np.testing.assert_allclose(grad, [float(mp.diff(exact, d)) for d in points], rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_t_at_infinite_df_is_the_normal(dtype):
    """t.logpdf/pdf at df = inf were NaN (inf - inf in the normalizer); SciPy gives the normal's. The gradient in x
    is the normal's and in df 0 (the limit), through the transform and both backends."""
    x = np.array([0.0, 1.5, -3.0, np.inf, np.nan], dtype)
    df = np.array([np.inf, np.inf, np.inf, np.inf, np.inf], dtype)
    for name in ("logpdf", "pdf", "cdf"):
        want = getattr(stats.t, name)(x.astype(np.float64), np.inf, 0.25, 1.5)
        fn = getattr(sg.scipy.stats.t, name)
        for path, got in values_everywhere(lambda a, d: fn(a, d, 0.25, 1.5), x, df).items():
            assert got.dtype == dtype, path
            np.testing.assert_allclose(got, want, rtol=1e-13 if dtype == np.float64 else 1e-6, err_msg=f"{name} {path}")
    grad = sg.grad(lambda a, d: sg.sum(sg.scipy.stats.t.logpdf(a, d, 0.25, 1.5)), argnums=(0, 1))
    for path, fn in (("grad", grad), ("numpy", sg.compile(grad, backend="numpy")), ("llvm", sg.compile(grad))):
        gx, gdf = fn(x[:3], df[:3])
        np.testing.assert_allclose(gx, -(x[:3] - 0.25) / 1.5 ** 2, rtol=1e-6, err_msg=path)
        np.testing.assert_array_equal(gdf, np.zeros(3, dtype), err_msg=path)

CONSTANT_SHAPES = {
    "gammainc": (lambda v: sg.scipy.special.gammainc(2.5, v), lambda v: special.gammainc(2.5, v)),
    "gammaincc": (lambda v: sg.scipy.special.gammaincc(2.5, v), lambda v: special.gammaincc(2.5, v)),
    "betainc": (lambda v: sg.scipy.special.betainc(2.5, 1.5, v / 4), lambda v: special.betainc(2.5, 1.5, v / 4)),
    "t.cdf": (lambda v: sg.scipy.stats.t.cdf(v, 3.0), lambda v: stats.t.cdf(v, 3.0)),
}


@pytest.mark.parametrize("name", CONSTANT_SHAPES)
def test_vmap_of_grad_in_x_of_incomplete_integrals(name):
    """vmap(grad(lambda v: gammainc(2.5, v))) on arrays was an internal AttributeError ('Symbol' has no attribute
    'argument_names'): vmap replayed the gradient's dead node, the derivative in the constant shape a, which has no
    closed form; and the error for that derivative had lost its function to the output symbol y."""
    f, reference = CONSTANT_SHAPES[name]
    x = np.array([0.5, 1.5, 2.5])
    eps = 1e-6
    want = (reference(x + eps) - reference(x - eps)) / (2 * eps)
    g = sg.vmap(sg.grad(f))
    for path, got in {"eager": g(x), "llvm": sg.compile(g)(x), "numpy": sg.compile(g, backend="numpy")(x)}.items():
        np.testing.assert_allclose(got, want, rtol=1e-7, err_msg=path)


def test_derivative_in_a_shape_parameter_is_a_clear_error():
    """A gradient that needs gammainc's derivative in a names it; under vmap too (it was an AttributeError)."""
    for fn in (sg.grad(lambda a: sg.scipy.special.gammainc(a, 1.5)),
               sg.vmap(sg.grad(lambda a: sg.scipy.special.gammainc(a, 1.5)))):
        with pytest.raises(sg.UnsupportedOpError, match=r"derivative of gammainc\(a, x\) in a"):
            fn(np.array([2.5, 3.0]) if isinstance(fn, type(sg.vmap(abs))) else 2.5)
