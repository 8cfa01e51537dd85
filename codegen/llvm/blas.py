"""Matrix products through the BLAS that NumPy ships (its bundled OpenBLAS), called by address.

JIT kernels call `symgrad_rt_?gemm` / `symgrad_rt_?gemv` (CBLAS row-major, 64-bit integers),
which the JIT links to NumPy's `scipy_cblas_?gemm64_` / `?gemv64_` (runtime.blas_addresses). A shared
library (AOT) instead calls through exported pointer slots its loader may fill, and runs
symgrad's own loop while a slot is empty. Products too small to pay for a BLAS call use the
loop too (rules._matmul). A transposed operand is passed with BLAS's transpose flag.
"""
from __future__ import annotations

import math

import numpy as np
from llvmlite import ir

from symgrad.codegen import runtime

from . import pool
from .operands import Buffer, IndexMap, Operand
from .types import F32, F64, I32, I64, PTR

PREFIX = {np.dtype(np.float64): "d", np.dtype(np.float32): "s"}
GEMM_NAMES = {dtype: prefix + "gemm" for dtype, prefix in PREFIX.items()}
# Below this many multiply-adds the call overhead outweighs BLAS's speed.
MIN_WORK = 8 * 8 * 8
_ROW_MAJOR, _NO_TRANS, _TRANS = 101, 111, 112


def addresses() -> dict[str, int]:
    """The JIT's link table: symgrad_rt_?gemm/?gemv -> address (empty when NumPy ships no BLAS)."""
    return {"symgrad_rt_" + name: address for name, address in runtime.blas_addresses().items()}


def worth_calling(dtype, m: int, n: int, inner: int, linked: bool = True) -> bool:
    """Whether a product this size should call BLAS (`linked`: the JIT, which needs one found now)."""
    return np.dtype(dtype) in PREFIX and (bool(addresses()) or not linked) and m * n * inner >= MIN_WORK


def operand(k, x):
    """(buffer, transposed, matrices, fill): x itself, the buffer x transposes in its last two axes, or a copy
    (of what x transposes, if it does); `matrices` is how many the buffer holds, fewer than the product's batch
    when x repeats them over leading axes (a convolution's weights for every example): batch index i reads matrix
    i % matrices, no copy.
    Patches filled by example (conv.ExamplePatches, maybe transposed) get a buffer of one matrix, and
    `fill(k, i)` stores matrix i there just before its call; else fill is None."""
    view = _view(x)
    if view is not None:
        return (*view, None)
    transposed = _swaps_last(x)
    patches = x.source if transposed else x
    if patches.in_pieces:
        matrix = k.new_buffer(patches.shape[-2:], patches.dtype)
        return matrix, transposed, 1, lambda k, i: patches.fill(k, matrix, i)
    if transposed:  # stored as computed, in row order (a transposing store gathers), and read with the transpose flag
        return k.materialize(x.source), True, math.prod(x.shape[:-2]), None
    return k.materialize(x), False, math.prod(x.shape[:-2]), None


def _view(x):
    """operand's (buffer, transposed, matrices) when x reads a buffer as it is, transposed, or repeated."""
    if isinstance(x, Buffer):
        return x, False, math.prod(x.shape[:-2])
    if not isinstance(x, IndexMap):
        return None
    rank, source = len(x.shape), x.source
    if _swaps_last(x):
        inner = _view(source)
        return None if inner is None else (inner[0], not inner[1], inner[2])
    if getattr(x, "broadcast", False) and len(source.shape) >= 2 and \
            tuple(source.shape) == x.shape[rank - len(source.shape):]:  # only leading axes added
        return _view(source)
    return None


def _swaps_last(x) -> bool:
    """Whether x is a view transposing its source's last two axes."""
    rank = len(x.shape)
    return isinstance(x, IndexMap) and getattr(x, "perm", None) == tuple(range(rank - 2)) + (rank - 1, rank - 2)


def _signature(dtype) -> ir.FunctionType:
    real = F64 if np.dtype(dtype) == np.float64 else F32
    return ir.FunctionType(ir.VoidType(), [I32, I32, I32, I64, I64, I64, real, PTR, I64, PTR, I64, real, PTR, I64])


def _gemv_signature(dtype) -> ir.FunctionType:
    real = F64 if np.dtype(dtype) == np.float64 else F32
    return ir.FunctionType(ir.VoidType(), [I32, I32, I64, I64, real, PTR, I64, PTR, I64, real, PTR, I64])


def linked_gemm(module, dtype) -> ir.Function:
    """The gemm the JIT links by name."""
    return _linked(module, f"symgrad_rt_{GEMM_NAMES[np.dtype(dtype)]}", _signature(dtype))


def linked_gemv(module, dtype) -> ir.Function:
    """The gemv the JIT links by name (matrix times vector: faster than gemm with one column)."""
    return _linked(module, f"symgrad_rt_{PREFIX[np.dtype(dtype)]}gemv", _gemv_signature(dtype))


def _linked(module, name, signature) -> ir.Function:
    if name in module.globals:
        return module.globals[name]
    return ir.Function(module, signature, name)


