"""NumPy's array functions (creation, shapes, reductions, products) and its ufuncs, on arrays and tracers.

Everything here is written once, in terms of primitives; `bind` decides whether a call
evaluates NumPy or records IR. Broadcasting and type promotion follow NumPy.
"""
from __future__ import annotations

import builtins
import math
import operator

import numpy as np

from .. import dtypes
from ..ops import elementwise as E
from ..ops.cumulative import cumprod_p, cumsum_p
from ..ops.linalg import matmul_p
from ..ops.reduce import reduce_max_p, reduce_min_p, reduce_prod_p
from ..ops.shape import (broadcast_to_p, concatenate_p, convert_p, reduce_sum_p, reshape_p, roll_p, stop_gradient_p,
                         transpose_p)
from ..core import Tracer, current_builder, fail
from .dispatch import array_function_dispatch

# Elementwise functions come straight from the op library.
add, subtract, multiply, divide, power = E.add, E.subtract, E.multiply, E.divide, E.power
negative, square, reciprocal = E.negative, E.square, E.reciprocal
sin, cos, tan, sinh, cosh, tanh = E.sin, E.cos, E.tan, E.sinh, E.cosh, E.tanh
arcsin, arccos, arctan, arctan2 = E.arcsin, E.arccos, E.arctan, E.arctan2
exp, expm1, log, log1p, sqrt, abs, sign = E.exp, E.expm1, E.log, E.log1p, E.sqrt, E.abs, E.sign
sigmoid, softplus, logaddexp, erf, relu = E.sigmoid, E.softplus, E.logaddexp, E.erf, E.relu
maximum, minimum, where = E.maximum, E.minimum, E.where
less, less_equal, greater, greater_equal = E.less, E.less_equal, E.greater, E.greater_equal
equal, not_equal = E.equal, E.not_equal
logical_not, logical_and, logical_or, logical_xor = E.logical_not, E.logical_and, E.logical_or, E.logical_xor
bitwise_and, bitwise_or, bitwise_xor, invert, left_shift, right_shift = (
    E.bitwise_and, E.bitwise_or, E.bitwise_xor, E.invert, E.left_shift, E.right_shift)
bitwise_not, bitwise_invert, bitwise_left_shift, bitwise_right_shift = invert, invert, left_shift, right_shift
floor, ceil, rint, trunc, floor_divide, mod = E.floor, E.ceil, E.rint, E.trunc, E.floor_divide, E.mod
remainder, true_divide = E.mod, E.divide
log2, log10, exp2, arcsinh, arccosh, arctanh = E.log2, E.log10, E.exp2, E.arcsinh, E.arccosh, E.arctanh
hypot, deg2rad, rad2deg, sinc = E.hypot, E.deg2rad, E.rad2deg, E.sinc
isnan, isinf, isfinite = E.isnan, E.isinf, E.isfinite


def divmod(x1, x2):
    """np.divmod: (x1 // x2, x1 % x2), NumPy's floor quotient and the remainder with x2's sign."""
    return floor_divide(x1, x2), mod(x1, x2)


def asarray(x, dtype=None):
    """A tracer stays a tracer; a list or tuple holding tracers is stacked, as np.array stacks arrays
    (`sg.asarray([f(x), 0.0])`), unless its type says how it converts (`__array__`: torch.max's pair refuses);
    anything else becomes an ndarray of a supported dtype."""
    if isinstance(x, Tracer):
        return x if dtype is None else astype(x, dtype)
    if isinstance(x, (list, tuple)) and not hasattr(type(x), "__array__") and _holds_tracer(x):
        return stack([asarray(item, dtype) for item in x])
    array = np.asarray(x)
    return array.astype(dtypes.canonical(dtype if dtype is not None else array.dtype), copy=False)


def _holds_tracer(items) -> bool:
    return builtins.any(isinstance(item, Tracer) or isinstance(item, (list, tuple)) and _holds_tracer(item)
                        for item in items)


def _axes(axis, ndim) -> tuple:
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    result = []
    for a in axes:
        if not -builtins.max(ndim, 1) <= a < builtins.max(ndim, 1):
            fail(f"axis {a} is out of bounds for an array of dimension {ndim}")
        if ndim:  # a 0-d value's axis 0 (or -1), as PyTorch allows it, is no axis: the reduction keeps it
            result.append(int(a) % ndim)
    return tuple(sorted(set(result)))


