"""sg.scipy.special: values against SciPy at ordinary and edge points on every path (eager arrays, both
backends, eager tensors) in float32 and float64, gradients against finite differences and against
torch.special where torch has the function, and the stable forms at the extremes.

The elementwise ops also get the registry's generated tests (test_ops.py)."""
from __future__ import annotations

import sys
import uuid

import numpy as np
import pytest

import symgrad as sg
from symgrad.scipy import special as S

from gradcheck import assert_grads_match_finite_differences, value_and_grad_everywhere, values_everywhere
from test_ops import NO_DERIVATIVE

special = pytest.importorskip("scipy.special")

BACKENDS = ("numpy", "llvm")
INF, NAN = np.inf, np.nan


# ----------------------------------------------------------------------------- import forms

def test_import_forms():
    from symgrad.scipy.special import gammaln
    from symgrad.scipy.stats import norm
    assert sg.scipy.special.gammaln is gammaln is S.gammaln
    assert sg.scipy.stats.norm is norm
    import symgrad.scipy.special as module
    assert module.logsumexp(np.zeros(2)) == pytest.approx(np.log(2))


# ----------------------------------------------------------------------------- edge points

EDGES = {  # name -> (arguments, float64 rtol): zeros, infinities, NaN and the far tails
    "gammaln": ([np.array([0.0, -0.5, 1e-300, 0.5, 1.0, 2.0, 170.5, 1e10, INF, NAN])], 1e-13),
    "digamma": ([np.array([-0.5, 1e-8, 0.5, 1.0, 50.0, 1e10, INF, NAN])], 1e-13),
    "erf": ([np.array([-INF, -30.0, -1.0, -0.0, 1e-300, 0.5, 6.0, INF, NAN])], 1e-13),  # jax.scipy.special's too
    "erfc": ([np.array([-INF, -30.0, -1.0, 0.0, 1.0, 10.0, 26.0, 30.0, INF, NAN])], 1e-13),
    "erfinv": ([np.array([-1.0, -0.999999, -0.5, 0.0, 1e-10, 0.5, 1.0, 1.5, NAN])], 1e-13),
    "ndtr": ([np.array([-INF, -40.0, -5.0, 0.0, 5.0, 40.0, INF, NAN])], 1e-13),
    "log_ndtr": ([np.array([-INF, -1e5, -40.0, -5.0, 0.0, 5.0, 40.0, INF, NAN])], 1e-13),
    "ndtri": ([np.array([0.0, 1e-300, 1e-10, 0.3, 0.5, 1 - 1e-10, 1.0, -0.1, 1.1, NAN])], 1e-12),
    "logit": ([np.array([0.0, 1e-300, 0.25, 0.5, 1 - 1e-12, 1.0, -0.5, 2.0, NAN])], 1e-13),
    "expit": ([np.array([-INF, -800.0, -30.0, 0.0, 30.0, 800.0, INF, NAN])], 1e-13),
    "xlogy": ([np.array([0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 2.0, -1.0, 1.0, NAN, 0.0]),
               np.array([0.0, -1.0, INF, NAN, 2.0, 0.0, INF, 3.0, -1.0, 1.0, 1e-300])], 1e-13),
    "xlog1py": ([np.array([0.0, 0.0, 0.0, 0.0, 1.0, 2.0, 1.0]),
                 np.array([-1.0, -2.0, INF, NAN, -1.0, 1e-20, -0.5])], 1e-13),
    "betaln": ([np.array([1.0, 0.5, 1e-8, 100.0, 1e5, 3.0]), np.array([1.0, 0.5, 2.0, 100.0, 1e-3, INF])], 1e-9),
    "gammainc": ([np.array([0.5, 1.0, 2.0, 0.0, -1.0, 1.0, 1e3, 2.0, NAN]),
                  np.array([0.0, 0.0, 1.0, 1.0, 1.0, INF, 1e3, -1.0, 1.0])], 1e-13),
    "gammaincc": ([np.array([0.5, 1.0, 2.0, 0.0, 1.0, 1e3, NAN]), np.array([0.0, 1e-300, 1.0, 1.0, INF, 1e3, 1.0])],
                  1e-13),
    "betainc": ([np.array([1.0, 2.0, 0.5, 2.0, 1e3, 2.0]), np.array([1.0, 3.0, 0.5, 3.0, 1e3, NAN]),
                 np.array([0.0, 1.0, 0.5, 1.5, 0.5, 0.5])], 1e-13),
    "stdtr": ([np.array([1.0, 3.0, 1e10, INF, 0.0, 2.0]), np.array([-INF, 0.5, 2.0, 1.0, 1.0, NAN])], 1e-13),
    "pdtr": ([np.array([0.0, 2.5, 3.0, 1e3, -1.0, INF]), np.array([0.0, 2.0, 1e-300, 1e3, 1.0, 1.0])], 1e-13),
}


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", sorted(EDGES))
def test_values_at_edge_points_match_scipy(name, dtype):
    args, rtol = EDGES[name]
    args = [a.astype(dtype) for a in args]
    with np.errstate(all="ignore"):
        expected = getattr(special, name)(*[a.astype(np.float64) for a in args])
        results = values_everywhere(getattr(S, name), *args)
    for path, got in results.items():
        assert got.dtype == dtype, path
        np.testing.assert_allclose(got.astype(np.float64), expected, rtol=rtol if dtype == np.float64 else 2e-6,
                                   atol=0 if dtype == np.float64 else 1e-30, err_msg=f"{name}, {path}")


