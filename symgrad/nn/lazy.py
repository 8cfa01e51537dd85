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


def _lazy(full, first_size, stored_size, doc):
    """A Lazy class of `full` (a subclass, as PyTorch's), whose first constructor argument is
    first_size(module, input), or stored_size(module, shape of a loaded tensor) when a state_dict comes first."""

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

    def materialize(self, size):
        """The full module's parameters and buffers, for first size `size`, into the placeholders; becomes it."""
        args, options = self.__dict__.pop("_lazy_arguments")
        fresh = full(size, *args, **options)
        for table, fresh_table in ((self._parameters, fresh._parameters), (self._buffers, fresh._buffers)):
            for name, value in fresh_table.items():
                if value is not None:
                    kind = table[name]._data.dtype
                    table[name]._data = value._data.astype(kind if value._data.dtype.kind == kind.kind else
                                                           value._data.dtype)
        self.__dict__.update({name: value for name, value in vars(fresh).items()
                              if not name.startswith("_") and name != "training"})
        self.__class__ = full

    def forward(self, input, *rest, **kwargs):
        materialize(self, first_size(self, input))
        return self.forward(input, *rest, **kwargs)

    def materialize_from(self, state_dict, prefix):
        """Loading a state_dict before the first call: the sizes are the loaded tensors' (as PyTorch's)."""
        for name in (*self._parameters, *self._buffers):
            shape = tuple(getattr(state_dict.get(prefix + name), "shape", ()))
            if shape:
                materialize(self, stored_size(self, shape))
                return

    name = "Lazy" + full.__name__
    return type(name, (full,), {"__init__": __init__, "forward": forward, "_materialize_from": materialize_from,
                                "cls_to_become": full, "__doc__": doc, "__module__": __name__})


def _last(module, input):
    return input.shape[-1]


def _channels(module, input):
    """in_channels: dimension 1 of a batched input, 0 of an unbatched one (d + 1 dimensions)."""
    return input.shape[0] if input.ndim == len(module.kernel_size) + 1 else input.shape[1]


def _features(module, input):
    return input.shape[1]


def _stored_channels(module, shape):
    """in_channels (in_features) from a loaded weight: (out, in / groups, ...), transposed (in, out / groups, ...);
    a bias alone does not tell it."""
    if len(shape) == 1:
        raise RuntimeError(f"{type(module).__name__}: a state_dict with its bias but not its weight cannot give "
                           "its input size before the first call")
    if isinstance(module, Linear):
        return shape[0]  # (the weight's shape reversed: (in, out))
    return shape[0] if isinstance(module, conv._ConvTransposeNd) else shape[1] * module.groups


LazyLinear = _lazy(Linear, _last, lambda module, shape: _stored_channels(module, shape[::-1]),
                   "A Linear whose in_features is the last size of its first input.")
LazyConv1d, LazyConv2d, LazyConv3d, LazyConvTranspose1d, LazyConvTranspose2d, LazyConvTranspose3d = (
    _lazy(cls, _channels, _stored_channels, f"A {cls.__name__} whose in_channels is its first input's channels.")
    for cls in (conv.Conv1d, conv.Conv2d, conv.Conv3d, conv.ConvTranspose1d, conv.ConvTranspose2d,
                conv.ConvTranspose3d))
LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d = (
    _lazy(cls, _features, lambda module, shape: shape[0],
          f"A {cls.__name__} whose num_features is its first input's channels.")
    for cls in (normalization.BatchNorm1d, normalization.BatchNorm2d, normalization.BatchNorm3d))
