"""Which loop nests run in parallel, in which chunks, and the task the thread pool (pool.py) calls.

A loop nest (a group of loop jobs) is split along its outer axis when it is large (PARALLEL_WORK
elements or more) and every job in it either writes only at its own index (elementwise work, copies,
fills) or is a full reduction (a Fold): chunks then never write the same memory. The chunks depend on
the nest's shape alone, never on the thread count, and each reduction folds each chunk on its own before
the chunks' values are folded in chunk order: results are the same, bit for bit, for any thread count.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from llvmlite import ir

from .jobs import LoopJob
from .types import I32, I64, PTR

PARALLEL_WORK = 1 << 16  # elements a loop nest needs for its chunks to pay for waking threads
CHUNK = 1 << 15  # elements per chunk (about), so two threads share the work to within a few percent
MAX_CHUNKS = 256  # bounds the partial results kept on the stack
PARTIAL_BYTES = 8  # room for one reduction's partial value (a double or an int64 at most)


@dataclass(frozen=True)
class Chunks:
    """The outer axis of a loop nest (of `rows` rows) cut into `count` chunks of `rows_per_chunk` rows."""

    rows: int
    rows_per_chunk: int
    count: int


def chunks(group) -> Chunks | None:
    """How to split `group`'s loop nest, or None when it runs as one loop."""
    domain = group.domain
    if not domain or math.prod(domain) < PARALLEL_WORK or not all(map(_splittable, group.jobs)):
        return None
    rows, inner = domain[0], math.prod(domain[1:])
    per_chunk = max(1, -(-CHUNK // inner), -(-rows // MAX_CHUNKS))
    count = -(-rows // per_chunk)
    return Chunks(rows, per_chunk, count) if count > 1 else None


def _splittable(job) -> bool:
    if not isinstance(job, LoopJob):
        return False
    if job.fold is not None:
        return True
    return job.writes_at_index and job.prologue is None and job.epilogue is None


def emit_task(module: ir.Module, name: str, chunk_function: ir.Function, plan: Chunks, arguments: int,
              folds: int) -> ir.Function:
    """`void task(ptr ctx, i64 c)`, which the pool calls for chunk c: ctx holds the chunk function's `arguments`
    pointers (the kernel's inputs and outputs it uses, the workspace), then the partial results' block and the
    statuses' block; it calls chunk_function(pointers..., first row, end row, this chunk's partials) and stores
    its status."""
    task = ir.Function(module, ir.FunctionType(ir.VoidType(), [PTR, I64]), name)
    task.linkage = "internal"
    ctx, chunk = task.args
    b = ir.IRBuilder(task.append_basic_block())

    def slot(index):
        return b.load(b.gep(ctx, [ir.Constant(I64, index)], source_etype=PTR), typ=PTR)
    pointers = [slot(i) for i in range(arguments)]
    first = b.mul(chunk, ir.Constant(I64, plan.rows_per_chunk))
    end = b.add(first, ir.Constant(I64, plan.rows_per_chunk))
    end = b.select(b.icmp_signed("<", end, ir.Constant(I64, plan.rows)), end, ir.Constant(I64, plan.rows))
    partials = b.gep(slot(arguments), [b.mul(chunk, ir.Constant(I64, folds * PARTIAL_BYTES))],
                     source_etype=ir.IntType(8))
    status = b.call(chunk_function, [*pointers, first, end, partials])
    b.store(status, b.gep(slot(arguments + 1), [chunk], source_etype=I32))
    b.ret_void()
    return task
