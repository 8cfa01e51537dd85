"""SymPy functions with numerically stable evaluation and a stated derivative.

SymPy would rewrite sigmoid as 1/(1 + exp(-x)) and log1p as log(1 + x), which overflow or
lose precision; as opaque Functions they survive differentiation and fusion, and each
backend evaluates them stably (e.g. sigmoid(x) = exp(-logaddexp(0, -x))).
"""
import sympy as sp
from sympy.logic.boolalg import BooleanFunction


class _RealFunction(sp.Function):
    def _eval_is_real(self):
        return all(arg.is_real for arg in self.args) or None


class sigmoid(_RealFunction):
    """1 / (1 + exp(-x))."""

    nargs = 1

    def fdiff(self, argindex=1):
        # sigmoid(x) * sigmoid(-x), not s * (1 - s): 1 - s cancels to 0 for large x
        return sigmoid(self.args[0]) * sigmoid(-self.args[0])

    @classmethod
    def eval(cls, x):
        if x.is_Number:
            return 1 / (1 + sp.exp(-x))
        return None


class softplus(_RealFunction):
    """log(1 + exp(x))."""

    nargs = 1

    def fdiff(self, argindex=1):
        return sigmoid(self.args[0])

    @classmethod
    def eval(cls, x):
        if x.is_Number:
            return sp.log(1 + sp.exp(x))
        return None


class log1p(_RealFunction):
    """log(1 + x), accurate for small x."""

    nargs = 1

    def fdiff(self, argindex=1):
        return 1 / (1 + self.args[0])

    @classmethod
    def eval(cls, x):
        if x.is_Number:
            return sp.log(1 + x)
        return None


class expm1(_RealFunction):
    """exp(x) - 1, accurate for small x."""

    nargs = 1

    def fdiff(self, argindex=1):
        return sp.exp(self.args[0])

    @classmethod
    def eval(cls, x):
        if x.is_Number:
            return sp.exp(x) - 1
        return None


class logaddexp(_RealFunction):
    """log(exp(a) + exp(b)) without overflow."""

    nargs = 2

    def fdiff(self, argindex=1):
        # sigmoid(a - b), not exp(a - logaddexp(a, b)): for large a == b the output rounds to a
        # (a + log 2 == a) and the latter gives 1 instead of 1/2
        this, other = self.args if argindex == 1 else self.args[::-1]
        return sigmoid(this - other)

    @classmethod
    def eval(cls, a, b):
        if a.is_Number and b.is_Number:
            return sp.log(sp.exp(a) + sp.exp(b))
        return None


STABLE_FUNCTIONS = (sigmoid, softplus, log1p, expm1, logaddexp)


class variable_power(_RealFunction):
    """base**exponent with a varying exponent, only while differentiating (then Pow again).

    SymPy's d/dx x**y = y*x**y/x and d/dy = x**y*log(x) are NaN at x = 0 (0/0, 0*-inf);
    these are PyTorch's conventions: d/dx is 0 where y == 0, d/dy is 0 where x == 0 <= y.
    """

    nargs = 2

    def fdiff(self, argindex=1):
        base, exponent = self.args
        if argindex == 1:
            return sp.Piecewise((0, sp.Eq(exponent, 0)), (exponent * variable_power(base, exponent - 1), True))
        log_base = sp.S.NegativeInfinity if base.is_zero else sp.log(base)
        return sp.Piecewise((0, sp.And(sp.Eq(base, 0), exponent >= 0)), (self * log_base, True))

    @classmethod
    def eval(cls, base, exponent):
        if not exponent.free_symbols:
            return base ** exponent
        return None


def mark_variable_powers(expr):
    """expr with every power whose exponent varies written as `variable_power`, so that
    sympy.diff uses its rules and subs cannot split x**(y - 1) into x**y/x (NaN at 0)."""
    return expr.replace(lambda e: e.is_Pow and bool(e.exp.free_symbols), lambda e: variable_power(*e.args))


def unmark_variable_powers(expr):
    return expr.replace(variable_power, lambda base, exponent: base ** exponent)


# ----------------------------------------------------------------------------- rounding and division

class _PiecewiseConstant(_RealFunction):
    """A function constant between its jumps: derivative 0 almost everywhere (PyTorch's and JAX's convention)."""

    def fdiff(self, argindex=1):
        return sp.S.Zero


class rint(_PiecewiseConstant):
    """x rounded to the nearest integer, ties to even (np.rint, np.round)."""

    nargs = 1

    @classmethod
    def eval(cls, x):
        if x.is_Integer:
            return x
        return None


class floor_divide(_PiecewiseConstant):
    """floor(a / b) as NumPy computes it (from fmod, so a // b == (a - a % b) / b exactly); a / b when b == 0."""

    nargs = 2

    @classmethod
    def eval(cls, a, b):
        if a.is_Integer and b.is_Integer and b != 0:
            return a // b
        return None


class floor_mod(_RealFunction):
    """a - b * floor(a / b) with the sign of b, as np.mod and Python's %; NaN when b == 0 (0 for integers).

    Derivatives as autograd's and JAX's: 1 in a, -floor(a / b) in b."""

    nargs = 2

    def fdiff(self, argindex=1):
        return sp.S.One if argindex == 1 else -floor_divide(*self.args)

    @classmethod
    def eval(cls, a, b):
        if a.is_Integer and b.is_Integer and b != 0:
            return a % b
        return None


class hypot(_RealFunction):
    """sqrt(a**2 + b**2) without overflow or underflow (libm's hypot)."""

    nargs = 2

    def fdiff(self, argindex=1):
        return self.args[argindex - 1] / self


# ----------------------------------------------------------------------------- IEEE classes (truth values)

class isnan(BooleanFunction):
    """Whether x is NaN: a truth value SymPy cannot fold, since its real symbols are finite numbers."""

    nargs = 1

    @classmethod
    def eval(cls, x):
        if x.is_Number:
            return sp.true if x is sp.nan else sp.false
        return None


class isinf(BooleanFunction):
    """Whether x is +inf or -inf (a truth value SymPy cannot fold, as isnan)."""

    nargs = 1

    @classmethod
    def eval(cls, x):
        if x.is_Number:
            return sp.true if x in (sp.oo, -sp.oo) else sp.false
        return None
