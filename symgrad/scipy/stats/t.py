"""scipy.stats.t: Student's t distribution with df degrees of freedom, shifted by loc and scaled by scale."""
from __future__ import annotations

import math

from ...ops import elementwise as E
from .support import distribution_function, log_density, standardize, where_valid


@distribution_function
def logpdf(x, df, loc=0, scale=1):
    y = standardize(x, loc, scale)
    half = E.multiply(0.5, E.add(df, 1))
    normalizer = E.subtract(E.subtract(E.gammaln(half), E.gammaln(E.multiply(0.5, df))),
                            E.multiply(0.5, E.log(E.multiply(math.pi, df))))
    log_standard = E.subtract(normalizer, E.multiply(half, E.log1p(E.divide(E.square(y), df))))
    return where_valid(log_density(log_standard, scale), E.greater(df, 0))


@distribution_function
def pdf(x, df, loc=0, scale=1):
    return E.exp(logpdf(x, df, loc, scale))


@distribution_function
def cdf(x, df, loc=0, scale=1):
    """Differentiable in x, loc and scale; not in df (sg.UnsupportedOpError if a program needs that)."""
    return where_valid(E.stdtr(df, standardize(x, loc, scale)), E.greater(scale, 0), E.greater(df, 0))


@distribution_function
def logcdf(x, df, loc=0, scale=1):
    return E.log(cdf(x, df, loc, scale))
