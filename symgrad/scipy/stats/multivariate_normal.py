"""scipy.stats.multivariate_normal: the normal distribution of a vector (x's last axis).

A NumPy covariance is factored once, with NumPy, when the call is traced; a traced one (or an eager
tensor) by sg.linalg.cholesky in the graph, so x, mean and cov may all be differentiated.
"""
from __future__ import annotations

import math

import numpy as np

from ... import linalg
from ...core import Tracer, UnsupportedOpError, fail
from ...numpy_api import arrays as A
from ...numpy_api import rearrange as R
from ...ops import elementwise as E


def logpdf(x, mean=None, cov=1, allow_singular=False):
    if allow_singular:
        fail("sg.scipy.stats.multivariate_normal.logpdf: allow_singular=True is not supported; "
             "cov must be symmetric positive definite", UnsupportedOpError)
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
    x = A.asarray(x)
    if x.ndim == 0:
        x = A.reshape(x, (1,))
    if x.ndim == 1 and dim == 1 and x.shape[0] != 1:
        x = A.reshape(x, (x.shape[0], 1))  # SciPy: 1-d x of a 1-d distribution is many points
    if x.shape[-1] != dim:
        fail(f"sg.scipy.stats.multivariate_normal: x of shape {x.shape} does not end in the dimension {dim}")
    centered = x if mean is None else E.subtract(x, mean)
    inverse_t = A.swapaxes(inverse, 0, 1) if traced else inverse.T.astype(A.asarray(centered).dtype)
    whitened = A.matmul(centered, inverse_t)
    maha = A.sum(E.square(whitened), axis=-1)
    result = E.multiply(-0.5, E.add(maha, dim * math.log(2 * math.pi) + log_det))
    return A.squeeze(result) if A.asarray(result).ndim else result


def pdf(x, mean=None, cov=1, allow_singular=False):
    return E.exp(logpdf(x, mean, cov, allow_singular))