@array_function_dispatch
def round(x, decimals=0):
    """NumPy's round: to `decimals` places, halves to even (rint of x scaled by 10**decimals); integers
    keep their dtype (unchanged with decimals >= 0), booleans round as rint does. Derivative 0, as a step
    function's."""
    x = asarray(x)
    decimals = operator.index(decimals)
    if not dtypes.is_float(x.dtype) and x.dtype != dtypes.BOOL and decimals >= 0:
        return x
    if decimals == 0:
        return rint(x)
    scale = 10.0 ** builtins.abs(decimals)
    if decimals > 0:
        return divide(rint(multiply(x, scale)), scale)
    rounded = multiply(rint(divide(x, scale)), scale)
    return rounded if dtypes.is_float(x.dtype) else astype(rounded, x.dtype)


around = round


def clip(x, a_min=None, a_max=None):
    """Clamp to [a_min, a_max]; either bound may be None. Gradient 1 inside the closed interval. A tie with the one
    bound given has the bound's bits (a zero's sign), as NumPy's; with two, x's (Tensor.clamp's always)."""
    if a_max is None and a_min is not None:
        return E.clip_below(x, a_min)
    if a_min is None and a_max is not None:
        return E.clip_above(x, a_max)
    lo = -math.inf if a_min is None else a_min
    hi = math.inf if a_max is None else a_max
    return E.clip(x, lo, hi)


@array_function_dispatch
def astype(x, dtype):
    x = asarray(x)
    dtype = dtypes.canonical(dtype)
    return x if x.dtype == dtype else convert_p(x, dtype=dtype)


@array_function_dispatch
def stop_gradient(x):
    """The value of x, treated as a constant by differentiation."""
    return stop_gradient_p(asarray(x))


def zeros(shape, dtype=None):
    """np.zeros: float64 unless `dtype` is given (None too is float64, as NumPy's; full's None follows the fill)."""
    return full(shape, 0, dtypes.FLOAT64 if dtype is None else dtype)


def ones(shape, dtype=None):
    """np.ones: float64 unless `dtype` is given (as zeros)."""
    return full(shape, 1, dtypes.FLOAT64 if dtype is None else dtype)


def full(shape, fill_value, dtype=None):
    """A constant array, of fill_value's dtype unless `dtype` is given (NumPy's: full(2, 3) is int64); while
    tracing, a broadcast scalar constant rather than a stored array. A traced fill value is broadcast (autograd's
    and JAX's full(x.shape, g) in a vjp rule)."""
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    if isinstance(fill_value, Tracer):
        return broadcast_to(fill_value if dtype is None else astype(fill_value, dtype), shape)
    scalar = np.asarray(fill_value, None if dtype is None else dtypes.canonical(dtype))
    scalar = scalar.astype(dtypes.canonical(scalar.dtype))
    builder = current_builder()
    if builder is None:
        return np.full(shape, scalar)
    value = Tracer(builder.lift(scalar), builder)
    return value if shape == () else broadcast_to_p(value, shape=shape)


def zeros_like(x, dtype=None):
    return zeros(np.shape(x) if not isinstance(x, Tracer) else x.shape, dtype or asarray(x).dtype)


def ones_like(x, dtype=None):
    return ones(np.shape(x) if not isinstance(x, Tracer) else x.shape, dtype or asarray(x).dtype)


# ----------------------------------------------------------------------------- shapes

