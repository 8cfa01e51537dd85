"""Algebraic simplification of structural no-ops: identity reshapes, transposes, broadcasts,
converts and `ew` nodes, and collapsing of reshape/reshape and transpose/transpose pairs."""
from __future__ import annotations

from dataclasses import replace

from .. import ir
from ..ops.ew import ew_p
from ..ops.shape import broadcast_to_p, convert_p, reshape_p, transpose_p
from .rewrite import rewrite_nodes


def _same_shape(node: ir.Node):
    x = node.inputs[0]
    return x if tuple(node.params["shape"]) == x.shape else None


def _identity_perm(node: ir.Node):
    x = node.inputs[0]
    return x if tuple(node.params["perm"]) == tuple(range(x.ndim)) else None


def _same_dtype(node: ir.Node):
    x = node.inputs[0]
    return x if node.params["dtype"] == x.dtype else None


def _bare_argument(node: ir.Node):
    """An `ew` node whose expression is one of its arguments, of the output's shape and dtype."""
    params = node.params
    if params["expr"] not in params["args"]:
        return None
    source = node.inputs[params["args"].index(params["expr"])]
    return source if (source.shape, source.dtype) == (node.out.shape, node.out.dtype) else None


# PASS_THROUGH[prim](node) -> the input value the node merely passes on, or None.
PASS_THROUGH = {
    reshape_p: _same_shape,
    broadcast_to_p: _same_shape,
    transpose_p: _identity_perm,
    convert_p: _same_dtype,
    ew_p: _bare_argument,
}


def _compose_transposes(node: ir.Node, inner: ir.Node) -> ir.Node:
    """transpose(transpose(x, p), q) -> transpose(x, p[q])."""
    perm = tuple(inner.params["perm"][axis] for axis in node.params["perm"])
    return replace(node, inputs=inner.inputs, attrs=ir.freeze_attrs({"perm": perm}))


# COLLAPSE[prim](node, inner) -> one node doing what node applied to `inner`, a node of the same
# primitive, does.
COLLAPSE = {
    reshape_p: lambda node, inner: replace(node, inputs=inner.inputs),
    transpose_p: _compose_transposes,
}


def _collapse(node: ir.Node, producers: dict) -> ir.Node:
    rule = COLLAPSE.get(node.prim)
    inner = producers.get(id(node.inputs[0])) if rule is not None else None
    return node if inner is None or inner.prim is not node.prim else rule(node, inner)


def simplify(graph: ir.Graph) -> ir.Graph:
    """Collapse pairs (COLLAPSE), then rewire uses of pass-through nodes (PASS_THROUGH) to their
    sources; the nodes left unused fall to dce."""
    producers = {}

    def visit(node):
        node = _collapse(node, producers)
        pass_through = PASS_THROUGH.get(node.prim)
        source = pass_through(node) if pass_through is not None else None
        if source is not None:
            return source
        producers[id(node.out)] = node
        return node

    return rewrite_nodes(graph, visit)
