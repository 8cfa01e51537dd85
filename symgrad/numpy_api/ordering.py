"""NumPy's sorting, searching and comparing functions: sort, argsort, argmax/argmin, cumulative extrema,
all/any, isclose/allclose.

Indices are integers, never differentiated; sort and the cumulative extrema are gathers by such
indices, so their gradient goes to the elements they pick (ties: argmax's first, cummax's latest).
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..core import fail
from ..ops.sorting import argsort_p
from . import arrays as sg
from .arrays import _axes, no_out
from .dispatch import array_function_dispatch
from .indexing import take_along_axis


def _along_last(x, axis, fn):
    """fn applied with `axis` moved last (axis=None: the flattened array), the result's axis put back."""
    x = sg.asarray(x)
    if axis is None:
        x, axis = sg.ravel(x), 0
    if x.ndim == 0:
        fail("axis 0 is out of bounds for a 0-d array (sort and argsort need an axis)", np.exceptions.AxisError)
    axis = _axes(axis, x.ndim)[0]
    return sg.moveaxis(fn(sg.moveaxis(x, axis, -1)), -1, axis)


def _sortable(x):
    return sg.astype(x, dtypes.INT64) if x.dtype == dtypes.BOOL else x


@array_function_dispatch
def argsort(a, axis=-1, kind=None, order=None, *, stable=None):
    """np.argsort, stable whatever `kind` or `stable` ask (NaN last, as NumPy)."""
    if order is not None:
        fail("argsort: order= (structured arrays) is not supported", TypeError)
    return _along_last(a, axis, lambda x: argsort_p(_sortable(x)) if x.shape[-1] else sg.astype(x, dtypes.INT64))


@array_function_dispatch
def sort(a, axis=-1, kind=None, order=None, *, stable=None):
    """np.sort: a gather by argsort, so the gradient flows to the element sorted into each place."""
    if order is not None:
        fail("sort: order= (structured arrays) is not supported", TypeError)
    return _along_last(a, axis, lambda x: take_along_axis(x, sg.stop_gradient(argsort(x)), -1) if x.shape[-1] else x)


def _arg_extremum(name, reduce, x, axis, keepdims):
    """The first index where x attains its extremum along axis, or its first NaN (as NumPy)."""
    x = sg.asarray(x)
    if axis is None:
        flat = _arg_extremum(name, reduce, sg.ravel(x), 0, False)
        return sg.reshape(flat, (1,) * x.ndim) if keepdims else flat
    x = _sortable(x)
    axis = _axes(axis, x.ndim)[0] if x.ndim else 0
    if x.ndim == 0:
        x = sg.reshape(x, (1,))
    n = x.shape[axis]
    if n == 0:
        fail(f"attempt to get {name} of an empty sequence (shape {x.shape}, axis {axis})", ValueError)
    peak = sg.stop_gradient(reduce(x, axis=axis, keepdims=True))
    hits = sg.logical_or(sg.isnan(x), sg.equal(x, peak))
    positions = _positions(n).reshape((n,) + (1,) * (x.ndim - axis - 1))
    return sg.astype(sg.min(sg.where(hits, positions, float(n)), axis=axis, keepdims=keepdims), dtypes.INT64)


def _positions(n):
    """0, 1, ..., n - 1 as float64 (exact to 2**53): selected by a truth value computed from floats, integer
    positions gave wrong indices on the LLVM backend, which fused the comparison into integer arithmetic."""
    return np.arange(n, dtype=np.float64)


@array_function_dispatch
def argmax(a, axis=None, out=None, *, keepdims=False):
    no_out("argmax", out)
    return _arg_extremum("argmax", sg.max, a, axis, keepdims)


@array_function_dispatch
def argmin(a, axis=None, out=None, *, keepdims=False):
    no_out("argmin", out)
    return _arg_extremum("argmin", sg.min, a, axis, keepdims)


def _prefix(combine, x):
    """combine accumulated along the last axis (Hillis and Steele's doubling: ceil(log2 n) steps)."""
    n, step = x.shape[-1], 1
    while step < n:
        x = sg.concatenate([x[..., :step], combine(x[..., step:], x[..., :-step])], axis=-1)
        step *= 2
    return x


def _cumulative_extremum(combine, x, axis, reverse):
    """The running extremum, as a gather of x at the latest position that set it (NaN sticks, as in NumPy)."""
    def along(x):
        if reverse:
            x = x[..., ::-1]
        if x.shape[-1]:
            running = _prefix(combine, sg.stop_gradient(x))
            setters = sg.logical_or(sg.equal(x, running), sg.isnan(x))
            latest = _prefix(sg.maximum, sg.where(setters, _positions(x.shape[-1]), 0.0))
            x = take_along_axis(x, sg.astype(latest, dtypes.INT64), -1)
        return x[..., ::-1] if reverse else x
    x = sg.asarray(x)
    x = sg.reshape(x, (1,)) if x.ndim == 0 and axis is not None else x
    return _along_last(_sortable(x), axis, along)


@array_function_dispatch
def cummax(x, axis=None, reverse=False):
    """np.maximum.accumulate (axis=None: of the flattened array), jax.lax.cummax's `reverse`."""
    return _cumulative_extremum(sg.maximum, x, axis, reverse)


@array_function_dispatch
def cummin(x, axis=None, reverse=False):
    """np.minimum.accumulate (axis=None: of the flattened array), jax.lax.cummin's `reverse`."""
    return _cumulative_extremum(sg.minimum, x, axis, reverse)


@array_function_dispatch
def any(a, axis=None, out=None, keepdims=False):
    """np.any: whether some element is true (nonzero); False over nothing."""
    no_out("any", out)
    a = sg.asarray(a)
    return sg.greater(sg.sum(sg.astype(sg.not_equal(a, 0), dtypes.INT64), axis, keepdims), 0)


@array_function_dispatch
def all(a, axis=None, out=None, keepdims=False):
    """np.all: whether every element is true (nonzero); True over nothing."""
    no_out("all", out)
    a = sg.asarray(a)
    return sg.equal(sg.sum(sg.astype(sg.equal(a, 0), dtypes.INT64), axis, keepdims), 0)


@array_function_dispatch
def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """np.isclose: |a - b| <= atol + rtol * |b| where b is finite; equal values (infinities) are close."""
    a, b = sg.asarray(a), sg.asarray(b)
    dtype = dtypes.float_result(dtypes.promote([a.dtype, b.dtype]))
    a, b = sg.astype(a, dtype), sg.astype(b, dtype)
    near = sg.logical_and(sg.less_equal(sg.abs(sg.subtract(a, b)), sg.add(atol, sg.multiply(rtol, sg.abs(b)))),
                          sg.isfinite(b))
    result = sg.logical_or(near, sg.equal(a, b))
    return sg.logical_or(result, sg.logical_and(sg.isnan(a), sg.isnan(b))) if equal_nan else result


@array_function_dispatch
def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """np.allclose: a traced truth value (choose with sg.where or sg.cond; Python's `if` cannot)."""
    return all(isclose(a, b, rtol, atol, equal_nan))
