"""How a loop body reads a value: from a buffer, or computed on the fly (a virtual operand).

Broadcasts, transposes, slices, unslices, converts and elementwise expressions are
virtual: loading one element at a multi-index loads its sources at mapped indices, so a
chain of them fuses into the loop of whoever consumes it and never touches memory.
Each index carries its static range, which lets `Unslice` skip its bounds test on loop
pieces where it is known to be in or out of range (see `kernel.LoopGroup`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy as sp
from llvmlite import ir

from symgrad import dtypes

from .exprs import ExprEmitter
from .types import I64, cast, is_unsigned, storage_type, value_type


ALIGNMENT = 64  # bytes: workspace buffers and compiled-in constants start on cache lines


@dataclass(frozen=True)
class Coord:
    """An index along one axis: its LLVM value and its static range [lo, hi)."""

    value: object
    lo: int
    hi: int

    @staticmethod
    def constant(i: int) -> "Coord":
        return Coord(ir.Constant(I64, i), i, i + 1)


class Operand:
    shape: tuple
    dtype: np.dtype
    reads: frozenset  # ids of the buffers a load touches (for scheduling)
    # ids of the buffers a load at an index reads at that same index only (in the loop order of their
    # squeezed shapes): a loop nest writing them at its index may also hold the job loading this
    at_index = frozenset()
    cost = 1  # rough work of one load, in arithmetic operations (decides recompute vs store)
    # its readers fill the pieces they need where they read them (conv.ExamplePatches): not stored when shared
    in_pieces = False

    def load(self, k, idx: list) -> ir.Value:
        raise NotImplementedError


class Buffer(Operand):
    """A C-contiguous array in memory; `pointer` is set before any code is emitted."""

    def __init__(self, shape, dtype, pointer=None, role="workspace"):
        self.shape, self.dtype = tuple(shape), np.dtype(dtype)
        self._pointer = pointer
        self.role = role  # input, output, constant, workspace
        self._owner = None  # the buffer owning the memory, for a reshaped view (see base)
        self.reads = self.at_index = frozenset([id(self)])
        self.strides = _strides(self.shape)

    @property
    def base(self) -> "Buffer":
        """The buffer owning the memory: self, unless a reshaped view (not stored as self: a buffer referring
        to itself is a cycle only the cyclic collector frees, and a long kernel has thousands)."""
        return self._owner or self

    @property
    def pointer(self):
        return self._pointer if self._owner is None else self._owner.pointer

    @pointer.setter
    def pointer(self, value):
        self._pointer = value

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize

    def address(self, k, idx) -> ir.Value:
        offset = None
        for coord, stride, dim in zip(idx, self.strides, self.shape):
            if dim == 1:
                continue
            term = k.b.mul(coord.value, ir.Constant(I64, stride), flags=["nsw"]) if stride != 1 else coord.value
            offset = term if offset is None else k.b.add(offset, term, flags=["nsw"])
        if offset is None:
            return self.pointer
        return k.b.gep(self.pointer, [offset], source_etype=storage_type(self.dtype), inbounds=True)

    def load(self, k, idx):
        return k.once(self, idx, lambda: self._element(k, idx))

    def _element(self, k, idx):
        element = k.b.load(self.address(k, idx), typ=storage_type(self.dtype))
        if self.dtype == dtypes.BOOL:
            return k.b.icmp_unsigned("!=", element, ir.Constant(element.type, 0))
        return element

    def store(self, k, idx, value):
        element = k.b.zext(value, storage_type(self.dtype)) if self.dtype == dtypes.BOOL else value
        k.b.store(element, self.address(k, idx))
        k.stored(self.base, self, idx, value)

    def reshaped(self, shape) -> "Buffer":
        """The same memory seen with another shape (a free reshape)."""
        view = Buffer(shape, self.dtype, role=self.role)
        view.reads, view._owner = self.reads, self.base
        view.at_index = self.at_index if squeezed(shape) == squeezed(self.shape) else frozenset()
        return view


def squeezed(shape) -> tuple:
    """A shape without its unit axes: loops over (n,) and (n, 1) visit the same elements in one order."""
    return tuple(d for d in shape if d != 1)


def _strides(shape):
    strides, step = [], 1
    for dim in reversed(shape):
        strides.append(step)
        step *= dim
    return tuple(reversed(strides))


class Scalar(Operand):
    """A single known value, whatever the index."""

    def __init__(self, value, shape, dtype):
        self.value, self.shape, self.dtype = value, tuple(shape), np.dtype(dtype)
        self.reads = frozenset()

    def load(self, k, idx):
        if self.dtype.kind == "f":
            return ir.Constant(value_type(self.dtype), float(self.value))
        return ir.Constant(value_type(self.dtype), int(self.value))


class IndexMap(Operand):
    """Reads `source` at an index computed from the output index (broadcast, transpose, slice, ...)."""

    def __init__(self, source: Operand, shape, mapping):
        self.source, self.shape, self.dtype = source, tuple(shape), source.dtype
        self.mapping = mapping  # (k, idx) -> source idx
        self.reads = source.reads
        self.cost = source.cost

    def load(self, k, idx):
        return k.once(self, idx, lambda: self.source.load(k, self.mapping(k, idx)))


def broadcast(source: Operand, shape) -> Operand:
    lead = len(shape) - len(source.shape)

    def mapping(k, idx):
        return [Coord.constant(0) if dim == 1 else idx[lead + i] for i, dim in enumerate(source.shape)]
    view = IndexMap(source, shape, mapping)
    view.broadcast = True
    if squeezed(shape) == squeezed(source.shape):  # only unit axes added: the same elements in the same order
        view.at_index = source.at_index
    return view


def transpose(source: Operand, perm) -> Operand:
    shape = tuple(source.shape[p] for p in perm)

    def mapping(k, idx):
        result = [None] * len(perm)
        for axis, p in enumerate(perm):
            result[p] = idx[axis]
        return result
    view = IndexMap(source, shape, mapping)
    view.perm = tuple(perm)
    return view


def strided_slice(source: Operand, starts, steps, sizes) -> Operand:
    def mapping(k, idx):
        result = []
        for coord, start, step in zip(idx, starts, steps):
            value = coord.value
            if step != 1:
                value = k.b.mul(value, ir.Constant(I64, step), flags=["nsw"])
            if start:
                value = k.b.add(value, ir.Constant(I64, start), flags=["nsw"])
            lo, hi = start + step * coord.lo, start + step * (coord.hi - 1)
            result.append(Coord(value, min(lo, hi), max(lo, hi) + 1))
        return result
    return IndexMap(source, sizes, mapping)


def unit_axes_reshape(source: Operand, shape) -> Operand | None:
    """A reshape that only inserts or removes axes of length 1, as an index map; else None."""
    kept_out = [i for i, d in enumerate(shape) if d != 1]
    kept_in = [i for i, d in enumerate(source.shape) if d != 1]
    if [shape[i] for i in kept_out] != [source.shape[i] for i in kept_in]:
        return None

    def mapping(k, idx):
        result = [Coord.constant(0)] * len(source.shape)
        for i, o in zip(kept_in, kept_out):
            result[i] = idx[o]
        return result
    view = IndexMap(source, shape, mapping)
    view.at_index = source.at_index
    return view


class Unslice(Operand):
    """Zeros with `source` placed at starts/steps: the adjoint of a slice, never materialized."""

    def __init__(self, source: Operand, shape, starts, steps):
        self.source, self.shape, self.dtype = source, tuple(shape), source.dtype
        self.starts, self.steps = starts, steps
        self.reads = source.reads
        self.cost = source.cost + 2

    def inside(self, axis, lo, hi) -> bool | None:
        """Whether indices lo..hi-1 along `axis` all hit the source (True), all miss (False), or mixed."""
        start, step, size = self.starts[axis], self.steps[axis], self.source.shape[axis]
        stop = start + step * (size - 1) + 1 if step > 0 else start + 1
        first = start if step > 0 else start + step * (size - 1)
        if hi <= first or lo >= stop or size == 0:
            return False
        if abs(step) == 1 and first <= lo and hi <= stop:
            return True
        return None

    def split_points(self, axis) -> list[int]:
        """Where along `axis` the in/out status changes (for unit steps)."""
        start, step, size = self.starts[axis], self.steps[axis], self.source.shape[axis]
        if abs(step) != 1:
            return []
        first = start if step > 0 else start - (size - 1)
        return [first, first + size]

    def load(self, k, idx):
        source_idx, conditions = [], []
        for axis, coord in enumerate(idx):
            start, step, size = self.starts[axis], self.steps[axis], self.source.shape[axis]
            status = self.inside(axis, coord.lo, coord.hi)
            if status is False:
                return zero(self.dtype)
            k.note_split(coord, self.split_points(axis))
            offset = k.b.sub(coord.value, ir.Constant(I64, start))
            position = offset if step == 1 else k.b.sdiv(offset, ir.Constant(I64, step))
            if status is None:
                in_range = k.b.icmp_unsigned("<", position, ir.Constant(I64, size))
                if abs(step) != 1:
                    exact = k.b.icmp_signed("==", k.b.srem(offset, ir.Constant(I64, step)), ir.Constant(I64, 0))
                    in_range = k.b.and_(in_range, exact)
                conditions.append(in_range)
                clamped = k.b.select(in_range, position, ir.Constant(I64, 0))
                source_idx.append(Coord(clamped, 0, max(size, 1)))
            else:
                lo = (coord.lo - start) // step
                hi = (coord.hi - 1 - start) // step
                source_idx.append(Coord(position, min(lo, hi), max(lo, hi) + 1))
        value = self.source.load(k, source_idx)
        for condition in conditions:
            value = k.b.select(condition, value, zero(self.dtype))
        return value


def zero(dtype):
    """The zero of `dtype` as a register value."""
    dtype = np.dtype(dtype)
    return ir.Constant(value_type(dtype), 0.0 if dtype.kind == "f" else 0)


class Convert(Operand):
    def __init__(self, source: Operand, dtype):
        self.source, self.shape, self.dtype = source, source.shape, np.dtype(dtype)
        self.reads, self.at_index = source.reads, source.at_index
        self.cost = source.cost + 1

    def load(self, k, idx):
        return cast(k.b, self.source.load(k, idx), self.source.dtype, self.dtype)


class Elementwise(Operand):
    """An `ew` node's SymPy expression evaluated on its operands at each index."""

    def __init__(self, expr, symbols, operands, dtype):
        self.expr, self.symbols, self.operands = expr, symbols, operands
        self.shape, self.dtype = operands[0].shape, np.dtype(dtype)
        self.compute = compute_dtype(self.dtype, [o.dtype for o in operands])
        self.reads = frozenset().union(*(o.reads for o in operands))
        elsewhere = frozenset().union(*(o.reads - o.at_index for o in operands))
        self.at_index = frozenset().union(*(o.at_index for o in operands)) - elsewhere
        self.cost = expression_cost(expr) + sum(o.cost for o in operands)

    def load(self, k, idx):
        return k.once(self, idx, lambda: self._evaluate(k, idx))

    def _evaluate(self, k, idx):
        values = {}
        for symbol, operand in zip(self.symbols, self.operands):
            value = operand.load(k, idx)
            values[symbol] = value if operand.dtype == dtypes.BOOL else cast(k.b, value, operand.dtype, self.compute)
        result = ExprEmitter(k.b, value_type(self.compute), k.outlined_math,
                             is_unsigned(self.compute)).emit(self.expr, values)
        if self.dtype == dtypes.BOOL:
            return result
        return cast(k.b, result, self.compute, self.dtype)