@pytest.mark.parametrize("name", sorted(EDGES))
@pytest.mark.parametrize("shape", [(0,), (2, 0), ()])
def test_empty_and_zero_d_arrays(name, shape):
    args = [np.full(shape, 0.5) for _ in EDGES[name][0]]
    expected = getattr(special, name)(*args)
    for path, got in values_everywhere(getattr(S, name), *args).items():
        assert got.shape == shape, path
        np.testing.assert_allclose(got, expected, rtol=1e-13, err_msg=path)
    argnums = tuple(i for i in range(len(args)) if i not in NO_DERIVATIVE.get(name, ()))
    for path, (_, grads) in value_and_grad_everywhere(lambda *a: sg.sum(getattr(S, name)(*a)), args, argnums).items():
        assert all(g.shape == shape for g in grads), path


# ----------------------------------------------------------------------------- stable derivatives at the extremes

def _grads(fn, args, argnums=0):
    """{path: gradient tuple} of sum(fn) over every path."""
    with np.errstate(all="ignore"):
        return {path: grads for path, (_, grads) in
                value_and_grad_everywhere(lambda *a: sg.sum(fn(*a)), args, argnums).items()}


def test_log_ndtr_derivative_in_the_far_lower_tail():
    # pdf/cdf ~ -x there: exp(-x**2/2) / ndtr(x) would be 0/0
    x = np.array([-1e5, -40.0, -5.0, 0.0, 5.0, 40.0])
    expected = np.exp(-x ** 2 / 2 - special.log_ndtr(x)) / np.sqrt(2 * np.pi)
    assert np.isfinite(expected).all()
    for path, (g,) in _grads(S.log_ndtr, (x,)).items():
        np.testing.assert_allclose(g, expected, rtol=1e-12, err_msg=path)


def test_logit_and_expit_at_the_ends():
    p = np.array([0.0, 1e-300, 0.5, 1.0])
    for path, (g,) in _grads(S.logit, (p,)).items():
        np.testing.assert_allclose(g, [INF, 1e300, 4.0, INF], rtol=1e-12, err_msg=path)
    x = np.array([-800.0, -40.0, 0.0, 40.0, 800.0])
    for path, (g,) in _grads(S.expit, (x,)).items():  # (s (1 - s), PyTorch's and JAX's form: within an ulp of s
        # where 1 - s rounds to 0, e.g. 0 for 4.2e-18 at x = 40; it cancels the forward's rounded 1 - s downstream)
        np.testing.assert_allclose(g, special.expit(x) * special.expit(-x), rtol=1e-12, atol=2 ** -53, err_msg=path)


