"""Which operands of torch.matmul its backward reads as a copy made at the forward.

torch.matmul reshapes a batch operand before one GEMM (a 3-D @ 2-D folds into rows, a broadcast batch into one batch
dimension); the reshape copies when the layout does not allow a view, and the backward then reads that copy, not the
operand's memory. symgrad reads an array shared with NumPy (from_numpy) as NumPy left it at backward, PyTorch's
behaviour for the operands it reads in place; `as_torch_reads` copies the others at the forward, so a NumPy write
between forward and backward changes the gradients as PyTorch's (aten's _matmul_impl, should_fold, computeStride).
"""
from __future__ import annotations

import math

import numpy as np


def as_torch_reads(a, b):
    """(a, b), an operand shared with NumPy replaced by a copy (recorded, as clone()) where torch.matmul(a, b) reads
    one; the operands themselves in every other case (the common one: checked by one attribute each)."""
    try:
        exposed_a, exposed_b = a._version.exposed, b._version.exposed
    except AttributeError:  # an array or a traced value: no memory NumPy writes under a tensor
        return a, b
    if not (exposed_a or exposed_b) or a._data.ndim <= 2 and b._data.ndim <= 2:  # (mm, mv, dot: as they are)
        return a, b
    copies_a, copies_b = copied(_layout(a), _layout(b))
    return (a.clone() if exposed_a and copies_a else a), (b.clone() if exposed_b and copies_b else b)


def as_linear_reads(input, weight):
    """F.linear's input, a copy where PyTorch's reads one: its product is torch.matmul(input, weight.t()) (a 2-D input
    or a row-major one reshapes as a view, as its other paths read it)."""
    if not getattr(getattr(input, "_version", None), "exposed", False) or not hasattr(weight, "_version") \
            or weight.ndim != 2 or input.ndim <= 2:  # (a 2-D input: mm reads both operands as they are)
        return input
    # the weight's strides do not decide the input's copy (its requires_grad does): a row-major layout stands for
    # them, so that a weight a captured step defers (a chunk of in_proj_weight) is not computed here
    rows, columns = weight.shape
    return input.clone() if copied(_layout(input), ((columns, rows), (1, columns), weight.requires_grad))[0] else input


def _layout(t) -> tuple:
    """(shape, strides in elements, requires_grad) of a tensor, as PyTorch's from_numpy of its array has them."""
    data = t._data
    return data.shape, tuple(s // data.itemsize for s in data.strides), bool(t.requires_grad)


def copied(first, second) -> tuple:
    """(whether the first operand is read as a copy, the same of the second) by torch.matmul's backward, each operand
    a (shape, strides, requires_grad) layout."""
    (shape1, strides1, grad1), (shape2, strides2, grad2) = first, second
    dim1, dim2 = len(shape1), len(shape2)
    if dim1 <= 2 and dim2 <= 2:  # dot, mv, mm: the operands as they are
        return False, False
    if _folds(first, second):  # one GEMM of the larger operand's rows (the second's, transposed, when larger)
        if dim1 >= dim2:
            return not _is_view(shape1, strides1, (math.prod(shape1[:-1]), shape1[-1])), False
        shape, strides = _transposed(shape2, strides2)
        return False, not _is_view(shape, strides, (math.prod(shape[:-1]), shape[-1]))
    if dim1 == 3 and dim2 == 3 and shape1[0] != shape2[0]:  # a batch of one that requires grad is squeezed
        if shape1[0] == 1 and grad1:
            return copied((shape1[1:], strides1[1:], grad1), second)
        if shape2[0] == 1 and grad2:
            return copied(first, (shape2[1:], strides2[1:], grad2))
    batch = tuple(np.broadcast_shapes(shape1[:-2], shape2[:-2]))
    count = math.prod(batch)
    rows = (shape1[-2] if dim1 > 1 else 1, shape1[-1])
    expanded = batch + rows
    first_copied = not _is_view(expanded, _expanded_strides(shape1, strides1, expanded), (count, *rows))
    expanded = batch + (shape2[-2:] if dim2 > 1 else shape2)
    second_copied = not _is_view(expanded, _expanded_strides(shape2, strides2, expanded),
                                 (count, *expanded[len(batch):]))
    return first_copied, second_copied


def _folds(first, second) -> bool:
    """aten's should_fold (without out=): one GEMM over the rows of the operand of 3 or more dimensions."""
    (shape1, _, grad1), (shape2, strides2, grad2) = first, second
    larger_first = len(shape1) >= len(shape2)
    shape, strides = (first[:2] if larger_first else _transposed(shape2, strides2))
    if not (len(shape) >= 3 and min(len(shape1), len(shape2)) <= 2):
        return False
    if grad2 if larger_first else grad1:
        return True
    if len(shape1) == 2:
        return False
    if math.prod(shape) == 0:
        return True
    return all(strides[i] == strides[i + 1] * shape[i + 1] for i in range(len(shape) - 2))


def _transposed(shape, strides) -> tuple:
    return shape[:-2] + (shape[-1], shape[-2]), strides[:-2] + (strides[-1], strides[-2])


def _expanded_strides(shape, strides, size) -> tuple:
    """The strides of PyTorch's expand of a tensor to `size`: 0 along a new or stretched dimension."""
    lead = len(size) - len(shape)
    return (0,) * lead + tuple(0 if n == 1 and m != 1 else s for n, s, m in zip(shape, strides, size[lead:]))


def _is_view(shape, strides, new_shape) -> bool:
    """Whether PyTorch's reshape of a tensor of this layout to new_shape is a view (c10's computeStride): each run
    of dimensions merged into one must be laid out evenly (a dimension of size 1 anywhere)."""
    if math.prod(shape) == 0:
        return True
    view_d = len(new_shape) - 1
    base = strides[-1]
    tensor_count = view_count = 1
    for d in range(len(shape) - 1, -1, -1):
        tensor_count *= shape[d]
        if d == 0 or shape[d - 1] != 1 and strides[d - 1] != tensor_count * base:
            while view_d >= 0 and (view_count < tensor_count or new_shape[view_d] == 1):
                view_count *= new_shape[view_d]
                view_d -= 1
            if view_count != tensor_count:
                return False
            if d > 0:
                base = strides[d - 1]
                tensor_count = view_count = 1
    return view_d == -1


def grad_fn_label(*ndims) -> "str | None":
    """PyTorch's grad_fn name of torch.matmul's result by its two operands' ndims: the ATen op its _matmul_impl
    ends with (dot, mv, a squeeze after mm, mm, the reshape of a folded or batched product, or clone's); None for
    a call of another form (a scalar's product)."""
    if len(ndims) != 2 or 0 in ndims:
        return None
    a_ndim, b_ndim = ndims
    if a_ndim >= 3 or (a_ndim == 1 and b_ndim >= 3):
        return "UnsafeViewBackward0"
    names = {(1, 1): "DotBackward0", (2, 1): "MvBackward0", (1, 2): "SqueezeBackward4", (2, 2): "MmBackward0"}
    return names.get((a_ndim, b_ndim), "CloneBackward0")
