"""NumPy's functions that build, rearrange and select: creation, flips, tiles, stacks, splits, padding,
triangles and diagonals. Each is a composition of existing primitives (slices, gathers, concatenation,
where), so its derivative and both backends' lowering come with them.
"""
from __future__ import annotations

import builtins
import operator

import numpy as np

from .. import dtypes
from ..core import Tracer, UnsupportedOpError, current_builder, fail
from . import arrays as sg
from .arrays import _axes, no_out
from .dispatch import array_function_dispatch
from .indexing import getitem, take

# ----------------------------------------------------------------------------- creation


def array(object, dtype=None, copy=True, ndmin=0):
    """np.array: nested lists of traced values stack; while tracing, a NumPy array becomes a traced constant
    (as jnp.array), so `sg.array(c)[i]` indexes it with a traced index."""
    result = sg.asarray(object, dtype)
    builder = current_builder()
    if builder is not None and not isinstance(result, Tracer):
        result = Tracer(builder.lift(np.array(result)), builder)
    elif copy and isinstance(result, np.ndarray) and result is object:
        result = result.copy()
    if result.ndim < ndmin:
        result = sg.reshape(result, (1,) * (ndmin - result.ndim) + result.shape)
    return result


def arange(start, stop=None, step=None, dtype=None):
    """np.arange, of Python numbers: its length depends on their values, which a traced value does not have."""
    _concrete("arange", start, stop, step)
    return np.arange(start, stop, step, dtype=dtype) if stop is not None else np.arange(start, dtype=dtype)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    """np.linspace; traced (or array) end points give start + i * step, differentiable in both."""
    if not isinstance(start, Tracer) and not isinstance(stop, Tracer):
        return np.linspace(start, stop, num, endpoint, retstep, dtype, axis)
    num = operator.index(num)
    if num < 0:
        fail(f"linspace: number of samples, {num}, must be non-negative", ValueError)
    start, stop = sg.asarray(start), sg.asarray(stop)
    compute = dtypes.float_result(dtypes.promote([start.dtype, stop.dtype]))
    start, stop = sg.astype(start, compute), sg.astype(stop, compute)
    divisions = num - 1 if endpoint else num
    delta = sg.subtract(stop, start)
    step = sg.divide(delta, float(divisions)) if divisions > 0 else np.float64(np.nan)  # NumPy's step then
    shape = np.broadcast_shapes(start.shape, stop.shape)
    positions = np.arange(num, dtype=compute).reshape((num,) + (1,) * len(shape))
    samples = sg.add(sg.multiply(positions, step if divisions > 0 else delta), start)  # one sample: start
    if endpoint and num > 1:
        samples = sg.concatenate([samples[:-1], sg.expand_dims(sg.broadcast_to(stop, shape), 0)])
    samples = sg.moveaxis(samples, 0, axis) if shape else samples
    samples = sg.astype(samples, dtype) if dtype is not None else samples
    return (samples, step) if retstep else samples


def eye(N, M=None, k=0, dtype=dtypes.FLOAT64):
    return np.eye(N, M, k, dtype=dtypes.canonical(dtype))


def identity(n, dtype=dtypes.FLOAT64):
    return np.identity(n, dtype=dtypes.canonical(dtype))


def empty(shape, dtype=None):
    """np.empty: zeros (symgrad never hands out uninitialized memory)."""
    return sg.zeros(shape, dtype)


def empty_like(x, dtype=None):
    return sg.zeros_like(x, dtype)


def full_like(x, fill_value, dtype=None):
    """np.full_like; a traced fill value is broadcast to x's shape."""
    shape = x.shape if isinstance(x, Tracer) else np.shape(x)
    dtype = dtype or sg.asarray(x).dtype
    if isinstance(fill_value, Tracer):
        return sg.broadcast_to(sg.astype(fill_value, dtype), shape)
    return sg.full(shape, fill_value, dtype)


def _concrete(name, *values):
    for value in values:
        if isinstance(value, Tracer):
            fail(f"{name}: the length of its result depends on the value of a traced argument "
                 f"{value.value.type_str()}; pass Python numbers (or make the argument static)", TypeError)


# ----------------------------------------------------------------------------- flips, tiles, repeats

@array_function_dispatch
def flip(m, axis=None):
    m = sg.asarray(m)
    axes = _axes(axis, m.ndim)
    return getitem(m, tuple(slice(None, None, -1) if i in axes else slice(None) for i in range(m.ndim)))


@array_function_dispatch
def fliplr(m):
    m = sg.asarray(m)
    if m.ndim < 2:
        fail(f"fliplr: input must be at least 2-d, got shape {m.shape}", ValueError)
    return flip(m, 1)


@array_function_dispatch
def flipud(m):
    m = sg.asarray(m)
    if m.ndim < 1:
        fail("flipud: input must be at least 1-d", ValueError)
    return flip(m, 0)


