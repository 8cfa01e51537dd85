"""The NumPy-style operators and methods of traced values (`t + u`, `t[key]`, `t.sum()`, `np.sin(t)`).

core.Tracer knows no op; `install` attaches these, as JAX attaches its array methods to its tracers.
"""
import functools
import sys

import numpy as np

from .. import dtypes
from ..core import Tracer, TracerError, fail, numpy_function_message, symgrad_equivalent, with_user_line
from ..ops import elementwise as E
from . import arrays, ordering, rearrange, ufuncs
from .arrays import (abs, add, astype, clip, divide, dot, equal, floor_divide, greater, greater_equal, less, less_equal,
                     logical_and, logical_not, logical_or, matmul, max, mean, min, mod, multiply, negative, not_equal,
                     power, prod, ravel, reshape, round, squeeze, std, subtract, sum, transpose, var)
from .indexing import getitem
from .updates import IndexUpdateHelper


def _array_ufunc(self, ufunc, method, *inputs, **kwargs):
    """Route NumPy's ufuncs (np.sin(t), ndarray + t) to the sg function of the same name, and scipy.special's
    (gammaln(t), expit(t)) to sg.scipy.special's; without one, say what symgrad has instead."""
    module = _ufunc_module(ufunc)
    name = {"true_divide": "divide", "absolute": "abs"}.get(ufunc.__name__, ufunc.__name__)
    function = (_BITWISE.get(name) or getattr(arrays, name, None) or getattr(ufuncs, name, None) if module == "numpy"
                else symgrad_equivalent(module, name))
    if function is None:
        raise TracerError(with_user_line(numpy_function_message(module, ufunc.__name__, self)))
    if method != "__call__" or kwargs:
        raise TracerError(with_user_line(
            f"np.{ufunc.__name__}{'.' + method if method != '__call__' else ''}"
            f"{'(' + ', '.join(f'{k}=' for k in kwargs) + ')' if kwargs else ''} is not supported on traced values; "
            f"use sg.{name} without keywords" + (" (sg.cummax / sg.cummin for maximum.accumulate / minimum.accumulate)"
                                                 if method == "accumulate" else "")))
    return function(*inputs)


def _ufunc_module(ufunc) -> str:
    """The module offering `ufunc`: numpy, or scipy.special (whose functions are ufuncs too)."""
    if getattr(np, ufunc.__name__, None) is ufunc:
        return "numpy"
    special = sys.modules.get("scipy.special")
    return "scipy.special" if getattr(special, ufunc.__name__, None) is ufunc else "numpy"


def _reflect(fn):
    return lambda self, other: fn(other, self)


def install():
    """Give Tracer NumPy's operators, methods and ufunc routing (called once, by the package)."""
    methods = {
        "__add__": add, "__radd__": _reflect(add), "__sub__": subtract, "__rsub__": _reflect(subtract),
        "__mul__": multiply, "__rmul__": _reflect(multiply), "__truediv__": divide,
        "__rtruediv__": _reflect(divide), "__pow__": power, "__rpow__": _reflect(power),
        "__mod__": mod, "__rmod__": _reflect(mod), "__floordiv__": floor_divide,
        "__rfloordiv__": _reflect(floor_divide), "__divmod__": lambda self, other: (floor_divide(self, other), mod(self, other)),
        "__rdivmod__": lambda self, other: (floor_divide(other, self), mod(other, self)),
        "__round__": lambda self, ndigits=None: round(self, ndigits or 0), "round": _reduction_method(round),
        "__matmul__": matmul, "__rmatmul__": _reflect(matmul), "__neg__": negative,
        "__pos__": lambda self: self, "__abs__": abs, "__lt__": less, "__le__": less_equal,
        "__gt__": greater, "__ge__": greater_equal, "__eq__": equal, "__ne__": not_equal,
        "__invert__": _BITWISE["invert"], "__and__": _BITWISE["bitwise_and"], "__rand__": _BITWISE["bitwise_and"],
        "__or__": _BITWISE["bitwise_or"], "__ror__": _BITWISE["bitwise_or"], "__xor__": _BITWISE["bitwise_xor"],
        "__rxor__": _BITWISE["bitwise_xor"], "__lshift__": _shift("<<"), "__rshift__": _shift(">>"),
        "__getitem__": getitem, "astype": astype, "dot": dot, "ravel": ravel, "flatten": ravel,
        "reshape": lambda self, *shape: reshape(self, shape[0] if len(shape) == 1 else shape),
        "transpose": lambda self, *axes: transpose(self, (axes[0] if len(axes) == 1 else axes) or None),
        "squeeze": squeeze, "clip": clip, "T": property(lambda self: transpose(self)),
        "at": property(IndexUpdateHelper), "__setitem__": _no_item_assignment,
    }
    methods.update((fn.__name__, _reduction_method(fn)) for fn in (sum, mean, max, min, prod, var, std))
    # NumPy's array methods np.argmax(t), np.cumsum(t), np.trace(t), np.repeat(t, n), np.all(t) ... call
    methods.update((fn.__name__, _reduction_method(fn)) for fn in (
        arrays.cumsum, arrays.cumprod, ordering.argmax, ordering.argmin, ordering.argsort, ordering.all, ordering.any,
        rearrange.trace, rearrange.diagonal, rearrange.repeat))
    for name, fn in methods.items():
        if isinstance(fn, E.ElementwiseOp):  # not a function, so it would not bind `self`
            fn = _as_method(fn)
        setattr(Tracer, name, fn)
    Tracer.__array_ufunc__ = _array_ufunc


