"""PyTorch's legacy tensor constructors as tutorials still write them, `sg.LongTensor([label])`,
`sg.FloatTensor([[1, 2]])`, `sg.DoubleTensor(2, 3)`: data (a list, tuple, array or tensor) gives a tensor of that
dtype, sizes (ints) one of those sizes (zeros: PyTorch leaves the memory uninitialized), nothing an empty one."""
from __future__ import annotations

import numpy as np

from .tensor import _TYPE_NAMES, tensor


def _constructor(name: str, dtype: np.dtype):
    def construct(*args, device=None):
        if args and all(isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in args):
            return tensor(np.zeros(tuple(int(a) for a in args), dtype), device=device)
        if len(args) > 1:
            raise TypeError(f"{name}() takes sizes (ints) or one sequence of data, got {args!r}")
        return tensor(args[0] if args else np.zeros(0, dtype), dtype=dtype, device=device)

    construct.__name__ = construct.__qualname__ = name
    construct.__doc__ = f"torch.{name}(data) or torch.{name}(*sizes): a tensor of {np.dtype(dtype).name}."
    return construct


globals().update({name: _constructor(name, dtype) for dtype, name in _TYPE_NAMES.items()})
