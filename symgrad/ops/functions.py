"""SymPy functions with numerically stable evaluation and a stated derivative.

SymPy would rewrite sigmoid as 1/(1 + exp(-x)) and log1p as log(1 + x), which overflow or
lose precision; as opaque Functions they survive differentiation and fusion, and each
backend evaluates them stably (e.g. sigmoid(x) = exp(x)/(1 + exp(x)) for negative x).
"""
import mpmath
import numpy as np
import sympy as sp
from sympy.logic.boolalg import BooleanFunction


class _RealFunction(sp.Function):
    def _eval_is_real(self):
        return all(arg.is_real for arg in self.args) or None


class sigmoid(_RealFunction):
    """1 / (1 + exp(-x))."""

    nargs = 1

    def fdiff(self, argindex=1):
        # s (1 - s), PyTorch's form: it cancels against a rounded 1 - s of the forward (log(1 - s),
        # binary_cross_entropy's p (1 - p)), where s(x) s(-x) would divide by it. For large x it is 0
        # (1 - s rounds to 0), not the tiny s(-x): absolute error below an ulp of s, as PyTorch's.
        s = sigmoid(self.args[0])
        return s * (1 - s)

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


class _LogOfBase(_RealFunction):
    """The logarithm to a fixed base (`radix`), a function of its own: log(x) / log(radix) is not exact at the
    radix's powers (2.9999999999999996 at 1000 for 10; 441 of float64's powers of two), so floor(log10(x)) and
    comparisons with an integer gave other answers than NumPy's."""

    nargs = 1
    radix = None

    def fdiff(self, argindex=1):
        return 1 / (self.args[0] * sp.log(self.radix))


class log2(_LogOfBase):
    """The base-2 logarithm (np.log2)."""

    radix = 2


class log10(_LogOfBase):
    """The base-10 logarithm (np.log10)."""

    radix = 10


class expm1(_RealFunction):
    """exp(x) - 1, accurate for small x."""

    nargs = 1

    def fdiff(self, argindex=1):
        # y + 1, PyTorch's and JAX's form: the derivative reads the output (NumPy writing a from_numpy input between
        # forward and backward moves no gradient, as in PyTorch); off by below an ulp of 1 where y rounds near -1
        return self + 1

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


# ----------------------------------------------------------------------------- scipy.special's delicate functions
# An `evaluation()` is the value as an expression of functions every backend lowers (the printers
# print it in place of the function); functions without one are evaluated by scipy.special (special.py).

class ndtr(_RealFunction):
    """The standard normal CDF, erfc(-x/sqrt(2))/2, by scipy.special.ndtr: SymPy would rewrite
    erfc(-z) as 2 - erfc(z), which cancels to 0 in the lower tail."""

    nargs = 1

    def fdiff(self, argindex=1):
        x = self.args[0]
        return sp.exp(-x ** 2 / 2) / sp.sqrt(2 * sp.pi)

    @classmethod
    def eval(cls, x):
        if x.is_Number:
            return sp.erfc(-x / sp.sqrt(2)) / 2
        return None


class log_ndtr(_RealFunction):
    """log(ndtr(x)), by scipy.special.log_ndtr: finite far into the lower tail, where ndtr underflows.
    Its derivative pdf/cdf is exp(-x**2/2 - log_ndtr(x))/sqrt(2*pi), which neither overflows nor is 0/0."""

    nargs = 1

    def fdiff(self, argindex=1):
        x = self.args[0]
        return sp.exp(-x ** 2 / 2 - self) / sp.sqrt(2 * sp.pi)

    @classmethod
    def eval(cls, x):
        if x.is_Number:
            return sp.log(sp.erfc(-x / sp.sqrt(2)) / 2)
        return None


class _XLogFunction(_RealFunction):
    """x * log_fn(y), 0 where x == 0 and y is not NaN (scipy.special's convention).

    Derivatives as torch.special's: d/dx = log_fn(y), but 0 where x == 0 and y is at or past log_fn's
    pole; d/dy = x * log_fn'(y), but 0 where x == 0 (the function is 0 for every y there; torch's
    x/y gives NaN at (0, 0))."""

    nargs = 2

    def fdiff(self, argindex=1):
        x, y = self.args
        if argindex == 1:
            return sp.Piecewise((0, sp.And(sp.Eq(x, 0), y <= self.pole)), (self.log_fn(y), True))
        return sp.Piecewise((0, sp.Eq(x, 0)), (x * sp.diff(self.log_fn(y), y), True))

    @classmethod
    def eval(cls, x, y):
        if x.is_zero and y.is_Number and y is not sp.nan:
            return sp.S.Zero
        return None

    def evaluation(self):
        x, y = self.args
        # Abs(y) >= 0 is false only for NaN, which then gives 0 * NaN = NaN (unevaluated: SymPy's y is finite,
        # and a constant folded in for x or y must not become 0 or complex infinity)
        keeps_zero = sp.And(sp.Eq(x, 0), sp.GreaterThan(sp.Abs(y), 0, evaluate=False), evaluate=False)
        return sp.Piecewise((0, keeps_zero), (sp.Mul(x, self.log_fn(y), evaluate=False), True), evaluate=False)


