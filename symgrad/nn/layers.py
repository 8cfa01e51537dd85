"""More layers with PyTorch's names: the activations GELU, LeakyReLU and ELU, Dropout, Embedding, the padding
layers and Upsample."""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..eager.tensor import Tensor, random_generator
from ..eager.torch_methods import unflatten
from .convolution import _sizes
from . import functional as F
from .functional import dropout, elu, embedding, gelu, interpolate, leaky_relu, pad
from .modules import Module
from .parameter import Parameter


class GELU(Module):
    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return gelu(input, self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class LeakyReLU(Module):
    def __init__(self, negative_slope=0.01, inplace=False):
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input):
        return leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace else "")


class ELU(Module):
    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input):
        return elu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class Dropout(Module):
    """Zeroes elements with probability p while training (sg.manual_seed's generator); the identity in eval."""

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if not 0 <= p <= 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input):
        return dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class AlphaDropout(Dropout):
    """F.alpha_dropout while training (SELU networks' dropout, keeping mean and variance); the identity in eval."""

    def forward(self, input):
        return F.alpha_dropout(input, self.p, self.training, self.inplace)


class FeatureAlphaDropout(Dropout):
    """F.feature_alpha_dropout while training (whole channels); the identity in eval."""

    def forward(self, input):
        return F.feature_alpha_dropout(input, self.p, self.training, self.inplace)


class RReLU(Module):
    """F.rrelu: random negative slopes in [lower, upper] while training, their mean in eval."""

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return f"lower={self.lower}, upper={self.upper}" + (", inplace=True" if self.inplace else "")


def _padding_index(padding_idx, num_embeddings):
    """padding_idx made non-negative (None stays None); PyTorch's error when it is out of range."""
    if padding_idx is None:
        return None
    if not -num_embeddings <= padding_idx < num_embeddings:
        raise AssertionError("Padding_idx must be within num_embeddings")
    return padding_idx % num_embeddings


def _table(num_embeddings, embedding_dim, padding_idx, weight, dtype):
    """An embedding table: the given weight (a tensor as it is: its Parameter shares its memory, as PyTorch's), else
    N(0, 1) draws with the padding row zero."""
    if weight is not None:
        return weight if isinstance(weight, Tensor) else np.asarray(weight)
    table = random_generator().standard_normal((num_embeddings, embedding_dim))
    if padding_idx is not None:
        table[padding_idx] = 0
    return table.astype(dtypes.canonical(dtype or dtypes.FLOAT64))


class Embedding(Module):
    """A table of num_embeddings vectors, N(0, 1) initially (the padding_idx row zero, and it gets no gradient)."""

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, sparse=False, _weight=None, _freeze=False, device=None, dtype=None):
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.padding_idx = _padding_index(padding_idx, num_embeddings)
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        self.weight = Parameter(_table(num_embeddings, embedding_dim, self.padding_idx, _weight, dtype),
                                requires_grad=not _freeze)

    def forward(self, input):
        return embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type, self.scale_grad_by_freq,
                         self.sparse)

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, padding_idx=None, max_norm=None, norm_type=2.0,
                        scale_grad_by_freq=False, sparse=False):
        """An Embedding of the 2-d `embeddings` (frozen unless freeze=False): a tensor's memory is its weight's, as
        PyTorch's (training it writes the tensor); an array is copied."""
        if embeddings.ndim != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, columns = embeddings.shape
        return cls(rows, columns, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse,
                   _weight=embeddings if isinstance(embeddings, Tensor) else np.array(embeddings), _freeze=freeze)

    def extra_repr(self):
        return f"{self.num_embeddings}, {self.embedding_dim}" + (
            f", padding_idx={self.padding_idx}" if self.padding_idx is not None else "") + (
            f", max_norm={self.max_norm}" if self.max_norm is not None else "") + (
            f", norm_type={self.norm_type}" if self.norm_type != 2 else "") + (
            ", scale_grad_by_freq=True" if self.scale_grad_by_freq else "") + (", sparse=True" if self.sparse else "")


