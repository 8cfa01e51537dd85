"""BatchNorm, InstanceNorm, GroupNorm and LayerNorm with PyTorch's running statistics, momentum and affine options;
LocalResponseNorm."""
from __future__ import annotations

import numpy as np

from .. import dtypes
from .. import numpy_api as sgnp
from ..eager.mode import no_grad
from ..eager.tensor import Tensor
from .functional import batch_norm, group_norm, instance_norm, layer_norm, local_response_norm, rms_norm
from .modules import Module
from .parameter import Parameter


class _BatchNorm(Module):
    """Per-channel normalization of (N, C, ...): batch statistics while training (updating running_mean and
    the unbiased running_var with `momentum`, or their cumulative average when momentum is None), the running
    statistics in eval mode (batch statistics again when track_running_stats is False)."""

    dims = ()

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None,
                 dtype=None, *, bias=True):
        super().__init__()
        if device not in (None, "cpu"):
            raise ValueError(f"symgrad runs on the CPU only, not on device {device!r}")
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        dtype = dtypes.canonical(dtype or dtypes.FLOAT64)
        self.register_parameter("weight", Parameter(np.ones(num_features, dtype)) if affine else None)
        self.register_parameter("bias", Parameter(np.zeros(num_features, dtype)) if affine and bias else None)
        if track_running_stats:
            self.register_buffer("running_mean", Tensor._wrap(np.zeros(num_features, dtype)))
            self.register_buffer("running_var", Tensor._wrap(np.ones(num_features, dtype)))
            self.register_buffer("num_batches_tracked", Tensor._wrap(np.zeros((), np.int64)))
        else:
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                self.register_buffer(name, None)

    def reset_running_stats(self):
        if self.track_running_stats:
            with no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1)
                self.num_batches_tracked.zero_()

    def forward(self, input):
        if input.ndim not in self.dims:
            raise ValueError(f"expected {' or '.join(f'{d}D' for d in self.dims)} input (got {input.ndim}D input)")
        if input.shape[1] != self.num_features:
            raise ValueError(f"{type(self).__name__}: input of shape {tuple(input.shape)} has {input.shape[1]} "
                             f"channels, expected num_features={self.num_features}")
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            with no_grad():
                self.num_batches_tracked.add_(1)
            if self.momentum is None:
                factor = 1.0 / float(self.num_batches_tracked.item())
        use_batch = self.training or self.running_mean is None
        tracked = not self.training or self.track_running_stats
        return batch_norm(input, self.running_mean if tracked else None, self.running_var if tracked else None,
                          self.weight, self.bias, use_batch, factor, self.eps)

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    dims = (4,)


class BatchNorm3d(_BatchNorm):
    dims = (5,)


class _TrailingNorm(Module):
    """A normalization over the trailing normalized_shape with a weight (ones) of that shape, and a bias (zeros)
    unless `bias` is None (RMSNorm has none), each None without elementwise_affine: what LayerNorm and RMSNorm
    share."""

    def __init__(self, normalized_shape, eps, elementwise_affine, dtype, bias=None):
        super().__init__()
        self.normalized_shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        dtype = dtypes.canonical(dtype or dtypes.FLOAT64)
        self.register_parameter("weight", Parameter(np.ones(self.normalized_shape, dtype))
                                if elementwise_affine else None)
        if bias is not None:
            self.register_parameter("bias", Parameter(np.zeros(self.normalized_shape, dtype))
                                    if elementwise_affine and bias else None)

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class LayerNorm(_TrailingNorm):
    """Normalization over the trailing normalized_shape, with a weight (ones) and bias (zeros) of that shape."""

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, device=None, dtype=None):
        super().__init__(normalized_shape, eps, elementwise_affine, dtype, bool(bias))

    def extra_repr(self):
        return super().extra_repr() + f", bias={self.bias is not None}"

    def forward(self, input):
        return layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)


class _InstanceNorm(_BatchNorm):
    """Each example's channels normalized over their spatial axes; by default no affine and no running
    statistics (PyTorch's defaults). An unbatched (C, *spatial) input is taken as a batch of one."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False, device=None,
                 dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)

    def forward(self, input):
        if input.ndim not in (self.dims[0] - 1, self.dims[0]):
            raise ValueError(f"expected {self.dims[0] - 1}D or {self.dims[0]}D input (got {input.ndim}D input)")
        unbatched = input.ndim == self.dims[0] - 1
        batched = sgnp.expand_dims(input, 0) if unbatched else input
        if batched.shape[1] != self.num_features:
            raise ValueError(f"{type(self).__name__}: input of shape {tuple(input.shape)} has {batched.shape[1]} "
                             f"channels, expected num_features={self.num_features}")
        out = instance_norm(batched, self.running_mean, self.running_var, self.weight, self.bias,
                            self.training or not self.track_running_stats,
                            0.1 if self.momentum is None else self.momentum, self.eps)
        return sgnp.squeeze(out, 0) if unbatched else out


class InstanceNorm1d(_InstanceNorm):
    dims = (3,)


class InstanceNorm2d(_InstanceNorm):
    dims = (4,)


class InstanceNorm3d(_InstanceNorm):
    dims = (5,)


class GroupNorm(Module):
    """group_norm over num_groups groups of channels, with a per-channel weight (ones) and bias (zeros)."""

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None, *, bias=True):
        super().__init__()
        if num_channels % num_groups:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups, self.num_channels, self.eps, self.affine = num_groups, num_channels, eps, affine
        dtype = dtypes.canonical(dtype or dtypes.FLOAT64)
        self.register_parameter("weight", Parameter(np.ones(num_channels, dtype)) if affine else None)
        self.register_parameter("bias", Parameter(np.zeros(num_channels, dtype)) if affine and bias else None)

    def forward(self, input):
        return group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class RMSNorm(_TrailingNorm):
    """Root-mean-square normalization over the trailing normalized_shape, with a weight (ones); eps None is the
    input dtype's machine epsilon."""

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None):
        super().__init__(normalized_shape, eps, elementwise_affine, dtype)

    def forward(self, input):
        return rms_norm(input, self.normalized_shape, self.weight, self.eps)


class LocalResponseNorm(Module):
    """F.local_response_norm over `size` neighbouring channels (no parameters)."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
