"""argsort along the last axis: an integer result, so no derivative of its own (sort's is a gather by it).

The NumPy backend and eager evaluation run np.argsort (stable, NaN last, O(n log n)); a backend with no
rule of its own lowers the decomposition: a ranking of every pair for a short axis, a bitonic sorting
network (O(n log(n)**2) comparisons) for a long one.
"""
import numpy as np

from .. import dtypes
from ..core import Primitive, ShapeError
from . import elementwise as E
from .indexing import slice_axis, take_p
from .shape import broadcast_to_p, concatenate_p, convert_p, reduce_sum_p, reshape_p


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


def _sorts_before(a, i, b, j):
    """Whether (value a, position i) sorts before (b, j): smaller, or a number against a NaN, or equal (both
    NaN) and earlier: NumPy's stable order, NaN last."""
    nan_a, nan_b = E.isnan(a), E.isnan(b)
    smaller = E.logical_or(E.less(a, b), E.logical_and(E.logical_not(nan_a), nan_b))
    tie = E.logical_or(E.equal(a, b), E.logical_and(nan_a, nan_b))
    return E.logical_or(smaller, E.logical_and(tie, E.less(i, j)))


# Longest axis sorted by ranking every pair (measured on LLVM, one core): ~25 ms a call at the limit; the
# network takes ~2 ms a call there but 2-4 s to compile (78 stages of gathers and selections).
RANKING_LIMIT = 4096


def _argsort_decomposed(x):
    """How a backend without a sort lowers argsort: short axes rank every pair (n**2 comparisons, few
    operations), long ones go through a bitonic sorting network (n log(n)**2 comparisons)."""
    return (_argsort_by_ranks if x.shape[-1] <= RANKING_LIMIT else _argsort_by_network)(x)


def _argsort_by_network(x):
    """Batcher's bitonic network on (value, position) pairs, the axis padded to a power of two with pairs
    sorting last; each stage compares every element with its partner (a fixed gather) and keeps the
    smaller or the larger of the two. Positions are carried as floats: an integer choice made from float
    comparisons is computed in integer arithmetic once the LLVM backend fuses it."""
    n = x.shape[-1]
    width = 1 << (n - 1).bit_length()
    lead, last = x.shape[:-1], x.ndim - 1
    padding = np.nan if dtypes.is_float(x.dtype) else np.iinfo(x.dtype).max
    values = x if width == n else concatenate_p(
        x, broadcast_to_p(np.full((), padding, x.dtype), shape=lead + (width - n,)), axis=last)
    places = broadcast_to_p(np.arange(width, dtype=np.float64), shape=lead + (width,))
    lanes = np.arange(width)
    block = 2
    while block <= width:
        step = block // 2
        while step:
            partner = lanes ^ step
            keeps_smaller = ((lanes & step) == 0) == ((lanes & block) == 0)
            other_values, other_places = take_p(values, partner, axis=last), take_p(places, partner, axis=last)
            first = _sorts_before(values, places, other_values, other_places)
            stays = E.logical_or(E.logical_and(keeps_smaller, first),
                                 E.logical_and(~keeps_smaller, E.logical_not(first)))
            values, places = E.where(stays, values, other_values), E.where(stays, places, other_places)
            step //= 2
        block *= 2
    return convert_p(slice_axis(places, last, 0, n), dtype=dtypes.INT64)


def _argsort_by_ranks(x):
    """Element i's rank is how many elements sort before it; the permutation puts each i at its rank."""
    n = x.shape[-1]
    positions = np.arange(n, dtype=np.int64)
    before = _sorts_before(_pairs(x, n, along=-1), positions, _pairs(x, n, along=-2), positions.reshape(n, 1))
    rank = reduce_sum_p(convert_p(before, dtype=dtypes.INT64), axes=(x.ndim,))  # [..., i]: j before i, summed
    at_rank = E.equal(_pairs(rank, n, along=-1), positions.reshape(n, 1))  # [..., r, i]: i has rank r
    return reduce_sum_p(E.where(at_rank, positions, 0), axes=(x.ndim,))


argsort_p = Primitive("argsort", _argsort_shape, argsort_impl, vjp=lambda ct, ans, x: (None,),
                      jvp=lambda tangents, ans, x: None, decompose=_argsort_decomposed)
