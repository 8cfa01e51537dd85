"""Cumulative sums and products along one axis, from its start or (reverse=True) from its end.

As in JAX, `reverse` makes the adjoint of a cumulative sum another one: cumsum walked the other way.
"""
import numpy as np

from . import elementwise as E
from ..core import Primitive, ShapeError
from .indexing import slice_axis
from .shape import broadcast_to_p, concatenate_p


def _cumulative_shape(inputs, axis, reverse):
    (x,) = inputs
    if not 0 <= axis < x.ndim:
        raise ShapeError(f"cumulative op: axis {axis} is out of range for shape {x.shape}")
    if x.dtype == np.bool_:
        raise TypeError("cumulative op on booleans: convert them to integers first (sg.cumsum does)")
    return x.shape, x.dtype


def cumsum_impl(x, axis, reverse):
    """np.cumsum along `axis` (from its end when `reverse`), in x's dtype."""
    walk = (slice(None),) * axis + (slice(None, None, -1 if reverse else 1),)
    return np.cumsum(x[walk], axis=axis, dtype=x.dtype)[walk]


def cumprod_impl(x, axis, reverse):
    """np.cumprod along `axis` (from its end when `reverse`), in x's dtype."""
    walk = (slice(None),) * axis + (slice(None, None, -1 if reverse else 1),)
    return np.cumprod(x[walk], axis=axis, dtype=x.dtype)[walk]


cumsum_p = Primitive("cumsum", _cumulative_shape, cumsum_impl, linear=True,
                     vjp=lambda ct, ans, x, axis, reverse: (cumsum_p(ct, axis=axis, reverse=not reverse),))


# d y[i] / d x[j] (y = cumprod(x), j <= i) is the product of x[0..i] without x[j]: the product
# before j (the exclusive product, y[j-1]) times the product over (j, i]. Summing the latter over i
# is a linear recurrence, so both derivatives are products and sums only: exact where x has zeros,
# where dividing y by x would give 0/0.

def _cumprod_jvp(tangents, ans, x, axis, reverse):
    (t,) = tangents
    if t is None or x.shape[axis] <= 1:
        return t
    before = shift_in_one(ans, axis, toward_end=not reverse)
    return linear_recurrence(x, E.multiply(before, t), axis, reverse)


def _cumprod_vjp(ct, ans, x, axis, reverse):
    if x.shape[axis] <= 1:
        return (ct,)
    before = shift_in_one(ans, axis, toward_end=not reverse)
    after = linear_recurrence(shift_in_one(x, axis, toward_end=reverse), ct, axis, not reverse)
    return (E.multiply(before, after),)


cumprod_p = Primitive("cumprod", _cumulative_shape, cumprod_impl, vjp=_cumprod_vjp, jvp=_cumprod_jvp)


def shift_in_one(v, axis, toward_end):
    """v moved one place along `axis`, toward its end or its start, a 1 filling the place left."""
    n = v.shape[axis]
    one = broadcast_to_p(np.ones((), v.dtype), shape=v.shape[:axis] + (1,) + v.shape[axis + 1:])
    if toward_end:
        return concatenate_p(one, slice_axis(v, axis, 0, n - 1), axis=axis)
    return concatenate_p(slice_axis(v, axis, 1, n - 1), one, axis=axis)


def linear_recurrence(a, b, axis, reverse):
    """h with h[i] = a[i] * h[i-1] + b[i] along `axis` (h[i+1] when `reverse`), nothing before the first.

    Hillis and Steele's doubling scan: after the step of length s, position i holds the product of a
    and the recurrence over the 2s positions ending there. ceil(log2 n) steps of slices, products and
    sums, so it differentiates, to any order, as any graph of primitives does."""
    n = b.shape[axis]
    step = 1
    while step < n:
        near, far = (0, step) if reverse else (step, 0)  # where the updated and the reached positions start

        def updated(v, new):  # v with `new` at the positions updated, the first (last) `step` kept
            kept = slice_axis(v, axis, n - step if reverse else 0, step)
            return concatenate_p(*((new, kept) if reverse else (kept, new)), axis=axis)

        a_near, a_far = slice_axis(a, axis, near, n - step), slice_axis(a, axis, far, n - step)
        b_near, b_far = slice_axis(b, axis, near, n - step), slice_axis(b, axis, far, n - step)
        a, b = updated(a, E.multiply(a_near, a_far)), updated(b, E.add(E.multiply(a_near, b_far), b_near))
        step *= 2
    return b
