"""`nn.Parameter`: a leaf tensor that a Module registers as one of its parameters."""
from __future__ import annotations

import numpy as np

from ..eager.tensor import Tensor


class Parameter(Tensor):
    """A tensor that requires grad by default and is collected by Module.parameters()."""

    __slots__ = ()

    def __init__(self, data=None, requires_grad=True):
        data = np.zeros(0) if data is None else data
        super().__init__(data._data if isinstance(data, Tensor) else data, requires_grad=requires_grad)

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__  # print(param) shows it too, as in PyTorch
