"""`sg.symbolic(f, *args)`: the closed-form SymPy expression of f's output and gradient.

The function is traced to the ordinary IR (so exactly the graph the compiler sees), and
the graph is then evaluated over NumPy object arrays whose elements are SymPy
expressions: each argument element becomes a real symbol (`x`, or `x_0, x_1, ...` for
arrays), `ew` nodes substitute their operands into their SymPy expression element by
element, and structural nodes reuse their NumPy reference implementation, which works
on object arrays. The gradient is `sympy.diff` of a scalar output by each symbol.
This is meant for scalars and small arrays: every element is its own expression.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy as sp

from . import ir, pytree
from .ops.ew import ew_p
from .ops.indexing import scatter_add_p, take_p
from .core import TracerError, const_p
from .ops.control import (Interpreter, result_p, run_scan, run_switch, run_while, run_while_vjp, scan_p, switch_p,
                          while_p, while_vjp_p)
from .ops.reduce import reduce_max_p, reduce_min_p, reduce_prod_p
from .ops.shape import convert_p, reduce_sum_p
from .passes.inline import inline_calls
from .tracing import argument_names, trace_flat

MAX_ELEMENTS = 1000


@dataclass
class Symbolic:
    """Result of `sg.symbolic`.

    output:   a SymPy expression (scalar output) or a sympy Array of expressions.
    gradient: for a scalar output, one entry per argument: an expression for a scalar
              argument, a sympy Array shaped like the argument otherwise; None when the
              output is not a scalar (differentiate `output` yourself then).
    symbols:  one entry per argument: a Symbol for a scalar, a sympy Array of Symbols.
    """

    output: object
    gradient: object
    symbols: tuple

    def __repr__(self):
        return f"Symbolic(output={self.output}, gradient={self.gradient})"


def _symbols_for(name: str, shape) -> np.ndarray:
    """An object array of real symbols: `name` for a scalar, name_i_j... for arrays."""
    if shape == ():
        return np.array(sp.Symbol(name, real=True), dtype=object)
    out = np.empty(shape, dtype=object)
    for index in np.ndindex(shape):
        out[index] = sp.Symbol(f"{name}_{'_'.join(map(str, index))}", real=True)
    return out


def _as_sympy(array) -> np.ndarray:
    """A constant ndarray as an object array of exact-ish SymPy numbers."""
    array = np.asarray(array)
    out = np.empty(array.shape, dtype=object)
    for index in np.ndindex(array.shape):
        value = array[index]
        if array.dtype.kind == "b":
            out[index] = sp.true if value else sp.false
        elif array.dtype.kind in "iu":
            out[index] = sp.Integer(int(value))
        else:
            value = float(value)
            out[index] = sp.Integer(int(value)) if value.is_integer() else sp.Float(value)
    return out


def _obj(x) -> np.ndarray:
    return np.asarray(x, dtype=object)


def _eval_ew(node, operands):
    params = node.params
    expr, args = params["expr"], params["args"]
    shape = node.out.shape
    out = np.empty(shape, dtype=object)
    for index in np.ndindex(shape):
        mapping = {s: sp.sympify(op[index]) for s, op in zip(args, operands)}
        out[index] = expr.xreplace(mapping)
    return out


def _reduce(combine, identity=None):
    """A reduction building one n-ary SymPy node per output element (np.sum would nest binary ones,
    and np.max cannot compare symbols)."""
    def rule(node, operands):
        (x,) = operands
        axes = tuple(node.params["axes"])
        keep = [i for i in range(x.ndim) if i not in axes]
        moved = np.transpose(x, keep + list(axes))
        flat = moved.reshape(moved.shape[:len(keep)] + (-1,))
        out = np.empty(flat.shape[:-1], dtype=object)
        for index in np.ndindex(out.shape):
            items = list(flat[index])
            out[index] = combine(*items) if items else identity
        return out
    return rule


def _by_impl(node, operands):
    """The primitive's NumPy reference impl, which works on object arrays of SymPy values."""
    try:
        result = node.prim.impl(*operands, **node.params)
    except Exception as err:  # pragma: no cover - depends on NumPy's object support
        raise NotImplementedError(f"sg.symbolic: cannot evaluate {node.prim.name} on SymPy values: {err}") from err
    result = _obj(result)
    if result.shape != node.out.shape:
        result = result.reshape(node.out.shape)
    return np.vectorize(sp.sympify, otypes=[object])(result) if result.size else result


def _with_integer_index(node, operands):
    """The impl, given the index operand (SymPy integers) as concrete int64."""
    values, index = operands
    index = np.vectorize(int, otypes=[np.int64])(index) if index.size else index.astype(np.int64)
    return _by_impl(node, [values, index])


def _run(graph, operands) -> list:
    """A sub-graph's outputs over SymPy values."""
    env = {id(v): x for v, x in zip(graph.inputs, operands)}
    for node in graph.nodes:
        env[id(node.out)] = _eval_node(node, [env[id(v)] for v in node.inputs])
    return [env[id(v)] for v in graph.outputs]


