"""SymPy expression -> LLVM IR: the one printer that emits every elementwise op.

`ExprEmitter.emit(expr, values)` walks the expression as SymPy's printers do, by a
`_print_<Class>` method found along the class's MRO (Add, Mul, Pow, Piecewise, relations,
Function...), and calls the IR builder, computing in one numeric type (float or integer)
with booleans as i1. Equal subexpressions are emitted once. Transcendentals go to
symgrad's vectorizable kernels (`mathlib`) when it has them, else to LLVM intrinsics or libm.
"""
from __future__ import annotations

import functools
import math

import sympy as sp
from llvmlite import ir
from sympy.printing.printer import Printer

from symgrad.core import UnsupportedOpError
from symgrad.ops import functions as F
from symgrad.ops import special

from . import callbacks, mathlib
from .types import BOOL, F64

# SymPy functions computed by the libm (or mathlib) function of the same name.
# SymPy function class -> the name of the mathlib or libm function computing it.
_MATH_FUNCTIONS = {function: function.__name__ for function in (
    sp.asin, sp.acos, sp.atan, sp.atan2, sp.asinh, sp.acosh, sp.atanh, sp.sin, sp.cos, sp.tan, sp.sinh, sp.cosh,
    sp.tanh, sp.exp, sp.log, sp.erf, F.log1p, F.expm1, F.hypot, F.log2, F.log10)}
# LLVM intrinsics that vectorize without a vector library.
_INTRINSICS = {"sqrt": "llvm.sqrt", "fabs": "llvm.fabs", "floor": "llvm.floor", "ceil": "llvm.ceil",
               "copysign": "llvm.copysign", "rint": "llvm.rint"}


