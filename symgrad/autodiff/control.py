"""Derivative rules of the control-flow primitives (ops/control.py), attached here because they
run the autodiff passes on the sub-graphs: a loop's derivative is a loop over the derivative of
its body, a switch's a switch over its branches' derivatives.

Reverse mode through `while` runs the loop again inside one `while_vjp` node, which keeps the carries
(all, or a bounded number of checkpoints) and pulls the cotangents back through them, last step first.
Reverse mode through `scan` runs a forward scan that also stacks, per step, either what the step's
pullback reads (its residuals, with the costly factors of its derivatives computed in the forward, as
cos(x) for sin's: when the step holds a matrix product, a reduction or another costly operation, or when
they are no more data than its carries) or only the carry entering it (another elementwise step,
recomputed from it: one array a step instead of every intermediate); it is merged with the primal scan
by passes/loops.py. A reverse scan then pulls the cotangents back, last step first.
"""
from __future__ import annotations

from .. import dtypes, ir
from ..core import Tracer, TracerError, bind, const_p, with_user_line
from ..ops.control import result_p, results, scan_p, split_scan, switch_p, while_p, while_vjp_p
from ..ops.elementwise import add
from ..ops.ew import ew_p
from ..ops.indexing import slice_p
from ..ops.shape import (broadcast_to_p, convert_p, reshape_p, stop_gradient_p, transpose_p,
                         zeros_like_value)
from ..tracing import inline, trace_flat
from ..passes.dce import dce
from .forward import forward_pass
from .partition import split_forward_backward
from .residuals import with_factors_apart
from .reverse import backward_pass


def _floats(values) -> list:
    """Positions of the float values (the differentiable ones)."""
    return [k for k, v in enumerate(values) if dtypes.is_float(v.dtype)]


def _zeros(value):
    """Zeros of `value`'s type in the active builder."""
    return zeros_like_value(ir.Value(value.shape, value.dtype))


def _or_zeros(x, value):
    return x if x is not None else _zeros(value)


def _trace_closed(fn, args, name):
    """Trace fn(*args) into a sub-graph that reads nothing but its inputs."""
    graph, _, captures = trace_flat(fn, args, name)
    if captures:  # every outer value a rule reads is passed in as an input
        raise TracerError(f"internal error: the derivative of {name} captured outer values")
    return graph


# ----------------------------------------------------------------------------- result

def _result_vjp(ct, ans, t, index):
    cts = [None] * len(ir.components(t.dtype))
    cts[index] = ct
    return (cts,)


result_p.vjp = _result_vjp
result_p.jvp = lambda tangents, ans, t, index: tangents[0][index]


# ----------------------------------------------------------------------------- scan

def _slices(stacked) -> list:
    """The types of one step's slices of stacked values (what a step function is traced with)."""
    return [ir.Value(v.shape[1:], v.dtype) for v in stacked]


def _scan_vjp(ct, ans, *inputs, body, length, reverse, num_consts, num_carry):
    """Keep each step's residuals when the step holds an operation costlier than its data (a matrix
    product, a reduction, a nested loop...), or when they are no more data than its carries (sin's pullback
    keeps cos(x), computed in the forward with sin(x), residuals.py); else recompute the elementwise step
    from its carry, which costs less than storing its intermediate arrays (an RK4 step would keep five
    arrays a step, not one)."""
    costly = any(node.prim not in RECOMPUTED for node in ir.all_nodes(body))
    joint, pulled_back = _joint_step(ct, inputs, body, num_consts, num_carry)
    apart = with_factors_apart(joint, len(body.inputs))
    splits = [split_forward_backward(graph, len(body.inputs), len(body.outputs))
              for graph in ([apart, joint] if apart is not joint else [joint])]
    stacked = [_stacked_bytes(forward, num_consts, num_carry, len(body.outputs)) for forward, _ in splits]
    split = splits[stacked.index(min(stacked))]  # the costly factors apart, unless they stack more
    if costly or min(stacked) <= _bytes(body.inputs[num_consts:num_consts + num_carry]):
        return _scan_vjp_storing(ct, inputs, body, length, reverse, num_consts, num_carry, split, pulled_back)
    return _scan_vjp_recomputing(ct, inputs, body, length, reverse, num_consts, num_carry)


