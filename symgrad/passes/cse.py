"""Common-subexpression elimination: a node equal to an earlier one (op, attrs, inputs) reuses it."""
from __future__ import annotations

from .. import ir
from .rewrite import rewrite_nodes


def cse(graph: ir.Graph) -> ir.Graph:
    """Drop each node whose `key()` (after earlier replacements) matches a kept node's."""
    seen = {}

    def visit(node):
        first = seen.setdefault(node.key(), node)
        return node if first is node else first.out

    return rewrite_nodes(graph, visit)
