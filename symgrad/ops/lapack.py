"""The primitives LAPACK computes: cholesky, triangular_solve, solve, slogdet, eigh, svd, qr, pinv, det.

Each works on a stack of matrices (..., m, n), as numpy.linalg does, so batching one is one more
leading axis. Their NumPy references call numpy.linalg (and raise its LinAlgError on a singular or
indefinite matrix); the LLVM backend calls the same LAPACK for each (codegen/llvm/lapack.py), pinv
through svd (its decomposition). The others of sg.linalg (inv, det, lstsq, matrix_power, norm...) are written
with these, so each derivative below is written once: the matrix-calculus rules of Giles'
"Collected matrix derivative results" and of JAX and PyTorch, forward (jvp) and reverse (vjp, the
transpose of the jvp). A factorization with several results (eigh, svd, qr, slogdet) has a tuple
value, read by `result` nodes, as a loop's.

Where a derivative does not exist, these do what PyTorch does: eigh's and svd's vectors have none at
repeated eigen/singular values (their gradients are inf/NaN there; the values' own gradients stay
finite); svd's extra columns of full_matrices=True get no cotangent; qr's derivative needs m >= n
(sg.linalg.qr writes the m < n case with a square qr) and, with mode='complete', m == n.
"""
import numpy as np

from .. import ir
from ..core import Primitive, ShapeError, UnsupportedOpError, fail
from . import elementwise as E
from .control import results
from .indexing import slice_axis
from .linalg import matmul_p, swap_last
from .reduce import reduce_max_p, reduce_prod_p
from .shape import broadcast_to_p, reduce_sum_p, reshape_p


# ----------------------------------------------------------------------------- helpers (written with primitives)

def _eye(n, x):
    """The (n, n) identity in x's dtype (a constant that broadcasts against a stack)."""
    return np.eye(n, dtype=x.dtype)


def _stacked_eye(n, like):
    """The identity of shape like.shape[:-2] + (n, n): an operand of matmul, which does not broadcast."""
    return broadcast_to_p(_eye(n, like), shape=tuple(like.shape[:-2]) + (n, n))


def _masked(x, mask):
    """x times a constant (n, n) 0/1 mask (a triangle, a diagonal) in x's dtype."""
    return E.multiply(x, mask.astype(x.dtype))


def _sym(x):
    return E.multiply(E.add(x, swap_last(x)), 0.5)


def _rows(s):
    """A vector stack (..., k) as (..., 1, k): multiplying by it scales columns (x @ diag(s))."""
    return reshape_p(s, shape=tuple(s.shape[:-1]) + (1, s.shape[-1]))


def _cols(s):
    """A vector stack (..., k) as (..., k, 1): multiplying by it scales rows (diag(s) @ x)."""
    return reshape_p(s, shape=tuple(s.shape) + (1,))


def _diag_embed(s):
    return E.multiply(_rows(s), _eye(s.shape[-1], s))


def _diagonal(x):
    return reduce_sum_p(_masked(x, np.eye(x.shape[-1])), axes=(x.ndim - 1,))


def _safe_reciprocal(s):
    """1/s, and 0 where s is 0 (JAX's convention for the pseudo-inverse of a singular value)."""
    zero = E.equal(s, 0.0)
    return E.where(zero, 0.0, E.divide(1.0, E.where(zero, 1.0, s)))


def _gaps(w):
    """F[..., i, j] = 1 / (w_j - w_i) off the diagonal, 0 on it: how eigen/singular vectors turn as
    their values move apart. Infinite at a repeated value, where the vectors have no derivative."""
    n = w.shape[-1]
    eye = _eye(n, w)
    return E.subtract(E.divide(1.0, E.add(E.subtract(_rows(w), _cols(w)), eye)), eye)


def _sum(*terms):
    terms = [t for t in terms if t is not None]
    if not terms:
        return None
    total = terms[0]
    for term in terms[1:]:
        total = E.add(total, term)
    return total


def _right_solve_transposed(r, x, lower):
    """x @ inv(r).T for a triangular r: (inv(r) @ x.T).T."""
    return swap_last(triangular_solve_p(r, swap_last(x), lower=lower, transpose_a=False, unit_diagonal=False))


