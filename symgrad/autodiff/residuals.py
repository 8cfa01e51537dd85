"""What a step's pullback reads from its forward: the costly factors of its derivatives, computed in the
forward. sin's pullback `g*cos(x)` reads x and calls cos; with cos(x) a value of its own, which reads no
cotangent, the split (partition.py) puts it in the forward, where it shares its argument reduction and
polynomials with sin(x), and a loop's reverse pass reads it and multiplies (autodiff/control.py)."""
from __future__ import annotations

import sympy as sp

from .. import dtypes, ir
from ..ops.ew import ew_p, fresh_symbol


def with_factors_apart(joint: ir.Graph, num_primals: int) -> ir.Graph:
    """`joint` (primal inputs first, then cotangents) with each largest sub-expression of an ew node reading
    a cotangent that reads none and calls a function (cos(x) in g*cos(x)) computed by an ew node of its own
    just before it; `joint` itself when there is none."""
    reads_ct = {id(v) for v in joint.inputs[num_primals:]}
    nodes = []
    for node in joint.nodes:
        if any(id(v) in reads_ct for v in node.inputs):
            reads_ct.add(id(node.out))
            if node.prim is ew_p and dtypes.is_float(node.out.dtype):
                nodes.extend(_apart(node, reads_ct))
                continue
        nodes.append(node)
    if len(nodes) == len(joint.nodes):
        return joint
    return ir.Graph(list(joint.inputs), nodes, list(joint.outputs), joint.name)


def _apart(node, reads_ct) -> list:
    """[the nodes computing node's costly cotangent-free sub-expressions..., node reading them]."""
    p = node.params
    args, operand = p["args"], dict(zip(p["args"], node.inputs))
    # only sub-expressions of operands of node's own dtype: the value stored is the one computed in place
    free = {s for s, v in operand.items() if id(v) not in reads_ct and v.dtype == node.out.dtype}
    parts = {}
    _collect(p["expr"], free, parts)
    if not parts:
        return [node]
    taken, nodes = list(args), []
    for part in parts:
        symbol = fresh_symbol("r", taken)
        taken.append(symbol)
        used = tuple(s for s in args if part.has(s))
        value = ir.Value(node.out.shape, node.out.dtype)
        nodes.append(ir.Node(ew_p, tuple(operand[s] for s in used),
                             ir.freeze_attrs({"expr": part, "args": used, "dtype": node.out.dtype}), value,
                             node.meta))
        parts[part] = (symbol, value)
    expr = p["expr"].xreplace({part: symbol for part, (symbol, _) in parts.items()})
    operand.update((symbol, value) for symbol, value in parts.values())
    used = tuple(s for s in taken if expr.has(s))
    attrs = {**p, "expr": expr, "args": used}
    nodes.append(ir.Node(ew_p, tuple(operand[s] for s in used), ir.freeze_attrs(attrs), node.out, node.meta))
    return nodes


def _collect(expr, free, parts):
    """The largest sub-expressions of `expr` over the `free` symbols alone (at least one: a constant such as
    exp2's log(2) is no value of its own, an ew node of no input) that call a function, into `parts`."""
    if expr.is_Atom:
        return
    if isinstance(expr, sp.Expr) and expr.free_symbols and expr.free_symbols <= free and expr.has(sp.Function):
        parts.setdefault(expr, None)
        return
    for arg in expr.args:
        _collect(arg, free, parts)
