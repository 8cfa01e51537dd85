"""NumPy's statistics: average, ptp, median, quantile/percentile (method="linear"), the NaN-ignoring
reductions, cov, corrcoef and count_nonzero, as compositions of sg's reductions, sort and where, so
their gradients and both backends' lowering come with them (order statistics through sort's gather).
"""
from __future__ import annotations

import builtins

import numpy as np

from .. import dtypes
from ..core import Tracer, UnsupportedOpError, fail
from . import arrays as sg
from . import ordering
from .arrays import _axes, no_out
from .dispatch import array_function_dispatch
from .ordering import argmax, argmin, sort
from .rearrange import atleast_2d, diagonal

# ----------------------------------------------------------------------------- averages and spreads


@array_function_dispatch
def average(a, axis=None, weights=None, returned=False, *, keepdims=False):
    """np.average: sum(a * w) / sum(w) along axis (the mean without weights); returned=True also gives the
    sum of the weights (the count without them), broadcast to the result's shape. 1-d weights go along axis."""
    a = _as_float(a)
    if weights is None:
        result = sg.mean(a, axis, keepdims)
        count = a.size // builtins.max(result.size, 1) if a.size else 0
        return (result, sg.full(result.shape, float(count), result.dtype)) if returned else result
    w = sg.asarray(weights)
    if w.shape != a.shape:
        if axis is None:
            fail(f"average: axis must be given when weights (shape {w.shape}) differ from a's shape {a.shape}",
                 TypeError)
        if w.ndim != 1 or not isinstance(axis, (int, np.integer)) or w.shape[0] != a.shape[_axes(axis, a.ndim)[0]]:
            fail(f"average: weights of shape {w.shape} must be 1-d and as long as axis {axis} of a {a.shape}",
                 ValueError)
        w = sg.moveaxis(sg.reshape(w, w.shape + (1,) * (a.ndim - 1)), 0, _axes(axis, a.ndim)[0])
    dtype = dtypes.float_result(dtypes.promote([a.dtype, w.dtype]))
    a, w = sg.astype(a, dtype), sg.astype(w, dtype)
    scale = sg.sum(sg.broadcast_to(w, a.shape), axis, keepdims)
    result = sg.divide(sg.sum(sg.multiply(a, w), axis, keepdims), scale)
    return (result, scale) if returned else result


def _as_float(a):
    a = sg.asarray(a)
    return a if dtypes.is_float(a.dtype) else sg.astype(a, dtypes.FLOAT64)


@array_function_dispatch
def ptp(a, axis=None, out=None, keepdims=False):
    """np.ptp: the range max - min along axis."""
    no_out("ptp", out)
    return sg.subtract(sg.max(a, axis=axis, keepdims=keepdims), sg.min(a, axis=axis, keepdims=keepdims))


# ----------------------------------------------------------------------------- order statistics

def _sorted_last(a, axis):
    """a sorted along axis (axis=None: all of a; a tuple: those axes together), that axis moved last."""
    a = _as_float(a)
    axes = _axes(axis, a.ndim)
    if not axes:
        return sg.reshape(a, a.shape + (1,)), axes
    moved = sg.transpose(a, [i for i in range(a.ndim) if i not in axes] + list(axes))
    rest = moved.shape[:a.ndim - len(axes)]
    return sort(sg.reshape(moved, rest + (int(np.prod([a.shape[i] for i in axes])),)), axis=-1), axes


def _nan_where_any_nan(result, ordered, q_ndim):
    """NaN wherever the slice held a NaN (sorted last), as NumPy's median and quantile give."""
    last = ordered[..., -1]
    return sg.where(sg.isnan(sg.reshape(last, (1,) * q_ndim + last.shape)), np.nan, result)


def _keep(result, a_ndim, axes, q_ndim):
    """result (q's axes, then the kept axes) with the reduced axes back as length 1 (keepdims)."""
    shape, kept = list(result.shape[:q_ndim]), iter(result.shape[q_ndim:])
    for i in range(a_ndim):
        shape.append(1 if i in axes else next(kept))
    return sg.reshape(result, tuple(shape))


