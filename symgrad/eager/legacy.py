"""PyTorch's legacy tensor constructors as tutorials still write them, `sg.LongTensor([label])`,
`sg.FloatTensor([[1, 2]])`, `sg.DoubleTensor(2, 3)`: data (a list, tuple, array or tensor) gives a tensor of that
dtype, sizes (ints, or an sg.Size) one of those sizes (zeros: PyTorch leaves the memory uninitialized), nothing an
empty one; sg.Tensor reads its arguments so too (tensor.legacy_sizes)."""
from __future__ import annotations

import numpy as np

from .tensor import _TYPE_NAMES, legacy_sizes, tensor


def _constructor(name: str, dtype: np.dtype):
    def construct(*args, device=None):
        shape = legacy_sizes(args, name)
        if shape is not None:
            return tensor(np.zeros(shape, dtype), device=device)
        return tensor(args[0], dtype=dtype, device=device)

    construct.__name__ = construct.__qualname__ = name
    construct.__doc__ = f"torch.{name}(data) or torch.{name}(*sizes): a tensor of {np.dtype(dtype).name}."
    return construct


globals().update({name: _constructor(name, dtype) for dtype, name in _TYPE_NAMES.items()})