def _float_positions(inputs, body, num_consts, num_carry) -> tuple:
    """The positions of the float carries, consts and xs of a scan, whose cotangents its reverse pass computes;
    but a const that is a literal array of the graph (a constant the rerolling of a Python loop passes in),
    whose cotangent goes nowhere: computing it would keep the values it reads."""
    body_consts, body_carries = body.inputs[:num_consts], body.inputs[num_consts:num_consts + num_carry]
    float_consts = [k for k in _floats(body_consts) if not _literal(inputs[k])]
    return _floats(body_carries), float_consts, _floats(body.inputs[num_consts + num_carry:])


def _literal(x) -> bool:
    """Whether the traced value `x` is computed by a `const` node of its graph."""
    producers = getattr(x.builder, "producers", None) if isinstance(x, Tracer) else None
    node = producers.get(id(x.value)) if producers is not None else None
    return node is not None and node.prim is const_p


def _bytes(values) -> int:
    return sum(v.size * v.dtype.itemsize for v in values)


def _stacked_bytes(forward, num_consts, num_carry, num_outputs) -> int:
    """The bytes a step of the forward scan stacks for its pullback: its residuals but those computed from
    the consts alone (computed once) and the rows of the xs (read in place)."""
    invariant = _invariant(forward, num_consts)
    rows = {id(v) for v in forward.inputs[num_consts + num_carry:]}
    return _bytes([r for r in forward.outputs[num_outputs:] if id(r) not in invariant and id(r) not in rows])


def with_stored_carries(body: ir.Graph, num_consts: int, num_carry: int) -> ir.Graph:
    """The body of a scan that also returns, as extra ys, the carries entering each step."""
    carries = body.inputs[num_consts:num_consts + num_carry]
    return ir.Graph(list(body.inputs), list(body.nodes), list(body.outputs) + list(carries), body.name)


def _scan_vjp_recomputing(ct, inputs, body, length, reverse, num_consts, num_carry):
    """A forward scan that also stacks the carry entering each step, then a reverse scan whose step runs the
    body again from it and pulls back through it: one carry kept per step."""
    consts, init, xs = split_scan(inputs, num_consts, num_carry)
    stored = results(bind(scan_p, inputs, dict(body=with_stored_carries(body, num_consts, num_carry), length=length,
                                               reverse=reverse, num_consts=num_consts, num_carry=num_carry)))
    stored = stored[len(body.outputs):]
    body_consts, body_carries = body.inputs[:num_consts], body.inputs[num_consts:num_consts + num_carry]
    body_ys = body.outputs[num_carry:]
    float_carries, float_consts, float_xs = _float_positions(inputs, body, num_consts, num_carry)
    seeded_ys = [m for m in _floats(body_ys) if ct[num_carry + m] is not None]

    def step(consts_in, ct_carry, ct_consts, carries, x, ct_y):
        env = inline(body, list(consts_in) + list(carries) + list(x))
        seeds = [(id(body.outputs[k]), c) for k, c in zip(float_carries, ct_carry)]
        seeds += [(id(body_ys[m]), c) for m, c in zip(seeded_ys, ct_y)]
        cts = backward_pass(body, env, seeds)
        pulled = [_or_zeros(cts[id(v)], v) for v in body.inputs]
        carry_cts = [pulled[num_consts + k] for k in float_carries]
        const_cts = [add(total, pulled[k]) for total, k in zip(ct_consts, float_consts)]
        x_cts = [pulled[num_consts + num_carry + k] for k in float_xs]
        return (carry_cts, const_cts), x_cts

    ct_carry0 = [_or_zeros(ct[k], body_carries[k]) for k in float_carries]
    ct_consts0 = [_zeros(body_consts[k]) for k in float_consts]
    ct_ys = [ct[num_carry + m] for m in seeded_ys]
    args = [consts, ct_carry0, ct_consts0, _slices(stored), _slices(xs), _slices(ct_ys)]
    backward = _trace_closed(step, args, body.name + "_vjp")
    new_consts, new_carry = len(consts), len(ct_carry0) + len(ct_consts0)
    outs = results(bind(scan_p, consts + ct_carry0 + ct_consts0 + stored + xs + ct_ys,
                        dict(body=backward, length=length, reverse=not reverse, num_consts=new_consts,
                             num_carry=new_carry)))
    return _input_cotangents(len(inputs), num_consts, num_carry, float_consts, float_carries, float_xs, outs)


