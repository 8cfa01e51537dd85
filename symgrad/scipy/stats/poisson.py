"""scipy.stats.poisson: the Poisson distribution of mean mu, shifted by loc."""
from __future__ import annotations

import math

from ...ops import elementwise as E
from .support import distribution_function, on_support, where_valid


@distribution_function
def logpmf(k, mu, loc=0):
    k = E.subtract(k, loc)
    inside = E.logical_and(E.greater_equal(k, 0), E.is_whole(k))
    off_support = E.logical_or(E.less(k, 0), E.logical_and(E.greater_equal(k, 0), E.logical_not(E.is_whole(k))))
    value = on_support(inside, lambda k: E.subtract(E.subtract(E.xlogy(k, mu), E.gammaln(E.add(k, 1))), mu),
                       k, 0.0, off_support, -math.inf)
    return where_valid(value, E.greater_equal(mu, 0))


@distribution_function
def pmf(k, mu, loc=0):
    return E.exp(logpmf(k, mu, loc))


@distribution_function
def cdf(k, mu, loc=0):
    k = E.subtract(k, loc)
    value = on_support(E.greater_equal(k, 0), lambda k: E.pdtr(k, mu), k, 0.0, E.less(k, 0), 0.0)
    return where_valid(value, E.greater_equal(mu, 0))


@distribution_function
def logcdf(k, mu, loc=0):
    return E.log(cdf(k, mu, loc))
