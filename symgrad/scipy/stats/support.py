"""What every distribution's functions share: standardizing by loc and scale, and SciPy's values
outside the support (-inf for a log density, 0 for a density) and for invalid parameters (NaN)."""
from __future__ import annotations

import functools
import math

from ...numpy_api.dispatch import dispatch_all_arguments
from ...ops import elementwise as E
from ..weak_numbers import weak_numbers


def distribution_function(fn):
    """A distribution's function: arrays (eager tensors too) by position or by SciPy's names, and
    Python-number arguments weak (weak_numbers.py): float32 data gives float32 densities (SciPy would
    give float64)."""
    @functools.wraps(fn)
    def weakly_typed(*args):
        return fn(*weak_numbers(args))
    return dispatch_all_arguments(weakly_typed)


def standardize(x, loc, scale):
    """(x - loc) / scale."""
    return E.divide(E.subtract(x, loc), scale)


def where_valid(value, *conditions):
    """value where every condition holds, else NaN, as SciPy gives for parameters outside their domain
    (scale <= 0, p > 1, ...)."""
    for condition in conditions:
        value = E.where(condition, value, math.nan)
    return value


def on_support(inside, fn, x, safe, off_support, outside):
    """fn(x) where `inside`, `outside` where `off_support`, else (x is NaN) NaN; fn sees `safe` off the
    support, so that a NaN or infinite derivative there (log of a negative number) never reaches the
    gradient through the unselected branch."""
    return E.where(off_support, outside, E.where(inside, fn(E.where(inside, x, safe)), math.nan))


def log_density(log_standard, scale):
    """The log density of a location-scale family from its standard one: minus log(scale), NaN where scale <= 0."""
    return where_valid(E.subtract(log_standard, E.log(scale)), E.greater(scale, 0))
