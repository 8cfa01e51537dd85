"""LLVM_RULES[prim](k, node, operands) -> the operand holding node's value.

A rule returns a virtual operand (computed inside its consumers' loops) or a buffer that
it schedules jobs to write (k.jobs). `k` is the kernel.KernelBuilder being planned.
BUFFER_INPUTS[prim] says which inputs a node reads from memory, so the kernel stores them.
"""
from __future__ import annotations

import math

import numpy as np
from llvmlite import ir

from symgrad import dtypes
from symgrad.core import const_p
from symgrad.ops.conv import col2im_p, im2col_p
from symgrad.ops.control import result_p, scan_p, switch_p, while_p, while_vjp_p
from symgrad.ops.cumulative import cumprod_p, cumsum_p
from symgrad.ops.ew import ew_p
from symgrad.ops.indexing import scatter_add_p, slice_p, take_p, unslice_p, wrap_index_p
from symgrad.ops.lapack import cholesky_p, eigh_p, qr_p, slogdet_p, solve_p, svd_p, triangular_solve_p
from symgrad.ops.linalg import matmul_p
from symgrad.ops.reduce import reduce_max_p, reduce_min_p, reduce_prod_p
from symgrad.ops.shape import (broadcast_to_p, concatenate_p, convert_p, reduce_sum_p, reshape_p, stop_gradient_p,
                               transpose_p)

from . import blas, control, conv, jit, lapack
from .jobs import CustomJob, Fold, LoopJob, fill_job, loop_nest, scan_jobs
from .operands import (ALIGNMENT, Buffer, Convert, Coord, Elementwise, Operand, Scalar, Unslice, broadcast,
                       strided_slice, transpose, unit_axes_reshape, zero)
from .types import I8, I64, PTR, cast, is_unsigned, storage_type, value_type


def index_error(size: int) -> str:
    """The message of a native index check's failure: NumPy's, but for the index itself (a status has no room)."""
    return f"an integer index is out of bounds for an axis of size {size}"


def calls_blas(blas_calls, dtype, m, n, inner) -> bool:
    """Whether a product of this size calls BLAS, for a kernel's `blas_calls` mode."""
    return blas_calls != "none" and blas.worth_calling(dtype, m, n, inner, linked=blas_calls == "linked")


# Constants up to this size are compiled into the code; larger ones stay NumPy arrays that
# the code reaches through a pointer slot (compiling megabytes of data would be slow).
INLINE_CONSTANT_BYTES = 1 << 16


def _const(k, node, inputs):
    constant = node.params["value"]
    array = constant.array
    if array.size == 1:
        return Scalar(array.reshape(()).item(), array.shape, array.dtype)
    data = np.ascontiguousarray(array, dtype=node.out.dtype)
    element_pointer = storage_type(node.out.dtype).as_pointer()
    if data.nbytes > INLINE_CONSTANT_BYTES and not k.embed_constants:
        name = f"{jit.PLACEHOLDER}const_{constant._digest[:16]}"
        slot = k.module.globals.get(name) or ir.GlobalVariable(k.module, PTR, name)
        slot.initializer = ir.Constant(PTR, None)
        k.slots[name[len(jit.PLACEHOLDER):]] = data
        return k.pointer(Buffer(array.shape, node.out.dtype, role="constant"),
                         lambda k: k.b.bitcast(k.b.load(slot, typ=PTR), element_pointer))
    blob = ir.ArrayType(I8, data.nbytes)
    const = ir.GlobalVariable(k.module, blob, f"{k.function.name}.const{len(k.module.globals)}")
    const.linkage, const.global_constant, const.align = "internal", True, ALIGNMENT
    const.initializer = ir.Constant(blob, bytearray(data.tobytes()))
    return Buffer(array.shape, node.out.dtype, const.bitcast(element_pointer), role="constant")


def _ew(k, node, inputs):
    p = node.params
    return Elementwise(p["expr"], p["args"], inputs, p["dtype"])


# A computed value read at every position of a broadcast would be recomputed once per copy,
# so one costing more than a load is computed once into a (smaller) buffer first.
BROADCAST_RECOMPUTE_COST = 1


