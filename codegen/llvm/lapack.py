"""sg.linalg's cholesky, triangular_solve and solve in native code, through the LAPACK NumPy ships.

JIT kernels call `symgrad_rt_?potrf`, `?trsm`, `?getrf`, `?getrs` (the Fortran interface with 64-bit
integers: every argument by address, matrices column-major), which the JIT links to NumPy's bundled
OpenBLAS (runtime.lapack_addresses), as it links BLAS. A row-major matrix is the column-major matrix of
its transpose, which the rules below use instead of copying: the lower triangle of a row-major a is the
upper one of that column-major matrix, and X = op(T)^-1 B row by row is X^T = B^T op(T)^-T column by
column. A factorization that fails (a singular or indefinite matrix) is NumPy's LinAlgError, with
NumPy's message. Ahead-of-time libraries do not call LAPACK (aot.py refuses these primitives there).
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir

from symgrad.codegen import runtime

from .jobs import CustomJob
from .operands import Buffer, transpose
from .types import F32, F64, I8, I64, PTR, storage_type

PREFIX = {np.dtype(np.float64): "d", np.dtype(np.float32): "s"}
SINGULAR, INDEFINITE = runtime.LINALG_ERRORS


def addresses() -> dict[str, int]:
    """The JIT's link table: symgrad_rt_?potrf ... -> address (empty when NumPy ships no LAPACK)."""
    return {"symgrad_rt_" + name: address for name, address in runtime.lapack_addresses().items()}


def _routine(k, name, dtype, arguments: int, characters: int):
    """The external LAPACK routine `symgrad_rt_<d|s><name>`: `arguments` pointers, then the hidden
    lengths (i64) of its `characters` character arguments (gfortran's convention)."""
    symbol = f"symgrad_rt_{PREFIX[np.dtype(dtype)]}{name}"
    existing = k.module.globals.get(symbol)
    if existing is not None:
        return existing
    return ir.Function(k.module, ir.FunctionType(ir.VoidType(), [PTR] * arguments + [I64] * characters), symbol)


class _Call:
    """Arguments by address for one routine call: allocas in the function's entry block."""

    def __init__(self, k, dtype):
        self.k, self.real = k, F64 if np.dtype(dtype) == np.float64 else F32

    def _slot(self, typ, value):
        with self.k.b.goto_block(self.k.entry):
            slot = self.k.b.alloca(typ)
        self.k.b.store(value, slot)
        return slot

    def char(self, letter):
        return self._slot(I8, ir.Constant(I8, ord(letter)))

    def int(self, value):
        return self._slot(I64, value if isinstance(value, ir.Value) else ir.Constant(I64, value))

    def real_one(self):
        return self._slot(self.real, ir.Constant(self.real, 1.0))


def _matrix_at(k, buffer, i, size):
    """The address of matrix i of a stack of `size`-element matrices in `buffer`."""
    return k.b.gep(buffer.pointer, [k.b.mul(i, ir.Constant(I64, size))], source_etype=storage_type(buffer.dtype))


def _per_matrix(k, batch, body):
    """body(i) for every matrix i of the stack."""
    count = int(np.prod(batch, dtype=np.int64)) if batch else 1
    if count == 1:
        body(ir.Constant(I64, 0))
    elif count:
        k.for_range(0, count, body)


def _check_info(k, info, message):
    k.fail_unless(k.b.icmp_signed("==", k.b.load(info, typ=I64), ir.Constant(I64, 0)), message)


def _swap_last(operand):
    rank = len(operand.shape)
    return transpose(operand, tuple(range(rank - 2)) + (rank - 1, rank - 2))


