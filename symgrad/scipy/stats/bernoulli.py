"""scipy.stats.bernoulli: 1 with probability p, 0 with probability 1 - p (shifted by loc)."""
from __future__ import annotations

import math

from ...ops import elementwise as E
from .support import distribution_function, where_valid


def _valid(p):
    return E.logical_and(E.greater_equal(p, 0), E.less_equal(p, 1))


@distribution_function
def logpmf(k, p, loc=0):
    k = E.subtract(k, loc)
    inside = E.logical_or(E.equal(k, 0), E.equal(k, 1))
    value = E.add(E.xlogy(k, p), E.xlog1py(E.subtract(1, k), E.negative(p)))
    return where_valid(E.where(inside, value, -math.inf), _valid(p))


@distribution_function
def pmf(k, p, loc=0):
    return E.exp(logpmf(k, p, loc))


@distribution_function
def cdf(k, p, loc=0):
    k = E.subtract(k, loc)
    value = E.where(E.less(k, 0), 0.0, E.where(E.less(k, 1), E.subtract(1, p), 1.0))
    return where_valid(value, _valid(p))


@distribution_function
def logcdf(k, p, loc=0):
    k = E.subtract(k, loc)
    value = E.where(E.less(k, 0), -math.inf, E.where(E.less(k, 1), E.log1p(E.negative(p)), 0.0))
    return where_valid(value, _valid(p))
