"""Constant folding: a node computed only from `const` nodes becomes a `const` node."""
from __future__ import annotations

import numpy as np
import sympy as sp

from .. import ir
from ..ops.elementwise import bakeable, bakes_faithfully
from ..ops.ew import ew_p
from ..core import const_p
from ..ops.shape import broadcast_to_p, reshape_p, transpose_p

# Primitives that only rearrange or repeat their input's values: a uniform (single-valued) input
# gives a uniform result.
UNIFORM_PRESERVING = frozenset({broadcast_to_p, reshape_p, transpose_p})


def _worth_folding(node: ir.Node, arrays) -> bool:
    """False when the result outgrows every input (a broadcast of a scalar): baking it would
    store a large array where a cheap broadcast view does."""
    return node.out.size <= max(a.size for a in arrays)


def _sympy_number(value):
    if isinstance(value, (bool, np.bool_)):
        return sp.true if value else sp.false
    return sp.Integer(int(value)) if isinstance(value, (int, np.integer)) else sp.Float(float(value))


def _inline_uniform_inputs(node: ir.Node, uniform: dict) -> ir.Node:
    """Write uniform constant inputs of an ew node into its expression (x*broadcast(1.0) -> x)."""
    params = node.params
    keep = [(s, v) for s, v in zip(params["args"], node.inputs) if id(v) not in uniform]
    if len(keep) == len(node.inputs):
        return node
    values = {s: uniform[id(v)] for s, v in zip(params["args"], node.inputs) if id(v) in uniform}
    replacements = {s: _sympy_number(value) for s, value in values.items()}
    if not all(map(bakeable, values.values())) or not bakes_faithfully(params["expr"], replacements):  # keep them
        return node
    expr = params["expr"].xreplace(replacements)
    if not keep:  # the result is still shaped by an input: keep the first one
        keep = [(params["args"][0], node.inputs[0])]
    attrs = {**params, "expr": expr, "args": tuple(s for s, _ in keep)}
    attrs.pop("name", None)
    return ir.Node(ew_p, tuple(v for _, v in keep), ir.freeze_attrs(attrs), node.out, node.meta)


def fold(graph: ir.Graph) -> ir.Graph:
    """Evaluate nodes whose inputs are all constants with the primitive's NumPy reference impl,
    and write single-valued constants into the elementwise expressions that read them."""
    constants, uniform, nodes = {}, {}, []
    for node in graph.nodes:
        if node.prim is ew_p:
            node = _inline_uniform_inputs(node, uniform)
            expr = node.params["expr"]
            if not expr.free_symbols and (expr.is_Number or expr in (sp.true, sp.false)):
                uniform[id(node.out)] = bool(expr) if expr.is_Boolean else node.out.dtype.type(float(expr)).item()
        if node.prim in UNIFORM_PRESERVING and id(node.inputs[0]) in uniform:
            uniform[id(node.out)] = uniform[id(node.inputs[0])]
        if node.prim is const_p:
            constants[id(node.out)] = node.params["value"].array
        elif node.inputs and all(id(v) in constants for v in node.inputs) and not ir.is_tuple_dtype(node.out.dtype):
            # (a loop or a switch is never run at compile time: it may run for long)
            arrays = [constants[id(v)] for v in node.inputs]
            if _worth_folding(node, arrays):
                array = np.asarray(node.prim.impl(*arrays, **node.params), dtype=node.out.dtype)
                attrs = ir.freeze_attrs({"value": ir.Constant(array)})
                node = ir.Node(const_p, (), attrs, node.out, node.meta)
                constants[id(node.out)] = node.params["value"].array
        if node.prim is const_p:
            array = node.params["value"].array
            if array.size == 1:
                uniform[id(node.out)] = array.reshape(()).item()
        nodes.append(node)
    return ir.Graph(list(graph.inputs), nodes, list(graph.outputs), graph.name)
