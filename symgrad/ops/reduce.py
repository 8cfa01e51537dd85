"""Reductions over a set of axes whose rules need elementwise ops: reduce_max, reduce_min, reduce_prod.
(reduce_sum, the adjoint of broadcast_to, is in shape.py.)"""
import numpy as np

from ..core import Primitive
from . import elementwise as E
from .shape import convert_p, expand_reduced, reduce_shape, reduce_sum_p


def _extremum_weights(ans, x, axes):
    """1/count at the positions that attain the extremum, 0 elsewhere (ties share evenly)."""
    hits = convert_p(E.equal(x, expand_reduced(ans, x.shape, axes)), dtype=x.dtype)
    count = reduce_sum_p(hits, axes=axes)
    return E.divide(hits, expand_reduced(count, x.shape, axes))


def _extremum_vjp(ct, ans, x, axes):
    return (E.multiply(expand_reduced(ct, x.shape, axes), _extremum_weights(ans, x, axes)),)


def _extremum_jvp(tangents, ans, x, axes):
    (t,) = tangents
    if t is None:
        return None
    return reduce_sum_p(E.multiply(t, _extremum_weights(ans, x, axes)), axes=axes)


reduce_max_p = Primitive("reduce_max", reduce_shape, lambda x, axes: np.max(x, axis=axes),
                         vjp=_extremum_vjp, jvp=_extremum_jvp)
reduce_min_p = Primitive("reduce_min", reduce_shape, lambda x, axes: np.min(x, axis=axes),
                         vjp=_extremum_vjp, jvp=_extremum_jvp)


def _prod_partials(ans, x, axes):
    """d prod / d x_i = product of the other elements, exact with zeros present."""
    is_zero = E.equal(x, 0)
    zeros = reduce_sum_p(convert_p(is_zero, dtype=x.dtype), axes=axes)
    nonzero_product = reduce_prod_p(E.where(is_zero, 1, x), axes=axes)
    zeros_b = expand_reduced(zeros, x.shape, axes)
    others_if_no_zero = E.divide(expand_reduced(ans, x.shape, axes), E.where(is_zero, 1, x))
    only_zero_here = E.logical_and(is_zero, E.equal(zeros_b, 1))
    return E.where(E.equal(zeros_b, 0), others_if_no_zero,
                   E.where(only_zero_here, expand_reduced(nonzero_product, x.shape, axes), 0))


def _prod_vjp(ct, ans, x, axes):
    return (E.multiply(expand_reduced(ct, x.shape, axes), _prod_partials(ans, x, axes)),)


def _prod_jvp(tangents, ans, x, axes):
    (t,) = tangents
    return None if t is None else reduce_sum_p(E.multiply(t, _prod_partials(ans, x, axes)), axes=axes)


reduce_prod_p = Primitive("reduce_prod", reduce_shape, lambda x, axes: np.prod(x, axis=axes),
                          vjp=_prod_vjp, jvp=_prod_jvp)
