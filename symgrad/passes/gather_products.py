"""Products of gathered rows as gathers of a product: take(E, idx) @ W -> take(E @ W, idx) when E has at most half
as many rows as idx picks.

An embedding followed by a linear map (nn.Embedding into nn.Linear or a recurrent layer's input projection: a
character model picks 1280 rows of a 30-row table) multiplies the table's rows again for every time they are picked.
Applied before differentiation, the reverse pass then sums the picked rows' cotangents into the table's rows first
(scatter_add), so the table's and W's gradients are products of the table's size too: three products of the
picked rows become three of the table's. Reshapes and transposes between the gather and the product that move
whole rows (an nn.LSTM's batch_first swap) move the product's rows after the gather (moving the indices instead
made each gathered element compute its index through the moves: a gather 5 times slower).
"""
from __future__ import annotations

import math

from .. import ir
from ..ops.indexing import take_p
from ..ops.linalg import matmul_p
from ..ops.shape import reshape_p, transpose_p
from .dce import dce
from .scan_products import typed_node


def gather_products(graph: ir.Graph) -> ir.Graph:
    """Each product `rows @ W` (W a matrix) whose rows are rows of a matrix E gathered by take along axis 0, then
    moved by row-preserving reshapes and transposes, written as take(E @ W, idx) moved alike, where E has at most
    half the product's rows."""
    producers, nodes, changed = graph.producers(), [], False
    for node in graph.nodes:
        found = _gathered(node, producers) if node.prim is matmul_p else None
        if found is None:
            nodes.append(node)
            continue
        table, indices, moves = found
        nodes.append(typed_node(matmul_p, [table, node.inputs[1]], {}))
        steps = [(take_p, [indices], {"axis": 0})] + [(prim, [], attrs) for prim, attrs in moves]
        for k, (prim, operands, attrs) in enumerate(steps):  # the gather, then the rows moved as before
            nodes.append(typed_node(prim, [nodes[-1].out, *operands], attrs, node.out if k == len(steps) - 1 else None))
        changed = True
    return dce(ir.Graph(list(graph.inputs), nodes, list(graph.outputs), graph.name)) if changed else graph


def _gathered(product, producers):
    """(E, idx, the moves of the product's rows in order: [(prim, attrs)]) when the product's lhs is rows of E picked
    by take(E, idx, axis=0) and moved by row-preserving reshapes and transposes, its rhs a matrix, and E at most half
    the rows; else None."""
    rows, weights = product.inputs
    if weights.ndim != 2 or rows.ndim < 2:
        return None
    moves, value = [], rows
    while True:
        node = producers.get(id(value))
        if node is None:
            return None
        if node.prim is take_p:
            break
        source = node.inputs[0] if node.inputs else None
        if node.prim is reshape_p and source.ndim >= 1 and source.shape[-1] == value.shape[-1]:
            moves.append((reshape_p, {"shape": value.shape[:-1] + weights.shape[-1:]}))
        elif node.prim is transpose_p and node.params["perm"][-1] == value.ndim - 1:
            moves.append((transpose_p, {"perm": node.params["perm"]}))
        else:
            return None
        value = source
    table, indices = node.inputs
    if node.params["axis"] != 0 or table.ndim != 2 or table.dtype != weights.dtype or \
            2 * table.shape[0] > math.prod(rows.shape[:-1]):  # (a gather and a scatter_add of the rows cost too)
        return None
    return table, indices, moves[::-1]
