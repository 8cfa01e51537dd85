"""NumPy's functions of sequences along an axis: differences (diff, ediff1d), the trapezoid rule, the
Array API's cumulative_sum/cumulative_prod, polynomials (polyval, vander) and geometric spacings
(logspace, geomspace), written with sg's slices, sums and cumulative products.
"""
from __future__ import annotations

import operator

import numpy as np

from .. import dtypes
from ..core import Tracer, fail
from . import arrays as sg
from .arrays import _axes
from .dispatch import array_function_dispatch
from .rearrange import linspace

_NO_VALUE = object()


def _along(axis, ndim, piece):
    """The index taking `piece` (a slice) along axis and everything elsewhere."""
    return (slice(None),) * axis + (piece,) + (slice(None),) * (ndim - axis - 1)


def _edge(value, a, axis):
    """prepend/append for diff: a scalar broadcast to a's shape with axis of length 1, or an array as given."""
    value = sg.asarray(value)
    if value.ndim == 0:
        return sg.broadcast_to(value, a.shape[:axis] + (1,) + a.shape[axis + 1:])
    return value


@array_function_dispatch
def diff(a, n=1, axis=-1, prepend=_NO_VALUE, append=_NO_VALUE):
    """np.diff: the n-th differences a[i + 1] - a[i] along axis (booleans: a[i + 1] != a[i])."""
    n = operator.index(n)
    if n < 0:
        fail(f"order must be non-negative but got {n}", ValueError)
    a = sg.asarray(a)
    if a.ndim == 0:
        fail("diff requires input that is at least one dimensional", ValueError)
    axis = _axes(axis, a.ndim)[0]
    parts = ([_edge(prepend, a, axis)] if prepend is not _NO_VALUE else []) + [a] + (
        [_edge(append, a, axis)] if append is not _NO_VALUE else [])
    a = sg.concatenate(parts, axis) if len(parts) > 1 else a
    later, earlier = _along(axis, a.ndim, slice(1, None)), _along(axis, a.ndim, slice(None, -1))
    step = sg.not_equal if a.dtype == dtypes.BOOL else sg.subtract
    for _ in range(n):
        a = step(a[later], a[earlier])
    return a


@array_function_dispatch
def ediff1d(ary, to_end=None, to_begin=None):
    """np.ediff1d: the differences of the flattened array, with to_begin and to_end around them."""
    ary = sg.ravel(ary)
    pieces = [sg.ravel(sg.astype(to_begin, ary.dtype))] if to_begin is not None else []
    pieces.append(diff(ary))
    if to_end is not None:
        pieces.append(sg.ravel(sg.astype(to_end, ary.dtype)))
    return sg.concatenate(pieces) if len(pieces) > 1 else pieces[0]


@array_function_dispatch
def trapezoid(y, x=None, dx=1.0, axis=-1):
    """np.trapezoid: the integral of y by the trapezoid rule, at sample points x (else spaced dx)."""
    y = sg.asarray(y)
    axis = _axes(axis, y.ndim)[0]
    if x is None:
        d = dx
    else:
        x = sg.asarray(x)
        d = diff(x, axis=-1 if x.ndim == 1 else axis)
        if x.ndim == 1:
            d = sg.reshape(d, (1,) * axis + (d.shape[0],) + (1,) * (y.ndim - axis - 1))
    later, earlier = _along(axis, y.ndim, slice(1, None)), _along(axis, y.ndim, slice(None, -1))
    return sg.sum(sg.divide(sg.multiply(d, sg.add(y[later], y[earlier])), 2.0), axis)


