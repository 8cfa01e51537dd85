"""im2col and col2im (symgrad/ops/conv.py) in native code, as index maps.

im2col is virtual: a patch element is the image element at a computed index (of the image copied into a
border of the fill, when padded), so a pooling's reduction reads the image in place, and a convolution's
product fills one example's patch matrix at a time (the BLAS operand) just before that example's call, in cache.
col2im adds the patches of each kernel offset into the zeroed image by one loop per offset over the window
positions that land inside it (a range known at compile time): no bounds test, contiguous rows with stride 1;
patches a product computes (an input gradient) come one example at a time too.
"""
from __future__ import annotations

import itertools
import math

from llvmlite import ir

from .jobs import CustomJob, LoopJob, loop_nest
from .operands import Coord, Operand, zero
from .types import I64, value_type

_ZERO = ir.Constant(I64, 0)


def _const(value) -> ir.Constant:
    return ir.Constant(I64, value)


class Patches(Operand):
    """im2col's value without padding (im2col pads first): patches[n, c, *j, *o] = source[n, c, *(o*s + j*dl)],
    always inside the source (the shape rule keeps every window inside), so no bounds test."""

    def __init__(self, source: Operand, shape, params):
        self.source, self.shape, self.dtype = source, tuple(shape), source.dtype
        self.kernel, self.stride, self.dilation = params["kernel"], params["stride"], params["dilation"]
        self.reads = source.reads
        self.cost = source.cost + 2 * len(self.kernel)

    def load(self, k, idx):
        d = len(self.kernel)
        source_idx, offsets, positions = list(idx[:2]), idx[2:2 + d], idx[2 + d:]
        for j, o, s, dl in zip(offsets, positions, self.stride, self.dilation):
            at = k.b.add(k.b.mul(o.value, _const(s)), k.b.mul(j.value, _const(dl)))
            source_idx.append(Coord(at, o.lo * s + j.lo * dl, (o.hi - 1) * s + (j.hi - 1) * dl + 1))
        return self.source.load(k, source_idx)


class ExamplePatches(Operand):
    """im2col's patches seen as one matrix (C*K, L) per example, (N, C*K, L): a convolution's BLAS operand. A
    product fills one example's matrix just before its call (blas.operand), in cache, rather than all N at
    once; a load elsewhere splits the merged axes (slower, but any reader gets the right values)."""

    in_pieces, scratch = True, ()

    def __init__(self, patches: Patches, shape):
        self.patches, self.shape, self.dtype = patches, tuple(shape), patches.dtype
        self.reads, self.cost = patches.reads, patches.cost + 4

    def load(self, k, idx):
        example, row, position = idx
        return self.patches.load(k, [example, *_split(k, row, self.patches.shape[1:2 + len(self.patches.kernel)]),
                                     *_split(k, position, self.patches.shape[2 + len(self.patches.kernel):])])

    def fill(self, k, target, example):
        """Store example `example` (an i64) of the patches in target, (C*K, L): loops over (c, *j, *o) in the
        patches' order, so the innermost reads a row of the image and writes a row of target."""
        inner = self.patches.shape[1:]
        matrix = target.reshaped(inner)
        at = Coord(example, 0, self.patches.shape[0])
        loop_nest(k, [(0, n) for n in inner], lambda idx: matrix.store(k, idx, self.patches.load(k, [at, *idx])))


def by_example(x, shape):
    """x (im2col's patches) reshaped to `shape` as one matrix per example (ExamplePatches), or None."""
    if not isinstance(x, Patches) or len(shape) != 3 or shape[0] != x.shape[0]:
        return None
    d = len(x.kernel)
    return ExamplePatches(x, shape) if shape[1:] == (math.prod(x.shape[1:2 + d]), math.prod(x.shape[2 + d:])) \
        else None


def _split(k, coord, sizes) -> list:
    """The row-major coordinates along `sizes` of one flat coordinate."""
    parts, rest = [], coord.value
    for size in reversed(sizes[1:]):
        parts.append(Coord(k.b.urem(rest, _const(size)), 0, size))
        rest = k.b.udiv(rest, _const(size))
    return [Coord(rest, 0, sizes[0]), *reversed(parts)]


