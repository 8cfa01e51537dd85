"""Activation modules with PyTorch's names and arguments, each its nn.functional form (SiLU, Mish, ReLU6,
Hardtanh, Hardsigmoid, Hardswish, SELU, CELU, LogSigmoid, Softmin, Softplus, Softsign, Hardshrink,
Softshrink, Tanhshrink, Threshold, GLU, PReLU)."""
from __future__ import annotations

import numpy as np

from .. import dtypes
from . import functional as F
from .modules import Module
from .parameter import Parameter


class _Elementwise(Module):
    """A module applying `function` to its input with the arguments given when it was built."""

    function, arguments, layout = None, (), None

    def __init__(self, *args, **kwargs):
        super().__init__()
        names = type(self).arguments
        if len(args) > len(names) or any(key not in names for key in kwargs):
            raise TypeError(f"{type(self).__name__} takes the arguments {names}, got {args} {kwargs}")
        defaults = type(self).defaults
        values = dict(zip(names, defaults), **dict(zip(names, args)), **kwargs)
        for name in names:
            setattr(self, name, values[name])

    def forward(self, input):
        return type(self).function(input, *(getattr(self, name) for name in type(self).arguments))

    def extra_repr(self):  # PyTorch's: `layout` of the arguments, else each named, inplace when it is set
        if type(self).layout is not None:
            return type(self).layout.format(**vars(self))
        return ", ".join(f"{name}={getattr(self, name)}" for name in type(self).arguments
                         if name != "inplace" or self.inplace)


def _module(name, function, layout=None, **defaults):
    cls = type(name, (_Elementwise,), {"function": staticmethod(function), "arguments": tuple(defaults),
                                       "defaults": tuple(defaults.values()), "layout": layout,
                                       "__doc__": f"nn.functional.{function.__name__} as a module."})
    cls.__module__ = __name__
    return cls


SiLU = _module("SiLU", F.silu, inplace=False)
Mish = _module("Mish", F.mish, inplace=False)
ReLU6 = _module("ReLU6", F.relu6, inplace=False)
Hardtanh = _module("Hardtanh", F.hardtanh, min_val=-1.0, max_val=1.0, inplace=False)
Hardsigmoid = _module("Hardsigmoid", F.hardsigmoid, "", inplace=False)
Hardswish = _module("Hardswish", F.hardswish, "", inplace=False)
SELU = _module("SELU", F.selu, inplace=False)
CELU = _module("CELU", F.celu, alpha=1.0, inplace=False)
LogSigmoid = _module("LogSigmoid", F.logsigmoid)
Softmin = _module("Softmin", F.softmin, dim=None)
Softplus = _module("Softplus", F.softplus, beta=1.0, threshold=20.0)
Softsign = _module("Softsign", F.softsign)
Hardshrink = _module("Hardshrink", F.hardshrink, "{lambd}", lambd=0.5)
Softshrink = _module("Softshrink", F.softshrink, "{lambd}", lambd=0.5)
Tanhshrink = _module("Tanhshrink", F.tanhshrink)
Threshold = _module("Threshold", F.threshold, threshold=None, value=None, inplace=False)
GLU = _module("GLU", F.glu, dim=-1)


class PReLU(Module):
    """x where x > 0, else a x, with a learnable `weight` of num_parameters slopes (init 0.25)."""

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        super().__init__()
        if device not in (None, "cpu"):
            raise ValueError(f"symgrad runs on the CPU only, not on device {device!r}")
        self.num_parameters = num_parameters
        self.weight = Parameter(np.full(num_parameters, init, dtypes.canonical(dtype or dtypes.FLOAT64)))

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"
