"""LLVM rules of the control-flow primitives (symgrad/ops/control.py): real loops and branches.

Each sub-graph (a loop's body or condition, a switch's branch) becomes an internal function of
the kernel's module, `i32 f(ptr in..., ptr out...)`, planned by a kernel builder of its own
(KernelBuilder.nested). A loop is one job calling its body once per step with pointers into
the buffers it reads and writes: the carries, and the rows of the stacked xs and ys (no copies).
The carries live in two sets of buffers that swap roles each step, so a step never copies them.
A while loop's reverse pass (while_vjp) keeps the carries it needs on a heap tape (tape.py)
whose length is found at run time, bounded by checkpoints if asked. A switch is an LLVM
`switch` over calls of its branches. A nonzero status from a call returns from the caller at
once (freeing any tape). A small function called from one place is inlined by LLVM.
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir

from symgrad import dtypes
from symgrad import ir as sir
from symgrad.ops.control import result_p, reverse_twins, split_scan, split_while, split_while_vjp

from . import heap
from .jobs import CustomJob
from .operands import Buffer, Operand, zero
from .tape import Tape
from .types import I64, PTR, cast, storage_type


class Components(Operand):
    """A loop's or a switch's tuple value: one buffer per component, which `result` nodes read."""

    cost = 0

    def __init__(self, parts):
        self.parts = list(parts)
        self.shape, self.dtype, self.reads = (), None, frozenset()


def in_memory(k, operand) -> Buffer:
    """`operand` as a buffer a called function can read: itself, or a copy computed into the workspace."""
    return operand if isinstance(operand, Buffer) else k.materialize(operand)


def _component_buffers(k, node) -> list:
    """A buffer per component of node's tuple value: the graph output a `result` of it is, where
    one is (the loop or branch then writes it in place), else a workspace buffer."""
    read_as = {}
    for reader in k.readers(node.out):
        if reader.prim is result_p:
            read_as.setdefault(reader.params["index"], reader.out)
    return [k.buffer_for(read_as[index]) if index in read_as else k.new_buffer(shape, dtype)
            for index, (shape, dtype) in enumerate(sir.components(node.out.dtype))]


def _pointers(buffers) -> list:
    return [buffer.pointer for buffer in buffers]


def _reads(buffers) -> frozenset:
    return frozenset().union(*(buffer.reads for buffer in buffers))


def _row(k, buffer: Buffer, position) -> ir.Value:
    """The address of buffer[position], a row along its first axis (buffers are C-contiguous)."""
    size = int(np.prod(buffer.shape[1:], dtype=np.int64))
    offset = k.b.mul(position, ir.Constant(I64, size), flags=["nsw"])
    return k.b.gep(buffer.pointer, [offset], source_etype=storage_type(buffer.dtype), inbounds=True)


# ----------------------------------------------------------------------------- scan

def scan(k, node, inputs):
    p = node.params
    length, reverse, num_consts, num_carry = p["length"], p["reverse"], p["num_consts"], p["num_carry"]
    consts, init, xs = split_scan(inputs, num_consts, num_carry)
    consts, xs = [in_memory(k, x) for x in consts], [in_memory(k, x) for x in xs]
    parts = _component_buffers(k, node)
    finals, ys = parts[:num_carry], parts[num_carry:]
    spares = [k.new_buffer(buffer.shape, buffer.dtype) for buffer in finals]
    # a step reads the carries from one set and writes the other, then the two swap roles: started
    # in `finals` after an even number of steps, the last step writes the carries there
    current, following = (finals, spares) if length % 2 == 0 else (spares, finals)
    for value, buffer in zip(init, current):
        k.materialize(value, buffer)
    body = k.nested(p["body"], "body")

    def emit(k):
        const_pointers = _pointers(consts)

        def step(i, *carried):
            position = k.b.sub(ir.Constant(I64, length - 1), i) if reverse else i
            now, after = list(carried[:num_carry]), list(carried[num_carry:])
            k.call_checked(body, const_pointers + now + [_row(k, x, position) for x in xs] + after +
                           [_row(k, y, position) for y in ys])
            return after + now
        k.for_range(0, length, step, carried=_pointers(current + following))

    k.jobs.append(CustomJob(tuple(current + following + ys), _reads(consts + xs + current + following), emit))
    return Components(parts)


# ----------------------------------------------------------------------------- while

def while_loop(k, node, inputs):
    p = node.params
    cond_consts, body_consts, init = split_while(inputs, p["num_cond_consts"], p["num_body_consts"])
    cond_consts, body_consts = [in_memory(k, x) for x in cond_consts], [in_memory(k, x) for x in body_consts]
    finals = _component_buffers(k, node)
    spares = [k.new_buffer(buffer.shape, buffer.dtype) for buffer in finals]
    for value, buffer in zip(init, finals):
        k.materialize(value, buffer)
    flag = k.new_buffer((), dtypes.BOOL)
    cond, body = k.nested(p["cond"], "cond"), k.nested(p["body"], "body")
    twin = _reverse_passes(k).get(id(node))
    share = k.shared[id(twin)] = _SharedTape(Tape(finals, p["checkpoints"]), finals) if twin is not None else None

    def emit(k):
        if share is not None and id(share.reverse_job) in k.emitting:
            share.keep(k, cond, body, cond_consts, body_consts, spares, flag, p["checkpoints"])
            return
        b = k.b
        function, preheader = b.block.parent, b.block
        header, inside, done = (function.append_basic_block(name) for name in ("while", "while.body", "while.end"))
        b.branch(header)
        b.position_at_end(header)
        now, after = [b.phi(PTR) for _ in finals], [b.phi(PTR) for _ in finals]
        for phi, pointer in zip(now + after, _pointers(finals + spares)):
            phi.add_incoming(pointer, preheader)
        k.call_checked(cond, _pointers(cond_consts) + now + [flag.pointer])
        b.cbranch(flag.load(k, []), inside, done)
        b.position_at_end(inside)
        k.call_checked(body, _pointers(body_consts) + now + after)
        for phi, pointer in zip(now + after, after + now):  # the carries just written are read next
            phi.add_incoming(pointer, b.block)
        b.branch(header)
        b.position_at_end(done)
        if finals:  # after an odd number of steps the carries are in the spares
            with b.if_then(b.icmp_unsigned("!=", now[0], finals[0].pointer)):
                for final, pointer in zip(finals, now):
                    heap.copy(k, final.pointer, pointer, final.nbytes)

    reads = _reads(cond_consts + body_consts + finals + spares)
    k.jobs.append(CustomJob(tuple(finals + spares + [flag]), reads | flag.reads, emit))
    return Components(finals)


# ----------------------------------------------------------------------------- while_vjp

def while_vjp(k, node, inputs):
    """The reverse pass of a while loop, as ops.control.carries_in_reverse runs it: the loop forward,
    keeping carries on a heap tape (tape.py: every one, or at most `checkpoints`, every k-th, k doubling
    as the tape fills); then for each kept carry, last first, the carries after it recomputed into the
    segment, and `step` pulling the cotangents back through them, in two sets of buffers that swap."""
    p = node.params
    checkpoints = p["checkpoints"]
    cond_consts, body_consts, init, cotangents = split_while_vjp(inputs, p["body"], p["num_cond_consts"],
                                                                 p["num_body_consts"])
    cond_consts, body_consts = [in_memory(k, x) for x in cond_consts], [in_memory(k, x) for x in body_consts]
    carries = [k.materialize(value) for value in init]
    spare_carries = [k.new_buffer(buffer.shape, buffer.dtype) for buffer in carries]
    pulled = _component_buffers(k, node)  # the carries' cotangents, then the sums over the body consts
    for value, buffer in zip(cotangents, pulled):
        k.materialize(value, buffer)
    for buffer in pulled[len(cotangents):]:
        k.fill(buffer, zero(buffer.dtype))
    spare_pulled = [k.new_buffer(buffer.shape, buffer.dtype) for buffer in pulled]
    flag = k.new_buffer((), dtypes.BOOL)
    cond, body, step = (k.nested(p[name], name) for name in ("cond", "body", "step"))
    share = k.shared.get(id(node))

    def emit(k):
        b, one = k.b, ir.Constant(I64, 1)
        consts = _pointers(body_consts)
        if share is not None and share.kept_in is b.block.parent:  # the loop kept its carries: no second run
            tape, steps, every = share.tape, share.steps, share.every
            k.release(tape.free)
        else:
            tape = Tape(carries, checkpoints)
            now, after = _variables(k, carries), _variables(k, spare_carries)
            steps, every = _run_keeping(k, tape, checkpoints, cond, body, cond_consts, body_consts, now, after, flag)

        # backward: kept carry `index` entered step index * stride; from the last, each one's segment of
        # steps (up to where the next kept carry starts) is recomputed, then pulled back through, last first
        count, stride = tape.length(k), b.load(every, typ=I64)
        if checkpoints is not None:
            tape.reserve_segment(k, b.sub(stride, one))
        cts_now, cts_after = _variables(k, pulled), _variables(k, spare_pulled)
        end = _variable(k, b.load(steps, typ=I64))

        def pull(record):  # the cotangents back through the step entered with the carry in `record`
            ct_in, ct_out = _loads(k, cts_now), _loads(k, cts_after)
            k.call_checked(step, consts + tape.components(k, record) + ct_in + ct_out, tape.free)
            _swap(k, cts_now, cts_after)

        def segment(r):
            index = b.sub(b.sub(count, one), r)
            kept = tape.record(k, index)
            if checkpoints is None:  # every carry was kept: segments of one step
                pull(kept)
                return
            start = b.mul(index, stride)
            length = b.sub(b.load(end, typ=I64), start)

            def carry_at(j):  # the carry entering step start + j: the kept one, or one recomputed
                return b.select(b.icmp_unsigned("==", j, ir.Constant(I64, 0)), kept,
                                tape.segment_record(k, b.sub(j, one)))

            def recompute(j):
                previous = b.sub(j, one)
                k.call_checked(body, consts + tape.components(k, carry_at(previous))
                               + tape.components(k, tape.segment_record(k, previous)), tape.free)
            k.for_range(1, length, recompute)
            k.for_range(0, length, lambda r: pull(carry_at(b.sub(b.sub(length, one), r))))
            b.store(start, end)

        k.for_range(0, count, segment)
        tape.free(k)
        if pulled:  # after an odd number of steps the cotangents are in the spares
            final = _loads(k, cts_now)
            with b.if_then(b.icmp_unsigned("!=", final[0], pulled[0].pointer)):
                for buffer, pointer in zip(pulled, final):
                    heap.copy(k, buffer.pointer, pointer, buffer.nbytes)

    buffers = carries + spare_carries + pulled + spare_pulled + [flag]
    # after the loop whose tape it may use (its results are read to say so)
    job = CustomJob(tuple(buffers), _reads(cond_consts + body_consts + buffers + (share.finals if share else [])), emit)
    k.jobs.append(job)
    if share is not None:
        share.reverse_job = job
    return Components(pulled)


def _run_keeping(k, tape, checkpoints, cond, body, cond_consts, body_consts, now, after, flag) -> tuple:
    """Emit the while loop from the carries the slots `now` point to (`after`: the other set), keeping
    carries on `tape` (which it starts); the slots of its step count and of the stride of the kept ones."""
    b, one = k.b, ir.Constant(I64, 1)
    tape.start(k)
    steps, every = _variable(k, ir.Constant(I64, 0)), _variable(k, one)
    consts = _pointers(body_consts)
    function = b.block.parent
    header, inside, done = (function.append_basic_block(name) for name in ("while", "while.body", "while.end"))
    b.branch(header)
    b.position_at_end(header)
    current = _loads(k, now)
    k.call_checked(cond, _pointers(cond_consts) + current + [flag.pointer], tape.free)
    b.cbranch(flag.load(k, []), inside, done)
    b.position_at_end(inside)
    _keep(k, tape, checkpoints, b.load(steps, typ=I64), every, current)
    following = _loads(k, after)
    k.call_checked(body, consts + current + following, tape.free)
    _swap(k, now, after)
    b.store(b.add(b.load(steps, typ=I64), one, flags=["nuw"]), steps)
    b.branch(header)
    b.position_at_end(done)
    return steps, every


class _SharedTape:
    """A while loop whose reverse pass (while_vjp on the same inputs) comes later in the same graph, as
    in value_and_grad: when both are emitted into one function, the loop keeps its carries on the tape
    as it runs and the reverse pass pulls back through them, instead of running the loop a second time."""

    def __init__(self, tape, finals):
        self.tape, self.finals = tape, finals
        self.reverse_job = None  # the reverse pass's job (set when it is planned)
        self.kept_in = None  # the function in which the loop kept the tape
        self.steps = self.every = None  # there, the slots of its step count and of the kept carries' stride

    def keep(self, k, cond, body, cond_consts, body_consts, spares, flag, checkpoints):
        """Emit the loop keeping carries; its results end in `finals`; the tape is held until the
        reverse pass takes it (an error return in between frees it)."""
        now, after = _variables(k, self.finals), _variables(k, spares)
        self.steps, self.every = _run_keeping(k, self.tape, checkpoints, cond, body, cond_consts, body_consts,
                                              now, after, flag)
        if self.finals:  # after an odd number of steps the carries are in the spares
            current = _loads(k, now)
            with k.b.if_then(k.b.icmp_unsigned("!=", current[0], self.finals[0].pointer)):
                for final, pointer in zip(self.finals, current):
                    heap.copy(k, final.pointer, pointer, final.nbytes)
        self.kept_in = k.b.block.parent
        k.hold(self.tape.free)


def _reverse_passes(k) -> dict:
    """id(while node) -> the while_vjp node of the same loop on the same inputs after it in k's graph."""
    if "while reverse passes" not in k.shared:
        k.shared["while reverse passes"] = reverse_twins(k.graph)
    return k.shared["while reverse passes"]