def _cumulative_with_initial(cumulative, identity, x, axis, dtype, out, include_initial, name):
    """The Array API's cumulative_sum/cumulative_prod: axis may be omitted only for 1-d x; include_initial
    puts the identity first."""
    x = sg.asarray(x)
    if axis is None:
        if x.ndim > 1:
            fail(f"{name}: axis must be specified for an array of more than one dimension (shape {x.shape})",
                 ValueError)
        axis = 0
    result = cumulative(x, axis, dtype, out)
    if include_initial:
        axis = _axes(axis, result.ndim)[0]
        start = sg.full(result.shape[:axis] + (1,) + result.shape[axis + 1:], identity, result.dtype)
        result = sg.concatenate([start, result], axis)
    return result


@array_function_dispatch
def cumulative_sum(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    return _cumulative_with_initial(sg.cumsum, 0, x, axis, dtype, out, include_initial, "cumulative_sum")


@array_function_dispatch
def cumulative_prod(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    return _cumulative_with_initial(sg.cumprod, 1, x, axis, dtype, out, include_initial, "cumulative_prod")


@array_function_dispatch
def polyval(p, x):
    """np.polyval: p[0] * x**(n-1) + ... + p[n-1], by Horner's rule as NumPy evaluates it."""
    p, x = sg.asarray(p), sg.asarray(x)
    if p.ndim != 1:
        fail(f"polyval: p must be 1-d coefficients, got shape {p.shape}", ValueError)
    y = sg.zeros_like(x, dtypes.promote([p.dtype, x.dtype]))
    for i in range(p.shape[0]):
        y = sg.add(sg.multiply(y, x), p[i])
    return y


@array_function_dispatch
def vander(x, N=None, increasing=False):
    """np.vander: columns x**(N-1), ..., x**0 (increasing=True: x**0 first), as running products of x."""
    x = sg.asarray(x)
    if x.ndim != 1:
        fail(f"x must be a one-dimensional array or sequence, got shape {x.shape}", ValueError)
    N = x.shape[0] if N is None else operator.index(N)
    dtype = dtypes.promote([x.dtype, dtypes.INT64])
    ones = sg.ones((x.shape[0], min(N, 1)), dtype)
    powers = sg.cumprod(sg.broadcast_to(sg.reshape(sg.astype(x, dtype), (-1, 1)), (x.shape[0], N - 1)), axis=1) \
        if N > 1 else sg.zeros((x.shape[0], 0), dtype)
    result = sg.concatenate([ones, powers], axis=1)
    return result if increasing else result[:, ::-1]


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """np.logspace: base ** linspace(start, stop); traced end points are differentiable."""
    if not isinstance(start, Tracer) and not isinstance(stop, Tracer) and not isinstance(base, Tracer):
        return np.logspace(start, stop, num, endpoint, base, dtype, axis)
    result = sg.power(base, linspace(start, stop, num, endpoint, axis=axis))
    return result if dtype is None else sg.astype(result, dtype)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """np.geomspace: a geometric sequence from start to stop (end points exact, signs as NumPy's: both
    must share one); traced end points are differentiable."""
    if not isinstance(start, Tracer) and not isinstance(stop, Tracer):
        return np.geomspace(start, stop, num, endpoint, dtype, axis)
    start, stop = sg.asarray(start), sg.asarray(stop)
    sign = sg.sign(start)
    result = sg.multiply(logspace(sg.log10(sg.divide(start, sign)), sg.log10(sg.divide(stop, sign)), num, endpoint,
                                  base=10.0), sign)
    if num > 0:  # the end points exactly, as NumPy sets them
        pieces = [sg.expand_dims(sg.broadcast_to(sg.astype(start, result.dtype), result.shape[1:]), 0)]
        middle_end = num - 1 if endpoint and num > 1 else num
        pieces.append(result[1:middle_end])
        if endpoint and num > 1:
            pieces.append(sg.expand_dims(sg.broadcast_to(sg.astype(stop, result.dtype), result.shape[1:]), 0))
        result = sg.concatenate(pieces)
    result = sg.moveaxis(result, 0, axis) if result.ndim > 1 else result
    return result if dtype is None else sg.astype(result, dtype)
