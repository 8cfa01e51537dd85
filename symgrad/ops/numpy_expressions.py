"""SymPy expression -> NumPy source: what every elementwise op means, on arrays.

An elementwise op's reference implementation (its `impl`, which eager evaluation runs) is
its expression printed by `NumpyExprPrinter` and compiled once; the NumPy backend prints
the same expressions into the modules it generates, so both agree by construction.
"""
from __future__ import annotations

import collections
import functools
import math

import numpy as np
import sympy as sp
from sympy.printing.str import StrPrinter

from .. import dtypes
from . import functions as F
from . import special

# SymPy function class -> the NumPy function (or helper of the generated module) evaluating it.
_FUNCTIONS = {
    sp.sin: "np.sin", sp.cos: "np.cos", sp.tan: "np.tan", sp.sinh: "np.sinh", sp.cosh: "np.cosh",
    sp.tanh: "np.tanh", sp.asin: "np.arcsin", sp.acos: "np.arccos", sp.atan: "np.arctan",
    sp.atan2: "np.arctan2", sp.exp: "np.exp", sp.log: "np.log", sp.Abs: "np.abs", sp.sign: "np.sign",
    F.log1p: "np.log1p", F.expm1: "np.expm1", F.logaddexp: "np.logaddexp", sp.erf: "_erf",
    sp.asinh: "np.arcsinh", sp.acosh: "np.arccosh", sp.atanh: "np.arctanh", sp.floor: "np.floor",
    sp.ceiling: "np.ceil", F.rint: "np.rint", F.floor_divide: "np.floor_divide", F.floor_mod: "np.mod",
    F.hypot: "np.hypot", F.sigmoid: "_sigmoid", F.log2: "np.log2", F.log10: "np.log10", F.cbrt: "np.cbrt",
    F.bitwise_and: "np.bitwise_and", F.bitwise_or: "np.bitwise_or", F.bitwise_xor: "np.bitwise_xor",
    F.invert: "np.invert", F.left_shift: "np.left_shift", F.right_shift: "np.right_shift",
}

# Helpers the generated source defines when it uses them, so a module stays standalone.
HELPERS = {
    "_special": "import scipy.special as _special\n",
    "_sigmoid": '''\
def _sigmoid(x):
    """1/(1 + exp(-x)) for x >= 0, exp(x)/(1 + exp(x)) below: a few ulp for every x, no overflow."""
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))
''',
    "_erf": '''\
def _erf(x):
    """erf, vectorized: W. J. Cody's rational approximations (Math. Comp. 1969), ~1e-16 relative.

    Computes in float64 and casts back to float32/float16 inputs' dtype; erf(+-inf) = +-1, erf(nan) = nan.
    """
    x = np.asarray(x)
    out_dtype = x.dtype if x.dtype in (np.float32, np.float16) else np.float64
    x = x.astype(np.float64)
    y = np.abs(x)
    result = np.array(x)  # nan stays nan
    small = y < 0.46875
    mid = (y >= 0.46875) & (y <= 4.0)
    large = y > 4.0
    # |x| < 0.46875: erf(x) = x * R(x**2)
    xs = x[small]
    z = xs * xs
    num = 1.85777706184603153e-1 * z
    den = z
    for a, b in ((3.16112374387056560e00, 2.36012909523441209e01), (1.13864154151050156e02, 2.44024637934444173e02),
                 (3.77485237685302021e02, 1.28261652607737228e03)):
        num = (num + a) * z
        den = (den + b) * z
    result[small] = xs * (num + 3.20937758913846947e03) / (den + 2.84423683343917062e03)
    # 0.46875 <= |x| <= 4: erfc(|x|) = exp(-x**2) * R(|x|)
    t = y[mid]
    num = 2.15311535474403846e-8 * t
    den = t
    for c, d in ((5.64188496988670089e-1, 1.57449261107098347e01), (8.88314979438837594e00, 1.17693950891312499e02),
                 (6.61191906371416295e01, 5.37181101862009858e02), (2.98635138197400131e02, 1.62138957456669019e03),
                 (8.81952221241769090e02, 3.29079923573345963e03), (1.71204761263407058e03, 4.36261909014324716e03),
                 (2.05107837782607147e03, 3.43936767414372164e03)):
        num = (num + c) * t
        den = (den + d) * t
    s = np.trunc(t * 16.0) / 16.0  # exp(-t*t) = exp(-s*s) * exp(-(t-s)(t+s)), s = t rounded to 1/16: no cancellation
    erfc = np.exp(-s * s) * np.exp(-(t - s) * (t + s)) * (num + 1.23033935479799725e03) / (den + 1.23033935480374942e03)
    result[mid] = np.copysign(1.0 - erfc, x[mid])
    # |x| > 4: erfc(|x|) = exp(-x**2) / |x| * (1/sqrt(pi) - R(1/x**2)); it underflows past ~26.6
    u = np.minimum(y[large], 27.0)
    w = 1.0 / (u * u)
    num = 1.63153871373020978e-2 * w
    den = w
    for p, q in ((3.05326634961232344e-1, 2.56852019228982242e00), (3.60344899949804439e-1, 1.87295284992346725e00),
                 (1.25781726111229246e-1, 5.27905102951428412e-1), (1.60837851487422766e-2, 6.05183413124413191e-2)):
        num = (num + p) * w
        den = (den + q) * w
    s = np.trunc(u * 16.0) / 16.0
    erfc = (np.exp(-s * s) * np.exp(-(u - s) * (u + s))
            * (5.6418958354775628695e-1 - w * (num + 6.58749161529837803e-4) / (den + 2.33520497626869185e-3)) / u)
    result[large] = np.copysign(1.0 - erfc, x[large])
    return result.astype(out_dtype)
''',
}