def _broadcast_to(k, node, inputs):
    (x,) = inputs
    if x.cost > BROADCAST_RECOMPUTE_COST and node.out.size > 2 * node.inputs[0].size:
        x = k.materialize(x)
    return broadcast(x, node.params["shape"])


def _reshape(k, node, inputs):
    (x,) = inputs
    shape = node.params["shape"]
    if isinstance(x, (Buffer, blas.ExampleProduct)):
        return x.reshaped(shape)
    mapped = unit_axes_reshape(x, shape)
    if mapped is None:
        mapped = conv.by_example(x, shape)
    return mapped if mapped is not None else k.materialize(x).reshaped(shape)


def _reshape_reads_buffer(node, blas_calls) -> tuple:
    """A reshape that moves elements reads its input from memory (see _reshape)."""
    x = node.inputs[0]
    return () if _moves_only_unit_axes(x.shape, node.out.shape) else (x,)


def _moves_only_unit_axes(before, after) -> bool:
    return [d for d in before if d != 1] == [d for d in after if d != 1]


def _add(k, a, b, flags=()):
    """a + b, for floats with fast-math `flags` (e.g. reassoc for a reduction)."""
    return k.b.fadd(a, b, flags=flags) if _is_float(a) else k.b.add(a, b)


def _multiply(k, a, b, flags=()):
    return k.b.fmul(a, b, flags=flags) if _is_float(a) else k.b.mul(a, b)


def _is_float(value) -> bool:
    return isinstance(value.type, (ir.FloatType, ir.DoubleType))


def _pick(k, op, x, acc):
    """x if x <op> acc or x is NaN else acc: NaN propagates as in np.max."""
    if isinstance(x.type, ir.IntType):
        return k.b.select(k.b.icmp_signed(op, x, acc), x, acc)
    take = k.b.or_(k.b.fcmp_ordered(op, x, acc), k.b.fcmp_unordered("uno", x, x))
    return k.b.select(take, x, acc)


def _lowest(dtype):
    """Where a maximum starts: -inf, or the dtype's lowest integer."""
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def _highest(dtype):
    """Where a minimum starts: inf, or the dtype's highest integer."""
    return np.inf if dtype.kind == "f" else np.iinfo(dtype).max


def _reduction(combine, identity, widens=False):
    """The rule of a reduction that folds `combine(k, acc, x, flags)` over the reduced axes from
    `identity(dtype)`; widens=True: float32 accumulates in float64 (sums and products)."""
    return lambda k, node, inputs: _reduce(k, node, inputs, combine, identity, widens)


def _reduce(k, node, inputs, combine, identity, widens):
    (x,) = inputs
    axes = node.params["axes"]
    dtype = node.out.dtype
    flags = ["reassoc"] if dtype.kind == "f" else []
    # float32 sums and products accumulate in float64: a float32 running sum over 1e7 terms is
    # off by ~1e-4 (NumPy's pairwise sum only helps along the contiguous axis)
    # unsigned integers fold in int64, where the signed compare of max/min is right and sums wrap alike
    wide = dtypes.FLOAT64 if dtype == dtypes.FLOAT32 and widens else dtypes.INT64 if is_unsigned(dtype) else dtype
    start = identity(wide)
    init = ir.Constant(value_type(wide), float(start) if wide.kind == "f" else int(start))
    out = k.result_buffer(node)
    kept = [a for a in range(len(x.shape)) if a not in axes]
    if not kept:  # a full reduction accumulates in a register
        fold = Fold(value_type(wide), init, lambda k, running, value: combine(k, running, value, flags),
                    lambda k, total: out.store(k, [Coord.constant(0)] * len(node.out.shape),
                                               cast(k.b, total, wide, dtype)))
        k.jobs.append(fold.job(x.shape, out, x.reads, lambda k, idx: cast(k.b, x.load(k, idx), dtype, wide),
                               x.at_index))
        return out
    acc = out if wide == dtype else k.new_buffer(node.out.shape, wide)
    k.fill(acc, init)
    inner = len(x.shape) - 1 - max(kept)  # innermost axes, all reduced: folded in a register
    if inner and math.prod(x.shape[-inner:]) >= FOLDED_ROW:
        k.jobs.append(LoopJob(x.shape[:-inner], acc, x.reads | acc.reads,
                              _folding_rows(x, acc, kept, x.shape[-inner:], init, combine, flags, dtype, wide)))
    else:
        def accumulate(k, idx):
            out_idx = [idx[a] for a in kept]
            acc.store(k, out_idx, combine(k, acc.load(k, out_idx), cast(k.b, x.load(k, idx), dtype, wide), flags))
        k.jobs.append(LoopJob(x.shape, acc, x.reads | acc.reads, accumulate, at_index=x.at_index - acc.reads))
    if acc is not out:
        k.materialize(Convert(acc, dtype), out)
    return out


