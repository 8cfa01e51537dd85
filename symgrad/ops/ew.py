"""The one elementwise primitive `ew`, whose attribute is a SymPy expression over its inputs.

Derivatives come from `sympy.diff`, in the cheaper of two forms: written with the inputs, or
with the node's output `y` (tanh' = 1 - y**2), whichever has fewer ops. Its NumPy reference is
the expression printed as NumPy (numpy_expressions.py). The named ops users call
(sg.sin, +, sg.where ...) are in elementwise.py.
"""
from __future__ import annotations

import functools

import numpy as np
import sympy as sp

from .. import dtypes
from ..core import Primitive, ShapeError, UnsupportedOpError
from . import functions as F
from .numpy_expressions import elementwise_function


def fresh_symbol(base: str, taken) -> sp.Symbol:
    """A real symbol named `base` (or base1, base2, ...) not among `taken` symbols."""
    names = {s.name for s in taken}
    name, suffix = base, 1
    while name in names:
        name, suffix = f"{base}{suffix}", suffix + 1
    return sp.Symbol(name, real=True)


def _ew_shape(inputs, expr, args, dtype, name=None):
    if not inputs:
        raise ShapeError("ew needs at least one input")
    shape = inputs[0].shape
    for x in inputs[1:]:
        if x.shape != shape:
            raise ShapeError(f"ew inputs must have equal shapes (broadcast first): {shape} and {x.shape}")
    return shape, np.dtype(dtype)


def _ew_impl(*arrays, expr, args, dtype, name=None):
    return elementwise_function(expr, args, np.dtype(dtype))(*arrays)


# Functions constant between their jumps: derivative 0 (PyTorch's and JAX's convention), which
# SymPy leaves unevaluated as Derivative(floor(x), x), or Subs(Derivative(...), ...) inside a chain.
PIECEWISE_CONSTANT = (sp.floor, sp.ceiling, sp.sign, sp.Heaviside)


def _clean(derivative):
    """Replace distributional terms by the subgradient conventions PyTorch uses."""
    derivative = derivative.replace(sp.DiracDelta, lambda *a: sp.S.Zero)
    derivative = derivative.replace(sp.Heaviside, lambda x, *a: sp.Piecewise((1, x > 0), (0, True)))
    derivative = derivative.replace(lambda e: isinstance(e, sp.Derivative) and isinstance(e.expr, PIECEWISE_CONSTANT),
                                    lambda e: sp.S.Zero)
    derivative = derivative.replace(lambda e: isinstance(e, sp.Subs) and not e.expr.has(sp.Derivative),
                                    lambda e: e.doit())
    if derivative.has(sp.Derivative):
        raise UnsupportedOpError(f"cannot differentiate {derivative}: SymPy left an unevaluated derivative. Pass "
                                 "arguments the function is not differentiable in as Python numbers (they become "
                                 "constants of the expression), or write the op with functions SymPy differentiates")
    return derivative


@functools.lru_cache(maxsize=4096)
def derivative(expr, args, index):
    """(d expr / d args[index], y): the form with fewer operations, possibly written with the
    node's output, which it then calls `y` (a symbol distinct from args)."""
    y = fresh_symbol("y", args)
    marked = F.mark_variable_powers(expr)
    d = _clean(sp.diff(marked, args[index]))
    if expr.is_Symbol or d.is_Number:
        return F.unmark_variable_powers(d), y
    with_output = F.unmark_variable_powers(d.subs(marked, y))
    d = F.unmark_variable_powers(d)
    if with_output != d and sp.count_ops(with_output) < sp.count_ops(d):
        return with_output, y
    return d, y


def _derivative_of(name, expr, args, index):
    """`derivative`, with an error that names the op (`name`, None for an unnamed expression)."""
    try:
        return derivative(expr, args, index)
    except UnsupportedOpError as err:
        if name is None:
            raise
        raise UnsupportedOpError(f"the elementwise op {name!r}: {err}") from None


def bind_ew(expr, symbols, operands, dtype, name=None):
    """Emit an ew node over the operands whose symbols occur in expr (others are dropped)."""
    used = [(s, x) for s, x in zip(symbols, operands) if expr.has(s)]
    if not used:  # a constant expression: keep one operand for the shape
        used = [(symbols[0], operands[0])]
    attrs = {"expr": expr, "args": tuple(s for s, _ in used), "dtype": np.dtype(dtype)}
    if name:
        attrs["name"] = name
    return ew_p(*[x for _, x in used], **attrs)


def _ew_vjp(ct, ans, *inputs, expr, args, dtype, name=None):
    cotangents = []
    for i, x in enumerate(inputs):
        if not dtypes.is_float(x.dtype):
            cotangents.append(None)
            continue
        d, y = _derivative_of(name, expr, args, i)
        if d == 0:
            cotangents.append(None)
            continue
        if d == 1 and ct.dtype == x.dtype:  # the cotangent passes through unchanged
            cotangents.append(ct)
            continue
        g = fresh_symbol("g", (*args, y))
        cotangents.append(bind_ew(g * d, (g, *args, y), (ct, *inputs, ans), x.dtype))
    return cotangents


def _ew_jvp(tangents, ans, *inputs, expr, args, dtype, name=None):
    if not dtypes.is_float(dtype):
        return None
    terms, symbols, operands = [], [], []
    for i, (t, x) in enumerate(zip(tangents, inputs)):
        if t is None or not dtypes.is_float(x.dtype):
            continue
        d, y = _derivative_of(name, expr, args, i)
        t_symbol = fresh_symbol(f"t{i}", (*args, y))
        terms.append(t_symbol * d)
        symbols.append(t_symbol)
        operands.append(t)
    total = sp.Add(*terms)
    if not terms or total == 0:
        return None
    y = fresh_symbol("y", args)
    return bind_ew(total, (*symbols, *args, y), (*operands, *inputs, ans), dtype)


class ElementwisePrimitive(Primitive):
    def format_op(self, node, namer):
        params = node.params
        return params["name"] if "name" in params else f"ew[{params['expr']}]"

    def rule_name(self, node):
        params = node.params
        return f"{params['name']} (SymPy)" if "name" in params else "ew (SymPy)"

    def evaluator(self, attrs):
        """The NumPy function of the node's expression, resolved once (eager plans call it per op)."""
        return elementwise_function(attrs["expr"], attrs["args"], np.dtype(attrs["dtype"]))


ew_p = ElementwisePrimitive("ew", _ew_shape, _ew_impl, vjp=_ew_vjp, jvp=_ew_jvp)
