"""NumPy's functions that lay arrays out differently or combine them by position: rot90, rollaxis, the
h/v/d splits, unstack, matrix_transpose, meshgrid, broadcast_arrays, select, kron, cross, the Array API's
vecdot/matvec/vecmat, ndim/shape/size, and NumPy's index helpers (tri, tril_indices, ...), which take
no traced value and are NumPy's own.
"""
from __future__ import annotations

import operator

import numpy as np

from .. import dtypes
from ..core import fail
from ..ops.elementwise import broadcast_shapes
from . import arrays as sg
from .arrays import _axes
from .dispatch import array_function_dispatch
from .rearrange import _concrete, array_split, flip

# ----------------------------------------------------------------------------- rotations and axes


@array_function_dispatch
def rot90(m, k=1, axes=(0, 1)):
    """np.rot90: k quarter turns in the plane of axes, from the first towards the second (flips and a swap)."""
    m = sg.asarray(m)
    axes = tuple(axes)
    if len(axes) != 2:
        fail("len(axes) must be 2.", ValueError)
    if m.ndim < 2:
        fail(f"rot90: m must be at least 2-d, got shape {m.shape}", ValueError)
    first, second = _axes(axes[0], m.ndim)[0], _axes(axes[1], m.ndim)[0]
    if first == second:
        fail(f"Axes must be different, got {axes}", ValueError)
    k = operator.index(k) % 4
    if k == 0:
        return m
    if k == 2:
        return flip(flip(m, first), second)
    order = list(range(m.ndim))
    order[first], order[second] = order[second], order[first]
    return sg.transpose(flip(m, second), order) if k == 1 else flip(sg.transpose(m, order), second)


@array_function_dispatch
def rollaxis(a, axis, start=0):
    """np.rollaxis: axis moved to stand before position start."""
    a = sg.asarray(a)
    axis = _axes(axis, a.ndim)[0]
    if not -a.ndim <= start <= a.ndim:
        fail(f"rollaxis: start {start} is out of bounds for an array of dimension {a.ndim}",
             np.exceptions.AxisError)
    start = start % (a.ndim + 1) if start < 0 else start
    if axis < start:
        start -= 1
    if axis == start:
        return a
    order = [i for i in range(a.ndim) if i != axis]
    order.insert(start, axis)
    return sg.transpose(a, order)


@array_function_dispatch
def matrix_transpose(x, /):
    """The Array API's matrix_transpose: the last two axes swapped."""
    x = sg.asarray(x)
    if x.ndim < 2:
        fail(f"matrix_transpose: input array must be at least 2-dimensional, got shape {x.shape}", ValueError)
    return sg.swapaxes(x, -1, -2)


# ----------------------------------------------------------------------------- splits and stacks

def _split_along(name, axis, min_ndim):
    @array_function_dispatch
    def split(ary, indices_or_sections):
        ary = sg.asarray(ary)
        if ary.ndim < min_ndim:
            fail(f"{name} only works on arrays of {min_ndim} or more dimensions, got shape {ary.shape}", ValueError)
        along = axis if ary.ndim > 1 or name != "hsplit" else 0
        if isinstance(indices_or_sections, (int, np.integer)) and ary.shape[along] % indices_or_sections:
            fail(f"array split does not result in an equal division: {ary.shape[along]} into "
                 f"{indices_or_sections}", ValueError)
        return array_split(ary, indices_or_sections, along)
    split.__name__ = split.__qualname__ = name
    split.__doc__ = f"np.{name}: np.split along axis {axis}" + (" (axis 0 of a 1-d array)." if name == "hsplit" else ".")
    return split


hsplit = _split_along("hsplit", 1, 1)
vsplit = _split_along("vsplit", 0, 2)
dsplit = _split_along("dsplit", 2, 3)


@array_function_dispatch
def unstack(x, /, *, axis=0):
    """np.unstack: the slices of x along axis, as a tuple."""
    x = sg.asarray(x)
    if x.ndim == 0:
        fail("Input array must be at least 1-d.", ValueError)
    moved = sg.moveaxis(x, _axes(axis, x.ndim)[0], 0)
    return tuple(moved[i] for i in range(moved.shape[0]))


def broadcast_arrays(*args):
    """np.broadcast_arrays: every argument broadcast to their common shape (a tuple)."""
    arrays = [sg.asarray(a) for a in args]
    common = broadcast_shapes(*[a.shape for a in arrays])
    return tuple(sg.broadcast_to(a, common) for a in arrays)


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """np.meshgrid: coordinate arrays of the 1-d xi (indexing 'xy': the first two axes swapped, as NumPy's)."""
    if indexing not in ("xy", "ij"):
        fail("Valid values for `indexing` are 'xy' and 'ij'.", ValueError)
    count = len(xi)
    output = []
    for i, x in enumerate(xi):
        shape = [1] * count
        shape[i] = -1
        if indexing == "xy" and count > 1 and i < 2:
            shape[0], shape[1] = shape[1], shape[0]
        output.append(sg.reshape(sg.ravel(x), tuple(shape)))
    return tuple(output) if sparse else broadcast_arrays(*output)


