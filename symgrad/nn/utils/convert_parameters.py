"""parameters_to_vector and vector_to_parameters, as PyTorch's."""
from __future__ import annotations

from ... import numpy_api as sgnp
from ...eager.mode import no_grad


def parameters_to_vector(parameters):
    """The parameters flattened and concatenated (differentiable)."""
    return sgnp.concatenate([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec, parameters):
    """Copy consecutive slices of vec into the parameters' data."""
    if vec.ndim != 1:
        raise TypeError(f"expected a 1-d vector, got shape {tuple(vec.shape)}")
    start = 0
    with no_grad():
        for p in parameters:
            p.copy_(vec[start:start + p.numel()].reshape(tuple(p.shape)))
            start += p.numel()
    if start != vec.shape[0]:
        raise ValueError(f"vector of {vec.shape[0]} elements for parameters of {start} elements")