@array_function_dispatch
def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *, weights=None):
    """np.quantile with method="linear": between the sorted values at floor and ceil of q * (n - 1), by
    NumPy's lerp; q's axes come first. NaN where a slice holds one. Differentiable in a (sort's gather)."""
    no_out("quantile", out)
    if method != "linear" or weights is not None:
        fail(f"quantile: only method='linear' without weights is supported, got method={method!r}"
             f"{' and weights' if weights is not None else ''}", UnsupportedOpError)
    if isinstance(q, Tracer):
        fail("quantile: q must be known when tracing (it picks which sorted elements are used); pass a number "
             "or a NumPy array", TypeError)
    a = _as_float(a)
    given = q if isinstance(q, (int, float)) else np.asarray(q)  # a Python number is weak, as in NumPy
    dtype = dtypes.float_result(dtypes.canonical(np.result_type(np.empty(0, a.dtype), given)))
    q = np.asarray(q, dtype=np.float64)
    if np.any((q < 0) | (q > 1)) or np.any(np.isnan(q)):
        fail("Quantiles must be in the range [0, 1]", ValueError)
    ordered, axes = _sorted_last(a, axis)
    n = ordered.shape[-1]
    if n == 0:
        fail(f"quantile of an empty slice (shape {a.shape}, axis {axis}): there is no element to pick",
             IndexError)
    position = q * (n - 1)
    below = np.floor(position).astype(np.int64)
    above = np.minimum(below + 1, n - 1)
    t = (position - below).astype(a.dtype)
    kept = ordered.ndim - 1
    q_first = list(range(kept, kept + q.ndim)) + list(range(kept))
    low, high = (sg.transpose(ordered[..., index], q_first) for index in (below, above))
    t = t.reshape(t.shape + (1,) * (low.ndim - q.ndim))
    step = sg.subtract(high, low)
    result = sg.where(t >= 0.5, sg.subtract(high, sg.multiply(step, 1 - t)), sg.add(low, sg.multiply(step, t)))
    result = sg.astype(_nan_where_any_nan(result, ordered, q.ndim), dtype)  # computed in a's dtype, as NumPy
    return _keep(result, a.ndim, axes, q.ndim) if keepdims else result


@array_function_dispatch
def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *, weights=None):
    """np.percentile: quantile at q / 100 (a Python number stays one, weakly typed as in NumPy)."""
    if isinstance(q, Tracer):
        return quantile(a, q, axis, out, overwrite_input, method, keepdims, weights=weights)  # its error
    q = q / 100 if isinstance(q, (int, float)) else np.true_divide(q, 100)
    return quantile(a, q, axis, out, overwrite_input, method, keepdims, weights=weights)


