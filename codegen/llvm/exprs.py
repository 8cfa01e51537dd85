"""SymPy expression -> LLVM IR: the one printer that emits every elementwise op.

`ExprEmitter.emit(expr, values)` walks Add/Mul/Pow/Function/Piecewise/relations and calls
the IR builder, computing in one numeric type (float or integer) with booleans as i1.
Equal subexpressions are emitted once. Transcendentals go to symgrad's vectorizable
kernels (`mathlib`) when it has them, else to LLVM intrinsics or libm.
"""
from __future__ import annotations

import math

import sympy as sp
from llvmlite import ir

from symgrad.ops import functions as F
from symgrad.core import UnsupportedOpError
from symgrad.ops import special

from . import callbacks, mathlib
from .types import BOOL, F64

_RELATIONS = {"<": "<", "<=": "<=", ">": ">", ">=": ">=", "==": "==", "!=": "!="}
_SYMPY_NAMES = {"asin": "asin", "acos": "acos", "atan": "atan", "atan2": "atan2", "asinh": "asinh",
                "acosh": "acosh", "atanh": "atanh", "sin": "sin", "cos": "cos", "tan": "tan", "sinh": "sinh",
                "cosh": "cosh", "tanh": "tanh", "exp": "exp", "log": "log", "erf": "erf",
                "log1p": "log1p", "expm1": "expm1"}
# Functions `_function` lowers with rules of its own (the rest: _SYMPY_NAMES, else SciPy).
_OWN_RULES = (sp.Abs, sp.sign, sp.floor, sp.ceiling, F.sigmoid, F.softplus, F.logaddexp)
# LLVM intrinsics that vectorize without a vector library.
_INTRINSICS = {"sqrt": "llvm.sqrt", "fabs": "llvm.fabs", "floor": "llvm.floor", "ceil": "llvm.ceil",
               "copysign": "llvm.copysign"}


