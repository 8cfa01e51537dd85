"""Structured control flow: the `scan`, `while` and `switch` primitives, whose attributes hold
sub-graphs (a loop's body, a switch's branches), and `result`, which reads one component of
their tuple-typed output (ir.tuple_dtype).

The bodies stay rolled: a loop of a million steps is one node over a graph of one step. The
NumPy reference of each primitive interprets its sub-graphs (`evaluate`); the backends lower
them to real loops and branches. Their derivative rules need the autodiff passes, a layer
above, which attaches them (autodiff/control.py); the public functions (sg.scan, sg.fori_loop,
sg.while_loop, sg.cond, sg.switch) are in symgrad/control_flow.py.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes, ir
from ..core import Primitive, ShapeError


def evaluate(graph: ir.Graph, arrays) -> list:
    """Run `graph` on arrays with each primitive's NumPy reference: the outputs as a list."""
    env = {id(v): a for v, a in zip(graph.inputs, arrays)}
    for node in graph.nodes:
        result = node.prim.impl(*[env[id(v)] for v in node.inputs], **node.params)
        if not ir.is_tuple_dtype(node.out.dtype):
            result = np.asarray(result)
            if result.dtype != node.out.dtype:
                result = result.astype(node.out.dtype)
        env[id(node.out)] = result
    return [env[id(v)] for v in graph.outputs]


def _types(values) -> list:
    return [(tuple(v.shape), np.dtype(v.dtype)) for v in values]


def _check_types(what, expected, given):
    """A ShapeError when the values `given` do not have the (shape, dtype) list `expected`."""
    if len(expected) != len(given):
        raise ShapeError(f"{what}: expected {len(expected)} value(s), got {len(given)}")
    for position, ((shape, dtype), (got_shape, got_dtype)) in enumerate(zip(expected, given)):
        if tuple(shape) != tuple(got_shape) or np.dtype(dtype) != np.dtype(got_dtype):
            raise ShapeError(f"{what}: value {position} is {ir.Value(got_shape, got_dtype).type_str()}, expected "
                             f"{ir.Value(shape, dtype).type_str()}")


# ----------------------------------------------------------------------------- result

def _result_shape(inputs, index):
    parts = inputs[0] if isinstance(inputs[0], tuple) else None
    if parts is not None:  # evaluated on arrays: the tuple itself
        return parts[index].shape, parts[index].dtype
    return ir.components(inputs[0].dtype)[index]


# result[index=k] t: component k of a loop's or a switch's tuple output.
result_p = Primitive("result", _result_shape, lambda t, index: t[index])


def results(t) -> list:
    """Every component of the tuple value `t` (a tracer of a tuple type, or a tuple of arrays)."""
    count = len(t) if isinstance(t, tuple) else len(ir.components(t.dtype))
    return [result_p(t, index=k) for k in range(count)]


# ----------------------------------------------------------------------------- scan

def _scan_shape(inputs, body, length, reverse, num_consts, num_carry):
    """inputs: consts, initial carries, xs (each stacked along a leading axis of `length`).
    body(consts, carries, x slices) -> (carries, y slices); the output: (carries, stacked ys)."""
    consts, init, xs = inputs[:num_consts], inputs[num_consts:num_consts + num_carry], inputs[num_consts + num_carry:]
    for x in xs:
        if not x.shape or x.shape[0] != length:
            raise ShapeError(f"scan: every xs leaf needs a leading axis of the scan's length {length}; got "
                             f"{ir.Value(x.shape, x.dtype).type_str()}")
    slices = [(x.shape[1:], x.dtype) for x in xs]
    _check_types("scan body inputs", _types(body.inputs), _types(consts) + _types(init) + slices)
    outs = _types(body.outputs)
    _check_types("scan body carries", _types(init), outs[:num_carry])
    ys = [((length, *shape), dtype) for shape, dtype in outs[num_carry:]]
    return (), ir.tuple_dtype(outs[:num_carry] + ys)


def _scan_impl(*arrays, body, length, reverse, num_consts, num_carry):
    consts, carries = list(arrays[:num_consts]), list(arrays[num_consts:num_consts + num_carry])
    xs = arrays[num_consts + num_carry:]
    ys = [np.empty((length, *v.shape), v.dtype) for v in body.outputs[num_carry:]]
    for step in (range(length - 1, -1, -1) if reverse else range(length)):
        outs = evaluate(body, consts + carries + [x[step] for x in xs])
        carries = outs[:num_carry]
        for y, value in zip(ys, outs[num_carry:]):
            y[step] = value
    return tuple(carries) + tuple(ys)


scan_p = Primitive("scan", _scan_shape, _scan_impl, traced_always=True)


# ----------------------------------------------------------------------------- while

def _while_shape(inputs, cond, body, num_cond_consts, num_body_consts, checkpoints):
    """inputs: cond's consts, body's consts, initial carries. cond(consts, carries) -> bool[];
    body(consts, carries) -> carries; the output: the carries when cond is first false."""
    split = num_cond_consts + num_body_consts
    cond_consts, body_consts, init = inputs[:num_cond_consts], inputs[num_cond_consts:split], inputs[split:]
    _check_types("while_loop cond inputs", _types(cond.inputs), _types(cond_consts) + _types(init))
    _check_types("while_loop cond output", [((), dtypes.BOOL)], _types(cond.outputs))
    _check_types("while_loop body inputs", _types(body.inputs), _types(body_consts) + _types(init))
    _check_types("while_loop body carries", _types(init), _types(body.outputs))
    return (), ir.tuple_dtype(_types(init))