def _right_solve(r, x, lower):
    """x @ inv(r) for a triangular r: (inv(r).T @ x.T).T."""
    return swap_last(triangular_solve_p(r, swap_last(x), lower=lower, transpose_a=True, unit_diagonal=False))


# ----------------------------------------------------------------------------- shape rules

def _check_float(name, *xs):
    for x in xs:
        if np.dtype(x.dtype).kind != "f":
            raise TypeError(f"{name}: needs float matrices, got {np.dtype(x.dtype)} (convert with .astype)")
    if len({np.dtype(x.dtype) for x in xs}) > 1:
        raise TypeError(f"{name}: dtypes {' and '.join(str(np.dtype(x.dtype)) for x in xs)} differ")


def _square(name, a):
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ShapeError(f"{name}: needs a square matrix (or a stack of them), got shape {a.shape}")


def _matrix(name, a):
    if a.ndim < 2:
        raise ShapeError(f"{name}: needs a matrix (or a stack of them), got shape {a.shape}")


def _same_shape(name, inputs):
    (a,) = inputs
    _square(name, a)
    _check_float(name, a)
    return a.shape, a.dtype


def _solve_shape(name, inputs):
    a, b = inputs
    _square(name, a)
    _check_float(name, a, b)
    if b.ndim != a.ndim or b.shape[:-2] != a.shape[:-2] or b.shape[-2] != a.shape[-1]:
        raise ShapeError(f"{name}: a of shape {a.shape} and b of shape {b.shape} do not match (b must be "
                         f"{a.shape[:-1]} + (k,))")
    return b.shape, b.dtype


# ----------------------------------------------------------------------------- cholesky

def cholesky_impl(a):
    return np.linalg.cholesky(a)


def _tril_halved(n):
    """Phi: the lower triangle with its diagonal halved."""
    return np.tril(np.ones((n, n))) - 0.5 * np.eye(n)


def _cholesky_vjp(ct, L, a):
    """PyTorch's and Murray's: gA = sym(L^-T Phi(L^T gL) L^-1), a symmetric gradient (only a's lower
    triangle is read, but the symmetric one is what a symmetric perturbation sees)."""
    n = a.shape[-1]
    phi = _masked(matmul_p(swap_last(L), ct), _tril_halved(n))
    left = triangular_solve_p(L, phi, lower=True, transpose_a=True, unit_diagonal=False)
    return (_sym(_right_solve(L, left, lower=True)),)


def _cholesky_jvp(tangents, L, a):
    """dL = L Phi(L^-1 sym(dA) L^-T)."""
    (t,) = tangents
    if t is None:
        return None
    inner = triangular_solve_p(L, _sym(t), lower=True, transpose_a=False, unit_diagonal=False)
    inner = _right_solve_transposed(L, inner, lower=True)
    return matmul_p(L, _masked(inner, _tril_halved(a.shape[-1])))


cholesky_p = Primitive("cholesky", lambda inputs: _same_shape("cholesky", inputs), cholesky_impl,
                       vjp=_cholesky_vjp, jvp=_cholesky_jvp)


# ----------------------------------------------------------------------------- triangular_solve

def triangular_solve_impl(a, b, lower, transpose_a, unit_diagonal):
    """x with op(t) @ x = b, t the lower (upper) triangle of a, its diagonal ones if unit_diagonal,
    op a transpose if transpose_a. NumPy alone: LAPACK's LU solve of the triangle (a singular
    triangle raises LinAlgError, as scipy.linalg.solve_triangular does)."""
    t = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        t = np.where(np.eye(a.shape[-1], dtype=bool), np.ones((), a.dtype), t)
    if transpose_a:
        t = np.swapaxes(t, -1, -2)
    return np.linalg.solve(t, b)


def _triangle(n, lower, unit_diagonal):
    """The entries of `a` a triangular solve reads."""
    return np.tril(np.ones((n, n)), -1 if unit_diagonal else 0) if lower else \
        np.triu(np.ones((n, n)), 1 if unit_diagonal else 0)


def _op(x, transpose_a):
    return swap_last(x) if transpose_a else x


