"""Reductions over a set of axes whose rules need elementwise ops: reduce_max, reduce_min, reduce_prod.
(reduce_sum, the adjoint of broadcast_to, is in shape.py.)"""
import numpy as np

from ..core import Primitive, ShapeError
from . import elementwise as E
from .cumulative import cumprod_p, shift_in_one
from .shape import broadcast_to_p, convert_p, expand_reduced, reduce_shape, reduce_sum_p, reshape_p, transpose_p


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


def _prod_partials(x, axes):
    """d prod / d x_i = the product of the elements before i times the product of those after it (the
    reduced axes flattened into one): products only, so exact where x has zeros, and so are its own
    derivatives (ans / x_i with the count of zeros held constant gave Hessians of 0 where they are not)."""
    kept = [a for a in range(x.ndim) if a not in axes]
    reduced = [a for a in range(x.ndim) if a in axes]
    n = int(np.prod([x.shape[a] for a in reduced], dtype=np.int64))
    if n <= 1:  # the product of nothing
        return broadcast_to_p(np.ones((), x.dtype), shape=x.shape)
    moved = transpose_p(x, perm=tuple(kept + reduced)) if kept + reduced != list(range(x.ndim)) else x
    rows = reshape_p(moved, shape=tuple(x.shape[a] for a in kept) + (n,))
    last = rows.ndim - 1
    before = shift_in_one(cumprod_p(rows, axis=last, reverse=False), last, toward_end=True)
    after = shift_in_one(cumprod_p(rows, axis=last, reverse=True), last, toward_end=False)
    partials = reshape_p(E.multiply(before, after), shape=moved.shape)
    if moved is x:
        return partials
    return transpose_p(partials, perm=tuple(int(i) for i in np.argsort(kept + reduced)))


def _prod_vjp(ct, ans, x, axes):
    return (E.multiply(expand_reduced(ct, x.shape, axes), _prod_partials(x, axes)),)


def _prod_jvp(tangents, ans, x, axes):
    (t,) = tangents
    return None if t is None else reduce_sum_p(E.multiply(t, _prod_partials(x, axes)), axes=axes)


reduce_prod_p = Primitive("reduce_prod", reduce_shape, lambda x, axes: np.prod(x, axis=axes),
                          vjp=_prod_vjp, jvp=_prod_jvp)


def _first_maximum(x, peak):
    """Where x (K, ...) has the first maximum of each column along axis 0 (the last NaN where there is one, as
    PyTorch's max pooling kernel, whose indices take each NaN it meets), given the columns' maxima `peak` (...): a
    bool array of x's shape. Written with primitives (not differentiated)."""
    k = x.shape[0]
    positions = np.arange(k, dtype=x.dtype).reshape((k,) + (1,) * (len(x.shape) - 1))  # (exact: k << 2**24)
    first = reduce_min_p(E.where(E.equal(x, expand_reduced(peak, x.shape, (0,))), positions, float(k)), axes=(0,))
    last_nan = reduce_max_p(E.where(E.isnan(x), positions, -1.0), axes=(0,))
    chosen = E.where(E.greater_equal(last_nan, 0.0), last_nan, first)
    return E.equal(positions, expand_reduced(chosen, x.shape, (0,)))


def _first_max_shape(inputs):
    (x,) = inputs
    if len(x.shape) < 1 or x.shape[0] == 0:
        raise ShapeError(f"first_max: needs at least one value along axis 0, got shape {tuple(x.shape)}")
    return reduce_shape(inputs, axes=(0,))


def _first_max_impl(x):
    """NumPy: the first maximum of each column, the element itself (its sign of zero kept); NaN where there is one."""
    return np.take_along_axis(x, np.argmax(x, axis=0)[None], axis=0)[0]


def _first_max_vjp(ct, ans, x):
    """Reads x alone, not the pooled output, as PyTorch's max pooling (which saves indices): an eager
    `nn.ReLU(inplace=True)` after `nn.MaxPool2d` writes that output before the backward."""
    return (E.where(_first_maximum(x, reduce_max_p(x, axes=(0,))), expand_reduced(ct, x.shape, (0,)), 0.0),)


def _first_max_jvp(tangents, ans, x):
    (t,) = tangents
    return None if t is None else reduce_sum_p(E.where(_first_maximum(x, ans), t, 0.0), axes=(0,))


def _first_max_decomposed(x):
    """The first maximum itself: the largest of it and the lowest value elsewhere (a sum with zeros elsewhere would
    make a first maximum -0.0 0.0, which max pooling keeps)."""
    lowest = -np.inf if np.dtype(x.dtype).kind == "f" else np.iinfo(x.dtype).min
    return reduce_max_p(E.where(_first_maximum(x, reduce_max_p(x, axes=(0,))), x, lowest), axes=(0,))


# first_max x: the maximum over axis 0 with PyTorch's max pooling gradient, all of it to the first maximum (or
# last NaN) of each column; a max pooling of patches (K, N*C*L) is one op, so an eager step defers it whole.
first_max_p = Primitive("first_max", _first_max_shape, _first_max_impl,
                        vjp=_first_max_vjp, jvp=_first_max_jvp, decompose=_first_max_decomposed)
