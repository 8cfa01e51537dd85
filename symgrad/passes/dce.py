"""Dead-code elimination: keep only the nodes the outputs depend on."""
from __future__ import annotations

from .. import ir


def dce(graph: ir.Graph) -> ir.Graph:
    live = {id(v) for v in graph.outputs}
    kept = []
    for node in reversed(graph.nodes):
        if id(node.out) in live:
            kept.append(node)
            live.update(id(v) for v in node.inputs)
    return ir.Graph(list(graph.inputs), kept[::-1], list(graph.outputs), graph.name)