def _joint_step(ct, inputs, body, num_consts, num_carry) -> tuple:
    """(joint, pulled_back): one step's value and pullback traced together, joint(consts, carries, xs,
    carry cotangents, seeded ys' cotangents) -> (the body's outputs..., the cotangents of the body inputs
    `pulled_back` lists, which are those it computes: the others' are zero); without the nodes no output
    reads (the cotangent of a constant of the body), whose inputs would otherwise count as residuals."""
    body_consts, body_carries = body.inputs[:num_consts], body.inputs[num_consts:num_consts + num_carry]
    body_xs, body_ys = body.inputs[num_consts + num_carry:], body.outputs[num_carry:]
    float_carries, float_consts, float_xs = _float_positions(inputs, body, num_consts, num_carry)
    seeded_ys = [m for m in _floats(body_ys) if ct[num_carry + m] is not None]
    pulled_back = []

    def joint(consts_in, carries, x, ct_carry, ct_y):
        env = inline(body, list(consts_in) + list(carries) + list(x))
        seeds = [(id(body.outputs[k]), c) for k, c in zip(float_carries, ct_carry)]
        seeds += [(id(body_ys[m]), c) for m, c in zip(seeded_ys, ct_y)]
        cts = backward_pass(body, env, seeds)
        wanted = ([num_consts + k for k in float_carries] + float_consts +
                  [num_consts + num_carry + k for k in float_xs])
        pulled_back[:] = [k for k in wanted if cts[id(body.inputs[k])] is not None]
        return [env[id(v)] for v in body.outputs] + [cts[id(body.inputs[k])] for k in pulled_back]

    ct_types = [body_carries[k] for k in float_carries] + [body_ys[m] for m in seeded_ys]
    joint = _trace_closed(joint, [list(body_consts), list(body_carries), list(body_xs),
                                  ct_types[:len(float_carries)], ct_types[len(float_carries):]], body.name + "_joint")
    return dce(joint), pulled_back


def _scan_vjp_storing(ct, inputs, body, length, reverse, num_consts, num_carry, split, pulled_back):
    """A forward scan that also stacks what one step's pullback reads (its residuals: the step's
    intermediate values, as an unrolled loop keeps them; merged with the primal scan by passes/loops.py),
    then a reverse scan of the pullbacks. `split`: the step's (forward, pullback), `pulled_back` the
    body inputs whose cotangent the pullback computes (_joint_step)."""
    consts, init, xs = split_scan(inputs, num_consts, num_carry)
    body_consts, body_carries = body.inputs[:num_consts], body.inputs[num_consts:num_consts + num_carry]
    body_xs, body_ys = body.inputs[num_consts + num_carry:], body.outputs[num_carry:]
    float_carries, float_consts, float_xs = _float_positions(inputs, body, num_consts, num_carry)
    seeded_ys = [m for m in _floats(body_ys) if ct[num_carry + m] is not None]
    forward, pullback = split
    residuals = forward.outputs[len(body.outputs):]
    const_of = _loop_invariant(forward, num_consts, consts, residuals)  # computed once, passed as consts
    # a residual that is a row of the xs is read from the xs as they are, not copied into a stack
    row_of = {id(v): x for v, x in zip(forward.inputs[num_consts + num_carry:], xs)}
    kept = [r for r in residuals if id(r) not in const_of]
    rows = iter(results(bind(scan_p, inputs, dict(body=ir.Graph(forward.inputs, forward.nodes, forward.outputs[
        :len(body.outputs)] + [r for r in kept if id(r) not in row_of], body.name), length=length, reverse=reverse,
        num_consts=num_consts, num_carry=num_carry)))[len(body.outputs):])
    stacked = [row_of[id(r)] if id(r) in row_of else next(rows) for r in kept]

    def step_back(res_consts, ct_carry, sums, res_rows, ct_y):
        rows = iter(res_rows)
        given = {id(v): c for v, c in zip([r for r in residuals if id(r) in const_of], res_consts)}
        values = [given[id(r)] if id(r) in given else next(rows) for r in residuals]
        env = inline(pullback, values + list(ct_carry) + list(ct_y))
        pulled = dict(zip(pulled_back, [env[id(v)] for v in pullback.outputs]))
        carry_cts = [_or_zeros(pulled.get(num_consts + k), body_carries[k]) for k in float_carries]
        const_cts = [add(total, pulled[k]) if k in pulled else total for total, k in zip(sums, float_consts)]
        x_cts = [_or_zeros(pulled.get(num_consts + num_carry + k), body_xs[k]) for k in float_xs]
        return (carry_cts, const_cts), x_cts

    res_consts = [const_of[id(r)] for r in residuals if id(r) in const_of]
    ct_carry0 = [_or_zeros(ct[k], body_carries[k]) for k in float_carries]
    ct_consts0 = [_zeros(body_consts[k]) for k in float_consts]
    ct_ys = [ct[num_carry + m] for m in seeded_ys]
    args = [res_consts, ct_carry0, [ir.Value(v.shape, v.dtype) for v in ct_consts0], _slices(stacked), _slices(ct_ys)]
    backward = _trace_closed(step_back, args, body.name + "_vjp")
    new_carry = len(ct_carry0) + len(ct_consts0)
    outs = results(bind(scan_p, res_consts + ct_carry0 + ct_consts0 + stacked + ct_ys,
                        dict(body=backward, length=length, reverse=not reverse, num_consts=len(res_consts),
                             num_carry=new_carry)))
    return _input_cotangents(len(inputs), num_consts, num_carry, float_consts, float_carries, float_xs, outs)


