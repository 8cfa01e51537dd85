"""scipy.linalg's names symgrad has (as jax.scipy.linalg): solve_triangular, cho_factor, cho_solve, and
the numpy.linalg functions SciPy also offers. They are sg.linalg's (symgrad/linalg.py), but for cholesky, qr
and eigh, whose SciPy signatures and defaults differ from NumPy's: SciPy's cholesky is the upper factor and
its qr the complete one by default."""
from .. import linalg as _linalg
from ..core import UnsupportedOpError, with_user_line
from .. import numpy_api as _np
from ..linalg import cho_factor, cho_solve, det, inv, lstsq, norm, pinv, solve_triangular, svd

__all__ = ["cho_factor", "cho_solve", "cholesky", "det", "eigh", "inv", "lstsq", "norm", "pinv", "qr", "solve",
           "solve_triangular", "svd"]

_QR_MODES = {"full": "complete", "economic": "reduced", "r": "complete"}
# SciPy's assume_a: the structure solve reads from a (a symmetric one from the triangle `lower` names)
_ASSUMED = {None: "gen", "gen": "gen", "general": "gen", "sym": "sym", "symmetric": "sym", "her": "sym",
            "hermitian": "sym", "pos": "pos", "positive definite": "pos", "upper triangular": "upper",
            "lower triangular": "lower"}


def solve(a, b, lower=False, overwrite_a=False, overwrite_b=False, check_finite=True, assume_a=None,
          transposed=False):
    """scipy.linalg.solve: x with a @ x = b (a.T @ x = b with transposed=True). A symmetric or positive definite a
    (assume_a 'sym', 'her', 'pos') is read from its upper triangle (lower=True: its lower one), a triangular one from
    that triangle; 'pos' factors it (LinAlgError if it is not positive definite)."""
    if assume_a not in _ASSUMED:
        raise UnsupportedOpError(with_user_line(f"sg.scipy.linalg.solve: assume_a={assume_a!r} is not supported "
                                                f"(one of {', '.join(repr(k) for k in _ASSUMED if k)})"))
    kind = _ASSUMED[assume_a]
    if kind in ("upper", "lower"):
        return solve_triangular(a, b, trans=int(bool(transposed)), lower=kind == "lower")
    a = _np.swapaxes(a, -1, -2) if transposed and kind == "gen" else a
    if kind == "gen":
        return _linalg.solve(a, b)
    triangle = _np.tril(a) if lower else _np.triu(a)
    if kind == "pos":
        return cho_solve((_linalg.cholesky(a, upper=not lower), lower), b)
    return _linalg.solve(triangle + _np.swapaxes(triangle, -1, -2) - _np.tril(_np.triu(a)), b)


def cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    """scipy.linalg.cholesky: the upper factor U with a = U.T @ U from a's upper triangle, or with lower=True
    the lower factor from its lower triangle."""
    return _linalg.cholesky(a, upper=not lower)


def qr(a, overwrite_a=False, lwork=None, mode="full", pivoting=False, check_finite=True):
    """scipy.linalg.qr: (q, r), complete by default (mode 'full'), reduced with mode 'economic', or (r,)
    with mode 'r', as SciPy returns it."""
    if pivoting:
        raise UnsupportedOpError(with_user_line("sg.scipy.linalg.qr: pivoting=True is not supported"))
    if mode not in _QR_MODES:
        raise ValueError(f"sg.scipy.linalg.qr: mode must be 'full', 'economic' or 'r' ('raw' is not supported), "
                         f"got {mode!r}")
    q, r = _linalg.qr(a, mode=_QR_MODES[mode])
    return (r,) if mode == "r" else (q, r)


def eigh(a, b=None, *, lower=True, eigvals_only=False, overwrite_a=False, overwrite_b=False, type=1,
         check_finite=True, subset_by_index=None, subset_by_value=None, driver=None):
    """scipy.linalg.eigh of a symmetric a: (w, v), or w with eigvals_only=True, from a's lower triangle (its
    upper one with lower=False). The generalized problem (b) and subsets are not supported."""
    if b is not None or subset_by_index is not None or subset_by_value is not None:
        raise UnsupportedOpError(with_user_line("sg.scipy.linalg.eigh: the generalized problem (b) and "
                                                "subset_by_index/subset_by_value are not supported"))
    w, v = _linalg.eigh(a, UPLO="L" if lower else "U")
    return w if eigvals_only else (w, v)
