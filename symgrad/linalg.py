"""sg.linalg: numpy.linalg's functions on arrays, traced values and eager tensors, differentiable.

Nine primitives do the work (ops/lapack.py: cholesky, triangular_solve, solve, slogdet, eigh, svd,
qr, pinv, det); the rest are written with them, so their derivatives come from those rules: inv solves
against the identity, lstsq multiplies by the pseudo-inverse,
matrix_power squares repeatedly, norm and trace are sums. Every function works on stacks of
matrices (the leading axes), as NumPy's. Results NumPy gives as named tuples (EighResult,
SVDResult, QRResult, SlogdetResult) are plain tuples here.
"""
from __future__ import annotations

import numbers

import numpy as np

from . import dtypes
from . import numpy_api as sg
from .core import ShapeError, Tracer, with_user_line
from .numpy_api.arrays import _axes, _safe_sqrt
from .numpy_api.dispatch import array_function_dispatch
from .numpy_api.torch_keywords import torch_axes
from .ops import elementwise as E
from .ops import lapack as L
from .ops.control import results

__all__ = ["LinAlgError", "cholesky", "det", "eigh", "eigvalsh", "inv", "lstsq", "matrix_power", "norm", "pinv",
           "qr", "slogdet", "solve", "svd", "svdvals", "trace", "cho_factor", "cho_solve", "solve_triangular",
           "matrix_rank", "cond", "multi_dot", "vector_norm", "matrix_norm", "matrix_transpose", "diagonal", "outer",
           "matmul", "vecdot", "cross"]


class LinAlgError(ShapeError, np.linalg.LinAlgError):
    """A matrix of the wrong rank or shape for a sg.linalg function: NumPy's LinAlgError (code that catches
    it works unchanged) and symgrad's ShapeError. A singular or indefinite matrix raises NumPy's own."""


def _error(message):
    raise LinAlgError(with_user_line(message)) from None


def _floats(name, *arrays):
    """The arrays as the float type NumPy computes them in (integers as float64)."""
    arrays = [sg.asarray(a) for a in arrays]
    for a in arrays:
        if not (dtypes.is_float(a.dtype) or np.dtype(a.dtype).kind in "iub"):
            _error(f"sg.linalg.{name}: needs real numbers, got {np.dtype(a.dtype)}")
    dtype = dtypes.float_result(dtypes.promote([a.dtype for a in arrays]))
    return [sg.astype(a, dtype) for a in arrays]


def _matrix(name, a, square=True):
    (a,) = _floats(name, a)
    if a.ndim < 2:
        _error(f"sg.linalg.{name}: {a.ndim}-dimensional array given (shape {a.shape}); it needs at least two "
               "dimensions, a matrix or a stack of them")
    if square and a.shape[-1] != a.shape[-2]:
        _error(f"sg.linalg.{name}: the last two dimensions of a (shape {a.shape}) must be square")
    return a


def _right_hand_side(name, a, b):
    """b of a solve against a (..., n, n) as a (..., n, k) stack broadcast with a's, and whether it was a
    vector (NumPy 2's rule: b is a vector when it is 1-D)."""
    n = a.shape[-1]
    a, b = _floats(name, a, b)
    vector = b.ndim == 1
    if b.ndim == 0 or (b.shape[0] if vector else b.shape[-2]) != n:
        _error(f"sg.linalg.{name}: a of shape {a.shape} and b of shape {b.shape} do not match: b must be ({n},) "
               f"or (..., {n}, k)")
    matrix = sg.reshape(b, (n, 1)) if vector else b
    try:
        batch = np.broadcast_shapes(a.shape[:-2], matrix.shape[:-2])
    except ValueError:
        _error(f"sg.linalg.{name}: the leading (stack) dimensions of a (shape {a.shape}) and b (shape {b.shape}) "
               "do not broadcast")
    a = sg.broadcast_to(a, batch + a.shape[-2:])
    matrix = sg.broadcast_to(matrix, batch + matrix.shape[-2:])
    return a, matrix, vector


