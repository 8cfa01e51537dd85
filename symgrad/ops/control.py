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

from dataclasses import dataclass
from typing import Callable

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


@dataclass(frozen=True)
class Interpreter:
    """How the loops and branches below run their sub-graphs: on arrays with the NumPy references
    (ARRAYS), or on SymPy values (sg.symbolic, closed_form.py)."""

    run: Callable     # run(graph, values) -> the outputs
    decide: Callable  # decide(value, what) -> the int a condition or an index stands for
    rows: Callable    # rows(length, value type) -> a buffer of `length` rows of that type (stacked ys)
    zeros: Callable   # zeros(value type) -> zeros of that type


ARRAYS = Interpreter(evaluate, lambda value, what: int(value), lambda length, v: np.empty((length, *v.shape), v.dtype),
                     lambda v: np.zeros(v.shape, v.dtype))


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

def split_scan(values, num_consts, num_carry) -> tuple:
    """A scan's inputs (or anything laid out like them) as (consts, carries, xs) lists."""
    values = list(values)
    return values[:num_consts], values[num_consts:num_consts + num_carry], values[num_consts + num_carry:]


def _scan_shape(inputs, body, length, reverse, num_consts, num_carry):
    """inputs: consts, initial carries, xs (each stacked along a leading axis of `length`).
    body(consts, carries, x slices) -> (carries, y slices); the output: (carries, stacked ys)."""
    consts, init, xs = split_scan(inputs, num_consts, num_carry)
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


def run_scan(interpreter, values, body, length, reverse, num_consts, num_carry) -> tuple:
    consts, carries, xs = split_scan(values, num_consts, num_carry)
    ys = [interpreter.rows(length, v) for v in body.outputs[num_carry:]]
    for step in (range(length - 1, -1, -1) if reverse else range(length)):
        outs = interpreter.run(body, consts + carries + [x[step] for x in xs])
        carries = outs[:num_carry]
        for y, value in zip(ys, outs[num_carry:]):
            y[step] = value
    return tuple(carries) + tuple(ys)


scan_p = Primitive("scan", _scan_shape, lambda *arrays, **attrs: run_scan(ARRAYS, arrays, **attrs),
                   traced_always=True)


# ----------------------------------------------------------------------------- while

def split_while(values, num_cond_consts, num_body_consts) -> tuple:
    """A while's inputs (or a while_vjp's) as (cond consts, body consts, the rest) lists."""
    values, split = list(values), num_cond_consts + num_body_consts
    return values[:num_cond_consts], values[num_cond_consts:split], values[split:]


def _while_shape(inputs, cond, body, num_cond_consts, num_body_consts, checkpoints):
    """inputs: cond's consts, body's consts, initial carries. cond(consts, carries) -> bool[];
    body(consts, carries) -> carries; the output: the carries when cond is first false."""
    cond_consts, body_consts, init = split_while(inputs, num_cond_consts, num_body_consts)
    _check_types("while_loop cond inputs", _types(cond.inputs), _types(cond_consts) + _types(init))
    _check_types("while_loop cond output", [((), dtypes.BOOL)], _types(cond.outputs))
    _check_types("while_loop body inputs", _types(body.inputs), _types(body_consts) + _types(init))
    _check_types("while_loop body carries", _types(init), _types(body.outputs))
    return (), ir.tuple_dtype(_types(init))


def run_while(interpreter, values, cond, body, num_cond_consts, num_body_consts, checkpoints) -> tuple:
    cond_consts, body_consts, carries = split_while(values, num_cond_consts, num_body_consts)
    while interpreter.decide(interpreter.run(cond, cond_consts + carries)[0], "a while loop's condition"):
        carries = interpreter.run(body, body_consts + carries)
    return tuple(carries)


# while[cond, body, checkpoints] (cond consts, body consts, initial carries): `checkpoints` bounds the
# carries reverse mode keeps (None: every one), see carries_in_reverse.
while_p = Primitive("while", _while_shape, lambda *arrays, **attrs: run_while(ARRAYS, arrays, **attrs),
                    traced_always=True)


def carries_in_reverse(cond, body, carry, checkpoints):
    """The carries entering each step of `while cond(carry): carry = body(carry)`, last step first
    (kept_carries, then replayed_in_reverse)."""
    tape, steps, _ = kept_carries(cond, body, carry, checkpoints)
    return replayed_in_reverse(body, tape, steps)


