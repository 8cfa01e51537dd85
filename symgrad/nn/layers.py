"""More layers with PyTorch's names: the activations GELU, LeakyReLU and ELU, Dropout, Embedding."""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..eager.tensor import Tensor, random_generator
from .functional import dropout, elu, embedding, gelu, leaky_relu
from .modules import Module
from .parameter import Parameter


class GELU(Module):
    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return gelu(input, self.approximate)


class LeakyReLU(Module):
    def __init__(self, negative_slope=0.01, inplace=False):
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input):
        return leaky_relu(input, self.negative_slope, self.inplace)


class ELU(Module):
    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input):
        return elu(input, self.alpha, self.inplace)


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


class Embedding(Module):
    """A table of num_embeddings vectors, N(0, 1) initially (the padding_idx row zero, and it gets no gradient)."""

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, sparse=False, _weight=None, _freeze=False, device=None, dtype=None):
        super().__init__()
        if padding_idx is not None and not -num_embeddings <= padding_idx < num_embeddings:
            raise AssertionError("Padding_idx must be within num_embeddings")
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.padding_idx = padding_idx % num_embeddings if padding_idx is not None and padding_idx < 0 else padding_idx
        self.max_norm, self.scale_grad_by_freq, self.sparse = max_norm, scale_grad_by_freq, sparse
        if _weight is None:
            weight = random_generator().standard_normal((num_embeddings, embedding_dim))
            if self.padding_idx is not None:
                weight[self.padding_idx] = 0
            weight = weight.astype(dtypes.canonical(dtype or dtypes.FLOAT64))
        else:
            weight = np.asarray(_weight._data if isinstance(_weight, Tensor) else _weight)
        self.weight = Parameter(weight, requires_grad=not _freeze)

    def forward(self, input):
        return embedding(input, self.weight, self.padding_idx, self.max_norm, 2.0, self.scale_grad_by_freq, self.sparse)

    def extra_repr(self):
        return f"{self.num_embeddings}, {self.embedding_dim}" + (
            f", padding_idx={self.padding_idx}" if self.padding_idx is not None else "")