@array_function_dispatch
def reshape(x, shape):
    x = asarray(x)
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(int(d) for d in shape)
    if shape.count(-1) > 1:
        fail(f"reshape: can only infer one dimension, got {shape}")
    if -1 in shape:
        known = int(np.prod([d for d in shape if d != -1], dtype=np.int64))
        if known == 0 or x.size % known:
            fail(f"cannot reshape an array of shape {x.shape} into shape {shape}")
        shape = tuple(x.size // known if d == -1 else d for d in shape)
    return x if shape == x.shape else reshape_p(x, shape=shape)


@array_function_dispatch
def ravel(x):
    return reshape(x, (-1,))


@array_function_dispatch
def transpose(x, axes=None):
    x = asarray(x)
    perm = tuple(reversed(range(x.ndim))) if axes is None else tuple(int(a) % builtins.max(x.ndim, 1) for a in axes)
    return x if perm == tuple(range(x.ndim)) else transpose_p(x, perm=perm)


permute_dims = transpose  # the Array API's name


@array_function_dispatch
def swapaxes(x, axis1, axis2):
    x = asarray(x)
    perm = list(range(x.ndim))
    perm[axis1], perm[axis2] = perm[axis2], perm[axis1]
    return transpose(x, perm)


@array_function_dispatch
def moveaxis(x, source, destination):
    x = asarray(x)
    perm = [i for i in range(x.ndim) if i != source % x.ndim]
    perm.insert(destination % x.ndim, source % x.ndim)
    return transpose(x, perm)


@array_function_dispatch
def broadcast_to(x, shape):
    x = asarray(x)
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    return x if x.shape == shape else broadcast_to_p(x, shape=shape)


@array_function_dispatch
def expand_dims(x, axis):
    x = asarray(x)
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    ndim = x.ndim + len(axes)
    positions = sorted(a % ndim for a in axes)
    shape = list(x.shape)
    for p in positions:
        shape.insert(p, 1)
    return reshape(x, shape)


@array_function_dispatch
def squeeze(x, axis=None):
    x = asarray(x)
    if axis is None:
        axes = tuple(i for i, d in enumerate(x.shape) if d == 1)
    else:
        axes = _axes(axis, x.ndim)
        for a in axes:
            if x.shape[a] != 1:
                fail(f"squeeze: cannot select an axis of size {x.shape[a]} (axis {a} of shape {x.shape})")
    return reshape(x, tuple(d for i, d in enumerate(x.shape) if i not in axes))


def concatenate(arrays, axis=0):
    """NumPy's concatenate; axis=None flattens the arrays first (0-d ones included)."""
    arrays = [asarray(a) if axis is not None else ravel(a) for a in arrays]
    axis = 0 if axis is None else axis
    if not arrays:
        raise ValueError("concatenate needs at least one array")
    ndim = arrays[0].ndim
    if ndim == 0:
        fail("zero-dimensional arrays cannot be concatenated")
    axis = _axes(axis, ndim)[0]
    for a in arrays[1:]:
        if a.ndim != ndim or any(x != y for i, (x, y) in enumerate(zip(a.shape, arrays[0].shape)) if i != axis):
            fail(f"concatenate along axis {axis}: shapes {arrays[0].shape} and {a.shape} differ off that axis")
    dtype = dtypes.promote([a.dtype for a in arrays])
    arrays = [astype(a, dtype) for a in arrays]
    return concatenate_p(*arrays, axis=axis)  # (of one array too: a copy, as NumPy's and PyTorch's cat)


concat = concatenate  # the Array API's name


def stack(arrays, axis=0):
    arrays = [asarray(a) for a in arrays]
    shapes = {a.shape for a in arrays}
    if len(shapes) != 1:
        fail(f"stack: all input arrays must have the same shape, got {sorted(shapes)}")
    axis = axis % (arrays[0].ndim + 1)
    return concatenate([expand_dims(a, axis) for a in arrays], axis)


@array_function_dispatch
def roll(x, shift, axis=None):
    """NumPy's roll: elements move `shift` places along `axis` (axis=None: through the flattened array),
    those past the end coming back at the start. A sequence of shifts rolls along a sequence of axes. Always a new
    array, as NumPy's and PyTorch's: makemore's `idx = torch.roll(idx, 1, 1); idx[:, 0] = blank` on one column
    wrote over its caller's tensor."""
    x = original = asarray(x)
    if axis is None:
        return reshape(roll(ravel(x), shift, 0), x.shape)
    shifts = tuple(shift) if isinstance(shift, (tuple, list)) else (shift,)
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    if len(shifts) == 1:  # one shift for every axis, or one axis for every shift, as NumPy broadcasts them
        shifts *= len(axes)
    elif len(axes) == 1:
        axes *= len(shifts)
    if len(shifts) != len(axes):
        fail(f"roll: {len(shifts)} shifts for {len(axes)} axes")
    for s, requested in zip(shifts, axes):
        for a in _axes(requested, x.ndim):  # none for a 0-d value
            s = operator.index(s) % builtins.max(x.shape[a], 1)
            x = roll_p(x, shift=s, axis=a) if s else x
    return convert_p(x, dtype=x.dtype) if x is original else x  # a copy (simplify drops it from a trace)


# ----------------------------------------------------------------------------- reductions

def _reduce(prim, x, axis, keepdims):
    _check_flag(keepdims, "keepdims")
    x = asarray(x)
    axes = _axes(axis, x.ndim)
    result = prim(x, axes=axes) if axes else x
    if keepdims:
        result = reshape(result, tuple(1 if i in axes else d for i, d in enumerate(x.shape)))
    return result


@array_function_dispatch
def sum(x, axis=None, keepdims=False, dtype=None):
    x = asarray(x)
    if dtype is not None and dtypes.canonical(dtype) == dtypes.BOOL:  # NumPy's or: the truth of the counts
        return astype(sum(astype(x, dtypes.BOOL), axis, keepdims), dtypes.BOOL)  # (a sum of bools would wrap)
    if dtype is not None:
        x = astype(x, dtype)
    elif not dtypes.is_float(x.dtype):
        x = astype(x, dtypes.INT64)
    return _reduce(reduce_sum_p, x, axis, keepdims)


@array_function_dispatch
def mean(x, axis=None, keepdims=False):
    x = asarray(x)
    if not dtypes.is_float(x.dtype):
        x = astype(x, dtypes.FLOAT64)
    count = int(np.prod([x.shape[a] for a in _axes(axis, x.ndim)], dtype=np.int64))
    return divide(sum(x, axis, keepdims), float(count))


@array_function_dispatch
def max(x, axis=None, keepdims=False):
    return _extremum(reduce_max_p, "maximum", x, axis, keepdims)


@array_function_dispatch
def min(x, axis=None, keepdims=False):
    return _extremum(reduce_min_p, "minimum", x, axis, keepdims)


def _values_of(extremum, name):
    """max/min as a function object of its own: on a tensor sg.max(t, dim) is PyTorch's (values, indices), and
    amax/amin give the values, as in NumPy and PyTorch."""
    def values(x, axis=None, keepdims=False):
        return extremum(x, axis, keepdims)
    values.__name__ = values.__qualname__ = name
    return array_function_dispatch(values)


amax, amin = _values_of(max.__wrapped__, "amax"), _values_of(min.__wrapped__, "amin")


def _extremum(prim, name, x, axis, keepdims):
    """max/min: over an empty axis an error, as NumPy's and PyTorch's (there is no identity)."""
    x = asarray(x)
    if _reduces_nothing(x, axis):
        fail(f"zero-size array to reduction operation {name} which has no identity "
             f"(shape {x.shape}, axis {axis})")
    if x.dtype == dtypes.BOOL:  # any/all, as the truth of an integer max/min: no backend reduces 1-bit values
        return astype(_reduce(prim, astype(x, dtypes.INT64), axis, keepdims), dtypes.BOOL)
    return _reduce(prim, x, axis, keepdims)


def _reduces_nothing(x, axes) -> bool:
    return any(x.shape[a] == 0 for a in _axes(axes, x.ndim))


@array_function_dispatch
def prod(x, axis=None, keepdims=False, dtype=None):
    x = asarray(x)
    if dtype is not None and dtypes.canonical(dtype) == dtypes.BOOL:  # NumPy's and: the truth of the product
        return astype(prod(astype(x, dtypes.BOOL), axis, keepdims), dtypes.BOOL)
    if dtype is not None:
        x = astype(x, dtype)
    elif not dtypes.is_float(x.dtype):  # as NumPy (and sum): integers and booleans multiply in int64
        x = astype(x, dtypes.INT64)
    return _reduce(reduce_prod_p, x, axis, keepdims)


@array_function_dispatch
def cumsum(x, axis=None, dtype=None, out=None, *, reverse=False):
    """NumPy's cumsum (axis=None: of the flattened array); reverse=True sums from the end, as jax.lax.cumsum."""
    return _cumulative(cumsum_p, x, axis, dtype, out, reverse)


@array_function_dispatch
def cumprod(x, axis=None, dtype=None, out=None, *, reverse=False):
    """NumPy's cumprod (axis=None: of the flattened array); reverse=True multiplies from the end."""
    return _cumulative(cumprod_p, x, axis, dtype, out, reverse)


def no_out(name, out):
    """NumPy's out= cannot hold a traced result: a clear error unless it is None."""
    if out is not None:
        fail(f"{name}(out=...): symgrad returns a new array rather than writing into one; use the returned value",
             TypeError)


def _cumulative(prim, x, axis, dtype, out, reverse):
    no_out(prim.name, out)
    x = asarray(x) if dtype is None else astype(x, dtype)
    wanted = x.dtype
    if not dtypes.is_float(x.dtype) and (dtype is None or wanted == dtypes.BOOL):
        x = astype(x, dtypes.INT64)  # as NumPy: integers and booleans accumulate in int64 unless dtype says int32
    if axis is None or x.ndim == 0:  # NumPy treats a 0-d array as 1-d here
        x = ravel(x)
    result = prim(x, axis=0 if axis is None else _axes(axis, x.ndim)[0], reverse=bool(reverse))
    # dtype=bool: NumPy's running or (cumsum) and and (cumprod), the 0 or 1 counts' truth
    return astype(result, dtypes.BOOL) if dtype is not None and wanted == dtypes.BOOL else result


def _check_flag(value, name):
    """A TypeError for a keepdims/ddof that is not a number: symgrad's reductions take (x, axis, keepdims)
    and var/std (x, axis, ddof, keepdims) by position, where NumPy's third is dtype: a dtype given there
    would otherwise be read as keepdims=True."""
    if not isinstance(value, (bool, int, float, np.bool_, np.integer)):
        fail(f"{name} must be a bool or a number, got {value!r}: the third positional argument of symgrad's "
             "reductions is keepdims (ddof for var/std), where NumPy's is dtype; cast with .astype(dtype)",
             TypeError)


@array_function_dispatch
def var(x, axis=None, ddof=0, keepdims=False):
    _check_flag(ddof, "ddof")
    x = asarray(x)
    if not dtypes.is_float(x.dtype):
        x = astype(x, dtypes.FLOAT64)
    count = int(np.prod([x.shape[a] for a in _axes(axis, x.ndim)], dtype=np.int64))
    centered = subtract(x, mean(x, axis, keepdims=True))
    return divide(sum(square(centered), axis, keepdims), float(builtins.max(count - ddof, 0)))  # as NumPy


@array_function_dispatch
def std(x, axis=None, ddof=0, keepdims=False):
    return _safe_sqrt(var(x, axis, ddof, keepdims))


def _safe_sqrt(x):
    """sqrt whose derivative at 0 is 0 (PyTorch's subgradient of a norm or a std at 0) instead of 0 * inf = NaN."""
    zero = E.equal(x, 0.0)
    return E.where(zero, 0.0, E.sqrt(E.where(zero, 1.0, x)))


def _shifted_max(x, axes, keep_infinity=False, peak=None):
    """max over axes (kept, or `peak` if given), gradient-free and with infinities replaced by 0, for stable exp;
    with `keep_infinity`, a max of +inf is kept: softmax and log_softmax shift by it as PyTorch and SciPy do, so a
    row holding +inf is NaN (logsumexp's value, +inf, needs the 0).

    Finite means |peak| <= the dtype's largest value: SymPy's real symbols are finite, so it
    would fold |peak| < inf to True and let x - peak be inf - inf = NaN."""
    peak = _peak(x, axes) if peak is None else peak
    finite = less_equal(abs(peak), float(np.finfo(peak.dtype).max))
    return where(finite, peak, where(greater(peak, 0.0), peak, 0.0) if keep_infinity else 0.0)


def _peak(x, axes):
    """max over axes (kept), gradient-free; 0 for an empty reduction (an empty sum needs no shift, and max has
    nothing to take)."""
    if _reduces_nothing(x, axes):
        return zeros(tuple(1 if i in axes else d for i, d in enumerate(x.shape)), x.dtype)
    return stop_gradient(max(x, axis=axes, keepdims=True))


def _exp_shifted(x, axes):
    """(exp(x - shift), shift): log(sum(exp(x))) is log(sum of the first) + shift, without overflow. In a slice
    holding +inf, whose sum is +inf, the entries below it count as -inf: their gradient is PyTorch's
    exp(x - inf) = 0, not exp(x) / inf, NaN where exp(x) overflows."""
    peak = _peak(x, axes)
    shift = _shifted_max(x, axes, peak=peak)
    below_infinity = logical_and(greater(peak, float(np.finfo(peak.dtype).max)), less(x, peak))
    return exp(subtract(where(below_infinity, -math.inf, x), shift)), shift


@array_function_dispatch
def logsumexp(x, axis=None, keepdims=False):
    """log(sum(exp(x))) without overflow (shifted by the max)."""
    x = asarray(x)
    if not dtypes.is_float(x.dtype):
        x = astype(x, dtypes.FLOAT64)
    axes = _axes(axis, x.ndim)
    terms, shift = _exp_shifted(x, axes)
    result = add(log(sum(terms, axes, keepdims=True)), shift)
    return result if keepdims else squeeze(result, axes)


@array_function_dispatch
def softmax(x, axis=-1):
    x = asarray(x)
    axes = _axes(axis, x.ndim)
    shifted = exp(subtract(x, _shifted_max(x, axes, keep_infinity=True)))
    return divide(shifted, sum(shifted, axes, keepdims=True))


@array_function_dispatch
def log_softmax(x, axis=-1):
    x = asarray(x)
    if not dtypes.is_float(x.dtype):
        x = astype(x, dtypes.FLOAT64)
    axes = _axes(axis, x.ndim)
    shifted = subtract(x, _shifted_max(x, axes, keep_infinity=True))
    return subtract(shifted, log(sum(exp(shifted), axes, keepdims=True)))


# ----------------------------------------------------------------------------- products

@array_function_dispatch
def matmul(a, b):
    """NumPy matmul: 1-D operands are promoted and squeezed, batch dims broadcast."""
    a, b = asarray(a), asarray(b)
    if a.ndim == 0 or b.ndim == 0:
        fail(f"matmul: operands must be at least 1-D, got shapes {a.shape} and {b.shape}")
    dtype = dtypes.promote([a.dtype, b.dtype])
    if dtype == dtypes.BOOL:  # NumPy's or of ands: the counts' truth (LLVM added the products in one bit)
        return astype(matmul(astype(a, dtypes.INT64), astype(b, dtypes.INT64)), dtypes.BOOL)
    a, b = astype(a, dtype), astype(b, dtype)
    a2 = reshape(a, (1,) + a.shape) if a.ndim == 1 else a
    b2 = reshape(b, b.shape + (1,)) if b.ndim == 1 else b
    if a2.shape[-1] != b2.shape[-2]:
        fail(f"matmul: shapes {a.shape} and {b.shape} are not aligned: {a2.shape[-1]} (last dim of the first) "
               f"!= {b2.shape[-2]} (second-to-last dim of the second)")
    if b2.ndim == 2 and a2.ndim > 2:  # one GEMM over the flattened batch
        flat = matmul_p(reshape(a2, (math.prod(a2.shape[:-1]), a2.shape[-1])), b2)  # no -1: the size may be 0
        result = reshape(flat, a2.shape[:-1] + b2.shape[-1:])
    else:
        try:
            batch = tuple(np.broadcast_shapes(a2.shape[:-2], b2.shape[:-2]))
        except ValueError:
            fail(f"matmul: batch dimensions of shapes {a.shape} and {b.shape} do not broadcast")
        result = matmul_p(broadcast_to(a2, batch + a2.shape[-2:]), broadcast_to(b2, batch + b2.shape[-2:]))
    shape = result.shape
    if a.ndim == 1:
        shape = shape[:-2] + shape[-1:]
    if b.ndim == 1:
        shape = shape[:-1]
    return reshape(result, shape)


@array_function_dispatch
def dot(a, b):
    """NumPy dot: scalars multiply, otherwise sum over a's last axis and b's second-to-last."""
    a, b = asarray(a), asarray(b)
    if a.ndim == 0 or b.ndim == 0:
        return multiply(a, b)
    if b.ndim <= 2:
        return matmul(a, b)
    b_front = moveaxis(b, -2, 0)
    rest = b_front.shape[1:]
    product = matmul(reshape(a, (math.prod(a.shape[:-1]), a.shape[-1])), reshape(b_front, (b.shape[-2], math.prod(rest))))
    return reshape(product, a.shape[:-1] + rest)


@array_function_dispatch
def outer(a, b):
    a, b = ravel(a), ravel(b)
    return multiply(reshape(a, (-1, 1)), reshape(b, (1, -1)))


@array_function_dispatch
def inner(a, b):
    """NumPy inner: scalars multiply, otherwise contract the last axes (a's other axes, then b's)."""
    a, b = asarray(a), asarray(b)
    if a.ndim == 0 or b.ndim == 0:
        return multiply(a, b)
    return dot(a, moveaxis(b, -1, -2) if b.ndim >= 2 else b)