def _triangular_vjp(ct, x, a, b, lower, transpose_a, unit_diagonal):
    ct_b = triangular_solve_p(a, ct, lower=lower, transpose_a=not transpose_a, unit_diagonal=unit_diagonal)
    ct_op = E.negative(matmul_p(ct_b, swap_last(x)))
    return _masked(_op(ct_op, transpose_a), _triangle(a.shape[-1], lower, unit_diagonal)), ct_b


def _triangular_jvp(tangents, x, a, b, lower, transpose_a, unit_diagonal):
    ta, tb = tangents
    moved = None if ta is None else E.negative(
        matmul_p(_op(_masked(ta, _triangle(a.shape[-1], lower, unit_diagonal)), transpose_a), x))
    rhs = _sum(tb, moved)
    return triangular_solve_p(a, rhs, lower=lower, transpose_a=transpose_a, unit_diagonal=unit_diagonal)


triangular_solve_p = Primitive("triangular_solve",
                               lambda inputs, **attrs: _solve_shape("triangular_solve", inputs),
                               triangular_solve_impl, vjp=_triangular_vjp, jvp=_triangular_jvp)


# ----------------------------------------------------------------------------- solve

def solve_impl(a, b):
    return np.linalg.solve(a, b)


def _solve_vjp(ct, x, a, b):
    ct_b = solve_p(swap_last(a), ct)
    return E.negative(matmul_p(ct_b, swap_last(x))), ct_b


def _solve_jvp(tangents, x, a, b):
    ta, tb = tangents
    return solve_p(a, _sum(tb, None if ta is None else E.negative(matmul_p(ta, x))))


solve_p = Primitive("solve", lambda inputs: _solve_shape("solve", inputs), solve_impl,
                    vjp=_solve_vjp, jvp=_solve_jvp)


# ----------------------------------------------------------------------------- slogdet

def slogdet_impl(a):
    sign, logabsdet = np.linalg.slogdet(a)
    return sign, logabsdet


def _slogdet_shape(inputs):
    (a,) = inputs
    _same_shape("slogdet", inputs)
    return (), ir.tuple_dtype([(a.shape[:-2], a.dtype)] * 2)


def _slogdet_vjp(ct, ans, a):
    """d log|det a| = tr(a^-1 da): the cotangent g a^-T (a singular a raises LinAlgError here)."""
    g = ct[1]
    if g is None:
        return (None,)
    inverse_t = solve_p(swap_last(a), _stacked_eye(a.shape[-1], a))
    return (E.multiply(inverse_t, _cols(_cols(g))),)


def _slogdet_jvp(tangents, ans, a):
    (t,) = tangents
    if t is None:
        return None
    return [None, _diagonal_sum(solve_p(a, t))]


def _diagonal_sum(x):
    return reduce_sum_p(_diagonal(x), axes=(x.ndim - 2,))


slogdet_p = Primitive("slogdet", _slogdet_shape, slogdet_impl, vjp=_slogdet_vjp, jvp=_slogdet_jvp)


# ----------------------------------------------------------------------------- eigh

def eigh_impl(a, lower):
    w, v = np.linalg.eigh(a, UPLO="L" if lower else "U")
    return w, v


def _eigh_shape(inputs, lower):
    (a,) = inputs
    _same_shape("eigh", inputs)
    return (), ir.tuple_dtype([(a.shape[:-1], a.dtype), (a.shape, a.dtype)])


def _eigh_vjp(ct, ans, a, lower):
    """gA = sym(V (diag(gw) + F o (V^T gV)) V^T)."""
    ct_w, ct_v = ct
    w, v = results(ans)
    inner = _sum(None if ct_w is None else _diag_embed(ct_w),
                 None if ct_v is None else E.multiply(_gaps(w), matmul_p(swap_last(v), ct_v)))
    if inner is None:
        return (None,)
    return (_sym(matmul_p(matmul_p(v, inner), swap_last(v))),)


def _eigh_jvp(tangents, ans, a, lower):
    """With M = V^T sym(dA) V: dw = diag(M), dV = V (F o M)."""
    (t,) = tangents
    if t is None:
        return None
    w, v = results(ans)
    m = matmul_p(matmul_p(swap_last(v), _sym(t)), v)
    return [_diagonal(m), matmul_p(v, E.multiply(_gaps(w), m))]