def gemm_slot(module, dtype) -> ir.GlobalVariable:
    """The exported pointer `<module>_blas_?gemm` a shared library's loader sets (null: no BLAS)."""
    name = f"{module.name}_blas_{GEMM_NAMES[np.dtype(dtype)]}"
    if name in module.globals:
        return module.globals[name]
    slot = ir.GlobalVariable(module, PTR, name)
    slot.initializer = ir.Constant(PTR, None)
    return slot


def slot_function(k, slot, dtype):
    """(is_set, callable) for the gemm pointer in `slot`."""
    pointer = k.b.load(slot, typ=_signature(dtype).as_pointer())  # typed, so it can be called
    return k.b.icmp_unsigned("!=", k.b.ptrtoint(pointer, I64), ir.Constant(I64, 0)), pointer


class ExampleProduct(Operand):
    """A batched product (N, m, n) computed one example at a time where it is read (a convolution's input
    gradient, which col2im sums into the image in cache): fill(k, target, i) stores example i's matrix in
    target, by one BLAS call; `scratch`: the buffers its operands fill by example (operand). No load: only a
    reader that fills (conv.col2im) is given one."""

    in_pieces = True

    def __init__(self, shape, dtype, dims, args, reads, scratch):
        self.shape, self.dtype, self.dims, self.args = tuple(shape), np.dtype(dtype), dims, args
        self.reads, self.scratch = reads, scratch

    def reshaped(self, shape) -> "ExampleProduct":
        """The same products seen with another shape of each example (the first axis stays)."""
        return ExampleProduct(shape, self.dtype, self.dims, self.args, self.reads, self.scratch)

    def fill(self, k, target, example):
        m, n, inner = self.dims
        use_threads(k, m * n * inner)
        emit_gemm(k, linked_gemm(k.module, self.dtype), self.dtype, (self.shape[0],), m, n, inner, *self.args,
                  target, example=example)


# Multiply-adds one BLAS call needs before running it on the kernel's threads pays: below this, OpenBLAS's
# threads cost more than they save when the call sits among other work (a 256x64 @ 64x128 product alone is
# 1.75x faster on two threads, yet an MLP step of such products was 0.9-1.3x, and under load far slower).
BLAS_PARALLEL_WORK = 1 << 22


def use_threads(k, work) -> None:
    """Tell the BLAS how many threads the next call, of `work` multiply-adds, runs on: the kernel's when it
    is large enough, else one. Each call tells its own (told once while it does not change)."""
    count = k.threads if work >= BLAS_PARALLEL_WORK else 1
    k.b.call(pool.declare_blas_threads(k.module), [ir.Constant(I32, count)])


def emit_gemm(k, gemm, dtype, batch, m, n, inner, a_arg, b_arg, out: Buffer, gemv=None, example=None):
    """out[b] = a[b] @ b[b] for every batch index, one call of `gemm` each (or of `gemv` when
    given and one side is a single row or column); with `example` (an i64), only that batch index's, into
    `out` holding one matrix."""
    real = F64 if np.dtype(dtype) == np.float64 else F32
    (a, a_t, a_count, a_fill), (b, b_t, b_count, b_fill) = a_arg, b_arg
    lda = m if a_t else inner
    ldb = inner if b_t else n
    count = int(np.prod(batch, dtype=np.int64)) if batch else 1
    constant = lambda value, ty=I64: ir.Constant(ty, value)  # noqa: E731

    def call(i):
        for fill in (a_fill, b_fill):
            if fill is not None:
                fill(k, i)

        def at(buffer, step, matrices=count):
            index = i if matrices == count else constant(0) if matrices == 1 else k.b.urem(i, constant(matrices))
            return k.b.gep(buffer.pointer, [k.b.mul(index, constant(step))], source_etype=real)
        a_at, b_at = at(a, m * inner, a_count), at(b, inner * n, b_count)
        out_at = at(out, m * n, 1 if example is not None else count)
        if gemv is not None and n == 1:  # out = A x, x the column of b
            rows, cols = (inner, m) if a_t else (m, inner)
            k.b.call(gemv, [constant(_ROW_MAJOR, I32), constant(_TRANS if a_t else _NO_TRANS, I32), constant(rows),
                            constant(cols), constant(1.0, real), a_at, constant(lda), b_at, constant(1),
                            constant(0.0, real), out_at, constant(1)])
        elif gemv is not None and m == 1:  # out = B^T x, x the row of a
            rows, cols = (n, inner) if b_t else (inner, n)
            k.b.call(gemv, [constant(_ROW_MAJOR, I32), constant(_NO_TRANS if b_t else _TRANS, I32), constant(rows),
                            constant(cols), constant(1.0, real), b_at, constant(ldb), a_at, constant(1),
                            constant(0.0, real), out_at, constant(1)])
        else:
            k.b.call(gemm, [constant(_ROW_MAJOR, I32), constant(_TRANS if a_t else _NO_TRANS, I32),
                            constant(_TRANS if b_t else _NO_TRANS, I32), constant(m), constant(n), constant(inner),
                            constant(1.0, real), a_at, constant(lda), b_at, constant(ldb), constant(0.0, real),
                            out_at, constant(n)])
    if example is not None:
        call(example)
    elif count == 1:
        call(constant(0))
    else:
        k.for_range(0, count, call)
