"""sg.linalg's LAPACK primitives in native code, through the LAPACK NumPy ships.

JIT kernels call `symgrad_rt_?potrf`, `?trsm`, `?getrf`, `?getrs`, `?syevd`, `?gesdd`, `?geqrf`, `?orgqr`
(the Fortran interface with 64-bit integers: every argument by address, matrices column-major), which the
JIT links to NumPy's bundled OpenBLAS (runtime.lapack_addresses), as it links BLAS. A row-major matrix is
the column-major matrix of its transpose, which cholesky, triangular_solve and solve use instead of
copying: the lower triangle of a row-major a is the upper one of that column-major matrix, and
X = op(T)^-1 B row by row is X^T = B^T op(T)^-T column by column. slogdet, eigh, svd and qr copy each
matrix column-major as numpy.linalg does, so they give NumPy's numbers (and its choice of signs); pinv
reaches this backend written with svd (ops/lapack.py). Work arrays are sized by LAPACK's own workspace
query while compiling and live in the kernel's per-call workspace, so calls stay reentrant. A failure
(a singular or indefinite matrix, no convergence) is NumPy's LinAlgError, with NumPy's message.
A shared library (AOT) calls the same routines through exported pointers its loader sets (`_routine`).
"""
from __future__ import annotations

import ctypes
import math

import numpy as np
from llvmlite import ir

from symgrad import ir as sir
from symgrad.codegen import runtime
from symgrad.ops.control import result_p

from . import blas
from .control import Components
from .jobs import CustomJob
from .mathlib import math_function
from .operands import Buffer, strided_slice, transpose
from .types import F32, F64, I8, I64, PTR, storage_type

PREFIX = {np.dtype(np.float64): "d", np.dtype(np.float32): "s"}
SINGULAR, INDEFINITE, NO_EIGENVALUES, NO_SVD, BAD_ARGUMENT = runtime.LINALG_ERRORS
NO_LAPACK = runtime.NO_LAPACK


def addresses() -> dict[str, int]:
    """The JIT's link table: symgrad_rt_?potrf ... -> address (empty when NumPy ships no LAPACK)."""
    return {"symgrad_rt_" + name: address for name, address in runtime.lapack_addresses().items()}


def _routine(k, name, dtype, arguments: int, characters: int):
    """The LAPACK routine <d|s><name>: `arguments` pointers, then the hidden lengths (i64) of its `characters`
    character arguments (gfortran's convention). The JIT links `symgrad_rt_<d|s><name>`; a shared library
    (AOT) calls through its exported pointer `<module>_lapack_<d|s><name>`, which its loader sets to NumPy's
    LAPACK: left NULL, the call returns the error NO_LAPACK."""
    routine = PREFIX[np.dtype(dtype)] + name
    signature = ir.FunctionType(ir.VoidType(), [PTR] * arguments + [I64] * characters)
    if k.blas_calls == "slots":
        symbol = f"{k.module.name}_lapack_{routine}"
        slot = k.module.globals.get(symbol)
        if slot is None:
            slot = ir.GlobalVariable(k.module, PTR, symbol)
            slot.initializer = ir.Constant(PTR, None)
        pointer = k.b.load(slot, typ=signature.as_pointer())
        k.fail_unless(k.b.icmp_unsigned("!=", k.b.ptrtoint(pointer, I64), ir.Constant(I64, 0)), NO_LAPACK)
        return pointer
    blas.use_threads(k, math.inf)  # on the kernel's threads: OpenBLAS sizes its LAPACK products itself
    symbol = "symgrad_rt_" + routine
    existing = k.module.globals.get(symbol)
    return existing if existing is not None else ir.Function(k.module, signature, symbol)


def slots(module) -> dict:
    """LAPACK routine name -> the exported pointer symbol of a shared library that its loader sets."""
    prefix = module.name + "_lapack_"
    return {name[len(prefix):]: name for name in module.globals if name.startswith(prefix)}


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


# ----------------------------------------------------------------------------- factorizations with several results
# slogdet, eigh, svd and qr work as numpy.linalg does: on a column-major copy of each matrix (the row-major
# copy of its transpose, `_fortran`), whose column-major results are read back transposed. Their values are
# tuples: one buffer (or view) per component, which `result` nodes read (control.Components).

def _fortran(k, a) -> Buffer:
    """A column-major copy of a stack of matrices, which LAPACK may overwrite: shape (..., n, m)."""
    return k.materialize(_swap_last(a))


def _read(k, node) -> set:
    """The indices of node's results the graph reads."""
    return {reader.params["index"] for reader in k.readers(node.out) if reader.prim is result_p}


