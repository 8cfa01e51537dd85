"""scipy.stats.multivariate_normal: the normal distribution of a vector (x's last axis).

A NumPy covariance is factored once, with NumPy, when the call is traced; a traced one (or an eager
tensor) by sg.linalg.cholesky in the graph, so x, mean and cov may all be differentiated. With
allow_singular=True, SciPy's pseudo-density instead: eigenvalues at most eps = cond * the largest count as
zero; the pseudo-inverse and the log of the pseudo-determinant (the product of the others) replace the
inverse and log det, the rank replaces the dimension, and x off the support (the mean plus the span of
the kept eigenvectors) has density 0 (logpdf -inf).
"""
from __future__ import annotations

import math

import numpy as np

from ... import linalg
from ...core import Tracer, fail
from ...numpy_api import arrays as A
from ...numpy_api import rearrange as R
from ...ops import elementwise as E


def logpdf(x, mean=None, cov=1, allow_singular=False):
    mean_shape = A.asarray(mean).shape if mean is not None else ()
    traced = isinstance(cov, Tracer)
    cov = cov if traced else np.asarray(cov, dtype=np.float64)
    dim = mean_shape[0] if len(mean_shape) == 1 else cov.shape[0] if cov.ndim >= 1 else 1
    eye = np.eye(dim, dtype=cov.dtype)
    cov = E.multiply(A.reshape(cov, (1, dim)), eye) if cov.ndim == 1 else E.multiply(cov, eye) if cov.ndim == 0 \
        else cov
    if cov.shape != (dim, dim):
        raise ValueError(f"sg.scipy.stats.multivariate_normal: cov of shape {cov.shape} does not match the "
                         f"dimension {dim} of mean (shape {mean_shape})")
    if allow_singular:
        return _singular_logpdf(x, mean, cov, dim, traced)
    if traced:
        factor = linalg.cholesky(cov)  # LinAlgError when the program runs, for a cov not positive definite
        inverse = linalg.solve_triangular(factor, eye, lower=True)
        log_det = E.multiply(2.0, A.sum(E.log(R.diagonal(factor))))
    else:
        try:
            factor = np.linalg.cholesky(cov)
        except np.linalg.LinAlgError:
            raise ValueError("sg.scipy.stats.multivariate_normal: the covariance matrix is not positive definite") \
                from None
        inverse = np.linalg.inv(factor)
        log_det = 2.0 * float(np.sum(np.log(np.diag(factor))))
    centered = _centered(x, mean, dim)
    inverse_t = A.swapaxes(inverse, 0, 1) if traced else inverse.T.astype(A.asarray(centered).dtype)
    whitened = A.matmul(centered, inverse_t)
    maha = A.sum(E.square(whitened), axis=-1)
    result = E.multiply(-0.5, E.add(maha, dim * math.log(2 * math.pi) + log_det))
    return A.squeeze(result) if A.asarray(result).ndim else result


def _centered(x, mean, dim):
    """x - mean, x's points along its last axis as SciPy reads them."""
    x = A.asarray(x)
    if x.ndim == 0:
        x = A.reshape(x, (1,))
    if x.ndim == 1 and dim == 1 and x.shape[0] != 1:
        x = A.reshape(x, (x.shape[0], 1))  # SciPy: 1-d x of a 1-d distribution is many points
    if x.shape[-1] != dim:
        fail(f"sg.scipy.stats.multivariate_normal: x of shape {x.shape} does not end in the dimension {dim}")
    return x if mean is None else E.subtract(x, mean)


def _singular_logpdf(x, mean, cov, dim, traced):
    """SciPy's logpdf with allow_singular=True (its _PSD): eigh, eps = cond * max|eigenvalue| (cond 1e6 eps
    of float64, 1e3 of float32), ValueError for an eigenvalue below -eps (a traced cov cannot raise: its
    logpdf is NaN there). The Mahalanobis term uses sg.linalg.pinv with the same cutoff, whose derivative,
    unlike the eigenvectors', exists at repeated (zero) eigenvalues."""
    dtype = np.dtype(cov.dtype)
    cond = (1e6 if dtype == np.float64 else 1e3) * float(np.finfo(dtype).eps)
    values, vectors = linalg.eigh(cov)
    eps = E.multiply(cond, A.max(E.abs(values)))
    if not traced and np.min(values) < -eps:
        raise ValueError("sg.scipy.stats.multivariate_normal: the covariance matrix must be symmetric positive "
                         "semidefinite")
    kept = E.greater(values, eps)
    rank = A.sum(A.astype(kept, dtype))
    log_pdet = A.sum(E.where(kept, E.log(E.where(kept, values, 1.0)), 0.0))
    log_pdet = E.where(E.less(A.min(values), E.negative(eps)), math.nan, log_pdet)
    precision = linalg.pinv(cov, rcond=cond, hermitian=True)
    null_space = E.multiply(vectors, A.astype(E.logical_not(kept), dtype))  # the dropped eigenvectors' columns
    centered = _centered(x, mean, dim)
    if not traced:
        precision, null_space = (np.asarray(m, A.asarray(centered).dtype) for m in (precision, null_space))
    maha = A.sum(E.multiply(A.matmul(centered, precision), centered), axis=-1)
    result = E.multiply(-0.5, E.add(E.add(maha, E.multiply(rank, math.log(2 * math.pi))), log_pdet))
    off_support = E.greater_equal(A.sum(E.square(A.matmul(centered, null_space)), axis=-1),
                                  E.square(E.multiply(1e3, eps)))
    result = E.where(off_support, -math.inf, result)
    return A.squeeze(result) if A.asarray(result).ndim else result


def pdf(x, mean=None, cov=1, allow_singular=False):
    return E.exp(logpdf(x, mean, cov, allow_singular))
