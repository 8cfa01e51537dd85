"""`sg.nn.functional`: PyTorch's functional layer and loss names, written with sg.* ops on tensors.

Elementwise steps go through the tensors' cached elementwise plans (they work on arrays too).
"""
from __future__ import annotations

import numpy as np

from .. import numpy_api as sgnp
from ..ops import elementwise as E
from ..ops.indexing import take_p
from ..eager.function import Function
from ..eager.tensor import Tensor, elementwise_on_tensors, labelled


def _ew(op, args):
    return elementwise_on_tensors(op, args)


def relu(input):
    return _ew(E.relu, (input,))


def sigmoid(input):
    return _ew(E.sigmoid, (input,))


def tanh(input):
    return _ew(E.tanh, (input,))


def _softmax_dim(ndim: int) -> int:
    """PyTorch's choice when no dim is given: 0 for 0-, 1- and 3-d inputs, else 1."""
    return 0 if ndim in (0, 1, 3) else 1


def _shifted(input, dim):
    """input minus its (gradient-free) max along dim: log_softmax is invariant to the shift."""
    data = np.asarray(input._data if hasattr(input, "_data") else input)
    peak = np.max(data, axis=dim, keepdims=True)
    return _ew(E.subtract, (input, np.where(np.isfinite(peak), peak, 0).astype(data.dtype)))


def softmax(input, dim=None):
    dim = _softmax_dim(input.ndim) if dim is None else dim
    exp = _ew(E.exp, (_shifted(input, dim),))
    return labelled(_ew(E.divide, (exp, sgnp.sum(exp, dim, keepdims=True))), "Softmax")


def log_softmax(input, dim=None):
    dim = _softmax_dim(input.ndim) if dim is None else dim
    shifted = _shifted(input, dim)
    total = sgnp.sum(_ew(E.exp, (shifted,)), dim, keepdims=True)
    return labelled(_ew(E.subtract, (shifted, _ew(E.log, (total,)))), "LogSoftmax")


def linear(input, weight, bias=None):
    """input @ weight.T + bias (weight has shape (out_features, in_features))."""
    out = sgnp.matmul(input, sgnp.transpose(weight))
    return out if bias is None else labelled(_ew(E.add, (out, bias)), "Addmm")


def _reduce(loss, reduction: str):
    if reduction == "mean":
        return _ew(E.divide, (sgnp.sum(loss), float(loss.size)))  # NaN for an empty batch, as PyTorch
    if reduction == "sum":
        return sgnp.sum(loss)
    if reduction == "none":
        return loss
    raise ValueError(f"{reduction} is not a valid value for reduction (use 'mean', 'sum' or 'none')")


def mse_loss(input, target, reduction="mean"):
    if tuple(input.shape) != tuple(np.shape(target)):
        raise ValueError(f"mse_loss: input shape {tuple(input.shape)} and target shape {tuple(np.shape(target))} "
                         "differ (symgrad does not broadcast them silently)")
    return labelled(_reduce(_ew(E.square, (_ew(E.subtract, (input, target)),)), reduction), "MseLoss")


def nll_loss(input, target, reduction="mean"):
    """Negative log-likelihood of integer class targets, given log-probabilities with the classes along
    dim 1, of shape (N, C), (N, C, d1, ..., dk) with targets (N, d1, ..., dk), or (C,) with a 0-d target."""
    target = np.asarray(target._data if hasattr(target, "_data") else target)
    if target.dtype.kind not in "iu":
        raise TypeError(f"nll_loss: class targets must be integers, got dtype {target.dtype}")
    classes = input.shape[1] if input.ndim > 1 else input.shape[0]
    if target.size and (target.min() < 0 or target.max() >= classes):
        raise IndexError(f"Target {int(target.max() if target.max() >= classes else target.min())} is out of "
                         f"bounds for {classes} classes")
    if input.ndim == 1:
        return _ew(E.negative, (input[int(target)],))
    target_shape = (input.shape[0],) + tuple(input.shape[2:])
    if target.shape != target_shape:
        raise ValueError(f"nll_loss: input of shape {tuple(input.shape)} (classes along dim 1) needs class targets "
                         f"of shape {target_shape}, got {target.shape}")
    if input.ndim > 2:
        input = sgnp.moveaxis(input, 1, -1)  # (N, d1, ..., dk, C): each position's classes are contiguous
    flat_index = np.arange(target.size, dtype=np.int64) * classes + target.reshape(-1).astype(np.int64)
    # the index is checked above: one take_p, not NumPy's indexing front end (most of a small step's time)
    losses = _ew(E.negative, (take_p(sgnp.reshape(input, (-1,)), flat_index, axis=0),))
    if reduction == "none":
        losses = sgnp.reshape(losses, target_shape)
    return labelled(_reduce(losses, reduction), "NllLoss")