def _result_buffer(k, node, index) -> Buffer:
    """Where result `index` of node's value is written: the graph output that reads it, if one does (then
    LAPACK writes it in place), else the workspace."""
    for reader in k.readers(node.out):
        if reader.prim is result_p and reader.params["index"] == index:
            return k.buffer_for(reader.out)
    shape, dtype = sir.components(node.out.dtype)[index]
    return k.new_buffer(shape, dtype)


def _workspace(name, dtype, arguments) -> list:
    """LAPACK's workspace query, made once while compiling: `name` called with `arguments` (a letter: a
    character; an int: an integer, -1 for the sizes asked; WORK/IWORK: the arrays whose first element the
    answer is; None: an array a query does not read). The sizes it answers, WORK's then IWORK's, at least 1."""
    address = runtime.lapack_addresses()[PREFIX[np.dtype(dtype)] + name]
    letters = [argument for argument in arguments if isinstance(argument, str) and len(argument) == 1]
    kept, pointers, answers = [], [], {}
    for argument in arguments:
        if argument is WORK or argument is IWORK:
            array = np.zeros(1, dtype if argument is WORK else np.int64)
            answers[argument] = array
        elif isinstance(argument, str):
            array = np.frombuffer(argument.encode(), np.uint8).copy()
        elif argument is None:
            array = np.zeros(1, dtype)
        else:
            array = np.array([argument], np.int64)
        kept.append(array)
        pointers.append(array.ctypes.data)
    routine = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * len(pointers), *[ctypes.c_int64] * len(letters))(address)
    routine(*pointers, *[1] * len(letters))
    # a float answer may round a large size down (float32): a little more is always enough
    return [max(1, math.ceil(float(answers[key][0]) * (1 + 2 ** -20))) for key in (WORK, IWORK) if key in answers]


WORK, IWORK = object(), object()


def _identity_into(k, matrices: Buffer, count, size, real):
    """Write the (size, size) identity into each of `count` matrices of `matrices` (0 <= size)."""
    zero, one = ir.Constant(real, 0.0), ir.Constant(real, 1.0)

    def each(i):
        start = k.b.mul(i, ir.Constant(I64, size * size))
        k.for_range(0, size * size, lambda j: k.b.store(zero, k.b.gep(matrices.pointer, [k.b.add(start, j)],
                                                                      source_etype=real)))
        k.for_range(0, size, lambda d: k.b.store(one, k.b.gep(
            matrices.pointer, [k.b.add(start, k.b.mul(d, ir.Constant(I64, size + 1)))], source_etype=real)))
    k.for_range(0, count, each)


def _count(batch) -> int:
    return int(np.prod(batch, dtype=np.int64)) if batch else 1


def slogdet(k, node, inputs):
    """NumPy's: getrf of the column-major copy; the sign from the pivots' swaps and the diagonal's signs, the
    log from the sum of log|diagonal|. A failed factorization (info > 0: an exact zero pivot) is (0, -inf)."""
    (a,) = inputs
    *batch, n, _ = node.inputs[0].shape
    dtype = node.inputs[0].dtype
    sign, logdet = _result_buffer(k, node, 0), _result_buffer(k, node, 1)
    if n == 0 or not _count(batch):
        k.fill(sign, ir.Constant(F64 if np.dtype(dtype) == np.float64 else F32, 1.0))
        k.fill(logdet, ir.Constant(F64 if np.dtype(dtype) == np.float64 else F32, 0.0))
        return Components([sign, logdet])
    factors = _fortran(k, a)
    pivots = k.new_buffer(tuple(batch) + (n,), np.int64)

    def emit(k):
        call = _Call(k, dtype)
        real = call.real
        getrf = _routine(k, "getrf", dtype, 6, 0)
        log = math_function(k.module, "log", real, outlined=True)
        size, info = call.int(n), call.int(0)
        running_sign, running_log = k.alloca(real), k.alloca(real)

        def one(i):
            matrix = _matrix_at(k, factors, i, n * n)
            pivot = k.b.gep(pivots.pointer, [k.b.mul(i, ir.Constant(I64, n))], source_etype=I64)
            k.b.call(getrf, [size, size, matrix, size, pivot, info])
            k.b.store(ir.Constant(real, 1.0), running_sign)
            k.b.store(ir.Constant(real, 0.0), running_log)

            def entry(d):
                swapped = k.b.icmp_signed("!=", k.b.load(k.b.gep(pivot, [d], source_etype=I64), typ=I64),
                                          k.b.add(d, ir.Constant(I64, 1)))
                value = k.b.load(k.b.gep(matrix, [k.b.mul(d, ir.Constant(I64, n + 1))], source_etype=real), typ=real)
                negative = k.b.fcmp_ordered("<", value, ir.Constant(real, 0.0))
                flip = k.b.xor(swapped, negative)
                current = k.b.load(running_sign, typ=real)
                k.b.store(k.b.select(flip, k.b.fneg(current), current), running_sign)
                magnitude = k.b.select(negative, k.b.fneg(value), value)
                k.b.store(k.b.fadd(k.b.load(running_log, typ=real), k.b.call(log, [magnitude])), running_log)
            k.for_range(0, n, entry)
            failed = k.b.icmp_signed("!=", k.b.load(info, typ=I64), ir.Constant(I64, 0))
            sign_at = k.b.gep(sign.pointer, [i], source_etype=real)
            log_at = k.b.gep(logdet.pointer, [i], source_etype=real)
            k.b.store(k.b.select(failed, ir.Constant(real, 0.0), k.b.load(running_sign, typ=real)), sign_at)
            k.b.store(k.b.select(failed, ir.Constant(real, -math.inf), k.b.load(running_log, typ=real)), log_at)
        _per_matrix(k, batch, one)

    k.jobs.append(CustomJob((factors, pivots, sign, logdet), factors.reads | pivots.reads | sign.reads | logdet.reads,
                            emit))
    return Components([sign, logdet])