def _vector_result(x, vector):
    return sg.reshape(x, x.shape[:-1]) if vector else x


def _eye(n, like):
    return sg.broadcast_to(np.eye(n, dtype=like.dtype), like.shape[:-2] + (n, n))


# ----------------------------------------------------------------------------- solving

@array_function_dispatch
def solve(a, b):
    """x with a @ x = b (np.linalg.solve); LinAlgError for a singular a."""
    a = _matrix("solve", a)
    a, b, vector = _right_hand_side("solve", a, b)
    return _vector_result(L.solve_p(a, b), vector)


@array_function_dispatch
def inv(a):
    """The inverse (a solve against the identity); LinAlgError for a singular a."""
    a = _matrix("inv", a)
    return L.solve_p(a, _eye(a.shape[-1], a))


@array_function_dispatch
def slogdet(a):
    """(sign, log|det a|) of a matrix or a stack; a singular a gives (0, -inf), as NumPy."""
    return tuple(results(L.slogdet_p(_matrix("slogdet", a))))


@array_function_dispatch
def det(a):
    """The determinant (numpy.linalg.det; 0 for a singular a). Its gradient is the cofactor matrix, from the
    SVD, as PyTorch's: finite at a singular a too."""
    return L.det_p(_matrix("det", a))


@array_function_dispatch
def cholesky(a, upper=False):
    """The lower factor L with a = L @ L.T (U = L.T with upper=True) of a symmetric positive definite a;
    reads a's lower triangle, its upper one with upper=True, as NumPy and PyTorch (LinAlgError when it is not
    positive definite). Gradients are symmetric."""
    a = _matrix("cholesky", a)
    if upper:  # U = L.T where L is the lower factor of a.T, whose lower triangle is a's upper one
        return sg.swapaxes(L.cholesky_p(sg.swapaxes(a, -1, -2)), -1, -2)
    return L.cholesky_p(a)


_TRANS = {0: False, "N": False, 1: True, "T": True, 2: True, "C": True}


@array_function_dispatch
def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False, check_finite=True):
    """scipy.linalg.solve_triangular: x with op(a) @ x = b for the lower (upper) triangle of a, op a transpose
    for trans=1/'T' (2/'C', the same for real a), a's diagonal taken as ones with unit_diagonal. Batched over
    leading axes, with b (n,) or (..., n, k) as in solve."""
    if trans not in _TRANS:
        raise ValueError(f"sg.linalg.solve_triangular: trans must be 0, 1, 2, 'N', 'T' or 'C', got {trans!r}")
    a = _matrix("solve_triangular", a)
    a, b, vector = _right_hand_side("solve_triangular", a, b)
    x = L.triangular_solve_p(a, b, lower=bool(lower), transpose_a=_TRANS[trans], unit_diagonal=bool(unit_diagonal))
    return _vector_result(x, vector)


def cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    """scipy.linalg.cho_factor: (factor, lower), the factor triangular (zeros in the other triangle, where
    SciPy leaves whatever was there)."""
    return cholesky(a, upper=not lower), bool(lower)


def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    """scipy.linalg.cho_solve: x with a @ x = b, given cho_factor(a): two triangular solves."""
    factor, lower = c_and_lower
    first = solve_triangular(factor, b, trans=0 if lower else 1, lower=lower)
    return solve_triangular(factor, first, trans=1 if lower else 0, lower=lower)


# ----------------------------------------------------------------------------- decompositions

@array_function_dispatch
def eigh(a, UPLO="L"):
    """(eigenvalues ascending, eigenvectors as columns) of a symmetric a, reading its lower (UPLO='L') or
    upper triangle. The eigenvectors' derivative does not exist at repeated eigenvalues (inf/NaN there,
    as in PyTorch); the eigenvalues' does."""
    if UPLO not in ("L", "U", "l", "u"):
        raise ValueError(f"sg.linalg.eigh: UPLO must be 'L' or 'U', got {UPLO!r}")
    return tuple(results(L.eigh_p(_matrix("eigh", a), lower=UPLO.upper() == "L")))


