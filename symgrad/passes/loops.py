"""Loop rewrites: merge a scan with the copy of it that reverse mode adds, and drop what no one reads.

Reverse mode through a scan adds a second forward scan that also returns what each step's
pullback reads (autodiff/control.py); merged, the loop runs once. A derivative loop also computes
cotangents no one asked for (of a constant, of an integer counter): a carry or a stacked output
that nothing outside reads, and that the carries kept do not need, is dropped from the loop,
with the inputs only it read (a dead-code pass through the loop, to a fixed point).
"""
from __future__ import annotations

from dataclasses import replace

from .. import ir
from ..ops.control import result_p, scan_p
from .dce import dce


def merge_and_prune_scans(graph: ir.Graph) -> ir.Graph:
    """Merge scans, then prune them until nothing changes (a pruned loop may stop reading another's output)."""
    graph = merge_scans(graph)
    while True:
        pruned = prune_scans(graph)
        if pruned is graph:
            return graph
        graph = dce(pruned)


# ----------------------------------------------------------------------------- merging

def _extends(wide: ir.Graph, narrow: ir.Graph) -> bool:
    """Whether `wide` computes what `narrow` does, with more outputs after the same ones (and the nodes
    only those need)."""
    count = len(narrow.outputs)
    return len(wide.outputs) >= count and dce(ir.Graph(wide.inputs, wide.nodes, wide.outputs[:count])) == narrow


def merge_scans(graph: ir.Graph) -> ir.Graph:
    """Scans over the same inputs whose bodies agree but for extra outputs become the widest one,
    at the place of the first (its inputs are the same values, so they are defined there)."""
    groups = {}  # (input ids, attributes but the body) -> [the scans merged so far, the widest first]
    for node in graph.nodes:
        if node.prim is not scan_p:
            continue
        params = node.params
        key = (tuple(id(v) for v in node.inputs), params["length"], params["reverse"], params["num_consts"],
               params["num_carry"])
        members = groups.setdefault(key, [])
        if not members:
            members.append(node)
        elif _extends(params["body"], members[0].params["body"]):
            members.insert(0, node)
        elif _extends(members[0].params["body"], params["body"]):
            members.append(node)
    merged, place = {}, {}  # id(merged scan's out) -> the widest's out; id(first scan) -> the widest
    for members in groups.values():
        if len(members) > 1:
            widest = members[0]
            merged.update({id(node.out): widest.out for node in members})
            place[id(min(members, key=graph.nodes.index))] = widest
    if not merged:
        return graph
    nodes = []
    for node in graph.nodes:
        if id(node.out) in merged and id(node) not in place:
            continue  # now computed by the widest scan, placed where the first one was
        node = place.get(id(node), node)
        inputs = tuple(merged.get(id(v), v) for v in node.inputs)
        nodes.append(node if inputs == node.inputs else replace(node, inputs=inputs))
    return ir.Graph(list(graph.inputs), nodes, [merged.get(id(v), v) for v in graph.outputs], graph.name)


# ----------------------------------------------------------------------------- pruning

def prune_scans(graph: ir.Graph) -> ir.Graph:
    """Each scan without the carries and stacked outputs nothing reads, nor the inputs only they read."""
    read = {}  # id(scan out) -> the components result nodes read
    for node in graph.nodes:
        if node.prim is result_p:
            read.setdefault(id(node.inputs[0]), set()).add(node.params["index"])
    renamed = {}  # id(pruned scan's old out) -> (its new out, {old component: new component})
    nodes = []
    for node in graph.nodes:
        if node.prim is scan_p and read.get(id(node.out)):
            pruned = _pruned_scan(node, read[id(node.out)])
            if pruned is not None:
                renamed[id(node.out)] = (pruned[0].out, pruned[1])
                node = pruned[0]
        elif node.prim is result_p and id(node.inputs[0]) in renamed:
            out, renumber = renamed[id(node.inputs[0])]
            node = ir.Node(result_p, (out,), ir.freeze_attrs({"index": renumber[node.params["index"]]}), node.out,
                           node.meta)
        nodes.append(node)
    return ir.Graph(list(graph.inputs), nodes, list(graph.outputs), graph.name) if renamed else graph


def _pruned_scan(node: ir.Node, used: set):
    """(the scan without what `used` does not need, old component -> new), or None if it needs all."""
    params = node.params
    body, num_consts, num_carry = params["body"], params["num_consts"], params["num_carry"]
    live = set(used)  # body outputs needed: carries 0.., then ys
    while True:
        needed = _inputs_read(body, [body.outputs[k] for k in live])
        more = {k for k in range(num_carry) if num_consts + k in needed} - live
        if not more:
            break
        live |= more
    carries = [k for k in range(num_carry) if k in live]
    ys = [k for k in range(num_carry, len(body.outputs)) if k in live]
    inputs = ([k for k in range(num_consts) if k in needed] + [num_consts + k for k in carries] +
              [k for k in range(num_consts + num_carry, len(body.inputs)) if k in needed])
    if len(inputs) == len(body.inputs) and len(carries) + len(ys) == len(body.outputs):
        return None
    kept = carries + ys
    new_body = dce(ir.Graph([body.inputs[k] for k in inputs], body.nodes, [body.outputs[k] for k in kept], body.name))
    attrs = {**params, "body": new_body, "num_consts": sum(k < num_consts for k in inputs), "num_carry": len(carries)}
    parts = ir.components(node.out.dtype)
    out = ir.Value((), ir.tuple_dtype([parts[k] for k in kept]), node.out.hint)
    new_node = ir.Node(scan_p, tuple(node.inputs[k] for k in inputs), ir.freeze_attrs(attrs), out, node.meta)
    return new_node, {old: new for new, old in enumerate(kept)}


def _inputs_read(body: ir.Graph, outputs) -> set:
    """Positions of the body inputs that `outputs` depend on."""
    live = {id(v) for v in outputs}
    for node in reversed(body.nodes):
        if id(node.out) in live:
            live.update(id(v) for v in node.inputs)
    return {k for k, v in enumerate(body.inputs) if id(v) in live}
