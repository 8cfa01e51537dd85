"""Op tests generated from the registry, plus the structural functions of the namespace.

Every elementwise op in `ELEMENTWISE` gets a value test against NumPy (or a NumPy formula
where NumPy has no function of that name) and gradient tests against float64 central
finite differences, in float64 (tight) and float32 (loose), on plain and broadcast shapes.
"""
from __future__ import annotations

import importlib.util
import math
import types
import warnings

import numpy as np
import pytest

import symgrad as sg
from symgrad.core import REGISTRY, const_p
from symgrad.ops import lapack
from symgrad.ops import conv as conv_ops
from symgrad.ops.custom import CUSTOM_CALLS
from symgrad.ops.elementwise import ELEMENTWISE
from symgrad.ops.reduce import first_max_p
from symgrad.nn import recurrence

from gradcheck import assert_grads_match_finite_differences, numeric_grad, value_and_grad_everywhere

# ----------------------------------------------------------------------------- references

_erf = np.vectorize(math.erf, otypes=[np.float64])

# NumPy formulas for ops NumPy has no function of that name for.
NUMPY_FORMULAS = {
    "relu": lambda x: np.maximum(x, 0),
    "leaky_relu": lambda x, slope: np.where(x > 0, x, slope * x),
    "clip_below": lambda x, lo: np.clip(x, lo, None),
    "clip_above": lambda x, hi: np.clip(x, None, hi),
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "softplus": lambda x: np.logaddexp(0, x),
    "elu": lambda x, alpha, scale, input_scale: np.where(x > 0, x * scale, alpha * np.expm1(np.minimum(x, 0) *
                                                                                        input_scale)),
    "softplus_beta": lambda x, beta, threshold: np.where(beta * x > threshold, x, np.logaddexp(0, beta * x) / beta),
    "erf": lambda x: _erf(x).astype(np.result_type(x, np.float32)) if np.asarray(x).dtype == np.float32 else _erf(x),
}


# sg.scipy.special's elementwise ops: scipy.special is their reference; SciPy evaluates those of
# SCIPY_EVALUATED on both backends, so without it they are skipped (test_scipy.py checks the error).
SCIPY_SPECIAL = ("gammaln", "digamma", "erfc", "erfinv", "ndtr", "log_ndtr", "ndtri", "logit", "expit", "xlogy",
                 "xlog1py", "betaln", "gammainc", "gammaincc", "betainc", "stdtr", "pdtr")
SCIPY_EVALUATED = ("gammaln", "digamma", "erfc", "erfinv", "ndtr", "log_ndtr", "ndtri", "betaln", "gammainc",
                   "gammaincc", "betainc", "stdtr", "pdtr")
# Arguments an op has no derivative in (no closed form: sg.UnsupportedOpError if one is needed).
NO_DERIVATIVE = {"gammainc": (0,), "gammaincc": (0,), "betainc": (0, 1), "stdtr": (0,)}
COMPARE_FORMULAS = {"is_whole": lambda x: np.isfinite(x) & (x == np.floor(x))}


def numpy_reference(name):
    if name in NUMPY_FORMULAS:
        return NUMPY_FORMULAS[name]
    if name in SCIPY_SPECIAL:
        return getattr(pytest.importorskip("scipy.special"), name)
    return getattr(np, name, None)


def compare_reference(name):
    return COMPARE_FORMULAS.get(name) or getattr(np, name)


def _skip_without_scipy(op):
    if op.name in SCIPY_EVALUATED:
        pytest.importorskip("scipy.special")


def _np_logsumexp(x, axis=None, keepdims=False):
    m = np.max(x, axis=axis, keepdims=True)
    r = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return r if keepdims else np.squeeze(r, axis=axis) if axis is not None else r.reshape(())


def _np_softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def _np_log_softmax(x, axis=-1):
    return x - _np_logsumexp(x, axis=axis, keepdims=True)


def _np_cumulative(accumulate):
    """np.cumsum / np.cumprod with jax.lax's `reverse`: accumulated from the end."""
    def cumulative(x, axis=None, reverse=False):
        x = np.ravel(x) if axis is None else np.asarray(x)
        axis = 0 if axis is None else axis
        return np.flip(accumulate(np.flip(x, axis), axis=axis), axis) if reverse else accumulate(x, axis=axis)
    return cumulative


# A NumPy namespace with symgrad's extra names, so one program text runs on both.
NP = types.SimpleNamespace(**{k: getattr(np, k) for k in dir(np) if not k.startswith("_")})
NP.logsumexp, NP.softmax, NP.log_softmax = _np_logsumexp, _np_softmax, _np_log_softmax
NP.cumsum, NP.cumprod = _np_cumulative(np.cumsum), _np_cumulative(np.cumprod)
NP.relu, NP.sigmoid, NP.softplus, NP.erf = (NUMPY_FORMULAS[k] for k in ("relu", "sigmoid", "softplus", "erf"))
NP.getitem = lambda x, key: x[key]
NP.astype = lambda x, dtype: np.asarray(x).astype(dtype)
SG = types.SimpleNamespace(**{k: getattr(sg, k) for k in dir(sg) if not k.startswith("_")})
SG.getitem = lambda x, key: x[key]

FLOAT_KINDS = ("float", "arith", "where")
DIFF_OPS = [op for op in ELEMENTWISE.values() if op.kind in FLOAT_KINDS and op.on_floats]  # (bits: test_bitwise.py)
COMPARE_OPS = [op for op in ELEMENTWISE.values() if op.kind == "compare"]

# Where each op has a kink, as a function of its float arguments: samples stay this far away.
KINKS = {
    "abs": lambda x: [x],
    "sign": lambda x: [x],
    "relu": lambda x: [x],
    "leaky_relu": lambda x, slope: [x],
    "elu": lambda x, alpha, scale, input_scale: [x],
    "softplus_beta": lambda x, beta, threshold: [beta * x - threshold],
    "maximum": lambda a, b: [a - b],
    "minimum": lambda a, b: [a - b],
    "clip": lambda x, lo, hi: [x - lo, x - hi],
    "clip_below": lambda x, lo: [x - lo],
    "clip_above": lambda x, hi: [x - hi],
    "pdtr": lambda k, mu: [k - np.round(k)],
    "floor": lambda x: [x - np.round(x)],
    "ceil": lambda x: [x - np.round(x)],
    "trunc": lambda x: [x - np.round(x)],
    "rint": lambda x: [x - np.floor(x) - 0.5],
    "floor_divide": lambda a, b: [a / b - np.round(a / b)],
    "mod": lambda a, b: [a / b - np.round(a / b)],
    "fmod": lambda a, b: [a / b - np.round(a / b)],
    "fmax": lambda a, b: [a - b],
    "fmin": lambda a, b: [a - b],
}
KINK_GAP = 0.1


def _sample(op, shapes, rng, dtype):
    """Arguments for op: floats uniform in op.domain (away from kinks), a bool condition for where."""
    lo, hi = op.domain
    out_shape = np.broadcast_shapes(*shapes)
    for _ in range(1000):
        args = []
        for i, shape in enumerate(shapes):
            if op.kind == "where" and i == 0:
                args.append(rng.random(shape) < 0.5)
            elif op.name == "clip" and i == 1:
                args.append(rng.uniform(-1.5, -0.5, shape).astype(dtype))
            elif op.name == "clip" and i == 2:
                args.append(rng.uniform(0.5, 1.5, shape).astype(dtype))
            else:
                args.append(rng.uniform(lo, hi, shape).astype(dtype))
        if op.name not in KINKS:
            return args
        gaps = KINKS[op.name](*[np.broadcast_to(a, out_shape).astype(np.float64) for a in args])
        if all(np.all(np.abs(g) > KINK_GAP) for g in gaps):
            return args
    raise AssertionError(f"could not sample {op.name} away from its kinks")


def _shape_cases(op):
    """(id, shapes) for op: a plain (3,4) case and a broadcasting case."""
    n = op.arity
    cases = [("3x4", [(3, 4)] * n)]
    if n == 1:
        cases.append(("scalar", [()]))
    elif n == 2:
        cases.append(("bcast", [(3, 1), (4,)]))
    else:
        cases.append(("bcast", [(3, 4), (3, 1), (4,), (1, 4)][:n] if op.kind != "where" else [(3, 1), (4,), (3, 4)]))
    return cases


def _op_cases(ops):
    return [pytest.param(op, shapes, id=f"{op.name}-{sid}") for op in ops for sid, shapes in _shape_cases(op)]


def _float_argnums(op):
    return tuple(i for i in range(op.arity) if not (op.kind == "where" and i == 0) and i not in NO_DERIVATIVE.get(op.name, ()))


def _seeded(name):
    return np.random.default_rng(sum(map(ord, name)) + 12345)


# ----------------------------------------------------------------------------- elementwise ops

@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("op,shapes", _op_cases(DIFF_OPS))
def test_elementwise_value(op, shapes, dtype):
    rng = _seeded(op.name + str(shapes))
    args = _sample(op, shapes, rng, dtype)
    ref = numpy_reference(op.name)
    assert ref is not None, f"no NumPy reference for {op.name}; add a formula to NUMPY_FORMULAS"
    expected = ref(*[np.asarray(a, np.float64) if a.dtype != np.bool_ else a for a in args])
    eager = op(*args)
    compiled = sg.compile(lambda *a: op(*a))(*args)
    rtol = 1e-12 if dtype == np.float64 else 1e-5
    for got in (eager, compiled):
        got = np.asarray(got)
        assert got.dtype == np.dtype(dtype), f"{op.name}: output dtype {got.dtype} for {np.dtype(dtype)} inputs"
        assert got.shape == np.broadcast_shapes(*shapes)
        np.testing.assert_allclose(got.astype(np.float64), expected, rtol=rtol, atol=1e-6 if dtype == np.float32 else 1e-14)