# A transcendental costs about as much as this many additions (polynomial kernels).
FUNCTION_COST = 12


def expression_cost(expr) -> int:
    """Operations to evaluate `expr`, counting a function call as FUNCTION_COST."""
    cost = 0
    for sub in sp.preorder_traversal(expr):
        if isinstance(sub, sp.Function) and not isinstance(sub, (sp.Abs, sp.sign, sp.floor, sp.ceiling)):
            cost += FUNCTION_COST
        elif isinstance(sub, sp.Pow) and not (sub.exp.is_Integer and sub.exp > 0):
            half_integer = sub.exp.is_Number and float(2 * sub.exp).is_integer()
            cost += 4 if half_integer else FUNCTION_COST  # sqrt or division, else pow
        elif sub.args and not sub.is_Atom:
            cost += max(len(sub.args) - 1, 1)
    return cost


def compute_dtype(out_dtype, input_dtypes) -> np.dtype:
    """The type an expression computes in: its result's; for a comparison its inputs' common type; for a
    result narrower than a float input (an integer `where(x > 0.5, 1, 0)`, a float32 choice made by comparing
    float64 values, fused) the wider type, the result converted at the end: computed in the result's type,
    0.7 > 0.5 read 0 > 0.5, and 2e-50 > 1e-50 read 0 > 0 in float32."""
    numeric = [np.dtype(d) for d in input_dtypes if d != dtypes.BOOL]
    if out_dtype == dtypes.BOOL:
        return dtypes.promote(numeric) if numeric else dtypes.FLOAT64
    out = np.dtype(out_dtype)
    floats = [d for d in numeric if d.kind == "f"]
    if floats and (out.kind in "iu" or any(d.itemsize > out.itemsize for d in floats)):
        return dtypes.promote([out, *floats])
    return out
