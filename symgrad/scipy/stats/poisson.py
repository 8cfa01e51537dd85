"""scipy.stats.poisson: the Poisson distribution of mean mu, shifted by loc."""
from __future__ import annotations

import math

from ...ops import elementwise as E
from .support import distribution_function, on_support, where_valid


@distribution_function
def logpmf(k, mu, loc=0):
    k = E.subtract(k, loc)
    inside = E.logical_and(E.greater_equal(k, 0), E.is_whole(k))
    value = on_support(inside, lambda k: E.subtract(E.subtract(E.xlogy(k, mu), E.gammaln(E.add(k, 1))), mu),
                       k, 0.0, -math.inf)
    return where_valid(value, E.greater_equal(mu, 0))


@distribution_function
def pmf(k, mu, loc=0):
    return E.exp(logpmf(k, mu, loc))