eigh_p = Primitive("eigh", _eigh_shape, eigh_impl, vjp=_eigh_vjp, jvp=_eigh_jvp)


# ----------------------------------------------------------------------------- svd

def svd_impl(a, full_matrices):
    u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
    return u, s, vh


def _svd_shape(inputs, full_matrices):
    (a,) = inputs
    _matrix("svd", a)
    _check_float("svd", a)
    *batch, m, n = a.shape
    k = min(m, n)
    u_cols, vh_rows = (m, n) if full_matrices else (k, k)
    batch = tuple(batch)
    return (), ir.tuple_dtype([(batch + (m, u_cols), a.dtype), (batch + (k,), a.dtype), (batch + (vh_rows, n), a.dtype)])


def _reduced(u, vh, k):
    """u's first k columns and vh's first k rows (all of them unless full_matrices)."""
    if u.shape[-1] != k:
        u = slice_axis(u, u.ndim - 1, 0, k)
    if vh.shape[-2] != k:
        vh = slice_axis(vh, vh.ndim - 2, 0, k)
    return u, vh


def _svd_vjp(ct, ans, a, full_matrices):
    """The transpose of the jvp below: with J = F o (U^T gU), K = F o (Vh gVh^T),
    gA = U (diag(gs) + (J + J^T) S + S (K + K^T)) Vh + (I - U U^T) gU S^-1 Vh + U S^-1 gVh (I - Vh^T Vh).
    With full_matrices, the cotangents of the extra columns are ignored (they are any basis)."""
    m, n = a.shape[-2:]
    k = min(m, n)
    u, s, vh = results(ans)
    u, vh = _reduced(u, vh, k)
    g_u, g_s, g_vh = ct
    g_u = None if g_u is None else _reduced(g_u, vh, k)[0]
    g_vh = None if g_vh is None else _reduced(u, g_vh, k)[1]
    f = _gaps(E.square(s))
    j = None if g_u is None else E.multiply(f, matmul_p(swap_last(u), g_u))
    kk = None if g_vh is None else E.multiply(f, matmul_p(vh, swap_last(g_vh)))
    inner = _sum(None if g_s is None else _diag_embed(g_s),
                 None if j is None else E.multiply(E.add(j, swap_last(j)), _rows(s)),
                 None if kk is None else E.multiply(_cols(s), E.add(kk, swap_last(kk))))
    if inner is None:
        return (None,)
    total = matmul_p(matmul_p(u, inner), vh)
    s_inv = _safe_reciprocal(s)
    if g_u is not None and m > k:
        outside = E.subtract(g_u, matmul_p(u, matmul_p(swap_last(u), g_u)))
        total = E.add(total, matmul_p(E.multiply(outside, _rows(s_inv)), vh))
    if g_vh is not None and n > k:
        outside = E.subtract(g_vh, matmul_p(matmul_p(g_vh, swap_last(vh)), vh))
        total = E.add(total, matmul_p(u, E.multiply(_cols(s_inv), outside)))
    return (total,)


def _svd_jvp(tangents, ans, a, full_matrices):
    """JAX's: dS = U^T dA V, ds = diag(dS), dU = U (F o (dS S + S dS^T)) + (I - U U^T) dA V S^-1,
    dV = V (F o (S dS + dS^T S)) + (I - V V^T) dA^T U S^-1, F[i, j] = 1 / (s_j^2 - s_i^2)."""
    (t,) = tangents
    if t is None:
        return None
    m, n = a.shape[-2:]
    k = min(m, n)
    if full_matrices and m != n:
        fail(f"svd: forward-mode derivatives of full_matrices=True of a non-square matrix (shape {a.shape}) are "
             "not defined (the extra columns are any basis); use full_matrices=False", UnsupportedOpError)
    u, s, vh = results(ans)
    v = swap_last(vh)
    d_s = matmul_p(matmul_p(swap_last(u), t), v)
    f = _gaps(E.square(s))
    ds_s = E.multiply(d_s, _rows(s))
    s_ds = E.multiply(_cols(s), d_s)
    du = matmul_p(u, E.multiply(f, E.add(ds_s, swap_last(ds_s))))
    dv = matmul_p(v, E.multiply(f, E.add(s_ds, swap_last(s_ds))))
    s_inv = _rows(_safe_reciprocal(s))
    if m > k:
        da_v = matmul_p(t, v)
        du = E.add(du, E.multiply(E.subtract(da_v, matmul_p(u, d_s)), s_inv))
    if n > k:
        da_u = matmul_p(swap_last(t), u)
        dv = E.add(dv, E.multiply(E.subtract(da_u, matmul_p(v, swap_last(d_s))), s_inv))
    return [du, _diagonal(d_s), swap_last(dv)]