@pytest.mark.parametrize("op,shapes", _op_cases(DIFF_OPS))
def test_elementwise_grad_float64(op, shapes):
    _skip_without_scipy(op)
    rng = _seeded(op.name + str(shapes) + "g")
    args = _sample(op, shapes, rng, np.float64)
    W = rng.normal(size=np.broadcast_shapes(*shapes))
    assert_grads_match_finite_differences(lambda *a: sg.sum(op(*a) * W), args, _float_argnums(op), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("op,shapes", _op_cases(DIFF_OPS))
def test_elementwise_grad_float32(op, shapes):
    _skip_without_scipy(op)
    rng = _seeded(op.name + str(shapes) + "g32")
    args = _sample(op, shapes, rng, np.float32)
    W = rng.normal(size=np.broadcast_shapes(*shapes)).astype(np.float32)
    assert_grads_match_finite_differences(lambda *a: sg.sum(op(*a) * W), args, _float_argnums(op), rtol=1e-3, atol=1e-4, eps=1e-6)


@pytest.mark.parametrize("op", [op for op in DIFF_OPS if op.kind == "float"], ids=lambda op: op.name)
def test_float_ops_promote_ints_to_float64(op):
    _skip_without_scipy(op)
    lo, hi = op.domain
    x = np.full((2,), (lo + hi) / 2)
    args = [np.round(x).astype(np.int64) if np.round(x[0]) > lo and np.round(x[0]) < hi else x] * op.arity
    assert np.asarray(op(*args)).dtype == np.float64


@pytest.mark.parametrize("op,shapes", _op_cases(COMPARE_OPS))
def test_compare_value_and_dtype(op, shapes):
    rng = _seeded(op.name)
    logical = op.name.startswith("logical")
    if logical:
        args = [rng.random(s) < 0.5 for s in shapes]
    else:
        args = [rng.integers(0, 3, s).astype(np.float64) for s in shapes]  # plenty of ties
    expected = compare_reference(op.name)(*args)
    for got in (op(*args), sg.compile(lambda *a: op(*a))(*args)):
        got = np.asarray(got)
        assert got.dtype == np.bool_
        np.testing.assert_array_equal(got, expected)


NON_FINITE_SCALAR_CASES = [  # fn(ns, x) comparing with an infinite or NaN Python scalar
    ("less-inf", lambda ns, x: ns.less(x, np.inf)), ("less_equal-minus-inf", lambda ns, x: ns.less_equal(x, -np.inf)),
    ("greater-minus-inf", lambda ns, x: x > -np.inf), ("greater_equal-inf", lambda ns, x: x >= np.inf),
    ("equal-inf", lambda ns, x: ns.equal(x, np.inf)), ("not_equal-minus-inf", lambda ns, x: x != -np.inf),
    ("abs-less-inf", lambda ns, x: ns.abs(x) < np.inf), ("where-finite", lambda ns, x: ns.where(x < np.inf, x, 0.0)),
    ("maximum-inf", lambda ns, x: ns.maximum(x, np.inf)), ("clip-upper", lambda ns, x: ns.clip(x, None, 1.0)),
    ("less-nan", lambda ns, x: ns.less(x, np.nan)), ("not_equal-nan", lambda ns, x: x != np.nan),
    ("minimum-nan", lambda ns, x: ns.minimum(x, np.nan)),
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("fn", [pytest.param(f, id=i) for i, f in NON_FINITE_SCALAR_CASES])
def test_comparisons_with_non_finite_scalars_follow_ieee(fn, dtype):
    # SymPy would fold x < inf to True (its real symbols are finite): wrong at x = inf and NaN;
    # it refuses to compare with NaN at all
    x = np.array([1.0, np.inf, -np.inf, np.nan, 0.0], dtype)
    with np.errstate(invalid="ignore"):  # maximum(x, inf) computes x + inf for a NaN
        expected = fn(NP, x)
        results = [("eager", fn(SG, x)), ("numpy", sg.compile(lambda a: fn(SG, a), backend="numpy")(x)),
                   ("llvm", sg.compile(lambda a: fn(SG, a))(x)), ("tensor", fn(SG, sg.tensor(x)).numpy())]
    for path, got in results:
        assert got.shape == expected.shape and got.dtype == expected.dtype, path
        np.testing.assert_array_equal(got, expected, err_msg=path)


# ----------------------------------------------------------------------------- subgradient conventions

def test_relu_grad_at_zero_is_zero():
    g = sg.grad(lambda x: sg.sum(sg.relu(x)))(np.array([-1.0, 0.0, 1.0]))
    np.testing.assert_array_equal(g, [0.0, 0.0, 1.0])


def test_abs_grad_at_zero_is_zero():
    g = sg.grad(lambda x: sg.sum(sg.abs(x)))(np.array([-1.0, 0.0, 1.0]))
    np.testing.assert_array_equal(g, [-1.0, 0.0, 1.0])


@pytest.mark.parametrize("fn", [sg.maximum, sg.minimum], ids=["maximum", "minimum"])
def test_maximum_minimum_ties_split_evenly(fn):
    a = np.array([1.0, 2.0, 3.0])
    b = np.array([1.0, 1.0, 4.0])
    ga, gb = sg.grad(lambda a, b: sg.sum(fn(a, b)), argnums=(0, 1))(a, b)
    big = fn is sg.maximum
    np.testing.assert_array_equal(ga, [0.5, 1.0 if big else 0.0, 0.0 if big else 1.0])
    np.testing.assert_array_equal(gb, [0.5, 0.0 if big else 1.0, 1.0 if big else 0.0])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", ["maximum", "minimum"])
def test_maximum_minimum_give_a_nan_operand_pytorchs_gradient(name, dtype):
    """A NaN in either operand: gradient 1 to both, as torch.maximum's (it was 1/2 each, from (a + b) / 2; JAX's is
    0), eagerly (each step: the second runs the lowered adjoint, the third the captured step) and compiled."""
    nan = np.nan
    a = np.array([nan, 1.0, nan, 2.0, 1.0, np.inf, 0.0], dtype)
    b = np.array([1.0, nan, nan, 2.0, 2.0, np.inf, nan], dtype)
    expected = ([1.0, 1.0, 1.0, 0.5, 0.0, 0.5, 1.0], [1.0, 1.0, 1.0, 0.5, 1.0, 0.5, 1.0])
    if name == "minimum":
        expected = ([1.0, 1.0, 1.0, 0.5, 1.0, 0.5, 1.0], [1.0, 1.0, 1.0, 0.5, 0.0, 0.5, 1.0])
    torch = pytest.importorskip("torch")
    ta, tb = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    getattr(torch, name)(ta, tb).sum().backward()
    np.testing.assert_array_equal(ta.grad.numpy(), expected[0])
    np.testing.assert_array_equal(tb.grad.numpy(), expected[1])
    for step in range(3):
        x, y = sg.tensor(a, requires_grad=True), sg.tensor(b, requires_grad=True)
        (getattr(sg, name)(x, y) * 1.0).sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), expected[0], err_msg=f"eager step {step}")
        np.testing.assert_array_equal(y.grad.numpy(), expected[1], err_msg=f"eager step {step}")
    grad = sg.grad(lambda a, b: sg.sum(getattr(sg, name)(a, b)), argnums=(0, 1))
    for path, fn in [("grad", grad), ("numpy", sg.compile(grad, backend="numpy")), ("llvm", sg.compile(grad))]:
        for got, want in zip(fn(a, b), expected):
            assert got.dtype == dtype, path
            np.testing.assert_array_equal(got, want, err_msg=path)


@pytest.mark.parametrize("name", ["maximum", "minimum", "fmax", "fmin"])
def test_extremum_gives_an_infinite_winner_and_its_loser_pytorchs_gradient(name):
    """The operand that loses to an infinite one gets 0 even where the cotangent is infinite: the gradient of
    exp(maximum(x, inf) / 10) was 0 * inf = NaN at x (maximum's derivative has several nonzero branches, so
    it was not folded as a mask), on every path; PyTorch gives 0 there."""
    torch = pytest.importorskip("torch")
    inf = np.inf
    a = np.array([1.0, -2.0, -inf, inf, inf, -inf, 3.0, 0.0])
    b = np.array([inf, inf, 1.0, 1.0, -inf, inf, -inf, -inf])
    outer = {"plain": lambda ns, v: v * 3.0, "exp": lambda ns, v: ns.exp(v * 0.1)}
    for label, wrap in outer.items():
        ta, tb = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
        wrap(torch, getattr(torch, name)(ta, tb)).sum().backward()
        expected = ta.grad.numpy(), tb.grad.numpy()
        f = lambda x, y: sg.sum(wrap(sg, getattr(sg, name)(x, y)))  # noqa: E731
        for path, (_, grads) in value_and_grad_everywhere(f, (a, b), (0, 1)).items():
            for got, want in zip(grads, expected):
                np.testing.assert_array_equal(got, want, err_msg=f"{name} {label} {path}")
        finite = np.array([1.0, -2.0, 0.0])
        g = sg.grad(lambda x: sg.sum(wrap(sg, getattr(sg, name)(x, inf))))(finite)
        ta = torch.tensor(finite, requires_grad=True)
        wrap(torch, getattr(torch, name)(ta, torch.tensor(inf, dtype=torch.float64))).sum().backward()
        np.testing.assert_array_equal(g, ta.grad.numpy(), err_msg=f"{name} {label} with a Python inf")