class ExprEmitter:
    """Emits SymPy expressions at one numeric type `ty` into `builder` (one per loop body)."""

    def __init__(self, builder: ir.IRBuilder, ty: ir.Type):
        self.b = builder
        self.ty = ty
        self.is_float = isinstance(ty, (ir.FloatType, ir.DoubleType))
        self.memo: dict = {}

    def emit(self, expr, values: dict):
        """The value of `expr`; `values` maps each free symbol to an LLVM value (numeric at self.ty, or i1)."""
        self.values = values
        return self._emit(expr)

    # ------------------------------------------------------------------ dispatch
    def _emit(self, expr):
        if expr in self.values:
            return self.values[expr]
        cached = self.memo.get(expr)
        if cached is None:
            cached = self._emit_new(expr)
            self.memo[expr] = cached
        return cached

    def _emit_new(self, expr):
        if expr is sp.true or expr is sp.false:
            return ir.Constant(BOOL, int(bool(expr)))
        if expr.is_Number or expr.is_NumberSymbol or expr in (sp.oo, -sp.oo, sp.nan):
            return self.number(expr)
        if isinstance(expr, sp.Add):
            return self._fold(self.add, [self._emit(a) for a in _ordered(expr.args)])
        if isinstance(expr, sp.Mul):
            return self._mul(expr)
        if isinstance(expr, sp.Pow):
            return self._pow(expr.base, expr.exp)
        if isinstance(expr, sp.Piecewise):
            return self._piecewise(expr.args)
        if isinstance(expr, sp.ITE):
            cond, then, other = (self._emit(a) for a in expr.args)
            return self.b.select(cond, then, other)
        if isinstance(expr, sp.core.relational.Relational):
            return self.compare(expr.rel_op, self._emit(expr.lhs), self._emit(expr.rhs))
        if isinstance(expr, (sp.And, sp.Or, sp.Xor)):
            op = {sp.And: self.b.and_, sp.Or: self.b.or_, sp.Xor: self.b.xor}[type(expr)]
            return self._fold(op, [self._emit(a) for a in _ordered(expr.args)])
        if isinstance(expr, sp.Not):
            return self.b.not_(self._emit(expr.args[0]))
        if isinstance(expr, (sp.Max, sp.Min)):
            pick = ">" if isinstance(expr, sp.Max) else "<"
            return self._fold(lambda a, b: self.pick(pick, a, b), [self._emit(a) for a in _ordered(expr.args)])
        if isinstance(expr, sp.Function):
            return self._function(expr)
        raise special.unsupported(expr, "LLVM")

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
        return self.b.fdiv(a, b) if self.is_float else self.b.sdiv(a, b)

    def neg(self, a):
        return self.b.fneg(a) if self.is_float else self.b.neg(a)

    def compare(self, op, a, b):
        if a.type == BOOL:
            return self.b.icmp_unsigned(op, a, b)
        if self.is_float:  # ordered comparisons are false with NaN; != is true, as in NumPy
            return self.b.fcmp_unordered(op, a, b) if op == "!=" else self.b.fcmp_ordered(op, a, b)
        return self.b.icmp_signed(op, a, b)

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

    def _mul(self, expr):
        coeff, factors = expr.as_coeff_mul()
        numerator, denominator = [], []
        for factor in _ordered(factors):
            base, exp = factor.as_base_exp()
            if exp.is_Number and exp.is_negative and self.is_float:
                denominator.append(self._pow(base, -exp))
            else:
                numerator.append(self._emit(factor))
        if coeff == -1 and numerator:
            numerator[0] = self.neg(numerator[0])
        elif coeff != 1:
            numerator.insert(0, self.number(coeff))
        result = self._fold(self.mul, numerator) if numerator else self.number(1)
        if denominator:
            result = self.div(result, self._fold(self.mul, denominator))
        return result

    def _pow(self, base, exp):
        if exp.is_Float and float(2 * exp).is_integer():  # x**0.5 is sqrt, x**2.0 a product
            exp = sp.Rational(int(2 * exp), 2)
        if exp.is_Integer:
            return self._integer_power(self._emit(base), int(exp))
        if not self.is_float:  # square-and-multiply needs the exponent when the code is built
            raise UnsupportedOpError(
                f"the LLVM backend raises integers only to constant powers, not to {exp} (an integer array): "
                "pass the exponent as a Python int, use astype(float) on the base, or sg.compile(..., backend='numpy')")
        if exp == sp.S.Half:
            return self.intrinsic("sqrt", self._emit(base))
        if exp == -sp.S.Half:
            return self.div(self.number(1), self.intrinsic("sqrt", self._emit(base)))
        if exp.is_Rational and exp.q == 2:  # x**(n/2) = x**n' * sqrt(x)
            root = self.intrinsic("sqrt", self._emit(base))
            whole = self._integer_power(self._emit(base), (int(exp.p) - 1) // 2) if exp.p > 1 else None
            result = root if whole is None else self.mul(whole, root)
            return result if exp > 0 else self.div(self.number(1), self._pow(base, -exp))
        if base is sp.E:
            return self.math("exp", self._emit(exp))
        return self.math("pow", self._emit(base), self._emit(exp))

    def _integer_power(self, x, n):
        if n < 0:
            return self.div(self.number(1), self._integer_power(x, -n))
        return self.number(1) if n == 0 else mathlib.whole_power(x, n, self.mul)

    def _piecewise(self, pieces):
        pieces = list(pieces)
        if pieces[-1].cond == sp.true:
            result = self._emit(pieces.pop().expr)
        else:
            result = self.number(sp.nan) if self.is_float else self.number(0)
        for piece in reversed(pieces):
            result = self.b.select(self._emit(piece.cond), self._emit(piece.expr), result)
        return result

    # ------------------------------------------------------------------ functions
    def _function(self, expr):
        if not isinstance(expr, _OWN_RULES) and type(expr).__name__ not in _SYMPY_NAMES:
            return self._scipy(expr)
        args = [self._emit(a) for a in expr.args]
        if isinstance(expr, sp.Abs):
            return self.intrinsic("fabs", args[0]) if self.is_float else self.pick(">", args[0], self.neg(args[0]))
        if isinstance(expr, sp.sign):  # NaN stays NaN; -0.0 + 0 gives 0.0, as np.sign and torch.sign
            zero = self.number(0)
            positive = self.b.select(self.compare(">", args[0], zero), self.number(1), self.add(args[0], zero))
            return self.b.select(self.compare("<", args[0], zero), self.number(-1), positive)
        if isinstance(expr, sp.floor):
            return self.intrinsic("floor", args[0]) if self.is_float else args[0]
        if isinstance(expr, sp.ceiling):
            return self.intrinsic("ceil", args[0]) if self.is_float else args[0]
        if isinstance(expr, F.sigmoid):  # 1/(1+exp(-x)): exact to a few ulp for every x, no overflow
            return self.div(self.number(1), self.add(self.number(1), self.math("exp", self.neg(args[0]))))
        if isinstance(expr, F.softplus):  # max(x, 0) + log1p(exp(-|x|))
            return self._log_sum_exp(args[0], self.number(0))
        if isinstance(expr, F.logaddexp):
            return self._log_sum_exp(*args)
        return self.math(_SYMPY_NAMES[type(expr).__name__], *args)

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
        args = [self._to_f64(self._emit(a)) for a in call.args]
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
        fn = self.b.module.declare_intrinsic(_INTRINSICS[name], [self.ty])
        return self.b.call(fn, args)

    def math(self, name, *args):
        """A transcendental: symgrad's vectorizable kernel if it has one, else libm."""
        if not self.is_float:
            raise NotImplementedError(f"{name} of an integer type")
        if name in mathlib.NAMES:
            return self.b.call(mathlib.math_function(self.b.module, name, self.ty), args)
        return self.b.call(_libm(self.b.module, name, self.ty), args)


def _libm(module, name, ty):
    symbol = name + ("f" if isinstance(ty, ir.FloatType) else "")
    existing = module.globals.get(symbol)
    if existing is not None:
        return existing
    arity = 2 if name in ("atan2", "pow") else 1
    return ir.Function(module, ir.FunctionType(ty, [ty] * arity), symbol)


def _ordered(args):
    """SymPy's args in a deterministic order (so identical graphs give identical IR text)."""
    return sorted(args, key=sp.default_sort_key)
