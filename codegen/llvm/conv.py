"""im2col and col2im (symgrad/ops/conv.py) in native code, as index maps.

im2col is virtual: a patch element is the image element at a computed index (of the image copied into a
border of the fill, when padded), so a pooling's reduction reads the image in place and a convolution's
product materializes the patch matrix once (the BLAS operand). col2im gathers instead of scattering: an
image element is the sum, over the kernel offsets, of the patch elements that cover it, so it is written
once, at its own index, by a loop that may run in parallel chunks.
"""
from __future__ import annotations

import itertools

from llvmlite import ir

from .operands import Coord, Operand, zero
from .types import I64, value_type

_ZERO = ir.Constant(I64, 0)


def _const(value) -> ir.Constant:
    return ir.Constant(I64, value)


class Patches(Operand):
    """im2col's value without padding (im2col pads first): patches[c, *j, n, *o] = source[n, c, *(o*s + j*dl)],
    always inside the source (the shape rule keeps every window inside), so no bounds test."""

    def __init__(self, source: Operand, shape, params):
        self.source, self.shape, self.dtype = source, tuple(shape), source.dtype
        self.kernel, self.stride, self.dilation = params["kernel"], params["stride"], params["dilation"]
        self.reads = source.reads
        self.cost = source.cost + 2 * len(self.kernel)

    def load(self, k, idx):
        d = len(self.kernel)
        channel, offsets, batch, positions = idx[0], idx[1:1 + d], idx[1 + d], idx[2 + d:]
        source_idx = [batch, channel]
        for j, o, s, dl in zip(offsets, positions, self.stride, self.dilation):
            at = k.b.add(k.b.mul(o.value, _const(s)), k.b.mul(j.value, _const(dl)))
            source_idx.append(Coord(at, o.lo * s + j.lo * dl, (o.hi - 1) * s + (j.hi - 1) * dl + 1))
        return self.source.load(k, source_idx)


class Image(Operand):
    """col2im's value: image[n, c, *h] = sum over kernel offsets j of patches[c, *j, n, *o] where
    h + lo = o*s + j*dl for an o in range (the offsets that cannot reach h are skipped at run time)."""

    def __init__(self, patches: Operand, shape, params):
        self.source, self.shape, self.dtype = patches, tuple(shape), patches.dtype
        self.kernel, self.stride, self.dilation = params["kernel"], params["stride"], params["dilation"]
        self.padding = params["padding"]
        self.reads = patches.reads
        self.cost = (patches.cost + 4) * max(1, len(list(itertools.product(*map(range, self.kernel)))))

    def load(self, k, idx):
        d = len(self.kernel)
        batch, channel, spatial = idx[0], idx[1], idx[2:]
        out_sizes = self.source.shape[2 + d:]
        total = zero(self.dtype)
        for offsets in itertools.product(*map(range, self.kernel)):
            source_idx, inside = [channel, *map(Coord.constant, offsets), batch], []
            for h, j, s, dl, (lo, _), n in zip(spatial, offsets, self.stride, self.dilation, self.padding, out_sizes):
                shifted = k.b.sub(h.value, _const(j * dl - lo))  # o * s when this offset covers h
                span = s * (n - 1) + 1
                within = k.b.icmp_unsigned("<", shifted, _const(span))
                if s != 1:
                    on_grid = k.b.icmp_signed("==", k.b.urem(shifted, _const(s)), _ZERO)
                    within = k.b.and_(within, on_grid)
                    shifted = k.b.udiv(shifted, _const(s))
                inside.append(within)
                source_idx.append(Coord(k.b.select(within, shifted, _ZERO), 0, max(n, 1)))
            value = self.source.load(k, source_idx)
            for within in inside:
                value = k.b.select(within, value, zero(self.dtype))
            total = k.b.fadd(total, value) if self.dtype.kind == "f" else k.b.add(total, value)
        return total


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


def col2im(k, node, inputs):
    """Written once into its buffer: a consumer reading it several times must not sum the offsets again."""
    return k.materialize(Image(inputs[0], node.out.shape, node.params), k.result_buffer(node))