def _invariant(forward, num_consts) -> set:
    """Ids of the values of `forward` computed from its consts alone."""
    invariant = {id(v) for v in forward.inputs[:num_consts]}
    for node in forward.nodes:
        if all(id(v) in invariant for v in node.inputs):
            invariant.add(id(node.out))
    return invariant


def _loop_invariant(forward, num_consts, consts, residuals) -> dict:
    """The residuals computed from the scan's consts alone (the consts themselves, a transposed weight
    matrix), mapped to their values computed once in the active builder: stacked, they would be copied
    every step."""
    invariant = _invariant(forward, num_consts)
    hoisted = [r for r in residuals if id(r) in invariant]
    if not hoisted:
        return {}
    graph = dce(ir.Graph(list(forward.inputs[:num_consts]), [n for n in forward.nodes if id(n.out) in invariant],
                         hoisted))
    env = inline(graph, list(consts))
    return {id(r): env[id(r)] for r in hoisted}


def _input_cotangents(count, num_consts, num_carry, float_consts, float_carries, float_xs, outs) -> list:
    """A scan's input cotangents from its reverse scan's results (the float carries', then the float
    consts', then the stacked float xs'), None for the others."""
    in_cts = [None] * count
    positions = ([num_consts + k for k in float_carries] + list(float_consts) +
                 [num_consts + num_carry + k for k in float_xs])
    for k, value in zip(positions, outs):
        in_cts[k] = value
    return in_cts


def _scan_jvp(tangents, ans, *inputs, body, length, reverse, num_consts, num_carry):
    consts, init, xs = split_scan(inputs, num_consts, num_carry)
    t_consts, t_init, t_xs = split_scan(tangents, num_consts, num_carry)
    body_carries = body.inputs[num_consts:num_consts + num_carry]
    tangent_consts = [k for k, t in enumerate(t_consts) if t is not None]
    tangent_xs = [k for k, t in enumerate(t_xs) if t is not None]
    float_carries, float_ys = _floats(body_carries), _floats(body.outputs[num_carry:])

    def step(consts_in, dconsts, carries, dcarries, x, dx):
        env = inline(body, list(consts_in) + list(carries) + list(x))
        seeds = {id(body.inputs[k]): t for k, t in zip(tangent_consts, dconsts)}
        seeds.update({id(body_carries[k]): t for k, t in zip(float_carries, dcarries)})
        seeds.update({id(body.inputs[num_consts + num_carry + k]): t for k, t in zip(tangent_xs, dx)})
        out_tangents = forward_pass(body, env, seeds)
        outs = [env[id(v)] for v in body.outputs]
        tangent_of = [_or_zeros(out_tangents.get(id(v)), v) for v in body.outputs]
        return (outs[:num_carry], [tangent_of[k] for k in float_carries]), \
            (outs[num_carry:], [tangent_of[num_carry + m] for m in float_ys])

    dconsts = [t_consts[k] for k in tangent_consts]
    dinit = [_or_zeros(t_init[k], body_carries[k]) for k in float_carries]
    dxs = [t_xs[k] for k in tangent_xs]
    args = [consts, dconsts, init, dinit, _slices(xs), _slices(dxs)]
    joint = _trace_closed(lambda *a: _flat_pair(step(*a)), args, body.name + "_jvp")
    new_carry = num_carry + len(float_carries)
    outs = results(bind(scan_p, consts + dconsts + init + dinit + xs + dxs,
                        dict(body=joint, length=length, reverse=reverse, num_consts=len(consts) + len(dconsts),
                             num_carry=new_carry)))
    out_tangents = [None] * len(body.outputs)
    for k, value in zip(float_carries, outs[num_carry:new_carry]):
        out_tangents[k] = value
    ys_start = new_carry + len(body.outputs) - num_carry
    for m, value in zip(float_ys, outs[ys_start:]):
        out_tangents[num_carry + m] = value
    return out_tangents


