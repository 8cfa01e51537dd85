"""scipy.stats.gamma: the gamma distribution of shape a, shifted by loc and scaled by scale."""
from __future__ import annotations

import math

from ...ops import elementwise as E
from .support import distribution_function, log_density, on_support, standardize, where_valid


@distribution_function
def logpdf(x, a, loc=0, scale=1):
    y = standardize(x, loc, scale)
    log_standard = on_support(E.greater_equal(y, 0),
                              lambda y: E.subtract(E.subtract(E.xlogy(E.subtract(a, 1), y), y), E.gammaln(a)),
                              y, 1.0, E.less(y, 0), -math.inf)
    return where_valid(log_density(log_standard, scale), E.greater(a, 0))


@distribution_function
def pdf(x, a, loc=0, scale=1):
    return E.exp(logpdf(x, a, loc, scale))


@distribution_function
def cdf(x, a, loc=0, scale=1):
    """Differentiable in x, loc and scale; not in a (sg.UnsupportedOpError if a program needs that)."""
    y = standardize(x, loc, scale)
    value = on_support(E.greater(y, 0), lambda y: E.gammainc(a, y), y, 1.0, E.less_equal(y, 0), 0.0)
    return where_valid(value, E.greater(scale, 0), E.greater(a, 0))


@distribution_function
def logcdf(x, a, loc=0, scale=1):
    """log(cdf), as log1p(-sf) where the cdf is above 1/2, as SciPy's: log(cdf) lost sf's digits there, and
    was positive for a tiny shape (SciPy's gammainc(1e-300, 0.5) is 1 + 2e-14)."""
    value = cdf(x, a, loc, scale)
    near_one = E.greater(value, 0.5)
    upper = on_support(near_one, lambda y: E.gammaincc(a, y), standardize(x, loc, scale), 1.0,
                       E.logical_not(near_one), 0.0)
    return E.where(near_one, E.log1p(E.negative(upper)), E.log(E.where(near_one, 0.5, value)))