# Rows of at least this many elements are folded in a register (_folding_rows); a shorter row's running value
# costs little in memory, and its loop then shares the nest of the jobs over the same domain (a softmax's sums).
FOLDED_ROW = 64


def _folding_rows(x, acc, kept, inner, init, combine, flags, dtype, wide):
    """A reduction's body over x's outer axes that folds the innermost (reduced) ones in a register, then into
    acc: the running value in memory would be a dependence through a store at every element (a convolution's
    bias gradient, a sum over (N, H, W), ran at a few cycles an element), and in a register the loop vectorizes."""
    def body(k, idx):
        slot = k.alloca(init.type)
        k.b.store(init, slot)

        def add(steps):
            value = cast(k.b, x.load(k, [*idx, *steps]), dtype, wide)
            k.b.store(combine(k, k.b.load(slot, typ=init.type), value, flags), slot)
        loop_nest(k, [(0, n) for n in inner], add)
        out_idx = [idx[a] for a in kept]
        acc.store(k, out_idx, combine(k, acc.load(k, out_idx), k.b.load(slot, typ=init.type), flags))
    return body


def _concatenate(k, node, inputs):
    axis = node.params["axis"]
    out = k.result_buffer(node)
    offset = 0
    for x in inputs:
        def copy(k, idx, x=x, offset=offset):
            shifted = list(idx)
            c = idx[axis]
            shifted[axis] = Coord(k.b.add(c.value, ir.Constant(I64, offset)), c.lo + offset, c.hi + offset)
            out.store(k, shifted, x.load(k, idx))
        k.jobs.append(LoopJob(x.shape, out, x.reads, copy))
        offset += x.shape[axis]
    return out


def _checked_index(k, idx_operand, idx, size):
    """The integer index at idx, wrapped like NumPy for negatives, bounds-checked."""
    value = cast(k.b, idx_operand.load(k, idx), idx_operand.dtype, dtypes.INT64)
    value = k.b.select(k.b.icmp_signed("<", value, ir.Constant(I64, 0)), k.b.add(value, ir.Constant(I64, size)), value)
    k.fail_unless(k.b.icmp_unsigned("<", value, ir.Constant(I64, size)), index_error(size))
    return Coord(value, 0, max(size, 1))


class WrappedIndex(Operand):
    """A traced index array checked against its axis (error status) and wrapped from negative (out of bounds
    without `negative`)."""

    def __init__(self, source, size, negative):
        self.source, self.shape, self.dtype, self.size = source, source.shape, source.dtype, size
        self.reads, self.cost, self.lowest = source.reads, source.cost + 3, -size if negative else 0

    def load(self, k, idx):
        value = self.source.load(k, idx)
        size = ir.Constant(value.type, self.size)
        k.fail_unless(k.b.and_(k.b.icmp_signed(">=", value, ir.Constant(value.type, self.lowest)),
                               k.b.icmp_signed("<", value, size)), index_error(self.size))
        return k.b.select(k.b.icmp_signed("<", value, ir.Constant(value.type, 0)), k.b.add(value, size), value)


def _take(k, node, inputs):
    x, index = inputs
    axis = node.params["axis"]
    out = k.result_buffer(node)
    n = len(index.shape)

    def gather(k, idx):
        position = _checked_index(k, index, idx[axis:axis + n], x.shape[axis])
        out.store(k, idx, x.load(k, idx[:axis] + [position] + idx[axis + n:]))
    k.jobs.append(LoopJob(node.out.shape, out, x.reads | index.reads, gather))
    _check_unvisited_indices(k, node.out.shape, index, out, x.shape[axis])
    return out