@array_function_dispatch
def tile(A, reps):
    """np.tile: each axis repeated reps[i] times (a broadcast over a new axis before it, then a reshape)."""
    A = sg.asarray(A)
    reps = (operator.index(reps),) if not isinstance(reps, (tuple, list)) else tuple(operator.index(r) for r in reps)
    ndim = builtins.max(len(reps), A.ndim)
    shape = (1,) * (ndim - A.ndim) + A.shape
    reps = (1,) * (ndim - len(reps)) + reps
    spread = sg.reshape(A, tuple(d for s in shape for d in (1, s)))
    spread = sg.broadcast_to(spread, tuple(d for r, s in zip(reps, shape) for d in (r, s)))
    tiled = sg.reshape(spread, tuple(r * s for r, s in zip(reps, shape)))
    if isinstance(tiled, np.ndarray) and not tiled.flags.owndata:  # np.tile's result is an array of its own, not
        tiled = tiled.copy()  # a read-only broadcast view of A (or A itself)
    return tiled


@array_function_dispatch
def repeat(a, repeats, axis=None):
    """np.repeat: a gather whose indices repeat; the repeats must be known (they set the shape)."""
    _concrete("repeat", repeats)
    a = sg.asarray(a)
    if axis is None:
        a, axis = sg.ravel(a), 0
    axis = _axes(axis, a.ndim)[0] if a.ndim else 0
    if a.ndim == 0:
        a = sg.reshape(a, (1,))
    return take(a, np.repeat(np.arange(a.shape[axis]), repeats), axis=axis)


# ----------------------------------------------------------------------------- stacks, splits, appends, pads

@array_function_dispatch
def atleast_1d(x):
    x = sg.asarray(x)
    return sg.reshape(x, (1,)) if x.ndim == 0 else x


@array_function_dispatch
def atleast_2d(x):
    x = sg.asarray(x)
    return sg.reshape(x, (1,) * (2 - x.ndim) + x.shape) if x.ndim < 2 else x


@array_function_dispatch
def atleast_3d(x):
    x = sg.asarray(x)
    shape = {0: (1, 1, 1), 1: (1,) + x.shape + (1,), 2: x.shape + (1,)}.get(x.ndim, x.shape)
    return sg.reshape(x, shape)


def hstack(tup):
    arrays = [atleast_1d(a) for a in tup]
    return sg.concatenate(arrays, axis=0 if arrays and arrays[0].ndim == 1 else 1)


def vstack(tup):
    return sg.concatenate([atleast_2d(a) for a in tup], axis=0)


def dstack(tup):
    return sg.concatenate([atleast_3d(a) for a in tup], axis=2)


def column_stack(tup):
    arrays = [sg.asarray(a) for a in tup]
    return sg.concatenate([sg.reshape(a, (-1, 1)) if a.ndim < 2 else a for a in arrays], axis=1)


def _pieces(ary, bounds, axis):
    return [getitem(ary, (slice(None),) * axis + (slice(start, stop),)) for start, stop in zip(bounds[:-1], bounds[1:])]


@array_function_dispatch
def array_split(ary, indices_or_sections, axis=0):
    """np.array_split: sections of nearly equal size (the first ones one longer), or cuts at given indices."""
    ary = sg.asarray(ary)
    axis = _axes(axis, ary.ndim)[0]
    n = ary.shape[axis]
    if isinstance(indices_or_sections, (int, np.integer)):
        sections = operator.index(indices_or_sections)
        if sections <= 0:
            fail("number sections must be larger than 0.", ValueError)
        size, extra = divmod(n, sections)
        sizes = [size + 1] * extra + [size] * (sections - extra)
        bounds = [0, *np.cumsum(sizes).tolist()]
    else:
        _concrete("split", *indices_or_sections)
        bounds = [0, *[builtins.min(builtins.max(int(i) + (n if int(i) < 0 else 0), 0), n)
                       for i in indices_or_sections], n]
        bounds = [builtins.max(b, bounds[i - 1]) if i else b for i, b in enumerate(bounds)]
    return _pieces(ary, bounds, axis)


@array_function_dispatch
def split(ary, indices_or_sections, axis=0):
    """np.split: as array_split, but sections must divide the axis equally."""
    ary = sg.asarray(ary)
    if isinstance(indices_or_sections, (int, np.integer)) and indices_or_sections > 0:
        n = ary.shape[_axes(axis, ary.ndim)[0]]
        if n % indices_or_sections:
            fail(f"array split does not result in an equal division: {n} into {indices_or_sections}", ValueError)
    return array_split(ary, indices_or_sections, axis)


@array_function_dispatch
def append(arr, values, axis=None):
    if axis is None:
        return sg.concatenate([sg.ravel(arr), sg.ravel(values)])
    return sg.concatenate([arr, values], axis=axis)