def test_xlogy_at_zero_has_the_gradient_of_the_function_that_is_zero_there():
    """d/dx is log(y) (0 where x == 0 and y <= 0, as torch); d/dy is x/y, and 0 along x == 0, where the
    function is 0 for every y (torch's x/y gives NaN at (0, 0))."""
    x = np.array([0.0, 0.0, 0.0, 1.0, 2.0])
    y = np.array([0.0, 2.0, -1.0, 0.0, 4.0])
    for path, (gx, gy) in _grads(S.xlogy, (x, y), (0, 1)).items():
        np.testing.assert_allclose(gx, [0.0, np.log(2.0), 0.0, -INF, np.log(4.0)], err_msg=path)
        np.testing.assert_allclose(gy, [0.0, 0.0, 0.0, INF, 0.5], err_msg=path)
    for path, (gx, gy) in _grads(S.xlog1py, (x, y - 1), (0, 1)).items():
        np.testing.assert_allclose(gx, [0.0, np.log(2.0), 0.0, -INF, np.log(4.0)], err_msg=path)
        np.testing.assert_allclose(gy, [0.0, 0.0, 0.0, INF, 0.5], err_msg=path)


def test_derivatives_are_the_derived_special_functions():
    x = np.array([0.3, 1.0, 2.5])
    assert_grads_match_finite_differences(lambda x: sg.sum(S.digamma(x)), [x])
    np.testing.assert_allclose(sg.grad(lambda x: sg.sum(S.digamma(x)))(x), special.polygamma(1, x), rtol=1e-13)
    np.testing.assert_allclose(sg.grad(lambda x: sg.sum(S.gammaln(x)))(x), special.digamma(x), rtol=1e-13)
    p = np.array([-0.9, 0.0, 0.5])
    np.testing.assert_allclose(sg.grad(lambda p: sg.sum(S.erfinv(p)))(p),
                               np.sqrt(np.pi) / 2 * np.exp(special.erfinv(p) ** 2), rtol=1e-13)
    q = np.array([1e-10, 0.3, 0.9])
    np.testing.assert_allclose(sg.grad(lambda q: sg.sum(S.ndtri(q)))(q),
                               np.sqrt(2 * np.pi) * np.exp(special.ndtri(q) ** 2 / 2), rtol=1e-9)
    assert "polygamma" in str(sg.trace(sg.grad(lambda x: sg.sum(S.digamma(x))), x))


# ----------------------------------------------------------------------------- polygamma, multigammaln

@pytest.mark.parametrize("n", [0, 1, 2, 3, np.int64(2), np.array([0, 1, 3])])
def test_polygamma_orders(n):
    x = np.array([0.4, 1.0, 3.5])
    expected = special.polygamma(n, x)
    for path, got in values_everywhere(lambda x: S.polygamma(n, x), x).items():
        np.testing.assert_allclose(got, expected, rtol=1e-12, err_msg=path)
    assert_grads_match_finite_differences(lambda x: sg.sum(S.polygamma(n, x)), [x], rtol=1e-6)
    np.testing.assert_allclose(sg.grad(lambda x: sg.sum(S.polygamma(n, x)))(x), special.polygamma(np.asarray(n) + 1, x),
                               rtol=1e-12)


def test_polygamma_order_errors():
    with pytest.raises(ValueError, match="non-negative whole number"):
        S.polygamma(-1, 1.0)
    with pytest.raises(ValueError, match="non-negative whole number"):
        S.polygamma(1.5, 1.0)
    with pytest.raises(TypeError, match="order n must be a Python int"):
        sg.grad(lambda n, x: S.polygamma(n, x), argnums=1)(1.0, 2.0)


@pytest.mark.parametrize("d", [1, 2, 4])
def test_multigammaln(d):
    a = np.array([2.0, 3.5, 10.0])
    expected = special.multigammaln(a, d)
    for path, got in values_everywhere(lambda a: S.multigammaln(a, d), a).items():
        np.testing.assert_allclose(got, expected, rtol=1e-13, err_msg=path)
    assert_grads_match_finite_differences(lambda a: sg.sum(S.multigammaln(a, d)), [a])


def test_multigammaln_domain():
    with pytest.raises(ValueError, match=r"condition a .* > 0.5 \* \(d-1\)"):
        S.multigammaln(np.array([1.0]), 3)
    with pytest.raises(ValueError, match="d must be a positive integer"):
        S.multigammaln(2.0, 1.5)
    assert np.isnan(sg.compile(lambda a: S.multigammaln(a, 3))(np.array(0.8)))  # traced: NaN outside the domain


# ----------------------------------------------------------------------------- logsumexp

