"""The forward-mode (JVP) pass: push tangents through a graph, node by node, in the active builder."""
from __future__ import annotations

from .. import ir
from ..ops.shape import zeros_like_value


def forward_pass(graph: ir.Graph, env: dict, tangents: dict) -> dict:
    """Tangents of the values the outputs read (id(value) -> tangent) given tangents of some graph inputs.

    env maps id(graph value) -> its value in the active builder; a missing tangent is zero. Nodes no output
    reads are skipped: the primal call of a custom_vjp function left dead in a reverse pass (whose value came from
    its rule's fwd) has no tangent rule, and jacfwd(jacrev(f)) never needs one (as JAX's hessian).
    """
    tangents = dict(tangents)
    live = _read_by_outputs(graph)
    for node in graph.nodes:
        if id(node.out) not in live:
            continue
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


def _read_by_outputs(graph: ir.Graph) -> set:
    """ids of the values the graph's outputs are computed from (themselves included)."""
    live = {id(v) for v in graph.outputs}
    for node in reversed(graph.nodes):
        if id(node.out) in live:
            live.update(id(v) for v in node.inputs)
    return live