def _concrete(value, what) -> int:
    """A SymPy value a loop or a branch decides on, as a Python int; a clear error when it is symbolic."""
    value = value[()] if isinstance(value, np.ndarray) else value
    if not getattr(value, "is_number", False) and value not in (sp.true, sp.false):
        raise TracerError(f"sg.symbolic: {what} depends on the symbols ({value}); a closed form cannot "
                          "choose a branch or a step count")
    return int(bool(value)) if value in (sp.true, sp.false) else int(value)


# Loops unrolled and branches chosen over SymPy values (their decisions must be concrete).
SYMPY_VALUES = Interpreter(_run, _concrete, lambda length, v: np.empty((length, *v.shape), dtype=object),
                           lambda v: _as_sympy(np.zeros(v.shape, v.dtype)))


def _interpreted(run):
    return lambda node, operands: run(SYMPY_VALUES, operands, **node.params)


# SYMPY_RULES[prim](node, operands) -> node's value over object arrays of SymPy values, for the
# primitives whose NumPy impl cannot compute it; every other primitive runs its impl (_by_impl).
SYMPY_RULES = {
    ew_p: _eval_ew,
    const_p: lambda node, ops: _as_sympy(node.params["value"].array),
    convert_p: lambda node, ops: _obj(ops[0]).copy(),
    reduce_sum_p: _reduce(lambda *xs: sp.Add(*xs), sp.S.Zero),
    reduce_prod_p: _reduce(lambda *xs: sp.Mul(*xs), sp.S.One),
    reduce_max_p: _reduce(sp.Max),
    reduce_min_p: _reduce(sp.Min),
    take_p: _with_integer_index,
    scatter_add_p: _with_integer_index,
    scan_p: _interpreted(run_scan),
    while_p: _interpreted(run_while),
    while_vjp_p: _interpreted(run_while_vjp),
    switch_p: _interpreted(run_switch),
    result_p: lambda node, ops: ops[0][node.params["index"]],
}


def _eval_node(node, operands):
    value = SYMPY_RULES.get(node.prim, _by_impl)(node, operands)
    return value if isinstance(value, tuple) else _obj(value)


def _to_sympy(array: np.ndarray):
    if array.shape == ():
        return array[()]
    return sp.Array(array.tolist(), array.shape)


def symbolic(f, *args, simplify=False) -> Symbolic:
    """Closed-form SymPy output (and gradient, for a scalar output) of f at args' shapes.

    Arguments are only used for their shapes and dtypes. Each element of an argument is a
    real SymPy symbol named after the parameter (`x`, or `x_0, x_1, ...`). Raises
    ValueError when the arguments or graph values hold more than 1000 elements, since the
    expressions grow with every element.
    """
    leaves, tree = pytree.flatten(list(args))
    total = sum(int(np.size(leaf)) for leaf in leaves)
    if total > MAX_ELEMENTS:
        raise ValueError(f"sg.symbolic is for scalars and small arrays: the arguments hold {total} elements "
                         f"(more than {MAX_ELEMENTS}); use sg.trace/sg.grad for large arrays")
    graph, out_tree, captures = trace_flat(f, args)
    if captures:
        raise TypeError("sg.symbolic: the function captured traced values from an enclosing trace")
    graph = inline_calls(ir.verify(graph))  # a custom-derivative function is its function here
    for node in graph.nodes:
        if node.out.size > MAX_ELEMENTS:
            raise ValueError(f"sg.symbolic is for small arrays: an intermediate value of shape {node.out.shape} "
                             f"holds more than {MAX_ELEMENTS} elements")
    leaf_names = pytree.leaf_names(list(args), argument_names(f, len(args)))
    env, leaf_symbols = {}, []
    for value, name in zip(graph.inputs, leaf_names):
        name = "".join(c if c.isalnum() else "_" for c in str(name)).strip("_") or "x"
        symbols = _symbols_for(name, value.shape)
        env[id(value)] = symbols
        leaf_symbols.append(symbols)
    for node in graph.nodes:
        env[id(node.out)] = _eval_node(node, [env[id(v)] for v in node.inputs])
    outputs = [env[id(v)] for v in graph.outputs]
    if simplify:
        outputs = [np.vectorize(sp.simplify, otypes=[object])(o) if o.size else o for o in outputs]
    per_arg_symbols = pytree.unflatten(tree, [_to_sympy(s) for s in leaf_symbols])
    gradient = None
    if len(outputs) == 1 and outputs[0].shape == ():
        out = outputs[0][()]
        grads = []
        for value, symbols in zip(graph.inputs, leaf_symbols):
            if value.dtype.kind != "f":
                grads.append(None)
                continue
            g = np.vectorize(lambda s: sp.diff(out, s), otypes=[object])(symbols) if symbols.size else symbols
            if simplify and g.size:
                g = np.vectorize(sp.simplify, otypes=[object])(g)
            grads.append(_to_sympy(g))
        gradient = tuple(pytree.unflatten(tree, grads))
    output = pytree.unflatten(out_tree, [_to_sympy(o) for o in outputs])
    return Symbolic(output, gradient, tuple(per_arg_symbols))