def eigh(k, node, inputs):
    """NumPy's: syevd of the column-major copy with the triangle asked for; its columns are the eigenvectors
    (jobz 'N' when the graph reads only the eigenvalues). No convergence is NumPy's LinAlgError."""
    (a,) = inputs
    *batch, n, _ = node.inputs[0].shape
    dtype = node.inputs[0].dtype
    values = _result_buffer(k, node, 0)
    vectors = 1 in _read(k, node)
    if n == 0 or not _count(batch):
        return Components([values, k.new_buffer(node.inputs[0].shape, dtype)])
    factors = _fortran(k, a)
    jobz, uplo = "V" if vectors else "N", "L" if node.params["lower"] else "U"
    lwork, liwork = _workspace("syevd", dtype, [jobz, uplo, n, None, n, None, WORK, -1, IWORK, -1, 0])
    work, iwork = k.new_buffer((lwork,), dtype), k.new_buffer((liwork,), np.int64)

    def emit(k):
        call = _Call(k, dtype)
        syevd = _routine(k, "syevd", dtype, 11, 2)
        size, info, length = call.int(n), call.int(0), ir.Constant(I64, 1)
        arguments = [call.char(jobz), call.char(uplo), size]
        sizes = [call.int(lwork), call.int(liwork)]

        def one(i):
            k.b.call(syevd, arguments + [_matrix_at(k, factors, i, n * n), size, _matrix_at(k, values, i, n),
                                         work.pointer, sizes[0], iwork.pointer, sizes[1], info, length, length])
            _check_info(k, info, NO_EIGENVALUES)
        _per_matrix(k, batch, one)

    k.jobs.append(CustomJob((factors, values, work, iwork), factors.reads | values.reads | work.reads | iwork.reads,
                            emit))
    return Components([values, _swap_last(factors)])


def svd(k, node, inputs):
    """NumPy's: gesdd of the column-major copy (jobz 'A' for full matrices, 'S' reduced, 'N' when the graph
    reads only the singular values); column-major U and VT read back transposed. An empty matrix's full U or
    Vh is the identity, as NumPy's. No convergence is NumPy's LinAlgError."""
    (a,) = inputs
    *batch, m, n = node.inputs[0].shape
    dtype = node.inputs[0].dtype
    batch, count, rank = tuple(batch), _count(batch), min(m, n)
    full = node.params["full_matrices"]
    u_cols, vh_rows = (m, n) if full else (rank, rank)
    vectors = bool(_read(k, node) & {0, 2})
    values = _result_buffer(k, node, 1)
    left = k.new_buffer(batch + (u_cols, m), dtype)  # column-major U
    right = k.new_buffer(batch + (n, vh_rows), dtype)  # column-major VT
    parts = [_swap_last(left), values, _swap_last(right)]
    if not count:
        return Components(parts)
    if rank == 0:
        if vectors and full:
            def identities(k):
                real = _Call(k, dtype).real
                _identity_into(k, left, count, m, real)
                _identity_into(k, right, count, n, real)
            k.jobs.append(CustomJob((left, right), left.reads | right.reads, identities))
        return Components(parts)
    factors = _fortran(k, a)
    jobz = ("A" if full else "S") if vectors else "N"
    ldu, ldvt = m, max(1, vh_rows)
    lwork, = _workspace("gesdd", dtype, [jobz, m, n, None, m, None, None, ldu, None, ldvt, WORK, -1, None, 0])
    work, iwork = k.new_buffer((lwork,), dtype), k.new_buffer((8 * rank,), np.int64)
    written = (factors, values, work, iwork) + ((left, right) if vectors else ())

    def emit(k):
        call = _Call(k, dtype)
        gesdd = _routine(k, "gesdd", dtype, 14, 1)
        rows, columns, info = call.int(m), call.int(n), call.int(0)
        leading_u, leading_vt, size = call.int(ldu), call.int(ldvt), call.int(lwork)
        job = call.char(jobz)

        def one(i):
            u_at = _matrix_at(k, left, i, u_cols * m) if vectors else work.pointer  # not read with jobz N
            vt_at = _matrix_at(k, right, i, n * vh_rows) if vectors else work.pointer
            k.b.call(gesdd, [job, rows, columns, _matrix_at(k, factors, i, m * n), rows, _matrix_at(k, values, i, rank),
                             u_at, leading_u, vt_at, leading_vt, work.pointer, size, iwork.pointer, info,
                             ir.Constant(I64, 1)])
            _check_info(k, info, NO_SVD)
        _per_matrix(k, batch, one)

    k.jobs.append(CustomJob(written, frozenset().union(*(buffer.reads for buffer in written)), emit))
    return Components(parts)