@array_function_dispatch
def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """np.median: the middle sorted value, or the mean of the middle two; NaN where a slice holds a NaN."""
    no_out("median", out)
    a = _as_float(a)
    ordered, axes = _sorted_last(a, axis)
    n = ordered.shape[-1]
    if n == 0:
        result = sg.full(ordered.shape[:-1], np.nan, a.dtype)  # NumPy's mean of nothing
    else:
        middle = ordered[..., (n - 1) // 2:n // 2 + 1]
        result = _nan_where_any_nan(sg.mean(middle, -1), ordered, 0)
    return _keep(result, a.ndim, axes, 0) if keepdims else result


# ----------------------------------------------------------------------------- NaN-ignoring reductions

def _nan_filled(a, fill):
    a = sg.asarray(a)
    return sg.where(sg.isnan(a), fill, a) if dtypes.is_float(a.dtype) else a


@array_function_dispatch
def nansum(a, axis=None, dtype=None, out=None, keepdims=False):
    """np.nansum: NaN counts as 0."""
    no_out("nansum", out)
    return sg.sum(_nan_filled(a, 0.0), axis, keepdims, dtype)


@array_function_dispatch
def nanprod(a, axis=None, dtype=None, out=None, keepdims=False):
    """np.nanprod: NaN counts as 1."""
    no_out("nanprod", out)
    a = _nan_filled(a, 1.0)
    return sg.prod(a, axis, keepdims, dtype)


@array_function_dispatch
def nancumsum(a, axis=None, dtype=None, out=None):
    no_out("nancumsum", out)
    return sg.cumsum(_nan_filled(a, 0.0), axis, dtype)


@array_function_dispatch
def nancumprod(a, axis=None, dtype=None, out=None):
    no_out("nancumprod", out)
    return sg.cumprod(_nan_filled(a, 1.0), axis, dtype)


def _count(a, axis, keepdims):
    """How many elements along axis are not NaN, in a's float dtype."""
    return sg.sum(sg.astype(sg.logical_not(sg.isnan(a)), a.dtype), axis, keepdims)


@array_function_dispatch
def nanmean(a, axis=None, dtype=None, out=None, keepdims=False):
    """np.nanmean: the mean of the elements that are not NaN (NaN where there are none)."""
    no_out("nanmean", out)
    a = _as_float(a) if dtype is None else sg.astype(a, dtype)
    return sg.divide(nansum(a, axis, keepdims=keepdims), _count(a, axis, keepdims))


@array_function_dispatch
def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """np.nanvar: the variance of the elements that are not NaN, divided by their count - ddof."""
    no_out("nanvar", out)
    a = _as_float(a) if dtype is None else sg.astype(a, dtype)
    centered = sg.where(sg.isnan(a), 0.0, sg.subtract(a, nanmean(a, axis, keepdims=True)))  # inf - inf stays NaN
    divisor = sg.maximum(sg.subtract(_count(a, axis, keepdims), ddof), 0.0)
    return sg.divide(sg.sum(sg.square(centered), axis, keepdims), divisor)


@array_function_dispatch
def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    return sg._safe_sqrt(nanvar(a, axis, dtype, out, ddof, keepdims))


def _nan_extremum(reduce, fill, a, axis, keepdims):
    """max/min ignoring NaN; NaN where a slice is all NaN (as NumPy, which also warns)."""
    a = sg.asarray(a)
    if not dtypes.is_float(a.dtype):
        return reduce(a, axis=axis, keepdims=keepdims)  # by keyword: on a tensor sg.max(t, dim) is PyTorch's
    all_nan = ordering.all(sg.isnan(a), axis, keepdims=keepdims)
    return sg.where(all_nan, np.nan, reduce(_nan_filled(a, fill), axis=axis, keepdims=keepdims))


@array_function_dispatch
def nanmax(a, axis=None, out=None, keepdims=False):
    no_out("nanmax", out)
    return _nan_extremum(sg.max, -np.inf, a, axis, keepdims)


@array_function_dispatch
def nanmin(a, axis=None, out=None, keepdims=False):
    no_out("nanmin", out)
    return _nan_extremum(sg.min, np.inf, a, axis, keepdims)


def _nan_arg_extremum(name, arg, fill, a, axis, keepdims):
    """argmax/argmin ignoring NaN. NumPy raises for an all-NaN slice; a traced value cannot be checked, so
    that slice gives -1 (as an index, it would pick the last element)."""
    a = sg.asarray(a)
    if not dtypes.is_float(a.dtype):
        return arg(a, axis, keepdims=keepdims)
    all_nan = ordering.all(sg.isnan(a), axis, keepdims=keepdims)
    if not isinstance(all_nan, Tracer) and np.any(all_nan):
        fail(f"{name}: All-NaN slice encountered", ValueError)
    return sg.where(all_nan, -1, arg(_nan_filled(a, fill), axis, keepdims=keepdims))


@array_function_dispatch
def nanargmax(a, axis=None, out=None, *, keepdims=False):
    no_out("nanargmax", out)
    return _nan_arg_extremum("nanargmax", argmax, -np.inf, a, axis, keepdims)


@array_function_dispatch
def nanargmin(a, axis=None, out=None, *, keepdims=False):
    no_out("nanargmin", out)
    return _nan_arg_extremum("nanargmin", argmin, np.inf, a, axis, keepdims)


# ----------------------------------------------------------------------------- covariance and counts

@array_function_dispatch
def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *, dtype=None):
    """np.cov without frequency or analytic weights: each row a variable (rowvar=False: each column),
    divided by N - 1 (bias=True: N; ddof overrides both). float64 unless dtype says otherwise, as NumPy."""
    if fweights is not None or aweights is not None:
        fail("cov: fweights and aweights are not supported; weight the centered observations yourself",
             UnsupportedOpError)
    m = sg.asarray(m)
    if m.ndim > 2:
        fail(f"cov: m has more than 2 dimensions (shape {m.shape})", ValueError)
    if dtype is None:
        dtype = dtypes.promote([m.dtype, dtypes.FLOAT64] + ([sg.asarray(y).dtype] if y is not None else []))
    x = sg.astype(atleast_2d(m), dtype)
    if not rowvar and x.shape[0] != 1:
        x = sg.transpose(x)
    if y is not None:
        y = sg.astype(atleast_2d(y), dtype)
        if not rowvar and y.shape[0] != 1:
            y = sg.transpose(y)
        x = sg.concatenate([x, y], axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    observations = x.shape[1]
    centered = sg.subtract(x, sg.mean(x, axis=1, keepdims=True))
    product = sg.matmul(centered, sg.transpose(centered))
    return sg.squeeze(sg.divide(product, float(builtins.max(observations - ddof, 0))))


@array_function_dispatch
def corrcoef(x, y=None, rowvar=True, *, dtype=None):
    """np.corrcoef: cov divided by the outer product of the standard deviations, clipped to [-1, 1]."""
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return sg.divide(c, c)
    deviation = sg.sqrt(diagonal(c))
    c = sg.divide(sg.divide(c, sg.reshape(deviation, (-1, 1))), sg.reshape(deviation, (1, -1)))
    return sg.clip(c, -1, 1)


@array_function_dispatch
def count_nonzero(a, axis=None, *, keepdims=False):
    """np.count_nonzero: how many elements are not zero (int64)."""
    a = sg.asarray(a)
    return sg.sum(sg.astype(sg.not_equal(a, 0), dtypes.INT64), axis, keepdims)