@array_function_dispatch
def eigvalsh(a, UPLO="L"):
    return eigh(a, UPLO)[0]


@array_function_dispatch
def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    """(u, s, vh) with a = u @ diag(s) @ vh (s descending), or s alone with compute_uv=False. The singular
    vectors' derivative does not exist at repeated singular values (inf/NaN there, as in PyTorch), and the
    extra columns of full_matrices=True get none (they are any basis of the complement)."""
    a = _matrix("svd", a, square=False)
    parts = results(L.svd_p(a, full_matrices=bool(full_matrices and compute_uv)))
    return tuple(parts) if compute_uv else parts[1]


@array_function_dispatch
def svdvals(x):
    return svd(x, compute_uv=False)


@array_function_dispatch
def qr(a, mode="reduced"):
    """(q, r) with a = q @ r, q orthonormal columns, r upper triangular (mode 'reduced' or 'complete'),
    or r alone (mode 'r'). A wide a (m < n) is factored as NumPy's LAPACK does it, by its square left
    block: q, r1 = qr(a[:, :m]), r = [r1, q.T @ a[:, m:]], which gives it a derivative."""
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"sg.linalg.qr: mode must be 'reduced', 'complete' or 'r' ('raw' is not supported), "
                         f"got {mode!r}")
    a = _matrix("qr", a, square=False)
    m, n = a.shape[-2:]
    if m < n:
        q, left = results(L.qr_p(a[..., :, :m], complete=False))
        r = sg.concatenate([left, sg.matmul(sg.swapaxes(q, -1, -2), a[..., :, m:])], axis=-1)
    else:
        q, r = results(L.qr_p(a, complete=mode == "complete"))
    return r if mode == "r" else (q, r)


# ----------------------------------------------------------------------------- pseudo-inverse, least squares

def _relative_cutoff(rcond, a):
    """NumPy's default relative cutoff of small singular values: eps * max(m, n)."""
    return float(rcond) if rcond is not None else float(np.finfo(a.dtype).eps * max(a.shape[-2:]))


@array_function_dispatch
def pinv(a, rcond=None, hermitian=False, *, rtol=np._NoValue):
    """The Moore-Penrose pseudo-inverse (singular values <= rcond * the largest count as zero; NumPy's
    defaults). Its derivative (Golub and Pereyra's) holds where the rank does not change."""
    a = _matrix("pinv", a, square=False)
    if rcond is not None and rtol is not np._NoValue:
        raise ValueError("sg.linalg.pinv: `rtol` and `rcond` can't be both set.")
    if rcond is None:
        rcond = 1e-15 if rtol is np._NoValue else _relative_cutoff(rtol, a)
    return L.pinv_p(a, rcond=float(rcond), hermitian=bool(hermitian))


@array_function_dispatch
def lstsq(a, b, rcond=None):
    """NumPy's (x, residuals, rank, s): x = pinv(a) @ b minimizes |b - a x|. residuals are the squared
    residual norms per column when m > n and a has full rank, else empty, as NumPy's; under a trace, whose
    shapes cannot depend on the rank, they are the norms whenever m > n. rank counts the singular values
    above rcond * the largest."""
    a = _matrix("lstsq", a, square=False)
    if a.ndim != 2:
        _error(f"sg.linalg.lstsq: a must be a matrix (2 dimensions), got shape {a.shape}")
    a, b = _floats("lstsq", a, b)
    m, n = a.shape
    if b.ndim not in (1, 2) or b.shape[0] != m:
        _error(f"sg.linalg.lstsq: a of shape {a.shape} and b of shape {b.shape} do not match: b must be ({m},) "
               f"or ({m}, k)")
    cutoff = _relative_cutoff(rcond, a)
    x = sg.matmul(L.pinv_p(a, rcond=cutoff, hermitian=False), b)
    s = svd(a, compute_uv=False)
    if min(m, n) == 0:
        rank = np.int64(0)
    else:
        rank = sg.sum(E.greater(s, E.multiply(sg.max(s), cutoff)), dtype=dtypes.INT64)
    known_rank = _concrete(rank)
    if m > n and (known_rank is None or known_rank == n):
        residual = E.subtract(b, sg.matmul(a, x))
        residuals = sg.sum(E.square(residual), axis=0, keepdims=b.ndim == 1)
    else:
        residuals = np.zeros((0,), a.dtype)
    return x, residuals, rank, s