LOGSUMEXP_CASES = [  # (id, a, kwargs)
    ("plain", np.array([[1.0, 2.0, -1.0], [0.5, 3.0, 2.0]]), {}),
    ("axis", np.array([[1.0, 2.0, -1.0], [0.5, 3.0, 2.0]]), {"axis": 1}),
    ("axis-keep", np.array([[1.0, 2.0, -1.0], [0.5, 3.0, 2.0]]), {"axis": 0, "keepdims": True}),
    ("b", np.array([[1.0, 2.0, -1.0], [0.5, 3.0, 2.0]]), {"axis": -1, "b": np.array([0.5, 2.0, 1.0])}),
    ("b-zeros", np.array([[1.0, INF, -1.0], [0.5, 3.0, 2.0]]), {"axis": 1, "b": np.array([[1.0, 0.0, 2.0], [0.0, 0.0, 0.0]])}),
    ("b-negative-sign", np.array([[1.0, 2.0, -1.0], [0.5, 3.0, 2.0]]),
     {"axis": 1, "b": np.array([1.0, -1.0, 1.0]), "return_sign": True}),
    ("b-negative-nan", np.array([1.0, 2.0]), {"b": np.array([1.0, -2.0])}),
    ("minus-inf", np.array([[-INF, -INF], [-INF, 1.0]]), {"axis": 1}),
    ("sign-tuple-axis", np.array([[[1.0, 2.0], [3.0, -1.0]]]), {"axis": (0, 2), "b": -1.0, "return_sign": True}),
    ("sign-zero", np.array([1.0, 1.0]), {"b": np.array([1.0, -1.0]), "return_sign": True}),
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("a,kwargs", [pytest.param(a, k, id=i) for i, a, k in LOGSUMEXP_CASES])
def test_logsumexp_matches_scipy(a, kwargs, dtype):
    a = a.astype(dtype)
    with np.errstate(all="ignore"):
        expected = special.logsumexp(a.astype(np.float64), **kwargs)
        paths = {"eager": S.logsumexp(a, **kwargs),
                 **{backend: sg.compile(lambda a: S.logsumexp(a, **kwargs), backend=backend)(a) for backend in BACKENDS},
                 "tensor": S.logsumexp(sg.tensor(a), **kwargs)}
    for path, got in paths.items():
        got = tuple(np.asarray(g.numpy() if hasattr(g, "numpy") else g, np.float64) for g in
                    (got if kwargs.get("return_sign") else (got,)))
        want = expected if kwargs.get("return_sign") else (expected,)
        for g, w in zip(got, want):
            assert g.shape == np.shape(w), path
            np.testing.assert_allclose(g, w, rtol=1e-13 if dtype == np.float64 else 1e-6, err_msg=path)


@pytest.mark.parametrize("a,kwargs", [pytest.param(a, k, id=i) for i, a, k in LOGSUMEXP_CASES
                                      if np.isfinite(special.logsumexp(a, **k)[0] if k.get("return_sign")
                                                     else special.logsumexp(a, **k)).all() and np.isfinite(a).all()])
def test_logsumexp_gradients(a, kwargs):
    weights = np.random.default_rng(0).normal(size=np.shape(special.logsumexp(a, **{k: v for k, v in kwargs.items()
                                                                                      if k != "return_sign"})))

    def f(a, b):
        value = S.logsumexp(a, **{**kwargs, "b": b})
        return sg.sum((value[0] if kwargs.get("return_sign") else value) * weights)

    def reference(a, b):
        value = special.logsumexp(a, **{**kwargs, "b": b})
        return np.sum((value[0] if kwargs.get("return_sign") else value) * weights)
    b = np.broadcast_to(np.asarray(kwargs.get("b", 1.0), np.float64), a.shape).copy()
    assert_grads_match_finite_differences(f, [a, b], (0, 1), reference=reference)
    for path, (_, (ga, gb)) in value_and_grad_everywhere(f, (a, b), (0, 1)).items():
        np.testing.assert_allclose(ga, sg.grad(f)(a, b), rtol=1e-12, err_msg=path)


def test_logsumexp_gradient_with_minus_inf_entries_is_zero_there():
    a = np.array([[-INF, 0.0, 1.0], [2.0, -INF, 2.0]])
    for path, (g,) in _grads(lambda a: S.logsumexp(a, axis=1, b=np.array([1.0, 2.0, 1.0])), (a,)).items():
        expected = np.array([[0.0, 2 / (2 + np.e), np.e / (2 + np.e)], [0.5, 0.0, 0.5]])
        np.testing.assert_allclose(g, expected, rtol=1e-13, err_msg=path)


# ----------------------------------------------------------------------------- torch as oracle

def _torch_cases(torch):
    ts = torch.special
    return {  # name -> (symgrad function, torch function, argument sampler)
        "gammaln": (S.gammaln, ts.gammaln, lambda r: [r.uniform(0.1, 5, 6)]),
        "digamma": (S.digamma, ts.digamma, lambda r: [r.uniform(0.1, 5, 6)]),
        "polygamma2": (lambda x: S.polygamma(2, x), lambda x: ts.polygamma(2, x), lambda r: [r.uniform(0.2, 5, 6)]),
        "erfc": (S.erfc, ts.erfc, lambda r: [r.uniform(-3, 3, 6)]),
        "erfinv": (S.erfinv, ts.erfinv, lambda r: [r.uniform(-0.95, 0.95, 6)]),
        "ndtr": (S.ndtr, ts.ndtr, lambda r: [r.uniform(-6, 6, 6)]),
        "log_ndtr": (S.log_ndtr, ts.log_ndtr, lambda r: [np.concatenate([r.uniform(-6, 6, 4), [-30.0, 20.0]])]),
        "ndtri": (S.ndtri, ts.ndtri, lambda r: [r.uniform(0.01, 0.99, 6)]),
        "logit": (S.logit, ts.logit, lambda r: [r.uniform(0.01, 0.99, 6)]),
        "expit": (S.expit, ts.expit, lambda r: [r.uniform(-30, 30, 6)]),
        "xlogy": (S.xlogy, ts.xlogy, lambda r: [np.array([0.0, 0.0, 1.5, -2.0, 0.3, 2.0]), r.uniform(0.1, 3, 6)]),
        "xlog1py": (S.xlog1py, ts.xlog1py, lambda r: [np.array([0.0, 0.0, 1.5, -2.0, 0.3, 2.0]), r.uniform(-0.9, 3, 6)]),
        "multigammaln": (lambda a: S.multigammaln(a, 3), lambda a: ts.multigammaln(a, 3), lambda r: [r.uniform(1.1, 5, 6)]),
        "logsumexp": (lambda a: S.logsumexp(a, axis=1), lambda a: torch.logsumexp(a, 1), lambda r: [r.normal(size=(2, 3))]),
        "gammainc": (S.gammainc, ts.gammainc, lambda r: [r.uniform(0.5, 4, 6), r.uniform(0.1, 5, 6)]),
        "gammaincc": (S.gammaincc, ts.gammaincc, lambda r: [r.uniform(0.5, 4, 6), r.uniform(0.1, 5, 6)]),
    }


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", ["gammaln", "digamma", "polygamma2", "erfc", "erfinv", "ndtr", "log_ndtr", "ndtri",
                                  "logit", "expit", "xlogy", "xlog1py", "multigammaln", "logsumexp", "gammainc",
                                  "gammaincc"])
