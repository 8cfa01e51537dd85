"""Sums of adjacent slabs as one slab of their concatenation.

Reverse mode turns each read `x[t]` of a Python loop into `unslice(ct_t)` (ct_t placed in zeros of x's
shape) and sums them: T reads make T arrays of x's full shape, work and memory quadratic in the loop's
length. Where the two terms of an `add` are slabs along the same axis (full along the others, unit steps)
that meet, their sum is the slab of their concatenation. A merged sum is emitted only where something
other than such an add reads it, so T adjacent reads become one concatenate of T pieces (and an unslice,
unless they cover the whole axis).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .. import ir
from ..ops.ew import ew_p
from ..ops.indexing import unslice_p
from ..ops.shape import concatenate_p


@dataclass(frozen=True)
class _Slab:
    """A value that is zero but for `pieces`, concatenated along `axis` from `start` on; `meta`, the notes of
    the node that made it (its rule, for printing)."""

    axis: int
    start: int
    pieces: tuple
    out: ir.Value
    meta: dict = field(default_factory=dict)

    @property
    def stop(self) -> int:
        return self.start + sum(piece.shape[self.axis] for piece in self.pieces)


def merge_slab_sums(graph: ir.Graph) -> ir.Graph:
    """Rewrite sums of adjacent slabs (see the module docstring); other nodes are kept as they are."""
    slabs, unemitted, nodes = {}, {}, []

    def use(value):
        slab = unemitted.pop(id(value), None)
        if slab is not None:
            nodes.extend(_emit(slab, value))
        return value

    for node in graph.nodes:
        if _is_add(node):
            merged = _merged(slabs.get(id(node.inputs[0])), slabs.get(id(node.inputs[1])), node)
            if merged is not None:
                slabs[id(node.out)] = unemitted[id(node.out)] = merged
                continue
        for value in node.inputs:
            use(value)
        nodes.append(node)
        slab = _slab_of(node) if node.prim is unslice_p else None
        if slab is not None:
            slabs[id(node.out)] = slab
    for value in graph.outputs:
        use(value)
    return ir.Graph(list(graph.inputs), nodes, list(graph.outputs), graph.name)


def _is_add(node: ir.Node) -> bool:
    """An elementwise x0 + x1 of two values of its output's shape and dtype."""
    if node.prim is not ew_p or len(node.inputs) != 2:
        return False
    params = node.params
    x0, x1 = params["args"]
    return params["expr"] == x0 + x1 and all(
        (v.shape, v.dtype) == (node.out.shape, node.out.dtype) for v in node.inputs)


def _slab_of(node: ir.Node) -> "_Slab | None":
    """The unslice node's value as a slab along its one partial axis, or None."""
    (piece,) = node.inputs
    params = node.params
    if any(step != 1 for step in params["steps"]):
        return None
    partial = [axis for axis, (start, size, full) in enumerate(zip(params["starts"], piece.shape, params["shape"]))
               if start != 0 or size != full]
    if len(partial) != 1:
        return None
    return _Slab(partial[0], params["starts"][partial[0]], (piece,), node.out, node.meta)


def _merged(a: "_Slab | None", b: "_Slab | None", add: ir.Node) -> "_Slab | None":
    """The slab the `add` node's a + b is, when they are slabs along one axis that meet; else None."""
    if a is None or b is None or a.axis != b.axis:
        return None
    if a.stop == b.start:
        return _Slab(a.axis, a.start, a.pieces + b.pieces, add.out, add.meta)
    if b.stop == a.start:
        return _Slab(a.axis, b.start, b.pieces + a.pieces, add.out, add.meta)
    return None


def _emit(slab: _Slab, out: ir.Value) -> list:
    """The nodes computing `out`, the merged slab: its pieces' concatenation, placed by an unslice unless
    it covers the whole axis."""
    shape, axis = out.shape, slab.axis
    whole = slab.start == 0 and slab.stop == shape[axis]
    size = slab.stop - slab.start
    joined = out if whole else ir.Value(shape[:axis] + (size,) + shape[axis + 1:], out.dtype)
    nodes = [ir.Node(concatenate_p, slab.pieces, ir.freeze_attrs({"axis": axis}), joined, slab.meta)]
    if not whole:
        starts = tuple(slab.start if i == axis else 0 for i in range(len(shape)))
        nodes.append(ir.Node(unslice_p, (joined,), ir.freeze_attrs(
            {"shape": shape, "starts": starts, "steps": (1,) * len(shape)}), out, slab.meta))
    return nodes
