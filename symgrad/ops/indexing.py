"""Indexing primitives: strided slice and its adjoint (unslice), take and its adjoint (scatter_add)."""
import numpy as np

from .. import dtypes
from ..core import Primitive, ShapeError


def strided_slices(starts, steps, sizes):
    """Python slices taking `sizes[i]` elements from `starts[i]` in steps of `steps[i]`, one per axis."""
    result = []
    for start, step, size in zip(starts, steps, sizes):
        stop = start + step * size
        result.append(slice(start, stop if stop >= 0 else None, step))
    return tuple(result)


# ----------------------------------------------------------------------------- slice / unslice

def _slice_shape(inputs, starts, steps, sizes):
    (x,) = inputs
    if not len(starts) == len(steps) == len(sizes) == x.ndim:
        raise ShapeError(f"slice of shape {x.shape} needs one (start, step, size) per axis")
    for dim, start, step, size in zip(x.shape, starts, steps, sizes):
        last = start + step * (size - 1)
        if size and not (0 <= start < dim and 0 <= last < dim) or step == 0:
            raise ShapeError(f"slice start={start} step={step} size={size} is out of range for a dimension {dim}")
    return tuple(sizes), x.dtype


def _slice_impl(x, starts, steps, sizes):
    return x[strided_slices(starts, steps, sizes)]


slice_p = Primitive("slice", _slice_shape, _slice_impl,
                    vjp=lambda ct, ans, x, starts, steps, sizes:
                    (unslice_p(ct, shape=x.shape, starts=starts, steps=steps),),
                    linear=True)


def _unslice_shape(inputs, shape, starts, steps):
    (x,) = inputs
    _slice_shape([np.empty(shape, x.dtype)], starts, steps, x.shape)
    return tuple(shape), x.dtype


def _unslice_impl(x, shape, starts, steps):
    out = np.zeros(shape, x.dtype)
    out[strided_slices(starts, steps, x.shape)] = x
    return out


unslice_p = Primitive("unslice", _unslice_shape, _unslice_impl,
                      vjp=lambda ct, ans, x, shape, starts, steps:
                      (slice_p(ct, starts=starts, steps=steps, sizes=x.shape),),
                      linear=True)


def slice_axis(x, axis, start, size):
    """x[..., start:start+size, ...] along one axis."""
    starts = tuple(start if i == axis else 0 for i in range(x.ndim))
    sizes = tuple(size if i == axis else d for i, d in enumerate(x.shape))
    return slice_p(x, starts=starts, steps=(1,) * x.ndim, sizes=sizes)


# ----------------------------------------------------------------------------- take / scatter_add

def _check_index(idx):
    if np.dtype(idx.dtype).kind not in "iu":
        raise TypeError(f"index arrays must be integers, got {idx.dtype}")


def _take_shape(inputs, axis):
    x, idx = inputs
    _check_index(idx)
    if not 0 <= axis < x.ndim:
        raise ShapeError(f"take: axis {axis} is out of range for shape {x.shape}")
    return x.shape[:axis] + idx.shape + x.shape[axis + 1:], x.dtype


def _take_impl(x, idx, axis):
    return np.take(x, idx, axis=axis)


def _take_vjp(ct, ans, x, idx, axis):
    return scatter_add_p(ct, idx, axis=axis, size=x.shape[axis]), None


def _take_jvp(tangents, ans, x, idx, axis):
    t = tangents[0]
    return None if t is None else take_p(t, idx, axis=axis)


take_p = Primitive("take", _take_shape, _take_impl, vjp=_take_vjp, jvp=_take_jvp)


def _scatter_shape(inputs, axis, size):
    upd, idx = inputs
    _check_index(idx)
    if upd.shape[axis:axis + idx.ndim] != idx.shape:
        raise ShapeError(f"scatter_add: update shape {upd.shape} does not hold index shape {idx.shape} at axis {axis}")
    return upd.shape[:axis] + (size,) + upd.shape[axis + idx.ndim:], upd.dtype


def _scatter_impl(upd, idx, axis, size):
    out = np.zeros(upd.shape[:axis] + (size,) + upd.shape[axis + idx.ndim:], upd.dtype)
    np.add.at(out, (slice(None),) * axis + (idx,), upd)
    return out


def _scatter_vjp(ct, ans, upd, idx, axis, size):
    return (take_p(ct, idx, axis=axis) if dtypes.is_float(upd.dtype) else None), None


def _scatter_jvp(tangents, ans, upd, idx, axis, size):
    t = tangents[0]
    return None if t is None else scatter_add_p(t, idx, axis=axis, size=size)


scatter_add_p = Primitive("scatter_add", _scatter_shape, _scatter_impl, vjp=_scatter_vjp, jvp=_scatter_jvp)


# ----------------------------------------------------------------------------- wrap_index

def _wrap_index_shape(inputs, size, negative):
    (idx,) = inputs
    _check_index(idx)
    return idx.shape, idx.dtype


def wrap_index(index, size, negative):
    """A traced index array checked against its axis (IndexError) and wrapped from negative, or with negative=False
    (PyTorch's embedding) a negative index is out of bounds. The NumPy backend copies this function's source into
    the modules it writes."""
    index = np.asarray(index)
    lowest = -size if negative else 0
    if index.size and (index.min() < lowest or index.max() >= size):
        bad = index.min() if index.min() < lowest else index.max()
        raise IndexError(f"index {bad} is out of bounds for an axis of size {size}")
    return np.where(index < 0, index + size, index).astype(index.dtype)


# A traced index array, checked when the program runs (a bad index raises IndexError, never
# reads elsewhere) and wrapped from negative, as NumPy indexing does.
wrap_index_p = Primitive("wrap_index", _wrap_index_shape, wrap_index, vjp=lambda ct, ans, idx, **params: (None,),
                         jvp=lambda tangents, ans, idx, **params: None)
