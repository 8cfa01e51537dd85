"""torch.autograd.graph.saved_tensors_hooks: while the context is open, each tensor an op saves for its backward is
given to pack_hook (at the forward), and what it returned to unpack_hook when the backward runs that op.

The tensors an op saves are PyTorch's for the common ops: none for sums, views, slices, casts, add, subtract and
negation; an indexing's indices; for a product (multiply, matmul) each factor whose partner requires grad; for
divide the divisor, and the dividend when the divisor requires grad; a Python number never; every operand of any
other op (sin's input, pow's base; PyTorch saves exp's, tanh's, sigmoid's and relu's result instead: one call
either way). symgrad's backward reads the arrays it kept: unpack_hook must give back the values packed (offloading
to NumPy, disk or another dtype and back, counting); a hook that changes them (quantizing) is a clear error, not a
gradient of other values. Outside the context nothing here runs: the record maker is swapped while it is open, and
a backward looks for packed tensors only once some were packed. The hooks are the process's, not one thread's."""
from __future__ import annotations

import numpy as np

from ..ops.ew import ew_p
from ..ops.indexing import slice_p, take_p
from ..ops.linalg import matmul_p
from ..ops.shape import broadcast_to_p, concatenate_p, convert_p, reduce_sum_p, reshape_p, transpose_p
from .graph import Record
from .tape import start_over

_NOTHING_SAVED = {reshape_p, transpose_p, broadcast_to_p, reduce_sum_p, concatenate_p, slice_p, convert_p}
_LINEAR = {"add", "subtract", "negative", "positive"}
_stack = []  # the open contexts' (pack_hook, unpack_hook), innermost last
_plain_of_op = Record.of_op
PACKED = [False]  # whether any tensor was ever packed: a backward looks for them from then on


def _needs_grad(t) -> bool:
    return t._node is not None or t._requires_grad


def _a_number(t) -> bool:
    """Whether t is a Python number made an operand (tensor._numbers_as_operands: a read-only broadcast view), which
    PyTorch's op keeps as a number, not a saved tensor."""
    data = t._data
    return not data.flags.writeable and not any(data.strides) and not _needs_grad(t)


def saved_operands(prim, attrs, operands) -> list:
    """The positions of the operands PyTorch's op saves (module docstring)."""
    if prim in _NOTHING_SAVED:
        return []
    positions = _saved_positions(prim, attrs, operands)
    return [i for i in positions if not _a_number(operands[i])]


def _saved_positions(prim, attrs, operands) -> list:
    name = dict(attrs).get("name") if prim is ew_p else None
    if name in _LINEAR:
        return []
    if prim is take_p:  # (PyTorch's indexing saves the indices only)
        return list(range(1, len(operands)))
    if prim is matmul_p or name == "multiply":
        return [i for i in range(len(operands)) if any(_needs_grad(o) for j, o in enumerate(operands) if j != i)]
    if name == "divide":
        return [1] + ([0] if _needs_grad(operands[1]) else [])
    return list(range(len(operands)))


def _packing_of_op(cls, prim, attrs, operands, arrays, out, function=None, ctx=None, kind=None, tape=None):
    """Record.of_op while a context is open: the record, with what pack_hook made of each tensor the op saves."""
    record = _plain_of_op.__func__(cls, prim, attrs, operands, arrays, out, function, ctx, kind, tape)
    pack, unpack = _stack[-1]
    positions = saved_operands(prim, attrs, operands) if function is None else []
    if positions:
        record.rare().packed = [(unpack, pack(operands[i]), arrays[i]) for i in positions]
        record.tape.regular = False  # its backward takes the general path, which unpacks (engine._Backward)
        PACKED[0] = True
    return record


def push(pack_hook, unpack_hook) -> None:
    if not _stack:
        start_over()  # (a step deferred as captured records no op: the ops from here are recorded one by one)
        Record.of_op = classmethod(_packing_of_op)
    _stack.append((pack_hook, unpack_hook))


def pop() -> None:
    _stack.pop()
    if not _stack:
        Record.of_op = _plain_of_op


def unpack(records, retain_graph) -> None:
    """Call unpack_hook on what each record about to run packed, in the backward's order, checking it gives back
    the values packed; without retain_graph they are dropped, as PyTorch frees them."""
    for record in records:
        extra = record.extra
        packed = extra.packed if extra is not None else None
        if not packed:
            continue
        for unpack_hook, handle, array in packed:
            value = unpack_hook(handle)
            data = getattr(value, "_data", None)
            if data is None:
                raise TypeError(f"saved_tensors_hooks: unpack_hook must return a Tensor, got {type(value).__name__} "
                                f"(in the backward of {record.name()})")
            if data.shape != array.shape or not np.array_equal(data, array, equal_nan=data.dtype.kind in "fc"):
                raise RuntimeError(f"saved_tensors_hooks: unpack_hook returned other values than were packed (shape "
                                   f"{list(data.shape)}, packed {list(array.shape)}) in the backward of "
                                   f"{record.name()}: symgrad's backward reads the values the op saved, so hooks that "
                                   "change them (quantizing) are not supported")
        if not retain_graph:
            extra.packed = None