def test_clip_grad_is_one_at_the_bounds():
    x = np.array([-2.0, -1.0, 0.0, 1.0, 2.0])
    g = sg.grad(lambda x: sg.sum(sg.clip(x, -1.0, 1.0)))(x)
    np.testing.assert_array_equal(g, [0.0, 1.0, 1.0, 1.0, 0.0])
    # with array bounds, the gradient of a bound is 1 only where it is active strictly
    lo, hi = np.full(5, -1.0), np.full(5, 1.0)
    gx, glo, ghi = sg.grad(lambda x, lo, hi: sg.sum(sg.clip(x, lo, hi)), argnums=(0, 1, 2))(x, lo, hi)
    np.testing.assert_array_equal(gx, [0.0, 1.0, 1.0, 1.0, 0.0])
    np.testing.assert_array_equal(glo, [1.0, 0.0, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(ghi, [0.0, 0.0, 0.0, 0.0, 1.0])


def test_clip_grad_is_zero_at_a_nan_input_as_torch_clamp():
    """clip(NaN) is NaN with gradient 0 to x and to each bound, as torch.clamp's (x's was 1), on every path and
    with one bound (np.clip's forms) as with two."""
    torch = pytest.importorskip("torch")
    x = np.array([np.nan, -2.0, 0.5, 2.0, np.inf, -np.inf])
    lo, hi = np.full(6, -1.0), np.full(6, 1.0)
    tx, tlo, thi = (torch.tensor(a, requires_grad=True) for a in (x, lo, hi))
    torch.clamp(tx, tlo, thi).sum().backward()
    expected = tuple(t.grad.numpy() for t in (tx, tlo, thi))
    for path, (value, grads) in value_and_grad_everywhere(lambda x, lo, hi: sg.sum(sg.clip(x, lo, hi)),
                                                          (x, lo, hi), (0, 1, 2)).items():
        for got, want in zip(grads, expected):
            np.testing.assert_array_equal(got, want, err_msg=path)
    for bounds, kwargs in (((-1.0, None), {"min": -1.0}), ((None, 1.0), {"max": 1.0}), ((-1.0, 1.0), {})):
        tx = torch.tensor(x, requires_grad=True)
        torch.clamp(tx, **kwargs or {"min": -1.0, "max": 1.0}).sum().backward()
        for path, (value, (g,)) in value_and_grad_everywhere(lambda a: sg.sum(sg.clip(a, *bounds)), (x,)).items():
            np.testing.assert_array_equal(g, tx.grad.numpy(), err_msg=f"{bounds} {path}")
            assert np.isnan(value), path
    t = sg.tensor(x, requires_grad=True)
    t.clamp(min=-1.0).sum().backward()
    np.testing.assert_array_equal(t.grad.numpy(), [0.0, 0.0, 1.0, 1.0, 1.0, 0.0])


def test_clip_with_one_bound():
    x = np.array([-2.0, 0.5, 2.0])
    np.testing.assert_array_equal(sg.clip(x, None, 1.0), np.clip(x, None, 1.0))
    np.testing.assert_array_equal(sg.grad(lambda x: sg.sum(sg.clip(x, 0.0)))(x), [0.0, 1.0, 1.0])


def test_clip_with_crossed_bounds_gives_hi_like_numpy():
    x = np.array([-2.0, 0.0, 2.0])
    lo, hi = np.full(3, 1.0), np.full(3, -1.0)
    np.testing.assert_array_equal(sg.clip(x, 1.0, -1.0), np.clip(x, 1.0, -1.0))
    np.testing.assert_array_equal(sg.compile(lambda x, lo, hi: sg.clip(x, lo, hi))(x, lo, hi), np.clip(x, lo, hi))
    gx, glo, ghi = sg.grad(lambda x, lo, hi: sg.sum(sg.clip(x, lo, hi)), argnums=(0, 1, 2))(x, lo, hi)
    np.testing.assert_array_equal(gx, 0.0)
    np.testing.assert_array_equal(glo, 0.0)
    np.testing.assert_array_equal(ghi, 1.0)


# x ** y at x = 0 and at negative x, as PyTorch gives them (value, d/dx, d/dy): d/dx is 0 where
# y == 0, d/dy is 0 where x == 0 <= y; elsewhere the calculus values, inf and NaN included.
POWER_EDGES = [
    (0.0, 0.0, 1.0, 0.0, 0.0), (0.0, 0.5, 0.0, np.inf, 0.0), (0.0, 1.0, 0.0, 1.0, 0.0), (0.0, 2.0, 0.0, 0.0, 0.0),
    (0.0, 3.0, 0.0, 0.0, 0.0), (0.0, 1.5, 0.0, 0.0, 0.0), (0.0, -1.0, np.inf, -np.inf, -np.inf),
    (-2.0, 0.0, 1.0, 0.0, np.nan), (-2.0, 1.0, -2.0, 1.0, np.nan), (-2.0, 2.0, 4.0, -4.0, np.nan),
    (-2.0, 3.0, -8.0, 12.0, np.nan), (-2.0, -1.0, -0.5, -0.25, np.nan), (2.0, 0.0, 1.0, 0.0, math.log(2.0)),
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("fn", [lambda a, b: a ** b, lambda a, b: sg.power(a, b)], ids=["operator", "power"])
def test_power_at_zero_and_negative_base_matches_pytorch(fn, dtype):
    x, y, value, dx, dy = (np.array(column, dtype=dtype) for column in zip(*POWER_EDGES))
    weights = np.arange(1, len(x) + 1, dtype=dtype)  # distinct cotangents: each entry checked on its own
    with np.errstate(all="ignore"):
        for path, (total, (gx, gy)) in value_and_grad_everywhere(lambda a, b: sg.sum(fn(a, b) * weights),
                                                                   (x, y), (0, 1)).items():
            assert gx.dtype == gy.dtype == dtype, path
            np.testing.assert_allclose(total, np.sum(value * weights), rtol=1e-6, err_msg=path)
            np.testing.assert_allclose(gx, dx * weights, rtol=1e-6, err_msg=f"d/dx, {path}")
            np.testing.assert_allclose(gy, dy * weights, rtol=1e-6, err_msg=f"d/dy, {path}")


@pytest.mark.parametrize("exponent", [0.0, 0.5, 1.0, 2.0, 3, -1.0])
def test_power_with_constant_exponent_at_zero(exponent):
    x = np.array([0.0, -2.0, 2.0])
    with np.errstate(all="ignore"):
        expected = np.where(exponent == 0, 0.0, exponent * x ** (exponent - 1.0))
        for path, (_, (g,)) in value_and_grad_everywhere(lambda a: sg.sum(a ** exponent), (x,)).items():
            np.testing.assert_allclose(g, expected, rtol=1e-12, err_msg=path)


@pytest.mark.parametrize("base", [0.0, 2.0])
def test_power_with_constant_base_at_zero(base):
    y = np.array([0.0, 1.0, 2.0, 0.5, -1.0])
    with np.errstate(all="ignore"):
        expected = np.where((base == 0) & (y >= 0), 0.0, base ** y * np.log(base))
        for path, (_, (g,)) in value_and_grad_everywhere(lambda b: sg.sum(base ** b), (y,)).items():
            np.testing.assert_allclose(g, expected, rtol=1e-12, err_msg=path)


def test_power_at_zero_agrees_with_finite_differences_where_differentiable():
    # x = 0 with y >= 1 and y = 0.5 at x = 1: both one-sided quotients agree there
    x, y = np.array([0.0, 0.0, 0.0, 1.0]), np.array([1.0, 2.0, 3.0, 0.5])
    assert_grads_match_finite_differences(lambda a, b: sg.sum(a ** b), (x, y), (0, 1))


def test_power_at_zero_matches_torch_on_a_grid():
    torch = pytest.importorskip("torch")
    grid = np.array([-2.0, -1.0, -0.0, 0.0, 0.5, 2.0])
    exponents = np.array([-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0])
    x, y = (a.ravel() for a in np.meshgrid(grid, exponents))
    for dtype in (np.float64, np.float32):
        tx, ty = (torch.tensor(a.astype(dtype), requires_grad=True) for a in (x, y))
        (tx ** ty).sum().backward()
        with np.errstate(all="ignore"):
            paths = value_and_grad_everywhere(lambda a, b: sg.sum(a ** b), (x.astype(dtype), y.astype(dtype)), (0, 1))
            for path, (_, (gx, gy)) in paths.items():
                np.testing.assert_allclose(gx, tx.grad.numpy(), rtol=1e-5, err_msg=f"d/dx, {path}")
                np.testing.assert_allclose(gy, ty.grad.numpy(), rtol=1e-5, err_msg=f"d/dy, {path}")


def test_float32_stays_float32_through_grad():
    x = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    f = lambda x: sg.sum(sg.tanh(x) * 2.0 + sg.exp(x) / 3)  # Python scalars are weak
    value, g = sg.value_and_grad(f)(x)
    assert np.asarray(value).dtype == np.float32
    assert g.dtype == np.float32


# ----------------------------------------------------------------------------- structural functions

def _r(shape, seed=0, lo=-1.0, hi=1.0):
    return np.random.default_rng(seed).uniform(lo, hi, shape)


def _distinct(shape, seed=0):
    """Values with no ties (safe for max/min/sort-like ops)."""
    n = int(np.prod(shape))
    return (np.random.default_rng(seed).permutation(n).astype(np.float64) / n - 0.5).reshape(shape) + 0.01


IDX = np.array([2, 0, -1, 1])
IDX2 = np.array([[0, 1], [2, 0]])
MASK = np.array([[True, False, True, False], [False, False, True, True], [True, True, False, False]])

# (id, fn(ns, *args), args). fn is written once and run with ns=NP (reference) and ns=SG.
STRUCTURAL = [
    ("sum-all", lambda ns, x: ns.sum(x), [_r((3, 4))]),
    ("sum-axis0", lambda ns, x: ns.sum(x, axis=0), [_r((3, 4))]),
    ("sum-axis-neg-keep", lambda ns, x: ns.sum(x, axis=-1, keepdims=True), [_r((3, 4))]),
    ("sum-tuple", lambda ns, x: ns.sum(x, axis=(0, 2)), [_r((2, 3, 4))]),
    ("sum-tuple-keep", lambda ns, x: ns.sum(x, axis=(0, 2), keepdims=True), [_r((2, 3, 4))]),
    ("mean-all", lambda ns, x: ns.mean(x), [_r((3, 4))]),
    ("mean-axis1-keep", lambda ns, x: ns.mean(x, axis=1, keepdims=True), [_r((3, 4))]),
    ("mean-tuple", lambda ns, x: ns.mean(x, axis=(1, 2)), [_r((2, 3, 4))]),
    ("max-all", lambda ns, x: ns.max(x), [_distinct((3, 4))]),
    ("max-axis0", lambda ns, x: ns.max(x, axis=0), [_distinct((3, 4))]),
    ("max-tuple-keep", lambda ns, x: ns.max(x, axis=(0, 1), keepdims=True), [_distinct((2, 3, 4))]),
    ("min-all", lambda ns, x: ns.min(x), [_distinct((3, 4), 1)]),
    ("min-axis-1", lambda ns, x: ns.min(x, axis=-1), [_distinct((3, 4), 1)]),
    ("prod-all", lambda ns, x: ns.prod(x), [_r((2, 3), 2, 0.5, 1.5)]),
    ("prod-axis1", lambda ns, x: ns.prod(x, axis=1), [_r((3, 4), 2, -1.5, 1.5)]),
    ("prod-tuple-keep", lambda ns, x: ns.prod(x, axis=(0, 2), keepdims=True), [_r((2, 3, 2), 2, 0.5, 1.5)]),
    ("cumsum-all", lambda ns, x: ns.cumsum(x), [_r((3, 4))]),
    ("cumsum-axis0", lambda ns, x: ns.cumsum(x, axis=0), [_r((3, 4))]),
    ("cumsum-axis-neg-reverse", lambda ns, x: ns.cumsum(x, axis=-1, reverse=True), [_r((2, 3, 4))]),
    ("cumsum-axis1-reverse", lambda ns, x: ns.cumsum(x, axis=1, reverse=True), [_r((2, 3, 4))]),
    ("cumsum-0d", lambda ns, x: ns.cumsum(x, axis=0), [_r(())]),
    ("cumprod-all", lambda ns, x: ns.cumprod(x), [_r((3, 4), 2, 0.5, 1.5)]),
    ("cumprod-axis1", lambda ns, x: ns.cumprod(x, axis=1), [_r((3, 5), 2, -1.5, 1.5)]),
    ("cumprod-axis0-reverse", lambda ns, x: ns.cumprod(x, axis=0, reverse=True), [_r((5, 2, 3), 2, -1.5, 1.5)]),
    ("cumprod-axis-neg-reverse", lambda ns, x: ns.cumprod(x, axis=-1, reverse=True), [_r((2, 7), 3, -1.5, 1.5)]),
    ("cumprod-0d", lambda ns, x: ns.cumprod(x), [_r(())]),
    ("cumprod-of-computed", lambda ns, a, b: ns.cumprod(a * b + 1.0, axis=0) * a, [_r((4, 3)), _r((3,), 1)]),
    ("roll", lambda ns, x: ns.roll(x, 1), [_r((3, 4))]),
    ("roll-axis-neg", lambda ns, x: ns.roll(x, -1, axis=1), [_r((3, 4))]),
    ("roll-axes", lambda ns, x: ns.roll(x, (1, 5), axis=(0, -1)), [_r((2, 3, 4))]),
    ("var-all", lambda ns, x: ns.var(x), [_r((3, 4))]),
    ("var-axis0", lambda ns, x: ns.var(x, axis=0), [_r((3, 4))]),
    ("var-tuple-keep", lambda ns, x: ns.var(x, axis=(0, 2), keepdims=True), [_r((2, 3, 4))]),
    ("logsumexp-all", lambda ns, x: ns.logsumexp(x), [_r((3, 4))]),
    ("logsumexp-axis1", lambda ns, x: ns.logsumexp(x, axis=1), [_r((3, 4))]),
    ("logsumexp-keep", lambda ns, x: ns.logsumexp(x, axis=0, keepdims=True), [_r((3, 4))]),
    ("softmax", lambda ns, x: ns.softmax(x), [_r((3, 4))]),
    ("softmax-axis0", lambda ns, x: ns.softmax(x, axis=0), [_r((3, 4))]),
    ("log_softmax", lambda ns, x: ns.log_softmax(x), [_r((3, 4))]),
    ("log_softmax-axis0", lambda ns, x: ns.log_softmax(x, axis=0), [_r((3, 4))]),
    ("matmul-2d", lambda ns, a, b: ns.matmul(a, b), [_r((3, 4)), _r((4, 2), 1)]),
    ("matmul-op", lambda ns, a, b: a @ b, [_r((3, 4)), _r((4, 2), 1)]),
    ("matmul-1d-2d", lambda ns, a, b: ns.matmul(a, b), [_r((4,)), _r((4, 2), 1)]),
    ("matmul-2d-1d", lambda ns, a, b: ns.matmul(a, b), [_r((3, 4)), _r((4,), 1)]),
    ("matmul-1d-1d", lambda ns, a, b: ns.matmul(a, b), [_r((4,)), _r((4,), 1)]),
    ("matmul-batched", lambda ns, a, b: ns.matmul(a, b), [_r((2, 3, 4)), _r((2, 4, 2), 1)]),
    ("matmul-batch-2d", lambda ns, a, b: ns.matmul(a, b), [_r((2, 3, 4)), _r((4, 2), 1)]),
    ("matmul-2d-batch", lambda ns, a, b: ns.matmul(a, b), [_r((3, 4)), _r((2, 4, 2), 1)]),
    ("matmul-batch-bcast", lambda ns, a, b: ns.matmul(a, b), [_r((2, 1, 3, 4)), _r((3, 4, 2), 1)]),
    ("matmul-batch-1d", lambda ns, a, b: ns.matmul(a, b), [_r((2, 3, 4)), _r((4,), 1)]),
    ("dot-1d", lambda ns, a, b: ns.dot(a, b), [_r((4,)), _r((4,), 1)]),
    ("dot-2d", lambda ns, a, b: ns.dot(a, b), [_r((3, 4)), _r((4, 2), 1)]),
    ("dot-2d-3d", lambda ns, a, b: ns.dot(a, b), [_r((3, 4)), _r((2, 4, 2), 1)]),
    ("dot-scalar", lambda ns, a, b: ns.dot(a, b), [_r(()), _r((3,), 1)]),
    ("inner-1d", lambda ns, a, b: ns.inner(a, b), [_r((4,)), _r((4,), 1)]),
    # NumPy's inner contracts the last axes and keeps all others: (3,4),(2,4) -> (3,2), not a row-wise sum
    ("inner-2d", lambda ns, a, b: ns.inner(a, b), [_r((3, 4)), _r((2, 4), 1)]),
    ("inner-square", lambda ns, a, b: ns.inner(a, b), [_r((3, 3)), _r((3, 3), 1)]),
    ("inner-3d-2d", lambda ns, a, b: ns.inner(a, b), [_r((2, 3, 4)), _r((5, 4), 1)]),
    ("inner-1d-3d", lambda ns, a, b: ns.inner(a, b), [_r((4,)), _r((2, 3, 4), 1)]),
    ("inner-scalar", lambda ns, a, b: ns.inner(a, b), [_r(()), _r((3,), 1)]),
    ("outer", lambda ns, a, b: ns.outer(a, b), [_r((3,)), _r((4,), 1)]),
    # lists holding traced values stack, as np.array([...]) does in autograd code
    ("asarray-list", lambda ns, a: ns.asarray([a[0], a[1] * 2, 3.0]), [_r((3,))]),
    ("asarray-nested", lambda ns, a: ns.asarray([[a[0], a[1]], (a[2], 1.0)]), [_r((3,))]),
    ("asarray-rows", lambda ns, a, b: ns.asarray([a, b, a * b]), [_r((3,)), _r((3,), 1)]),
    ("outer-2d", lambda ns, a, b: ns.outer(a, b), [_r((2, 2)), _r((3,), 1)]),
    ("einsum-ij,jk", lambda ns, a, b: ns.einsum("ij,jk->ik", a, b), [_r((3, 4)), _r((4, 2), 1)]),
    ("einsum-bmm", lambda ns, a, b: ns.einsum("bij,bjk->bik", a, b), [_r((2, 3, 4)), _r((2, 4, 2), 1)]),
    ("einsum-trace", lambda ns, a: ns.einsum("ii->", a), [_r((3, 3))]),
    ("einsum-inner", lambda ns, a, b: ns.einsum("i,i", a, b), [_r((4,)), _r((4,), 1)]),
    ("einsum-diag", lambda ns, a: ns.einsum("ii->i", a), [_r((3, 3))]),
    ("einsum-full", lambda ns, a, b: ns.einsum("ij,ij->", a, b), [_r((3, 4)), _r((3, 4), 1)]),
    ("einsum-transpose", lambda ns, a: ns.einsum("ijk->kij", a), [_r((2, 3, 4))]),
    ("var-ddof", lambda ns, x: ns.var(x, axis=1, ddof=1), [_r((3, 4))]),
    ("take-none-2d", lambda ns, x: ns.take(x, np.array([[1, -1], [0, 5]])), [_r((3, 4))]),
    ("transpose", lambda ns, x: ns.transpose(x), [_r((3, 4))]),
    ("transpose-axes", lambda ns, x: ns.transpose(x, (1, 2, 0)), [_r((2, 3, 4))]),
    ("T", lambda ns, x: x.T, [_r((3, 4))]),
    ("reshape", lambda ns, x: ns.reshape(x, (4, 3)), [_r((3, 4))]),
    ("reshape-neg", lambda ns, x: ns.reshape(x, (2, -1)), [_r((3, 4))]),
    ("reshape-flat", lambda ns, x: ns.reshape(x, -1), [_r((3, 4))]),
    ("broadcast_to", lambda ns, x: ns.broadcast_to(x, (2, 3, 4)), [_r((3, 1))]),
    ("expand_dims", lambda ns, x: ns.expand_dims(x, 1), [_r((3, 4))]),
    ("expand_dims-neg", lambda ns, x: ns.expand_dims(x, -1), [_r((3, 4))]),
    ("squeeze", lambda ns, x: ns.squeeze(x), [_r((3, 1, 4, 1))]),
    ("squeeze-axis", lambda ns, x: ns.squeeze(x, axis=1), [_r((3, 1, 4, 1))]),
    ("concatenate", lambda ns, a, b: ns.concatenate([a, b]), [_r((2, 4)), _r((3, 4), 1)]),
    ("concatenate-axis1", lambda ns, a, b: ns.concatenate([a, b, a], axis=1), [_r((3, 2)), _r((3, 4), 1)]),
    ("stack", lambda ns, a, b: ns.stack([a, b]), [_r((3, 4)), _r((3, 4), 1)]),
    ("stack-axis-1", lambda ns, a, b: ns.stack([a, b, a], axis=-1), [_r((3, 4)), _r((3, 4), 1)]),
    ("take-none", lambda ns, x: ns.take(x, IDX), [_r((3, 4))]),
    # an index computed in the program is traced: checked and wrapped when the program runs
    ("take-traced-index", lambda ns, x: ns.take(x, ns.astype(ns.sign(x[0]) * 2 - 1, np.int64), axis=1), [_r((3, 4))]),
    ("take-axis0", lambda ns, x: ns.take(x, np.array([2, 0, 2, -1]), axis=0), [_r((3, 4))]),
    ("take-axis1-2d", lambda ns, x: ns.take(x, IDX2, axis=1), [_r((3, 4))]),
    ("take-axis-neg", lambda ns, x: ns.take(x, np.array([-1, -2, 0]), axis=-1), [_r((3, 4))]),
    ("take_along_axis", lambda ns, x: ns.take_along_axis(x, np.array([[0, 3], [1, 1], [2, -1]]), axis=1),
     [_r((3, 4))]),
    ("take_along_axis0", lambda ns, x: ns.take_along_axis(x, np.array([[2, 0, 1, 1]]), axis=0), [_r((3, 4))]),
    ("index-int", lambda ns, x: x[1], [_r((3, 4))]),
    ("index-int-neg", lambda ns, x: x[-1, 2], [_r((3, 4))]),
    ("index-slice", lambda ns, x: x[1:, :3], [_r((3, 4))]),
    ("index-slice-negstep", lambda ns, x: x[::-1, 3:0:-2], [_r((3, 4))]),
    ("index-none", lambda ns, x: x[None, :, None, 1], [_r((3, 4))]),
    ("index-ellipsis", lambda ns, x: x[..., 1], [_r((2, 3, 4))]),
    ("index-ellipsis-mid", lambda ns, x: x[0, ..., None, ::2], [_r((2, 3, 4))]),
    ("index-intarray", lambda ns, x: x[np.array([2, 0, 2])], [_r((3, 4))]),
    ("index-intarray-axis1", lambda ns, x: x[:, np.array([[3, 0], [-1, 1]])], [_r((3, 4))]),
    ("index-two-adjacent", lambda ns, x: x[:, np.array([0, 2, 1]), np.array([1, 3, 3])], [_r((2, 3, 4))]),
    ("index-two-nonadjacent", lambda ns, x: x[np.array([0, 1, 1]), :, np.array([1, 3, 3])], [_r((2, 3, 4))]),
    ("index-two-bcast", lambda ns, x: x[np.array([[0], [2]]), np.array([1, 3, 3])], [_r((3, 4))]),
    ("index-int-and-array-split", lambda ns, x: x[0, :, np.array([0, 2, 3])], [_r((2, 3, 4))]),
    ("index-array-none-array", lambda ns, x: x[np.array([0, 2]), None, np.array([1, 1])], [_r((3, 4))]),
    ("index-chained", lambda ns, x: x[np.array([0, 2]), 1:4][:, ::-1], [_r((3, 4))]),
    ("index-bool-mask", lambda ns, x: x[MASK], [_r((3, 4))]),
    ("index-bool-row", lambda ns, x: x[np.array([True, False, True])], [_r((3, 4))]),
    ("index-list", lambda ns, x: x[[0, 0, 2]], [_r((3, 4))]),
    ("astype-f32", lambda ns, x: ns.astype(x, np.float32) * 1.0, [_r((3, 4))]),
    ("where", lambda ns, a, b: ns.where(a > b, a * b, a - b), [_r((3, 4)), _r((4,), 1)]),
    ("where-scalar", lambda ns, a: ns.where(a > 0, a, 0.0), [_r((3, 4))]),
    ("clip", lambda ns, x: ns.clip(x, -0.5, 0.5), [_r((3, 4), 5) * 0.9 + 0.02]),
]

# NumPy's names added for issue 13 (differentiable outputs; integer ones are in test_numpy_names.py)
NP.cummax = lambda x, axis=None, reverse=False: _np_cumulative(np.maximum.accumulate)(x, axis, reverse)
NP.cummin = lambda x, axis=None, reverse=False: _np_cumulative(np.minimum.accumulate)(x, axis, reverse)
STRUCTURAL += [
    ("flip", lambda ns, x: ns.flip(x), [_r((3, 4))]),
    ("flip-axis", lambda ns, x: ns.flip(x, -1) + ns.fliplr(x) * ns.flipud(x), [_r((3, 4))]),
    ("tile", lambda ns, x: ns.tile(x, (2, 1, 3)), [_r((3, 4))]),
    ("tile-int", lambda ns, x: ns.tile(x, 2), [_r((3,))]),
    ("repeat", lambda ns, x: ns.repeat(x, 2), [_r((3, 4))]),
    ("repeat-axis", lambda ns, x: ns.repeat(x, [1, 0, 2], axis=0), [_r((3, 4))]),
    ("hstack", lambda ns, a, b: ns.hstack([a, b]), [_r((3, 4)), _r((3, 2), 1)]),
    ("vstack-1d", lambda ns, a, b: ns.vstack([a, b * 2]), [_r((4,)), _r((4,), 1)]),
    ("dstack", lambda ns, a: ns.dstack([a, a * a]), [_r((3, 4))]),
    ("column_stack", lambda ns, a, b: ns.column_stack([a, b]), [_r((4,)), _r((4, 2), 1)]),
    ("split", lambda ns, x: ns.split(x, 2, axis=1)[1] * ns.split(x, [1, 3], axis=1)[2][:, :1], [_r((3, 4))]),
    ("array_split", lambda ns, x: ns.array_split(x, 3)[1] + ns.array_split(x, 3)[2], [_r((7,))]),
    ("append", lambda ns, a, b: ns.append(a, b), [_r((3, 4)), _r((2,), 1)]),
    ("append-axis", lambda ns, a: ns.append(a, a * 2, axis=1), [_r((3, 4))]),
    ("pad-constant", lambda ns, x: ns.pad(x, ((1, 2), (0, 1)), constant_values=3.0), [_r((3, 4))]),
    ("pad-reflect", lambda ns, x: ns.pad(x, 2, mode="reflect"), [_r((3, 4))]),
    ("pad-edge", lambda ns, x: ns.pad(x, (1, 3), mode="edge"), [_r((5,))]),
    ("pad-wrap", lambda ns, x: ns.pad(x, 2, mode="wrap"), [_r((3, 4))]),
    ("pad-symmetric", lambda ns, x: ns.pad(x, ((0, 2), (1, 1)), mode="symmetric"), [_r((3, 4))]),
    ("tril", lambda ns, x: ns.tril(x), [_r((3, 4))]),
    ("tril-k", lambda ns, x: ns.tril(x, -1), [_r((2, 4, 4))]),
    ("triu-k", lambda ns, x: ns.triu(x, 1), [_r((3, 4))]),
    ("tril-1d", lambda ns, x: ns.tril(x), [_r((4,))]),
    ("diag-1d", lambda ns, x: ns.diag(x), [_r((4,))]),
    ("diag-1d-k", lambda ns, x: ns.diag(x, 2) + ns.diag(x[:3], -3), [_r((4,))]),
    ("diag-2d", lambda ns, x: ns.diag(x, 1), [_r((3, 4))]),
    ("diagonal", lambda ns, x: ns.diagonal(x, -1), [_r((3, 4))]),
    ("diagonal-axes", lambda ns, x: ns.diagonal(x, 1, 2, 0), [_r((3, 2, 4))]),
    ("trace", lambda ns, x: ns.trace(x), [_r((3, 4))]),
    ("trace-offset-axes", lambda ns, x: ns.trace(x, -1, 1, 2), [_r((2, 4, 4))]),
    ("sort", lambda ns, x: ns.sort(x), [_distinct((3, 4))]),
    ("sort-axis0", lambda ns, x: ns.sort(x, axis=0), [_distinct((3, 4), 1)]),
    ("sort-flat", lambda ns, x: ns.sort(x, axis=None), [_distinct((3, 4), 2)]),
    ("cummax", lambda ns, x: ns.cummax(x, axis=1), [_distinct((3, 5))]),
    ("cummax-flat-reverse", lambda ns, x: ns.cummax(x, reverse=True), [_distinct((3, 4), 3)]),
    ("cummin-axis0", lambda ns, x: ns.cummin(x, axis=0), [_distinct((6, 2), 4)]),
    ("std", lambda ns, x: ns.std(x, axis=1, ddof=1), [_r((3, 4))]),
    ("tensordot-axes", lambda ns, a, b: ns.tensordot(a, b, axes=([1, 0], [0, 2])), [_r((3, 4, 2)), _r((4, 2, 3), 1)]),
    ("tensordot-2", lambda ns, a, b: ns.tensordot(a, b), [_r((2, 3, 4)), _r((3, 4), 1)]),
    ("tensordot-0", lambda ns, a, b: ns.tensordot(a, b, 0), [_r((3,)), _r((2,), 1)]),
    ("vdot", lambda ns, a, b: ns.vdot(a, b), [_r((3, 4)), _r((2, 6), 1)]),
    ("convolve-full", lambda ns, a, v: ns.convolve(a, v), [_r((6,)), _r((3,), 1)]),
    ("convolve-same-swapped", lambda ns, a, v: ns.convolve(a, v, "same"), [_r((3,)), _r((6,), 1)]),
    ("convolve-valid", lambda ns, a, v: ns.convolve(a, v, "valid"), [_r((6,)), _r((4,), 1)]),
    ("correlate-valid", lambda ns, a, v: ns.correlate(a, v), [_r((6,)), _r((3,), 1)]),
    ("correlate-full-swapped", lambda ns, a, v: ns.correlate(a, v, "full"), [_r((3,)), _r((5,), 1)]),
    ("correlate-same", lambda ns, a, v: ns.correlate(a, v, "same"), [_r((6,)), _r((4,), 1)]),
    ("einsum-ellipsis", lambda ns, a, b: ns.einsum("...ij,jk->...ik", a, b), [_r((2, 3, 4)), _r((4, 2), 1)]),
    ("einsum-ellipsis-implicit", lambda ns, a, b: ns.einsum("...i,...i", a, b), [_r((3, 4)), _r((4,), 1)]),
    ("einsum-ellipsis-broadcast", lambda ns, a, b: ns.einsum("...i,...i->...", a, b), [_r((3, 1, 4)), _r((2, 4), 1)]),
    ("einsum-sublists", lambda ns, a, b: ns.einsum(a, [0, 1], b, [1, 2], [0, 2]), [_r((3, 4)), _r((4, 2), 1)]),
    ("einsum-sublists-ellipsis", lambda ns, a, b: ns.einsum(a, [Ellipsis, 1], b, [1]), [_r((2, 3, 4)), _r((4,), 1)]),
    ("linspace-traced", lambda ns, a: ns.linspace(a[0], a[1], 5), [_r((2,))]),
    ("linspace-arrays", lambda ns, a: ns.linspace(a[0], a[1], 4, endpoint=False, axis=1), [_r((2, 3))]),
    ("array-of-traced", lambda ns, a: ns.array([a[0], a[1] ** 2, 1.0]), [_r((2,))]),
    ("mean-var-of-list", lambda ns, a: ns.mean([a[0], a[1] ** 2]) + ns.var([a[0], a[1] ** 2, 1.0]), [_r((2,))]),
    ("full_like-traced", lambda ns, a: ns.full_like(a, a[1]) * a, [_r((3,))]),
    ("constant-indexed-by-argmax", lambda ns, x: ns.array(np.arange(10.0) * 2)[ns.argmax(x, axis=1)] * x[:, 0],
     [_distinct((3, 4))]),
]

EMPTY_INDEX = np.array([], dtype=np.int64)
# Zero-size arrays through the structural ops: NumPy's shapes and values, gradients of the right shape.
ZERO_SIZE = [
    ("zero-matmul-flat-batch", lambda ns, a, b: a @ b, [_r((5, 7, 0)), _r((0, 1))]),
    ("zero-matmul-inner", lambda ns, a, b: a @ b, [_r((2, 0)), _r((0, 3))]),
    ("zero-matmul-rows", lambda ns, a, b: a @ b, [_r((0, 3)), _r((3, 2))]),
    ("zero-matmul-batch", lambda ns, a, b: a @ b, [_r((3, 2, 0)), _r((3, 0, 4))]),
    ("zero-matvec", lambda ns, a, b: a @ b, [_r((2, 0)), _r((0,))]),
    ("zero-dot-3d", lambda ns, a, b: ns.dot(a, b), [_r((2, 0)), _r((3, 0, 4))]),
    ("zero-take-empty-index", lambda ns, x: ns.take(x, EMPTY_INDEX), [_r((3,))]),
    ("zero-take-empty-index-2d", lambda ns, x: ns.take(x, np.zeros((2, 0), np.int64), axis=1), [_r((3, 4))]),
    ("zero-index-empty-array", lambda ns, x: x[EMPTY_INDEX], [_r((3, 4))]),
    ("zero-index-empty-list", lambda ns, x: x[:, []], [_r((3, 4))]),
    ("zero-take-empty-list", lambda ns, x: ns.take(x, [], axis=0), [_r((3, 4))]),
    ("zero-sum-axis", lambda ns, x: ns.sum(x, axis=0), [_r((0, 3))]),
    ("zero-prod-axis", lambda ns, x: ns.prod(x, axis=0), [_r((0, 3))]),
    ("zero-max-other-axis", lambda ns, x: ns.max(x, axis=1), [_r((0, 3))]),
    ("zero-broadcast", lambda ns, a, b: a * b, [_r((0, 1)), _r((3,))]),
    ("zero-constant", lambda ns, x: x + np.zeros((0, 3)), [_r((1, 3))]),
    ("zero-concatenate", lambda ns, a, b: ns.concatenate([a, b]), [_r((0, 3)), _r((2, 3))]),
    ("zero-cumsum", lambda ns, x: ns.cumsum(x, axis=0), [_r((0, 3))]),
    ("zero-cumsum-flat", lambda ns, x: ns.cumsum(x, reverse=True), [_r((2, 0))]),
    ("zero-cumprod-other-axis", lambda ns, x: ns.cumprod(x, axis=1, reverse=True), [_r((0, 3))]),
    ("zero-cumprod-empty-axis", lambda ns, x: ns.cumprod(x, axis=1), [_r((2, 0))]),
    ("zero-roll", lambda ns, x: ns.roll(x, 2, axis=0), [_r((0, 3))]),
    ("zero-reshape-transpose", lambda ns, x: ns.transpose(ns.reshape(x, (3, 0))), [_r((0, 3))]),
    ("zero-sort", lambda ns, x: ns.sort(x, axis=0), [_r((0, 3))]),
    ("zero-sort-other-axis", lambda ns, x: ns.sort(x, axis=1), [_r((0, 3))]),
    ("zero-cummax", lambda ns, x: ns.cummax(x, axis=0), [_r((0, 3))]),
    ("zero-flip-tile", lambda ns, x: ns.tile(ns.flip(x), (2, 1)), [_r((0, 3))]),
    ("zero-pad", lambda ns, x: ns.pad(x, 1), [_r((0, 2))]),
    ("zero-tril-diagonal", lambda ns, x: ns.tril(x) + ns.diagonal(x, 0, 1, 2)[:, :, None] * 2, [_r((0, 3, 3))]),
    ("zero-tensordot", lambda ns, a, b: ns.tensordot(a, b, 1), [_r((2, 0)), _r((0, 3))]),
]
STRUCTURAL += ZERO_SIZE

# Loops and branches (the Python loop and branch under NumPy, one node each under symgrad)
NP.fori_loop, NP.scan, NP.while_loop, NP.switch, NP.cond = sg.fori_loop, sg.scan, sg.while_loop, sg.switch, sg.cond
STRUCTURAL += [
    ("fori-loop", lambda ns, x: ns.fori_loop(0, 4, lambda i, v: ns.sin(v) * 0.9 + v[::-1] * 0.2, x), [_r((3, 2))]),
    ("scan-reverse", lambda ns, x, w: ns.scan(lambda c, r: (ns.tanh(c * w + r), c * r), w, x, reverse=True)[1],
     [_r((4, 3)), _r((3,), 1)]),
    ("switch", lambda ns, x: ns.switch(1, [ns.exp, lambda v: v * v, ns.sin], x), [_r((2, 3))]),
    ("while", lambda ns, x: ns.while_loop(lambda s: s[1] < 3, lambda s: (ns.sin(s[0]) * 1.1 + s[0][::-1], s[1] + 1),
                                          (x, 0))[0], [_r((2, 3))]),
]


# Sliding windows (symgrad/ops/conv.py): the primitives, with their NumPy references as the NumPy side
_WINDOW = dict(kernel=(2, 3), stride=(2, 1), dilation=(1, 2), padding=((1, 0), (2, 1)))
STRUCTURAL += [
    ("im2col", lambda ns, x: (conv_ops.im2col_impl if ns is NP else conv_ops.im2col_p)(x, fill="0", **_WINDOW),
     [_r((2, 3, 5, 6))]),
    ("col2im", lambda ns, x: (conv_ops.col2im_impl if ns is NP else conv_ops.col2im_p)(x, spatial=(5, 6), **_WINDOW),
     [_r((2, 3, 2, 3, 3, 5))]),
]


# Functions with derivative rules of their own (rules that agree with the function, so finite differences
# check them), and the same function in NumPy
@sg.custom_vjp
def _sin_times(x, y):
    return sg.sin(x) * y


_sin_times.defvjp(lambda x, y: (sg.sin(x) * y, (sg.cos(x), sg.sin(x), y)),
                  lambda res, g: (res[0] * res[2] * g, res[1] * g))


@sg.custom_jvp
def _softplus(x):
    return sg.log(1.0 + sg.exp(x))


@_softplus.defjvp
def _softplus_jvp(primals, tangents):
    return _softplus(primals[0]), tangents[0] / (1.0 + sg.exp(-primals[0]))


STRUCTURAL += [
    ("custom-vjp", lambda ns, x, y: np.sin(x) * y if ns is NP else _sin_times(x, y), [_r((2, 3)), _r((2, 3), 1)]),
    ("custom-jvp", lambda ns, x: np.log1p(np.exp(x)) if ns is NP else _softplus(x), [_r((4,))]),
]


# A recurrent layer's fused sequence (nn/recurrence.py): the primitive under symgrad, the Python loop of its steps
# under NumPy (outputs, then the final h and c along time)
def _lstm_sequence(ns, x, h, c, *weights):
    if ns is NP:
        outputs, (h, c) = recurrence.looped("LSTM", x, (h, c), weights, reverse=True)
        return np.concatenate([outputs, h[None], c[None]])
    w_ih, w_hh, b_ih, b_hh = weights
    return recurrence.fused_rnn_p(x @ w_ih.T + b_ih, h, c, w_hh, b_hh, mode="LSTM", reverse=True, count=2, bias=True,
                                  masked=False)


STRUCTURAL += [("fused-rnn", _lstm_sequence, [_r((3, 2, 2)), _r((2, 3), 1), _r((2, 3), 2), _r((12, 2), 3),
                                              _r((12, 3), 4), _r((12,), 5), _r((12,), 6)])]

# max pooling's maximum over its windows' axis 0, whose gradient goes to the first maximum (distinct values here)
STRUCTURAL += [("first-max", lambda ns, a: np.max(a, axis=0) if ns is NP else first_max_p(a), [_r((4, 3), 7)])]


@pytest.mark.parametrize("fn,args", [pytest.param(f, a, id=i) for i, f, a in STRUCTURAL])
def test_structural_value(fn, args):
    expected = fn(NP, *args)
    got = sg.compile(lambda *a: fn(SG, *a))(*args)
    assert np.shape(got) == np.shape(expected)
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(expected, np.float64), rtol=1e-10, atol=1e-12)
    eager = fn(SG, *args)
    np.testing.assert_allclose(np.asarray(eager, np.float64), np.asarray(expected, np.float64), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("fn,args", [pytest.param(f, a, id=i) for i, f, a in STRUCTURAL])
def test_structural_grad(fn, args, request):
    W = np.random.default_rng(7).normal(size=np.shape(fn(NP, *args)))
    argnums = tuple(range(len(args)))
    # A float32 cast rounds: finite differences through it need a large step and loose tolerance.
    tol = dict(rtol=1e-2, atol=1e-3, eps=1e-3) if request.node.callspec.id.startswith("astype") else {}
    assert_grads_match_finite_differences(lambda *a: sg.sum(fn(SG, *a) * W), args, argnums, **{"rtol": 1e-6, "atol": 1e-8, **tol},
                reference=lambda *a: np.sum(fn(NP, *a) * W))


@pytest.mark.parametrize("fn,args", [pytest.param(f, a, id=i) for i, f, a in STRUCTURAL
                                     if not i.startswith("astype")])
def test_structural_grad_float32(fn, args):
    args = [a.astype(np.float32) for a in args]
    W = np.random.default_rng(7).normal(size=np.shape(fn(NP, *args))).astype(np.float32)
    grads = assert_grads_match_finite_differences(lambda *a: sg.sum(fn(SG, *a) * W), args, tuple(range(len(args))), rtol=1e-3, atol=1e-4,
                        reference=lambda *a: np.sum(fn(NP, *a) * W))
    assert all(g.dtype == np.float32 for g in grads)


# ----------------------------------------------------------------------------- special cases

@pytest.mark.parametrize("zeros", [0, 1, 2, 3])
def test_prod_grad_with_zeros(zeros):
    x = np.array([[1.5, -2.0, 0.5, 3.0], [2.0, 0.7, -1.1, 0.9]])
    x[0, :zeros] = 0.0
    if zeros >= 1:
        x[1, 2] = 0.0

    def expected_grad(x, axis):
        g = np.zeros_like(x)
        for idx in np.ndindex(x.shape):
            y = x.copy()
            y[idx] = 1.0
            g[idx] = np.prod(y, axis=axis, keepdims=True)[(0,) * x.ndim if axis is None else
                                                                       tuple(0 if a == axis else i
                                                                             for a, i in enumerate(idx))]
        return g

    for axis in (None, 1):
        g = sg.grad(lambda x: sg.sum(sg.prod(x, axis=axis)))(x)
        np.testing.assert_allclose(g, expected_grad(x, axis), rtol=1e-12, atol=1e-15, err_msg=f"axis={axis}")
        assert np.all(np.isfinite(g))


@pytest.mark.parametrize("axis", [None, 0, 2, (0, 2), (1, 2)])
def test_prod_hessian_with_zeros(axis):
    """The second derivative of prod where x has zeros: d2/dxi dxj is the product of the others. The partials
    were ans / x_i with the count of zeros held constant, so the Hessian was 0 at two zeros and not
    symmetric at one."""
    x = np.random.default_rng(3).normal(size=(3, 4, 2))
    x[0, 1, 0] = x[1, 2, 1] = x[2, 0, 0] = x[2, 3, 0] = x[0, 0, 1] = 0.0
    w = np.random.default_rng(4).normal(size=np.prod(x, axis=axis).shape)
    def f(a):
        return sg.sum(sg.prod(a, axis=axis) * w)
    grad = sg.grad(f)
    expected = np.stack([numeric_grad(lambda a: np.asarray(grad(a))[idx], (x,), 0).reshape(x.shape)
                         for idx in np.ndindex(x.shape)]).reshape(x.shape * 2)
    for path, hessian in (("hessian", sg.hessian(f)(x)), ("jacobian of grad", sg.jacobian(grad)(x)),
                          ("numpy backend", sg.compile(sg.hessian(f), backend="numpy")(x))):
        np.testing.assert_allclose(hessian, expected, rtol=1e-7, atol=1e-7, err_msg=path)
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    theirs = jax.hessian(lambda a: jax.numpy.sum(jax.numpy.prod(a, axis=axis) * w))(x)
    np.testing.assert_allclose(sg.hessian(f)(x), theirs, rtol=1e-12, atol=1e-12)


def test_max_ties_split_evenly():
    x = np.array([[1.0, 3.0, 3.0, 2.0], [5.0, 5.0, 5.0, 0.0]])
    g = sg.grad(lambda x: sg.sum(sg.max(x, axis=1)))(x)
    np.testing.assert_allclose(g, [[0, 0.5, 0.5, 0], [1 / 3, 1 / 3, 1 / 3, 0]])
    g = sg.grad(lambda x: sg.max(x))(x)
    np.testing.assert_allclose(g, [[0, 0, 0, 0], [1 / 3, 1 / 3, 1 / 3, 0]])
    g = sg.grad(lambda x: sg.sum(sg.min(x, axis=0)))(np.array([[1.0, 2.0], [1.0, 0.0]]))
    np.testing.assert_allclose(g, [[0.5, 0], [0.5, 1]])


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
@pytest.mark.parametrize("dtype", [np.int64, np.int32])
def test_integer_maximum_and_minimum_are_exact_at_ties(backend, dtype):
    """The float tie (a + b) / 2 is written for the gradient split; in native integer arithmetic it was
    a/2 + b/2, so maximum(3, 3) gave 2 and maximum(x, x) gave 0 without an error."""
    big = np.iinfo(dtype).max - 1
    a = np.array([3, -2, 5, -7, big, 0], dtype=dtype)
    b = np.array([1, 4, 5, -7, big, 0], dtype=dtype)
    for name in ("maximum", "minimum"):
        ours, theirs = getattr(sg, name), getattr(np, name)
        got = sg.compile(lambda x, y: (ours(x, y), ours(x, x), ours(x, 3), ours(x, dtype(-7))), backend=backend)(a, b)
        for value, expected in zip(got, (theirs(a, b), a, theirs(a, 3), theirs(a, dtype(-7)))):
            assert value.dtype == expected.dtype
            np.testing.assert_array_equal(value, expected)
    # float ties still split the gradient
    g = sg.compile(sg.grad(lambda x: sg.sum(sg.maximum(x, 1.0))), backend=backend)(np.array([1.0, 2.0, 0.0]))
    np.testing.assert_allclose(g, [0.5, 1.0, 0.0])


@pytest.mark.parametrize("operator", [lambda t: t & t, lambda t: t | 1, lambda t: ~t, lambda t: (t > 0) & t])
def test_bitwise_operators_on_traced_integers_are_bitwise(operator):
    """NumPy's & | ~ on integers are bitwise (the traced operators once computed the logical result, then were an
    error); on booleans they stay the logical ops."""
    for backend in ("numpy", "llvm"):
        np.testing.assert_array_equal(sg.compile(operator, backend=backend)(np.array([3, -2])),
                                      operator(np.array([3, -2])))
    masks = sg.compile(lambda x: sg.where(((x > 0) & (x < 2)) | ~(x > -5), x, 0.0))(np.array([1.0, -1.0, -9.0]))
    np.testing.assert_array_equal(masks, [1.0, 0.0, -9.0])


BOOLEAN_PROGRAMS = [
    ("add", lambda ns, a, b: a + b), ("multiply", lambda ns, a, b: a * b), ("add-scalar", lambda ns, a, b: a + True),
    ("maximum", lambda ns, a, b: ns.maximum(a, b)), ("minimum", lambda ns, a, b: ns.minimum(a, b)),
    ("abs", lambda ns, a, b: ns.abs(a)), ("where", lambda ns, a, b: ns.where(a, b, a)),
    ("max", lambda ns, a, b: ns.max(a)), ("min-axis", lambda ns, a, b: ns.min(b, axis=0)),
    ("prod", lambda ns, a, b: ns.prod(a)), ("prod-axis", lambda ns, a, b: ns.prod(b, axis=1)),
    ("prod-int32", lambda ns, a, b: ns.prod(ns.astype(b, np.int32) * 3, axis=0)),
]


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
@pytest.mark.parametrize("name,program", BOOLEAN_PROGRAMS, ids=[n for n, _ in BOOLEAN_PROGRAMS])
def test_arithmetic_and_reductions_on_booleans_follow_numpy(name, program, backend):
    """Booleans add as `or`, multiply as `and`, max/min as any/all; the LLVM backend failed inside
    (fadd on i1, "Invalid integer data type 'b'") and prod kept bool where NumPy gives int64."""
    a = np.array([[True, False, True], [False, False, True]])
    b = np.array([[True, True, False], [True, False, True]])
    expected = program(NP, a, b)
    got = sg.compile(lambda x, y: program(SG, x, y), backend=backend)(a, b)
    assert got.dtype == np.asarray(expected).dtype
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("program", [lambda t: -t, lambda t: t - t, lambda t: sg.sign(t)])
def test_subtraction_negation_and_sign_of_booleans_raise_as_in_numpy(program):
    with pytest.raises(TypeError, match="booleans"):
        sg.compile(program)(np.array([True, False]))


# ----------------------------------------------------------------------------- empty axes and zero sizes

EMPTY_REDUCTIONS = [((0, 3), 0), ((3, 0), 0), ((3, 0), 1), ((0, 3), None), ((0,), None), ((2, 0, 3), (0, 1)),
                    ((2, 0, 3), 2)]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name,kwargs", [("mean", {}), ("var", {}), ("var", {"ddof": 1}), ("std", {})])
@pytest.mark.parametrize("shape,axis", EMPTY_REDUCTIONS)
def test_mean_and_var_over_empty_axes_are_nan_like_numpy(shape, axis, name, kwargs, dtype):
    x = np.zeros(shape, dtype)
    fn = lambda a: getattr(sg, name)(a, axis=axis, **kwargs)  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NumPy's "Mean of empty slice"
        expected = getattr(np, name)(x, axis=axis, **kwargs)
    with np.errstate(all="ignore"):
        for path, got in [("eager", fn(x)), ("numpy", sg.compile(fn, backend="numpy")(x)), ("llvm", sg.compile(fn)(x))]:
            assert np.shape(got) == expected.shape and np.asarray(got).dtype == dtype, path
            np.testing.assert_array_equal(got, expected, err_msg=path)
        for path, (value, (g,)) in value_and_grad_everywhere(lambda a: sg.sum(fn(a)), (x,)).items():
            assert g.shape == shape and g.dtype == dtype, path
            np.testing.assert_array_equal(value, np.sum(expected), err_msg=path)


@pytest.mark.parametrize("fn,args", [pytest.param(f, a, id=i) for i, f, a in ZERO_SIZE])
def test_zero_size_values_and_gradients_on_every_path(fn, args):
    expected = fn(NP, *args)
    weights = np.random.default_rng(3).normal(size=np.shape(expected))
    argnums = tuple(range(len(args)))
    for path, (value, grads) in value_and_grad_everywhere(lambda *a: sg.sum(fn(SG, *a) * weights), args,
                                                          argnums).items():
        np.testing.assert_allclose(value, np.sum(expected * weights), err_msg=path)
        for argnum, g in zip(argnums, grads):
            assert g.shape == args[argnum].shape, path
            np.testing.assert_allclose(g, numeric_grad(lambda *a: np.sum(fn(NP, *a) * weights), args, argnum),
                                       atol=1e-9, err_msg=path)


@pytest.mark.parametrize("reduce", [sg.max, sg.min])
@pytest.mark.parametrize("shape,axis", [((0, 3), 0), ((0, 3), None), ((3, 0), 1)])
def test_max_and_min_over_an_empty_axis_raise_like_numpy(reduce, shape, axis):
    x = np.zeros(shape)
    for run in (lambda: reduce(x, axis=axis), lambda: sg.compile(lambda a: reduce(a, axis=axis))(x),
                lambda: reduce(sg.tensor(x), axis=axis)):
        with pytest.raises(ValueError, match="zero-size array to reduction operation"):
            run()


@pytest.mark.parametrize("shape,axis", [((0, 3), 0), ((0, 3), None), ((3, 0), 1), ((0, 3), 1)])
def test_logsumexp_and_softmax_over_an_empty_axis(shape, axis):
    # logsumexp of nothing is log(0) = -inf, as torch.logsumexp and scipy.special.logsumexp give
    x = np.zeros(shape)
    with np.errstate(divide="ignore"):
        expected = np.log(np.sum(np.exp(x), axis=axis))
        for path, got in [("eager", sg.logsumexp(x, axis=axis)),
                          ("numpy", sg.compile(lambda a: sg.logsumexp(a, axis=axis), backend="numpy")(x)),
                          ("llvm", sg.compile(lambda a: sg.logsumexp(a, axis=axis))(x))]:
            np.testing.assert_array_equal(got, expected, err_msg=path)
        for path, (_, (g,)) in value_and_grad_everywhere(lambda a: sg.sum(sg.logsumexp(a, axis=axis)), (x,)).items():
            assert g.shape == shape, path
        if axis is not None:
            assert sg.softmax(x, axis=axis).shape == shape and sg.log_softmax(x, axis=axis).shape == shape


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmin"])
@pytest.mark.parametrize("shape,axis", [((0, 3), 0), ((3, 0), 1), ((0, 3), 1)])
def test_functional_softmax_over_an_empty_axis_is_empty_as_pytorchs(shape, axis, name):
    """F.softmax's shift took the max over the dim, NumPy's "zero-size array" ValueError over an empty one where
    PyTorch gives an empty result (random_programs_torch seed 9137); traced and eager, with a gradient of x's shape."""
    f = getattr(sg.nn.functional, name)
    x = np.zeros(shape)
    assert sg.compile(lambda a: f(a, axis))(x).shape == shape
    t = sg.tensor(x, requires_grad=True)
    f(t, axis).sum().backward()
    assert t.grad.shape == shape


def test_var_with_ddof_past_the_count_divides_by_zero_like_numpy():
    x = np.array([[1.0, 2.0], [3.0, 3.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NumPy's "Degrees of freedom <= 0"
        expected = np.var(x, axis=1, ddof=3)
        for got in (sg.var(x, axis=1, ddof=3), sg.compile(lambda a: sg.var(a, axis=1, ddof=3))(x)):
            np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("divisor", [0.0, 0])
def test_division_by_a_python_zero_gives_ieee_results(divisor, dtype):
    x = np.array([1.0, -1.0, 0.0], dtype)
    with np.errstate(all="ignore"):
        expected = x / divisor
        for path, got in [("eager", sg.divide(x, divisor)), ("numpy", sg.compile(lambda a: a / divisor, backend="numpy")(x)),
                          ("llvm", sg.compile(lambda a: a / divisor)(x))]:
            assert got.dtype == dtype, path
            np.testing.assert_array_equal(got, expected, err_msg=path)
        for path, (_, (g,)) in value_and_grad_everywhere(lambda a: sg.sum(a / divisor), (x,)).items():
            np.testing.assert_array_equal(g, np.full(3, np.inf, dtype), err_msg=path)  # as PyTorch


# ----------------------------------------------------------------------------- registry coverage

def test_every_primitive_is_exercised_by_the_structural_cases():
    """A new primitive must come with a case above: its value and gradient then get checked too."""
    seen = set()
    for _, fn, args in STRUCTURAL:
        loss = lambda *a, fn=fn: sg.sum(fn(SG, *a))  # noqa: E731
        # (the forward too: value_and_grad of a custom_vjp function computes its value by the rule's fwd)
        for traced in (loss, sg.value_and_grad(loss, argnums=tuple(range(len(args))))):
            seen.update(node.prim.name for node in sg.trace(traced, *args).nodes)
    # sg.linalg's primitives have their cases in tests/test_linalg.py (which checks it covers each)
    assert set(REGISTRY) - seen - {prim.name for prim in lapack.PRIMITIVES} == set()


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_primitive_has_each_rule_a_program_needs(name):
    """Where a primitive's rules live (docs/ops.md), checked for each: a NumPy lowering (a rule, or the
    reference printed from its source), an LLVM one (a rule, or a decomposition), and derivatives both ways."""
    from symgrad.codegen import numpy_backend
    prim = REGISTRY[name]
    inlined = prim in CUSTOM_CALLS  # replaced by the function it calls before lowering (passes/inline.py)
    assert numpy_backend.has_rule(prim) or prim.decompose is not None or inlined, "no NumPy lowering"
    if importlib.util.find_spec("llvmlite") is not None:
        from symgrad.codegen.llvm import rules
        # LAPACK factorizations with several results have no LLVM rule yet: the default backend runs them on NumPy's
        assert rules.has_rule(prim) or prim.decompose is not None or inlined or prim in lapack.PRIMITIVES, \
            "no LLVM lowering"
    if prim is not const_p:  # no inputs, nothing to differentiate
        assert prim.vjp is not None, "no reverse-mode rule"
        assert prim.jvp is not None or prim.linear, "no forward-mode rule"


def test_user_defined_elementwise_op_gets_its_gradient_from_sympy():
    import sympy
    softsign = sg.elementwise("softsign_test", lambda x: x / (1 + sympy.Abs(x)))
    x = np.array([-2.0, -0.3, 0.4, 3.0])
    np.testing.assert_allclose(softsign(x), x / (1 + np.abs(x)))
    assert_grads_match_finite_differences(lambda x: sg.sum(softsign(x) ** 2), [x], (0,), rtol=1e-7, atol=1e-10,
                reference=lambda x: np.sum((x / (1 + np.abs(x))) ** 2))
    assert "softsign_test" in str(sg.trace(lambda x: softsign(x), x))


@pytest.mark.parametrize("name", ["logical_not", "logical_and", "logical_or"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.bool_])
def test_logical_ops_take_numbers_as_truth_values_on_every_path(name, dtype):
    """NumPy's logical ops read a number as x != 0 (NaN and -0.0 included); the LLVM backend once
    failed to compile them on non-boolean arrays."""
    x = np.array([0.0, 1.5, np.nan, -0.0, -2.0]).astype(dtype) if dtype != np.int64 else np.array([0, 3, -1, 0, 2])
    y = np.array([1, 0, 2, 0, 0]).astype(dtype)
    op, reference = getattr(sg, name), getattr(np, name)
    args = (x,) if name == "logical_not" else (x, y)
    expected = reference(*args)
    for backend in ("numpy", "llvm"):
        np.testing.assert_array_equal(sg.compile(lambda *a: op(*a), backend=backend)(*args), expected)
    np.testing.assert_array_equal(op(*args), expected)
    np.testing.assert_array_equal(op(*map(sg.tensor, args)).numpy(), expected)
    zero_d = (np.float64(0.0),) * len(args)
    np.testing.assert_array_equal(sg.compile(lambda *a: op(*a))(*zero_d), reference(*zero_d))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_relu_of_nan_is_nan(dtype):
    """relu was Piecewise((a, a > 0), (0, True)): NaN > 0 is False, so relu(NaN) was a silent 0 on every path
    (PyTorch, JAX and np.maximum(x, 0) give NaN). Its gradient there is 1, as PyTorch's."""
    x = np.array([np.nan, -1.0, 2.0, 0.0, np.inf, -np.inf], dtype)
    expected = np.array([np.nan, 0.0, 2.0, 0.0, np.inf, 0.0], dtype)
    for backend in ("numpy", "llvm"):
        np.testing.assert_array_equal(sg.compile(sg.relu, backend=backend)(x), expected)
        np.testing.assert_array_equal(sg.compile(sg.grad(lambda a: sg.sum(sg.relu(a))), backend=backend)(x),
                                      np.array([1, 0, 1, 0, 1, 0], dtype))
    t = sg.tensor(x, requires_grad=True)
    t.relu().sum().backward()
    np.testing.assert_array_equal(t.relu().detach().numpy(), expected)
    np.testing.assert_array_equal(t.grad.numpy(), [1, 0, 1, 0, 1, 0])
    torch = pytest.importorskip("torch")
    theirs = torch.tensor(x, requires_grad=True)
    theirs.relu().sum().backward()
    np.testing.assert_array_equal(theirs.relu().detach().numpy(), expected)
    np.testing.assert_array_equal(theirs.grad.numpy(), t.grad.numpy())
