"""`nn.init`: PyTorch's initializers, filling a tensor in place (under no_grad) from sg.manual_seed's
generator, with PyTorch's gains and fan rules. NumPy's generator does not draw PyTorch's numbers."""
from __future__ import annotations

import math

import numpy as np

from ..eager.mode import no_grad
from ..eager.tensor import random_generator

_LINEAR = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
           "sigmoid")


def calculate_gain(nonlinearity, param=None):
    """The recommended gain for a nonlinearity (PyTorch's table)."""
    if nonlinearity in _LINEAR:
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        if isinstance(slope, bool) or not isinstance(slope, (int, float)):
            raise ValueError(f"negative_slope {slope} not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor):
    """fan_in = size(1) * receptive field, fan_out = size(0) * receptive field (a conv weight's kernel)."""
    if tensor.ndim < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _fan(tensor, mode):
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def _fill(tensor, values):
    with no_grad():
        tensor.copy_(np.asarray(values, dtype=tensor.dtype).reshape(tuple(tensor.shape)))
    return tensor


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    return _fill(tensor, (generator or random_generator()).uniform(a, b, tuple(tensor.shape)))


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    return _fill(tensor, (generator or random_generator()).normal(mean, std, tuple(tensor.shape)))


def constant_(tensor, val):
    return _fill(tensor, np.full(tuple(tensor.shape), val))


def zeros_(tensor):
    return constant_(tensor, 0)


def ones_(tensor):
    return constant_(tensor, 1)


def xavier_uniform_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    bound = math.sqrt(3.0) * gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def _kaiming_std(tensor, a, mode, nonlinearity):
    if 0 in tuple(tensor.shape):
        return None
    return calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode))


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    return tensor if std is None else uniform_(tensor, -math.sqrt(3.0) * std, math.sqrt(3.0) * std, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    return tensor if std is None else normal_(tensor, 0.0, std, generator)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Normal(mean, std) values restricted to [a, b], drawn as PyTorch draws them: normal draws redrawn where they
    fall outside when [a, b] holds most of the mass, else uniform draws on [a, b] kept with probability
    pdf / pdf at the mode (either way exactly the truncated distribution)."""
    rng = generator or random_generator()
    shape = tuple(tensor.shape)
    mass = _normal_cdf((b - mean) / std) - _normal_cdf((a - mean) / std)
    if mass > 0.3:
        values = rng.normal(mean, std, shape)
        outside = (values < a) | (values > b)
        while outside.any():
            values[outside] = rng.normal(mean, std, int(outside.sum()))
            outside = (values < a) | (values > b)
        return _fill(tensor, values)
    log_peak = -0.5 * ((max(a, min(mean, b)) - mean) / std) ** 2
    values, pending = np.empty(shape), np.ones(shape, bool)
    while pending.any():
        proposals = rng.uniform(a, b, int(pending.sum()))
        kept = np.log(rng.uniform(size=proposals.size)) <= -0.5 * ((proposals - mean) / std) ** 2 - log_peak
        chosen = np.flatnonzero(pending)[kept]
        values.flat[chosen] = proposals[kept]
        pending.flat[chosen] = False
    return _fill(tensor, values)


def _normal_cdf(x):
    return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0


def orthogonal_(tensor, gain=1.0, generator=None):
    """A (semi-)orthogonal matrix (the trailing dimensions flattened) times gain: Q of the QR factorization of a
    normal matrix, its columns' signs made those of R's diagonal, so it is uniform over orthogonal matrices."""
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flattened = (generator or random_generator()).normal(0.0, 1.0, (rows, cols))
    if rows < cols:
        flattened = flattened.T
    q, r = np.linalg.qr(flattened)
    q = q * np.sign(np.diag(r))
    return _fill(tensor, (q.T if rows < cols else q) * gain)


def eye_(tensor):
    """The identity matrix (ones on the main diagonal of a 2-d tensor, zeros elsewhere)."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    return _fill(tensor, np.eye(*tuple(tensor.shape)))


def dirac_(tensor, groups=1):
    """A convolution weight (3, 4 or 5 dimensions) that passes its input through: a 1 at the kernel's centre
    for output channel g * out_per_group + d and input channel d, zeros elsewhere."""
    if tensor.ndim not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    shape = tuple(tensor.shape)
    if shape[0] % groups:
        raise ValueError("dim 0 must be divisible by groups")
    per_group = shape[0] // groups
    values = np.zeros(shape)
    centre = tuple(size // 2 for size in shape[2:])
    for g in range(groups):
        for d in range(min(per_group, shape[1])):
            values[(g * per_group + d, d) + centre] = 1
    return _fill(tensor, values)


def sparse_(tensor, sparsity, std=0.01, generator=None):
    """Normal(0, std) values with ceil(sparsity * rows) of each column's entries, chosen at random, zero."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rng = generator or random_generator()
    rows, cols = tuple(tensor.shape)
    values = rng.normal(0.0, std, (rows, cols))
    zeros = math.ceil(sparsity * rows)
    for column in range(cols):
        values[rng.permutation(rows)[:zeros], column] = 0.0
    return _fill(tensor, values)