def test_values_and_gradients_match_torch(name, dtype):
    torch = pytest.importorskip("torch")
    ours, theirs, sample = _torch_cases(torch)[name]
    args = [a.astype(dtype) for a in sample(np.random.default_rng(sum(map(ord, name))))]
    argnums = tuple(i for i in range(len(args)) if i not in NO_DERIVATIVE.get(name, ()))
    tensors = [torch.tensor(a, requires_grad=i in argnums) for i, a in enumerate(args)]
    expected = theirs(*tensors)
    expected.sum().backward()
    # torch's trigamma (digamma's derivative) is off by ~5e-10 relative in float64; ours matches mpmath
    rtol = (1e-8 if name == "digamma" else 1e-12) if dtype == np.float64 else 2e-5
    for path, (value, grads) in value_and_grad_everywhere(lambda *a: sg.sum(ours(*a)), args, argnums).items():
        np.testing.assert_allclose(value, expected.sum().item(), rtol=rtol, err_msg=path)
        for g, t in zip(grads, [tensors[n] for n in argnums]):
            assert g.dtype == dtype, path
            np.testing.assert_allclose(g, t.grad.numpy(), rtol=rtol, atol=1e-12 if dtype == np.float64 else 1e-6,
                                       err_msg=path)


# ----------------------------------------------------------------------------- without SciPy

