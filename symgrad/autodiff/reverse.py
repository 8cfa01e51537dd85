"""The reverse-mode pass: walk a graph backwards, emitting each node's adjoint rule as new nodes.

The adjoint is written with the same primitives, in the active builder, so it prints,
optimizes, lowers and can be differentiated again like any other graph.
"""
from __future__ import annotations

from .. import ir
from ..ops.control import result_p
from ..ops.custom import CUSTOM_CALLS, custom_vjp_p
from ..passes.dce import dce
from ..ops.elementwise import add
from ..core import Tracer, bind, current_builder


def backward_pass(graph: ir.Graph, env: dict, seeds, wrt=None) -> dict:
    """Cotangents of graph inputs (id(input) -> value or None) given output seeds.

    env maps id(graph value) -> its value in the active builder (from `inline`);
    seeds is a list of (id(graph output), cotangent fed into it) pairs. A value that fills
    several output slots appears once per slot, and its seeds are summed. `wrt`: the inputs
    differentiated (default all); a node that none of them reaches gets no adjoint, as JAX's
    linearization leaves it out (a loop only the others reach is never reversed).
    """
    builder = current_builder()
    active = _depends_on_inputs(graph, graph.inputs if wrt is None else wrt)
    cts = {}
    for key, seed in seeds:
        _accumulate(cts, key, seed, env, builder, "seed")
    for node in reversed(graph.nodes):
        ct = cts.pop(id(node.out), None)
        if ct is None or not node.inputs:
            continue
        if node.prim.vjp is None:
            raise NotImplementedError(f"primitive {node.prim.name!r} has no reverse-mode rule")
        rule = node.prim.rule_name(node)
        with builder.annotate(section="backward", rule=rule):
            inputs = [env[id(v)] for v in node.inputs]
            in_cts = node.prim.vjp(ct, env[id(node.out)], *inputs, **node.params)
            for value, contribution in zip(node.inputs, in_cts):
                if contribution is not None and ir.is_differentiable(value.dtype) and id(value) in active:
                    _accumulate(cts, id(value), contribution, env, builder, rule)
    return {id(v): cts.get(id(v)) for v in graph.inputs}


def primals_from_rules(graph: ir.Graph, env: dict) -> ir.Graph:
    """Before a reverse pass over a traced forward: the outputs of a call whose reverse rule computes them (a
    custom_vjp's fwd, `prim.primal_of_rule`) taken from the rule in env, and the nodes after it computed again from
    them, as JAX's linearization does: the adjoint and the outputs read those, not the call, which is left dead, so a
    forward pass over the adjoint (jacfwd(grad(f)), a Hessian) differentiates fwd and bwd as JAX does. A loop or a
    switch holding such calls runs again with them valued by their fwd (valued_by_fwd): the graph returned has
    those nodes, for the reverse pass to differentiate."""
    active = _depends_on_inputs(graph)
    rebound, changed, nodes = {}, set(), []
    for node in graph.nodes:
        rule = getattr(node.prim, "primal_of_rule", None)
        if rule is not None and id(node.out) in active:
            rebound[id(node.out)] = rule(*[env[id(v)] for v in node.inputs], **node.params)
        elif node.prim is result_p and id(node.inputs[0]) in rebound:
            env[id(node.out)] = rebound[id(node.inputs[0])][node.params["index"]]
            changed.add(id(node.out))
        else:
            valued = valued_by_fwd(ir.Graph([], [node], [], graph.name)).nodes[0] if id(node.out) in active else node
            if valued is not node or any(id(v) in changed for v in node.inputs):
                node = valued
                env[id(node.out)] = bind(node.prim, [env[id(v)] for v in node.inputs], node.params)
                changed.add(id(node.out))
        nodes.append(node)
    return ir.Graph(list(graph.inputs), nodes, list(graph.outputs), graph.name)


def valued_by_fwd(graph: ir.Graph) -> ir.Graph:
    """graph with each custom_vjp call in its loops' and switches' sub-graphs, at any depth, valued by its fwd (its
    `fun` replaced by fwd's outputs without the residuals), as JAX's linearization of a scan or a cond runs fwd; the
    custom calls' own graphs are left as they are (JAX runs fwd and bwd as they are)."""
    nodes, changed = [], False
    for node in graph.nodes:
        if node.prim is custom_vjp_p:
            fun, fwd = node.params["fun"], node.params["fwd"]
            valued = dce(ir.Graph(list(fwd.inputs), list(fwd.nodes), list(fwd.outputs[:len(fun.outputs)]), fun.name))
            node = ir.Node(node.prim, node.inputs, ir.freeze_attrs({**node.params, "fun": valued}), node.out,
                           node.meta)
            changed = True
        elif node.prim not in CUSTOM_CALLS and ir.subgraphs(node):
            rewritten = ir.map_subgraphs(ir.Graph([], [node], [], graph.name), valued_by_fwd).nodes[0]
            changed = changed or rewritten is not node
            node = rewritten
        nodes.append(node)
    return ir.Graph(list(graph.inputs), nodes, list(graph.outputs), graph.name) if changed else graph


def _depends_on_inputs(graph: ir.Graph, inputs=None) -> set:
    """ids of the values computed from `inputs` (default the graph's): a constant's cotangent is never needed, and
    summing it up (the cotangent of `k` in `for ...: x = k * x`) would be a chain as long as the loop."""
    active = {id(v) for v in (graph.inputs if inputs is None else inputs)}
    for node in graph.nodes:
        if any(id(v) in active for v in node.inputs):
            active.add(id(node.out))
    return active


def _accumulate(cts, key, contribution, env, builder, rule):
    if key in cts:
        with builder.annotate(section="backward", rule=f"{rule} (accumulate)"):
            contribution = _sum(cts[key], contribution)
    primal = env.get(key)
    if isinstance(contribution, Tracer) and isinstance(primal, Tracer) and contribution.value.hint is None:
        contribution.value.hint = ("ct", primal.value)
    cts[key] = contribution


def _sum(a, b):
    """a + b for cotangents; a tuple value's cotangent is a list with None for zero components."""
    if isinstance(a, list):
        return [y if x is None else x if y is None else add(x, y) for x, y in zip(a, b)]
    return add(a, b)
