"""Calls replaced by the graph they call: a custom-derivative node (ops/custom.py) becomes its function's
nodes once differentiation is done, so no backend needs a rule for it."""
from __future__ import annotations

from .. import ir
from ..ops.control import result_p
from ..ops.custom import CUSTOM_CALLS


def inline_calls(graph: ir.Graph) -> ir.Graph:
    """`graph` with each custom call's function inlined, and the `result` nodes reading it replaced by
    that function's outputs."""
    if not any(node.prim in CUSTOM_CALLS for node in graph.nodes):
        return graph
    renamed, nodes, outputs_of = {}, [], {}
    for node in graph.nodes:
        inputs = tuple(renamed.get(id(v), v) for v in node.inputs)
        if node.prim in CUSTOM_CALLS:
            fun = node.params["fun"]
            env = {id(v): x for v, x in zip(fun.inputs, inputs)}
            for inner in fun.nodes:
                copy = ir.Node(inner.prim, tuple(env.get(id(v), v) for v in inner.inputs), inner.attrs,
                               ir.Value(inner.out.shape, inner.out.dtype), inner.meta)
                env[id(inner.out)] = copy.out
                nodes.append(copy)
            outputs_of[id(node.out)] = [env.get(id(v), v) for v in fun.outputs]
        elif node.prim is result_p and id(inputs[0]) in outputs_of:
            renamed[id(node.out)] = outputs_of[id(inputs[0])][node.params["index"]]
        else:
            nodes.append(node if inputs == node.inputs else ir.Node(node.prim, inputs, node.attrs, node.out,
                                                                      node.meta))
    outputs = [renamed.get(id(v), v) for v in graph.outputs]
    return inline_calls(ir.Graph(list(graph.inputs), nodes, outputs, graph.name))  # calls inside the calls