svd_p = Primitive("svd", _svd_shape, svd_impl, vjp=_svd_vjp, jvp=_svd_jvp)


# ----------------------------------------------------------------------------- qr

def qr_impl(a, complete):
    q, r = np.linalg.qr(a, mode="complete" if complete else "reduced")
    return q, r


def _qr_shape(inputs, complete):
    (a,) = inputs
    _matrix("qr", a)
    _check_float("qr", a)
    *batch, m, n = a.shape
    k = m if complete else min(m, n)
    batch = tuple(batch)
    return (), ir.tuple_dtype([(batch + (m, k), a.dtype), (batch + (k, n), a.dtype)])


def _qr_differentiable(a, complete):
    m, n = a.shape[-2:]
    if m < n or (complete and m != n):
        fail(f"qr: the derivative of a QR decomposition of shape {a.shape} with mode="
             f"{'complete' if complete else 'reduced'} is not defined (the extra columns of Q are any basis); "
             "it needs m >= n, and m == n with mode='complete' (as in PyTorch)", UnsupportedOpError)


def _qr_jvp(tangents, ans, a, complete):
    """JAX's: D = dA R^-1, M = Q^T D, Omega = tril(M, -1) - tril(M, -1)^T, dQ = Q (Omega - M) + D,
    dR = (M - Omega) R."""
    (t,) = tangents
    if t is None:
        return None
    _qr_differentiable(a, complete)
    q, r = results(ans)
    d = _right_solve(r, t, lower=False)
    m = matmul_p(swap_last(q), d)
    lower = _masked(m, np.tril(np.ones(m.shape[-2:]), -1))
    omega = E.subtract(lower, swap_last(lower))
    return [E.add(matmul_p(q, E.subtract(omega, m)), d), matmul_p(E.subtract(m, omega), r)]


def _qr_vjp(ct, ans, a, complete):
    """The transpose of the jvp: Z = gR R^T - Q^T gQ, W = Z - tril(Z - Z^T, -1),
    gA = (gQ + Q W) R^-T."""
    _qr_differentiable(a, complete)
    g_q, g_r = ct
    q, r = results(ans)
    z = _sum(None if g_r is None else matmul_p(g_r, swap_last(r)),
             None if g_q is None else E.negative(matmul_p(swap_last(q), g_q)))
    if z is None:
        return (None,)
    w = E.subtract(z, _masked(E.subtract(z, swap_last(z)), np.tril(np.ones(z.shape[-2:]), -1)))
    return (_right_solve_transposed(r, _sum(g_q, matmul_p(q, w)), lower=False),)


qr_p = Primitive("qr", _qr_shape, qr_impl, vjp=_qr_vjp, jvp=_qr_jvp)


# ----------------------------------------------------------------------------- pinv

def pinv_impl(a, rcond, hermitian):
    return np.linalg.pinv(a, rcond=rcond, hermitian=hermitian)


def _pinv_shape(inputs, rcond, hermitian):
    (a,) = inputs
    _matrix("pinv", a)
    _check_float("pinv", a)
    return tuple(a.shape[:-2]) + (a.shape[-1], a.shape[-2]), a.dtype


def _pinv_jvp(tangents, p, a, rcond, hermitian):
    """Golub and Pereyra's (where the rank does not change): dP = -P dA P + P P^T dA^T (I - A P)
    + (I - P A) dA^T P^T P."""
    (t,) = tangents
    if t is None:
        return None
    pt, tt = swap_last(p), swap_last(t)
    first = E.negative(matmul_p(matmul_p(p, t), p))
    ppt_tt = matmul_p(matmul_p(p, pt), tt)
    second = E.subtract(ppt_tt, matmul_p(matmul_p(ppt_tt, a), p))
    tt_ptp = matmul_p(tt, matmul_p(pt, p))
    third = E.subtract(tt_ptp, matmul_p(p, matmul_p(a, tt_ptp)))
    return _sum(first, second, third)


