"""The forward-mode (JVP) pass: push tangents through a graph, node by node, in the active builder."""
from __future__ import annotations

from .. import ir
from ..ops.shape import zeros_like_value


def forward_pass(graph: ir.Graph, env: dict, tangents: dict) -> dict:
    """Tangents of every value (id(value) -> tangent) given tangents of some graph inputs.

    env maps id(graph value) -> its value in the active builder; a missing tangent is zero.
    """
    tangents = dict(tangents)
    for node in graph.nodes:
        in_tangents = [tangents.get(id(v)) for v in node.inputs]
        if all(t is None for t in in_tangents) or not ir.is_differentiable(node.out.dtype):
            continue
        inputs = [env[id(v)] for v in node.inputs]
        if node.prim.jvp is not None:
            tangent = node.prim.jvp(in_tangents, env[id(node.out)], *inputs, **node.params)
        elif node.prim.linear:  # the tangent of a linear map is the map of the tangents
            filled = [t if t is not None else zeros_like_value(x) for t, x in zip(in_tangents, inputs)]
            tangent = node.prim(*filled, **node.params)
        else:
            raise NotImplementedError(f"primitive {node.prim.name!r} has no forward-mode rule")
        if isinstance(tangent, list) and all(t is None for t in tangent):  # a tuple value's, all zero
            tangent = None
        if tangent is not None:
            tangents[id(node.out)] = tangent
    return tangents
