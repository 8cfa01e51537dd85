"""sg.scipy.stats: values against scipy.stats on every path (eager arrays, both backends, eager tensors) in
float32 and float64, gradients against finite differences of SciPy's function and against
torch.distributions, and SciPy's values off the support (-inf, 0) and for invalid parameters (NaN)."""
from __future__ import annotations

import numpy as np
import pytest

import symgrad as sg
from symgrad.scipy import stats as S

from gradcheck import assert_grads_match_finite_differences, value_and_grad_everywhere, values_everywhere

stats = pytest.importorskip("scipy.stats")

BACKENDS = ("numpy", "llvm")
R = np.random.default_rng(11)
X = R.normal(size=4)
LOC = R.normal(size=4)
SCALE = R.uniform(0.5, 2.0, 4)
POSITIVE = R.uniform(0.5, 3.0, 4)
UNIT = R.uniform(0.1, 0.9, 4)
SIMPLEX = np.array([[0.25, 0.125], [0.25, 0.375], [0.5, 0.5]])  # components along axis 0, as SciPy; exact in float32
ALPHA = np.array([1.5, 2.0, 3.0])
COUNTS = np.array([0.0, 1.0, 3.0, 7.0])
BITS = np.array([0.0, 1.0, 1.0, 0.0])
COV = np.array([[2.0, 0.5, 0.1], [0.5, 1.0, 0.2], [0.1, 0.2, 0.7]])
POINTS, MEAN = R.normal(size=(4, 3)), R.normal(size=3)

