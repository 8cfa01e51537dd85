"""Reductions over a set of axes: reduce_sum, reduce_max, reduce_min, reduce_prod."""
import numpy as np

from .core import Primitive, ShapeError
from .shape import broadcast_to_p, convert_p, reshape_p


def _reduce_shape(inputs, axes):
    (x,) = inputs
    if any(not 0 <= a < x.ndim for a in axes) or len(set(axes)) != len(axes):
        raise ShapeError(f"reduction axes {axes} are out of range for shape {x.shape}")
    return tuple(d for i, d in enumerate(x.shape) if i not in axes), x.dtype


def expand_reduced(value, shape, axes):
    """Broadcast a reduced value back to `shape` (reinserting the reduced axes as size 1)."""
    keep = tuple(1 if i in axes else d for i, d in enumerate(shape))
    leading = tuple(axes) == tuple(range(len(axes)))
    if not leading and value.shape != keep:
        value = reshape_p(value, shape=keep)
    return value if value.shape == tuple(shape) else broadcast_to_p(value, shape=tuple(shape))


def _sum_vjp(ct, ans, x, axes):
    return (expand_reduced(ct, x.shape, axes),)


reduce_sum_p = Primitive("reduce_sum", _reduce_shape, lambda x, axes: np.sum(x, axis=axes),
                         vjp=_sum_vjp, linear=True)


def _extremum_weights(ans, x, axes):
    """1/count at the positions that attain the extremum, 0 elsewhere (ties share evenly)."""
    from . import elementwise as E
    hits = convert_p(E.equal(x, expand_reduced(ans, x.shape, axes)), dtype=x.dtype)
    count = reduce_sum_p(hits, axes=axes)
    return E.divide(hits, expand_reduced(count, x.shape, axes))


def _extremum_vjp(ct, ans, x, axes):
    from . import elementwise as E
    return (E.multiply(expand_reduced(ct, x.shape, axes), _extremum_weights(ans, x, axes)),)


def _extremum_jvp(tangents, ans, x, axes):
    from . import elementwise as E
    (t,) = tangents
    if t is None:
        return None
    return reduce_sum_p(E.multiply(t, _extremum_weights(ans, x, axes)), axes=axes)


reduce_max_p = Primitive("reduce_max", _reduce_shape, lambda x, axes: np.max(x, axis=axes),
                         vjp=_extremum_vjp, jvp=_extremum_jvp)
reduce_min_p = Primitive("reduce_min", _reduce_shape, lambda x, axes: np.min(x, axis=axes),
                         vjp=_extremum_vjp, jvp=_extremum_jvp)


def _prod_partials(ans, x, axes):
    """d prod / d x_i = product of the other elements, exact with zeros present."""
    from . import elementwise as E
    is_zero = E.equal(x, 0)
    zeros = reduce_sum_p(convert_p(is_zero, dtype=x.dtype), axes=axes)
    nonzero_product = reduce_prod_p(E.where(is_zero, 1, x), axes=axes)
    zeros_b = expand_reduced(zeros, x.shape, axes)
    others_if_no_zero = E.divide(expand_reduced(ans, x.shape, axes), E.where(is_zero, 1, x))
    only_zero_here = E.logical_and(is_zero, E.equal(zeros_b, 1))
    return E.where(E.equal(zeros_b, 0), others_if_no_zero,
                   E.where(only_zero_here, expand_reduced(nonzero_product, x.shape, axes), 0))


def _prod_vjp(ct, ans, x, axes):
    from . import elementwise as E
    return (E.multiply(expand_reduced(ct, x.shape, axes), _prod_partials(ans, x, axes)),)


def _prod_jvp(tangents, ans, x, axes):
    from . import elementwise as E
    (t,) = tangents
    return None if t is None else reduce_sum_p(E.multiply(t, _prod_partials(ans, x, axes)), axes=axes)


reduce_prod_p = Primitive("reduce_prod", _reduce_shape, lambda x, axes: np.prod(x, axis=axes),
                          vjp=_prod_vjp, jvp=_prod_jvp)
