"""Lowering by composition: nodes a backend has no rule for, written with the primitives their
primitive's `decompose` uses (JAX lowers a primitive through a Python function the same way)."""
from __future__ import annotations

from dataclasses import replace

from .. import dtypes, ir
from ..core import Builder, Tracer, building
from .dce import dce

# A decomposition may use primitives that decompose in turn; deeper than this, one uses itself.
MAX_DEPTH = 16


def decompose(graph: ir.Graph, has_rule) -> ir.Graph:
    """`graph` with each node whose primitive `has_rule(prim)` rejects and that declares a
    decomposition replaced by it, until none is left; the other nodes are kept as they are."""
    graph = ir.map_subgraphs(graph, lambda sub: decompose(sub, has_rule))
    for _ in range(MAX_DEPTH):
        if not any(_expands(node.prim, has_rule) for node in graph.nodes):
            return graph
        graph = _expand(graph, has_rule)
    names = sorted({node.prim.name for node in graph.nodes if _expands(node.prim, has_rule)})
    raise ir.IRError(f"the decompositions of {', '.join(names)} do not terminate ({MAX_DEPTH} levels)")


def _expands(prim, has_rule) -> bool:
    return prim.decompose is not None and not has_rule(prim)


def _expand(graph: ir.Graph, has_rule) -> ir.Graph:
    builder = Builder()
    builder.inputs.extend(graph.inputs)
    env = {id(v): Tracer(v, builder) for v in graph.inputs}
    with building(builder):
        for node in graph.nodes:
            operands = [env[id(v)] for v in node.inputs]
            if not _expands(node.prim, has_rule):
                inputs = tuple(builder.lift(x) for x in operands)
                builder.nodes.append(node if inputs == node.inputs else replace(node, inputs=inputs))
                env[id(node.out)] = Tracer(node.out, builder)
                continue
            with builder.annotate(**node.meta):
                value = node.prim.decompose(*operands, **node.params)
            if (value.shape, value.dtype) != (node.out.shape, node.out.dtype):
                given = f"{dtypes.short_name(value.dtype)}[{','.join(map(str, value.shape))}]"
                raise ir.IRError(f"the decomposition of {node.prim.name} gives {given}, not {node.out.type_str()}")
            env[id(node.out)] = value
        return dce(builder.finish([env[id(v)] for v in graph.outputs], graph.name))
