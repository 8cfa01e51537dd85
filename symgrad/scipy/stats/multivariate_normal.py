"""scipy.stats.multivariate_normal: the normal distribution of a vector (x's last axis).

The covariance must be a NumPy value (its Cholesky factor is taken once, with NumPy, when the call
is traced): mean and x may be traced and differentiated. A traced covariance needs a Cholesky
factorization in the graph, which symgrad does not have yet (sg.linalg); it is a clear error.
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from ...core import UnsupportedOpError, fail
from ...numpy_api import arrays as A
from ...ops import elementwise as E


def logpdf(x, mean=None, cov=1, allow_singular=False):
    if not isinstance(cov, (numbers.Real, np.ndarray, np.generic, list, tuple)):
        fail("sg.scipy.stats.multivariate_normal.logpdf: cov must be a NumPy value (a constant); a traced "
             "covariance needs sg.linalg.cholesky, which symgrad does not have yet", UnsupportedOpError)
    if allow_singular:
        fail("sg.scipy.stats.multivariate_normal.logpdf: allow_singular=True is not supported; "
             "cov must be symmetric positive definite", UnsupportedOpError)
    mean_shape = A.asarray(mean).shape if mean is not None else ()
    cov = np.asarray(cov, dtype=np.float64)
    dim = mean_shape[0] if len(mean_shape) == 1 else cov.shape[0] if cov.ndim >= 1 else 1
    cov = np.diag(cov) if cov.ndim == 1 else cov * np.eye(dim) if cov.ndim == 0 else cov
    if cov.shape != (dim, dim):
        raise ValueError(f"sg.scipy.stats.multivariate_normal: cov of shape {cov.shape} does not match the "
                         f"dimension {dim} of mean (shape {mean_shape})")
    try:
        factor = np.linalg.cholesky(cov)
    except np.linalg.LinAlgError:
        raise ValueError("sg.scipy.stats.multivariate_normal: the covariance matrix is not positive definite") \
            from None
    x = A.asarray(x)
    if x.ndim == 0:
        x = A.reshape(x, (1,))
    if x.ndim == 1 and dim == 1 and x.shape[0] != 1:
        x = A.reshape(x, (x.shape[0], 1))  # SciPy: 1-d x of a 1-d distribution is many points
    if x.shape[-1] != dim:
        fail(f"sg.scipy.stats.multivariate_normal: x of shape {x.shape} does not end in the dimension {dim}")
    centered = x if mean is None else E.subtract(x, mean)
    whitened = A.matmul(centered, np.linalg.inv(factor).T.astype(A.asarray(centered).dtype))
    log_det = 2.0 * float(np.sum(np.log(np.diag(factor))))
    maha = A.sum(E.square(whitened), axis=-1)
    result = E.multiply(-0.5, E.add(maha, dim * math.log(2 * math.pi) + log_det))
    return A.squeeze(result) if A.asarray(result).ndim else result


def pdf(x, mean=None, cov=1, allow_singular=False):
    return E.exp(logpdf(x, mean, cov, allow_singular))