def cholesky(k, node, inputs):
    """potrf('U') of the column-major transpose of a row-major copy of a: reads a's lower triangle and
    leaves L there; the rest is zeroed, as NumPy's."""
    (a,) = inputs
    out = k.materialize(a, k.result_buffer(node))
    *batch, n, _ = node.out.shape
    dtype = node.out.dtype

    def emit(k):
        call = _Call(k, dtype)
        potrf = _routine(k, "potrf", dtype, 5, 1)
        upper, size, info = call.char("U"), call.int(n), call.int(0)

        def factor(i):
            matrix = _matrix_at(k, out, i, n * n)
            k.b.call(potrf, [upper, size, matrix, size, info, ir.Constant(I64, 1)])
            _check_info(k, info, INDEFINITE)
            zero = ir.Constant(call.real, 0.0)

            def row(r):  # row r's entries after the diagonal: r * (n + 1) + 1 + c for c < n - 1 - r
                start = k.b.add(k.b.mul(r, ir.Constant(I64, n + 1)), ir.Constant(I64, 1))
                k.for_range(0, k.b.sub(ir.Constant(I64, n - 1), r), lambda c: k.b.store(
                    zero, k.b.gep(matrix, [k.b.add(start, c)], source_etype=call.real)))
            k.for_range(0, n, row)
        _per_matrix(k, batch, factor)

    if n:
        k.jobs.append(CustomJob((out,), out.reads, emit))
    return out


def triangular_solve(k, node, inputs):
    """X = op(T)^-1 B as X^T = B^T op(T)^-T: trsm from the right on column-major X^T (the row-major
    X), T's triangle read from the column-major transpose of a. A zero on T's diagonal is singular
    (LinAlgError, as scipy.linalg.solve_triangular), checked first."""
    a, b = inputs
    p = node.params
    a = a if isinstance(a, Buffer) else k.materialize(a)
    out = k.materialize(b, k.result_buffer(node))
    *batch, n, columns = node.out.shape
    dtype = node.out.dtype

    def emit(k):
        call = _Call(k, dtype)
        trsm = _routine(k, "trsm", dtype, 11, 4)
        side, uplo = call.char("R"), call.char("U" if p["lower"] else "L")
        trans, diag = call.char("T" if p["transpose_a"] else "N"), call.char("U" if p["unit_diagonal"] else "N")
        m_, n_, one = call.int(columns), call.int(n), call.real_one()
        length = ir.Constant(I64, 1)

        def solve(i):
            matrix = _matrix_at(k, a, i, n * n)
            if not p["unit_diagonal"]:
                def check(d):
                    entry = k.b.load(k.b.gep(matrix, [k.b.mul(d, ir.Constant(I64, n + 1))], source_etype=call.real),
                                     typ=call.real)
                    k.fail_unless(k.b.fcmp_unordered("!=", entry, ir.Constant(call.real, 0.0)), SINGULAR)
                k.for_range(0, n, check)
            k.b.call(trsm, [side, uplo, trans, diag, m_, n_, one, matrix, n_, _matrix_at(k, out, i, n * columns), m_,
                            length, length, length, length])
        _per_matrix(k, batch, solve)

    if n and columns:
        k.jobs.append(CustomJob((out,), a.reads | out.reads, emit))
    return out


def solve(k, node, inputs):
    """getrf of the column-major transpose of a (a row-major copy of a), then getrs('T') on B^T written
    column-major (a transposed copy): X^T comes out row-major, read back transposed."""
    a, b = inputs
    *batch, n, columns = node.out.shape
    dtype = node.out.dtype
    factors = k.materialize(a)  # a copy (getrf overwrites it)
    solution = k.materialize(_swap_last(b))  # (..., columns, n): column-major B
    pivots = k.new_buffer(tuple(batch) + (n,), np.int64)

    def emit(k):
        call = _Call(k, dtype)
        getrf, getrs = _routine(k, "getrf", dtype, 6, 0), _routine(k, "getrs", dtype, 9, 1)
        size, rhs, info, trans = call.int(n), call.int(columns), call.int(0), call.char("T")

        def one(i):
            matrix = _matrix_at(k, factors, i, n * n)
            pivot = k.b.gep(pivots.pointer, [k.b.mul(i, ir.Constant(I64, n))], source_etype=I64)
            k.b.call(getrf, [size, size, matrix, size, pivot, info])
            _check_info(k, info, SINGULAR)
            if columns:
                k.b.call(getrs, [trans, size, rhs, matrix, size, pivot, _matrix_at(k, solution, i, n * columns), size,
                                 info, ir.Constant(I64, 1)])
        _per_matrix(k, batch, one)

    if n:
        k.jobs.append(CustomJob((factors, solution, pivots), factors.reads | solution.reads | pivots.reads, emit))
    return _swap_last(solution)