def kept_carries(cond, body, carry, checkpoints):
    """Run `while cond(carry): carry = body(carry)` keeping the carries reverse mode needs: (the tape of
    (step, carry entering it) pairs, the number of steps, the final carry).

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
    return tape, steps, carry


def replayed_in_reverse(body, tape, steps):
    """The carries entering each of `steps` steps, last first, from a tape of kept_carries (the carries
    after a kept one recomputed from it by `body`)."""
    end = steps
    for start, carry in reversed(tape):
        segment = [carry]
        for _ in range(start + 1, end):
            segment.append(body(segment[-1]))
        end = start
        while segment:
            yield segment.pop()


def reverse_twins(graph: ir.Graph) -> dict:
    """id(while node) -> the while_vjp node of the same loop on the same inputs after it in `graph` (as
    value_and_grad makes): a backend running both in one function can run the loop once, keeping its
    tape for the reverse pass."""
    loops, twins = {}, {}
    for node in graph.nodes:
        p = node.params
        if node.prim is while_p:
            loops[_loop_key(node.inputs, p)] = node
        elif node.prim is while_vjp_p:
            cond_consts, body_consts, init, _ = split_while_vjp(node.inputs, p["body"], p["num_cond_consts"],
                                                                p["num_body_consts"])
            loop = loops.get(_loop_key(cond_consts + body_consts + init, p))
            if loop is not None:
                twins[id(loop)] = node
    return twins


def _loop_key(inputs, p) -> tuple:
    return (tuple(id(value) for value in inputs), p["cond"], p["body"], p["num_cond_consts"], p["num_body_consts"],
            p["checkpoints"])


def split_while_vjp(values, body, num_cond_consts, num_body_consts) -> tuple:
    """A while_vjp's inputs as (cond consts, body consts, initial carries, carry cotangents) lists."""
    cond_consts, body_consts, rest = split_while(values, num_cond_consts, num_body_consts)
    num_carry = len(body.outputs)
    return cond_consts, body_consts, rest[:num_carry], rest[num_carry:]


def _while_vjp_shape(inputs, cond, body, step, num_cond_consts, num_body_consts, checkpoints):
    """inputs: the while's inputs, then the cotangents of its float carries. step(body consts, carries,
    carry cotangents out, const cotangents so far) -> (carry cotangents in, const cotangents); the output:
    the cotangents of the float carries' initial values and of the float body consts."""
    cts = split_while_vjp(inputs, body, num_cond_consts, num_body_consts)[3]
    _while_shape(inputs[:len(inputs) - len(cts)], cond, body, num_cond_consts, num_body_consts, checkpoints)
    return (), ir.tuple_dtype(_types(step.outputs))


def step_sums(step, num_cts) -> list:
    """The inputs of a while_vjp's step that carry the sums of the body consts' cotangents."""
    return step.inputs[len(step.inputs) - (len(step.outputs) - num_cts):]


def run_while_vjp(interpreter, values, cond, body, step, num_cond_consts, num_body_consts, checkpoints) -> tuple:
    cond_consts, body_consts, init, cts = split_while_vjp(values, body, num_cond_consts, num_body_consts)
    sums = [interpreter.zeros(v) for v in step_sums(step, len(cts))]
    for carry in carries_in_reverse(
            lambda c: interpreter.decide(interpreter.run(cond, cond_consts + c)[0], "a while loop's condition"),
            lambda c: interpreter.run(body, body_consts + c), init, checkpoints):
        outs = interpreter.run(step, body_consts + carry + cts + sums)
        cts, sums = outs[:len(cts)], outs[len(cts):]
    return tuple(cts + sums)


# The reverse pass of a while loop: runs the loop forward keeping carries (carries_in_reverse), then
# `step` over them from the last to the first, accumulating the cotangents (autodiff/control.py).
while_vjp_p = Primitive("while_vjp", _while_vjp_shape,
                        lambda *arrays, **attrs: run_while_vjp(ARRAYS, arrays, **attrs), traced_always=True)


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


def run_switch(interpreter, values, branches) -> tuple:
    index = clamp_index(interpreter.decide(values[0], "a switch's index"), len(branches))
    return tuple(interpreter.run(branches[index], list(values[1:])))


switch_p = Primitive("switch", _switch_shape, lambda *arrays, **attrs: run_switch(ARRAYS, arrays, **attrs),
                     traced_always=True)