class _PadNd(Module):
    """F.pad with a fixed mode: `padding` an int (every side) or 2 * d ints (left, right, top, bottom, ...)."""

    d, mode = None, None

    def __init__(self, padding, value=0.0):
        super().__init__()
        self.padding = _sizes(padding, 2 * self.d, "padding")
        self.value = value

    def forward(self, input):
        return pad(input, self.padding, self.mode, self.value if self.mode == "constant" else None)

    def extra_repr(self):
        return f"{self.padding}" if self.mode != "constant" else f"padding={self.padding}, value={self.value}"


def _pad_class(name, d, mode):
    return type(name, (_PadNd,), {"d": d, "mode": mode, "__doc__": f"F.pad(input, padding, {mode!r}) on the last "
                                                                  f"{d} dimension{'s' if d > 1 else ''}."})


ConstantPad1d, ConstantPad2d = _pad_class("ConstantPad1d", 1, "constant"), _pad_class("ConstantPad2d", 2, "constant")
ReflectionPad1d, ReflectionPad2d = _pad_class("ReflectionPad1d", 1, "reflect"), \
    _pad_class("ReflectionPad2d", 2, "reflect")
ReplicationPad1d, ReplicationPad2d = _pad_class("ReplicationPad1d", 1, "replicate"), \
    _pad_class("ReplicationPad2d", 2, "replicate")
CircularPad1d, CircularPad2d = _pad_class("CircularPad1d", 1, "circular"), _pad_class("CircularPad2d", 2, "circular")
ConstantPad3d, ReflectionPad3d = _pad_class("ConstantPad3d", 3, "constant"), _pad_class("ReflectionPad3d", 3, "reflect")
ReplicationPad3d, CircularPad3d = _pad_class("ReplicationPad3d", 3, "replicate"), \
    _pad_class("CircularPad3d", 3, "circular")
for _padding_class in (ConstantPad1d, ConstantPad2d, ReflectionPad1d, ReflectionPad2d, ReplicationPad1d,
                       ReplicationPad2d, CircularPad1d, CircularPad2d, ConstantPad3d, ReflectionPad3d,
                       ReplicationPad3d, CircularPad3d):
    _padding_class.__module__ = __name__


class _ZeroPad(_PadNd):
    mode = "constant"

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad1d(_ZeroPad):
    d = 1


class ZeroPad2d(_ZeroPad):
    d = 2


class ZeroPad3d(_ZeroPad):
    d = 3


class Upsample(Module):
    """F.interpolate with fixed arguments."""

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None,
                 recompute_scale_factor=None):
        super().__init__()
        self.size, self.scale_factor, self.mode = size, scale_factor, mode
        self.align_corners, self.recompute_scale_factor = align_corners, recompute_scale_factor

    def forward(self, input):
        return interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                           self.recompute_scale_factor)

    def extra_repr(self):
        return (f"size={self.size}" if self.scale_factor is None else f"scale_factor={float(self.scale_factor)}") + \
            f", mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, "nearest")


class UpsamplingBilinear2d(Upsample):
    """Bilinear with align_corners=True, as PyTorch's."""

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, "bilinear", align_corners=True)


class Unflatten(Module):
    """Dimension `dim` reshaped to `unflattened_size` (one size may be -1)."""

    def __init__(self, dim, unflattened_size):
        super().__init__()
        self.dim, self.unflattened_size = dim, tuple(unflattened_size)

    def forward(self, input):
        return unflatten(input, self.dim, self.unflattened_size)  # Tensor.unflatten, on a traced array too

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


class _ChannelDropout(Dropout):
    function = None

    def forward(self, input):
        return type(self).function(input, self.p, self.training, self.inplace)


class Dropout1d(_ChannelDropout):
    function = staticmethod(F.dropout1d)


class Dropout2d(_ChannelDropout):
    function = staticmethod(F.dropout2d)