def cross_entropy(input, target, reduction="mean"):
    """log_softmax over classes (dim 1, or 0 for a 1-d input) then NLL; targets are class indices
    or, as floats of the input's shape, class probabilities."""
    class_dim = 1 if input.ndim > 1 else 0
    log_probs = log_softmax(input, class_dim)
    target_array = np.asarray(target._data if hasattr(target, "_data") else target)
    if target_array.dtype.kind == "f":
        if target_array.shape != tuple(input.shape):
            raise ValueError(f"cross_entropy: probability targets must have the input's shape {tuple(input.shape)}, "
                             f"got {target_array.shape}")
        return _reduce(_ew(E.negative, (sgnp.sum(_ew(E.multiply, (log_probs, target)), class_dim),)), reduction)
    return nll_loss(log_probs, target_array, reduction)


def binary_cross_entropy_with_logits(input, target, reduction="mean"):
    """-[y log sigmoid(z) + (1 - y) log(1 - sigmoid(z))], computed stably as softplus(z) - y*z."""
    return _reduce(_ew(E.subtract, (_ew(E.softplus, (input,)), _ew(E.multiply, (target, input)))), reduction)


def binary_cross_entropy(input, target, reduction="mean"):
    """-[y log p + (1 - y) log(1 - p)] of probabilities p; the logs are clamped at -100 as in PyTorch.
    On eager tensors the gradient is PyTorch's (see _BinaryCrossEntropy)."""
    if isinstance(input, Tensor) or isinstance(target, Tensor):
        return _reduce(_BinaryCrossEntropy.apply(input, target), reduction)
    return _reduce(_binary_cross_entropy_terms(input, target), reduction)


def _clamped_logs(p):
    """log p and log(1 - p), each clamped below at -100 (PyTorch's bound for a probability of 0 or 1)."""
    return (_ew(E.maximum, (_ew(E.log, (p,)), -100.0)),
            _ew(E.maximum, (_ew(E.log1p, (_ew(E.negative, (p,)),)), -100.0)))


def _binary_cross_entropy_terms(p, y):
    log_p, log_1mp = _clamped_logs(p)
    terms = _ew(E.add, (_ew(E.multiply, (y, log_p)), _ew(E.multiply, (_ew(E.subtract, (1.0, y)), log_1mp))))
    return _ew(E.negative, (terms,))


class _BinaryCrossEntropy(Function):
    """Elementwise binary cross-entropy with PyTorch's backward, (p - y) / max(p (1 - p), 1e-12) for p,
    -logit(p) for y. It is finite where a saturated sigmoid gives p exactly 0 or 1
    (float32 logits beyond about 17), where the derivative of the clamped logs is 0 * inf = NaN."""

    @staticmethod
    def forward(ctx, input, target):
        ctx.save_for_backward(input, target)
        return _binary_cross_entropy_terms(input, target)

    @staticmethod
    def backward(ctx, grad):
        p, y = ctx.saved_tensors
        grad_p = grad_y = None
        if ctx.needs_input_grad[0]:
            curvature = _ew(E.maximum, (_ew(E.multiply, (p, _ew(E.subtract, (1.0, p)))), 1e-12))
            grad_p = _ew(E.multiply, (grad, _ew(E.divide, (_ew(E.subtract, (p, y)), curvature))))
        if ctx.needs_input_grad[1]:  # -logit(p), unclamped as PyTorch's
            log_1mp = _ew(E.log1p, (_ew(E.negative, (p,)),))
            grad_y = _ew(E.multiply, (grad, _ew(E.subtract, (log_1mp, _ew(E.log, (p,))))))
        return grad_p, grad_y
