"""scipy.special's functions with SciPy's names and arguments, differentiable.

The elementwise ones are ops of the library (ops/elementwise.py), SymPy expressions whose derivatives
SymPy derives; polygamma, multigammaln and logsumexp are built from them. SciPy evaluates gammaln,
digamma, polygamma, erfc, erfinv, ndtr, log_ndtr, ndtri, betaln and the incomplete integrals (gammainc,
gammaincc, betainc, stdtr, pdtr): without it they raise an error that names the op and says to install scipy.
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from .. import dtypes
from ..core import fail
from ..numpy_api import arrays as A
from ..numpy_api.dispatch import dispatch_all_arguments
from ..ops import elementwise as E
from .weak_numbers import with_weak_numbers

gammaln, digamma, erf, erfc, erfinv = E.gammaln, E.digamma, E.erf, E.erfc, E.erfinv
ndtr, log_ndtr, ndtri, logit, expit = E.ndtr, E.log_ndtr, E.ndtri, E.logit, E.expit
xlogy, xlog1py, betaln = with_weak_numbers(E.xlogy), with_weak_numbers(E.xlog1py), with_weak_numbers(E.betaln)
psi = digamma  # SciPy's other name for it
# Regularized incomplete integrals, differentiable in x (pdtr: in mu) only: their derivatives in the shape
# parameters have no closed form (sg.UnsupportedOpError when a program needs one).
gammainc, gammaincc, betainc, stdtr, pdtr = (with_weak_numbers(op) for op in (E.gammainc, E.gammaincc, E.betainc,
                                                                                E.stdtr, E.pdtr))


def polygamma(n, x):
    """The n-th derivative of digamma. n: a non-negative whole number, or a NumPy array of them
    (broadcast against x); it picks the function, so it cannot be a traced value."""
    if not isinstance(n, (numbers.Real, np.ndarray, np.generic, list, tuple)):
        fail("sg.scipy.special.polygamma: the order n must be a Python int or NumPy integer array, not a "
             "traced value (each order is another function)", TypeError)
    orders = np.asarray(n)
    if orders.dtype.kind not in "iuf" or np.any(orders < 0) or np.any(orders != np.round(orders)):
        raise ValueError(f"sg.scipy.special.polygamma: the order n must be a non-negative whole number, got {n!r}")
    if orders.ndim == 0:
        return E.polygamma_of_order(int(orders))(x)
    result = None
    for order in np.unique(orders):
        value = E.polygamma_of_order(int(order))(x)
        result = value if result is None else E.where(orders == order, value, result)
    return A.broadcast_to(result, np.broadcast_shapes(orders.shape, result.shape))


def multigammaln(a, d):
    """log of the multivariate gamma function of dimension d: d(d-1)/4 log(pi) + sum_j gammaln(a - j/2).

    As SciPy, a ValueError for concrete a <= (d - 1)/2; a traced a there gives NaN."""
    if not isinstance(d, numbers.Integral) or isinstance(d, bool) or d < 1:
        raise ValueError(f"sg.scipy.special.multigammaln: d must be a positive integer, got {d!r}")
    concrete = isinstance(a, (numbers.Real, np.ndarray, np.generic, list, tuple))
    if concrete and np.any(np.asarray(a) <= (d - 1) / 2):
        raise ValueError(f"condition a ({a}) > 0.5 * (d-1) ({0.5 * (d - 1)}) not met")
    total = d * (d - 1) / 4 * math.log(math.pi)
    for j in range(d):
        total = E.add(total, gammaln(E.subtract(a, j / 2)))
    return total if concrete else E.where(E.greater(a, (d - 1) / 2), total, math.nan)


def softmax(x, axis=None):
    """scipy.special.softmax: exp(x) / sum(exp(x)) over axis, all of x by default (SciPy's default)."""
    return A.softmax(x, axis)


def log_softmax(x, axis=None):
    """scipy.special.log_softmax: x - logsumexp(x) over axis, all of x by default (SciPy's default). As SciPy's,
    it shifts by a finite max only, so a row holding +inf is NaN there and -inf at -inf (sg.log_softmax: NaN)."""
    return A.subtract(x, A.logsumexp(x, axis, keepdims=True))


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    """log(sum(b * exp(a))) over axis without overflow, as scipy.special.logsumexp: terms with b == 0
    are left out (even where a is inf); return_sign=True gives (log|sum|, sign(sum)), else a negative
    sum gives NaN."""
    if not return_sign:
        return _weighted_logsumexp(a, axis, b, keepdims, "value")
    return _weighted_logsumexp(a, axis, b, keepdims, "log_abs"), _weighted_logsumexp(a, axis, b, keepdims, "sign")


@dispatch_all_arguments
def _weighted_logsumexp(a, axis, b, keepdims, part):
    """One array of logsumexp: its value, log|sum| or sign(sum) (an eager plan replays one array)."""
    if b is None and part == "value":
        return A.logsumexp(a, axis, keepdims)
    a = A.asarray(a)
    if b is not None:
        b = A.asarray(b)
        dtype = dtypes.float_result(dtypes.promote([a.dtype, b.dtype]))
        a, b = A.astype(a, dtype), A.astype(b, dtype)
        shape = E.broadcast_shapes(a.shape, b.shape)
        a, b = A.broadcast_to(a, shape), A.broadcast_to(b, shape)
        a = E.where(E.equal(b, 0), -math.inf, a)  # a left-out term: no inf * 0 in the sum, no effect on the max
    elif not dtypes.is_float(a.dtype):
        a = A.astype(a, dtypes.FLOAT64)
    axes = A._axes(axis, a.ndim)
    terms, shift = A._exp_shifted(a, axes)
    total = A.sum(terms if b is None else E.multiply(b, terms), axes, keepdims=True)
    if part == "sign":
        result = A.stop_gradient(E.sign(total))
    else:
        result = E.add(E.log(total if part == "value" else E.abs(total)), shift)
    return result if keepdims else A.squeeze(result, axes)
