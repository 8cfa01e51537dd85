"""scipy.stats.dirichlet: a density on the simplex, components along x's first axis (as SciPy)."""
from __future__ import annotations

import numpy as np

from ...numpy_api import arrays as A
from ...ops import elementwise as E
from .support import distribution_function


@distribution_function
def logpdf(x, alpha):
    """x: K components along axis 0 (or K - 1, completed with 1 - their sum), alpha: K concentrations."""
    alpha = A.asarray(alpha)
    if alpha.ndim != 1:
        raise ValueError(f"sg.scipy.stats.dirichlet: parameter vector 'alpha' must be one-dimensional, "
                         f"got shape {alpha.shape}")
    x = A.asarray(x)
    components = alpha.shape[0]
    if x.ndim == 0 or x.shape[0] not in (components, components - 1):
        raise ValueError(f"sg.scipy.stats.dirichlet: x of shape {x.shape} needs {components} or {components - 1} "
                         f"components along its first axis, for alpha of shape {alpha.shape}")
    if x.shape[0] == components - 1:
        x = A.concatenate([x, E.subtract(1.0, A.sum(x, axis=0, keepdims=True))], axis=0)
    if isinstance(x, np.ndarray) and not np.allclose(np.sum(x, axis=0), 1.0):
        raise ValueError("The input vector 'x' must lie within the normal simplex. but np.sum(x, 0) = "
                         f"{np.sum(x, axis=0)}.")
    alpha_along = A.reshape(alpha, (components,) + (1,) * (x.ndim - 1))
    log_normalizer = E.subtract(A.sum(E.gammaln(alpha)), E.gammaln(A.sum(alpha)))
    return E.subtract(A.sum(E.xlogy(E.subtract(alpha_along, 1), x), axis=0), log_normalizer)


@distribution_function
def pdf(x, alpha):
    return E.exp(logpdf(x, alpha))
