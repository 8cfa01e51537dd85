"""`nn.utils.parametrizations.weight_norm`, PyTorch's: weight = g v / ||v||, the norm over every dimension but
`dim`, with g (original0) and v (original1) the parameters, through nn.utils.parametrize."""
from __future__ import annotations

from ... import numpy_api as sgnp
from ..modules import Module
from . import parametrize


def _norm_except(v, dim):
    """The 2-norm of v over every axis but `dim` (kept as size 1 there), PyTorch's norm_except_dim; of all axes, 0-d,
    when dim is None or -1 (PyTorch's convention: -1 is not the last axis there)."""
    if dim is None or dim == -1:
        return sgnp.sqrt(sgnp.sum(v * v))
    axes = tuple(a for a in range(v.ndim) if a != dim % v.ndim)
    return sgnp.sqrt(sgnp.sum(v * v, axis=axes, keepdims=True))


class _WeightNorm(Module):
    def __init__(self, dim=0):
        super().__init__()
        self.dim = dim

    def forward(self, weight_g, weight_v):
        return weight_v * (weight_g / _norm_except(weight_v, self.dim))

    def right_inverse(self, weight):
        return _norm_except(weight, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    """Reparametrize module.<name> by its magnitude g and direction v (Salimans and Kingma's weight normalization)."""
    return parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