_INT32_MAX = 2**31 - 1


class NumpyExprPrinter(StrPrinter):
    """Prints a SymPy expression as a NumPy expression over given variable names."""

    def __init__(self, names=None):
        super().__init__()
        self.names = names or {}
        self.helpers = set()
        self.dtype = dtypes.FLOAT64  # the floating type the expression computes in (elementwise_lines sets it)

    def _print_Mul(self, expr):
        """As SymPy's, except that numbers multiplying beyond the dtype's range (the gradient of x**2 * 1e308 has the
        coefficient 2e308) are not written as inf or 0: the product is np.ldexp(others * m, e) (F.scaled_product)."""
        scaled = F.scaled_product(expr.args, self.dtype) if dtypes.is_float(self.dtype) else None
        if scaled is None:
            return super()._print_Mul(expr)
        mantissa, exponent, others = scaled
        return f"np.ldexp({self._print(sp.Mul(sp.Float(mantissa), *others, evaluate=False))}, {exponent})"

    def _print_Symbol(self, expr):
        return self.names.get(expr, expr.name)

    def _print_Float(self, expr):
        value = float(expr)  # a folded product may be an infinite Float (1e308 * 10): repr would print `inf`
        return repr(value) if math.isfinite(value) else self._print({math.inf: sp.oo, -math.inf: -sp.oo}[value])

    def _print_Exp1(self, expr):
        return "np.e"

    def _print_Pi(self, expr):
        return "np.pi"

    def _print_BooleanTrue(self, expr):
        return "True"

    def _print_BooleanFalse(self, expr):
        return "False"

    def _print_Infinity(self, expr):
        return "np.inf"

    def _print_NegativeInfinity(self, expr):
        return "-np.inf"

    def _print_NaN(self, expr):
        return "np.nan"

    def _print_Add(self, expr, order=None):
        """As SymPy's, except that a negative integer term whose magnitude no int32 holds stays an added
        negative literal: `x - 2147483648` raises OverflowError on int32 x where `x + (-2147483648)` does not."""
        wide = [term for term in expr.args if term.is_Integer and term < -_INT32_MAX]
        if not wide:
            return super()._print_Add(expr, order)
        rest = [term for term in expr.args if term not in wide]
        return f"({self._print(sp.Add(*rest, evaluate=False))} + ({int(sum(wide))}))"

    def _print_Pow(self, expr, rational=False):
        if expr.exp == sp.S.Half:
            return f"np.sqrt({self._print(expr.base)})"
        if _is_half(-expr.exp) or (expr.exp == -1 and expr.base.is_Pow and _is_half(expr.base.exp)):  # (cse's form)
            # NumPy's x ** -0.5, pow's values where 1/sqrt's differ: inf at -0 and 0 at -inf (not -inf and NaN)
            return f"np.power({self._print(expr.base if expr.exp != -1 else expr.base.base)}, -0.5)"
        return super()._print_Pow(expr, rational)

    def _print_softplus(self, expr):
        return f"np.logaddexp(0, {self._print(expr.args[0])})"

    def _print_Function(self, expr):
        """A function NumPy (or a helper of the generated module) has under `_FUNCTIONS`; else one with an
        `evaluation()` (functions.py) is that expression; else SciPy's."""
        target = _FUNCTIONS.get(type(expr))
        if target is None and hasattr(expr, "evaluation"):
            return self._print(expr.evaluation())
        if target is None:
            return self._print_scipy_call(expr)
        args = ", ".join(self._print(a) for a in expr.args)
        if target in HELPERS:
            self.helpers.add(target)
        return f"{target}({args})"

    def _print_scipy_call(self, expr):
        """A function only SciPy evaluates: a call of scipy.special, imported by the generated module."""
        call = special.scipy_call(expr)
        if call is None:
            raise special.unsupported(expr, "NumPy")
        if special.scipy_special() is None:
            raise special.missing_scipy(expr, "NumPy")
        self.helpers.add("_special")
        text = f"_special.{call.name}({', '.join(self._print(a) for a in call.args)})"
        return text if call.coefficient == 1 else f"({call.coefficient}*{text})"

    def _print_isnan(self, expr):
        return f"np.isnan({self._print(expr.args[0])})"

    def _print_isinf(self, expr):
        return f"np.isinf({self._print(expr.args[0])})"

    def _print_Max(self, expr):
        return functools.reduce(lambda a, b: f"np.maximum({a}, {b})", [self._print(a) for a in expr.args])

    def _print_Min(self, expr):
        return functools.reduce(lambda a, b: f"np.minimum({a}, {b})", [self._print(a) for a in expr.args])

    def _print_Piecewise(self, expr):
        pieces = list(expr.args)
        if pieces[-1].cond == sp.true:
            result = self._print(pieces.pop().expr)
        else:
            result = "np.nan"
        for piece in reversed(pieces):
            result = f"np.where({self._print(piece.cond)}, {self._print(piece.expr)}, {result})"
        return result

    def _print_Relational(self, expr):
        ops = {"<": "np.less", "<=": "np.less_equal", ">": "np.greater", ">=": "np.greater_equal",
               "==": "np.equal", "!=": "np.not_equal"}
        return f"{ops[expr.rel_op]}({self._print(expr.lhs)}, {self._print(expr.rhs)})"

    def _print_And(self, expr):
        return functools.reduce(lambda a, b: f"np.logical_and({a}, {b})", [self._print(a) for a in expr.args])

    def _print_Or(self, expr):
        return functools.reduce(lambda a, b: f"np.logical_or({a}, {b})", [self._print(a) for a in expr.args])

    def _print_Not(self, expr):
        return f"np.logical_not({self._print(expr.args[0])})"

    def _print_ITE(self, expr):  # SymPy writes a Piecewise substituted into a condition as ITE
        cond, then, otherwise = (self._print(a) for a in expr.args)
        return f"np.where({cond}, {then}, {otherwise})"

    def _print_Xor(self, expr):
        return functools.reduce(lambda a, b: f"np.logical_xor({a}, {b})", [self._print(a) for a in expr.args])


