"""`nn.Parameter`: a leaf tensor that a Module registers as one of its parameters."""
from __future__ import annotations

import numpy as np

from ..eager.tensor import Tensor


class Parameter(Tensor):
    """A tensor that requires grad by default and is collected by Module.parameters()."""

    __slots__ = ()

    def __init__(self, data=None, requires_grad=True):
        """A tensor's parameter shares its memory and version counter (writes to either reach the other), as
        PyTorch's; anything else is copied."""
        if not isinstance(data, Tensor):
            super().__init__(np.zeros(0) if data is None else data, requires_grad=requires_grad)
            return
        shared = data.detach()
        self._init(shared._data, shared._version)
        if requires_grad:
            self.requires_grad_(True)

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__  # print(param) shows it too, as in PyTorch