class ExprEmitter(Printer):
    """Emits SymPy expressions at one numeric type `ty` into `builder` (one per loop body);
    `outlined_math`: transcendentals are calls of functions compiled once (mathlib.math_function);
    `unsigned`: integers compare and divide as unsigned (uint8, uint16)."""

    def __init__(self, builder: ir.IRBuilder, ty: ir.Type, outlined_math: bool = False, unsigned: bool = False):
        super().__init__()
        self.b = builder
        self.ty = ty
        self.outlined_math = outlined_math
        self.unsigned = unsigned
        self.is_float = isinstance(ty, (ir.FloatType, ir.DoubleType))
        self.dtype = "float64" if isinstance(ty, ir.DoubleType) else "float32"  # (read for floating types only)
        self.memo: dict = {}

    def emit(self, expr, values: dict):
        """The value of `expr`; `values` maps each free symbol to an LLVM value (numeric at self.ty, or i1)."""
        self.values = values
        return self._print(expr)

    # ------------------------------------------------------------------ dispatch
    def _print(self, expr, **kwargs):
        """A symbol's value, an equal subexpression's value, or the `_print_<Class>` method's."""
        if expr in self.values:
            return self.values[expr]
        cached = self.memo.get(expr)
        if cached is None:
            cached = super()._print(expr, **kwargs)
            self.memo[expr] = cached
        return cached

    def emptyPrinter(self, expr):
        raise special.unsupported(expr, "LLVM")

    def _print_BooleanTrue(self, expr):
        return ir.Constant(BOOL, 1)

    def _print_BooleanFalse(self, expr):
        return ir.Constant(BOOL, 0)

    def _print_Number(self, expr):  # integers, rationals, floats, infinities and NaN
        return self.number(expr)

    def _print_NumberSymbol(self, expr):  # pi, E, ...
        return self.number(expr)

    def _print_Add(self, expr):
        return self._fold(self.add, [self._print(a) for a in _ordered(expr.args)])

    def _print_Pow(self, expr):
        return self._pow(expr.base, expr.exp)

    def _print_Piecewise(self, expr):
        pieces = list(expr.args)
        if pieces[-1].cond == sp.true:
            result = self._print(pieces.pop().expr)
        else:
            result = self.number(sp.nan) if self.is_float else self.number(0)
        for piece in reversed(pieces):
            result = self.b.select(self._print(piece.cond), self._print(piece.expr), result)
        return result

    def _print_ITE(self, expr):
        cond, then, other = (self._print(a) for a in expr.args)
        return self.b.select(cond, then, other)

    def _print_Relational(self, expr):
        return self.compare(expr.rel_op, self._print(expr.lhs), self._print(expr.rhs))

    def _print_And(self, expr):
        return self._fold(self.b.and_, [self._print(a) for a in _ordered(expr.args)])

    def _print_Or(self, expr):
        return self._fold(self.b.or_, [self._print(a) for a in _ordered(expr.args)])

    def _print_Xor(self, expr):
        return self._fold(self.b.xor, [self._print(a) for a in _ordered(expr.args)])

    def _print_Not(self, expr):
        return self.b.not_(self._print(expr.args[0]))

    def _print_Max(self, expr):
        return self._fold(lambda a, b: self.pick(">", a, b), [self._print(a) for a in _ordered(expr.args)])

    def _print_Min(self, expr):
        return self._fold(lambda a, b: self.pick("<", a, b), [self._print(a) for a in _ordered(expr.args)])

    # ------------------------------------------------------------------ arithmetic
    def number(self, expr):
        if self.is_float:
            return ir.Constant(self.ty, float(expr))
        return ir.Constant(self.ty, int(expr))

    def add(self, a, b):
        return self.b.fadd(a, b) if self.is_float else self.b.add(a, b)

    def sub(self, a, b):
        return self.b.fsub(a, b) if self.is_float else self.b.sub(a, b)

    def mul(self, a, b):
        return self.b.fmul(a, b) if self.is_float else self.b.mul(a, b)

    def div(self, a, b):
        if self.is_float:
            return self.b.fdiv(a, b)
        return self.b.udiv(a, b) if self.unsigned else self.b.sdiv(a, b)

    def neg(self, a):
        return self.b.fneg(a) if self.is_float else self.b.neg(a)

    def compare(self, op, a, b):
        if a.type == BOOL:
            return self.b.icmp_unsigned(op, a, b)
        if self.is_float:  # ordered comparisons are false with NaN; != is true, as in NumPy
            return self.b.fcmp_unordered(op, a, b) if op == "!=" else self.b.fcmp_ordered(op, a, b)
        return self.b.icmp_unsigned(op, a, b) if self.unsigned else self.b.icmp_signed(op, a, b)

    def pick(self, op, a, b):
        """a if a <op> b else b, propagating NaN like np.maximum/np.minimum."""
        chosen = self.b.select(self.compare(op, a, b), a, b)
        if not self.is_float:
            return chosen
        return self.b.select(self.b.fcmp_unordered("uno", a, a), a, chosen)

    def _fold(self, op, values):
        result = values[0]
        for value in values[1:]:
            result = op(result, value)
        return result

    def _print_Mul(self, expr):
        scaled = F.scaled_product(expr.args, self.dtype) if self.is_float else None
        if scaled is not None:  # numbers multiplying beyond the type's range: (the others * m) * 2**e
            mantissa, exponent, others = scaled
            with sp.evaluate(False):
                return self._times_power_of_two(self._print(sp.Mul(sp.Float(mantissa), *others)), exponent)
        coeff, factors = expr.as_coeff_mul()
        numerator, denominator = [], []
        for factor in _ordered(factors):
            base, exp = factor.as_base_exp()
            if exp.is_Number and exp.is_negative and self.is_float:
                denominator.append(self._pow(base, -exp))
            else:
                numerator.append(self._print(factor))
        negated = coeff == -1 and bool(numerator)
        if negated:
            numerator[0] = self.neg(numerator[0])
        elif coeff != 1 and not denominator:
            numerator.insert(0, self.number(coeff))
        result = self._fold(self.mul, numerator) if numerator else self.number(1)
        if denominator:
            # the coefficient last: x/(3*y**2) as (x / y**2) * (1/3); (x/3) / y**2 rounded a subnormal x/3
            # (cbrt's Newton step made cbrt(5e-324) 2/3 of its value)
            result = self.div(result, self._fold(self.mul, denominator))
            if coeff != 1 and not negated:
                result = self.mul(result, self.number(coeff))
        return result

    def _times_power_of_two(self, x, exponent: int):
        """x * 2**exponent, by factors 2**k each the type holds (|k| <= 100: float32's too), so only the last
        product can overflow or leave the normal range, as one product by the whole power would."""
        while exponent:
            step = max(-100, min(100, exponent))
            x = self.mul(x, self.number(2.0 ** step))
            exponent -= step
        return x

    def _pow(self, base, exp):
        if exp.is_Float and float(2 * exp).is_integer():  # x**0.5 is sqrt, x**2.0 a product
            exp = sp.Rational(int(2 * exp), 2)
        if exp.is_Integer:
            return self._integer_power(self._print(base), int(exp))
        if not self.is_float:  # square-and-multiply needs the exponent when the code is built
            raise UnsupportedOpError(
                f"the LLVM backend raises integers only to constant powers, not to {exp} (an integer array): "
                "pass the exponent as a Python int, use astype(float) on the base, or sg.compile(..., backend='numpy')")
        if exp == sp.S.Half:
            return self.intrinsic("sqrt", self._print(base))
        if exp == -sp.S.Half:  # pow's values where 1/sqrt's differ, as NumPy's x ** -0.5: inf at -0, 0 at -inf
            x = self._print(base)
            root = self.add(self.intrinsic("sqrt", x), self.number(0))
            return self.b.select(self.compare("==", x, self.neg(self.number(sp.oo))), self.number(0),
                                 self.div(self.number(1), root))
        if exp.is_Rational and exp.q == 2:  # x**(n/2) = x**n' * sqrt(x), n >= 3 here
            if exp < 0:
                return self.div(self.number(1), self._pow(base, -exp))
            x = self._print(base)
            result = self.mul(self._integer_power(x, (int(exp.p) - 1) // 2), self.intrinsic("sqrt", x))
            # pow's values where sqrt's differ, as the NumPy backend's: (-0)**1.5 is 0, not -0; (-inf)**1.5 inf
            infinity = self.number(sp.oo)
            return self.b.select(self.compare("==", x, self.neg(infinity)), infinity, self.add(result, self.number(0)))
        if base is sp.E:
            return self.math("exp", self._print(exp))
        return self.math("pow", self._print(base), self._print(exp))

    def _integer_power(self, x, n):
        if n < 0:
            return self.div(self.number(1), self._integer_power(x, -n))
        return self.number(1) if n == 0 else mathlib.whole_power(x, n, self.mul)

    # ------------------------------------------------------------------ functions
    def _print_Function(self, expr):
        """The libm/mathlib function of the same name, else SciPy's (the functions below have their own);
        one with an `evaluation()` (symgrad.ops.functions) is that expression."""
        if hasattr(expr, "evaluation"):
            return self._print(expr.evaluation())
        name = _MATH_FUNCTIONS.get(type(expr))
        if name is None:
            return self._scipy(expr)
        return self.math(name, *[self._print(a) for a in expr.args])

    def _print_Abs(self, expr):
        x = self._print(expr.args[0])
        if self.unsigned:
            return x
        return self.intrinsic("fabs", x) if self.is_float else self.pick(">", x, self.neg(x))

    def _print_sign(self, expr):  # NaN stays NaN; -0.0 + 0 gives 0.0, as np.sign and torch.sign
        x = self._print(expr.args[0])
        zero = self.number(0)
        positive = self.b.select(self.compare(">", x, zero), self.number(1), self.add(x, zero))
        return self.b.select(self.compare("<", x, zero), self.number(-1), positive)

    def _print_floor(self, expr):
        x = self._print(expr.args[0])
        return self.intrinsic("floor", x) if self.is_float else x

    def _print_ceiling(self, expr):
        x = self._print(expr.args[0])
        return self.intrinsic("ceil", x) if self.is_float else x

    def _print_rint(self, expr):
        x = self._print(expr.args[0])
        return self.intrinsic("rint", x) if self.is_float else x

    def _print_isnan(self, expr):  # integers and booleans are never NaN
        x = self._print(expr.args[0])
        return self.b.fcmp_unordered("uno", x, x) if _is_float(x) else ir.Constant(BOOL, 0)

    def _print_isinf(self, expr):
        x = self._print(expr.args[0])
        if not _is_float(x):
            return ir.Constant(BOOL, 0)
        return self.b.fcmp_ordered("==", self.intrinsic("fabs", x), self.number(sp.oo))

    def _print_floor_mod(self, expr):
        return self._divmod(*[self._print(a) for a in expr.args])[1]

    def _print_floor_divide(self, expr):
        return self._divmod(*[self._print(a) for a in expr.args])[0]

    def _divmod(self, a, b):
        """(a // b, a % b) as NumPy computes them (npy_divmod): from fmod, the remainder taking b's sign,
        the quotient rounded to the whole number nearest (a - remainder) / b; a / b and NaN when b == 0.
        Integers: 0 and 0 when b == 0, and no trap for b == -1 (LLVM's sdiv/srem are undefined there)."""
        if self.unsigned:  # truncating is flooring, and the remainder has b's sign (none)
            zero, by_zero = self.number(0), self.compare("==", b, self.number(0))
            safe = self.b.select(by_zero, self.number(1), b)
            return (self.b.select(by_zero, zero, self.b.udiv(a, safe)),
                    self.b.select(by_zero, zero, self.b.urem(a, safe)))
        if not self.is_float:
            zero, one = self.number(0), self.number(1)
            minus_one = self.compare("==", b, self.number(-1))
            safe = self.b.select(self.b.or_(self.compare("==", b, zero), minus_one), one, b)
            quotient, remainder = self.b.sdiv(a, safe), self.b.srem(a, safe)
            crosses = self.b.and_(self.compare("!=", remainder, zero),
                                  self.b.icmp_signed("!=", self.compare("<", remainder, zero), self.compare("<", b, zero)))
            remainder = self.b.select(crosses, self.add(remainder, b), remainder)
            quotient = self.b.select(crosses, self.sub(quotient, one), quotient)
            quotient = self.b.select(minus_one, self.neg(a), quotient)
            by_zero = self.compare("==", b, zero)
            return self.b.select(by_zero, zero, quotient), self.b.select(by_zero, zero, remainder)
        zero, one = self.number(0), self.number(1)
        remainder = self.b.frem(a, b)
        quotient = self.div(self.sub(a, remainder), b)
        crosses = self.b.and_(self.b.fcmp_unordered("!=", remainder, zero),
                              self.b.icmp_unsigned("!=", self.compare("<", b, zero), self.compare("<", remainder, zero)))
        remainder = self.b.select(crosses, self.add(remainder, b), remainder)
        quotient = self.b.select(crosses, self.sub(quotient, one), quotient)
        remainder = self.b.select(self.b.fcmp_ordered("==", remainder, zero), self.intrinsic("copysign", zero, b),
                                  remainder)
        floored = self.intrinsic("floor", quotient)
        floored = self.b.select(self.compare(">", self.sub(quotient, floored), self.number(sp.Rational(1, 2))),
                                self.add(floored, one), floored)
        ratio = self.div(a, b)
        floored = self.b.select(self.b.fcmp_ordered("==", quotient, zero), self.intrinsic("copysign", zero, ratio),
                                floored)
        by_zero = self.b.fcmp_ordered("==", b, zero)
        return self.b.select(by_zero, ratio, floored), remainder

    # ------------------------------------------------------------------ bits (integers only)
    def _print_bitwise_and(self, expr):
        return self.b.and_(*[self._print(a) for a in expr.args])

    def _print_bitwise_or(self, expr):
        return self.b.or_(*[self._print(a) for a in expr.args])

    def _print_bitwise_xor(self, expr):
        return self.b.xor(*[self._print(a) for a in expr.args])

    def _print_invert(self, expr):
        return self.b.not_(self._print(expr.args[0]))

    def _print_left_shift(self, expr):
        a, n = (self._print(arg) for arg in expr.args)
        return self.b.select(self._shift_inside(n), self.b.shl(a, n), self.number(0))

    def _print_right_shift(self, expr):
        a, n = (self._print(arg) for arg in expr.args)
        if self.unsigned:
            return self.b.select(self._shift_inside(n), self.b.lshr(a, n), self.number(0))
        return self.b.ashr(a, self.b.select(self._shift_inside(n), n, self.number(self.ty.width - 1)))

    def _shift_inside(self, n):
        """Whether a shift count is in [0, width): LLVM's shifts past it are poison; NumPy's give 0 (or the sign),
        and a negative count, compared unsigned, is past it."""
        return self.b.icmp_unsigned("<", n, self.number(self.ty.width))

    def _print_sigmoid(self, expr):
        """1/(1+t) for x >= 0, t/(1+t) below, t = exp(-|x|): exact to a few ulp for every x, no overflow, and
        sigmoid(-x) shares t and 1+t with sigmoid(x) (LLVM computes them once)."""
        x = self._print(expr.args[0])
        t = self.math("exp", self.neg(self.intrinsic("fabs", x)))
        above = self.b.fcmp_ordered(">=", x, self.number(0))
        return self.div(self.b.select(above, self.number(1), t), self.add(self.number(1), t))

    def _print_softplus(self, expr):  # max(x, 0) + log1p(exp(-|x|))
        return self._log_sum_exp(self._print(expr.args[0]), self.number(0))

    def _print_logaddexp(self, expr):
        return self._log_sum_exp(*[self._print(a) for a in expr.args])

    def _scipy(self, expr):
        """A function only SciPy evaluates: a call of its C implementation, in float64 (callbacks)."""
        call = special.scipy_call(expr)
        if call is None or not self.is_float:
            raise special.unsupported(expr, "LLVM")
        if special.scipy_special() is None:
            raise special.missing_scipy(expr, "LLVM")
        if not callbacks.available(call.name, len(call.args)):
            raise special.unsupported(expr, "LLVM", f"scipy.special.{call.name} has no C-level function in "
                                                    "scipy.special.cython_special to call; use backend='numpy'")
        args = [self._to_f64(self._print(a)) for a in call.args]
        result = callbacks.call(self.b, self.b.module, call.name, args)
        if call.coefficient != 1:
            result = self.b.fmul(result, ir.Constant(F64, float(call.coefficient)))
        return result if self.ty == F64 else self.b.fptrunc(result, self.ty)

    def _to_f64(self, value):
        return value if value.type == F64 else self.b.fpext(value, F64)

    def _log_sum_exp(self, a, b):
        """log(exp(a) + exp(b)) = max + log1p(exp(-|a - b|)); equal infinities give themselves."""
        larger = self.b.select(self.compare(">", a, b), a, b)
        gap = self.intrinsic("fabs", self.sub(a, b))
        result = self.add(larger, self.math("log1p", self.math("exp", self.neg(gap))))
        tied = self.add(a, self.number(math.log(2.0)))
        return self.b.select(self.compare("==", a, b), tied, result)

    def intrinsic(self, name, *args):
        fnty = ir.FunctionType(self.ty, [self.ty] * len(args))
        fn = self.b.module.declare_intrinsic(_INTRINSICS[name], [self.ty], fnty)
        return self.b.call(fn, args)

    def math(self, name, *args):
        """A transcendental: symgrad's vectorizable kernel if it has one, else libm."""
        if not self.is_float:
            raise NotImplementedError(f"{name} of an integer type")
        if name in mathlib.NAMES:
            return self.b.call(mathlib.math_function(self.b.module, name, self.ty, self.outlined_math), args)
        return self.b.call(mathlib.libm_function(self.b.module, name, self.ty), args)


def _is_float(value) -> bool:
    return isinstance(value.type, (ir.FloatType, ir.DoubleType))


def _ordered(args):
    """SymPy's args in a deterministic order (so identical graphs give identical IR text)."""
    return sorted(args, key=_order_key)


@functools.lru_cache(maxsize=1 << 16)
def _order_key(expr) -> tuple:
    """A key of expr's structure alone (its class, then its atoms' text or its arguments' keys), made once per
    subexpression: SymPy's default_sort_key orders an Add's terms again at every level it is asked for, which in
    a sum of a thousand terms was most of the kernel's emission."""
    if not expr.args:
        return (0, type(expr).__name__, str(expr))
    return (1, type(expr).__name__, len(expr.args), tuple(_order_key(a) for a in expr.args))
