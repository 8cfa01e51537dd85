"""scipy.stats.norm: the normal distribution with mean loc and standard deviation scale."""
from __future__ import annotations

import math

from ...ops import elementwise as E
from .support import distribution_function, log_density, standardize, where_valid

_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


def log_standard_density(y):
    """The standard normal's log density at y (also Student's t's at df = inf)."""
    return E.subtract(-_LOG_SQRT_2PI, E.multiply(0.5, E.square(y)))


@distribution_function
def logpdf(x, loc=0, scale=1):
    return log_density(log_standard_density(standardize(x, loc, scale)), scale)


@distribution_function
def pdf(x, loc=0, scale=1):
    return E.exp(logpdf(x, loc, scale))


@distribution_function
def cdf(x, loc=0, scale=1):
    return where_valid(E.ndtr(standardize(x, loc, scale)), E.greater(scale, 0))


@distribution_function
def logcdf(x, loc=0, scale=1):
    return where_valid(E.log_ndtr(standardize(x, loc, scale)), E.greater(scale, 0))


@distribution_function
def sf(x, loc=0, scale=1):
    return where_valid(E.ndtr(E.negative(standardize(x, loc, scale))), E.greater(scale, 0))


@distribution_function
def logsf(x, loc=0, scale=1):
    return where_valid(E.log_ndtr(E.negative(standardize(x, loc, scale))), E.greater(scale, 0))


@distribution_function
def ppf(q, loc=0, scale=1):
    return where_valid(E.add(loc, E.multiply(scale, E.ndtri(q))), E.greater(scale, 0))