_INDEX_MODES = ("edge", "reflect", "symmetric", "wrap")


@array_function_dispatch
def pad(array, pad_width, mode="constant", constant_values=0):
    """np.pad with mode 'constant' (a traced fill too), 'edge', 'reflect', 'symmetric' or 'wrap' (gathers
    whose indices np.pad computes from the positions)."""
    x = sg.asarray(array)
    widths = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (x.ndim, 2))
    if np.any(widths < 0):
        fail("pad: index can't contain negative values", ValueError)
    if mode not in ("constant",) + _INDEX_MODES:
        fail(f"pad: mode {mode!r} is not supported; use one of 'constant', {', '.join(map(repr, _INDEX_MODES))}",
             UnsupportedOpError)
    for axis, (before, after) in enumerate(widths.tolist()):
        if not before and not after:
            continue
        if mode != "constant":
            if x.shape[axis] == 0:
                fail(f"pad: can't extend empty axis {axis} using mode {mode!r}", ValueError)
            x = take(x, np.pad(np.arange(x.shape[axis]), (before, after), mode=mode), axis=axis)
            continue
        fills = _constant_fills(constant_values, x.ndim, axis)
        parts = []
        for width, fill in zip((before, after), fills):
            shape = x.shape[:axis] + (width,) + x.shape[axis + 1:]
            parts.append(sg.broadcast_to(sg.astype(fill, x.dtype), shape))
        x = sg.concatenate([parts[0], x, parts[1]], axis=axis)
    return x


def _constant_fills(constant_values, ndim, axis):
    """The (before, after) fill values of one axis, from np.pad's scalar, pair or per-axis pairs."""
    if isinstance(constant_values, Tracer) and constant_values.ndim == 0:
        return constant_values, constant_values
    values = np.broadcast_to(np.asarray(constant_values, dtype=object), (ndim, 2))
    return values[axis, 0], values[axis, 1]


# ----------------------------------------------------------------------------- triangles and diagonals

@array_function_dispatch
def tril(m, k=0):
    """The lower triangle of the last two axes (a 1-d m is taken as every row), zeros above diagonal k."""
    m = sg.asarray(m)
    mask = np.tri(*m.shape[-2:], k=k, dtype=bool) if m.ndim >= 2 else np.tri(m.shape[0], k=k, dtype=bool)
    return sg.where(mask, m, sg.zeros((), m.dtype))


@array_function_dispatch
def triu(m, k=0):
    m = sg.asarray(m)
    mask = ~np.tri(*m.shape[-2:], k=k - 1, dtype=bool) if m.ndim >= 2 else ~np.tri(m.shape[0], k=k - 1, dtype=bool)
    return sg.where(mask, m, sg.zeros((), m.dtype))


@array_function_dispatch
def diagonal(a, offset=0, axis1=0, axis2=1):
    """np.diagonal: the diagonal `offset` of the plane (axis1, axis2), as the last axis."""
    a = sg.asarray(a)
    if a.ndim < 2:
        fail(f"diagonal requires an array of at least two dimensions, got shape {a.shape}", ValueError)
    first, second = _axes(axis1, a.ndim)[0], _axes(axis2, a.ndim)[0]
    if first == second:
        fail("diagonal: axis1 and axis2 cannot be the same", ValueError)
    a = sg.transpose(a, [i for i in range(a.ndim) if i not in (first, second)] + [first, second])
    rows, cols = a.shape[-2:]
    count = builtins.max(0, builtins.min(rows, cols - offset) if offset >= 0 else builtins.min(rows + offset, cols))
    start_row, start_col = (0, offset) if offset >= 0 else (-offset, 0)
    positions = np.arange(count)
    return getitem(a, (Ellipsis, positions + start_row, positions + start_col))


@array_function_dispatch
def diag(v, k=0):
    """np.diag: the diagonal k of a 2-d v, or the square matrix with the 1-d v on diagonal k (a gather
    from v and one zero)."""
    v = sg.asarray(v)
    if v.ndim == 2:
        return diagonal(v, k)
    if v.ndim != 1:
        fail(f"diag: input must be 1- or 2-d, got shape {v.shape}", ValueError)
    n = v.shape[0]
    size = n + builtins.abs(k)
    rows, cols = np.indices((size, size))
    along = rows if k >= 0 else cols  # the position in v of each diagonal entry
    index = np.where(cols - rows == k, along, n)
    padded = sg.concatenate([v, sg.zeros((1,), v.dtype)])
    return take(padded, index)


@array_function_dispatch
def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """np.trace: the sum of a diagonal (sg.trace(f, *args) with a function traces it, see symgrad.trace)."""
    no_out("trace", out)
    return sg.sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)