def _is_half(exponent) -> bool:
    """Whether a power's exponent is 1/2, as a Rational or as the Float a Python 0.5 gives."""
    return exponent.is_Number and float(exponent) == 0.5


def np_dtype(dtype) -> str:
    return f"np.{np.dtype(dtype).name}"


def _needs_cast(expr, dtype) -> bool:
    """NumPy keeps float64 for arithmetic on float64 arrays; other dtypes and selects may drift."""
    return np.dtype(dtype) != dtypes.FLOAT64 or expr.has(sp.Piecewise) or expr.is_Boolean


def elementwise_lines(expr, arg_names: dict, dtype, target: str, printer=None, cast=True) -> list[str]:
    """Source lines assigning the elementwise `expr` (symbols -> arg_names) to `target`; of `dtype` where NumPy's
    result may have another (`_needs_cast`), unless `cast` is False (the caller casts: the eager recorder)."""
    printer = printer or NumpyExprPrinter()
    printer.names, printer.dtype = dict(arg_names), np.dtype(dtype)
    lines = []
    if not expr.free_symbols:
        any_arg = next(iter(arg_names.values()))
        return [f"{target} = np.full(np.shape({any_arg}), {printer.doprint(expr)}, dtype={np_dtype(dtype)})"]
    # infinities as names: unevaluated, cse's ordering of a product's factors asks `oo < 2` (a Relational)
    infinities = {value: sp.Symbol(f"_{target}_{name}") for value, name in ((sp.oo, "inf"), (-sp.oo, "minf"))
                  if expr.has(value)}
    printer.names.update({symbol: printer.doprint(value) for value, symbol in infinities.items()})
    with sp.evaluate(False):  # rebuilt as it is: evaluated, x != x would become False where NaN != NaN
        replacements, (reduced,) = sp.cse(_repeats_merged(expr.xreplace(infinities)),
                                          symbols=sp.numbered_symbols(f"_{target}_"), optimizations=None)
        replacements = [(symbol, _plain_reciprocals(sub)) for symbol, sub in replacements]
        reduced = _plain_reciprocals(reduced)
    for symbol, sub in replacements:
        lines.append(f"{symbol.name} = {printer.doprint(sub)}")
    text = printer.doprint(reduced)
    if cast and _needs_cast(expr, dtype):
        text = f"np.asarray({text}, dtype={np_dtype(dtype)})"
    lines.append(f"{target} = {text}")
    return lines


