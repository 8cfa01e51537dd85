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
from ..core import Primitive, ShapeError, Tracer, UnsupportedOpError
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
    if expr.is_Symbol or d.is_Number or d.has(F.no_derivative):  # the marker names its function: keep it
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


def _only_nonzero_branch(expr):
    """The index of the one branch of a Piecewise `expr` that is not a literal 0, or None."""
    if not isinstance(expr, sp.Piecewise):
        return None
    nonzero = [k for k, pair in enumerate(expr.args) if not (pair.expr.is_Number and pair.expr == 0)]
    return nonzero[0] if len(nonzero) == 1 else None


def _factors(expr) -> list:
    """The factors of a product, nested products flattened, literal 1s dropped."""
    if isinstance(expr, sp.Mul):
        return [f for arg in expr.args for f in _factors(arg)]
    return [] if expr.is_Number and expr == 1 else [expr]


def _is_zero(expr) -> bool:
    return expr.is_Number and expr == 0


def _tree_size(expr) -> int:
    return sum(1 for _ in sp.preorder_traversal(expr))


_NEGATED_ORDER = {"<": sp.GreaterThan, "<=": sp.StrictGreaterThan, ">": sp.LessThan, ">=": sp.StrictLessThan}


def _negated(cond):
    """not cond, true where an ordering compares a NaN: SymPy writes ~(a > b) as a <= b, false there."""
    if isinstance(cond, (sp.Eq, sp.Ne)):
        return (sp.Ne if isinstance(cond, sp.Eq) else sp.Eq)(*cond.args, evaluate=False)
    if isinstance(cond, sp.core.relational.Relational) and cond.rel_op in _NEGATED_ORDER:
        flipped = _NEGATED_ORDER[cond.rel_op](cond.lhs, cond.rhs, evaluate=False)
        return sp.Or(flipped, F.isnan(cond.lhs), F.isnan(cond.rhs))
    if isinstance(cond, (sp.And, sp.Or)):
        return (sp.Or if isinstance(cond, sp.And) else sp.And)(*map(_negated, cond.args))
    return cond.args[0] if isinstance(cond, sp.Not) else sp.Not(cond)


def _split_zeros(pw):
    """(where, nonzero) for a Piecewise `pw` with a literal-0 branch among nonzero ones: the condition under
    which it takes a 0 branch, and the Piecewise of its other branches (equal to pw elsewhere)."""
    where, earlier, nonzero = [], [], []
    for pair in pw.args:
        if _is_zero(pair.expr):
            where.append(sp.And(pair.cond, *map(_negated, earlier)))
        else:
            nonzero.append((pair.expr, pair.cond))
        earlier.append(pair.cond)
    nonzero[-1] = (nonzero[-1][0], sp.true)
    return sp.Or(*where), sp.Piecewise(*nonzero)


@functools.lru_cache(maxsize=4096)
def fold_masks(expr):
    """A product with a mask factor (a Piecewise zero in every branch but one) as that Piecewise, the
    other factors moved into its nonzero branch: g*Piecewise((1, c), (0, True))*X is
    Piecewise((g*X, c), (0, True)), which is 0 where c is false even where X is NaN or infinite
    (a backend selects a branch; it does not multiply by 0). Each factor lands in one branch. A Piecewise
    with several nonzero branches and a zero one (maximum's derivative) is split first: 0 where it takes a
    zero branch, else the product with its other branches (d/da of exp(maximum(a, inf)) is 0, not 0 * inf)."""
    if not expr.args or expr.is_Atom:
        return expr
    args = [fold_masks(arg) for arg in expr.args]
    if not isinstance(expr, sp.Mul):
        return expr if all(a is b for a, b in zip(args, expr.args)) else expr.func(*args)
    factors = [f for arg in args for f in _factors(arg)]
    for i, factor in enumerate(factors):
        k = _only_nonzero_branch(factor)
        if k is not None:
            rest = sp.Mul(*factors[:i], *factors[i + 1:])
            inner = fold_masks(sp.Mul(factor.args[k].expr, rest)) if rest != 1 else factor.args[k].expr
            return sp.Piecewise(*[(inner if j == k else pair.expr, pair.cond) for j, pair in enumerate(factor.args)])
    for i, factor in enumerate(factors):
        if isinstance(factor, sp.Piecewise) and any(_is_zero(pair.expr) for pair in factor.args):
            where, nonzero = _split_zeros(factor)
            inner = fold_masks(sp.Mul(nonzero, *factors[:i], *factors[i + 1:]))
            return sp.Piecewise((0, where), (inner, True))
    return sp.Mul(*factors)


# A mask no larger than this (nodes of its expression tree) is repeated in each derivative it scales.
MASK_INLINE_NODES = 60


def _mask_operand(ct):
    """(expression, symbols, operands) of the ew node computing the cotangent `ct` when it is a small
    mask (see fold_masks), else None. Repeated inside the next derivative, its zeros stay zeros:
    the gradient of sg.where(a > 0, sg.sqrt(a), 0) at a <= 0 is 0, not 0 * (1/(2*sqrt(a))) = NaN
    (PyTorch's and JAX's answer), fused or not, compiled or eager."""
    producers = getattr(ct.builder, "producers", None) if isinstance(ct, Tracer) else None  # not eager's
    node = producers.get(id(ct.value)) if producers is not None else None
    if node is None or node.prim is not ew_p:
        return None
    expr = node.params["expr"]
    if _only_nonzero_branch(expr) is None or _tree_size(expr) > MASK_INLINE_NODES:
        return None
    return expr, node.params["args"], [Tracer(v, ct.builder) for v in node.inputs]


def _renamed(expr, symbols, taken):
    """`expr` over fresh symbols (named m0, m1, ... apart from `taken`) in place of `symbols`."""
    fresh = []
    for s in symbols:
        name = fresh_symbol(f"m{len(fresh)}", (*taken, *fresh)).name
        fresh.append(sp.Symbol(name, real=True) if s.is_real else sp.Symbol(name))
    return expr.xreplace(dict(zip(symbols, fresh))), tuple(fresh)


def _ew_vjp(ct, ans, *inputs, expr, args, dtype, name=None):
    cotangents = []
    mask = _mask_operand(ct)
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
        if mask is None:
            g = fresh_symbol("g", (*args, y))
            scale, symbols, operands = g, (g,), (ct,)
        else:
            scale, symbols = _renamed(mask[0], mask[1], (*args, y))
            operands = mask[2]
        cotangents.append(bind_ew(fold_masks(scale * d), (*symbols, *args, y), (*operands, *inputs, ans), x.dtype))
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
        terms.append(fold_masks(t_symbol * d))
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
        """The NumPy function of the node's expression, resolved once (eager plans call it per op, and cast its
        result to the node's dtype when it has another: without a cast of its own, a call less per op)."""
        return elementwise_function(attrs["expr"], attrs["args"], np.dtype(attrs["dtype"]), cast=False)


ew_p = ElementwisePrimitive("ew", _ew_shape, _ew_impl, vjp=_ew_vjp, jvp=_ew_jvp)