def _no_item_assignment(self, key, value):
    """`x[key] = v` on a traced value: it cannot change, so say how to make the new array."""
    raise TracerError(with_user_line(
        f"item assignment into a traced array {self.value.type_str()}: traced values cannot change in place. "
        "Write the updated array as a new value, as JAX does: x = x.at[key].set(v) (or .add(v), .multiply(v), "
        ".min(v), .max(v)); gradients flow to both x and v"))


def _boolean_only(logical, operator):
    """`&`, `|`, `^`, `~` on booleans (masks built from comparisons). On integers NumPy's operators are bitwise,
    which symgrad has no op for: a clear error, not the logical result."""
    def method(*operands):
        for operand in operands:
            dtype = operand.dtype if isinstance(operand, Tracer) else np.asarray(operand).dtype
            if dtype != dtypes.BOOL:
                fail(f"'{operator}' on a traced value of dtype {dtype}: NumPy's bitwise operation is not supported; "
                     "use it on booleans (comparisons), or sg.logical_and / logical_or / logical_not", TracerError)
        return logical(*operands)
    return method


# NumPy's bitwise ufuncs and operators, on booleans (all symmetric: the reflected operators are the same)
_BITWISE = {"invert": _boolean_only(logical_not, "~"), "bitwise_and": _boolean_only(logical_and, "&"),
            "bitwise_or": _boolean_only(logical_or, "|"), "bitwise_xor": _boolean_only(not_equal, "^")}


def _shift(operator):
    """`x << n` and `x >> n` of an integer array by a Python int n, as NumPy's bits: the wrapping product
    x * 2**n and the floor quotient x // 2**n (both exact on both backends; a shift by the sign bit, whose 2**n
    does not fit the dtype, multiplies by -2**n, the same bits, or is the sign). Any other shift is a clear error."""
    def method(self, n):
        bits = self.dtype.itemsize * 8
        if self.dtype.kind not in "iu" or type(n) is not int or not 0 <= n < bits:
            fail(f"'{operator}' on a traced value of dtype {self.dtype} by {n!r}: symgrad shifts integer arrays by a "
                 f"Python int in [0, {bits}) only", TracerError)
        factor = 2 ** n
        fits = factor <= np.iinfo(self.dtype).max
        if operator == "<<":
            return multiply(self, factor if fits else factor - 2 ** bits)
        return floor_divide(self, factor) if fits else astype(less(self, 0), self.dtype) * -1
    return method


def _reduction_method(reduction):
    """A reduction as a method taking NumPy's keywords too: np.sum(t), np.mean(t), np.std(t, ddof=1) ... on a
    traced value call t.sum(axis=..., dtype=..., out=...) (as on any array-like), so they work as sg.sum does."""
    def method(self, *args, dtype=None, out=None, **kwargs):
        if out is not None:
            fail(f"{reduction.__name__}(out=...): a traced value cannot be written into an array; "
                 "use the returned value", TracerError)
        return reduction(self if dtype is None else astype(self, dtype), *args, **kwargs)
    return functools.wraps(reduction)(method)


def _as_method(op):
    return lambda *args: op(*args)

