"""Structural primitives that move, re-type, broadcast or sum data: convert, stop_gradient,
broadcast_to, reduce_sum, reshape, transpose, concatenate, roll.

broadcast_to and reduce_sum live together because each is the other's adjoint; the other
reductions, whose rules need elementwise ops, are in reduce.py.
"""
import numpy as np

from .. import dtypes
from ..core import Primitive, ShapeError, Tracer, current_builder
from .indexing import slice_axis


def _same(x):
    return x.shape, x.dtype


# ----------------------------------------------------------------------------- convert

def _convert_vjp(ct, ans, x, dtype):
    return (convert_p(ct, dtype=x.dtype) if dtypes.is_float(x.dtype) else None,)


def _convert_jvp(tangents, ans, x, dtype):
    (t,) = tangents
    if t is None or not dtypes.is_float(dtype):
        return None
    return convert_p(t, dtype=dtype)


convert_p = Primitive("convert", lambda inputs, dtype: (inputs[0].shape, np.dtype(dtype)),
                      lambda x, dtype: x.astype(dtype), vjp=_convert_vjp, jvp=_convert_jvp)


# ----------------------------------------------------------------------------- stop_gradient

stop_gradient_p = Primitive("stop_gradient", lambda inputs: _same(inputs[0]), lambda x: x,
                            vjp=lambda ct, ans, x: (None,), jvp=lambda tangents, ans, x: None)


# ----------------------------------------------------------------------------- broadcast_to

def _broadcast_shape(inputs, shape):
    (x,) = inputs
    shape = tuple(shape)
    lead = len(shape) - x.ndim
    if lead < 0 or any(d != 1 and d != shape[lead + i] for i, d in enumerate(x.shape)):
        raise ShapeError(f"cannot broadcast shape {x.shape} to {shape}")
    return shape, x.dtype


def unbroadcast(ct, shape):
    """Sum `ct` down to `shape` (the adjoint of broadcasting `shape` to ct's shape)."""
    shape = tuple(shape)
    if ct.shape == shape:
        return ct
    lead = len(ct.shape) - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, d in enumerate(shape) if d == 1 and ct.shape[lead + i] != 1)
    summed = reduce_sum_p(ct, axes=axes) if axes else ct
    return summed if summed.shape == shape else reshape_p(summed, shape=shape)


broadcast_to_p = Primitive("broadcast_to", _broadcast_shape, lambda x, shape: np.broadcast_to(x, shape),
                           vjp=lambda ct, ans, x, shape: (unbroadcast(ct, x.shape),), linear=True)


def zeros_like_value(x):
    """A zero array of x's shape and dtype; traced if x is (a broadcast scalar, not a stored array)."""
    builder = x.builder if isinstance(x, Tracer) else current_builder()
    if builder is None:
        return np.zeros(x.shape, x.dtype)
    zero = Tracer(builder.lift(np.zeros((), x.dtype)), builder)
    return zero if x.shape == () else broadcast_to_p(zero, shape=x.shape)


# ----------------------------------------------------------------------------- reduce_sum

def reduce_shape(inputs, axes):
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


# (np.add.reduce is what np.sum calls for an array, without its Python wrapper: 0.3 us of an eager `t.sum()`)
reduce_sum_p = Primitive("reduce_sum", reduce_shape, lambda x, axes: np.add.reduce(x, axis=axes),
                         vjp=_sum_vjp, linear=True)


# ----------------------------------------------------------------------------- reshape

def _reshape_shape(inputs, shape):
    (x,) = inputs
    if int(np.prod(shape, dtype=np.int64)) != x.size:
        raise ShapeError(f"cannot reshape an array of shape {x.shape} into shape {tuple(shape)}")
    return tuple(shape), x.dtype


reshape_p = Primitive("reshape", _reshape_shape, lambda x, shape: np.reshape(x, shape),
                      vjp=lambda ct, ans, x, shape: (reshape_p(ct, shape=x.shape),), linear=True)


# ----------------------------------------------------------------------------- transpose

def _transpose_shape(inputs, perm):
    (x,) = inputs
    if sorted(perm) != list(range(x.ndim)):
        raise ShapeError(f"transpose: axes {perm} are not a permutation of the axes of shape {x.shape}")
    return tuple(x.shape[p] for p in perm), x.dtype


def _transpose_vjp(ct, ans, x, perm):
    return (transpose_p(ct, perm=tuple(int(i) for i in np.argsort(perm))),)


transpose_p = Primitive("transpose", _transpose_shape, lambda x, perm: np.transpose(x, perm),
                        vjp=_transpose_vjp, linear=True)


# ----------------------------------------------------------------------------- concatenate

def _concatenate_shape(inputs, axis):
    first = inputs[0]
    for x in inputs[1:]:
        if x.ndim != first.ndim or any(a != b for i, (a, b) in enumerate(zip(x.shape, first.shape)) if i != axis):
            raise ShapeError(f"concatenate along axis {axis}: shapes {first.shape} and {x.shape} differ off that axis")
        if x.dtype != first.dtype:
            raise TypeError(f"concatenate: dtypes {first.dtype} and {x.dtype} differ")
    shape = list(first.shape)
    shape[axis] = sum(x.shape[axis] for x in inputs)
    return tuple(shape), first.dtype


def _concatenate_vjp(ct, ans, *inputs, axis):
    cotangents, start = [], 0
    for x in inputs:
        size = x.shape[axis]
        cotangents.append(slice_axis(ct, axis, start, size) if dtypes.is_float(x.dtype) else None)
        start += size
    return cotangents


concatenate_p = Primitive("concatenate", _concatenate_shape, lambda *xs, axis: np.concatenate(xs, axis=axis),
                          vjp=_concatenate_vjp, linear=True)


# ----------------------------------------------------------------------------- roll

def _roll_shape(inputs, shift, axis):
    (x,) = inputs
    if not 0 <= axis < x.ndim or not 0 <= shift < x.shape[axis]:
        raise ShapeError(f"roll by {shift} along axis {axis} is out of range for shape {x.shape}")
    return x.shape, x.dtype


def roll_impl(x, shift, axis):
    """np.roll: the last `shift` elements along `axis` come first."""
    return np.roll(x, shift, axis)


def _roll_decomposed(x, shift, axis):
    """The last `shift` elements along `axis`, then the others: how a backend with no roll rule lowers it."""
    n = x.shape[axis]
    return concatenate_p(slice_axis(x, axis, n - shift, shift), slice_axis(x, axis, 0, n - shift), axis=axis)


def _roll_vjp(ct, ans, x, shift, axis):
    return (roll_p(ct, shift=(x.shape[axis] - shift) % x.shape[axis], axis=axis),)


roll_p = Primitive("roll", _roll_shape, roll_impl, vjp=_roll_vjp, linear=True, decompose=_roll_decomposed)