class Dropout3d(_ChannelDropout):
    function = staticmethod(F.dropout3d)


class CosineSimilarity(Module):
    def __init__(self, dim=1, eps=1e-8):
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1, x2):
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    def __init__(self, p=2.0, eps=1e-6, keepdim=False):
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1, x2):
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class _PixelRearrange(Module):
    """F.pixel_shuffle or F.pixel_unshuffle with a fixed factor, kept under PyTorch's attribute name."""

    function, factor = None, None

    def __init__(self, factor):
        super().__init__()
        setattr(self, type(self).factor, factor)

    def forward(self, input):
        return type(self).function(input, getattr(self, type(self).factor))

    def extra_repr(self):
        return f"{type(self).factor}={getattr(self, type(self).factor)}"


class PixelShuffle(_PixelRearrange):
    function, factor = staticmethod(F.pixel_shuffle), "upscale_factor"


class PixelUnshuffle(_PixelRearrange):
    function, factor = staticmethod(F.pixel_unshuffle), "downscale_factor"


class Softmax2d(Module):
    """Softmax over the channels (dim -3) of a (N, C, H, W) or (C, H, W) input."""

    def forward(self, input):
        if input.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected input of 3 or 4 dimensions, got shape {tuple(input.shape)}")
        return F.softmax(input, -3)


class Bilinear(Module):
    """y = x1^T A_o x2 + b_o per output o: weight (out, in1, in2) and bias U(-1/sqrt(in1), 1/sqrt(in1)) as PyTorch."""

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in1_features, self.in2_features, self.out_features = in1_features, in2_features, out_features
        bound = 1 / np.sqrt(in1_features) if in1_features > 0 else 0
        dtype = dtypes.canonical(dtype or dtypes.FLOAT64)
        uniform = random_generator().uniform
        self.weight = Parameter(uniform(-bound, bound, (out_features, in1_features, in2_features)).astype(dtype))
        self.register_parameter("bias", Parameter(uniform(-bound, bound, out_features).astype(dtype)) if bias
                                else None)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


class EmbeddingBag(Module):
    """A table of num_embeddings vectors, N(0, 1) initially, read by F.embedding_bag (mode sum, mean or max)."""

    def __init__(self, num_embeddings, embedding_dim, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
                 mode="mean", sparse=False, _weight=None, include_last_offset=False, padding_idx=None, device=None,
                 dtype=None):
        super().__init__()
        self.num_embeddings, self.embedding_dim, self.mode = num_embeddings, embedding_dim, mode
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        self.include_last_offset = include_last_offset
        self.padding_idx = _padding_index(padding_idx, num_embeddings)
        self.weight = Parameter(_table(num_embeddings, embedding_dim, self.padding_idx, _weight, dtype))

    def forward(self, input, offsets=None, per_sample_weights=None):
        return F.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type, self.scale_grad_by_freq,
                               self.mode, self.sparse, per_sample_weights, self.include_last_offset, self.padding_idx)

    def extra_repr(self):
        return f"{self.num_embeddings}, {self.embedding_dim}" + (
            f", max_norm={self.max_norm}" if self.max_norm is not None else "") + (
            f", norm_type={self.norm_type}" if self.norm_type != 2 else "") + (
            ", scale_grad_by_freq=True" if self.scale_grad_by_freq else "") + f", mode={self.mode!r}" + (
            f", padding_idx={self.padding_idx}" if self.padding_idx is not None else "")


class _Window(Module):
    """Fold and Unfold: PyTorch's window arguments, kept as given."""

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size, self.dilation, self.padding, self.stride = kernel_size, dilation, padding, stride

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, padding={self.padding}, "
                f"stride={self.stride}")


class Unfold(_Window):
    def forward(self, input):
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)


class Fold(_Window):
    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__(kernel_size, dilation, padding, stride)
        self.output_size = output_size

    def forward(self, input):
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return f"output_size={self.output_size}, " + super().extra_repr()