def _flat_pair(pair):
    """((carries, carry tangents), (ys, y tangents)) as the flat (carries..., ys...) of a step."""
    (carries, dcarries), (ys, dys) = pair
    return list(carries) + list(dcarries) + list(ys) + list(dys)


# The operations a step made only of which is recomputed in reverse mode rather than stored (elementwise
# arithmetic, and moving or re-typing data).
RECOMPUTED = frozenset({const_p, ew_p, convert_p, stop_gradient_p, broadcast_to_p, reshape_p, transpose_p,
                        slice_p})
scan_p.vjp = _scan_vjp
scan_p.jvp = _scan_jvp


# ----------------------------------------------------------------------------- switch

def _switch_vjp(ct, ans, index, *operands, branches):
    outputs = branches[0].outputs
    seeded = [k for k in _floats(outputs) if ct[k] is not None]
    float_operands = _floats(branches[0].inputs)

    def pullback(branch):
        def run(operands_in, cts_in):
            env = inline(branch, list(operands_in))
            cts = backward_pass(branch, env, [(id(branch.outputs[k]), c) for k, c in zip(seeded, cts_in)])
            return [_or_zeros(cts[id(branch.inputs[k])], branch.inputs[k]) for k in float_operands]
        return _trace_closed(run, [list(operands), [ct[k] for k in seeded]], branch.name + "_vjp")

    graphs = tuple(pullback(branch) for branch in branches)
    outs = results(bind(switch_p, [index] + list(operands) + [ct[k] for k in seeded], dict(branches=graphs)))
    in_cts = [None] * (1 + len(operands))
    for k, value in zip(float_operands, outs):
        in_cts[1 + k] = value
    return in_cts


def _switch_jvp(tangents, ans, index, *operands, branches):
    tangent_operands = [k for k, t in enumerate(tangents[1:]) if t is not None]
    float_outs = _floats(branches[0].outputs)

    def pushforward(branch):
        def run(operands_in, tangents_in):
            env = inline(branch, list(operands_in))
            seeds = {id(branch.inputs[k]): t for k, t in zip(tangent_operands, tangents_in)}
            out_tangents = forward_pass(branch, env, seeds)
            return [_or_zeros(out_tangents.get(id(branch.outputs[k])), branch.outputs[k]) for k in float_outs]
        return _trace_closed(run, [list(operands), [tangents[1 + k] for k in tangent_operands]], branch.name + "_jvp")

    graphs = tuple(pushforward(branch) for branch in branches)
    outs = results(bind(switch_p, [index] + list(operands) + [tangents[1 + k] for k in tangent_operands],
                        dict(branches=graphs)))
    out_tangents = [None] * len(branches[0].outputs)
    for k, value in zip(float_outs, outs):
        out_tangents[k] = value
    return out_tangents


switch_p.vjp = _switch_vjp
switch_p.jvp = _switch_jvp


# ----------------------------------------------------------------------------- while

