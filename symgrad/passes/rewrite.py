"""The node-by-node rewriting loop that CSE and simplification share."""
from __future__ import annotations

from dataclasses import replace

from .. import ir


def rewrite_nodes(graph: ir.Graph, visit) -> ir.Graph:
    """Rebuild `graph`, calling visit(node) on each node with its inputs already rewired.

    visit returns the node to keep (possibly a new one), or a Value that replaces the node's
    output everywhere downstream, graph outputs included.
    """
    alias, nodes = {}, []
    for node in graph.nodes:
        inputs = tuple(alias.get(id(v), v) for v in node.inputs)
        if any(a is not b for a, b in zip(inputs, node.inputs)):
            node = replace(node, inputs=inputs)
        result = visit(node)
        if isinstance(result, ir.Value):
            alias[id(node.out)] = result
        else:
            nodes.append(result)
    return ir.Graph(list(graph.inputs), nodes, [alias.get(id(v), v) for v in graph.outputs], graph.name)