def qr(k, node, inputs):
    """NumPy's: geqrf of the column-major copy, R read from its upper triangle, then orgqr forming Q's
    columns in place (m of them with mode 'complete': the copy gets room for them)."""
    (a,) = inputs
    *batch, m, n = node.inputs[0].shape
    dtype = node.inputs[0].dtype
    batch, count, rank = tuple(batch), _count(batch), min(m, n)
    q_cols = m if node.params["complete"] else rank
    r = _result_buffer(k, node, 1)
    r_rows = r.shape[-2]
    stored = max(n, q_cols)  # columns of the column-major copy
    factors = k.new_buffer(batch + (stored, m), dtype)
    q = _swap_last(factors if stored == q_cols else
                   strided_slice(factors, (0,) * (len(batch) + 2), (1,) * (len(batch) + 2), batch + (q_cols, m)))
    if not count or m == 0:
        return Components([q, r])
    copy = _fortran(k, a) if stored != n else k.materialize(_swap_last(a), factors)
    tau = k.new_buffer((max(1, rank),), dtype)
    lwork = max(_workspace("geqrf", dtype, [m, n, None, m, None, WORK, -1, 0])
                + _workspace("orgqr", dtype, [m, q_cols, rank, None, m, None, WORK, -1, 0]))
    work = k.new_buffer((lwork,), dtype)
    written = (factors, r, tau, work)

    def emit(k):
        call = _Call(k, dtype)
        real = call.real
        geqrf, orgqr = _routine(k, "geqrf", dtype, 8, 0), _routine(k, "orgqr", dtype, 9, 0)
        rows, columns, q_columns, reflectors = call.int(m), call.int(n), call.int(q_cols), call.int(rank)
        info, size = call.int(0), call.int(lwork)

        def one(i):
            matrix = _matrix_at(k, factors, i, stored * m)
            if copy is not factors:
                source = _matrix_at(k, copy, i, n * m)
                k.for_range(0, n * m, lambda j: k.b.store(k.b.load(k.b.gep(source, [j], source_etype=real), typ=real),
                                                          k.b.gep(matrix, [j], source_etype=real)))
            k.b.call(geqrf, [rows, columns, matrix, rows, tau.pointer, work.pointer, size, info])
            _check_info(k, info, BAD_ARGUMENT)
            r_at = _matrix_at(k, r, i, r_rows * n)

            def r_row(row):  # r[row, c] = A[row + c * m] on and above the diagonal, else 0
                def r_entry(c):
                    above = k.b.icmp_signed(">=", c, row)
                    value = k.b.load(k.b.gep(matrix, [k.b.add(row, k.b.mul(c, ir.Constant(I64, m)))],
                                             source_etype=real), typ=real)
                    k.b.store(k.b.select(above, value, ir.Constant(real, 0.0)),
                              k.b.gep(r_at, [k.b.add(k.b.mul(row, ir.Constant(I64, n)), c)], source_etype=real))
                k.for_range(0, n, r_entry)
            k.for_range(0, r_rows, r_row)
            k.b.call(orgqr, [rows, q_columns, reflectors, matrix, rows, tau.pointer, work.pointer, size, info])
            _check_info(k, info, BAD_ARGUMENT)
        _per_matrix(k, batch, one)

    reads = frozenset().union(*(buffer.reads for buffer in written + (copy,)))
    k.jobs.append(CustomJob(written, reads, emit))
    return Components([q, r])
