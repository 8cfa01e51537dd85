"""ELEMENTWISE: every elementwise op built so far, by name (elementwise.py fills it).

It sits low in the ops layer so that the expression printers' errors can name the ops
that use a function no backend lowers.
"""
import numpy as np
import sympy as sp

from .. import dtypes

ELEMENTWISE: dict = {}


def input_symbol(index: int, dtype) -> sp.Symbol:
    """The symbol for input `index`: real for numbers, plain (usable as a condition) for bool."""
    return sp.Symbol(f"x{index}") if np.dtype(dtype) == dtypes.BOOL else sp.Symbol(f"x{index}", real=True)


def ops_using(function_class) -> list[str]:
    """Names of registered elementwise ops whose expression or first derivatives use `function_class`."""
    names = []
    for name, op in list(ELEMENTWISE.items()):
        symbols = [input_symbol(i, float) for i in range(op.arity)]
        try:
            expr = sp.sympify(op.fn(*symbols))
            exprs = [expr, *(sp.diff(expr, s) for s in symbols)]
        except Exception:  # noqa: BLE001 - a builder that needs other argument kinds: not this one
            continue
        if any(e.has(function_class) for e in exprs):
            names.append(name)
    return names
