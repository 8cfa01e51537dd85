"""clip_grad_norm_ and clip_grad_value_: scale or clamp the parameters' gradients in place, as PyTorch's."""
from __future__ import annotations

import numpy as np

from ...eager.mode import no_grad
from ...eager.tensor import Tensor


def _gradients(parameters) -> list:
    parameters = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    return [p.grad for p in parameters if p.grad is not None]


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Scale the gradients by min(1, max_norm / (total norm + 1e-6)), the total norm being the norm_type-norm
    of all of them together; returns that total norm (a 0-d tensor)."""
    grads = _gradients(parameters)
    if not grads:
        return Tensor._wrap(np.zeros(()))
    norm_type = float(norm_type)
    arrays = [g._data.reshape(-1) for g in grads]  # (read here only: not handed to NumPy's users)
    if norm_type == np.inf:
        total = max(float(np.abs(a).max(initial=0.0)) for a in arrays)
    else:
        total = float(_norm(np.asarray([_norm(a, norm_type) for a in arrays]), norm_type))
    if error_if_nonfinite and not np.isfinite(total):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so "
                           "it cannot be clipped. To disable this error and scale the gradients by the non-finite "
                           "norm anyway, set `error_if_nonfinite=False`")
    scale = min(float(max_norm) / (total + 1e-6), 1.0)
    with no_grad():
        for g in grads:
            g.mul_(scale)
    return Tensor._wrap(np.asarray(total, grads[0].dtype))


def _norm(vector, norm_type):
    """np.linalg.norm(vector, norm_type) of a 1-d array; the 2-norm as that function computes it, sqrt(dot), without
    its Python (a dozen gradients a step)."""
    if norm_type == 2.0 and vector.dtype.kind == "f":
        return np.sqrt(vector.dot(vector))
    return np.linalg.norm(vector, norm_type)


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every gradient element to [-clip_value, clip_value]."""
    with no_grad():
        for g in _gradients(parameters):
            g.clamp_(-float(clip_value), float(clip_value))