def _plain_reciprocals(expr):
    """expr with each (x**1)**-1, which cse makes of a reciprocal x**-1 when it rebuilds it unevaluated, as x**-1:
    printed `a0/(a1**1)`, a quotient computed a power of its denominator first, a NumPy call and an array more (call
    under sp.evaluate(False); 1/x is the same number whether x is raised to 1 first or not, whatever x's dtype)."""
    return expr.replace(lambda e: e.is_Pow and e.exp == -1 and e.base.is_Pow and e.base.exp == 1,
                        lambda e: sp.Pow(e.base.base, -1))


def _repeats_merged(expr, merged=None):
    """expr with a factor repeated in an unevaluated product as a power, a repeated term of a sum as a
    multiple (call under sp.evaluate(False)). SymPy's cse can take their arguments as a set: it printed
    Piecewise((x*x/s, c), (0, True)) + Piecewise((-1/s, c), (0, True)) with one x, a gradient ~50% off; and
    it flattens a product nested in a product first, so the repeats are counted over the flattened factors
    (-1.0 * (1.0/x) * (1/x), the gradient of where(x != 0, 1.0/x, 0), was printed -1.0/x: its sign wrong at
    x < 0), until none repeats (a power made may equal one already there: 0.5 * (0.5**2 * y) * 0.5).
    `merged` remembers each subexpression's result, so a shared one is walked once."""
    if expr.is_Atom:
        return expr
    merged = {} if merged is None else merged
    if expr in merged:
        return merged[expr]
    args = [_repeats_merged(arg, merged) for arg in expr.args]
    result = expr if all(a is b for a, b in zip(args, expr.args)) else expr.func(*args)
    if isinstance(expr, (sp.Mul, sp.Add)):
        counts = collections.Counter(_flattened(expr.func, args))
        if any(count > 1 for count in counts.values()):
            repeated = (lambda a, n: sp.Pow(a, n)) if isinstance(expr, sp.Mul) else (lambda a, n: sp.Mul(n, a))
            while any(count > 1 for count in counts.values()):  # a power made may equal a factor already there
                counts = collections.Counter(repeated(arg, n) if n > 1 else arg for arg, n in counts.items())
            result = expr.func(*counts)
    merged[expr] = result
    return result


def _flattened(func, args) -> list:
    """args with each argument that is itself a `func` (a product in a product) replaced by its own, at any depth."""
    flat = []
    for arg in args:
        flat.extend(_flattened(func, arg.args) if isinstance(arg, func) else [arg])
    return flat


@functools.lru_cache(maxsize=2048)
def elementwise_function(expr, args, dtype, cast=True):
    """A Python function evaluating `expr` over arrays for `args` (used by eager evaluation); with `cast` False, its
    result may be of another dtype than `dtype` (the eager recorder casts it, when needed, as it casts any op's), and
    an expression that is one ufunc of the arguments in order is that ufunc (`_one_ufunc`)."""
    printer = NumpyExprPrinter()
    names = {s: f"a{i}" for i, s in enumerate(args)}
    body = elementwise_lines(expr, names, dtype, "result", printer, cast)
    ufunc = None if cast else _one_ufunc(body, len(names))  # (eager plans' evaluators: arrays in, arrays out)
    if ufunc is not None:
        return ufunc
    source = "\n".join([f"def _ew({', '.join(names.values())}):", *("    " + l for l in body), "    return result"])
    namespace = _namespace(printer.helpers)
    exec(compile(source, "<symgrad ew>", "exec"), namespace)
    return namespace["_ew"]


# The one-line bodies that are one ufunc of the arguments in order, as ndarray's operators call it
_OPERATOR_BODIES = {"result = a0*a1": np.multiply, "result = a0 + a1": np.add, "result = a0 - a1": np.subtract,
                    "result = a0/a1": np.true_divide}


def _one_ufunc(body, arity) -> "np.ufunc | None":
    """The ufunc a body of one line applies to the arrays as given (`result = a0*a1`, `result = np.tanh(a0)`), called
    directly by eager plans (a Python call less per op); None for any other body."""
    if len(body) != 1:
        return None
    line = body[0]
    ufunc = _OPERATOR_BODIES.get(line)
    if ufunc is not None:
        return ufunc
    arguments = ", ".join(f"a{i}" for i in range(arity))
    if line.startswith("result = np.") and line.endswith(f"({arguments})"):
        ufunc = getattr(np, line[len("result = np."):-len(arguments) - 2], None)
        if isinstance(ufunc, np.ufunc) and ufunc.nin == arity and ufunc.nout == 1:
            return ufunc
    return None


def _namespace(helpers) -> dict:
    namespace = {"np": np, "math": math}
    for helper in sorted(helpers):
        exec(HELPERS[helper], namespace)
    return namespace