class xlogy(_XLogFunction):
    """x * log(y), 0 at x == 0."""

    pole = 0

    @staticmethod
    def log_fn(y):  # unevaluated: a constant 0 folded in for y gives log(0) = -inf, not complex infinity
        return sp.log(y, evaluate=False)


class xlog1py(_XLogFunction):
    """x * log1p(y), 0 at x == 0."""

    pole = -1

    @staticmethod
    def log_fn(y):
        return log1p(y, evaluate=False)


class betaln(_RealFunction):
    """log|B(a, b)|, by scipy.special.betaln: loggamma(a) + loggamma(b) - loggamma(a + b) cancels for large
    arguments and is inf - inf where one is infinite."""

    nargs = 2

    def fdiff(self, argindex=1):
        a, b = self.args
        return sp.polygamma(0, self.args[argindex - 1]) - sp.polygamma(0, a + b)

    @classmethod
    def eval(cls, a, b):
        if a.is_Number and b.is_Number:
            return sp.loggamma(a) + sp.loggamma(b) - sp.loggamma(a + b)
        return None


# ----------------------------------------------------------------------------- regularized incomplete integrals

class no_derivative(_RealFunction):
    """The derivative of `function` in its argument `index` (1-based), which has no closed form (an
    incomplete gamma's in its shape). No backend lowers it: a program that needs it fails with an error
    saying so; one that does not (that argument a constant) drops it before lowering."""

    nargs = 2

    def _eval_is_real(self):
        return True


class gammainc(_RealFunction):
    """The regularized lower incomplete gamma function P(a, x), by scipy.special.gammainc."""

    argument_names = ("a", "x")
    nargs = 2

    def fdiff(self, argindex=1):
        a, x = self.args
        if argindex == 1:
            return no_derivative(self, 1)
        return sp.exp(xlogy(a - 1, x) - x - sp.loggamma(a))


class gammaincc(_RealFunction):
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x), by scipy.special.gammaincc."""

    argument_names = ("a", "x")
    nargs = 2

    def fdiff(self, argindex=1):
        if argindex == 1:
            return no_derivative(self, 1)
        return -gammainc(*self.args).fdiff(2)  # Q = 1 - P


class betainc(_RealFunction):
    """The regularized incomplete beta function I_x(a, b), by scipy.special.betainc."""

    argument_names = ("a", "b", "x")
    nargs = 3

    def fdiff(self, argindex=1):
        a, b, x = self.args
        if argindex < 3:
            return no_derivative(self, argindex)
        return sp.exp(xlogy(a - 1, x) + xlog1py(b - 1, -x) - betaln(a, b))


class stdtr(_RealFunction):
    """Student's t CDF with df degrees of freedom at t, by scipy.special.stdtr."""

    argument_names = ("df", "t")
    nargs = 2

    def fdiff(self, argindex=1):
        df, t = self.args
        if argindex == 1:
            return no_derivative(self, 1)
        return sp.exp(sp.loggamma((df + 1) / 2) - sp.loggamma(df / 2) - sp.log(df * sp.pi) / 2
                      - (df + 1) / 2 * log1p(t ** 2 / df))


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


# ----------------------------------------------------------------------------- NumPy's other elementwise functions

class cbrt(_RealFunction):
    """The real cube root (np.cbrt): |x|**(1/3) refined by a Newton step (1/3 is not a float, so the power
    alone is off by some ulp), with x's sign; x itself at +-0 and +-inf (keeping the zero's sign)."""

    nargs = 1

    def fdiff(self, argindex=1):
        return 1 / (3 * self ** 2)

    def evaluation(self):
        x = self.args[0]
        power = sp.Pow(sp.Abs(x), sp.Rational(1, 3), evaluate=False)
        # -x and x rather than |x| in the step: SymPy would merge |x| / |x|**(2/3) back into the power
        below, above = (power - (power - magnitude / (power * power)) / 3 for magnitude in (-x, x))
        unchanged = sp.Or(sp.Eq(x, 0, evaluate=False), isinf(x), evaluate=False)
        return sp.Piecewise((x, unchanged), (-below, x < 0), (above, True), evaluate=False)


class fmod(_RealFunction):
    """C's fmod (np.fmod): the remainder of a / b with the sign of a, exact. floor_mod of operands of one sign
    (a and -|b| when a < 0, -a and -|b| otherwise) is exact (no sign crossing to correct) and negates no negative
    integer (-(-2**63) wraps); a zero a is returned as it is (-0 stays -0); NaN when b == 0 (0 for integers).
    Derivatives as torch.fmod's: 1 in a, -trunc(a / b) in b (infinite at an infinite a)."""

    nargs = 2

    def fdiff(self, argindex=1):
        if argindex == 1:
            return sp.S.One
        a, b = sp.Abs(self.args[0]), sp.Abs(self.args[1])
        # (an infinite a: NumPy's inf // b is NaN, torch's trunc(inf / b) inf)
        quotient = sp.Piecewise((a / b, isinf(self.args[0])), (floor_divide(a, b), True), evaluate=False)
        return -sp.sign(self.args[0]) * sp.sign(self.args[1]) * quotient

    def evaluation(self):
        a, b = self.args
        magnitude = sp.Abs(b)
        zero_a = sp.And(sp.Eq(a, 0, evaluate=False), sp.StrictGreaterThan(magnitude, 0, evaluate=False),
                        evaluate=False)
        return sp.Piecewise((a, zero_a), (floor_mod(a, -magnitude), a < 0), (-floor_mod(-a, -magnitude), True),
                            evaluate=False)