def _concrete(value):
    """The value of a NumPy or eager array, None for a traced one."""
    if not isinstance(value, Tracer):
        return np.asarray(value)
    return value.detach().numpy() if getattr(type(value), "__sg_function__", None) is not None else None


# ----------------------------------------------------------------------------- powers, traces, norms

@array_function_dispatch
def matrix_power(a, n):
    """a to the integer power n by repeated squaring (n < 0: of the inverse; n = 0: the identity)."""
    if not isinstance(n, numbers.Integral) or isinstance(n, bool):
        raise TypeError(f"sg.linalg.matrix_power: the exponent must be an integer, got {n!r}")
    a = sg.asarray(a)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        _error(f"sg.linalg.matrix_power: the last two dimensions of a (shape {a.shape}) must be square")
    if n == 0:
        return sg.zeros_like(a) + np.eye(a.shape[-1], dtype=a.dtype)  # a tensor for a tensor, as PyTorch's
    base, n = (inv(a), -n) if n < 0 else (a, n)
    result = None
    while n:
        if n & 1:
            result = base if result is None else sg.matmul(result, base)
        n >>= 1
        if n:
            base = sg.matmul(base, base)
    return result


@array_function_dispatch
def trace(x, offset=0, dtype=None):
    """The sums of the diagonals of the last two axes (np.linalg.trace)."""
    return sg.trace(x, offset, axis1=-2, axis2=-1, dtype=dtype)


def _vector_norm(x, ord, axis, keepdims):
    magnitude = E.abs(x)
    if ord is None or ord == 2:
        return _safe_sqrt(sg.sum(E.square(x), axis=axis, keepdims=keepdims))
    if ord == np.inf:
        return sg.max(magnitude, axis=axis, keepdims=keepdims)
    if ord == -np.inf:
        return sg.min(magnitude, axis=axis, keepdims=keepdims)
    if ord == 0:
        return sg.sum(sg.astype(E.not_equal(x, 0.0), x.dtype), axis=axis, keepdims=keepdims)
    if ord == 1:
        return sg.sum(magnitude, axis=axis, keepdims=keepdims)
    if isinstance(ord, str):
        raise ValueError(f"sg.linalg.norm: invalid norm order {ord!r} for vectors")
    powered = sg.sum(_power_of_magnitude(magnitude, float(ord)), axis=axis, keepdims=keepdims)
    return _power_of_magnitude(powered, 1.0 / float(ord))


def _power_of_magnitude(magnitude, exponent):
    """magnitude ** exponent with derivative 0 at 0, PyTorch's subgradient of a p-norm there (as _safe_sqrt's for
    p = 2), where the power's inf (exponent < 1) times its argument's 0 derivative gave NaN."""
    zero = E.equal(magnitude, 0.0)
    return E.where(zero, 0.0 if exponent > 0 else np.inf, E.power(E.where(zero, 1.0, magnitude), exponent))


def _matrix_norm(x, ord, axes, keepdims):
    row, col = axes
    if row == col:
        raise ValueError("sg.linalg.norm: duplicate axes given")
    if ord in (None, "fro"):
        result = _safe_sqrt(sg.sum(E.square(x), axis=axes))
    elif ord in (2, -2, "nuc"):
        values = svd(_last_two(x, row, col), compute_uv=False)
        result = sg.sum(values, axis=-1) if ord == "nuc" else (sg.max if ord == 2 else sg.min)(values, axis=-1)
    elif ord in (1, -1):
        sums = sg.sum(E.abs(x), axis=row, keepdims=True)
        result = (sg.max if ord == 1 else sg.min)(sums, axis=col, keepdims=True)
        result = sg.squeeze(result, axis=(row, col))
    elif ord in (np.inf, -np.inf):
        sums = sg.sum(E.abs(x), axis=col, keepdims=True)
        result = (sg.max if ord == np.inf else sg.min)(sums, axis=row, keepdims=True)
        result = sg.squeeze(result, axis=(row, col))
    else:
        raise ValueError(f"sg.linalg.norm: invalid norm order {ord!r} for matrices")
    if keepdims:
        result = sg.expand_dims(result, tuple(sorted((row, col))))
    return result