def _scatter_add(k, node, inputs):
    update, index = inputs
    axis = node.params["axis"]
    out = k.result_buffer(node)
    k.fill(out, zero(node.out.dtype))
    n = len(index.shape)

    def scatter(k, idx):
        position = _checked_index(k, index, idx[axis:axis + n], out.shape[axis])
        out_idx = idx[:axis] + [position] + idx[axis + n:]
        value = update.load(k, idx)
        out.store(k, out_idx, _add(k, out.load(k, out_idx), value))
    k.jobs.append(LoopJob(update.shape, out, update.reads | index.reads | out.reads, scatter))
    _check_unvisited_indices(k, update.shape, index, out, out.shape[axis])
    return out


def _check_unvisited_indices(k, domain, index, target, size):
    """An empty gather or scatter (another axis has length 0) visits none of its indices: check them in a
    loop of their own, so a bad index raises as in NumPy. A non-empty one checks each index it visits."""
    if math.prod(domain) == 0 and math.prod(index.shape) > 0:
        k.jobs.append(LoopJob(index.shape, target, index.reads, lambda k, idx: _checked_index(k, index, idx, size)))


def _matmul(k, node, inputs):
    a, b = inputs
    *batch, m, inner = a.shape
    n, dtype = b.shape[-1], node.out.dtype
    if not calls_blas(k.blas_calls, dtype, m, n, inner):
        out = k.result_buffer(node)
        k.jobs.extend(_matmul_loops(a, b, out, dtype))
        return out
    a_arg, b_arg = (blas.operand(k, x) for x in (a, b))
    filled = tuple(arg[0] for arg in (a_arg, b_arg) if arg[3] is not None)  # one example's patches at a time
    reads = a_arg[0].reads | b_arg[0].reads | (a.reads if a_arg[3] else frozenset()) | \
        (b.reads if b_arg[3] else frozenset())
    if k.blas_calls == "linked" and len(batch) == 1 and _summed_by_col2im(k, node):
        return blas.ExampleProduct(node.out.shape, dtype, (m, n, inner), (a_arg, b_arg), reads, filled)
    out = k.result_buffer(node)

    def call(k, gemm, gemv=None):
        blas.emit_gemm(k, gemm, dtype, batch, m, n, inner, a_arg, b_arg, out, gemv)

    if k.blas_calls == "linked":
        def emit(k):
            blas.use_threads(k, m * n * inner)
            call(k, blas.linked_gemm(k.module, dtype), blas.linked_gemv(k.module, dtype))
    else:  # a shared library: through the gemm slot when its loader set it, else symgrad's loops
        loops = _matmul_loops(_blas_view(a_arg, a), _blas_view(b_arg, b), out, dtype)

        def emit(k):
            is_set, gemm = blas.slot_function(k, blas.gemm_slot(k.module, dtype), dtype)
            with k.b.if_else(is_set) as (then, otherwise):
                with then:
                    call(k, gemm)
                with otherwise:
                    for job in loops:
                        k.emit_job(job)
    k.jobs.append(CustomJob((out, *filled), reads, emit, work=math.prod(batch) * m * n * inner))
    return out


def _summed_by_col2im(k, node) -> bool:
    """Whether a batched product is read only by col2im (a convolution's input gradient: W^T @ ct, reshaped to
    patches), which can take it one example at a time (blas.ExampleProduct) instead of all of it from memory."""
    readers = k.readers(node.out)
    if len(readers) != 1 or readers[0].prim is not reshape_p or k.output_buffers.keys() & {
            id(node.out), id(readers[0].out)}:
        return False
    after = k.readers(readers[0].out)
    return len(after) == 1 and after[0].prim is col2im_p


def _matmul_reads_buffers(node, blas_calls) -> tuple:
    """A product that calls BLAS reads both operands from memory."""
    *_, m, inner = node.inputs[0].shape
    return node.inputs if calls_blas(blas_calls, node.out.dtype, m, node.out.shape[-1], inner) else ()


def _blas_view(arg, operand):
    """What a BLAS call reads of `operand`, for symgrad's loops: the buffer, maybe transposed in its last two
    axes, maybe repeated over leading axes (blas.operand); operand itself where it fills a matrix by example."""
    buffer, transposed, _, fill = arg
    if fill is not None:
        return operand
    shape, rank = operand.shape, len(buffer.shape)
    view = transpose(buffer, tuple(range(rank - 2)) + (rank - 1, rank - 2)) if transposed else buffer
    return view if tuple(view.shape) == tuple(shape) else broadcast(view, shape)