def _keep(k, tape, checkpoints, step, every, carry):
    """Keep `carry`, entering step number `step`, as carries_in_reverse does: every one; or, with
    `checkpoints`, when `step` is a multiple of `every` (a power of two), a full tape first keeping
    every other carry and `every` doubling."""
    if checkpoints is None:
        tape.push(k, carry)
        return
    b = k.b

    def due():
        mask = b.sub(b.load(every, typ=I64), ir.Constant(I64, 1))
        return b.icmp_unsigned("==", b.and_(step, mask), ir.Constant(I64, 0))

    with b.if_then(due()):
        with b.if_then(b.icmp_unsigned("==", tape.length(k), ir.Constant(I64, checkpoints))):
            tape.thin(k)
            b.store(b.shl(b.load(every, typ=I64), ir.Constant(I64, 1)), every)
        with b.if_then(due()):
            tape.push(k, carry)


def _variable(k, value) -> ir.Value:
    """A stack slot holding `value` (LLVM keeps it in a register)."""
    slot = k.alloca(value.type)
    k.b.store(value, slot)
    return slot


def _variables(k, buffers) -> list:
    """A slot per buffer holding its pointer: pointers that swap."""
    return [_variable(k, buffer.pointer) for buffer in buffers]


def _loads(k, slots) -> list:
    return [k.b.load(slot, typ=PTR) for slot in slots]