def _last_two(x, row, col):
    """x with axis `row` then axis `col` moved to the end."""
    order = [i for i in range(x.ndim) if i not in (row, col)] + [row, col]
    return sg.transpose(x, order)


@array_function_dispatch
def norm(x, ord=None, axis=None, keepdims=False):
    """np.linalg.norm: a vector norm over one axis, a matrix norm over two (ord None/'fro', 'nuc', +-1,
    +-2, +-inf), the 2-norm of everything with neither given. The 2-norms' gradient at 0 is 0 (PyTorch's
    subgradient)."""
    (x,) = _floats("norm", x)
    if axis is None:
        if ord is None:
            result = _safe_sqrt(sg.sum(E.square(x)))
            return sg.reshape(result, (1,) * x.ndim) if keepdims else result
        if x.ndim not in (1, 2):
            raise ValueError(f"sg.linalg.norm: improper number of dimensions to norm (shape {x.shape}); give axis")
        axis = tuple(range(x.ndim))
    axes = (axis,) if isinstance(axis, numbers.Integral) else tuple(axis)
    if not all(-x.ndim <= a < x.ndim for a in axes):
        _error(f"sg.linalg.norm: axis {axis} is out of range for shape {x.shape}")
    axes = tuple(a % x.ndim for a in axes)
    if len(axes) == 1:
        return _vector_norm(x, ord, axes[0], keepdims)
    if len(axes) == 2:
        return _matrix_norm(x, ord, axes, keepdims)
    raise ValueError(f"sg.linalg.norm: axis must name one or two axes, got {axis!r}")


# ----------------------------------------------------------------------------- NumPy 2's other numpy.linalg names

def matrix_rank(A, tol=None, hermitian=False, *, rtol=None):
    """The number of singular values above tol (default: rtol, max(m, n) * eps, times the largest), as
    numpy.linalg.matrix_rank; an integer, with no derivative."""
    A = sg.asarray(A)
    if A.ndim < 2:
        return sg.astype(sg.any(E.not_equal(A, 0.0)), dtypes.INT64)
    values = svd(A, compute_uv=False)
    if values.shape[-1] == 0:  # an empty matrix has rank 0, as NumPy's (no largest value to scale a tolerance)
        return sg.zeros(values.shape[:-1], dtypes.INT64)
    if tol is None:
        rtol = float(np.finfo(values.dtype).eps * max(A.shape[-2:])) if rtol is None else rtol
        tol = E.multiply(sg.max(values, axis=-1, keepdims=True), rtol)
    else:
        tol = sg.expand_dims(sg.asarray(tol), -1)
    return sg.sum(E.greater(values, tol), axis=-1, dtype=dtypes.INT64)


def cond(x, p=None):
    """The condition number (numpy.linalg.cond): the ratio of the extreme singular values for p None, 2, -2
    (inf for a singular x), else norm(x, p) * norm(inv(x), p) (LinAlgError for a singular x, where NumPy
    gives inf)."""
    if sg.asarray(x).size == 0:
        raise np.linalg.LinAlgError("cond is not defined on empty arrays")
    if p in (None, 2, -2):
        values = svd(_matrix("cond", x, square=False), compute_uv=False)
        largest, smallest = values[..., 0], values[..., -1]
        ratio = E.divide(smallest, largest) if p == -2 else E.divide(largest, smallest)
        # 0/0 for a zero matrix: inf, as NumPy (a NaN from a NaN in x stays NaN)
        return sg.where(E.logical_and(E.isnan(ratio), E.logical_not(E.isnan(largest))), np.inf, ratio)
    x = _matrix("cond", x)
    return E.multiply(norm(x, p, axis=(-2, -1)), norm(inv(x), p, axis=(-2, -1)))


