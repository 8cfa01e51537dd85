"""Elementwise fusion: an `ew` node used once, by another `ew` node, is substituted into it
with SymPy, so a chain of elementwise ops becomes one node (one loop, no temporaries)."""
from __future__ import annotations

import numpy as np
import sympy as sp

from .. import dtypes, ir
from ..ops.elementwise_registry import input_symbol
from ..ops.ew import ew_p

# Fused expressions larger than this (nodes of the expression tree: one or two per operation) are
# left unfused. Counted by walking the tree: sympy.count_ops, which rewrites quotients to count
# them, cost a third of the pass.
MAX_FUSED_NODES = 300


def _compute_dtype(node: ir.Node):
    """The one numeric dtype an `ew` node computes in (bool inputs are conditions), or None."""
    numeric = {v.dtype for v in (*node.inputs, node.out) if v.dtype != dtypes.BOOL}
    return numeric.pop() if len(numeric) == 1 else None


def _fusable(producer: ir.Node, consumer: ir.Node) -> bool:
    """Same compute dtype, or a bool producer feeding a condition."""
    if producer.out.dtype == dtypes.BOOL:
        return True
    compute = _compute_dtype(producer)
    return compute is not None and compute == _compute_dtype(consumer)


def _symbol(dtype, index: int) -> sp.Symbol:
    """A temporary symbol with the assumptions `input_symbol` gives this dtype."""
    return sp.Dummy(f"t{index}") if np.dtype(dtype) == dtypes.BOOL else sp.Dummy(f"t{index}", real=True)


def _fused(consumer: ir.Node, producers: dict):
    """The consumer with its fusable producers substituted in: (node, absorbed producers)."""
    operands, symbols, mapping, absorbed = [], {}, {}, []

    def symbol_of(value):
        if id(value) not in symbols:
            symbols[id(value)] = _symbol(value.dtype, len(operands))
            operands.append(value)
        return symbols[id(value)]

    params = consumer.params
    for arg, value in zip(params["args"], consumer.inputs):
        producer = producers.get(id(value))
        if producer is not None and _fusable(producer, consumer):
            inner = producer.params
            renamed = {a: symbol_of(v) for a, v in zip(inner["args"], producer.inputs)}
            mapping[arg] = inner["expr"].xreplace(renamed)
            absorbed.append(producer)
        else:
            mapping[arg] = symbol_of(value)
    if not absorbed:
        return consumer, []
    expr = params["expr"].xreplace(mapping)
    if _tree_size(expr) > MAX_FUSED_NODES:
        return consumer, []
    free = expr.free_symbols  # one walk of the expression, not one per operand
    used = [v for v in operands if symbols[id(v)] in free] or operands[:1]
    canonical = {symbols[id(v)]: input_symbol(i, v.dtype) for i, v in enumerate(used)}
    expr = expr.xreplace(canonical)
    attrs = {"expr": expr, "args": tuple(canonical.values()), "dtype": params["dtype"]}
    return ir.Node(ew_p, tuple(used), ir.freeze_attrs(attrs), consumer.out, dict(consumer.meta)), absorbed


def _tree_size(expr) -> int:
    return sum(1 for _ in sp.preorder_traversal(expr))


def fuse(graph: ir.Graph) -> ir.Graph:
    """Fuse single-use `ew` producers into their `ew` consumers, in one topological sweep."""
    uses = graph.consumers()  # graph outputs count as uses, so an output is never absorbed
    single = {}  # id(value) -> the (possibly already fused) ew node defining it, if used exactly once
    nodes, absorbed_ids = [], set()
    for node in graph.nodes:
        if node.prim is ew_p:
            node, absorbed = _fused(node, single)
            for producer in absorbed:
                absorbed_ids.add(id(producer))
                del single[id(producer.out)]
            if uses.get(id(node.out)) == 1:
                single[id(node.out)] = node
        nodes.append(node)
    nodes = [node for node in nodes if id(node) not in absorbed_ids]
    return ir.Graph(list(graph.inputs), nodes, list(graph.outputs), graph.name)