def _swap(k, slots, others):
    mine, theirs = _loads(k, slots), _loads(k, others)
    for slot, value in zip(slots + others, theirs + mine):
        k.b.store(value, slot)


# ----------------------------------------------------------------------------- switch

def switch(k, node, inputs):
    index, operands = inputs[0], [in_memory(k, x) for x in inputs[1:]]
    outs = _component_buffers(k, node)
    branches = [k.nested(graph, "branch") for graph in node.params["branches"]]

    def emit(k):
        b = k.b
        arguments = _pointers(operands) + _pointers(outs)
        if len(branches) == 1:
            k.call_checked(branches[0], arguments)
            return
        # the index clamped into [0, n-1], as JAX's switch: the first branch runs for any index
        # below 0 (the last case's default), the last for any at or above n-1
        chosen = cast(b, index.load(k, []), index.dtype, dtypes.INT64)
        chosen = b.select(b.icmp_signed("<", chosen, ir.Constant(I64, 0)), ir.Constant(I64, 0), chosen)
        function = b.block.parent
        done = function.append_basic_block("switch.end")
        blocks = [function.append_basic_block(f"branch{position}") for position in range(len(branches))]
        choice = b.switch(chosen, blocks[-1])
        for position, block in enumerate(blocks[:-1]):
            choice.add_case(ir.Constant(I64, position), block)
        for branch, block in zip(branches, blocks):
            b.position_at_end(block)
            k.call_checked(branch, arguments)
            b.branch(done)
        b.position_at_end(done)

    k.jobs.append(CustomJob(tuple(outs), index.reads | _reads(operands), emit))
    return Components(outs)


def result(k, node, inputs):
    return inputs[0].parts[node.params["index"]]


def scan_reads_buffers(node, blas_calls) -> tuple:
    consts, _, xs = split_scan(node.inputs, node.params["num_consts"], node.params["num_carry"])
    return tuple(consts + xs)


def while_reads_buffers(node, blas_calls) -> tuple:
    p = node.params
    cond_consts, body_consts, _ = split_while(node.inputs, p["num_cond_consts"], p["num_body_consts"])
    return tuple(cond_consts + body_consts)


def switch_reads_buffers(node, blas_calls) -> tuple:
    return node.inputs[1:]
