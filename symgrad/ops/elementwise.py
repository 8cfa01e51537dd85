"""The elementwise ops: every elementwise function of the namespace is an `ElementwiseOp`.

An op is a name and a SymPy builder. Applying one promotes dtypes (NumPy 2 rules, Python
scalars weak), makes broadcasting explicit, bakes Python scalars into the expression, and
emits one node of the `ew` primitive (ew.py), which derives its derivatives.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
import sympy as sp

from .. import dtypes
from ..core import ShapeError, Tracer, UnsupportedOpError, fail, refuse_masked
from . import functions as F
from .elementwise_registry import ELEMENTWISE, input_symbol
from .ew import bind_ew, derivative
from .shape import broadcast_to_p, convert_p


# Functions rewritten, when an op is built, with floor and Piecewise, which every backend lowers
# and SymPy differentiates (frac' = 1, Mod(a, b) = a - b*floor(a/b) as np.mod); NaN stays NaN.
_REWRITES = {
    sp.frac: lambda a: a - sp.floor(a),
    sp.Mod: lambda a, b: a - b * sp.floor(a / b),
    sp.Heaviside: lambda a, h0=sp.S.Half: sp.Piecewise((0, a < 0), (h0, sp.Eq(a, 0)), (1, a > 0), (sp.nan, True)),
}


def _rewrite(expr):
    for function, rule in _REWRITES.items():
        expr = expr.replace(function, rule)
    return expr


# ----------------------------------------------------------------------------- the op library

@dataclass(frozen=True)
class ElementwiseOp:
    """A named elementwise function defined by a SymPy builder over its arguments.

    kind: 'float' (ints promote to float64), 'arith' (NumPy promotion), 'compare' (bool
    result), 'where' (first argument is a bool condition). domain: a real interval where
    the function is smooth, for generated tests. literal_arguments: the positions where a
    Python number always stays part of the expression (a power's exponent picks the form of
    its derivative); None for all of them (a user op may not differentiate in a number).
    integer_fn: the builder for integer arrays (never differentiated) where `fn` is written for
    its derivative with a value integer arithmetic cannot compute, such as a tie's (a + b) / 2.
    on_booleans=False: NumPy refuses the op on booleans (pointing to ~ and logical_xor), and so does sg; a function
    instead computes the op on booleans (a bitwise op of truth values is the logical one); "int8": NumPy has no
    boolean loop for it and computes in int8 (b // b, b % b, b ** b, square(b) are int8).
    on_floats=False: the op takes integers and booleans only, as NumPy's bitwise ufuncs.
    conditions: the positions taken as truth values (where's condition, the logical ops' operands): a
    number there is converted to bool (x != 0) first, as NumPy does.
    """

    name: str
    fn: object
    arity: int
    kind: str = "float"
    domain: tuple = (-2.0, 2.0)
    literal_arguments: tuple | None = ()
    integer_fn: object = None
    on_booleans: object = True  # True, False, a function of the operands, or "int8"
    conditions: tuple = ()
    on_floats: bool = True

    def __call__(self, *args, out=None):
        if len(args) != self.arity:
            raise TypeError(f"sg.{self.name} takes {self.arity} argument(s), got {len(args)}")
        if out is not None:  # PyTorch's out= (`torch.add(a, b, out=c)`): the value type of `out` writes it
            write = getattr(type(out), "__sg_out__", None)
            if write is None:
                raise TypeError(f"sg.{self.name}: out= takes a tensor, got {type(out).__name__}")
            return write(self.name, out, args, lambda: self(*args))
        for arg in args:  # a value type may run elementwise ops its own way (eager tensors replay plans)
            handler = getattr(type(arg), "__sg_elementwise__", None)
            if handler is not None:
                return handler(self, args)
        return apply_elementwise(self, args)


def define(name, fn, arity=None, kind="float", domain=(-2.0, 2.0), literal_arguments=(),
           integer_fn=None, on_booleans=True, conditions=(), on_floats=True) -> ElementwiseOp:
    """Register an elementwise op built from a SymPy expression builder."""
    if arity is None:
        arity = _required_arguments(fn)
    op = ElementwiseOp(name, fn, arity, kind, tuple(domain), literal_arguments, integer_fn, on_booleans,
                       tuple(conditions), on_floats)
    ELEMENTWISE[name] = op
    return op


def _required_arguments(fn) -> int:
    """How many positional arguments fn requires (1 for SymPy functions taking *args)."""
    import inspect
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return 1
    required = [p for p in params if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(required) or 1


def _is_python_scalar(x) -> bool:
    return isinstance(x, (bool, int, float)) and not isinstance(x, np.generic)


def _as_sympy_number(x):
    if isinstance(x, bool):
        return sp.true if x else sp.false
    return sp.Integer(x) if isinstance(x, int) else sp.Float(x)


def broadcast_shapes(*shapes):
    """NumPy broadcasting of shapes; a ShapeError naming the shapes if incompatible."""
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        listed = " and ".join(str(tuple(s)) for s in shapes)
        raise ShapeError(f"operands could not be broadcast together: shapes {listed}") from None


def apply_elementwise(op: ElementwiseOp, args):
    """Apply an elementwise op to tracers/arrays/scalars with NumPy promotion and broadcasting. Its result
    is weakly typed when every operand is a Python number or weakly typed, as NumPy's is a Python number."""
    result = _apply_elementwise(op, args)
    if op.kind != "compare" and isinstance(result, Tracer) and _is_weak(args):
        result.weak = True
    return result


def _is_weak(args) -> bool:
    """Whether args are Python numbers and weakly typed tracers, at least one of those."""
    return (any(getattr(a, "weak", False) for a in args)
            and all(_is_python_scalar(a) or getattr(a, "weak", False) for a in args))


_FLOAT64_MAX = float(np.finfo(np.float64).max)


def _check_python_ints_fit(args, is_condition, compute):
    """NumPy's OverflowError for a Python int that the compute dtype cannot hold (int32 data * 2**40),
    which compiled code would otherwise wrap."""
    for arg, cond in zip(args, is_condition):
        if type(arg) is not int or cond:
            continue
        if compute.kind in "iu":
            info = np.iinfo(compute)
            if not info.min <= arg <= info.max:
                fail(f"Python integer {arg} out of bounds for {compute}", OverflowError)
        elif compute.kind == "f" and not -_FLOAT64_MAX <= arg <= _FLOAT64_MAX:
            fail(f"Python integer {arg} is too large to convert to {compute}", OverflowError)


def _floats_in_range(args, is_condition, compute) -> tuple:
    """args with each Python number float32 cannot hold as the inf or 0 it becomes there, as NumPy's and PyTorch's
    weak scalar does (a float32 x * 1e39 is x * inf: NaN at 0); written as it is, SymPy and the printers would
    keep it exact (functions.scaled_product) and give a finite x * 1e39 that no other framework gives."""
    if compute != dtypes.FLOAT32:
        return args
    return tuple(_as_float32_would(a) if type(a) in (int, float) and not cond else a
                 for a, cond in zip(args, is_condition))


def _as_float32_would(number):
    """`number`, or the inf or 0 float32 rounds it to."""
    with np.errstate(over="ignore", under="ignore"):
        rounded = float(np.float32(float(number)))
    return rounded if number != 0 and (math.isinf(rounded) or rounded == 0) else number


def _widened_for_comparison(op, args, is_condition, compute):
    """int64 for a comparison of integers with a Python int outside their dtype's range, which NumPy answers
    exactly (a uint8 array > -1 is all True, == 300 all False) rather than raising, and of booleans with a Python
    number (SymPy orders no truth values: False < True is compared as 0 < 1, as NumPy does); else `compute`."""
    if op.kind != "compare":
        return compute
    if compute == dtypes.BOOL:
        return dtypes.INT64 if any(_is_python_scalar(arg) for arg in args) else compute
    if compute.kind not in "iu":
        return compute
    info = np.iinfo(compute)
    outside = any(type(arg) is int and not cond and not info.min <= arg <= info.max
                  for arg, cond in zip(args, is_condition))
    return dtypes.INT64 if outside else compute


def _check_integer_power(op, args, compute) -> None:
    """NumPy's and PyTorch's error for an integer raised to a negative integer number, which integer code
    computes as 0 (or, at a zero base, garbage)."""
    if op is power and compute.kind in "iub" and type(args[1]) is int and args[1] < 0:
        fail(f"Integers to negative integer powers are not allowed (an {compute} array ** {args[1]}); "
             "convert the base to float first", ValueError)


def _weak_operands(args, is_condition) -> list:
    """Per argument, whether it is a weakly typed tracer that yields to the arrays' dtype. A weak int meeting
    integer arrays does not: NumPy raises OverflowError for a Python int the array's dtype cannot hold, a
    check a traced value cannot make, so it keeps its int64 (a wider result, never a wrapped one)."""
    weak = [getattr(a, "weak", False) for a in args]
    integer_arrays = any(a.dtype.kind in "iu" for a, w, cond in zip(args, weak, is_condition)
                         if not w and not cond and not _is_python_scalar(a))
    if integer_arrays:
        weak = [w and a.dtype.kind == "f" for a, w in zip(args, weak)]
    return weak


def _weak_number(arg):
    """A Python number of a weakly typed tracer's kind, standing for it in NEP 50 promotion."""
    return 0.0 if arg.dtype.kind == "f" else 0


def _apply_elementwise(op: ElementwiseOp, args):
    tracers = [a for a in args if isinstance(a, Tracer)]
    builder = max((t.builder for t in tracers), key=lambda b: b.depth) if tracers else None
    operands, scalars = [], []
    for position, arg in enumerate(args):
        if _is_python_scalar(arg):
            scalars.append(arg)
            continue
        if not isinstance(arg, Tracer):
            if builder is not None:
                refuse_masked(arg, "a constant of the traced function")
            arg = np.asarray(arg)
            arg = arg.astype(dtypes.canonical(arg.dtype), copy=False)
            if builder is not None:  # a constant of its own shape, broadcast in the graph
                arg = Tracer(builder.lift(arg), builder)
            args = args[:position] + (arg,) + args[position + 1:]
        operands.append(arg)
    if not operands:  # all Python scalars: evaluate as 0-d arrays
        return apply_elementwise(op, tuple(np.asarray(a) for a in args))

    is_condition = [i in op.conditions for i in range(len(args))]
    weak = _weak_operands(args, is_condition)
    numeric = [a.dtype for a, cond, w in zip(args, is_condition, weak) if not _is_python_scalar(a) and not cond
               and not w]
    numeric_scalars = [_weak_number(a) if w else a for a, cond, w in zip(args, is_condition, weak)
                       if (_is_python_scalar(a) or w) and not cond]
    compute = dtypes.promote(numeric, numeric_scalars)
    if op.kind == "float":
        compute = dtypes.float_result(compute)
    compute = _widened_for_comparison(op, args, is_condition, compute)
    if not op.on_floats and compute.kind not in "iub":
        fail(f"sg.{op.name} takes integer or boolean arrays, as NumPy's bitwise ufunc (the operands' dtype is "
             f"{compute}); convert them with astype first", TypeError)
    _check_python_ints_fit(args, is_condition, compute)
    args = _floats_in_range(args, is_condition, compute)
    _check_integer_power(op, args, compute)
    if compute != dtypes.BOOL:  # a Python bool among numbers is the int 0 or 1, as in NumPy and PyTorch
        args = tuple(int(a) if type(a) is bool and not cond else a for a, cond in zip(args, is_condition))
    out_dtype = dtypes.BOOL if op.kind == "compare" else compute
    if op.kind == "arith" and compute == dtypes.BOOL:
        return _boolean_arithmetic(op, args)
    if scalars and builder is not None and builder.numbers_as_operands:
        as_arrays = _numbers_as_arrays(op, args, compute)
        if as_arrays is not None:
            return apply_elementwise(op, as_arrays)
    try:
        shape = broadcast_shapes(*[a.shape for a in operands])
    except ShapeError as err:
        fail(str(err))

    inputs, kinds = [], []
    for arg, cond in zip(args, is_condition):
        if _is_python_scalar(arg):
            kinds.append((type(arg), bool(arg) if cond else arg))
            continue
        want = dtypes.BOOL if cond else compute
        if arg.dtype != want:
            arg = convert_p(arg, dtype=want)
        if arg.shape != shape:
            arg = broadcast_to_p(arg, shape=shape)
        inputs.append(arg)
        kinds.append(want)
    literal = op.literal_arguments or ()  # (x ** 0 is 1 for every x, NaN too; a power's exponent stays literal)
    quotient = scalars and _divides(op)
    special = [a for i, (a, cond) in enumerate(zip(args, is_condition)) if _is_python_scalar(a) and not cond
               and ((a == 0 and i not in literal) or not math.isfinite(a) or quotient)]  # (see bakes_faithfully)
    baked = not special or (all(map(bakeable, special)) and _scalars_bake_faithfully(op, tuple(kinds), compute))
    if baked:
        symbols, expr = _expression(op, tuple(kinds))
    if not baked or expr.has(sp.zoo):  # pass the Python scalars as values instead (see bakes_faithfully)
        return apply_elementwise(op, tuple(np.asarray(a, dtype=compute) if _is_python_scalar(a) and not cond else a
                                           for a, cond in zip(args, is_condition)))
    name = op.name if not scalars else None
    return bind_ew(expr, symbols, inputs, out_dtype, name)


def operand_numbers(op, args) -> list:
    """Per argument of op, whether it is a Python number that may be a run-time operand instead of
    part of the expression: ints and floats, except where's condition, booleans and
    op.literal_arguments (every position, when that is None)."""
    if op.literal_arguments is None:
        return [False] * len(args)
    return [_is_python_scalar(a) and type(a) is not bool and i not in op.conditions
            and i not in op.literal_arguments for i, a in enumerate(args)]


def _numbers_as_arrays(op, args, dtype):
    """args with op's operand numbers as 0-d arrays of its compute dtype, so their values are run-time
    data rather than part of the expression; None when there are none."""
    flags = operand_numbers(op, args)
    if not any(flags):
        return None
    return tuple(np.asarray(a, dtype=dtype) if flag else a for a, flag in zip(args, flags))


def _boolean_arithmetic(op, args):
    """NumPy's arithmetic on booleans (+ is or, * is and, maximum is or, ...) as the truth of the integer
    result, so that no backend is asked for arithmetic on 1-bit values (LLVM has none); or op's own function of
    booleans (on_booleans)."""
    if callable(op.on_booleans):
        return op.on_booleans(*args)
    if not op.on_booleans:
        fail(f"sg.{op.name} is not supported on booleans, as in NumPy; use ~ or sg.logical_not, or astype(int)",
             TypeError)
    if op.on_booleans == "int8":
        return apply_elementwise(op, _as_integers(args, dtypes.INT8))
    return convert_p(apply_elementwise(op, _as_integers(args, dtypes.INT64)), dtype=dtypes.BOOL)


def _boolean_power(a, b):
    """a ** b of booleans, in int8 as NumPy's: a where b is true, else 1 (the LLVM backend computes no integer
    power of a varying exponent; NumPy's int8 path has it)."""
    base, = _as_integers((a,), dtypes.INT8)
    return where(b, base, np.int8(1))


def _as_integers(args, dtype) -> tuple:
    """Boolean arrays (and Python bools) as integers of `dtype`: int8, which NumPy computes booleans' shifts,
    quotients and powers in, or int64 for arithmetic whose truth is taken."""
    return tuple(int(a) if _is_python_scalar(a) else convert_p(a, dtype=dtype) for a in args)


def bakeable(value) -> bool:
    """Whether a Python or NumPy number can be written into an expression as a SymPy number at all: not NaN
    (SymPy's NaN absorbs what IEEE's does not: nan**x is NaN at x = 0) nor -0.0 (SymPy has no signed
    zero: copysign(x, -0.0) became |x| and arctan2(0, -0.0) 0 instead of pi)."""
    if not isinstance(value, (float, np.floating)):
        return True
    return not (np.isnan(value) or (value == 0 and np.signbit(value)))


def bakes_faithfully(expr, values: dict) -> bool:
    """Whether writing `values` (symbol -> SymPy number) into `expr` keeps its IEEE meaning. Not
    when x / 0 becomes SymPy's complex infinity (zoo); nor when a comparison with an infinity
    folds to True, or to False where IEEE can be true: SymPy's real symbols are finite, so it
    folds x < inf to True, which is False at x = inf (only x < -inf and x > inf are false for all x);
    nor when a zero or an infinity folds anything (see _only_substituted)."""
    return _divides_as_written(expr, values) and _folds_nothing(expr, values)


def _folds_nothing(expr, values: dict) -> bool:
    """Whether writing `values` into `expr` folds nothing IEEE arithmetic would not (bakes_faithfully, quotients
    aside: a derivative has no NumPy division to round as)."""
    if not _only_substituted(expr, values):
        return False
    non_finite = {symbol for symbol, value in values.items() if value in (sp.oo, -sp.oo, sp.nan)}
    for relation in expr.atoms(sp.core.relational.Relational):
        if relation.free_symbols & non_finite:
            if any(values.get(symbol) is sp.nan for symbol in relation.free_symbols):
                return False  # SymPy refuses to compare with NaN
            folded = relation.xreplace(values)
            if folded == sp.true or (folded == sp.false and relation.rel_op not in ("<", ">")):
                return False
    return not expr.xreplace(values).has(sp.zoo)


def _divides_as_written(expr, values: dict) -> bool:
    """Whether writing `values` into `expr` keeps its quotients rounded as NumPy's division: SymPy
    folds x / 49.0 into x * 0.0204... (a compiled floor(49.0 / 49.0) was 0, the mean of 49 ones 0.9999999999999999),
    and the LLVM printer writes 3.0 / x as (1 / x) * 3.0. Only a divisor whose reciprocal is exact (a power of
    two) and a numerator of 1 or -1 write in faithfully."""
    for power in expr.atoms(sp.Pow):
        value = values.get(power.base)
        if value is not None and power.exp.is_negative and not _exact_reciprocal(value):
            return False
    for product in expr.atoms(sp.Mul):
        if any(factor.is_Pow and factor.exp.is_negative for factor in product.args):
            if any(values.get(factor, sp.S.One) not in (sp.S.One, sp.S.NegativeOne) for factor in product.args):
                return False
    return True


def _exact_reciprocal(value) -> bool:
    """Whether 1 / value is exact in binary floating point, float32 too: value is an infinity or a power of two
    whose reciprocal is a float32 (x / 2**-1074 written as x * inf gave NaN at 0, and x / 2**-130 in float32 inf)."""
    number = abs(float(value))
    return not np.isfinite(number) or (math.frexp(number)[0] == 0.5 and 2.0 ** -126 <= number <= 2.0 ** 126)


@functools.lru_cache(maxsize=None)
def _divides(op: ElementwiseOp) -> bool:
    """Whether op's expression divides (a negative power), so that a number written into it may round its
    quotient otherwise than a division does (see _divides_as_written). A user op (sg.elementwise) keeps every
    number written in, and its builder may need one (range(int(k))): it is not built on symbols here."""
    if op.literal_arguments is None:
        return False
    kinds = tuple(dtypes.BOOL if i in op.conditions else dtypes.FLOAT64 for i in range(op.arity))
    return any(power.exp.is_negative for power in _expression(op, kinds)[1].atoms(sp.Pow))


def _only_substituted(expr, values: dict) -> bool:
    """Whether writing the zeros and infinities among `values` into `expr` folds nothing that IEEE arithmetic
    would not: a zero may fold where exact (x - 0 -> x) but not as a term added (x + 0 -> x and 0 - x -> -x give
    -0.0 where IEEE's sum is 0.0) nor drop an input (x*0 -> 0 drops x: IEEE gives NaN where x is an infinity or
    NaN); an infinity must stay as written (x + oo -> oo drops x, and atan2(y, -oo) -> 2*pi*Heaviside(y) - pi is 0
    at y = 0, IEEE's pi): undoing its substitution must give the expression back."""
    zeros = [s for s, v in values.items() if v.is_Number and v.is_zero]
    infinities = {s: v for s, v in values.items() if v.is_Number and v.is_infinite}
    if not zeros and not infinities:
        return True
    if _adds(expr, zeros):
        return False
    try:
        baked = expr.xreplace(values)
        if zeros and not expr.free_symbols - values.keys() <= baked.free_symbols:
            return False
        undo = {v: s for s, v in infinities.items()}
        rest = {s: v for s, v in values.items() if s not in infinities}
        return len(undo) == len(infinities) and (not infinities or baked.xreplace(undo) == expr.xreplace(rest))
    except TypeError:  # SymPy compared with complex infinity (x / 0 in a condition)
        return False


def _adds(expr, symbols) -> bool:
    """Whether one of `symbols` is a term of a sum in `expr` with a positive coefficient (x + z, z - x, (a + z)/2):
    SymPy drops such a term at z = 0, where IEEE's -0.0 + 0.0 is 0.0. Subtracted (x - z) it folds exactly."""
    for total in expr.atoms(sp.Add):
        for term in total.args:
            coefficient, rest = term.as_coeff_Mul()
            if rest in symbols and coefficient.is_positive:
                return True
    return False


@functools.lru_cache(maxsize=4096)
def _scalars_bake_faithfully(op: ElementwiseOp, kinds: tuple, compute) -> bool:
    """Whether op's numeric Python scalars ((type, value) kinds) can be written into its expression:
    op is built once more with them as symbols, to see what writing them in would fold, in the expression and in
    its derivatives, which reverse mode takes of the written expression (d/dx logaddexp(x, inf) is
    sigmoid(x - oo), which SymPy folds to 0, IEEE's NaN at x = inf)."""
    numeric_scalar = [isinstance(kind, tuple) and not isinstance(kind[1], bool) for kind in kinds]
    opened = tuple(compute if is_scalar else kind for kind, is_scalar in zip(kinds, numeric_scalar))
    symbols, expr = _expression(op, opened)
    operands = [(kind, is_scalar) for kind, is_scalar in zip(kinds, numeric_scalar)
                if is_scalar or not isinstance(kind, tuple)]  # (a symbol each, in order)
    values = {symbol: _as_sympy_number(kind[1]) for symbol, (kind, is_scalar) in zip(symbols, operands) if is_scalar}
    if not bakes_faithfully(expr, values):
        return False
    if compute.kind != "f" or op.kind == "compare":
        return True
    try:
        return all(_folds_nothing(derivative(expr, symbols, i)[0], values)
                   for i, symbol in enumerate(symbols) if symbol not in values)
    except UnsupportedOpError:  # (not differentiable: reverse mode says so itself)
        return True


@functools.lru_cache(maxsize=4096)
def _expression(op: ElementwiseOp, kinds: tuple):
    """(input symbols, SymPy expression) of op applied to arrays of the given dtypes and to
    Python scalars ((type, value) pairs), built once: SymPy construction is the slow part."""
    symbols, sympy_args = [], []
    arrays = [kind for kind in kinds if not isinstance(kind, tuple)]
    integer = arrays and all(np.dtype(kind).kind in "iu" for kind in arrays)
    build = op.integer_fn if integer and op.integer_fn is not None else op.fn
    for kind in kinds:
        if isinstance(kind, tuple):
            sympy_args.append(_as_sympy_number(kind[1]))
            continue
        symbol = input_symbol(len(symbols), kind)
        symbols.append(symbol)
        sympy_args.append(symbol)
    expr = _rewrite(sp.sympify(build(*sympy_args)))
    if expr.is_Boolean and op.kind != "compare":
        raise TypeError(f"sg.{op.name} produced a boolean expression; declare it with kind='compare'")
    return tuple(symbols), expr


def elementwise(name: str, fn, domain=(-2.0, 2.0)) -> ElementwiseOp:
    """Define a differentiable elementwise op from a SymPy expression builder.

    >>> softsign = sg.elementwise("softsign", lambda x: x / (1 + sympy.Abs(x)))

    Defining a name again replaces that user op (as re-running a notebook cell does); the name of
    one of symgrad's own ops is refused, since graphs and PyTorch-style grad_fn names refer to ops by name.
    """
    if name in LIBRARY_NAMES:
        raise ValueError(f"sg.elementwise: {name!r} names symgrad's own sg.{name}; give your op another name")
    return define(name, fn, kind="float", domain=domain, literal_arguments=None)


# The library. Domains keep generated finite-difference tests away from kinks and poles.
add = define("add", lambda a, b: a + b, kind="arith")
subtract = define("subtract", lambda a, b: a - b, kind="arith", on_booleans=False)
multiply = define("multiply", lambda a, b: a * b, kind="arith")
divide = define("divide", lambda a, b: a / b, domain=(0.5, 2.0))
power = define("power", lambda a, b: a ** b, kind="arith", domain=(0.5, 2.0), literal_arguments=(1,),
               on_booleans=_boolean_power)
negative = define("negative", lambda a: -a, kind="arith", on_booleans=False)
square = define("square", lambda a: a ** 2, kind="arith", on_booleans="int8")
reciprocal = define("reciprocal", lambda a: 1 / a, domain=(0.5, 2.0))
sin = define("sin", sp.sin)
cos = define("cos", sp.cos)
tan = define("tan", sp.tan, domain=(-1.2, 1.2))
sinh = define("sinh", sp.sinh)
cosh = define("cosh", sp.cosh)
tanh = define("tanh", sp.tanh)
arcsin = define("arcsin", sp.asin, domain=(-0.9, 0.9))
arccos = define("arccos", sp.acos, domain=(-0.9, 0.9))
arctan = define("arctan", sp.atan)
arctan2 = define("arctan2", sp.atan2, domain=(0.5, 2.0))
exp = define("exp", sp.exp)
expm1 = define("expm1", F.expm1)
log = define("log", sp.log, domain=(0.1, 3.0))
log1p = define("log1p", F.log1p, domain=(-0.9, 3.0))
sqrt = define("sqrt", sp.sqrt, domain=(0.1, 3.0))
abs = define("abs", sp.Abs, kind="arith")
sign = define("sign", sp.sign, kind="arith", on_booleans=False)
sigmoid = define("sigmoid", F.sigmoid)
softplus = define("softplus", F.softplus)
logaddexp = define("logaddexp", F.logaddexp)
erf = define("erf", sp.erf)
# NaN stays NaN, -0.0 stays -0.0 (with gradient 0 at a zero), as PyTorch's
relu = define("relu", F.relu, kind="arith")
# x where it is positive, else slope * x (a NaN stays NaN): one op, whose derivative 1 or slope is PyTorch's; as
# where(x > 0, ...) its comparison was a constant of a captured step, which a deferred step had to compute first
leaky_relu = define("leaky_relu", lambda x, slope: sp.Piecewise((x, x > 0), (slope * x, True)))
# PyTorch's elu kernel, one op as leaky_relu: x * scale where x is positive, else alpha * expm1(x * input_scale)
# (elu: scale and input_scale 1; celu: input_scale 1 / alpha; selu: SELU's alpha * scale and scale), whose derivative
# there is alpha * input_scale * exp(x * input_scale), as elu_backward computes it (not expm1's y + 1)
elu = define("elu", lambda x, alpha, scale, input_scale: sp.Piecewise(
    (x * scale, x > 0), (alpha * F.valued(sp.exp(x * input_scale) - 1, F.expm1(x * input_scale)), True)))
# softplus(beta x) / beta, and x itself where beta x > threshold (PyTorch's cut-off): one op as leaky_relu
softplus_beta = define("softplus_beta", lambda x, beta, threshold: sp.Piecewise(
    (x, beta * x > threshold), (F.softplus(beta * x) / beta, True)))
# Ties split the gradient evenly, as PyTorch does; their value is the second argument, as NumPy's and
# torch.maximum's (maximum(-0.0, 0.0) is 0.0, maximum(0.0, -0.0) -0.0; (a + b) / 2 was 0.0 for both, and -0.0
# for the first once SymPy folded a + 0); a NaN gives NaN, a + b, with gradient 1 to each operand as PyTorch's
# ((a + b) / 2 gave 1/2; JAX's is 0). Integers take Max/Min.
# (Eq: SymPy, whose reals are ordered, folds a >= b after a > b and a < b to True.)
_tied = lambda a, b: ((F.tie(b, a), sp.Eq(a, b)), (a + b, True))  # noqa: E731
maximum = define("maximum", lambda a, b: sp.Piecewise((a, a > b), (b, a < b), *_tied(a, b)), kind="arith",
                 integer_fn=sp.Max)
minimum = define("minimum", lambda a, b: sp.Piecewise((a, a < b), (b, a > b), *_tied(a, b)), kind="arith",
                 integer_fn=sp.Min)
# Gradient 1 on the closed interval [lo, hi], as torch.clamp.
# With lo > hi the result is hi everywhere, as np.clip, jax.numpy.clip and torch.clamp; a NaN x or bound gives NaN,
# as theirs, with gradient 0 to each as torch.clamp's (the test folds away for a bound written in as a number).
# Integers hold no NaN: their form has no NaN branch, which the LLVM backend cannot write as an integer.
# A NaN x passes through with its bits (PyTorch's hardtanh keeps them) and derivative 0 (valued(0, x)).
_clipped = lambda x, lo, hi: [(hi, sp.Or(x > hi, lo > hi)), (lo, x < lo), (x, True)]  # noqa: E731
_nan_input = lambda x: (F.valued(sp.S.Zero, x), F.isnan(x))  # noqa: E731
clip = define("clip", lambda x, lo, hi: sp.Piecewise((sp.nan, sp.Or(F.isnan(lo), F.isnan(hi))), _nan_input(x),
                                                     *_clipped(x, lo, hi)),
              kind="arith", integer_fn=lambda x, lo, hi: sp.Piecewise(*_clipped(x, lo, hi)))
# np.clip with one bound: a tie gives the bound's bits, as np.maximum/np.minimum (np.clip(-0.0, 0.0, None) is 0.0,
# np.clip(-0.0, 0.0, 1.0) -0.0), the gradient clip's.
_bounded = lambda x, bound, beyond: sp.Piecewise(  # noqa: E731
    (sp.nan, F.isnan(bound)), _nan_input(x), (bound, beyond), (F.valued(x, bound), sp.Eq(x, bound)), (x, True))
clip_below = define("clip_below", lambda x, lo: _bounded(x, lo, x < lo), kind="arith",
                    integer_fn=lambda x, lo: sp.Piecewise((lo, x < lo), (x, True)))
clip_above = define("clip_above", lambda x, hi: _bounded(x, hi, x > hi), kind="arith",
                    integer_fn=lambda x, hi: sp.Piecewise((hi, x > hi), (x, True)))
where = define("where", lambda c, a, b: sp.Piecewise((a, c), (b, True)), kind="where", conditions=(0,))
less = define("less", lambda a, b: a < b, kind="compare")
less_equal = define("less_equal", lambda a, b: a <= b, kind="compare")
greater = define("greater", lambda a, b: a > b, kind="compare")
greater_equal = define("greater_equal", lambda a, b: a >= b, kind="compare")
equal = define("equal", lambda a, b: sp.Eq(a, b, evaluate=False), kind="compare")
not_equal = define("not_equal", lambda a, b: sp.Ne(a, b, evaluate=False), kind="compare")
logical_not = define("logical_not", lambda a: sp.Not(a), kind="compare", conditions=(0,))
logical_and = define("logical_and", lambda a, b: sp.And(a, b), kind="compare", conditions=(0, 1))
logical_or = define("logical_or", lambda a, b: sp.Or(a, b), kind="compare", conditions=(0, 1))
logical_xor = define("logical_xor", lambda a, b: sp.Xor(a, b), kind="compare", conditions=(0, 1))
# NumPy's bitwise ufuncs: integers and booleans only (of booleans, the logical ops; booleans shift as int8, as
# NumPy's). Never differentiated.
_bitwise = functools.partial(define, kind="arith", on_floats=False)
bitwise_and = _bitwise("bitwise_and", F.bitwise_and, 2, on_booleans=logical_and)
bitwise_or = _bitwise("bitwise_or", F.bitwise_or, 2, on_booleans=logical_or)
bitwise_xor = _bitwise("bitwise_xor", F.bitwise_xor, 2, on_booleans=logical_xor)
invert = _bitwise("invert", F.invert, 1, on_booleans=logical_not)
left_shift = _bitwise("left_shift", F.left_shift, 2, on_booleans="int8")
right_shift = _bitwise("right_shift", F.right_shift, 2, on_booleans="int8")
# Rounding and division: constant between jumps, so derivative 0 there (mod: 1 in a, -floor(a / b) in b).
# NumPy 2: floor, ceil and trunc keep integers and booleans as they are; rint gives floats (float64 here, as
# the transcendentals of small integers).
floor = define("floor", sp.floor, kind="arith")
ceil = define("ceil", sp.ceiling, kind="arith")
rint = define("rint", F.rint)
trunc = define("trunc", lambda x: sp.Piecewise((sp.ceiling(x), x < 0), (sp.floor(x), True)), kind="arith")
floor_divide = define("floor_divide", F.floor_divide, 2, kind="arith", domain=(0.5, 4.0), on_booleans="int8")
mod = define("mod", F.floor_mod, 2, kind="arith", domain=(0.5, 4.0), on_booleans="int8")
# Logarithms, powers and angles NumPy names; hypot through libm's, which neither overflows nor underflows.
log2 = define("log2", F.log2, domain=(0.1, 3.0))
log10 = define("log10", F.log10, domain=(0.1, 3.0))
exp2 = define("exp2", lambda x: 2 ** x)
arcsinh = define("arcsinh", sp.asinh)
arccosh = define("arccosh", sp.acosh, domain=(1.1, 3.0))
arctanh = define("arctanh", sp.atanh, domain=(-0.9, 0.9))
hypot = define("hypot", F.hypot, 2, domain=(0.5, 2.0))
deg2rad = define("deg2rad", lambda x: x * sp.Float(np.pi / 180))  # one product: pi * x / 180 would overflow
rad2deg = define("rad2deg", lambda x: x * sp.Float(180 / np.pi))


# (-pi**2)**k / (2k + 1)!, k < 12: the last term is below 1e-18 of the first at |x| = 1/2
_SINC_SERIES = [sp.Float(float((-sp.pi ** 2) ** k / sp.factorial(2 * k + 1))) for k in range(12)]


def _sinc(x):
    """sin(pi x) / (pi x), by its Taylor series where |x| < 1/2: there the quotient's derivative,
    cos(pi x) / x - sin(pi x) / (pi x**2), cancels to nothing (float32 gave 8 for 0 at x = 1e-8)."""
    t, series = x * x, sp.Integer(0)
    for coefficient in reversed(_SINC_SERIES):
        series = coefficient + t * series
    return sp.Piecewise((series, sp.Abs(x) < sp.Rational(1, 2)), (sp.sin(sp.pi * x) / (sp.pi * x), True))


sinc = define("sinc", _sinc)
# IEEE classes, as truth values SymPy cannot fold (its real symbols are finite).
isnan = define("isnan", F.isnan, kind="compare")
isinf = define("isinf", F.isinf, kind="compare")
isfinite = define("isfinite", lambda x: sp.Not(sp.Or(F.isnan(x), F.isinf(x))), kind="compare")

# scipy.special's elementwise functions (sg.scipy.special, not sg.*). SciPy evaluates gammaln, digamma,
# erfc, erfinv, ndtr, log_ndtr, ndtri, betaln and the incomplete integrals (special.py); the others are
# written with functions every backend lowers.
gammaln = define("gammaln", sp.loggamma, domain=(0.1, 3.0))
digamma = define("digamma", sp.digamma, domain=(0.2, 3.0))
erfc = define("erfc", sp.erfc)
erfinv = define("erfinv", sp.erfinv, domain=(-0.9, 0.9))
ndtr = define("ndtr", F.ndtr)
log_ndtr = define("log_ndtr", F.log_ndtr)
ndtri = define("ndtri", lambda p: -sp.sqrt(2) * sp.erfcinv(2 * p), domain=(0.05, 0.95))  # exact for tiny p
logit = define("logit", lambda p: sp.log(p) - F.log1p(-p), domain=(0.1, 0.9))
expit = define("expit", F.sigmoid)
xlogy = define("xlogy", F.xlogy, domain=(0.5, 2.0))
xlog1py = define("xlog1py", F.xlog1py, domain=(0.5, 2.0))
betaln = define("betaln", F.betaln, domain=(0.2, 3.0))
# Regularized incomplete integrals (the cdfs of gamma, beta, t, poisson): derivatives only in x (and mu).
gammainc = define("gammainc", F.gammainc, arity=2, domain=(0.5, 3.0))
gammaincc = define("gammaincc", F.gammaincc, arity=2, domain=(0.5, 3.0))
betainc = define("betainc", F.betainc, arity=3, domain=(0.2, 0.9))
stdtr = define("stdtr", F.stdtr, arity=2, domain=(0.5, 3.0))
# The Poisson cdf at floor(k); NaN for k < 0, as SciPy's.
pdtr = define("pdtr", lambda k, mu: sp.Piecewise((sp.nan, k < 0), (F.gammaincc(sp.floor(k) + 1, mu), True)),
              domain=(0.5, 3.0))
# Whether x is a whole number (the support of a discrete distribution): x - floor(x) is NaN for NaN and infinities.
is_whole = define("is_whole", lambda x: sp.Eq(x - sp.floor(x), 0, evaluate=False), kind="compare")


@functools.lru_cache(maxsize=None)
def polygamma_of_order(n: int) -> ElementwiseOp:
    """scipy.special.polygamma(n, x) for one whole order n, as the op `polygamma<n>` (an op is
    one expression, and each order is another function of x)."""
    return define(f"polygamma{n}", lambda x: sp.polygamma(n, x), domain=(0.2, 3.0))


# NumPy's other elementwise functions. fmax/fmin ignore a NaN operand; at ties (and where both are NaN) their value
# and gradient are the first argument's, as NumPy's value and torch.fmax's gradient (torch.maximum splits ties).
cbrt = define("cbrt", F.cbrt, domain=(0.2, 3.0))
copysign = define("copysign", lambda a, b: sp.Piecewise((-sp.Abs(a), F.signbit(b)), (sp.Abs(a), True)),
                  domain=(0.5, 2.0))
fmax = define("fmax", lambda a, b: sp.Piecewise((a, F.isnan(b)), (b, F.isnan(a)), (b, a < b), (a, True)),
              kind="arith", integer_fn=sp.Max)
fmin = define("fmin", lambda a, b: sp.Piecewise((a, F.isnan(b)), (b, F.isnan(a)), (b, a > b), (a, True)),
              kind="arith", integer_fn=sp.Min)
fmod = define("fmod", F.fmod, 2, kind="arith", domain=(0.5, 4.0), on_booleans="int8")
logaddexp2 = define("logaddexp2", lambda a, b: F.logaddexp(a * sp.Float(np.log(2)), b * sp.Float(np.log(2)))
                    * sp.Float(1 / np.log(2)))
# Eq evaluates: SymPy's Piecewise drops a branch whose condition is an unevaluated Eq(0, 0) (heaviside(0, x) was NaN)
heaviside = define("heaviside", lambda x, h0: sp.Piecewise((0, x < 0), (h0, sp.Eq(x, 0)), (1, x > 0), (sp.nan, True)),
                   domain=(0.5, 2.0))
signbit = define("signbit", F.signbit, kind="compare", integer_fn=lambda x: x < 0)  # integers: no -0, no 1/0
isposinf = define("isposinf", lambda x: sp.And(F.isinf(x), x > 0), kind="compare")
isneginf = define("isneginf", lambda x: sp.And(F.isinf(x), x < 0), kind="compare")
positive = define("positive", lambda a: a, kind="arith", on_booleans=False)
fabs = define("fabs", sp.Abs)


# The names of symgrad's own elementwise ops (every op defined above), which user ops may not take.
LIBRARY_NAMES = frozenset(ELEMENTWISE)
