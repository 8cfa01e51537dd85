"""Matrix products through the BLAS that NumPy ships (its bundled OpenBLAS), called by address.

JIT kernels call `symgrad_rt_dgemm` / `symgrad_rt_sgemm` (CBLAS row-major, 64-bit integers),
which the JIT links to NumPy's `scipy_cblas_?gemm64_` (runtime.blas_addresses). A shared
library (AOT) instead calls through exported pointer slots its loader may fill, and runs
symgrad's own loop while a slot is empty. Products too small to pay for a BLAS call use the
loop too (kernel._matmul). A transposed operand is passed with BLAS's transpose flag.
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir

from codegen import runtime

from .operands import Buffer, IndexMap
from .types import F32, F64, I32, I64, PTR

SYMBOLS = {np.dtype(np.float64): "symgrad_rt_dgemm", np.dtype(np.float32): "symgrad_rt_sgemm"}
GEMM_NAMES = {np.dtype(np.float64): "dgemm", np.dtype(np.float32): "sgemm"}
# Below this many multiply-adds the call overhead outweighs BLAS's speed.
MIN_WORK = 8 * 8 * 8
_ROW_MAJOR, _NO_TRANS, _TRANS = 101, 111, 112


def addresses() -> dict[str, int]:
    """The JIT's link table: symgrad_rt_?gemm -> address (empty when NumPy ships no BLAS)."""
    found = runtime.blas_addresses()
    return {SYMBOLS[dtype]: found[name] for dtype, name in GEMM_NAMES.items() if name in found}


def worth_calling(dtype, m: int, n: int, inner: int, linked: bool = True) -> bool:
    """Whether a product this size should call BLAS (`linked`: the JIT, which needs one found now)."""
    return np.dtype(dtype) in SYMBOLS and (bool(addresses()) or not linked) and m * n * inner >= MIN_WORK


def operand(k, x):
    """(buffer, transposed): x itself, the buffer x transposes in its last two axes, or a copy."""
    if isinstance(x, Buffer):
        return x, False
    perm = getattr(x, "perm", None)
    if isinstance(x, IndexMap) and isinstance(x.source, Buffer) and perm is not None:
        rank = len(perm)
        if perm == tuple(range(rank - 2)) + (rank - 1, rank - 2):
            return x.source, True
    return k.materialize(x), False


def _signature(dtype) -> ir.FunctionType:
    real = F64 if np.dtype(dtype) == np.float64 else F32
    return ir.FunctionType(ir.VoidType(), [I32, I32, I32, I64, I64, I64, real, PTR, I64, PTR, I64, real, PTR, I64])


def linked_gemm(module, dtype) -> ir.Function:
    """The gemm the JIT links by name."""
    name = SYMBOLS[np.dtype(dtype)]
    if name in module.globals:
        return module.globals[name]
    return ir.Function(module, _signature(dtype), name)


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


def emit_gemm(k, gemm, dtype, batch, m, n, inner, a_arg, b_arg, out: Buffer):
    """out[b] = a[b] @ b[b] for every batch index, one call of `gemm` each."""
    real = F64 if np.dtype(dtype) == np.float64 else F32
    (a, a_t), (b, b_t) = a_arg, b_arg
    lda = m if a_t else inner
    ldb = inner if b_t else n
    count = int(np.prod(batch, dtype=np.int64)) if batch else 1

    def call(i):
        def at(buffer, step):
            offset = k.b.mul(i, ir.Constant(I64, step))
            return k.b.gep(buffer.pointer, [offset], source_etype=real)
        k.b.call(gemm, [ir.Constant(I32, _ROW_MAJOR), ir.Constant(I32, _TRANS if a_t else _NO_TRANS),
                        ir.Constant(I32, _TRANS if b_t else _NO_TRANS), ir.Constant(I64, m), ir.Constant(I64, n),
                        ir.Constant(I64, inner), ir.Constant(real, 1.0), at(a, m * inner), ir.Constant(I64, lda),
                        at(b, inner * n), ir.Constant(I64, ldb), ir.Constant(real, 0.0), at(out, m * n),
                        ir.Constant(I64, n)])
    if count == 1:
        call(ir.Constant(I64, 0))
    else:
        k.for_range(0, count, call)