def _while_impl(*arrays, cond, body, num_cond_consts, num_body_consts, checkpoints):
    split = num_cond_consts + num_body_consts
    cond_consts, body_consts, carries = list(arrays[:num_cond_consts]), list(arrays[num_cond_consts:split]), \
        list(arrays[split:])
    while bool(evaluate(cond, cond_consts + carries)[0]):
        carries = evaluate(body, body_consts + carries)
    return tuple(carries)


# while[cond, body, checkpoints] (cond consts, body consts, initial carries): `checkpoints` bounds the
# carries reverse mode keeps (None: every one), see carries_in_reverse.
while_p = Primitive("while", _while_shape, _while_impl, traced_always=True)


def carries_in_reverse(cond, body, carry, checkpoints):
    """The carries entering each step of `while cond(carry): carry = body(carry)`, last step first.

    checkpoints=None keeps every carry. An int C keeps at most C of them, every k-th, with k doubled
    (and every other kept carry dropped) whenever C are kept; the carries between two kept ones are
    recomputed from the earlier when the backward pass reaches them. Memory is C + k carries, k < 2
    steps / C, for one more forward pass: 1e6 steps with C = 1000 keep about 2000 carries.
    """
    tape, every, steps = [], 1, 0
    while cond(carry):
        if steps % every == 0:
            if checkpoints is not None and len(tape) == checkpoints:
                tape, every = tape[::2], every * 2
            if steps % every == 0:
                tape.append((steps, carry))
        carry, steps = body(carry), steps + 1
    end = steps
    for start, carry in reversed(tape):
        segment = [carry]
        for _ in range(start + 1, end):
            segment.append(body(segment[-1]))
        end = start
        while segment:
            yield segment.pop()


def _while_vjp_shape(inputs, cond, body, step, num_cond_consts, num_body_consts, checkpoints):
    """inputs: the while's inputs, then the cotangents of its float carries. step(body consts, carries,
    carry cotangents out, const cotangents so far) -> (carry cotangents in, const cotangents); the output:
    the cotangents of the float carries' initial values and of the float body consts."""
    num_float_carries = len(step.outputs) - sum(dtypes.is_float(v.dtype) for v in body.inputs[:num_body_consts])
    _while_shape(inputs[:len(inputs) - num_float_carries], cond, body, num_cond_consts, num_body_consts, checkpoints)
    return (), ir.tuple_dtype(_types(step.outputs))


def _while_vjp_impl(*arrays, cond, body, step, num_cond_consts, num_body_consts, checkpoints):
    split = num_cond_consts + num_body_consts
    num_carry = len(body.outputs)
    cond_consts, body_consts = list(arrays[:num_cond_consts]), list(arrays[num_cond_consts:split])
    init, cts = list(arrays[split:split + num_carry]), list(arrays[split + num_carry:])
    sums = [np.zeros(v.shape, v.dtype) for v in step.inputs[len(step.inputs) - (len(step.outputs) - len(cts)):]]
    for carry in carries_in_reverse(lambda c: bool(evaluate(cond, cond_consts + c)[0]),
                                    lambda c: evaluate(body, body_consts + c), init, checkpoints):
        outs = evaluate(step, body_consts + carry + cts + sums)
        cts, sums = outs[:len(cts)], outs[len(cts):]
    return tuple(cts + sums)


# The reverse pass of a while loop: runs the loop forward keeping carries (carries_in_reverse), then
# `step` over them from the last to the first, accumulating the cotangents (autodiff/control.py).
while_vjp_p = Primitive("while_vjp", _while_vjp_shape, _while_vjp_impl, traced_always=True)


# ----------------------------------------------------------------------------- switch

def _switch_shape(inputs, branches):
    """inputs: an integer index, then the operands every branch takes; branch k runs for index k
    (clamped into range, as JAX's switch). Every branch returns the same types."""
    index, operands = inputs[0], inputs[1:]
    if index.shape != () or np.dtype(index.dtype).kind not in "iub":
        raise ShapeError(f"switch: the index must be an integer scalar, got {ir.Value(index.shape, index.dtype).type_str()}")
    outs = _types(branches[0].outputs)
    for k, branch in enumerate(branches):
        _check_types(f"switch branch {k} inputs", _types(branch.inputs), _types(operands))
        _check_types(f"switch branch {k} outputs (branch 0 returns {len(outs)} value(s))", outs,
                     _types(branch.outputs))
    return (), ir.tuple_dtype(outs)


def clamp_index(index, count: int) -> int:
    """The branch a switch runs for `index`: clamped into [0, count)."""
    return min(max(int(index), 0), count - 1)


def _switch_impl(index, *operands, branches):
    return tuple(evaluate(branches[clamp_index(index, len(branches))], list(operands)))


switch_p = Primitive("switch", _switch_shape, _switch_impl, traced_always=True)