# (id, symgrad function, SciPy function, arguments, the arguments to differentiate, torch value or None)
CASES = [
    ("norm.logpdf", S.norm.logpdf, stats.norm.logpdf, (X, LOC, SCALE), (0, 1, 2),
     lambda torch, x, loc, scale: torch.distributions.Normal(loc, scale).log_prob(x)),
    ("norm.pdf", S.norm.pdf, stats.norm.pdf, (X, LOC, SCALE), (0, 1, 2),
     lambda torch, x, loc, scale: torch.distributions.Normal(loc, scale).log_prob(x).exp()),
    ("norm.cdf", S.norm.cdf, stats.norm.cdf, (X, LOC, SCALE), (0, 1, 2),
     lambda torch, x, loc, scale: torch.distributions.Normal(loc, scale).cdf(x)),
    ("norm.logcdf", S.norm.logcdf, stats.norm.logcdf, (X, LOC, SCALE), (0, 1, 2),
     lambda torch, x, loc, scale: torch.special.log_ndtr((x - loc) / scale)),
    ("norm.sf", S.norm.sf, stats.norm.sf, (X, LOC, SCALE), (0, 1, 2), None),
    ("norm.logsf", S.norm.logsf, stats.norm.logsf, (X, LOC, SCALE), (0, 1, 2), None),
    ("norm.ppf", S.norm.ppf, stats.norm.ppf, (UNIT, LOC, SCALE), (0, 1, 2),
     lambda torch, q, loc, scale: torch.distributions.Normal(loc, scale).icdf(q)),
    ("t.logpdf", S.t.logpdf, stats.t.logpdf, (X, POSITIVE, LOC, SCALE), (0, 1, 2, 3),
     lambda torch, x, df, loc, scale: torch.distributions.StudentT(df, loc, scale).log_prob(x)),
    ("t.pdf", S.t.pdf, stats.t.pdf, (X, POSITIVE, LOC, SCALE), (0, 1, 2, 3),
     lambda torch, x, df, loc, scale: torch.distributions.StudentT(df, loc, scale).log_prob(x).exp()),
    ("gamma.logpdf", S.gamma.logpdf, stats.gamma.logpdf, (POSITIVE, UNIT * 3, np.zeros(4), SCALE), (0, 1, 3),
     lambda torch, x, a, loc, scale: torch.distributions.Gamma(a, 1 / scale).log_prob(x)),
    ("gamma.pdf", S.gamma.pdf, stats.gamma.pdf, (POSITIVE, UNIT * 3, LOC - 1.5, SCALE), (0, 1, 2, 3), None),
    ("beta.logpdf", S.beta.logpdf, stats.beta.logpdf, (UNIT, POSITIVE, SCALE), (0, 1, 2),
     lambda torch, x, a, b: torch.distributions.Beta(a, b).log_prob(x)),
    ("beta.pdf-loc-scale", S.beta.pdf, stats.beta.pdf, (UNIT * 2 - 1, POSITIVE, SCALE, -np.ones(4), 2 * np.ones(4)),
     (0, 1, 2, 3, 4), None),
    ("poisson.logpmf", S.poisson.logpmf, stats.poisson.logpmf, (COUNTS, POSITIVE), (1,),
     lambda torch, k, mu: torch.distributions.Poisson(mu).log_prob(k)),
    ("poisson.pmf", S.poisson.pmf, stats.poisson.pmf, (COUNTS, POSITIVE), (1,), None),
    ("bernoulli.logpmf", S.bernoulli.logpmf, stats.bernoulli.logpmf, (BITS, UNIT), (1,),
     lambda torch, k, p: torch.distributions.Bernoulli(probs=p).log_prob(k)),
    ("bernoulli.pmf", S.bernoulli.pmf, stats.bernoulli.pmf, (BITS, UNIT), (1,), None),
    ("bernoulli.cdf", S.bernoulli.cdf, stats.bernoulli.cdf, (np.array([-1.0, 0.0, 0.5, 1.0]), UNIT), (1,), None),
    ("bernoulli.logcdf", S.bernoulli.logcdf, stats.bernoulli.logcdf, (np.array([0.0, 0.5, 1.0, 2.0]), UNIT), (1,),
     None),
    ("dirichlet.logpdf", S.dirichlet.logpdf, stats.dirichlet.logpdf, (SIMPLEX, ALPHA), (1,),
     lambda torch, x, alpha: torch.distributions.Dirichlet(alpha, validate_args=False).log_prob(x.T)),
    ("dirichlet.pdf", S.dirichlet.pdf, stats.dirichlet.pdf, (SIMPLEX[:, 0], ALPHA), (1,), None),
    # cdfs of shape families: differentiable in the data, loc and scale (and mu), not in the shapes
    ("t.cdf", S.t.cdf, stats.t.cdf, (X, POSITIVE, LOC, SCALE), (0, 2, 3), None),
    ("t.logcdf", S.t.logcdf, stats.t.logcdf, (X, POSITIVE), (0,), None),
    ("gamma.cdf", S.gamma.cdf, stats.gamma.cdf, (POSITIVE, UNIT * 3, np.zeros(4), SCALE), (0, 2, 3),
     lambda torch, x, a, loc, scale: torch.special.gammainc(a, (x - loc) / scale)),
    ("gamma.logcdf", S.gamma.logcdf, stats.gamma.logcdf, (POSITIVE, UNIT * 3), (0,), None),
    ("gamma.logcdf-upper", S.gamma.logcdf, stats.gamma.logcdf, (np.array([0.2, 1.0, 4.0, 9.0]), UNIT * 3, -LOC * 0.1,
                                                                 SCALE), (0, 2, 3), None),
    ("beta.cdf", S.beta.cdf, stats.beta.cdf, (UNIT, POSITIVE, SCALE), (0,), None),
    ("beta.logcdf-loc-scale", S.beta.logcdf, stats.beta.logcdf, (UNIT * 2 - 1, POSITIVE, SCALE, -np.ones(4),
                                                                  2 * np.ones(4)), (0, 3, 4), None),
    ("poisson.cdf", S.poisson.cdf, stats.poisson.cdf, (COUNTS + 0.5, POSITIVE), (1,), None),
    ("poisson.logcdf", S.poisson.logcdf, stats.poisson.logcdf, (COUNTS, POSITIVE, -np.ones(4)), (1,), None),
    ("multivariate_normal.logpdf", lambda x, m: S.multivariate_normal.logpdf(x, m, COV),
     lambda x, m: stats.multivariate_normal.logpdf(x, m, COV), (POINTS, MEAN), (0, 1),
     lambda torch, x, m: torch.distributions.MultivariateNormal(m, torch.tensor(COV, dtype=m.dtype)).log_prob(x)),
    ("multivariate_normal.pdf", lambda x, m: S.multivariate_normal.pdf(x, mean=m, cov=COV),
     lambda x, m: stats.multivariate_normal.pdf(x, mean=m, cov=COV), (POINTS[0], MEAN), (0, 1), None),
]
IDS = [case[0] for case in CASES]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_values_match_scipy_on_every_path(case, dtype):
    _, ours, theirs, args, _, _ = case
    args = [a.astype(dtype) for a in args]
    expected = theirs(*[a.astype(np.float64) for a in args])
    for path, got in values_everywhere(ours, *args).items():
        assert np.shape(got) == np.shape(expected) and np.asarray(got).dtype == dtype, path
        np.testing.assert_allclose(np.asarray(got, np.float64), expected, rtol=1e-12 if dtype == np.float64 else 2e-5,
                                   atol=1e-300, err_msg=path)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_gradients_match_finite_differences_of_scipy(case):
    _, ours, theirs, args, argnums, _ = case
    weights = np.random.default_rng(3).normal(size=np.shape(theirs(*args)))
    assert_grads_match_finite_differences(lambda *a: sg.sum(ours(*a) * weights), args, argnums, rtol=1e-6, atol=1e-9,
                                          reference=lambda *a: np.sum(theirs(*a) * weights))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("case", [c for c in CASES if c[5] is not None], ids=[c[0] for c in CASES if c[5] is not None])