def multi_dot(arrays, *, out=None):
    """numpy.linalg.multi_dot: the product of the arrays in turn, a first (last) 1-D one as a row (column),
    its axis dropped from the result. Left to right (NumPy picks the cheapest order: the same value)."""
    if out is not None:
        raise TypeError("sg.linalg.multi_dot: out= is not supported (arrays are immutable); use the result")
    arrays = [sg.asarray(a) for a in arrays]
    if len(arrays) < 2:
        raise ValueError("sg.linalg.multi_dot: expecting at least two arrays")
    result = arrays[0]
    for a in arrays[1:]:
        result = sg.matmul(result, a)
    return result


def vector_norm(x, /, ord=2, *, axis=None, keepdims=False, dim=None, keepdim=None):
    """numpy.linalg.vector_norm: the norm over `axis` (all axes by default, a tuple of them taken together); also
    torch.linalg.vector_norm(x, ord, dim, keepdim)."""
    axis, keepdims = (axis if dim is None else torch_axes(dim)), (keepdims if keepdim is None else keepdim)
    x = sg.asarray(x)
    axes = _axes(axis, x.ndim)  # (an axis out of range is an error: dim=1 of a 0-d x, dim=5 of a matrix)
    if x.ndim == 0:  # dim 0 or -1 of a 0-d x, as PyTorch's: the norm of its one element, 0-d
        return sg.reshape(vector_norm(sg.reshape(x, (1,)), ord, axis=axis, keepdims=keepdims), ())
    rest = [i for i in range(x.ndim) if i not in axes]
    size = int(np.prod([x.shape[i] for i in axes], dtype=np.int64))  # (not -1: ambiguous where `rest` is empty)
    merged = sg.reshape(sg.transpose(x, rest + list(axes)), tuple(x.shape[i] for i in rest) + (size,))
    result = norm(merged, ord, axis=-1)
    if keepdims:
        result = sg.reshape(result, tuple(1 if i in axes else x.shape[i] for i in range(x.ndim)))
    return result


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """numpy.linalg.matrix_norm: norm over the last two axes."""
    return norm(x, ord, axis=(-2, -1), keepdims=keepdims)


def matrix_transpose(x, /):
    return sg.swapaxes(x, -1, -2)


def diagonal(x, /, *, offset=0):
    """The diagonals of the last two axes."""
    return sg.diagonal(x, offset, axis1=-2, axis2=-1)


def outer(x1, x2, /):
    if np.ndim(x1) != 1 or np.ndim(x2) != 1:
        _error(f"sg.linalg.outer: needs two vectors, got shapes {np.shape(x1)} and {np.shape(x2)}")
    return sg.outer(x1, x2)


def matmul(x1, x2, /):
    return sg.matmul(x1, x2)


def vecdot(x1, x2, /, *, axis=-1):
    """The dot products along `axis` (real numbers: no conjugate)."""
    return sg.sum(E.multiply(x1, x2), axis=axis)


def cross(x1, x2, /, *, axis=-1):
    """numpy.linalg.cross: cross products of 3-vectors along `axis`."""
    x1, x2 = sg.asarray(x1), sg.asarray(x2)
    if x1.shape[axis] != 3 or x2.shape[axis] != 3:
        _error(f"sg.linalg.cross: needs 3-vectors along axis {axis}, got shapes {x1.shape} and {x2.shape}")
    x1, x2 = sg.moveaxis(x1, axis, -1), sg.moveaxis(x2, axis, -1)
    parts = [E.subtract(E.multiply(x1[..., i], x2[..., j]), E.multiply(x1[..., j], x2[..., i]))
             for i, j in ((1, 2), (2, 0), (0, 1))]
    return sg.moveaxis(sg.stack(parts, axis=-1), -1, axis)
