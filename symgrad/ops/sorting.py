"""argsort along the last axis: an integer result, so no derivative of its own (sort's is a gather by it).

The NumPy backend and eager evaluation run np.argsort (stable, NaN last, O(n log n)); a backend with no
rule of its own lowers the decomposition, which ranks every pair of the axis (O(n**2) comparisons).
"""
import numpy as np

from .. import dtypes
from ..core import Primitive, ShapeError
from . import elementwise as E
from .shape import broadcast_to_p, convert_p, reduce_sum_p, reshape_p


def _argsort_shape(inputs):
    (x,) = inputs
    if x.ndim == 0:
        raise ShapeError("argsort needs at least one axis")
    return x.shape, np.dtype(dtypes.INT64)


def argsort_impl(x):
    """np.argsort along the last axis, stable, NaN last."""
    return np.argsort(x, axis=-1, kind="stable").astype(np.int64)


def _pairs(v, n, along):
    """v (..., n) spread over (..., n, n), varying along the last axis (along=-1) or the one before."""
    lead = v.shape[:-1]
    shape = lead + ((1, n) if along == -1 else (n, 1))
    return broadcast_to_p(reshape_p(v, shape=shape), shape=lead + (n, n))


def _argsort_decomposed(x):
    """Element i's rank is how many elements sort before it (smaller, or NaN-free against a NaN, or equal
    and earlier); the permutation puts each i at its rank."""
    n = x.shape[-1]
    xi, xj = _pairs(x, n, along=-2), _pairs(x, n, along=-1)
    nan_i, nan_j = E.isnan(xi), E.isnan(xj)
    smaller = E.logical_or(E.less(xj, xi), E.logical_and(nan_i, E.logical_not(nan_j)))
    tie = E.logical_or(E.equal(xj, xi), E.logical_and(nan_i, nan_j))
    earlier = np.tri(n, k=-1, dtype=bool)  # [i, j]: j < i
    before = E.logical_or(smaller, E.logical_and(tie, earlier))
    rank = reduce_sum_p(convert_p(before, dtype=dtypes.INT64), axes=(x.ndim,))
    positions = np.arange(n, dtype=np.int64)
    at_rank = E.equal(_pairs(rank, n, along=-1), positions.reshape(n, 1))  # [r, i]: rank of i is r
    return reduce_sum_p(E.where(at_rank, positions, 0), axes=(x.ndim,))


argsort_p = Primitive("argsort", _argsort_shape, argsort_impl, vjp=lambda ct, ans, x: (None,),
                      jvp=lambda tangents, ans, x: None, decompose=_argsort_decomposed)