def _pinv_vjp(ct, p, a, rcond, hermitian):
    """The transpose of the jvp: gA = -P^T G P^T + (I - A P) G^T P P^T + P^T P G^T (I - P A)."""
    pt, gt = swap_last(p), swap_last(ct)
    first = E.negative(matmul_p(matmul_p(pt, ct), pt))
    h = matmul_p(gt, matmul_p(p, pt))
    second = E.subtract(h, matmul_p(a, matmul_p(p, h)))
    k = matmul_p(matmul_p(pt, p), gt)
    third = E.subtract(k, matmul_p(matmul_p(k, p), a))
    return (_sum(first, second, third),)


def _pinv_decomposed(a, rcond, hermitian):
    """NumPy's pinv written with svd, for a backend without a pinv of its own: v diag(1/s) u^T over the
    singular values above rcond * the largest (the others count as zero); zeros for an empty matrix.
    With hermitian=True NumPy takes the singular values from eigh: the same numbers."""
    shape = tuple(a.shape[:-2]) + (a.shape[-1], a.shape[-2])
    if min(a.shape[-2:]) == 0:
        return broadcast_to_p(np.zeros((), a.dtype), shape=shape)
    u, s, vh = results(svd_p(a, full_matrices=False))
    large = E.greater(s, E.multiply(_cols(reduce_max_p(s, axes=(s.ndim - 1,))), rcond))
    inverse = E.where(large, E.divide(1.0, E.where(large, s, 1.0)), 0.0)
    return matmul_p(swap_last(vh), E.multiply(_cols(inverse), swap_last(u)))


pinv_p = Primitive("pinv", _pinv_shape, pinv_impl, vjp=_pinv_vjp, jvp=_pinv_jvp, decompose=_pinv_decomposed)


# ----------------------------------------------------------------------------- det

def det_impl(a):
    return np.linalg.det(a)


def _det_shape(inputs):
    (a,) = inputs
    _same_shape("det", inputs)
    return tuple(a.shape[:-2]), a.dtype


def _cofactors(a):
    """The cofactor matrix of a (det(a) a^-T where a is invertible), from its SVD a = U S Vh, as PyTorch's
    det backward at a singular matrix: det(U) det(Vh) U diag(prod_{j != i} s_j) Vh, defined at every a (the
    cofactors of a rank n-1 matrix are not zero; of a lower rank, they are)."""
    n = a.shape[-1]
    u, s, vh = results(svd_p(a, full_matrices=False))
    others = reduce_prod_p(E.where(np.eye(n, dtype=bool), 1.0, _rows(s)), axes=(s.ndim,))  # prod_{j != i} s_j
    signs = E.multiply(results(slogdet_p(u))[0], results(slogdet_p(vh))[0])
    return E.multiply(matmul_p(E.multiply(u, _rows(others)), vh), _cols(_cols(signs)))


def _det_vjp(ct, ans, a):
    return (E.multiply(_cofactors(a), _cols(_cols(ct))),)


def _det_jvp(tangents, ans, a):
    (t,) = tangents
    return None if t is None else reduce_sum_p(E.multiply(_cofactors(a), t), axes=(a.ndim - 2, a.ndim - 1))


def _det_decomposed(a):
    """sign * exp(log|det|), for a backend without a det of its own (LLVM: getrf through slogdet)."""
    sign, logabsdet = results(slogdet_p(a))
    return E.multiply(sign, E.exp(logabsdet))


# det has a primitive of its own (not sign * exp(logabsdet) of slogdet) for its derivative, which exists at
# a singular matrix too: slogdet's, a^-T, does not.
det_p = Primitive("det", _det_shape, det_impl, vjp=_det_vjp, jvp=_det_jvp, decompose=_det_decomposed)


# Every primitive of this module (their batching rule is one, and tests/test_linalg.py checks each).
PRIMITIVES = (cholesky_p, triangular_solve_p, solve_p, slogdet_p, eigh_p, svd_p, qr_p, pinv_p, det_p)
