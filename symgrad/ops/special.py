"""SymPy functions the backends evaluate through SciPy, and the error for those no backend lowers.

Both backends lower the functions of symgrad's namespace themselves. A user op
(`sg.elementwise`) may use any SymPy function; where `scipy.special` evaluates one
(loggamma -> gammaln, besselj -> jv, ...), `scipy_call` says which SciPy function computes
it, so the NumPy backend prints a call of it and the LLVM backend calls its C
implementation. Anything else raises `UnsupportedOpError` when the graph is lowered,
naming the op, the SymPy function and the backend.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import sympy as sp

from ..core import UnsupportedOpError
from . import functions as F
from .elementwise_registry import ops_using


@dataclass(frozen=True)
class ScipyCall:
    """`coefficient * scipy.special.<name>(*args)`, args being SymPy expressions."""
    name: str
    args: tuple
    coefficient: int = 1


# SymPy function -> the scipy.special function equal to it on real arguments, argument for argument.
# loggamma is log|gamma| (gammaln), as torch.lgamma and jax.scipy.special.gammaln: SymPy's own
# loggamma is complex for negative non-integers, where SciPy's real loggamma gives NaN.
SCIPY_NAMES = {
    sp.loggamma: "gammaln", sp.gamma: "gamma", sp.erfc: "erfc", sp.erfinv: "erfinv", sp.erfcinv: "erfcinv",
    sp.besselj: "jv", sp.bessely: "yv", sp.besseli: "iv", sp.besselk: "kv", sp.beta: "beta", sp.Ei: "expi",
    sp.zeta: "zeta", F.ndtr: "ndtr", F.log_ndtr: "log_ndtr", F.betaln: "betaln", F.gammainc: "gammainc",
    F.gammaincc: "gammaincc", F.betainc: "betainc", F.stdtr: "stdtr",
}


def scipy_call(expr) -> ScipyCall | None:
    """The SciPy call computing the SymPy function application `expr`, or None if there is none."""
    if isinstance(expr, sp.polygamma):  # digamma is polygamma(0, x); higher orders via Hurwitz zeta
        order, x = expr.args
        if not (order.is_Integer and order >= 0):
            return None
        n = int(order)
        if n == 0:
            return ScipyCall("psi", (x,))
        return ScipyCall("zeta", (sp.Integer(n + 1), x), (-1) ** (n + 1) * math.factorial(n))
    if isinstance(expr, sp.expint):  # E_n(x) for a whole order n: scipy's expn
        order, x = expr.args
        return ScipyCall("expn", (order, x)) if order.is_Integer and order >= 0 else None
    name = SCIPY_NAMES.get(type(expr))
    if name is None or (isinstance(expr, sp.beta) and len(expr.args) != 2):
        return None
    return ScipyCall(name, tuple(expr.args))


def scipy_special():
    """The `scipy.special` module, or None when SciPy is not installed (it is an optional extra)."""
    try:
        import scipy.special
    except ImportError:
        return None
    return scipy.special


def unsupported(function, backend: str, reason: str | None = None) -> UnsupportedOpError:
    """The error for a SymPy function application `function` that `backend` cannot lower."""
    if isinstance(function, F.no_derivative):
        return _no_derivative(function, backend)
    kind = type(function).__name__
    ops = ops_using(type(function))
    where = (f"the elementwise op {' / '.join(repr(o) for o in ops)} uses" if ops
             else "an elementwise expression uses")
    if reason is None:
        reason = (f"the {backend} backend has no rule for it and scipy.special has no equivalent. "
                  "Write the op with functions symgrad lowers (exp, log, sin, erf, floor, Piecewise, ..., "
                  "and with SciPy installed: " + ", ".join(sorted(c.__name__ for c in (*SCIPY_NAMES, sp.polygamma, sp.expint)))
                  + "), or compute it outside the traced function")
    return UnsupportedOpError(f"{where} the SymPy function {kind} ({function}), which the {backend} backend "
                              f"cannot lower: {reason}")


def missing_scipy(function, backend: str) -> UnsupportedOpError:
    """The error for a function only SciPy evaluates, in a process without SciPy."""
    return unsupported(function, backend, f"it is evaluated by scipy.special.{scipy_call(function).name}, and "
                                          "SciPy is not installed: pip install scipy (or symgrad[scipy])")


def not_standalone(scipy_names) -> UnsupportedOpError:
    """The error for an ahead-of-time library that would call the SciPy functions `scipy_names`."""
    classes = [c for c, name in SCIPY_NAMES.items() if name in scipy_names]
    classes += [c for c, name in ((sp.polygamma, "psi"), (sp.expint, "expn")) if name in scipy_names]
    ops = sorted({name for c in classes for name in ops_using(c)})
    where = f"the elementwise op {' / '.join(repr(o) for o in ops)} uses" if ops else "the graph uses"
    called = ", ".join(f"scipy.special.{name}" for name in scipy_names)
    return UnsupportedOpError(f"{where} {called}, which the LLVM backend calls in SciPy's C code; an ahead-of-time "
                              "library needs only libc and libm, so it cannot. Compile this artifact with "
                              "backend='numpy' (its module imports scipy.special), or use sg.compile")


def _no_derivative(marker, backend: str) -> UnsupportedOpError:
    """The error for a derivative with no closed form that a program needs."""
    function, index = marker.args
    name = type(function).__name__
    argument = type(function).argument_names[int(index) - 1]
    return UnsupportedOpError(f"the derivative of {name}({', '.join(type(function).argument_names)}) in {argument} has "
                              f"no closed form, so the {backend} backend cannot compute it: differentiate only in the "
                              f"other arguments (pass {argument} as a constant, or through sg.stop_gradient)")
