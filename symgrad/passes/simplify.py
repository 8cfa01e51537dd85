"""Algebraic simplification of structural no-ops: identity reshapes, transposes, broadcasts,
converts and `ew` nodes, and collapsing of reshape/reshape and transpose/transpose pairs."""
from __future__ import annotations

from dataclasses import replace

from .. import ir
from ..ops.shape import reshape_p, transpose_p
from .rewrite import rewrite_nodes


def _identity_source(node: ir.Node):
    """The input value `node` merely passes through, or None."""
    x = node.inputs[0] if node.inputs else None
    name, params = node.prim.name, node.params
    if name in ("reshape", "broadcast_to") and tuple(params["shape"]) == x.shape:
        return x
    if name == "transpose" and tuple(params["perm"]) == tuple(range(x.ndim)):
        return x
    if name == "convert" and params["dtype"] == x.dtype:
        return x
    if name == "ew" and params["expr"] in params["args"]:
        source = node.inputs[params["args"].index(params["expr"])]
        return source if (source.shape, source.dtype) == (node.out.shape, node.out.dtype) else None
    return None


def _collapse(node: ir.Node, producers: dict) -> ir.Node:
    """reshape(reshape(x)) -> reshape(x); transpose(transpose(x, p), q) -> transpose(x, p[q])."""
    inner = producers.get(id(node.inputs[0])) if node.inputs else None
    if inner is None or inner.prim is not node.prim or node.prim not in (reshape_p, transpose_p):
        return node
    if node.prim is reshape_p:
        return replace(node, inputs=inner.inputs)
    outer_perm, inner_perm = node.params["perm"], inner.params["perm"]
    perm = tuple(inner_perm[axis] for axis in outer_perm)
    return replace(node, inputs=inner.inputs, attrs=ir.freeze_attrs({"perm": perm}))


def simplify(graph: ir.Graph) -> ir.Graph:
    """Rewire uses of pass-through nodes to their sources; the nodes left unused fall to dce."""
    producers = {}

    def visit(node):
        node = _collapse(node, producers)
        source = _identity_source(node)
        if source is not None:
            return source
        producers[id(node.out)] = node
        return node

    return rewrite_nodes(graph, visit)
