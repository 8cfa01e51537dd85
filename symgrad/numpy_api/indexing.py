"""NumPy indexing (`x[key]`) expressed with slice, reshape, transpose and take.

Supported keys: ints, slices (any step), None, Ellipsis, integer arrays (concrete or
traced; broadcast together, with NumPy's rule for where the result axes go) and
concrete boolean masks (turned into integer arrays at trace time; a 0-d one is a new axis
kept or emptied). A traced boolean mask would give a data-dependent shape, which a static
IR cannot hold.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..core import ShapeError, Tracer, fail
from ..ops.indexing import slice_p, take_p, wrap_index_p
from . import arrays as sg
from .arrays import _axes
from .dispatch import array_function_dispatch


def _is_array_index(item) -> bool:
    return isinstance(item, (Tracer, np.ndarray, list)) and not isinstance(item, (str, bytes))


class _NewAxisMask:
    """A 0-d boolean index (NumPy's and PyTorch's x[True], x[t0d > 0]): a new axis of length 1, indexed by [0] where
    the mask is true and by [] where it is false (Python's True is not the index 1)."""

    def __init__(self, keep):
        self.index = np.arange(int(keep), dtype=np.int64)


def _is_scalar_mask(item) -> bool:
    return isinstance(item, (bool, np.bool_)) or isinstance(item, np.ndarray) and item.dtype == np.bool_ and \
        item.ndim == 0


def _holds_tracer(items) -> bool:
    return any(_holds_tracer(item) if isinstance(item, (list, tuple)) else isinstance(item, Tracer) for item in items)


def _normalize(x, key) -> list:
    """Expand Ellipsis, turn concrete bool masks into int arrays, check the number of indices."""
    key = list(key) if isinstance(key, tuple) else [key]
    expanded = []
    for item in key:
        if isinstance(item, list) and _holds_tracer(item):  # x[:, [i]] with a traced i: an array of them, as jnp
            item = sg.asarray(item)
        elif isinstance(item, list):  # an empty list indexes nothing (NumPy makes it intp, not float64)
            item = np.asarray(item) if np.size(item) else np.asarray(item, dtype=np.int64)
        if _is_scalar_mask(item):
            expanded.append(_NewAxisMask(item))
            continue
        if isinstance(item, np.ndarray) and item.dtype == np.bool_:
            expanded.extend(np.nonzero(item))
            continue
        if isinstance(item, Tracer) and item.dtype == dtypes.BOOL:
            fail("indexing with a traced boolean mask gives a data-dependent shape; use "
                 "sg.where(mask, x, 0) (or sum with the mask) instead", TypeError)
        expanded.append(item)
    consuming = sum(1 for item in expanded if item is not None and item is not Ellipsis and
                    not isinstance(item, _NewAxisMask))
    if consuming > x.ndim:
        fail(f"too many indices for an array of shape {x.shape}: {consuming} were given", IndexError)
    ellipses = [i for i, item in enumerate(expanded) if item is Ellipsis]
    if len(ellipses) > 1:
        fail("an index can only have a single ellipsis ('...')", IndexError)
    if ellipses:
        at = ellipses[0]
        expanded[at:at + 1] = [slice(None)] * (x.ndim - consuming)
    else:
        expanded += [slice(None)] * (x.ndim - consuming)
    return expanded


def getitem(x, key):
    """x[key], as NumPy indexes (see the module docstring for the keys it takes)."""
    x = sg.asarray(x)
    key = _normalize(x, key)
    new_axes = tuple(i for i, item in enumerate(key) if item is None or isinstance(item, _NewAxisMask))
    if new_axes:  # x[.., None, ..] == expand_dims(x)[.., :, ..]
        x = sg.expand_dims(x, new_axes)
        key = [slice(None) if item is None else item.index if isinstance(item, _NewAxisMask) else item for item in key]
    advanced = any(_is_array_index(item) for item in key)
    starts, steps, sizes, drop, arrays = [], [], [], [], {}
    for axis, (item, dim) in enumerate(zip(key, x.shape)):
        if isinstance(item, slice):
            start, stop, step = item.indices(dim)
            size = len(range(start, stop, step))
            starts.append(start if size else 0)
            steps.append(step)
            sizes.append(size)
            continue
        if _is_array_index(item) or advanced:  # with arrays present, ints act as 0-d arrays
            arrays[axis] = item
        else:
            index = int(item)
            if not -dim <= index < dim:
                fail(f"index {index} is out of bounds for axis {axis} with size {dim} (shape {x.shape})", IndexError)
            drop.append(axis)
            starts.append(index % dim)
            steps.append(1)
            sizes.append(1)
            continue
        starts.append(0)
        steps.append(1)
        sizes.append(dim)
    if (tuple(starts), tuple(steps), tuple(sizes)) != ((0,) * x.ndim, (1,) * x.ndim, x.shape):
        x = slice_p(x, starts=tuple(starts), steps=tuple(steps), sizes=tuple(sizes))
    if drop:
        x = sg.reshape(x, tuple(d for i, d in enumerate(x.shape) if i not in drop))
    return _advanced(x, arrays) if arrays else x


def _advanced(x, arrays: dict):
    """Integer-array indexing on the given axes: merge them into one axis and `take`."""
    axes = sorted(arrays)
    contiguous = axes == list(range(axes[0], axes[-1] + 1))
    if not contiguous:  # NumPy puts the broadcast index dims first
        x = sg.transpose(x, axes + [a for a in range(x.ndim) if a not in axes])
        axes = list(range(len(axes)))
    position = axes[0]
    dims = [x.shape[a] for a in axes]
    indices = [_checked_index(arrays[a], dim, a, x) for a, dim in zip(sorted(arrays), dims)]
    try:
        index_shape = tuple(np.broadcast_shapes(*[np.shape(i) if not isinstance(i, Tracer) else i.shape
                                                  for i in indices]))
    except ValueError:
        fail("shape mismatch: index arrays could not be broadcast together with shapes "
             + " ".join(str(np.shape(i) if not isinstance(i, Tracer) else i.shape) for i in indices), ShapeError)
    linear = indices[0]
    for index, dim in zip(indices[1:], dims[1:]):
        linear = sg.add(sg.multiply(linear, dim), index)
    merged = x.shape[:position] + (int(np.prod(dims, dtype=np.int64)),) + x.shape[position + len(dims):]
    x = sg.reshape(x, merged)
    linear = sg.broadcast_to(sg.astype(linear, dtypes.INT64), index_shape)
    return take_p(x, linear, axis=position)


def _checked_index(index, dim, axis, x):
    """An index array with negative entries wrapped; concrete ones are bounds-checked now."""
    if isinstance(index, Tracer):
        if index.dtype.kind not in "iu":
            fail(f"arrays used as indices must be of integer type, got {index.dtype}", TypeError)
        if index.dtype not in (dtypes.INT32, dtypes.INT64):  # uint8 labels: index + dim must not wrap
            index = sg.astype(index, dtypes.INT64)
        return wrap_index_p(index, size=dim, negative=True)
    index = np.asarray(index)
    if index.dtype.kind not in "iu":
        fail(f"arrays used as indices must be of integer (or boolean) type, got {index.dtype}", TypeError)
    if index.size and (index.min() < -dim or index.max() >= dim):
        bad = index.min() if index.min() < -dim else index.max()
        fail(f"index {bad} is out of bounds for axis {axis} with size {dim} (shape {x.shape})", IndexError)
    index = index.astype(np.int64)
    return np.where(index < 0, index + dim, index)


@array_function_dispatch
def take(x, indices, axis=None):
    """NumPy take: indices along `axis` (the flattened array when axis is None)."""
    x = sg.asarray(x)
    if axis is None:
        x, axis = sg.ravel(x), 0
    axis = _axes(axis, x.ndim)[0]
    key = (slice(None),) * axis + (indices,)
    return getitem(x, key)


@array_function_dispatch
def take_along_axis(x, indices, axis):
    """NumPy take_along_axis: pick one element along `axis` per position of `indices` (axis None: of x flattened,
    as NumPy's; it took axis 0)."""
    x, indices = sg.asarray(x), sg.asarray(indices)
    if axis is None:
        x, axis = sg.reshape(x, (-1,)), 0
    if indices.ndim != x.ndim:
        fail(f"take_along_axis: indices of shape {indices.shape} need the rank of x, shape {x.shape}")
    axis = _axes(axis, x.ndim)[0]
    key = []
    for i, d in enumerate(x.shape):
        if i == axis:
            key.append(indices)
        else:
            shape = [1] * x.ndim
            shape[i] = d
            key.append(np.arange(d).reshape(shape))
    return getitem(x, tuple(key))
