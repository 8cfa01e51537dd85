"""`sg.Size`: a tensor's shape as PyTorch's torch.Size, a tuple of ints (equal to the plain tuple, usable
wherever one is) with `numel()` and PyTorch's printed form."""
from __future__ import annotations

import math


class Size(tuple):
    """The sizes of a tensor's dimensions: `t.shape`, `t.size()`."""

    __slots__ = ()

    def __new__(cls, sizes=()):
        return super().__new__(cls, (int(s) for s in sizes))

    def numel(self) -> int:
        return math.prod(self)

    def __getitem__(self, key):
        item = super().__getitem__(key)
        return Size(item) if isinstance(key, slice) else item

    def __repr__(self):
        return f"sg.Size({list(self)})"

    def __reduce__(self):
        return Size, (tuple(self),)


_known: dict = {}  # shape tuple -> its Size: `t.shape` is read on every op, and building a Size costs ~0.4 us


def size_of(shape: tuple) -> Size:
    """The Size of a NumPy shape, made once per distinct shape."""
    size = _known.get(shape)
    if size is None:
        if len(_known) > 4096:
            _known.clear()
        size = _known[shape] = Size(shape)
    return size
