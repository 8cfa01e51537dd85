"""scipy.stats.t: Student's t distribution with df degrees of freedom, shifted by loc and scaled by scale."""
from __future__ import annotations

from ...ops import elementwise as E
from .norm import log_standard_density
from .support import distribution_function, log_density, standardize, where_valid


@distribution_function
def logpdf(x, df, loc=0, scale=1):
    y = standardize(x, loc, scale)
    # log(Gamma((df+1)/2) / (Gamma(df/2) sqrt(pi df))) as -(betaln(df/2, 1/2) + log(df)/2): the difference of the
    # two gammaln lost every digit for a large df (df = 1e16: -19.2 for SciPy's -1.164)
    normalizer = E.negative(E.add(E.betaln(E.multiply(0.5, df), 0.5), E.multiply(0.5, E.log(df))))
    half = E.multiply(0.5, E.add(df, 1))
    log_standard = E.subtract(normalizer, E.multiply(half, E.log1p(E.divide(E.square(y), df))))
    # df = inf is the normal distribution, as SciPy's (the formula gives inf - inf there)
    log_standard = E.where(E.isposinf(df), log_standard_density(y), log_standard)
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
