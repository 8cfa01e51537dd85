"""`sg.nn.functional`: PyTorch's functional layer and loss names, written with sg.* ops on tensors.

Elementwise steps go through the tensors' cached elementwise plans (they work on arrays too).
"""
from __future__ import annotations

import numpy as np

from .. import numpy_api as sgnp
from ..ops import elementwise as E
from ..ops.indexing import take_p
from ..eager.function import Function
from ..eager.tensor import Tensor, apply_function, elementwise_on_tensors, labelled


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


def _peak(input, dim):
    """input's max along dim (kept), gradient-free and clipped to the finite range: softmax and
    log_softmax are invariant to this shift, which keeps exp from overflowing (an infinite or NaN
    row gives what the unshifted formula gives). Computed inside the softmax's plan, from the input
    as an op, so a deferred input stays deferred (docs/eager.md, "Deferred forward")."""
    peak = sgnp.max(input, axis=dim, keepdims=True)
    if np.dtype(peak.dtype).kind == "f":
        big = float(np.finfo(peak.dtype).max)
        peak = sgnp.clip(peak, -big, big)
    return sgnp.stop_gradient(peak)


def softmax(input, dim=None):
    dim = _softmax_dim(input.ndim) if dim is None else dim
    return labelled(apply_function(_softmax_shifted, (input, dim), {}), "Softmax")


def _softmax_shifted(input, dim):
    exp = _ew(E.exp, (_ew(E.subtract, (input, _peak(input, dim))),))
    return _ew(E.divide, (exp, sgnp.sum(exp, dim, keepdims=True)))


def log_softmax(input, dim=None):
    dim = _softmax_dim(input.ndim) if dim is None else dim
    return labelled(apply_function(_log_softmax_shifted, (input, dim), {}), "LogSoftmax")


def _log_softmax_shifted(input, dim):
    shifted = _ew(E.subtract, (input, _peak(input, dim)))
    total = sgnp.sum(_ew(E.exp, (shifted,)), dim, keepdims=True)
    return _ew(E.subtract, (shifted, _ew(E.log, (total,))))


def linear(input, weight, bias=None):
    """input @ weight.T + bias (weight has shape (out_features, in_features)). On tensors, the
    three ops replay as one cached plan (one front-end call per layer, not three)."""
    out = apply_function(_linear, (input, weight, bias), {})
    return out if bias is None else labelled(out, "Addmm")


def _linear(input, weight, bias):
    out = sgnp.matmul(input, sgnp.transpose(weight))
    return out if bias is None else _ew(E.add, (out, bias))


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
    return labelled(apply_function(_squared_error, (input, target, reduction), {}), "MseLoss")


def _squared_error(input, target, reduction):
    """On tensors, one cached plan (one front-end call, not three)."""
    return _reduce(_ew(E.square, (_ew(E.subtract, (input, target)),)), reduction)


def nll_loss(input, target, reduction="mean"):
    """Negative log-likelihood of integer class targets, given log-probabilities with the classes along
    dim 1, of shape (N, C), (N, C, d1, ..., dk) with targets (N, d1, ..., dk), or (C,) with a 0-d target."""
    return _nll(input, _class_targets(input, target), reduction)


def _class_targets(input, target) -> np.ndarray:
    """target as an integer array, checked against input's classes and shape (with PyTorch's errors)."""
    target = np.asarray(target._data if hasattr(target, "_data") else target)
    if target.dtype.kind not in "iu":
        raise TypeError(f"nll_loss: class targets must be integers, got dtype {target.dtype}")
    classes = input.shape[1] if input.ndim > 1 else input.shape[0]
    if target.size and (target.min() < 0 or target.max() >= classes):
        raise IndexError(f"Target {int(target.max() if target.max() >= classes else target.min())} is out of "
                         f"bounds for {classes} classes")
    target_shape = (input.shape[0],) + tuple(input.shape[2:])
    if input.ndim > 1 and target.shape != target_shape:
        raise ValueError(f"nll_loss: input of shape {tuple(input.shape)} (classes along dim 1) needs class targets "
                         f"of shape {target_shape}, got {target.shape}")
    return target


def _nll(input, target, reduction):
    """nll_loss of checked targets. The picked log-probabilities and their reduction replay as one
    cached plan on tensors (one front-end call, not five)."""
    if input.ndim == 1:
        return _ew(E.negative, (input[int(target)],))
    classes = input.shape[1]
    if input.ndim > 2:
        input = sgnp.moveaxis(input, 1, -1)  # (N, d1, ..., dk, C): each position's classes are contiguous
    flat_index = np.arange(target.size, dtype=np.int64) * classes + target.reshape(-1).astype(np.int64)
    index = Tensor._wrap(flat_index) if isinstance(input, Tensor) else flat_index
    if reduction == "none":
        return labelled(sgnp.reshape(_negative_picked(input, index), target.shape), "NllLoss")
    return labelled(apply_function(_picked_loss, (input, index, reduction), {}), "NllLoss")


def _negative_picked(input, index):
    """-input.flat[index]: the index is checked, so one take_p, not NumPy's indexing front end."""
    return _ew(E.negative, (take_p(sgnp.reshape(input, (-1,)), index, axis=0),))


def _picked_loss(input, index, reduction):
    return _reduce(_negative_picked(input, index), reduction)


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
    return _nll(log_probs, _class_targets(log_probs, target_array), reduction)


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
