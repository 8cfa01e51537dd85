"""Matrix products through the BLAS that NumPy ships (its bundled OpenBLAS), called by address.

Kernels call `symgrad_rt_dgemm` / `symgrad_rt_sgemm` (CBLAS row-major, 64-bit integers);
the JIT links those names to NumPy's `scipy_cblas_?gemm64_`. Products too small to pay
for a BLAS call, or any product when no BLAS is found, use symgrad's own loop instead
(kernel._matmul). A transposed operand is passed with BLAS's transpose flag, not copied.
"""
from __future__ import annotations

import ctypes
import functools
import glob
import os

import numpy as np
from llvmlite import ir

from .operands import Buffer, IndexMap
from .types import F32, F64, I32, I64, PTR

SYMBOLS = {np.dtype(np.float64): "symgrad_rt_dgemm", np.dtype(np.float32): "symgrad_rt_sgemm"}
_LIBRARY_SYMBOLS = {"symgrad_rt_dgemm": "scipy_cblas_dgemm64_", "symgrad_rt_sgemm": "scipy_cblas_sgemm64_"}
# Below this many multiply-adds the call overhead outweighs BLAS's speed.
MIN_WORK = 8 * 8 * 8
_ROW_MAJOR, _NO_TRANS, _TRANS = 101, 111, 112


@functools.cache
def addresses() -> dict[str, int]:
    """symbol -> address of NumPy's (or SciPy's) bundled ILP64 CBLAS gemm; empty if none is found."""
    import numpy
    roots = [os.path.dirname(os.path.dirname(numpy.__file__))]
    patterns = [os.path.join(root, lib, "libscipy_openblas64_*.so*") for root in roots
                for lib in ("numpy.libs", "scipy.libs", "scipy_openblas64/lib")]
    for path in sorted(p for pattern in patterns for p in glob.glob(pattern)):
        try:
            library = ctypes.CDLL(path)
            return {ours: ctypes.cast(getattr(library, theirs), ctypes.c_void_p).value
                    for ours, theirs in _LIBRARY_SYMBOLS.items()}
        except (OSError, AttributeError):
            continue
    return {}


def worth_calling(dtype, m: int, n: int, inner: int) -> bool:
    return np.dtype(dtype) in SYMBOLS and bool(addresses()) and m * n * inner >= MIN_WORK


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


def _declare(module, dtype) -> ir.Function:
    name = SYMBOLS[np.dtype(dtype)]
    if name in module.globals:
        return module.globals[name]
    real = F64 if np.dtype(dtype) == np.float64 else F32
    signature = ir.FunctionType(ir.VoidType(), [I32, I32, I32, I64, I64, I64, real, PTR, I64, PTR, I64, real, PTR, I64])
    return ir.Function(module, signature, name)


def emit_gemm(k, dtype, batch, m, n, inner, a_arg, b_arg, out: Buffer):
    """out[b] = a[b] @ b[b] for every batch index, one gemm call each."""
    gemm = _declare(k.module, dtype)
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
