"""scipy.stats.beta: the beta distribution of shapes a and b on [loc, loc + scale]."""
from __future__ import annotations

import math

from ...ops import elementwise as E
from .support import distribution_function, log_density, on_support, standardize, where_valid


@distribution_function
def logpdf(x, a, b, loc=0, scale=1):
    y = standardize(x, loc, scale)
    inside = E.logical_and(E.greater_equal(y, 0), E.less_equal(y, 1))

    def log_standard(y):
        return E.subtract(E.add(E.xlogy(E.subtract(a, 1), y), E.xlog1py(E.subtract(b, 1), E.negative(y))),
                          E.betaln(a, b))
    off_support = E.logical_or(E.less(y, 0), E.greater(y, 1))
    value = log_density(on_support(inside, log_standard, y, 0.5, off_support, -math.inf), scale)
    return where_valid(value, E.greater(a, 0), E.greater(b, 0))


@distribution_function
def pdf(x, a, b, loc=0, scale=1):
    return E.exp(logpdf(x, a, b, loc, scale))


@distribution_function
def cdf(x, a, b, loc=0, scale=1):
    """Differentiable in x, loc and scale; not in a and b (sg.UnsupportedOpError if a program needs that)."""
    y = standardize(x, loc, scale)
    inside = E.logical_and(E.greater(y, 0), E.less(y, 1))
    value = on_support(inside, lambda y: E.betainc(a, b, y), y, 0.5, E.less_equal(y, 0), 0.0)
    value = E.where(E.greater_equal(y, 1), 1.0, value)
    return where_valid(value, E.greater(scale, 0), E.greater(a, 0), E.greater(b, 0))


@distribution_function
def logcdf(x, a, b, loc=0, scale=1):
    return E.log(cdf(x, a, b, loc, scale))