def _while_vjp(ct, ans, *inputs, cond, body, num_cond_consts, num_body_consts, checkpoints):
    split = num_cond_consts + num_body_consts
    body_consts, init = list(inputs[num_cond_consts:split]), list(inputs[split:])
    body_const_values, body_carries = body.inputs[:num_body_consts], body.inputs[num_body_consts:]
    float_carries, float_consts = _floats(body_carries), _floats(body_const_values)

    def step(consts_in, carries, ct_out, sums):
        env = inline(body, list(consts_in) + list(carries))
        cts = backward_pass(body, env, [(id(body.outputs[k]), c) for k, c in zip(float_carries, ct_out)])
        pulled = [_or_zeros(cts[id(v)], v) for v in body.inputs]
        return ([pulled[num_body_consts + k] for k in float_carries] +
                [add(total, pulled[k]) for total, k in zip(sums, float_consts)])

    cts = [_or_zeros(ct[k], body_carries[k]) for k in float_carries]
    sums = [ir.Value(body_const_values[k].shape, body_const_values[k].dtype) for k in float_consts]
    graph = _trace_closed(step, [body_consts, init, cts, sums], body.name + "_vjp")
    outs = results(bind(while_vjp_p, list(inputs) + cts,
                        dict(cond=cond, body=body, step=graph, num_cond_consts=num_cond_consts,
                             num_body_consts=num_body_consts, checkpoints=checkpoints)))
    in_cts = [None] * len(inputs)
    for k, value in zip(float_carries, outs):
        in_cts[split + k] = value
    for k, value in zip(float_consts, outs[len(float_carries):]):
        in_cts[num_cond_consts + k] = value
    return in_cts


def _no_derivative_of_while_vjp(*args, **attrs):
    raise TracerError(with_user_line(
        "the reverse pass of sg.while_loop cannot be differentiated again (a Hessian through a while loop): "
        "differentiate the loop in forward mode twice (sg.jacfwd(sg.jacfwd(f))), or use sg.fori_loop or sg.scan "
        "with a fixed number of steps"))


while_vjp_p.vjp = _no_derivative_of_while_vjp
while_vjp_p.jvp = _no_derivative_of_while_vjp


def _while_jvp(tangents, ans, *inputs, cond, body, num_cond_consts, num_body_consts, checkpoints):
    split = num_cond_consts + num_body_consts
    cond_consts, body_consts, init = list(inputs[:num_cond_consts]), list(inputs[num_cond_consts:split]), \
        list(inputs[split:])
    t_body_consts, t_init = tangents[num_cond_consts:split], tangents[split:]
    tangent_consts = [k for k, t in enumerate(t_body_consts) if t is not None]
    body_carries = body.inputs[num_body_consts:]
    float_carries = _floats(body_carries)

    def step(consts_in, dconsts, carries, dcarries):
        env = inline(body, list(consts_in) + list(carries))
        seeds = {id(body.inputs[k]): t for k, t in zip(tangent_consts, dconsts)}
        seeds.update({id(body_carries[k]): t for k, t in zip(float_carries, dcarries)})
        out_tangents = forward_pass(body, env, seeds)
        return [env[id(v)] for v in body.outputs] + \
            [_or_zeros(out_tangents.get(id(body.outputs[k])), body.outputs[k]) for k in float_carries]

    def test(consts_in, dconsts, carries, dcarries):
        return inline(cond, list(consts_in) + list(carries))[id(cond.outputs[0])]

    dconsts = [t_body_consts[k] for k in tangent_consts]
    dinit = [_or_zeros(t_init[k], body_carries[k]) for k in float_carries]
    # the tangent loop's cond reads (cond consts) and its body (body consts, their tangents); the
    # graphs take them in that order, before the carries and their tangents
    joint_body = _trace_closed(step, [body_consts, dconsts, init, dinit], body.name + "_jvp")
    joint_cond = _trace_closed(lambda c, x, dx: test(c, [], x, dx), [cond_consts, init, dinit], cond.name)
    outs = results(bind(while_p, cond_consts + body_consts + dconsts + init + dinit,
                        dict(cond=joint_cond, body=joint_body, num_cond_consts=len(cond_consts),
                             num_body_consts=len(body_consts) + len(dconsts), checkpoints=checkpoints)))
    out_tangents = [None] * len(init)
    for k, value in zip(float_carries, outs[len(init):]):
        out_tangents[k] = value
    return out_tangents


while_p.vjp = _while_vjp
while_p.jvp = _while_jvp
