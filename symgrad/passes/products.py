"""transpose(a @ b) -> b.T @ a.T where the product is read only through that transpose.

Reverse mode writes the weight gradient of `x @ w.T` (what nn.Linear records) as the transpose of
`x.T @ ct`: the backends would compute that product, then copy it transposed. Computed as `ct.T @ x`
instead, both transposes are read in place (BLAS takes them as flags) and nothing is copied.
"""
from __future__ import annotations

from .. import ir
from ..ops.linalg import matmul_p
from ..ops.shape import transpose_p
from .dce import dce


def _swaps_last_two(perm) -> bool:
    rank = len(perm)
    return rank >= 2 and tuple(perm) == tuple(range(rank - 2)) + (rank - 1, rank - 2)


def transpose_products(graph: ir.Graph) -> ir.Graph:
    """Rewrite each transpose (of the last two axes) of a product used nowhere else as the product of
    the transposed operands, swapped; an operand that is itself such a transpose is read untransposed."""
    uses = graph.consumers()
    producers, nodes = {}, []

    def swapped(value, meta):
        """value with its last two axes swapped: the source of a transpose that swapped them, or a new one."""
        producer = producers.get(id(value))
        if producer is not None and producer.prim is transpose_p and _swaps_last_two(producer.params["perm"]):
            return producer.inputs[0]
        perm = tuple(range(value.ndim - 2)) + (value.ndim - 1, value.ndim - 2)
        out = ir.Value(value.shape[:-2] + (value.shape[-1], value.shape[-2]), value.dtype)
        nodes.append(ir.Node(transpose_p, (value,), ir.freeze_attrs({"perm": perm}), out, meta))
        return out

    for node in graph.nodes:
        product = producers.get(id(node.inputs[0])) if node.prim is transpose_p else None
        if product is not None and product.prim is matmul_p and uses[id(product.out)] == 1 \
                and _swaps_last_two(node.params["perm"]):
            a, b = product.inputs
            node = ir.Node(matmul_p, (swapped(b, node.meta), swapped(a, node.meta)), product.attrs, node.out,
                           node.meta)
        producers[id(node.out)] = node
        nodes.append(node)
    return dce(ir.Graph(list(graph.inputs), nodes, list(graph.outputs), graph.name))
