"""Common-subexpression elimination: a node equal to an earlier one (op, attrs, inputs) reuses it."""
from __future__ import annotations

from dataclasses import replace

from .. import ir


def cse(graph: ir.Graph) -> ir.Graph:
    """Drop each node whose `key()` (after earlier replacements) matches a kept node's."""
    alias, seen, kept = {}, {}, []
    for node in graph.nodes:
        inputs = tuple(alias.get(id(v), v) for v in node.inputs)
        if any(a is not b for a, b in zip(inputs, node.inputs)):
            node = replace(node, inputs=inputs)
        first = seen.setdefault(node.key(), node)
        if first is node:
            kept.append(node)
        else:
            alias[id(node.out)] = first.out
    outputs = [alias.get(id(v), v) for v in graph.outputs]
    return ir.Graph(list(graph.inputs), kept, outputs, graph.name)
