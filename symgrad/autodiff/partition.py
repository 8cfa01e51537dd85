"""Split a joint value-and-cotangent graph into a forward graph (which also returns the
residuals the backward needs) and a backward graph that starts from those residuals."""
from __future__ import annotations

from .. import ir
from ..ops.shape import transpose_p


def split_forward_backward(joint: ir.Graph, num_primals: int, num_primal_outputs: int):
    """(forward, backward) for a joint graph whose first inputs are primals, the rest cotangents.

    forward(primals) -> (primal outputs..., residuals...)
    backward(residuals..., cotangents...) -> (input cotangents...)
    """
    primal_inputs = joint.inputs[:num_primals]
    ct_inputs = joint.inputs[num_primals:]
    depends_on_ct = {id(v) for v in ct_inputs}
    forward_nodes, backward_nodes = [], []
    for node in joint.nodes:
        if any(id(v) in depends_on_ct for v in node.inputs):
            depends_on_ct.add(id(node.out))
            backward_nodes.append(node)
        else:
            forward_nodes.append(node)
    forward_nodes, moved = _views_read_backward(forward_nodes, joint.outputs[:num_primal_outputs])
    backward_nodes = moved + backward_nodes
    depends_on_ct.update(id(node.out) for node in moved)
    residuals, seen = [], set()
    backward_outputs = joint.outputs[num_primal_outputs:]
    needed = [v for node in backward_nodes for v in node.inputs] + list(backward_outputs)
    for value in needed:
        if id(value) not in depends_on_ct and id(value) not in seen:
            seen.add(id(value))
            residuals.append(value)
    forward = ir.Graph(list(primal_inputs), forward_nodes,
                       list(joint.outputs[:num_primal_outputs]) + residuals, joint.name + "_fwd")
    backward = ir.Graph(residuals + list(ct_inputs), backward_nodes, list(backward_outputs), joint.name + "_bwd")
    return forward, backward


def _views_read_backward(forward_nodes, primal_outputs):
    """(forward nodes, the transposes among them that only the backward reads, moved there): the backward reads
    their sources, so a residual is never a transposed copy (a backend reads a transpose in place)."""
    read = {id(v) for v in primal_outputs} | {id(v) for node in forward_nodes for v in node.inputs}
    kept, moved = [], []
    for node in forward_nodes:
        (moved if node.prim is transpose_p and id(node.out) not in read else kept).append(node)
    return kept, moved