def test_values_and_gradients_match_torch(case, dtype):
    torch = pytest.importorskip("torch")
    _, ours, _, args, argnums, theirs = case
    args = [a.astype(dtype) for a in args]
    tensors = [torch.tensor(a, requires_grad=i in argnums) for i, a in enumerate(args)]
    expected = theirs(torch, *tensors).sum()
    expected.backward()
    rtol = 1e-10 if dtype == np.float64 else 1e-4
    for path, (value, grads) in value_and_grad_everywhere(lambda *a: sg.sum(ours(*a)), args, argnums).items():
        np.testing.assert_allclose(value, expected.item(), rtol=rtol, err_msg=path)
        for n, g in zip(argnums, grads):
            np.testing.assert_allclose(g, tensors[n].grad.numpy(), rtol=rtol, atol=1e-12 if dtype == np.float64 else 1e-5,
                                       err_msg=f"argument {n}, {path}")


# (id, symgrad function, SciPy function, arguments): off the support, at its ends, invalid parameters
EDGES = [
    ("norm", S.norm.logpdf, stats.norm.logpdf, (np.array([-np.inf, 0.0, np.inf, 1.0, 1.0, np.nan]), 0.0,
                                                np.array([1.0, 1.0, 1.0, 0.0, -1.0, 1.0]))),
    ("norm.cdf", S.norm.cdf, stats.norm.cdf, (np.array([-np.inf, -40.0, 40.0, np.inf, 1.0]), 0.0,
                                               np.array([1.0, 1.0, 1.0, 1.0, -2.0]))),
    ("norm.logcdf", S.norm.logcdf, stats.norm.logcdf, (np.array([-np.inf, -1e4, -40.0, 0.0, 40.0, np.inf]),)),
    ("norm.ppf", S.norm.ppf, stats.norm.ppf, (np.array([0.0, 1e-300, 0.5, 1.0, 1.5]),)),
    ("t", S.t.logpdf, stats.t.logpdf, (np.array([0.0, 1e10, np.inf, 1.0, 1.0]), np.array([1.0, 3.0, 2.0, 0.0, -1.0]))),
    ("gamma", S.gamma.logpdf, stats.gamma.logpdf, (np.array([-1.0, 0.0, 0.0, 0.0, 1.0, np.inf, 1.0, np.nan]),
                                                    np.array([1.0, 1.0, 2.0, 0.5, 0.0, 2.0, -1.0, 2.0]))),
    ("beta", S.beta.logpdf, stats.beta.logpdf, (np.array([-0.5, 0.0, 1.0, 0.0, 1.0, 1.5, 0.5, 0.5, np.nan]),
                                                 np.array([1.0, 1.0, 1.0, 2.0, 3.0, 2.0, 0.0, 2.0, 2.0]),
                                                 np.array([1.0, 1.0, 1.0, 2.0, 0.5, 2.0, 1.0, -1.0, 2.0]))),
    # (k = inf is -inf here, the log of its probability 0; SciPy computes inf - inf = NaN)
    ("poisson", S.poisson.logpmf, stats.poisson.logpmf, (np.array([0.0, 1.5, -1.0, 3.0, 0.0, 2.0, 1.0, np.nan]),
                                                          np.array([0.0, 2.0, 2.0, 0.0, 2.0, -1.0, np.inf, 2.0]))),
    ("bernoulli", S.bernoulli.logpmf, stats.bernoulli.logpmf, (np.array([0.0, 1.0, 2.0, 0.5, 0.0, 1.0, 1.0, -1.0, np.nan]),
                                                                np.array([0.0, 0.0, 0.3, 0.3, 1.0, 1.0, 1.5, 0.3, 0.3]))),
    ("bernoulli.cdf", S.bernoulli.cdf, stats.bernoulli.cdf, (np.array([-np.inf, 0.0, 0.99, 1.0, np.inf, 0.5, np.nan]),
                                                              np.array([0.3, 0.3, 0.3, 0.3, 0.3, -0.1, 0.3]))),
    ("bernoulli.logcdf", S.bernoulli.logcdf, stats.bernoulli.logcdf, (np.array([-1.0, 0.0, 0.5, 1.0, np.nan]),
                                                                       np.array([0.3, 1.0, 0.0, 0.3, 0.3]))),
    ("gamma.cdf", S.gamma.cdf, stats.gamma.cdf, (np.array([-1.0, 0.0, 0.0, np.inf, 1.0, 1.0, np.nan]),
                                                  np.array([1.0, 0.5, 2.0, 2.0, 0.0, -1.0, 2.0]))),
    # log(cdf) was positive where SciPy's gammainc is 1 + 2e-14 (a tiny shape), and lost sf's digits near 1
    ("gamma.logcdf", S.gamma.logcdf, stats.gamma.logcdf, (np.array([0.5, 1.0, 1e-300, 0.5, 40.0, -1.0, 0.0, np.inf,
                                                                    1.0, np.nan]),
                                                          np.array([1e-300, 1e-300, 1e-12, 1e-12, 2.0, 2.0, 1.0, 3.0,
                                                                    -1.0, 2.0]))),
    ("beta.cdf", S.beta.cdf, stats.beta.cdf, (np.array([-0.5, 0.0, 1.0, 1.5, 0.5, 0.5, np.nan]),
                                               np.array([2.0, 2.0, 2.0, 2.0, 0.0, 1.0, 2.0]),
                                               np.array([3.0, 3.0, 3.0, 3.0, 1.0, -1.0, 3.0]))),
    ("t.cdf", S.t.cdf, stats.t.cdf, (np.array([-np.inf, -1e10, 0.0, np.inf, 1.0, 1.0]), np.array([2.0, 1.0, 3.0, 2.0, 0.0, -1.0]))),
    ("poisson.cdf", S.poisson.cdf, stats.poisson.cdf, (np.array([-1.0, 0.0, 2.5, np.inf, 1.0, 1.0, np.nan]),
                                                        np.array([2.0, 0.0, 2.0, 2.0, -1.0, np.inf, 2.0]))),
    ("dirichlet", S.dirichlet.logpdf, stats.dirichlet.logpdf, (np.array([0.0, 0.5, 0.5]), np.array([1.0, 2.0, 2.0]))),
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("case", EDGES, ids=[c[0] for c in EDGES])
def test_edges_match_scipy(case, dtype):
    _, ours, theirs, args = case
    args = [np.asarray(a, dtype) if isinstance(a, np.ndarray) else a for a in args]
    with np.errstate(all="ignore"):
        expected = theirs(*[np.asarray(a, np.float64) for a in args])
        results = values_everywhere(lambda *a: ours(*a), *[np.asarray(a, dtype) for a in args])
    for path, got in results.items():
        np.testing.assert_allclose(np.asarray(got, np.float64), expected, rtol=1e-12 if dtype == np.float64 else 2e-6,
                                   err_msg=path)


@pytest.mark.parametrize("shape", [(0,), ()])
def test_empty_and_zero_d(shape):
    x = np.full(shape, 0.5)
    for ours, theirs in [(S.norm.logpdf, stats.norm.logpdf), (S.gamma.logpdf, lambda x: stats.gamma.logpdf(x, 2.0)),
                         (S.bernoulli.logpmf, lambda k: stats.bernoulli.logpmf(k, 0.4))]:
        fn = ours if ours is S.norm.logpdf else (lambda x, ours=ours: ours(x, 2.0 if ours is S.gamma.logpdf else 0.4))
        for path, got in values_everywhere(fn, x).items():
            assert np.shape(got) == shape, path
            np.testing.assert_allclose(got, theirs(x), rtol=1e-13, err_msg=path)
        for path, (_, (g,)) in value_and_grad_everywhere(lambda x: sg.sum(fn(x)), (x,)).items():
            assert g.shape == shape, path


def test_gradient_at_the_support_boundary_is_finite_where_the_density_is():
    """Off the support the unselected branch sees a safe value, so log(negative) never reaches the gradient."""
    x, a = np.array([-1.0, 0.5, 2.0]), np.array([2.0, 2.0, 2.0])
    for path, (_, (gx, ga)) in value_and_grad_everywhere(lambda x, a: sg.sum(S.gamma.logpdf(x, a)), (x, a),
                                                         (0, 1)).items():
        np.testing.assert_allclose(gx, [0.0, 1 / 0.5 - 1, 1 / 2 - 1], err_msg=path)
        assert ga[0] == 0.0 and np.isfinite(ga).all(), path
    k, p = np.array([0.0, 1.0, 2.0]), np.array([0.3, 0.3, 0.3])
    g = sg.grad(lambda p: sg.sum(S.bernoulli.logpmf(k, p)))(p)
    np.testing.assert_allclose(g, [-1 / 0.7, 1 / 0.3, 0.0])


def test_errors():
    with pytest.raises(ValueError, match="normal simplex"):
        S.dirichlet.logpdf(np.array([0.5, 0.6, 0.1]), ALPHA)
    with pytest.raises(ValueError, match="components along its first axis"):
        S.dirichlet.logpdf(np.ones((5, 2)) / 5, ALPHA)
    with pytest.raises(ValueError, match="positive semidefinite"):
        S.multivariate_normal.logpdf(POINTS, MEAN, -COV, allow_singular=True)
    with pytest.raises(ValueError, match="not positive definite"):
        S.multivariate_normal.logpdf(POINTS, MEAN, -COV)
    np.testing.assert_allclose(S.dirichlet.logpdf(SIMPLEX[:2], ALPHA), stats.dirichlet.logpdf(SIMPLEX[:2], ALPHA))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_multivariate_normal_with_a_traced_covariance(dtype):
    """cov traced (sg.linalg.cholesky in the graph): values, gradients in x, mean and cov against finite
    differences (cov symmetrized inside the function), both backends, eager tensors, and torch's."""
    points, mean, cov = POINTS.astype(dtype), MEAN.astype(dtype), COV.astype(dtype)

    def f(x, m, c):
        return sg.sum(S.multivariate_normal.logpdf(x, m, (c + c.T) / 2) * np.arange(1.0, len(POINTS) + 1, dtype=dtype))

    def reference(x, m, c):
        return np.sum(stats.multivariate_normal.logpdf(x, m, (c + c.T) / 2) * np.arange(1.0, len(POINTS) + 1))
    expected = reference(POINTS, MEAN, COV)
    tol = 1e-10 if dtype == np.float64 else 1e-4
    for path, got in values_everywhere(f, points, mean, cov).items():
        np.testing.assert_allclose(got, expected, rtol=tol, err_msg=path)
    if dtype == np.float64:
        assert_grads_match_finite_differences(f, (POINTS, MEAN, COV), argnums=(0, 1, 2), rtol=1e-6, reference=reference)
    grads = sg.grad(f, argnums=(0, 1, 2))(points, mean, cov)
    for backend in ("numpy", None):
        for got, want in zip(sg.compile(sg.grad(f, argnums=(0, 1, 2)), backend=backend)(points, mean, cov), grads):
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    for scalar_or_diagonal in (np.float64(1.5), np.array([0.5, 1.0, 2.0])):
        got = sg.compile(lambda x, c: S.multivariate_normal.logpdf(x, MEAN, c))(POINTS, scalar_or_diagonal)
        np.testing.assert_allclose(got, stats.multivariate_normal.logpdf(POINTS, MEAN, scalar_or_diagonal), rtol=1e-10)
    with pytest.raises(np.linalg.LinAlgError):
        sg.compile(lambda c: S.multivariate_normal.logpdf(POINTS, MEAN, c))(-COV)
    torch = pytest.importorskip("torch")
    c = torch.tensor(cov, requires_grad=True)
    weights = torch.arange(1.0, len(POINTS) + 1, dtype=c.dtype)
    (torch.distributions.MultivariateNormal(torch.tensor(mean), (c + c.T) / 2).log_prob(torch.tensor(points))
     * weights).sum().backward()
    np.testing.assert_allclose(grads[2], c.grad.numpy(), rtol=tol, atol=tol)


# a rank-2 covariance SPAN @ SPAN.T in 3 dimensions, points on its support: exact in float32
SPAN = np.array([[1.0, 0.5], [0.25, 2.0], [1.5, -1.0]])
COEFFICIENTS = np.array([[0.5, -1.0], [1.25, 0.25], [-0.75, 0.5], [2.0, 1.5], [0.0, -0.5]])
CENTER = np.array([0.5, -0.25, 0.75])


def _singular_points(span, mean):
    """Points on the support of N(mean, span @ span.T) and two off it."""
    inside = mean + COEFFICIENTS @ span.T
    normal = np.cross(span[:, 0], span[:, 1])
    return np.concatenate([inside, inside[:2] + normal])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_multivariate_normal_allow_singular_is_scipy_s_pseudo_density(dtype):
    """A singular covariance: the pseudo-determinant, the pseudo-inverse, the rank, -inf off the support; on
    every path with cov a constant or traced (then symmetrized); a definite cov gives the ordinary density."""
    cov = SPAN @ SPAN.T
    points = _singular_points(SPAN, CENTER)
    expected = stats.multivariate_normal.logpdf(points, CENTER, cov, allow_singular=True)
    assert np.isneginf(expected[-2:]).all() and np.isfinite(expected[:-2]).all()
    tol = 1e-9 if dtype == np.float64 else 2e-3
    args = [a.astype(dtype) for a in (points, CENTER, cov)]
    for f in (lambda x, m, c: S.multivariate_normal.logpdf(x, m, (c + c.T) / 2, allow_singular=True),
              lambda x, m, c: S.multivariate_normal.logpdf(x, m, cov, allow_singular=True)):
        for path, got in values_everywhere(f, *args).items():
            np.testing.assert_array_equal(np.isneginf(got), np.isneginf(expected), err_msg=path)
            np.testing.assert_allclose(got[:-2], expected[:-2], rtol=tol, atol=tol, err_msg=path)
    np.testing.assert_allclose(S.multivariate_normal.pdf(points, CENTER, cov, allow_singular=True),
                               stats.multivariate_normal.pdf(points, CENTER, cov, allow_singular=True), rtol=1e-9)
    np.testing.assert_allclose(S.multivariate_normal.logpdf(POINTS, MEAN, COV, allow_singular=True),
                               stats.multivariate_normal.logpdf(POINTS, MEAN, COV), rtol=1e-10)


def test_multivariate_normal_allow_singular_gradients_match_finite_differences():
    """Moving the covariance's span, the mean and the points together keeps the rank and the points on the
    support: the density is differentiable there (through pinv's derivative, finite at the repeated zero
    eigenvalues of a rank-1 covariance too), on every path."""
    for span in (SPAN, SPAN[:, :1]):
        def f(s, m, c):
            x = m + sg.matmul(c, sg.swapaxes(s, 0, 1))
            return sg.sum(S.multivariate_normal.logpdf(x, m, sg.matmul(s, sg.swapaxes(s, 0, 1)), allow_singular=True))

        def reference(s, m, c):
            return np.sum(stats.multivariate_normal.logpdf(m + c @ s.T, m, s @ s.T, allow_singular=True))
        args = (span + np.random.default_rng(5).normal(size=span.shape) / 4, MEAN, COEFFICIENTS[:, :span.shape[1]])
        grads = assert_grads_match_finite_differences(f, args, argnums=(0, 1, 2), rtol=1e-5, atol=1e-7,
                                                      reference=reference)
        for path, (value, got) in value_and_grad_everywhere(f, args, argnums=(0, 1, 2)).items():
            np.testing.assert_allclose(value, reference(*args), rtol=1e-9, err_msg=path)
            for g, e in zip(got, grads):
                np.testing.assert_allclose(g, e, rtol=1e-8, atol=1e-10, err_msg=path)


def test_multivariate_normal_shapes_follow_scipy():
    for x, mean, cov in [(0.3, None, 2.0), (np.array([0.1, 0.4, -1.0]), 0.0, 1.5), (POINTS, MEAN, np.diag(COV)),
                         (POINTS[:1], MEAN, COV), (POINTS.reshape(2, 2, 3), MEAN, COV)]:
        expected = stats.multivariate_normal.logpdf(x, mean, cov)
        got = S.multivariate_normal.logpdf(x, mean, cov)
        assert np.shape(got) == np.shape(expected)
        np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_python_number_parameters_keep_float32_data_float32():
    """Python numbers are weak, as in NumPy's and JAX's promotion (SciPy itself computes in float64)."""
    x = np.array([0.5, 1.5], np.float32)
    for got in (S.norm.logpdf(x, 0.0, 2.0), S.t.pdf(x, 3.0), S.gamma.logpdf(x, 2.0, scale=1.5), S.beta.logpdf(x / 2, 2, 3),
                S.poisson.logpmf(x, 2.0), S.bernoulli.logpmf(x, 0.5), sg.compile(lambda x: S.norm.cdf(x, scale=3))(x)):
        assert got.dtype == np.float32
    assert S.poisson.logpmf(np.array([1, 2]), 2.0).dtype == np.float64
    assert S.norm.logpdf(sg.tensor(x), scale=2.0).numpy().dtype == np.float32


@pytest.mark.parametrize("fn,argnum,name", [
    (lambda x, a: S.gamma.cdf(x, a), 1, r"gammainc\(a, x\) in a"),
    (lambda x, a: S.t.cdf(x, a), 1, r"stdtr\(df, t\) in df"),
    (lambda x, a: S.beta.cdf(x / 4, 2.0, a), 1, r"betainc\(a, b, x\) in b"),
])
def test_a_derivative_in_a_shape_parameter_is_a_clear_error_and_a_constant_shape_costs_nothing(fn, argnum, name):
    x, a = np.array([0.5, 1.5]), np.array([2.0, 3.0])
    for backend in BACKENDS:
        with pytest.raises(sg.UnsupportedOpError, match=name + ".*no closed form.*as a constant"):
            sg.compile(sg.grad(lambda x, a: sg.sum(fn(x, a)), argnums=argnum), backend=backend)(x, a)
    # the shape a traced constant (an input not differentiated) or an eager tensor without grad: fine
    expected = sg.grad(lambda x: sg.sum(fn(x, a)))(x)
    for path, (_, (g,)) in value_and_grad_everywhere(lambda x, a: sg.sum(fn(x, a)), (x, a), 0).items():
        np.testing.assert_allclose(g, expected, rtol=1e-12, err_msg=path)