@pytest.mark.parametrize("name,args", [("gammaln", 1), ("ndtr", 1), ("betaln", 2), ("log_ndtr", 1)])
def test_without_scipy_the_error_names_the_op_and_says_to_install_it(monkeypatch, name, args):
    for module in ("scipy", "scipy.special", "scipy.special.cython_special"):
        monkeypatch.setitem(sys.modules, module, None)
    fresh = float(uuid.uuid4().int % 10 ** 9) / 7  # a program no earlier call compiled (code is cached)
    op = getattr(S, name)
    for backend in BACKENDS:
        with pytest.raises(sg.UnsupportedOpError, match=f"'{name}'.*pip install scipy"):
            sg.compile(lambda x: op(*[x * fresh] * args), backend=backend)(np.array([0.5, 1.5]))
    # ops written with what every backend lowers need no SciPy
    x = np.array([0.0, 0.5, 2.0])
    np.testing.assert_allclose(sg.compile(lambda x: S.xlogy(x, x * fresh) + S.logit(x / 3) + S.expit(x))(x),
                               [0.0, 0.5 * np.log(0.5 * fresh), 2 * np.log(2 * fresh)]
                               + np.log(x / 3 / (1 - x / 3)) + 1 / (1 + np.exp(-x)))


@pytest.mark.parametrize("backend", BACKENDS)
def test_python_numbers_are_weak_and_never_fold_to_complex_infinity(backend):
    """A number baked into the expression made SymPy fold log(0) (xlogy(x, 0.0)) to complex infinity,
    which no backend prints; xlogy(0, y) printed as the integer 0 and lost NaN."""
    x = np.array([0.0, 2.0, NAN, -1.0])
    with np.errstate(all="ignore"):
        cases = [(lambda x: S.xlogy(x, 0.0), special.xlogy(x, 0.0)), (lambda x: S.xlogy(0, x), special.xlogy(0, x)),
                 (lambda x: S.xlog1py(x, -1.0), special.xlog1py(x, -1.0)),
                 (lambda x: S.betaln(x + 3, 0.0), special.betaln(x + 3, 0.0)),
                 (lambda x: S.gammainc(2, x), special.gammainc(2, x))]
        for fn, expected in cases:
            got = sg.compile(fn, backend=backend)(x)
            assert got.dtype == np.float64
            np.testing.assert_allclose(got, expected, rtol=1e-13)
            assert sg.compile(fn, backend=backend)(x.astype(np.float32)).dtype == np.float32
        g = sg.compile(sg.grad(lambda x: sg.sum(S.xlogy(x, 0.0))), backend=backend)(np.array([0.0, 2.0]))
        np.testing.assert_array_equal(g, [0.0, -INF])


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 1)])
def test_softmax_and_log_softmax_match_scipy_over_all_of_x_by_default(name, axis):
    """SciPy's default axis is None (all of x), where sg.softmax's (as jax.nn's) is the last axis."""
    x = np.array([[1.0, 2.0, 3.0], [-INF, 0.0, 5.0]])
    expected = getattr(special, name)(x, axis=axis)
    for dtype in (np.float64, np.float32):
        for path, got in values_everywhere(lambda v: getattr(S, name)(v, axis=axis), x.astype(dtype)).items():
            assert got.shape == expected.shape and got.dtype == dtype, path
            np.testing.assert_allclose(got, expected, rtol=1e-13 if dtype == np.float64 else 1e-6,
                                       atol=0 if dtype == np.float64 else 1e-6, err_msg=path)
    weights = np.random.default_rng(0).normal(size=x.shape)
    finite = np.array([[1.0, 2.0, 3.0], [-1.0, 0.0, 5.0]])
    assert_grads_match_finite_differences(lambda v: sg.sum(getattr(S, name)(v, axis=axis) * weights), [finite], 0,
                                          reference=lambda v: np.sum(getattr(special, name)(v, axis=axis) * weights))