class Padded(Operand):
    """source (N, C, *spatial) inside a border of `fill`, padding[i] = (lo, hi) elements wide."""

    def __init__(self, source: Operand, padding, fill):
        self.source, self.dtype, self.padding, self.fill = source, source.dtype, padding, fill
        self.shape = tuple(source.shape[:2]) + tuple(n + lo + hi for n, (lo, hi) in zip(source.shape[2:], padding))
        self.reads, self.cost = source.reads, source.cost + 2

    def load(self, k, idx):
        source_idx, inside = list(idx[:2]), []
        for coord, (lo, _), size in zip(idx[2:], self.padding, self.source.shape[2:]):
            at = k.b.sub(coord.value, _const(lo))
            within = k.b.icmp_unsigned("<", at, _const(size))
            inside.append(within)
            source_idx.append(Coord(k.b.select(within, at, _ZERO), 0, max(size, 1)))
        value = self.source.load(k, source_idx)
        for within in inside:
            value = k.b.select(within, value, _fill(self.dtype, self.fill))
        return value


def _fill(dtype, fill) -> ir.Constant:
    return ir.Constant(value_type(dtype), fill if dtype.kind == "f" else int(fill))


def im2col(k, node, inputs):
    """Patches of the image; a padded image is first copied once inside its border (K times smaller than the
    patches), so the patches are plain strided reads with no bounds test, which vectorize."""
    (x,) = inputs
    padding = node.params["padding"]
    if any(map(any, padding)):
        x = k.materialize(Padded(x, padding, float(node.params["fill"])))
    return Patches(x, node.out.shape, node.params)


def _covered(size, out, shift, stride) -> tuple:
    """(first, count): the window positions o in range(out) whose place o * stride + shift is in range(size)."""
    first = max(0, -(shift // stride))  # ceil(-shift / stride)
    last = min(out - 1, (size - 1 - shift) // stride)
    return first, max(0, last - first + 1)


def col2im(k, node, inputs):
    """One loop over (image, channel): each plane zeroed, then for each kernel offset the patch elements of
    that offset added at their places. The positions whose place is inside the image are a range known here,
    so the inner loops have no bounds test and, with stride 1, read and write contiguous rows (they
    vectorize); the plane stays in cache while the offsets add into it. Patches given by example (a
    product's, blas.ExampleProduct) are filled one example at a time into a buffer that stays in cache."""
    (cols,) = inputs
    out = k.result_buffer(node)
    kernel, stride, dilation = node.params["kernel"], node.params["stride"], node.params["dilation"]
    d = len(kernel)
    spatial, positions = out.shape[2:], cols.shape[2 + d:]
    adds = []  # per kernel offset reaching the image: (offsets, per axis (first, count), per axis shift)
    for offsets in itertools.product(*map(range, kernel)):
        shifts = [j * dl - lo for j, dl, (lo, _) in zip(offsets, dilation, node.params["padding"])]
        ranges = [_covered(*args) for args in zip(spatial, positions, shifts, stride)]
        if all(count for _, count in ranges):
            adds.append((offsets, ranges, shifts))
    empty = zero(node.out.dtype)

    def plane(k, source, source_batch, batch, channel):
        loop_nest(k, [(0, n) for n in spatial], lambda at: out.store(k, [batch, channel, *at], empty))
        for offsets, ranges, shifts in adds:
            def add(steps, offsets=offsets, shifts=shifts):
                source_idx = [source_batch, channel, *map(Coord.constant, offsets), *steps]
                target_idx = [batch, channel]
                for step, shift, s in zip(steps, shifts, stride):
                    place = k.b.add(k.b.mul(step.value, _const(s)), _const(shift))
                    target_idx.append(Coord(place, step.lo * s + shift, (step.hi - 1) * s + shift + 1))
                value, total = source.load(k, source_idx), out.load(k, target_idx)
                out.store(k, target_idx, k.b.fadd(total, value) if out.dtype.kind == "f" else k.b.add(total, value))
            loop_nest(k, [(first, first + count) for first, count in ranges], add)

    if not cols.in_pieces:
        k.jobs.append(LoopJob(tuple(out.shape[:2]), out, cols.reads | out.reads,
                              lambda k, idx: plane(k, cols, idx[0], *idx)))
        return out
    example = k.new_buffer(cols.shape[1:], cols.dtype)
    one = example.reshaped((1, *cols.shape[1:]))
    batch, channels = out.shape[:2]

    def emit(k):
        def image(i):
            cols.fill(k, example, i)
            at = Coord(i, 0, batch)
            k.for_range(0, channels, lambda c: plane(k, one, Coord.constant(0), at, Coord(c, 0, channels)))
        k.for_range(0, batch, image)
    k.jobs.append(CustomJob((out, example, *cols.scratch), cols.reads | out.reads, emit))
    return out
