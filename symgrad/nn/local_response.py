"""`F.local_response_norm`: x / (k + alpha * mean of x^2 over `size` neighbouring channels)^beta, the window
zero-padded as PyTorch's (size // 2 channels before, (size - 1) // 2 after, the mean always over `size`)."""
from __future__ import annotations

from .. import numpy_api as sgnp
from ..eager.tensor import apply_function, labelled


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    if input.ndim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {input.ndim} dimensions)")
    if min(input.shape) == 0:
        return input
    return labelled(apply_function(_local_response_norm, (input, int(size), float(alpha), float(beta), float(k)), {}),
                    "Div")


def _local_response_norm(x, size, alpha, beta, k):
    channels = x.shape[1]
    widths = [(0, 0)] * x.ndim
    widths[1] = (size // 2, (size - 1) // 2)
    squares = sgnp.pad(sgnp.multiply(x, x), widths)
    window = squares[:, 0:channels]
    for shift in range(1, size):
        window = sgnp.add(window, squares[:, shift:shift + channels])
    return sgnp.divide(x, sgnp.power(sgnp.add(sgnp.multiply(sgnp.divide(window, size), alpha), k), beta))
