"""`x.at[key].set(v)` and its kin (add, multiply, min, max, get), JAX's functional form of `x[key] = v`.

A traced array cannot change, so an update is a new array: the updated positions (NumPy indexing of the
positions of x) receive `scatter_add` of their values, and `where` keeps x elsewhere; the gradient of
each piece follows. Repeated positions combine as in JAX: set keeps the last value, add sums,
multiply multiplies, min/max take the extremum.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..core import Tracer
from ..ops.indexing import scatter_add_p
from . import arrays as sg
from .indexing import getitem, take

# combine -> how its repeated values combine over an axis
_GROUPS = {"multiply": sg.prod, "min": sg.min, "max": sg.max}
# combine -> how x and the scattered values S (at the touched positions) make the result
_APPLY = {
    "set": lambda x, s, touched: sg.where(touched, s, x),
    "add": lambda x, s, touched: sg.add(x, s),
    "multiply": lambda x, s, touched: sg.multiply(x, sg.where(touched, s, 1)),
    "min": lambda x, s, touched: sg.where(touched, sg.minimum(x, s), x),
    "max": lambda x, s, touched: sg.where(touched, sg.maximum(x, s), x),
}


def _identity(combine, dtype):
    """The value that combining with changes nothing: 1 for multiply, the top (bottom) of dtype for min (max)."""
    if combine == "multiply":
        return 1
    top = np.inf if dtypes.is_float(dtype) else np.iinfo(dtype).max
    return top if combine == "min" else -top


def _holds_tracer(key) -> bool:
    return any(isinstance(k, Tracer) for k in (key if isinstance(key, tuple) else (key,)))


def _concrete_unique(positions, values, combine):
    """Positions known at trace time, each once, with their values combined (set: the last one)."""
    if combine == "add" or np.unique(positions).size == positions.size:
        return positions, values
    unique, first_from_end = np.unique(positions[::-1], return_index=True)
    if combine == "set":
        return unique, take(values, positions.size - 1 - first_from_end)
    groups = [np.flatnonzero(positions == p) for p in unique]
    width = max(len(g) for g in groups)
    gather = np.array([np.pad(g, (0, width - len(g)), constant_values=positions.size) for g in groups])
    padded = sg.concatenate([values, sg.full((1,), _identity(combine, values.dtype), values.dtype)])
    return unique, _GROUPS[combine](take(padded, gather), axis=1)


def _traced_last(positions, values, combine):
    """Traced positions: each value combined with those at equal positions, and kept only at the last of
    them (the others scatter zeros), by comparing every pair (positions.size**2 comparisons)."""
    k = positions.shape[0]
    equal = sg.equal(sg.reshape(positions, (k, 1)), sg.reshape(positions, (1, k)))
    if combine in _GROUPS:
        identity = sg.full((), _identity(combine, values.dtype), values.dtype)
        values = _GROUPS[combine](sg.where(equal, sg.reshape(values, (1, k)), identity), axis=1)
    later = np.triu(np.ones((k, k), bool), 1)
    last = sg.logical_not(sg.max(sg.logical_and(equal, later), axis=1))
    return last, sg.where(last, values, sg.zeros((), values.dtype))


def update(x, key, values, combine):
    """x with x[key] combined with `values` ('set', 'add', 'multiply', 'min' or 'max')."""
    x = sg.asarray(x)
    grid = np.arange(x.size, dtype=np.int64).reshape(x.shape)
    positions = getitem(grid, key) if _holds_tracer(key) else np.asarray(grid[key])
    values = sg.ravel(sg.broadcast_to(sg.astype(sg.asarray(values), x.dtype), np.shape(positions)
                                      if not isinstance(positions, Tracer) else positions.shape))
    positions = sg.ravel(positions)
    if isinstance(positions, Tracer):
        kept, values = (np.ones(positions.shape, bool), values) if combine == "add" else \
            _traced_last(positions, values, combine)
    else:
        positions, values = _concrete_unique(positions, values, combine)
        kept = np.ones(positions.shape, bool)
    scattered = scatter_add_p(values, positions, axis=0, size=x.size)
    touched = sg.greater(scatter_add_p(sg.astype(kept, dtypes.INT64), positions, axis=0, size=x.size), 0)
    result = _APPLY[combine](sg.ravel(x), scattered, touched)
    return sg.reshape(sg.astype(result, x.dtype), x.shape)


class IndexUpdateRef:
    """x.at[key]: the updates of x at `key`, each returning a new array."""

    __slots__ = ("array", "key")

    def __init__(self, array, key):
        self.array, self.key = array, key

    def get(self):
        return getitem(self.array, self.key)

    def set(self, values):
        return update(self.array, self.key, values, "set")

    def add(self, values):
        return update(self.array, self.key, values, "add")

    def multiply(self, values):
        return update(self.array, self.key, values, "multiply")

    def min(self, values):
        return update(self.array, self.key, values, "min")

    def max(self, values):
        return update(self.array, self.key, values, "max")


class IndexUpdateHelper:
    """x.at: index it (x.at[key]) to update x at key, as JAX's."""

    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array

    def __getitem__(self, key):
        return IndexUpdateRef(self.array, key)
