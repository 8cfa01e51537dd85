"""The lazy modules (LazyLinear, LazyConv*, LazyConvTranspose*, LazyBatchNorm*): a module whose first size
(in_features, in_channels, num_features) is read from its first input, as PyTorch's. Its parameters and buffers
exist from the start, empty, so an optimizer built before the first call holds them; that call fills them in place
(in the dtype the module was moved to meanwhile) and the module becomes the full class (`cls_to_become`)."""
from __future__ import annotations

import numpy as np

from ..eager import tensor as eager_tensor
from ..eager.tensor import Tensor
from . import conv, normalization
from .modules import Linear, Module
from .parameter import Parameter


def _lazy(full, first_size, doc):
    """A Lazy class of `full` (a subclass, as PyTorch's), whose first constructor argument is
    first_size(module, input)."""

    def __init__(self, *args, **kwargs):
        Module.__init__(self)
        generator = eager_tensor.random_generator()
        state = generator.bit_generator.state
        template = full(0, *args, **kwargs)  # its attributes and extra_repr, with size 0 (PyTorch's repr shows 0)
        generator.bit_generator.state = state  # (the real draws come at the first call, as PyTorch's)
        self.__dict__.update({name: value for name, value in vars(template).items()
                              if not name.startswith("_") and name != "training"})
        for name, value in template._parameters.items():
            self.register_parameter(name, None if value is None else Parameter(np.empty(0, value._data.dtype)))
        for name, value in template._buffers.items():
            self.register_buffer(name, None if value is None else Tensor._wrap(np.empty(0, value._data.dtype)))
        self._lazy_arguments = args, kwargs

    def forward(self, input, *rest, **kwargs):
        args, options = self.__dict__.pop("_lazy_arguments")
        fresh = full(first_size(self, input), *args, **options)
        for name, value in fresh._parameters.items():
            if value is not None:
                self._parameters[name]._data = value._data.astype(self._parameters[name]._data.dtype)
        for name, value in fresh._buffers.items():
            if value is not None:
                kind = self._buffers[name]._data.dtype
                self._buffers[name]._data = value._data.astype(kind if value._data.dtype.kind == kind.kind else
                                                               value._data.dtype)
        self.__dict__.update({name: value for name, value in vars(fresh).items()
                              if not name.startswith("_") and name != "training"})
        self.__class__ = full
        return self.forward(input, *rest, **kwargs)

    name = "Lazy" + full.__name__
    return type(name, (full,), {"__init__": __init__, "forward": forward, "cls_to_become": full, "__doc__": doc,
                                "__module__": __name__})


def _last(module, input):
    return input.shape[-1]


def _channels(module, input):
    """in_channels: dimension 1 of a batched input, 0 of an unbatched one (d + 1 dimensions)."""
    return input.shape[0] if input.ndim == len(module.kernel_size) + 1 else input.shape[1]


def _features(module, input):
    return input.shape[1]


LazyLinear = _lazy(Linear, _last, "A Linear whose in_features is the last size of its first input.")
LazyConv1d, LazyConv2d, LazyConv3d, LazyConvTranspose1d, LazyConvTranspose2d, LazyConvTranspose3d = (
    _lazy(cls, _channels, f"A {cls.__name__} whose in_channels is its first input's channels.")
    for cls in (conv.Conv1d, conv.Conv2d, conv.Conv3d, conv.ConvTranspose1d, conv.ConvTranspose2d,
                conv.ConvTranspose3d))
LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d = (
    _lazy(cls, _features, f"A {cls.__name__} whose num_features is its first input's channels.")
    for cls in (normalization.BatchNorm1d, normalization.BatchNorm2d, normalization.BatchNorm3d))