def select(condlist, choicelist, default=0):
    """np.select: from the first choice whose condition holds, else default (nested where, last to first)."""
    if len(condlist) != len(choicelist):
        fail("list of cases must be same length as list of conditions", ValueError)
    if not choicelist:
        fail("select with an empty condition list is not possible", ValueError)
    choices = [sg.asarray(c) for c in choicelist] + [sg.asarray(default)]
    weak = isinstance(default, (bool, int, float))  # a Python default yields to the choices' dtype, as in NumPy
    dtype = dtypes.promote([c.dtype for c in choices[:-1 if weak else None]], [default] if weak else [])
    result = sg.astype(choices[-1], dtype)
    for condition, choice in zip(reversed(condlist), reversed(choices[:-1])):
        condition = sg.asarray(condition)
        if condition.dtype != dtypes.BOOL:
            fail(f"invalid entry in condlist: should be boolean ndarray, got dtype {condition.dtype}", TypeError)
        result = sg.where(condition, sg.astype(choice, dtype), result)
    return result


# ----------------------------------------------------------------------------- products

@array_function_dispatch
def kron(a, b):
    """np.kron: the block matrix of a's elements times b, on any number of axes (a product of a's axes
    interleaved with b's, then merged)."""
    a, b = sg.asarray(a), sg.asarray(b)
    if a.ndim == 0 or b.ndim == 0:
        return sg.multiply(a, b)
    ndim = max(a.ndim, b.ndim)
    a_shape = (1,) * (ndim - a.ndim) + a.shape
    b_shape = (1,) * (ndim - b.ndim) + b.shape
    spread_a = sg.reshape(a, tuple(d for size in a_shape for d in (size, 1)))
    spread_b = sg.reshape(b, tuple(d for size in b_shape for d in (1, size)))
    return sg.reshape(sg.multiply(spread_a, spread_b), tuple(p * q for p, q in zip(a_shape, b_shape)))


@array_function_dispatch
def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """np.cross of 3- (and 2-) vectors along axisa/axisb, the result's along axisc (axis sets all three);
    two 2-vectors give the z component alone. Components multiply and subtract as NumPy's do."""
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = sg.asarray(a), sg.asarray(b)
    a, b = sg.moveaxis(a, _axes(axisa, a.ndim)[0], -1), sg.moveaxis(b, _axes(axisb, b.ndim)[0], -1)
    if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        fail(f"incompatible dimensions for cross product (dimension must be 2 or 3): shapes {a.shape} and "
             f"{b.shape} along the vector axes", ValueError)
    dtype = dtypes.promote([a.dtype, b.dtype])
    a, b = sg.astype(a, dtype), sg.astype(b, dtype)
    a0, a1, b0, b1 = a[..., 0], a[..., 1], b[..., 0], b[..., 1]
    z = sg.subtract(sg.multiply(a0, b1), sg.multiply(a1, b0))
    if a.shape[-1] == 2 and b.shape[-1] == 2:
        return z
    if a.shape[-1] == 3 and b.shape[-1] == 3:
        a2, b2 = a[..., 2], b[..., 2]
        x = sg.subtract(sg.multiply(a1, b2), sg.multiply(a2, b1))
        y = sg.subtract(sg.multiply(a2, b0), sg.multiply(a0, b2))
    elif a.shape[-1] == 2:
        b2 = b[..., 2]
        x, y = sg.multiply(a1, b2), sg.negative(sg.multiply(a0, b2))
    else:
        a2 = a[..., 2]
        x, y = sg.negative(sg.multiply(a2, b1)), sg.multiply(a2, b0)
    x, y, z = broadcast_arrays(x, y, z)
    result = sg.stack([x, y, z], axis=-1)
    return sg.moveaxis(result, -1, _axes(axisc, result.ndim)[0])


@array_function_dispatch
def vecdot(x1, x2, /, *, axis=-1):
    """np.vecdot: the dot products of the vectors along axis (broadcast over the others)."""
    x1, x2 = sg.asarray(x1), sg.asarray(x2)
    product = sg.multiply(x1, x2)
    return sg.sum(product, _axes(axis, product.ndim)[0])


@array_function_dispatch
def matvec(x1, x2, /):
    """np.matvec: matrices (..., m, n) times vectors (..., n), batches broadcast."""
    x2 = sg.asarray(x2)
    return sg.squeeze(sg.matmul(x1, sg.expand_dims(x2, -1)), -1)


@array_function_dispatch
def vecmat(x1, x2, /):
    """np.vecmat: vectors (..., n) times matrices (..., n, m), batches broadcast."""
    x1 = sg.asarray(x1)
    return sg.squeeze(sg.matmul(sg.expand_dims(x1, -2), x2), -2)


# ----------------------------------------------------------------------------- sizes and index helpers

def ndim(a):
    """np.ndim: the number of axes, a Python int (shapes are known when tracing)."""
    return sg.asarray(a).ndim


def shape(a):
    """np.shape: the shape, a tuple of Python ints."""
    return tuple(sg.asarray(a).shape)


def size(a, axis=None):
    """np.size: the number of elements (along axis, if given), a Python int."""
    a = sg.asarray(a)
    return a.size if axis is None else a.shape[_axes(axis, a.ndim)[0]]


def tri(N, M=None, k=0, dtype=float):
    """np.tri (ones at and below diagonal k): NumPy's, from Python numbers."""
    _concrete("tri", N, M, k)
    return np.tri(N, M, k, dtype=dtypes.canonical(dtype))


def tril_indices(n, k=0, m=None):
    """np.tril_indices: NumPy's index arrays, from Python numbers (index traced arrays with them)."""
    _concrete("tril_indices", n, k, m)
    return np.tril_indices(n, k, m)


def triu_indices(n, k=0, m=None):
    _concrete("triu_indices", n, k, m)
    return np.triu_indices(n, k, m)


def diag_indices(n, ndim=2):
    _concrete("diag_indices", n, ndim)
    return np.diag_indices(n, ndim)


def indices(dimensions, dtype=int, sparse=False):
    _concrete("indices", *dimensions)
    return np.indices(dimensions, dtype, sparse)