def _matmul_loops(a, b, out, dtype) -> list:
    """symgrad's own product: zero `out`, then out[.., i, j] += a[.., i, l] * b[.., l, j] over
    the domain (*batch, i, l, j), which vectorizes over j."""
    def multiply_add(k, idx):
        *bi, i, l, j = idx
        product = _multiply(k, a.load(k, [*bi, i, l]), b.load(k, [*bi, l, j]))
        out_idx = [*bi, i, j]
        out.store(k, out_idx, _add(k, out.load(k, out_idx), product))
    domain = (*a.shape, b.shape[-1])
    return [fill_job(out, zero(dtype)), LoopJob(domain, out, a.reads | b.reads | out.reads, multiply_add)]


def _scan(combine):
    """The rule of a cumulative primitive (attributes axis, reverse): jobs.scan_jobs with `combine`."""
    def rule(k, node, inputs):
        out = k.result_buffer(node)
        k.jobs.extend(scan_jobs(out, inputs[0], node.params["axis"], node.params["reverse"], combine))
        return out
    return rule


LLVM_RULES = {
    const_p: _const,
    ew_p: _ew,
    convert_p: lambda k, node, inputs: Convert(inputs[0], node.params["dtype"]),
    stop_gradient_p: lambda k, node, inputs: inputs[0],
    broadcast_to_p: _broadcast_to,
    reshape_p: _reshape,
    transpose_p: lambda k, node, inputs: transpose(inputs[0], node.params["perm"]),
    slice_p: lambda k, node, inputs: strided_slice(inputs[0], node.params["starts"], node.params["steps"],
                                                   node.params["sizes"]),
    unslice_p: lambda k, node, inputs: Unslice(inputs[0], node.params["shape"], node.params["starts"],
                                               node.params["steps"]),
    concatenate_p: _concatenate,
    reduce_sum_p: _reduction(_add, lambda dtype: 0, widens=True),
    reduce_prod_p: _reduction(_multiply, lambda dtype: 1, widens=True),
    reduce_max_p: _reduction(lambda k, acc, x, flags: _pick(k, ">", x, acc), _lowest),
    reduce_min_p: _reduction(lambda k, acc, x, flags: _pick(k, "<", x, acc), _highest),
    cumsum_p: _scan(_add),
    cumprod_p: _scan(_multiply),
    matmul_p: _matmul,
    take_p: _take,
    wrap_index_p: lambda k, node, inputs: WrappedIndex(inputs[0], **node.params),
    scatter_add_p: _scatter_add,
    scan_p: control.scan,
    while_p: control.while_loop,
    while_vjp_p: control.while_vjp,
    switch_p: control.switch,
    result_p: control.result,
    im2col_p: conv.im2col,
    col2im_p: conv.col2im,
}


if lapack.addresses():  # NumPy's LAPACK: otherwise the default backend runs these on NumPy's
    LLVM_RULES.update({cholesky_p: lapack.cholesky, triangular_solve_p: lapack.triangular_solve, solve_p: lapack.solve,
                       slogdet_p: lapack.slogdet, eigh_p: lapack.eigh, svd_p: lapack.svd, qr_p: lapack.qr})


def has_rule(prim) -> bool:
    """Whether this backend lowers `prim` itself (the others reach it decomposed, where they can be)."""
    return prim in LLVM_RULES


# BUFFER_INPUTS[prim](node, blas_calls) -> the inputs the node's rule reads from memory (a BLAS
# operand, a reshape that moves elements): computing those once, into memory, serves every consumer.
BUFFER_INPUTS = {
    matmul_p: _matmul_reads_buffers,
    reshape_p: _reshape_reads_buffer,
    scan_p: control.scan_reads_buffers,
    while_p: control.while_reads_buffers,
    while_vjp_p: control.while_reads_buffers,
    switch_p: control.switch_reads_buffers,
    im2col_p: lambda node, blas_calls: node.inputs,  # each image element is read by several patches
    col2im_p: lambda node, blas_calls: node.inputs,
}
