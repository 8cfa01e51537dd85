"""Convolution and pooling layers with PyTorch's names, arguments and default initialization."""
from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from . import init
from .functional import (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d, adaptive_max_pool1d,
                         adaptive_max_pool2d, adaptive_max_pool3d, avg_pool1d, avg_pool2d,
                         avg_pool3d, conv1d, conv2d, conv3d, conv_transpose1d, lp_pool1d, lp_pool2d,
                         conv_transpose2d, conv_transpose3d, max_pool1d, max_pool2d, max_pool3d, max_unpool1d,
                         max_unpool2d, max_unpool3d, pad)
from .modules import Module
from .convolution import _sizes
from .parameter import Parameter


class _ConvNd(Module):
    """weight (out, in / groups, *kernel) and bias (out,), drawn as PyTorch's reset_parameters does:
    kaiming_uniform_(a=sqrt(5)), i.e. U(-1/sqrt(fan_in), 1/sqrt(fan_in)), for both."""

    d, function = None, None

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        super().__init__()
        if padding_mode not in ("zeros", "reflect", "replicate", "circular"):
            raise ValueError(f"padding_mode must be one of ['zeros', 'reflect', 'replicate', 'circular'], but got "
                             f"padding_mode='{padding_mode}'")
        if device not in (None, "cpu"):
            raise ValueError(f"symgrad runs on the CPU only, not on device {device!r}")
        if groups <= 0 or in_channels % groups or out_channels % groups:
            raise ValueError("in_channels and out_channels must be divisible by groups, a positive integer")
        if isinstance(padding, str) and padding not in ("same", "valid"):
            raise ValueError(f"Invalid padding string {padding!r}, should be one of ('valid', 'same')")
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size, self.stride = _sizes(kernel_size, self.d, "kernel_size"), _sizes(stride, self.d, "stride")
        self.padding = padding if isinstance(padding, str) else _sizes(padding, self.d, "padding")
        self.dilation, self.padding_mode = _sizes(dilation, self.d, "dilation"), padding_mode
        dtype = dtypes.canonical(dtype or dtypes.FLOAT64)
        self.weight = Parameter(np.empty(self._weight_shape(in_channels, out_channels, groups), dtype))
        self.register_parameter("bias", Parameter(np.empty(out_channels, dtype)) if bias else None)
        self.reset_parameters()

    def _weight_shape(self, in_channels, out_channels, groups):
        return (out_channels, in_channels // groups, *self.kernel_size)

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        if self.padding_mode == "zeros":
            return type(self).function(input, self.weight, self.bias, self.stride, self.padding, self.dilation,
                                       self.groups)
        return type(self).function(pad(input, self._mode_padding(), mode=self.padding_mode), self.weight, self.bias,
                                   self.stride, 0, self.dilation, self.groups)

    def _mode_padding(self):
        """F.pad's widths (last dimension first) for padding_mode: PyTorch's, 'same' putting the odd one right."""
        if self.padding == "valid":
            return (0,) * 2 * self.d
        if self.padding == "same":
            totals = [dl * (k - 1) for dl, k in zip(self.dilation, self.kernel_size)]
            return tuple(w for total in reversed(totals) for w in (total // 2, total - total // 2))
        return tuple(w for p in reversed(self.padding) for w in (p, p))

    def extra_repr(self):
        text = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * self.d:
            text += f", padding={self.padding!r}"
        if self.dilation != (1,) * self.d:
            text += f", dilation={self.dilation}"
        if self.groups != 1:
            text += f", groups={self.groups}"
        text += ", bias=False" if self.bias is None else ""
        return text + (f", padding_mode={self.padding_mode}" if self.padding_mode != "zeros" else "")


class Conv1d(_ConvNd):
    d, function = 1, staticmethod(conv1d)


class Conv2d(_ConvNd):
    d, function = 2, staticmethod(conv2d)


class Conv3d(_ConvNd):
    d, function = 3, staticmethod(conv3d)


class _ConvTransposeNd(_ConvNd):
    """weight (in, out / groups, *kernel), drawn as _ConvNd's (PyTorch's fan_in is then out / groups * kernel).
    forward(input, output_size) picks the output_padding giving that size, as PyTorch."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        if isinstance(padding, str):
            raise ValueError(f"padding={padding!r}: transposed convolutions take int padding only")
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, device, dtype)
        self.output_padding = _sizes(output_padding, self.d, "output_padding")

    def _weight_shape(self, in_channels, out_channels, groups):
        return (in_channels, out_channels // groups, *self.kernel_size)

    def forward(self, input, output_size=None):
        output_padding = self.output_padding if output_size is None else self._output_padding(input, output_size)
        return type(self).function(input, self.weight, self.bias, self.stride, self.padding, output_padding,
                                   self.groups, self.dilation)

    def _output_padding(self, input, output_size):
        sizes = tuple(output_size)[-self.d:]
        if len(sizes) != self.d:
            raise ValueError(f"output_size must have {self.d} or {self.d + 2} elements, got {tuple(output_size)}")
        smallest = tuple((n - 1) * s - 2 * p + dl * (k - 1) + 1 for n, s, p, dl, k in zip(
            input.shape[-self.d:], self.stride, self.padding, self.dilation, self.kernel_size))
        extras = tuple(int(want) - low for want, low in zip(sizes, smallest))
        if any(e < 0 or (e >= s and e >= dl) for e, s, dl in zip(extras, self.stride, self.dilation)):
            raise ValueError(f"requested an output size of {sizes}, but valid sizes range from {smallest} to "
                             f"{tuple(low + max(s, dl) - 1 for low, s, dl in zip(smallest, self.stride, self.dilation))}"
                             f" (for an input of {tuple(input.shape[-self.d:])})")
        return extras

    def extra_repr(self):
        text = super().extra_repr()
        if self.output_padding != (0,) * self.d:
            text += f", output_padding={self.output_padding}"
        return text


class ConvTranspose1d(_ConvTransposeNd):
    d, function = 1, staticmethod(conv_transpose1d)


class ConvTranspose2d(_ConvTransposeNd):
    d, function = 2, staticmethod(conv_transpose2d)


class ConvTranspose3d(_ConvTransposeNd):
    d, function = 3, staticmethod(conv_transpose3d)


class _MaxPoolNd(Module):
    function = None

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
        super().__init__()
        self.kernel_size, self.stride = kernel_size, stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, input):
        return type(self).function(input, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode,
                                   self.return_indices)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    function = staticmethod(max_pool1d)


class MaxPool2d(_MaxPoolNd):
    function = staticmethod(max_pool2d)


class MaxPool3d(_MaxPoolNd):
    function = staticmethod(max_pool3d)


class _MaxUnpoolNd(Module):
    """F.max_unpool{d}d: the inverse of a MaxPool{d}d(return_indices=True) given its indices."""

    function = None

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        self.kernel_size, self.stride = kernel_size, stride if stride is not None else kernel_size
        self.padding = padding

    def forward(self, input, indices, output_size=None):
        return type(self).function(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self):  # PyTorch's: each size as d ints
        return ", ".join(f"{name}={_sizes(getattr(self, name), self.d, name)}"
                         for name in ("kernel_size", "stride", "padding"))


class MaxUnpool1d(_MaxUnpoolNd):
    d, function = 1, staticmethod(max_unpool1d)


class MaxUnpool2d(_MaxUnpoolNd):
    d, function = 2, staticmethod(max_unpool2d)


class MaxUnpool3d(_MaxUnpoolNd):
    d, function = 3, staticmethod(max_unpool3d)


class AvgPool1d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
        super().__init__()
        self.kernel_size, self.stride = kernel_size, stride if stride is not None else kernel_size
        self.padding, self.ceil_mode, self.count_include_pad = padding, ceil_mode, count_include_pad

    def forward(self, input):
        return avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode, self.count_include_pad)

    def extra_repr(self):  # PyTorch's: AvgPool1d shows each size as a 1-tuple, AvgPool2d/3d as given
        shown = (lambda value: _sizes(value, 1, "size")) if type(self) is AvgPool1d else (lambda value: value)
        return f"kernel_size={shown(self.kernel_size)}, stride={shown(self.stride)}, padding={shown(self.padding)}"


class AvgPool2d(AvgPool1d):
    function = staticmethod(avg_pool2d)

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        super().__init__(kernel_size, stride, padding, ceil_mode, count_include_pad)
        self.divisor_override = divisor_override

    def forward(self, input):
        return type(self).function(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                                   self.count_include_pad, self.divisor_override)


class AvgPool3d(AvgPool2d):
    function = staticmethod(avg_pool3d)


class LPPool1d(Module):
    """F.lp_pool1d as a layer: (sum of x**norm_type over each window)**(1/norm_type)."""

    function = staticmethod(lp_pool1d)

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type, self.kernel_size, self.stride, self.ceil_mode = norm_type, kernel_size, stride, ceil_mode

    def forward(self, input):
        return type(self).function(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)

    def extra_repr(self):
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, "
                f"ceil_mode={self.ceil_mode}")


class LPPool2d(LPPool1d):
    function = staticmethod(lp_pool2d)


class AdaptiveAvgPool1d(Module):
    function = staticmethod(adaptive_avg_pool1d)

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return type(self).function(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(AdaptiveAvgPool1d):
    function = staticmethod(adaptive_max_pool1d)

    def __init__(self, output_size, return_indices=False):
        super().__init__(output_size)
        self.return_indices = return_indices

    def forward(self, input):
        return type(self).function(input, self.output_size, self.return_indices)


class AdaptiveMaxPool2d(AdaptiveMaxPool1d):
    function = staticmethod(adaptive_max_pool2d)


class AdaptiveMaxPool3d(AdaptiveMaxPool1d):
    function = staticmethod(adaptive_max_pool3d)


class AdaptiveAvgPool2d(AdaptiveAvgPool1d):
    function = staticmethod(adaptive_avg_pool2d)


class AdaptiveAvgPool3d(AdaptiveAvgPool1d):
    function = staticmethod(adaptive_avg_pool3d)
