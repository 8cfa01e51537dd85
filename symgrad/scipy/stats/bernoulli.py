"""scipy.stats.bernoulli: 1 with probability p, 0 with probability 1 - p (shifted by loc)."""
from __future__ import annotations

import math

from ...ops import elementwise as E
from .support import distribution_function, on_support, where_valid


def _off_support(k):
    """k is neither 0 nor 1 (nor NaN)."""
    return E.logical_or(E.logical_or(E.less(k, 0), E.greater(k, 1)), E.logical_and(E.greater(k, 0), E.less(k, 1)))


def _step(k, below, between, above):
    """SciPy's cdf-like step at 0 and 1; NaN for NaN k."""
    return E.where(E.less(k, 0), below, E.where(E.greater_equal(k, 1), above, E.where(E.less(k, 1), between, math.nan)))


def _valid(p):
    return E.logical_and(E.greater_equal(p, 0), E.less_equal(p, 1))


@distribution_function
def logpmf(k, p, loc=0):
    k = E.subtract(k, loc)
    inside = E.logical_or(E.equal(k, 0), E.equal(k, 1))
    value = on_support(inside, lambda k: E.add(E.xlogy(k, p), E.xlog1py(E.subtract(1, k), E.negative(p))), k, 0.0,
                       _off_support(k), -math.inf)
    return where_valid(value, _valid(p))


@distribution_function
def pmf(k, p, loc=0):
    return E.exp(logpmf(k, p, loc))


@distribution_function
def cdf(k, p, loc=0):
    k = E.subtract(k, loc)
    value = _step(k, 0.0, E.subtract(1, p), 1.0)
    return where_valid(value, _valid(p))


@distribution_function
def logcdf(k, p, loc=0):
    k = E.subtract(k, loc)
    value = _step(k, -math.inf, E.log1p(E.negative(p)), 0.0)
    return where_valid(value, _valid(p))