class tie(_RealFunction):
    """a, at a tie of a and b (a == b), with derivative 1/2 in each: the bits NumPy's maximum/minimum give
    at a tie, the gradient split evenly as PyTorch's (a + b) / 2 would, which overflows."""

    nargs = 2

    def fdiff(self, argindex=1):
        return sp.S.Half

    def evaluation(self):
        return self.args[0]


class valued(_RealFunction):
    """b's value with a's derivative (1 in a, 0 in b), for a tie of a and b (a == b) where the bits are b's: the
    sign of a zero that NumPy's one-sided clip (the bound's) or PyTorch's relu (the input's) gives; valued(0, x) is
    x's value (a NaN's bits) with derivative 0."""

    nargs = 2

    def fdiff(self, argindex=1):
        return sp.S.One if argindex == 1 else sp.S.Zero

    def evaluation(self):
        return self.args[1]


class relu(_RealFunction):
    """max(x, 0) keeping a NaN's bits and -0.0 (PyTorch's relu), whose derivative reads its output, as PyTorch's
    (threshold_backward of the saved result): NumPy writing a from_numpy input between forward and backward then
    moves no gradient. 1 at a NaN, 0 at zeros."""

    nargs = 1

    def fdiff(self, argindex=1):
        return sp.Piecewise((0, self <= 0), (1, True))

    def evaluation(self):
        a = self.args[0]
        return sp.Piecewise((0, a < 0), (valued(sp.Piecewise((0, a <= 0), (a, True)), a), True))


# ----------------------------------------------------------------------------- bits (integers)

class _Bits(_RealFunction):
    """A function of an integer's bits (NumPy's bitwise ufuncs), computed in its dtype: never differentiated
    (integers have no gradient), derivative 0 for SymPy's sake."""

    def fdiff(self, argindex=1):
        return sp.S.Zero


class bitwise_and(_Bits):
    nargs = 2


class bitwise_or(_Bits):
    nargs = 2


class bitwise_xor(_Bits):
    nargs = 2


class invert(_Bits):
    """~x: every bit flipped (-x - 1 for signed integers, the dtype's top minus x for unsigned ones)."""

    nargs = 1


class left_shift(_Bits):
    """a << b, wrapping in the dtype; 0 where b is negative or not below the dtype's width, as NumPy's."""

    nargs = 2


class right_shift(_Bits):
    """a >> b, arithmetic for signed integers; past the width (or b negative) 0, or -1 for a negative a, as NumPy's."""

    nargs = 2


def signbit(x):
    """Whether x's sign bit is set: below 0, or -0 (1/x is -inf). NaN counts as positive (its sign bit is
    not visible to comparisons). A boolean's is never set (x is then a plain symbol, not a real one)."""
    if not x.is_real:
        return sp.false
    if x.is_Number:  # a Python number written into the expression (SymPy's numbers have no -0)
        return sp.true if x.is_negative else sp.false
    return sp.Or(x < 0, sp.And(sp.Eq(x, 0, evaluate=False), sp.StrictLessThan(1 / x, 0, evaluate=False),
                               evaluate=False), evaluate=False)


def scaled_product(factors, dtype) -> "tuple[float, int, list] | None":
    """(m, e, others) for a product of `factors` whose numbers (and powers of numbers) multiply to a value beyond the
    range of floating `dtype` (above its largest finite number or below its smallest normal one): their product is
    m * 2**e, m in [0.5, 1), and `others` the factors that are not numbers. SymPy folds a product's numbers exactly
    (the gradient of x**2 * 1e308 has the coefficient 2e308), and the printers put numbers first: written as they
    are, they would be inf (or 0) before they meet x, where the program's (2 * x) * 1e308 is finite for small x.
    The printers compute such a product as ldexp(others * m, e). None when there is no such number."""
    numbers = [f for f in factors if f.is_Number or (f.is_Pow and f.base.is_Number and f.exp.is_Integer)]
    if not numbers:
        return None
    with sp.evaluate(True):
        value = sp.Mul(*(sp.Pow(f.base, f.exp) if f.is_Pow else f for f in numbers))
    if not value.is_Number or not value.is_finite or value.is_zero:
        return None
    info = np.finfo(dtype)
    if float(info.tiny) <= abs(float(value)) <= float(info.max):
        return None
    mantissa, exponent = mpmath.frexp(mpmath.mpf(sp.Float(value, 30)._mpf_))
    return float(mantissa), int(exponent), [f for f in factors if not any(f is n for n in numbers)]
