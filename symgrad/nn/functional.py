"""`sg.nn.functional`: PyTorch's functional layer and loss names, written with sg.* ops on tensors.

Elementwise steps go through the tensors' cached elementwise plans (they work on arrays too).
"""
from __future__ import annotations

import functools
import math
import warnings

import numpy as np

from .. import numpy_api as sgnp
from ..core import Tracer, UnsupportedOpError, with_user_line
from ..numpy_api.arrays import _axes, _peak as _array_peak
from ..custom_derivatives import custom_jvp
from ..ops import elementwise as E
from ..ops.indexing import take_p, wrap_index_p
from ..eager.matmul_reads import as_linear_reads
from ..eager.mode import no_grad
from ..eager.tensor import Tensor, apply_function, elementwise_on_tensors, labelled, random_generator
from . import convolution, resize


def _ew(op, args):
    return elementwise_on_tensors(op, args)


def relu(input, inplace=False):
    return _in_place(inplace, input, lambda x: _ew(E.relu, (x,)))


def sigmoid(input):
    return _ew(E.sigmoid, (input,))


def tanh(input):
    return _ew(E.tanh, (input,))


def _softmax_dim(ndim: int) -> int:
    """PyTorch's choice when no dim is given: 0 for 0-, 1- and 3-d inputs, else 1."""
    return 0 if ndim in (0, 1, 3) else 1


def _peak(input, dim):
    """input's max along dim (kept), gradient-free and at least the lowest finite value: softmax and
    log_softmax are invariant to this shift, which keeps exp from overflowing. A row whose max is +inf
    or NaN is NaN, as PyTorch's (which shifts by the max). Computed inside the softmax's plan, from the
    input as an op, so a deferred input stays deferred (docs/eager.md, "Deferred forward"). 0 along an empty dim
    (arrays' _peak: max has nothing to take there)."""
    peak = _array_peak(input, _axes(dim, input.ndim))
    if np.dtype(peak.dtype).kind == "f":
        peak = sgnp.maximum(peak, -float(np.finfo(peak.dtype).max))
    return peak


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """Along dim; with dtype, of input cast to it first (PyTorch's)."""
    dim = _softmax_dim(input.ndim) if dim is None else dim
    input = input if dtype is None else sgnp.astype(input, dtype)
    return labelled(apply_function(_softmax_shifted, (input, dim), {}), "Softmax")


def _softmax_shifted(input, dim):
    exp = _ew(E.exp, (_ew(E.subtract, (input, _peak(input, dim))),))
    return _ew(E.divide, (exp, sgnp.sum(exp, dim, keepdims=True)))


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    dim = _softmax_dim(input.ndim) if dim is None else dim
    input = input if dtype is None else sgnp.astype(input, dtype)
    return labelled(apply_function(_log_softmax_shifted, (input, dim), {}), "LogSoftmax")


def _log_softmax_shifted(input, dim):
    shifted = _ew(E.subtract, (input, _peak(input, dim)))
    total = sgnp.sum(_ew(E.exp, (shifted,)), dim, keepdims=True)
    return _ew(E.subtract, (shifted, _ew(E.log, (total,))))


def linear(input, weight, bias=None):
    """input @ weight.T + bias (weight has shape (out_features, in_features)). On tensors, the
    three ops replay as one cached plan (one front-end call per layer, not three)."""
    out = apply_function(_linear, (as_linear_reads(input, weight), weight, bias), {})
    return out if bias is None else labelled(out, "Addmm", (bias, input, weight))


def _linear(input, weight, bias):
    out = sgnp.matmul(input, sgnp.transpose(weight))
    return out if bias is None else _ew(E.add, (out, bias))


def bilinear(input1, input2, weight, bias=None):
    """y[..., o] = input1[..., i] weight[o, i, j] input2[..., j] + bias[o] (weight (out, in1, in2))."""
    if input1.shape[:-1] != input2.shape[:-1] or weight.ndim != 3 or \
            (input1.shape[-1], input2.shape[-1]) != tuple(weight.shape[1:]):
        raise RuntimeError(f"bilinear: inputs of shapes {list(input1.shape)} and {list(input2.shape)} do not match "
                           f"a weight of shape {list(weight.shape)} (out, in1, in2)")
    out = apply_function(_bilinear, (input1, input2, weight, bias), {})
    return labelled(out, "Bilinear")


def _bilinear(input1, input2, weight, bias):
    out = sgnp.einsum("...i,oij,...j->...o", input1, weight, input2)
    return out if bias is None else _ew(E.add, (out, bias))


def _one_op(fn):
    """Mark `fn` as a call PyTorch computes as one op whose backward reads its inputs at the backward, not the values
    the forward computed from them: NumPy's writes to a from_numpy input since are read so (eager.plans.Plan)."""
    fn.one_op_at_backward = True
    return fn


def _reduce(loss, reduction: str):
    if reduction == "mean":
        return _ew(E.divide, (sgnp.sum(loss), float(loss.size)))  # NaN for an empty batch, as PyTorch
    if reduction == "sum":
        return sgnp.sum(loss)
    if reduction == "none":
        return loss
    raise ValueError(f"{reduction} is not a valid value for reduction (use 'mean', 'sum' or 'none')")


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    reduction = legacy_reduction(size_average, reduce, reduction)
    if tuple(input.shape) != tuple(np.shape(target)):
        raise ValueError(f"mse_loss: input shape {tuple(input.shape)} and target shape {tuple(np.shape(target))} "
                         "differ (symgrad does not broadcast them silently)")
    return labelled(apply_function(_squared_error, (input, target, reduction), {}), "MseLoss", (input, target))


@_one_op
def _squared_error(input, target, reduction):
    """On tensors, one cached plan (one front-end call, not three)."""
    return _reduce(_ew(E.square, (_ew(E.subtract, (input, target)),)), reduction)


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    """Negative log-likelihood of integer class targets, given log-probabilities with the classes along
    dim 1, of shape (N, C), (N, C, d1, ..., dk) with targets (N, d1, ..., dk), or (C,) with a 0-d target.
    `weight` (C,) scales each class's terms and, with reduction 'mean', the divisor (PyTorch's weighted
    mean); targets equal to `ignore_index` count for nothing."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    target, some_ignored = _class_targets(input, target, ignore_index)
    if weight is None and not some_ignored:
        return _nll(input, target, reduction)
    return _weighted_nll(input, target, weight, target == ignore_index, reduction)


def legacy_reduction(size_average, reduce, reduction):
    """The reduction PyTorch's deprecated size_average and reduce flags mean (None stands for True), with its
    warning (`F.nll_loss(..., size_average=False)` is a sum); `reduction` where both are None."""
    if size_average is None and reduce is None:
        return reduction
    reduce = True if reduce is None else reduce
    legacy = "mean" if reduce and (True if size_average is None else size_average) else "sum" if reduce else "none"
    warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{legacy}' instead.")
    return legacy


def _weighted_nll(input, target, weight, ignored, reduction):
    """nll_loss with per-class weights and ignored targets: each term -w[y] x[y], w[y] = 0 where ignored."""
    classes = input.shape[1 if input.ndim > 1 else 0]
    weight = np.ones(classes) if weight is None else _class_weights(weight, classes)
    safe = np.where(ignored, 0, target)
    term_weights = np.where(ignored, 0.0, weight[safe]).astype(input.dtype)
    terms = _zero_ignored(_ew(E.multiply, (_nll(input, safe, "none"), term_weights)), ~ignored)
    if reduction == "mean":
        return labelled(_weighted_mean(terms, term_weights.sum()), "NllLoss")
    return labelled(_reduce(terms, reduction), "NllLoss")


def _zero_ignored(terms, counted):
    """terms, 0 where a target is ignored: selected, not multiplied by 0, so an ignored target's log-probability
    of -inf is no NaN (PyTorch never reads it) and its gradient stays 0."""
    return terms if counted.all() else _ew(E.where, (counted, terms, 0.0))


def _weighted_mean(terms, weights):
    """sum(terms) / weights, PyTorch's weighted mean (`weights` the counted targets' summed weights). Weights
    summing to 0 divide by 0 as PyTorch's do: the loss NaN (0/0) or infinite, and a counted target's gradient
    w * g / 0, NaN for weight 0; an ignored target's stays 0 (its term was selected away)."""
    return _ew(E.divide, (sgnp.sum(terms), float(weights)))


def _class_weights(weight, classes) -> np.ndarray:
    """weight as a NumPy array, one value per class (PyTorch's check: another length picked wrong weights)."""
    weights = np.asarray(weight._data if hasattr(weight, "_data") else weight)
    if weights.shape != (classes,):
        raise RuntimeError(f"weight tensor should be defined either for all {classes} classes or no classes but got "
                           f"weight tensor of shape: {list(weights.shape)}")
    return weights


def _within_input(input, **operands):
    """PyTorch's check that a loss's weights (or target) broadcast to the input's shape, not beyond it."""
    for name, operand in operands.items():
        if operand is not None and np.broadcast_shapes(np.shape(operand), tuple(input.shape)) != tuple(input.shape):
            raise RuntimeError(f"{name}: output with shape {list(input.shape)} doesn't match the broadcast shape "
                               f"{list(np.broadcast_shapes(np.shape(operand), tuple(input.shape)))}")


_UNSIGNED = {size: np.dtype(f"u{size}") for size in (1, 2, 4, 8)}  # by the itemsize of an integer target


def _class_targets(input, target, ignore_index=-100) -> tuple:
    """(target as an integer array, checked against input's classes and shape (with PyTorch's errors),
    whether some targets equal ignore_index). Valid targets with a negative ignore_index cost one reduction."""
    target = _concrete_class_targets(target, "nll_loss")
    if target.dtype.kind not in "iu":
        raise TypeError(f"nll_loss: class targets must be integers, got dtype {target.dtype}")
    shape = tuple(input.shape)  # (a tuple: an sg.Size's items are read through Python)
    classes = shape[1] if len(shape) > 1 else shape[0]
    some_ignored = False
    if target.size and (ignore_index >= 0 or _largest_unsigned(target) >= classes):
        low, high = target.min(), target.max()
        if low < 0 or high >= classes or low <= ignore_index <= high:
            ignored = target == ignore_index
            some_ignored = bool(ignored.any())
            counted = target[~ignored]
            if counted.size and (counted.min() < 0 or counted.max() >= classes):
                raise IndexError(f"Target {int(counted.max() if counted.max() >= classes else counted.min())} is "
                                 f"out of bounds for {classes} classes")
    target_shape = shape[:1] + shape[2:]
    if len(shape) > 1 and target.shape != target_shape:
        raise ValueError(f"nll_loss: input of shape {shape} (classes along dim 1) needs class targets "
                         f"of shape {target_shape}, got {target.shape}")
    return target, some_ignored


def _largest_unsigned(target):
    """The largest integer target read as unsigned, so that a negative one is a large one: one pass (argmax, which
    for a batch of targets costs half of np.max's reduction machinery)."""
    unsigned = target.view(_UNSIGNED[target.itemsize])
    return unsigned.flat[unsigned.argmax()]


def _concrete_class_targets(target, name):
    """target as a NumPy array: class indices are checked and picked with NumPy, so a traced one is refused."""
    if type(target) is np.ndarray:  # (cross_entropy's, checked already: nll_loss gets it so)
        return target
    if isinstance(target, Tracer) and not hasattr(target, "_data"):
        raise UnsupportedOpError(with_user_line(
            f"{name}: class-index targets must be concrete (a tensor or an array the function closes over), not a "
            f"traced argument ({target.dtype}{list(target.shape)}); probability targets may be traced"))
    return np.asarray(target._data if hasattr(target, "_data") else target)


def _nll(input, target, reduction):
    """nll_loss of checked targets. The picked log-probabilities and their reduction replay as one
    cached plan on tensors (one front-end call, not five)."""
    ndim = input.ndim
    if ndim == 1:
        return _ew(E.negative, (input[int(target)],))
    classes = input.shape[1]
    if ndim > 2:
        input = sgnp.moveaxis(input, 1, -1)  # (N, d1, ..., dk, C): each position's classes are contiguous
    flat = target if target.ndim == 1 else target.reshape(-1)
    flat_index = _row_starts(target.size, classes) + (flat if flat.dtype is _INT64 else flat.astype(_INT64))
    index = Tensor._wrap(flat_index) if isinstance(input, Tensor) else flat_index
    if reduction == "none":
        return labelled(sgnp.reshape(_negative_picked(input, index), target.shape), "NllLoss")
    return labelled(apply_function(_picked_loss, (input, index, reduction), {}), "NllLoss")


_INT64 = np.dtype(np.int64)  # (a dtype compared by identity: `== np.int64` converts the type first, ~0.4 us)


@functools.lru_cache(maxsize=64)
def _row_starts(rows: int, classes: int) -> np.ndarray:
    """The flat index of each row's first class, [0, C, 2C, ...] (read-only: shared by every call)."""
    starts = np.arange(rows, dtype=np.int64) * classes
    starts.flags.writeable = False
    return starts


def _negative_picked(input, index):
    """-input.flat[index]: the index is checked, so one take_p, not NumPy's indexing front end."""
    return _ew(E.negative, (take_p(sgnp.reshape(input, (-1,)), index, axis=0),))


def _picked_loss(input, index, reduction):
    return _reduce(_negative_picked(input, index), reduction)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                  label_smoothing=0.0):
    """log_softmax over classes (dim 1, or 0 for a 1-d input) then NLL; targets are class indices (with
    nll_loss's weight and ignore_index) or, as floats of the input's shape, class probabilities. With
    label_smoothing e, the targets are mixed with the uniform distribution over the C classes, as PyTorch:
    (1 - e) * the loss + e / C * the (weighted) sum of -log-probabilities over the classes."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    class_dim = 1 if input.ndim > 1 else 0
    log_probs = log_softmax(input, class_dim)
    probabilities = np.dtype(target.dtype).kind == "f" if hasattr(target, "dtype") else isinstance(target, float)
    if weight is None and not label_smoothing and not probabilities:  # (the common case, without the terms below)
        return nll_loss(log_probs, _concrete_class_targets(target, "cross_entropy"), None, None, ignore_index, None,
                        reduction)
    classes = input.shape[class_dim]
    weights = None if weight is None else _class_weights(weight, classes)
    along_classes = (classes,) + (1,) * (input.ndim - 1 - class_dim)  # a weight per class, broadcast
    if probabilities:
        if tuple(np.shape(target)) != tuple(input.shape):
            raise ValueError(f"cross_entropy: probability targets must have the input's shape {tuple(input.shape)}, "
                             f"got {tuple(np.shape(target))}")
        if label_smoothing:
            target = _ew(E.add, (_ew(E.multiply, (target, 1.0 - label_smoothing)), label_smoothing / classes))
        terms = _ew(E.multiply, (log_probs, target))
        if weights is not None:
            terms = _ew(E.multiply, (terms, weights.reshape(along_classes).astype(input.dtype)))
        return _reduce(_ew(E.negative, (sgnp.sum(terms, class_dim),)), reduction)
    target_array = _concrete_class_targets(target, "cross_entropy")
    loss = nll_loss(log_probs, target_array, weight, None, ignore_index, None, reduction)
    if not label_smoothing:
        return loss
    counted = target_array != ignore_index
    if weights is None and reduction == "mean" and counted.all():  # (the common case: one plan)
        return apply_function(_smoothed_mean, (loss, log_probs, class_dim, 1.0 - label_smoothing,
                                               label_smoothing / classes, float(counted.size)), {})
    return _ew(E.add, (_ew(E.multiply, (loss, 1.0 - label_smoothing)), _ew(E.multiply, (
        _smoothing_term(log_probs, counted, weights, along_classes, target_array, reduction, class_dim),
        label_smoothing / classes))))


def _smoothed_mean(loss, log_probs, class_dim, kept, share, count):
    """kept * loss + share * the mean of -log-probabilities summed over classes, `count` targets (no class weight,
    none ignored): the ops of the general form below, as one front-end call."""
    smooth = _ew(E.divide, (sgnp.sum(_ew(E.negative, (sgnp.sum(log_probs, class_dim),))), count))
    return _ew(E.add, (_ew(E.multiply, (loss, kept)), _ew(E.multiply, (smooth, share))))


def _smoothing_term(log_probs, counted, weights, along_classes, target, reduction, class_dim):
    """The sum over classes of -w_c log p_c per target, 0 where ignored (not `counted`), reduced as PyTorch reduces
    it (a weighted mean divides by the targets' weights)."""
    terms = log_probs if weights is None else \
        _ew(E.multiply, (log_probs, weights.reshape(along_classes).astype(log_probs.dtype)))
    smooth = _ew(E.negative, (sgnp.sum(terms, class_dim),))
    smooth = _zero_ignored(smooth, counted)
    if reduction != "mean":
        return _reduce(smooth, reduction)
    return _weighted_mean(smooth, weights[target[counted]].sum() if weights is not None else counted.sum())


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None):
    """-[p y log sigmoid(z) + (1 - y) log(1 - sigmoid(z))] (p: pos_weight, 1 by default), computed stably
    as (1 - y) z + (1 + (p - 1) y) softplus(-z), which is softplus(z) - y z when p is 1."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    if tuple(np.shape(target)) != tuple(input.shape):
        raise ValueError(f"Target size ({tuple(np.shape(target))}) must be the same as input size "
                         f"({tuple(input.shape)})")
    _within_input(input, weight=weight, pos_weight=pos_weight)
    if pos_weight is None:
        terms = _ew(E.subtract, (_ew(E.softplus, (input,)), _ew(E.multiply, (target, input))))
    else:
        log_weight = _ew(E.add, (1.0, _ew(E.multiply, (_ew(E.subtract, (pos_weight, 1.0)), target))))
        terms = _ew(E.add, (_ew(E.multiply, (_ew(E.subtract, (1.0, target)), input)),
                            _ew(E.multiply, (log_weight, _ew(E.softplus, (_ew(E.negative, (input,)),))))))
    return labelled(_reduce(terms if weight is None else _ew(E.multiply, (terms, weight)), reduction),
                    "BinaryCrossEntropyWithLogits", (input, target))


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """-w [y log p + (1 - y) log(1 - p)] of probabilities p; the logs are clamped at -100 as in PyTorch.
    The gradient is PyTorch's, on eager tensors as in a trace (see _binary_cross_entropy_terms_with_rule)."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    if tuple(input.shape) != tuple(np.shape(target)):
        raise ValueError(f"Using a target size ({tuple(np.shape(target))}) that is different to the input size "
                         f"({tuple(input.shape)}) is deprecated. Please ensure they have the same size.")
    _within_input(input, weight=weight)
    if isinstance(input, Tensor) != isinstance(target, Tensor):  # (both tensors: one recorded call, with its rule)
        input, target = (t if isinstance(t, Tensor) else Tensor._wrap(np.asarray(t)) for t in (input, target))
    terms = _binary_cross_entropy_terms_with_rule(input, target)
    return labelled(_reduce(terms if weight is None else _ew(E.multiply, (terms, weight)), reduction),
                    "BinaryCrossEntropy", (input, target))


def _clamped_logs(p):
    """log p and log(1 - p), each clamped below at -100 (PyTorch's bound for a probability of 0 or 1)."""
    return (_ew(E.maximum, (_ew(E.log, (p,)), -100.0)),
            _ew(E.maximum, (_ew(E.log1p, (_ew(E.negative, (p,)),)), -100.0)))


def _binary_cross_entropy_terms(p, y):
    log_p, log_1mp = _clamped_logs(p)
    terms = _ew(E.add, (_ew(E.multiply, (y, log_p)), _ew(E.multiply, (_ew(E.subtract, (1.0, y)), log_1mp))))
    return _ew(E.negative, (terms,))


# PyTorch's bound of p (1 - p) in its gradient, 1e-12 as a float32 (its gradient at p = 0, y = 1 is -1.000000004e12)
_BCE_EPSILON = float(np.float32(1e-12))


def _binary_cross_entropy_by_p(p, y):
    """PyTorch's derivative of the terms for p: (p - y) / max(p (1 - p), eps)."""
    curvature = _ew(E.maximum, (_ew(E.multiply, (p, _ew(E.subtract, (1.0, p)))), _BCE_EPSILON))
    return _ew(E.divide, (_ew(E.subtract, (p, y)), curvature))


def _binary_cross_entropy_by_y(p):
    """PyTorch's derivative of the terms for y: -logit(p), unclamped."""
    return _ew(E.subtract, (_ew(E.log1p, (_ew(E.negative, (p,)),)), _ew(E.log, (p,))))


@custom_jvp
def _binary_cross_entropy_terms_with_rule(p, y):
    """The terms with PyTorch's derivative, (p - y) / max(p (1 - p), eps) for p and -logit(p) for y, finite where
    a saturated sigmoid gives p exactly 0 or 1 (float32 logits beyond about 17): the clamped logs' own is
    0 * inf = NaN there. On eager tensors a custom_jvp call is one recorded op, which a captured step keeps."""
    return _binary_cross_entropy_terms(p, y)


@_binary_cross_entropy_terms_with_rule.defjvp
def _binary_cross_entropy_terms_jvp(primals, tangents):
    (p, y), (dp, dy) = primals, tangents
    tangent = _ew(E.add, (_ew(E.multiply, (dp, _binary_cross_entropy_by_p(p, y))),
                          _ew(E.multiply, (dy, _binary_cross_entropy_by_y(p)))))
    return _binary_cross_entropy_terms_with_rule(p, y), tangent


# ----------------------------------------------------------------------------- convolution and pooling

def _convolution_call(fn, label, args, **keywords):
    """fn (symgrad/nn/convolution.py) on tensors through one cached plan, its grad_fn named as PyTorch's."""
    return labelled(apply_function(fn, args, keywords), label)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _convolution_call(convolution.conv, "Convolution", (input, weight, bias, stride, padding, dilation, groups),
                             d=1, name="conv1d")


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _convolution_call(convolution.conv, "Convolution", (input, weight, bias, stride, padding, dilation, groups),
                             d=2, name="conv2d")


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _convolution_call(convolution.conv, "Convolution", (input, weight, bias, stride, padding, dilation, groups),
                             d=3, name="conv3d")


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return _convolution_call(convolution.conv_transpose, "Convolution",
                             (input, weight, bias, stride, padding, output_padding, groups, dilation), d=1,
                             name="conv_transpose1d")


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return _convolution_call(convolution.conv_transpose, "Convolution",
                             (input, weight, bias, stride, padding, output_padding, groups, dilation), d=2,
                             name="conv_transpose2d")


def _max_pool(label, args, return_indices, d):
    """The pooled values through one cached plan; with return_indices, (values, indices), the int64 indices
    computed from the concrete input (PyTorch's MaxUnpool takes them)."""
    values = _convolution_call(convolution.max_pool, label, args, d=d, name=f"max_pool{d}d")
    if not return_indices:
        return values
    indices = convolution.max_pool_indices(*args, d=d, name=f"max_pool{d}d")
    return values, Tensor._wrap(indices) if isinstance(values, Tensor) else indices


def _max_unpool(input, indices, kernel_size, stride, padding, output_size, d):
    """The indices are constants of the gather (NumPy's), not operands of the plan."""
    indices = np.asarray(indices._data if isinstance(indices, Tensor) else indices)
    output_size = None if output_size is None else tuple(int(v) for v in output_size)
    return labelled(convolution.max_unpool(input, indices, kernel_size, stride, padding, output_size, d=d,
                                           name=f"max_unpool{d}d"), "MaxUnpool2D")


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return _convolution_call(convolution.conv_transpose, "Convolution",
                             (input, weight, bias, stride, padding, output_padding, groups, dilation), d=3,
                             name="conv_transpose3d")


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 1)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 2)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 3)


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    return _convolution_call(convolution.unfold, "Im2Col", (input, kernel_size, dilation, padding, stride))


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    return _convolution_call(convolution.fold, "Col2Im", (input, output_size, kernel_size, dilation, padding, stride))


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    return _max_pool("MaxPool2DWithIndices", (input, kernel_size, stride, padding, dilation, ceil_mode), return_indices, 1)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    return _max_pool("MaxPool2DWithIndices", (input, kernel_size, stride, padding, dilation, ceil_mode), return_indices, 2)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    return _convolution_call(convolution.avg_pool, "AvgPool2D",
                             (input, kernel_size, stride, padding, ceil_mode, count_include_pad), d=1,
                             name="avg_pool1d")


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    return _convolution_call(convolution.avg_pool, "AvgPool2D",
                             (input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override),
                             d=2, name="avg_pool2d")


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _convolution_call(convolution.lp_pool, "Pow", (input, norm_type, kernel_size, stride, ceil_mode), d=1,
                             name="lp_pool1d")


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _convolution_call(convolution.lp_pool, "Pow", (input, norm_type, kernel_size, stride, ceil_mode), d=2,
                             name="lp_pool2d")


def adaptive_avg_pool1d(input, output_size):
    return _convolution_call(convolution.adaptive_avg_pool, "AdaptiveAvgPool2D", (input, output_size), d=1,
                             name="adaptive_avg_pool1d")


def adaptive_avg_pool2d(input, output_size):
    return _convolution_call(convolution.adaptive_avg_pool, "AdaptiveAvgPool2D", (input, output_size), d=2,
                             name="adaptive_avg_pool2d")


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    return _max_pool("MaxPool3DWithIndices", (input, kernel_size, stride, padding, dilation, ceil_mode), return_indices, 3)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    return _convolution_call(convolution.avg_pool, "AvgPool3D",
                             (input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override),
                             d=3, name="avg_pool3d")


def adaptive_avg_pool3d(input, output_size):
    return _convolution_call(convolution.adaptive_avg_pool, "AdaptiveAvgPool3D", (input, output_size), d=3,
                             name="adaptive_avg_pool3d")


def pad(input, pad, mode="constant", value=None):
    """PyTorch's pad: widths from the last dimension backwards; constant, reflect, replicate or circular. Always a
    new tensor, as PyTorch's (a conv's padding_mode with padding 0 pads by no widths: the conv saves a copy)."""
    result = apply_function(resize.pad, (input, tuple(pad), mode, value), {})
    if result is input:
        result = input * 1 if input.dtype.kind == "f" else input.clone()
    return labelled(result, "ConstantPadNd" if mode == "constant" else mode.capitalize() + "Pad")


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None, recompute_scale_factor=None,
                antialias=False):
    """Resize (N, C, *spatial): nearest, nearest-exact, linear, bilinear, bicubic, trilinear (align_corners False
    or True) or area."""
    size = size if size is None or isinstance(size, (int, np.integer)) else tuple(size)
    scale_factor = scale_factor if scale_factor is None or isinstance(scale_factor, (int, float, np.number)) else \
        tuple(scale_factor)
    spatial = f"{input.ndim - 2}D" if hasattr(input, "ndim") else ""
    return labelled(apply_function(resize.interpolate, (input, size, scale_factor, mode, align_corners,
                                                        recompute_scale_factor, antialias), {}),
                    {"nearest": "UpsampleNearest" + spatial, "nearest-exact": "UpsampleNearestExact" + spatial,
                     "area": "AdaptiveAvgPool", "bicubic": "UpsampleBicubic2D",
                     "trilinear": "UpsampleTrilinear3D"}.get(mode, "UpsampleLinear"))


upsample = interpolate


# ----------------------------------------------------------------------------- activations

def _activation(fn, label, input, *args):
    return labelled(apply_function(fn, (input, *args), {}), label)


def gelu(input, approximate="none"):
    """x Phi(x), exact (erf) or with PyTorch's tanh approximation."""
    if approximate not in ("none", "tanh"):
        raise ValueError(f"approximate argument must be either none or tanh, got {approximate!r}")
    return _activation(_gelu, "Gelu", input, approximate)


@_one_op
def _gelu(x, approximate):
    if approximate == "tanh":
        inner = _ew(E.multiply, (math.sqrt(2 / math.pi), _ew(E.add, (x, _ew(E.multiply, (0.044715, _ew(
            E.power, (x, 3))))))))
        return _ew(E.multiply, (_ew(E.multiply, (0.5, x)), _ew(E.add, (1.0, _ew(E.tanh, (inner,))))))
    return _ew(E.multiply, (_ew(E.multiply, (0.5, x)), _ew(E.add, (1.0, _ew(E.erf, (_ew(E.multiply, (
        x, 1 / math.sqrt(2))),))))))


def _in_place(inplace, input, compute):
    """compute(input), and with PyTorch's `inplace=True` on an eager tensor its data overwritten by it (Tensor's
    in-place path: version bump, views, the refusal of a leaf that requires grad) and the tensor returned. A traced
    value cannot change (as item assignment into one cannot), so it gets the result as a new value, which
    `x = F.relu(x, inplace=True)`, the form modules use, binds as PyTorch does."""
    if inplace and isinstance(input, Tensor):
        input._inplace(compute)
        return input
    return compute(input)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    return _in_place(inplace, input, lambda x: _activation(_leaky_relu, "LeakyRelu", x, float(negative_slope)))


def _leaky_relu(x, slope):
    return _ew(E.leaky_relu, (x, slope))


def elu(input, alpha=1.0, inplace=False):
    return _in_place(inplace, input, lambda x: _activation(_elu, "Elu", x, float(alpha)))


def _elu(x, alpha):
    return _ew(E.elu, (x, alpha, 1.0, 1.0))


def silu(input, inplace=False):
    """x sigmoid(x) (swish)."""
    return _in_place(inplace, input, lambda x: _activation(_silu, "Silu", x))


@_one_op
def _silu(x):
    return _ew(E.multiply, (x, _ew(E.sigmoid, (x,))))


def softplus(input, beta=1.0, threshold=20.0):
    """log(1 + exp(beta x)) / beta, and x itself where beta x > threshold (PyTorch's cut-off)."""
    return _activation(_softplus, "Softplus", input, float(beta), float(threshold))


def _softplus(x, beta, threshold):
    return _ew(E.softplus_beta, (x, beta, threshold))


def mish(input, inplace=False):
    """x tanh(softplus(x))."""
    return _in_place(inplace, input, lambda x: _activation(_mish, "Mish", x))


@_one_op
def _mish(x):
    return _ew(E.multiply, (x, _ew(E.tanh, (_ew(E.softplus, (x,)),))))


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """x clamped to [min_val, max_val]; the gradient is 1 strictly inside, 0 elsewhere (PyTorch's)."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _in_place(inplace, input, lambda x: _activation(_hardtanh, "Hardtanh", x, float(min_val), float(max_val)))


def _hardtanh(x, low, high):
    inside = _ew(E.logical_and, (_ew(E.greater, (x, low)), _ew(E.less, (x, high))))
    clamped = sgnp.stop_gradient(_ew(E.clip, (x, low, high)))  # (a tie gives x, -0.0 at 0, as PyTorch's clamp)
    return _ew(E.where, (inside, x, clamped))


def relu6(input, inplace=False):
    return hardtanh(input, 0.0, 6.0, inplace)


def hardsigmoid(input, inplace=False):
    """relu6(x + 3) / 6."""
    return _in_place(inplace, input, lambda x: _activation(_hardsigmoid, "Hardsigmoid", x))


@_one_op
def _hardsigmoid(x):
    return _ew(E.divide, (_hardtanh(_ew(E.add, (x, 3.0)), 0.0, 6.0), 6.0))


def hardswish(input, inplace=False):
    """x relu6(x + 3) / 6, with PyTorch's gradient: 0 below -3, 1 above 3, (2x + 3) / 6 between."""
    return _in_place(inplace, input, lambda x: _activation(_hardswish, "Hardswish", x))


@_one_op
def _hardswish(x):
    middle = _ew(E.logical_and, (_ew(E.greater, (x, -3.0)), _ew(E.less, (x, 3.0))))
    inner = _ew(E.divide, (_ew(E.multiply, (x, _ew(E.add, (x, 3.0)))), 6.0))
    outer = _ew(E.where, (_ew(E.less_equal, (x, -3.0)), sgnp.stop_gradient(_ew(E.multiply, (x, 0.0))), x))
    return _ew(E.where, (middle, inner, outer))


def selu(input, inplace=False):
    """scale * elu(x, alpha) with SELU's fixed constants."""
    return _in_place(inplace, input, lambda x: _activation(_selu, "Elu", x))


_SELU_ALPHA, _SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


def _selu(x):
    return _ew(E.elu, (x, _SELU_ALPHA * _SELU_SCALE, _SELU_SCALE, 1.0))


def celu(input, alpha=1.0, inplace=False):
    """max(0, x) + min(0, alpha (exp(x / alpha) - 1))."""
    if alpha == 0:
        raise ValueError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return _in_place(inplace, input, lambda x: _activation(_celu, "Elu", x, float(alpha)))


def _celu(x, alpha):
    return _ew(E.elu, (x, alpha, 1.0, 1.0 / alpha))


def logsigmoid(input):
    """log sigmoid(x) = -softplus(-x), stable for large |x|."""
    return _activation(_logsigmoid, "LogSigmoid", input)


def _logsigmoid(x):
    """log sigmoid(x) = -softplus(-x)."""
    return _ew(E.negative, (_ew(E.softplus, (_ew(E.negative, (x,)),)),))


def softmin(input, dim=None):
    return softmax(_ew(E.negative, (input,)), dim)


def softsign(input):
    return _activation(_softsign, "Div", input)


def _softsign(x):
    return _ew(E.divide, (x, _ew(E.add, (1.0, _ew(E.abs, (x,))))))


def tanhshrink(input):
    return _activation(_tanhshrink, "Sub", input)


def _tanhshrink(x):
    return _ew(E.subtract, (x, _ew(E.tanh, (x,))))


def hardshrink(input, lambd=0.5):
    """x where |x| > lambd, else 0 (NaN stays NaN), as PyTorch's."""
    return _activation(_hardshrink, "Hardshrink", input, float(lambd))


def _hardshrink(x, lambd):
    shrunk = _ew(E.where, (_ew(E.greater, (_ew(E.abs, (x,)), lambd)), x, 0.0))
    return _ew(E.where, (_ew(E.isnan, (x,)), x, shrunk))  # (the comparisons alone would make NaN 0)


def softshrink(input, lambd=0.5):
    """x - lambd above lambd, x + lambd below -lambd, else 0 (NaN stays NaN), as PyTorch's."""
    if lambd < 0:
        raise RuntimeError(f"lambda must be greater or equal to 0, but found to be {lambd}.")
    return _activation(_softshrink, "Softshrink", input, float(lambd))


def _softshrink(x, lambd):
    below = _ew(E.where, (_ew(E.less, (x, -lambd)), _ew(E.add, (x, lambd)), 0.0))
    shrunk = _ew(E.where, (_ew(E.greater, (x, lambd)), _ew(E.subtract, (x, lambd)), below))
    return _ew(E.where, (_ew(E.isnan, (x,)), x, shrunk))  # (the comparisons alone would make NaN 0)


def threshold(input, threshold, value, inplace=False):
    """value where x <= threshold, else x (NaN stays NaN, as PyTorch's)."""
    return _in_place(inplace, input, lambda x: _activation(_threshold, "Threshold", x, float(threshold), float(value)))


def _threshold(x, limit, value):
    return _ew(E.where, (_ew(E.less_equal, (x, limit)), value, x))


def _in_place_form(function):
    """F.relu_ and its kin: `function` with inplace=True, as PyTorch names them."""
    def in_place(input, *args, **kwargs):
        return function(input, *args, inplace=True, **kwargs)
    in_place.__name__ = in_place.__qualname__ = function.__name__ + "_"
    in_place.__doc__ = f"{function.__name__}(input, ..., inplace=True)."
    return in_place


relu_, leaky_relu_, elu_, hardtanh_, selu_, celu_, threshold_ = map(
    _in_place_form, (relu, leaky_relu, elu, hardtanh, selu, celu, threshold))


def glu(input, dim=-1):
    """a * sigmoid(b), a and b the two halves of input along dim."""
    dim = dim % input.ndim if input.ndim else dim
    if input.ndim == 0 or input.shape[dim] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim} is size "
                           f"{input.shape[dim] if input.ndim else 0}")
    return _activation(_glu, "Glu", input, dim)


def _glu(x, dim):
    half = x.shape[dim] // 2
    before = (slice(None),) * dim
    return _ew(E.multiply, (x[before + (slice(0, half),)], _ew(E.sigmoid, (x[before + (slice(half, None),)],))))


def prelu(input, weight):
    """x where x > 0, else weight x; weight has one element or one per channel (dim 1)."""
    channels = weight.shape[0] if weight.ndim else 1
    if channels != 1 and (input.ndim < 2 or input.shape[1] != channels):
        raise ValueError(f"prelu: {channels} weights need an input with {channels} channels along dim 1, got shape "
                         f"{tuple(input.shape)}")
    shape = (channels,) + (1,) * max(input.ndim - 2, 0) if channels != 1 else ()
    return labelled(apply_function(_prelu, (input, weight, shape), {}), "Prelu")


def _prelu(x, weight, shape):
    return _ew(E.where, (_ew(E.greater, (x, 0.0)), x, _ew(E.multiply, (sgnp.reshape(weight, shape), x))))


def normalize(input, p=2.0, dim=1, eps=1e-12):
    """input / max(||input||_p along dim, eps); the norm's gradient at a zero vector is 0, as PyTorch's."""
    return labelled(apply_function(_normalize_by_norm, (input, float(p), dim, float(eps)), {}), "Div")


def _normalize_by_norm(x, p, dim, eps):
    powered = _ew(E.square, (x,)) if p == 2 else _ew(E.power, (_ew(E.abs, (x,)), p))
    total = sgnp.sum(powered, axis=dim, keepdims=True)
    nonzero = _ew(E.not_equal, (total, 0.0))  # (a NaN norm stays NaN: PyTorch's max(NaN, eps) is NaN)
    safe = _ew(E.where, (nonzero, total, 1.0))
    norm = _ew(E.where, (nonzero, _ew(E.sqrt, (safe,)) if p == 2 else _ew(E.power, (safe, 1.0 / p)), 0.0))
    return _ew(E.divide, (x, _ew(E.maximum, (norm, eps))))


def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability p (drawn from sg.manual_seed's generator) and scale the rest by
    1 / (1 - p); the identity when not training."""
    if not 0 <= p <= 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0:
        return input
    _refuse_a_mask_drawn_once(input, "dropout")
    keep = random_generator().random(tuple(input.shape)) >= p
    scale = np.where(keep, 1.0 / (1.0 - p) if p < 1 else 0.0, 0.0).astype(input.dtype)
    return _in_place(inplace, input, lambda x: labelled(_ew(E.multiply, (x, scale)), "Mul"))


def _refuse_a_mask_drawn_once(input, name):
    """Dropout in training mode inside sg.compile's trace is an error: its mask would be drawn once, when traced."""
    if isinstance(input, Tracer) and not isinstance(input, Tensor) and input.builder.reads is not None:
        raise UnsupportedOpError(with_user_line(
            f"{name} in training mode inside sg.compile would draw its mask once, when traced, and reuse it at "
            "every call; call model.eval(), or pass the mask as an argument"))


def _channel_dropout(input, p, training, inplace, d, name):
    """Zero whole channels (each (n, c) plane of a batched input, c plane of an unbatched one) with probability p,
    scaling the rest by 1 / (1 - p). dropout2d is PyTorch's feature dropout of any input of 2 or more axes, its
    first two picking the channel (a 3-d input is (N, C, L), a 2-d one is dropped elementwise: pytorch/examples'
    mnist_rnn gives it the (N, 64) output of an LSTM), with PyTorch's deprecation warning off 3-d and 4-d."""
    if not 0 <= p <= 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if d == 2 and input.ndim not in (3, 4):
        warnings.warn(f"dropout2d: Received a {input.ndim}-D input to dropout2d, which is deprecated and will result "
                      "in an error in a future release. To retain the behavior and silence this warning, please use "
                      "dropout instead.", UserWarning, stacklevel=3)
        if input.ndim < 2:
            raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    elif d != 2 and input.ndim not in (d + 1, d + 2):
        raise ValueError(f"{name}: expected a {d + 1}-d (unbatched) or {d + 2}-d (batched) input, got shape "
                         f"{tuple(input.shape)}")
    if not training or p == 0:
        return input
    _refuse_a_mask_drawn_once(input, name)
    channels = tuple(input.shape[:2 if d == 2 or input.ndim == d + 2 else 1])
    keep = random_generator().random(channels) >= p
    scale = np.where(keep, 1.0 / (1.0 - p) if p < 1 else 0.0, 0.0).astype(input.dtype)
    scale = scale.reshape(channels + (1,) * (input.ndim - len(channels)))
    return _in_place(inplace, input, lambda x: labelled(_ew(E.multiply, (x, scale)), "Mul"))


def gumbel_softmax(logits, tau=1.0, hard=False, eps=1e-10, dim=-1):
    """softmax((logits + g) / tau) along dim, g Gumbel noise -log(Exponential(1)) drawn from sg.manual_seed's
    generator; hard: the one-hot of its argmax in the forward pass, the soft sample's gradient in the backward
    (PyTorch's straight-through estimator)."""
    _refuse_a_mask_drawn_once(logits, "gumbel_softmax")
    noise = -np.log(random_generator().exponential(1.0, tuple(logits.shape))).astype(logits.dtype)
    soft = softmax(_ew(E.divide, (_ew(E.add, (logits, noise)), tau)), dim)
    if not hard:
        return soft
    dim = dim % max(soft.ndim, 1)
    peak = np.argmax(np.asarray(soft._data if isinstance(soft, Tensor) else soft), axis=dim)
    one_hot = (np.expand_dims(peak, dim) == np.arange(soft.shape[dim]).reshape(
        (-1,) + (1,) * (soft.ndim - 1 - dim))).astype(soft.dtype)
    return _ew(E.add, (_ew(E.subtract, (one_hot, sgnp.stop_gradient(soft))), soft))


def dropout1d(input, p=0.5, training=True, inplace=False):
    return _channel_dropout(input, p, training, inplace, 1, "dropout1d")


def dropout2d(input, p=0.5, training=True, inplace=False):
    return _channel_dropout(input, p, training, inplace, 2, "dropout2d")


def dropout3d(input, p=0.5, training=True, inplace=False):
    return _channel_dropout(input, p, training, inplace, 3, "dropout3d")


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """sum(x1 x2) / (max(||x1||, eps) max(||x2||, eps)) along dim (inputs broadcast)."""
    return labelled(apply_function(_cosine_similarity, (x1, x2, dim, float(eps)), {}), "Sum")


def _cosine_similarity(x1, x2, dim, eps):
    unit1, unit2 = _normalize_by_norm(x1, 2.0, dim, eps), _normalize_by_norm(x2, 2.0, dim, eps)
    return sgnp.sum(_ew(E.multiply, (unit1, unit2)), axis=dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """||x1 - x2 + eps||_p along the last dimension."""
    return labelled(apply_function(_pairwise_distance, (x1, x2, float(p), float(eps), keepdim), {}), "Norm")


def _pairwise_distance(x1, x2, p, eps, keepdim):
    diff = _ew(E.add, (_ew(E.subtract, (x1, x2)), eps))
    powered = _ew(E.square, (diff,)) if p == 2 else _ew(E.power, (_ew(E.abs, (diff,)), p))
    total = sgnp.sum(powered, axis=-1, keepdims=keepdim)
    return _ew(E.sqrt, (total,)) if p == 2 else _ew(E.power, (total, 1.0 / p))


def pixel_shuffle(input, upscale_factor):
    """(*, C r^2, H, W) -> (*, C, H r, W r)."""
    r = int(upscale_factor)
    *lead, channels, height, width = input.shape
    if channels % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={channels} is not divisible by {r * r}")
    k = len(lead)
    out = sgnp.reshape(input, (*lead, channels // (r * r), r, r, height, width))
    out = sgnp.transpose(out, (*range(k), k, k + 3, k + 1, k + 4, k + 2))
    return sgnp.reshape(out, (*lead, channels // (r * r), height * r, width * r))


def pixel_unshuffle(input, downscale_factor):
    """(*, C, H r, W r) -> (*, C r^2, H, W)."""
    r = int(downscale_factor)
    *lead, channels, height, width = input.shape
    if height % r or width % r:
        raise RuntimeError(f"pixel_unshuffle expects height and width to be divisible by downscale_factor {r}, got "
                           f"{height} and {width}")
    k = len(lead)
    out = sgnp.reshape(input, (*lead, channels, height // r, r, width // r, r))
    out = sgnp.transpose(out, (*range(k), k, k + 2, k + 4, k + 1, k + 3))
    return sgnp.reshape(out, (*lead, channels * r * r, height // r, width // r))


def adaptive_max_pool1d(input, output_size, return_indices=False):
    return _adaptive_max(input, output_size, return_indices, 1)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    return _adaptive_max(input, output_size, return_indices, 2)


def adaptive_max_pool3d(input, output_size, return_indices=False):
    return _adaptive_max(input, output_size, return_indices, 3)


def _adaptive_max(input, output_size, return_indices, d):
    if return_indices:
        raise UnsupportedOpError(f"adaptive_max_pool{d}d: return_indices=True is not supported")
    return _convolution_call(convolution.adaptive_max_pool, "AdaptiveMaxPool2D", (input, output_size), d=d,
                             name=f"adaptive_max_pool{d}d")


def mask_array(mask):
    return None if mask is None else np.asarray(mask._data if isinstance(mask, Tensor) else mask)


def additive_mask(mask, dtype, forbidden_when_true):
    """A mask as scores to add: a boolean one becomes 0 / -inf (True forbidding, or allowing), a float one as is."""
    if mask is None:
        return None
    data = mask_array(mask)
    if data.dtype == np.bool_:
        forbidden = data if forbidden_when_true else ~data
        return np.where(forbidden, -np.inf, 0.0).astype(dtype)
    return mask if isinstance(mask, Tensor) else data.astype(dtype)


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    """softmax(query key^T * scale + mask) value over the last two dimensions (scale 1 / sqrt(E) by default);
    a boolean attn_mask is True where attention is allowed; is_causal masks the upper triangle."""
    if enable_gqa:
        raise UnsupportedOpError("scaled_dot_product_attention: enable_gqa=True is not supported")
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True")
    length, source = query.shape[-2], key.shape[-2]
    if is_causal:
        attn_mask = np.tril(np.ones((length, source), bool))
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    scores = _ew(E.multiply, (sgnp.matmul(query, sgnp.swapaxes(key, -2, -1)), scale))
    bias = additive_mask(attn_mask, query.dtype, forbidden_when_true=False)
    if bias is not None:
        scores = _ew(E.add, (scores, bias))
    weights = softmax(scores, -1)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, True)
    return sgnp.matmul(weights, value)


# ----------------------------------------------------------------------------- normalization and embedding

def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    """Normalize over the batch and spatial axes of (N, C, *spatial): with the batch's statistics (biased
    variance) when training, updating running_mean and running_var in place (momentum; the running variance
    unbiased, as PyTorch), else with the running statistics."""
    if input.ndim < 2:
        raise ValueError(f"batch_norm: expected an input of at least 2 dimensions (N, C, ...), got "
                         f"{tuple(input.shape)}")
    axes = (0, *range(2, input.ndim))
    count = input.size // input.shape[1] if input.shape[1] else 0
    if training and count <= 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {tuple(input.shape)}")
    shape = (1, input.shape[1]) + (1,) * (input.ndim - 2)
    if training or running_mean is None:
        mean, var = apply_function(_batch_statistics, (input, axes), {})
        if running_mean is not None and training:
            _update_running(running_mean, running_var, mean, var, count, momentum)
    else:
        mean, var = running_mean, running_var
    return labelled(apply_function(_normalize, (input, sgnp.reshape(mean, shape), sgnp.reshape(var, shape), weight,
                                                bias, shape, eps), {}), "NativeBatchNorm")


def _batch_statistics(input, axes):
    """Mean and biased variance over axes by the corrected two-pass algorithm: the mean of x - mean, which float32
    sums round to a small fraction of the mean's own error, corrects both (PyTorch sums in float64; a float32 mean's
    error, times |mean| / std, would be the normalized output's)."""
    shape = tuple(1 if a in axes else d for a, d in enumerate(input.shape))
    rough = sgnp.mean(input, axis=axes)
    centered = _ew(E.subtract, (input, sgnp.reshape(rough, shape)))
    correction = sgnp.mean(centered, axis=axes)
    var = _ew(E.subtract, (sgnp.mean(_ew(E.square, (centered,)), axis=axes), _ew(E.square, (correction,))))
    mean = _ew(E.where, (_ew(E.isfinite, (rough,)), _ew(E.add, (rough, correction)), rough))  # (an infinite mean
    # stays itself, PyTorch's: its correction, a mean of inf - inf, is NaN)
    return mean, _ew(E.maximum, (var, 0.0))  # (not below 0 by rounding)


def _update_running(running_mean, running_var, mean, var, count, momentum):
    """running = (1 - momentum) running + momentum batch (momentum None: the cumulative average, which the
    module passes as 1 / batches seen), with the batch variance made unbiased."""
    mean_data = np.asarray(mean._data if hasattr(mean, "_data") else mean)
    var_data = np.asarray(var._data if hasattr(var, "_data") else var) * (count / (count - 1))
    for running, batch in ((running_mean, mean_data), (running_var, var_data)):
        data = running._data if isinstance(running, Tensor) else running
        if not isinstance(data, np.ndarray) or isinstance(batch, Tracer):
            raise TypeError("batch_norm: running statistics are updated in place: pass tensors or NumPy arrays "
                            "(or None) with a concrete input")
        with no_grad():
            updated = (1 - momentum) * data + momentum * batch
            if isinstance(running, Tensor):
                running.copy_(updated.astype(data.dtype))
            else:
                running[...] = updated


def _normalize(input, mean, var, weight, bias, shape, eps):
    """(x - mean) * scale + bias with per-channel scale = weight / sqrt(var + eps). Not x * scale + (bias - mean *
    scale), a pass fewer: it rounds x * scale, large where |mean| >> std, and its gradient for scale is
    sum(g x) - mean sum(g), which cancels (float32 results 2-3x PyTorch's error, which rounds that form once by FMA)."""
    scale = _ew(E.divide, (1.0, _ew(E.sqrt, (_ew(E.add, (var, eps)),))))
    if weight is not None:
        scale = _ew(E.multiply, (scale, sgnp.reshape(weight, shape)))
    out = _ew(E.multiply, (_ew(E.subtract, (input, mean)), scale))
    return out if bias is None else _ew(E.add, (out, sgnp.reshape(bias, shape)))


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Normalize over the last len(normalized_shape) axes (biased variance), then scale and shift."""
    normalized_shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if tuple(input.shape[input.ndim - len(normalized_shape):]) != normalized_shape:
        raise ValueError(f"layer_norm: normalized_shape {list(normalized_shape)} does not end the input shape "
                         f"{list(input.shape)}")
    return labelled(apply_function(_layer_norm, (input, normalized_shape, weight, bias, eps), {}), "NativeLayerNorm")


def _layer_norm(input, normalized_shape, weight, bias, eps):
    axes = tuple(range(input.ndim - len(normalized_shape), input.ndim))
    mean = sgnp.mean(input, axis=axes, keepdims=True)
    centered = _ew(E.subtract, (input, mean))
    var = sgnp.mean(_ew(E.square, (centered,)), axis=axes, keepdims=True)
    out = _ew(E.divide, (centered, _ew(E.sqrt, (_ew(E.add, (var, eps)),))))
    if weight is not None:
        out = _ew(E.multiply, (out, weight))
    return out if bias is None else _ew(E.add, (out, bias))


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """input / sqrt(mean(input**2 over the trailing normalized_shape) + eps), times weight; eps None is the
    machine epsilon of input's dtype (PyTorch's default)."""
    normalized_shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if tuple(input.shape[input.ndim - len(normalized_shape):]) != normalized_shape:
        raise ValueError(f"rms_norm: normalized_shape {list(normalized_shape)} does not end the input shape "
                         f"{list(input.shape)}")
    eps = float(np.finfo(input.dtype).eps) if eps is None else float(eps)
    return labelled(apply_function(_rms_norm, (input, len(normalized_shape), weight, eps), {}), "RmsNorm")


def _rms_norm(input, count, weight, eps):
    axes = tuple(range(input.ndim - count, input.ndim))
    mean_square = sgnp.mean(_ew(E.square, (input,)), axis=axes, keepdims=True)
    out = _ew(E.divide, (input, _ew(E.sqrt, (_ew(E.add, (mean_square, eps)),))))
    return out if weight is None else _ew(E.multiply, (out, weight))


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Normalize (N, C, *spatial) over each example's groups of C / num_groups channels (biased variance), then
    scale and shift per channel."""
    if input.ndim < 2 or not isinstance(num_groups, (int, np.integer)) or num_groups <= 0 or \
            input.shape[1] % num_groups:
        raise ValueError(f"group_norm: expected an input (N, C, ...) with C divisible by num_groups={num_groups!r}, "
                         f"got shape {tuple(input.shape)}")
    if input.shape[0] * input.shape[1] // num_groups * math.prod(input.shape[2:]) == 1:  # PyTorch's check
        raise ValueError(f"Expected more than 1 value per channel when training, got input size "
                         f"{[input.shape[0] * input.shape[1] // num_groups, num_groups, *input.shape[2:]]}")
    return labelled(apply_function(_group_norm, (input, int(num_groups), weight, bias, eps), {}), "NativeGroupNorm")


def _group_norm(input, groups, weight, bias, eps):
    batch, channels = input.shape[:2]
    grouped = sgnp.reshape(input, (batch, groups, input.size // max(batch * groups, 1)))
    out = sgnp.reshape(_layer_norm(grouped, grouped.shape[2:], None, None, eps), tuple(input.shape))
    shape = (1, channels) + (1,) * (input.ndim - 2)
    if weight is not None:
        out = _ew(E.multiply, (out, sgnp.reshape(weight, shape)))
    return out if bias is None else _ew(E.add, (out, sgnp.reshape(bias, shape)))


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    """Normalize each example's channels over their spatial axes (group_norm with a group per channel); the
    running statistics, when given, move towards the batch's average of the instances' (unbiased variance), as
    PyTorch's; without use_input_stats, normalize with the running statistics (batch_norm's eval mode)."""
    if input.ndim < 3:
        raise ValueError(f"instance_norm: expected an input (N, C, *spatial), got shape {tuple(input.shape)}")
    if not use_input_stats:
        return batch_norm(input, running_mean, running_var, weight, bias, False, momentum, eps)
    count = math.prod(input.shape[2:])
    if count <= 1:  # PyTorch's check, with or without running statistics
        raise ValueError(f"Expected more than 1 spatial element when training, got input size {tuple(input.shape)}")
    if running_mean is not None:
        data = np.asarray(input._data if hasattr(input, "_data") else input)
        instances = data.reshape(data.shape[0], data.shape[1], -1)
        _update_running(running_mean, running_var, instances.mean(-1).mean(0), instances.var(-1).mean(0), count,
                        momentum)
    return group_norm(input, input.shape[1], weight, bias, eps)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False, sparse=False):
    """Rows of weight at integer indices; the row at padding_idx gets no gradient (as PyTorch). max_norm: the rows
    looked up whose norm_type-norm exceeds it are first scaled to it in place, without gradient, as PyTorch's."""
    if scale_grad_by_freq or sparse:
        raise UnsupportedOpError("embedding: scale_grad_by_freq and sparse are not supported")
    traced = isinstance(input, Tracer) and not isinstance(input, Tensor)  # indices that are a compiled input
    index = input if traced else np.asarray(input._data if hasattr(input, "_data") else input)
    if index.dtype.kind not in "iu":
        raise TypeError(f"embedding: indices must be integers, got dtype {index.dtype}")
    rows = weight.shape[0]
    if traced:
        if max_norm is not None:
            raise UnsupportedOpError("embedding: max_norm renormalizes the rows looked up before the lookup, which "
                                     "traced indices cannot choose; pass the indices as a NumPy array")
        flat = sgnp.astype(sgnp.reshape(index, (-1,)), np.int64)
        # PyTorch has no negative indices here: they are out of range, an IndexError naming the index as it runs
        flat = wrap_index_p(flat, size=rows, negative=False)
    else:
        if index.size and (index.min() < 0 or index.max() >= rows):
            raise IndexError("index out of range in self")
        if max_norm is not None:
            renorm_rows(weight, np.unique(index), float(max_norm), float(norm_type))
        flat = index.reshape(-1).astype(np.int64)
    if isinstance(weight, Tensor) and not traced:  # the indices' own memory when they are a tensor of int64, as
        # PyTorch's backward reads them (NumPy may write them after the forward: from_numpy), else a tensor of a copy
        flat = input.reshape(-1) if isinstance(input, Tensor) and index.dtype == np.int64 else Tensor._wrap(flat)
    if padding_idx is None:
        picked = take_p(weight, flat, axis=0)
    else:  # one call: its mask of padding positions is computed again from indices NumPy wrote before the backward
        picked = apply_function(_rows_but_padding, (weight, flat, padding_idx % rows), {})
    return labelled(sgnp.reshape(picked, (*index.shape, weight.shape[1])), "Embedding")


def _rows_but_padding(weight, flat, padding_idx):
    """The rows of weight at the indices `flat`, the ones at padding_idx passing no gradient back."""
    picked = take_p(weight, flat, axis=0)
    is_padding = sgnp.reshape(_ew(E.equal, (flat, padding_idx)), (-1, 1))
    return _ew(E.where, (is_padding, sgnp.stop_gradient(picked), picked))


def one_hot(tensor, num_classes=-1):
    """int64 (..., num_classes) with a 1 at each integer class index (num_classes -1: the largest index + 1)."""
    index = np.asarray(tensor._data if hasattr(tensor, "_data") else tensor)
    if index.dtype.kind not in "iu":
        raise TypeError(f"one_hot is only applicable to index tensor of integer dtype, got {index.dtype}")
    if index.size and index.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if num_classes == -1:
        if not index.size:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(index.max()) + 1
    if index.size and index.max() >= num_classes:
        raise RuntimeError(f"Class values must be smaller than num_classes ({num_classes}), got {int(index.max())}")
    return Tensor._wrap((index[..., None] == np.arange(num_classes)).astype(np.int64))


# ----------------------------------------------------------------------------- more losses

def _pairwise_loss(terms, label, input, target, reduction, *args):
    """The loss `terms` (a name in _TERMS) of input - target, reduced: on tensors one cached plan (the name is a plain
    argument), which for smooth_l1 and huber, one op in PyTorch, reads the input at backward (`_one_op`)."""
    if tuple(input.shape) != tuple(np.shape(target)):
        raise ValueError(f"{label}: input shape {tuple(input.shape)} and target shape {tuple(np.shape(target))} "
                         "differ (symgrad does not broadcast them silently)")
    reduced = _reduced_terms if terms == "l1" else _one_op_reduced_terms  # (l1_loss is composite in PyTorch too)
    return labelled(apply_function(reduced, (terms, input, target, reduction, *args), {}), label, (input, target))


def _reduced_terms(terms, input, target, reduction, *args):
    return _reduce(_TERMS[terms](_ew(E.subtract, (input, target)), *args), reduction)


@_one_op
def _one_op_reduced_terms(terms, input, target, reduction, *args):
    return _reduced_terms(terms, input, target, reduction, *args)


def _absolute(diff):
    return _ew(E.abs, (diff,))


def _smooth_l1(diff, beta):
    if beta == 0:
        return _ew(E.abs, (diff,))
    size = _ew(E.abs, (diff,))
    quadratic = _ew(E.divide, (_ew(E.multiply, (0.5, _ew(E.square, (diff,)))), beta))
    return _ew(E.where, (_ew(E.less, (size, beta)), quadratic, _ew(E.subtract, (size, 0.5 * beta))))


def _huber(diff, delta):
    size = _ew(E.abs, (diff,))
    return _ew(E.where, (_ew(E.less, (size, delta)), _ew(E.multiply, (0.5, _ew(E.square, (diff,)))),
                         _ew(E.multiply, (delta, _ew(E.subtract, (size, 0.5 * delta))))))


_TERMS = {"l1": _absolute, "smooth_l1": _smooth_l1, "huber": _huber}


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    reduction = legacy_reduction(size_average, reduce, reduction)
    return _pairwise_loss("l1", "L1Loss", input, target, reduction)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta (beta 0: the L1 loss)."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    if beta < 0:
        raise ValueError("smooth_l1_loss does not support negative values for beta.")
    return _pairwise_loss("smooth_l1", "SmoothL1Loss", input, target, reduction, float(beta))


def huber_loss(input, target, reduction="mean", delta=1.0):
    """0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta)."""
    if delta <= 0:
        raise ValueError("huber_loss does not support non-positive values for delta.")
    return _pairwise_loss("huber", "HuberLoss", input, target, reduction, float(delta))


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """sum target (log target - input) for log-probabilities `input` (terms with target 0 are 0, with a negative
    target NaN); with log_target the target is given as log-probabilities. 'batchmean' divides the sum by the
    batch size."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    terms = apply_function(_kl_terms, (input, target, log_target), {})
    if reduction == "batchmean":
        batch = input.shape[0] if input.ndim else 1
        return labelled(_ew(E.divide, (sgnp.sum(terms), float(batch))), "KlDiv")
    return labelled(_reduce(terms, reduction), "KlDiv")


def _kl_terms(input, target, log_target):
    if log_target:
        return _ew(E.multiply, (_ew(E.exp, (target,)), _ew(E.subtract, (target, input))))
    nonzero = _ew(E.not_equal, (target, 0.0))  # a negative target's log is NaN, as PyTorch's xlogy(t, t)
    log_target_value = _ew(E.log, (_ew(E.where, (nonzero, target, 1.0)),))
    return _ew(E.where, (nonzero, _ew(E.multiply, (target, _ew(E.subtract, (log_target_value, input)))),
                         _ew(E.multiply, (target, _ew(E.negative, (input,))))))


# ----------------------------------------------------------------------------- margin, embedding and likelihood losses

def _loss_call(terms, label, args, reduction):
    """The loss terms through one cached plan, then reduced."""
    return labelled(apply_function(_reduced, (terms, reduction, *args), {}), label)


def _reduced(terms, reduction, *args):
    return _reduce(terms(*args), reduction)


def margin_ranking_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"):
    """max(0, -y (x1 - x2) + margin)."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    return _loss_call(_margin_ranking, "Clamp", (input1, input2, target, float(margin)), reduction)


def _margin_ranking(x1, x2, y, margin):
    return _ew(E.maximum, (_ew(E.add, (_ew(E.negative, (_ew(E.multiply, (y, _ew(E.subtract, (x1, x2)))),)), margin)),
                           0.0))


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    """x where y = 1, max(0, margin - x) where y = -1 (PyTorch's sum of both for other targets)."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    return _loss_call(_hinge_embedding, "Add", (input, target, float(margin)), reduction)


def _hinge_embedding(x, y, margin):
    clamped = _ew(E.maximum, (_ew(E.subtract, (margin, x)), 0.0))
    return _ew(E.add, (_ew(E.where, (_ew(E.not_equal, (y, 1.0)), clamped, 0.0)),
                       _ew(E.where, (_ew(E.not_equal, (y, -1.0)), x, 0.0))))


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """log(1 + exp(-y x))."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    return _loss_call(_soft_margin, "SoftMarginLoss", (input, target), reduction)


def _soft_margin(x, y):
    return _ew(E.softplus, (_ew(E.negative, (_ew(E.multiply, (y, x)),)),))


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """-(y log sigmoid(x) + (1 - y) log sigmoid(-x)), weighted per class, averaged over the classes (dim -1)."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    return _loss_call(_multilabel_soft_margin, "Mean", (input, target, weight), reduction)


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None, reduction="mean"):
    """The multi-class hinge: sum over classes i != y of w[y] max(0, margin - x[y] + x[i])**p, over the classes'
    count; input (N, C) or (C,), class targets (N,) or 0-d; p is 1 or 2, as PyTorch's."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("multi_margin_loss: only p == 1 and p == 2 supported")
    shape = tuple(input.shape)
    if len(shape) not in (1, 2) or 0 in shape[-1:]:
        raise ValueError(f"multi_margin_loss: expected a non-empty 1-d or 2-d input, got shape {list(shape)}")
    target = _concrete_class_targets(target, "multi_margin_loss")
    classes = shape[-1]
    if target.dtype.kind not in "iu" or target.shape != shape[:-1]:
        raise ValueError(f"multi_margin_loss: inconsistent target: class indices of shape {list(shape[:-1])} for "
                         f"an input of shape {list(shape)}, got {target.dtype}{list(target.shape)}")
    if target.size and (target.min() < 0 or target.max() >= classes):
        raise IndexError(f"multi_margin_loss: target out of range for {classes} classes: {target.tolist()}")
    chosen = np.arange(classes) == target[..., None]
    scale = np.ones(target.shape) if weight is None else _class_weights(weight, classes)[target]
    return _loss_call(_multi_margin, "MultiMarginLoss", (input, chosen, scale.astype(input.dtype), int(p),
                                                         float(margin)), reduction)


def _multi_margin(x, chosen, scale, p, margin):
    """The hinge's gradient is 0 where it is 0 (not split at the kink), as PyTorch's."""
    picked = sgnp.sum(_ew(E.where, (chosen, x, 0.0)), axis=-1, keepdims=True)
    z = _ew(E.add, (_ew(E.subtract, (margin, picked)), x))
    hinge = _ew(E.where, (_ew(E.logical_and, (_ew(E.greater, (z, 0.0)), _ew(E.logical_not, (chosen,)))), z, 0.0))
    if p == 2:
        hinge = _ew(E.square, (hinge,))
    total = _ew(E.multiply, (sgnp.sum(hinge, axis=-1), scale))
    return _ew(E.divide, (total, float(x.shape[-1])))


def _multilabel_soft_margin(x, y, weight):
    terms = _ew(E.add, (_ew(E.multiply, (y, _logsigmoid(x))),
                        _ew(E.multiply, (_ew(E.subtract, (1.0, y)), _logsigmoid(_ew(E.negative, (x,)))))))
    terms = _ew(E.negative, (terms,))
    if weight is not None:
        terms = _ew(E.multiply, (terms, weight))
    return _ew(E.divide, (sgnp.sum(terms, axis=-1), float(x.shape[-1])))


def cosine_embedding_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"):
    """1 - cos(x1, x2) where y = 1, max(0, cos(x1, x2) - margin) where y = -1 (cos with PyTorch's 1e-12)."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    return _loss_call(_cosine_embedding, "Where", (input1, input2, target, float(margin)), reduction)


def _cosine_embedding(x1, x2, y, margin):
    dim = x1.ndim - 1
    dot = sgnp.sum(_ew(E.multiply, (x1, x2)), axis=dim)
    squares = [_ew(E.add, (sgnp.sum(_ew(E.square, (x,)), axis=dim), 1e-12)) for x in (x1, x2)]
    cosine = _ew(E.divide, (dot, _ew(E.sqrt, (_ew(E.multiply, tuple(squares)),))))
    positive = _ew(E.where, (_ew(E.equal, (y, 1.0)), _ew(E.subtract, (1.0, cosine)), 0.0))
    negative = _ew(E.where, (_ew(E.equal, (y, -1.0)), _ew(E.maximum, (_ew(E.subtract, (cosine, margin)), 0.0)), 0.0))
    return _ew(E.add, (positive, negative))


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    """max(0, margin + d(a, p) - d(a, n)) with pairwise_distance d (swap: d(a, n) is min(d(a, n), d(p, n)))."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    return _loss_call(_triplet_margin, "Clamp", (anchor, positive, negative, float(margin), float(p), float(eps),
                                                 bool(swap)), reduction)


def _triplet_margin(anchor, positive, negative, margin, p, eps, swap):
    to_positive = _pairwise_distance(anchor, positive, p, eps, False)
    to_negative = _pairwise_distance(anchor, negative, p, eps, False)
    if swap:
        to_negative = _ew(E.minimum, (to_negative, _pairwise_distance(positive, negative, p, eps, False)))
    return _ew(E.maximum, (_ew(E.add, (_ew(E.subtract, (to_positive, to_negative)), margin)), 0.0))


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    """exp(x) - y x (log_input), else x - y log(x + eps); full adds Stirling's y log y - y + log(2 pi y) / 2
    where y > 1."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    return _loss_call(_poisson_nll, "PoissonNllLoss", (input, target, bool(log_input), bool(full), float(eps)),
                      reduction)


def _poisson_nll(x, y, log_input, full, eps):
    if log_input:
        terms = _ew(E.subtract, (_ew(E.exp, (x,)), _ew(E.multiply, (y, x))))
    else:
        terms = _ew(E.subtract, (x, _ew(E.multiply, (y, _ew(E.log, (_ew(E.add, (x, eps)),))))))
    if not full:
        return terms
    safe = _ew(E.where, (_ew(E.greater, (y, 1.0)), y, 1.0))
    stirling = _ew(E.add, (_ew(E.subtract, (_ew(E.multiply, (safe, _ew(E.log, (safe,)))), safe)),
                           _ew(E.multiply, (0.5, _ew(E.log, (_ew(E.multiply, (2 * math.pi, safe)),))))))
    return _ew(E.add, (terms, _ew(E.where, (_ew(E.greater, (y, 1.0)), stirling, 0.0))))


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """(log max(var, eps) + (x - y)^2 / max(var, eps)) / 2 (+ log(2 pi) / 2 with full). As PyTorch's, the clamp
    of var at eps passes its gradient through unchanged."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    var_shape = tuple(np.shape(var)) if not hasattr(var, "shape") else tuple(var.shape)
    if var_shape != tuple(input.shape) and var_shape != tuple(input.shape[:-1]) + (1,) and \
            var_shape != tuple(input.shape[:-1]):
        raise ValueError("var is of incorrect size")
    if var_shape == tuple(input.shape[:-1]) and var_shape != tuple(input.shape):
        var = sgnp.expand_dims(var, -1)
    if isinstance(var, Tracer) and not hasattr(var, "_data"):  # no check at trace time: a negative var gives NaN
        var = sgnp.where(sgnp.less(var, 0.0), np.nan, var)
    elif (np.asarray(var._data if hasattr(var, "_data") else var) < 0).any():
        raise ValueError("var has negative entry/entries")
    return _loss_call(_gaussian_nll, "Mul", (input, target, var, bool(full), float(eps)), reduction)


def _gaussian_nll(x, y, var, full, eps):
    clamped = _ew(E.add, (var, sgnp.stop_gradient(_ew(E.subtract, (_ew(E.maximum, (var, eps)), var)))))
    terms = _ew(E.multiply, (0.5, _ew(E.add, (_ew(E.log, (clamped,)),
                                              _ew(E.divide, (_ew(E.square, (_ew(E.subtract, (x, y)),)), clamped))))))
    return _ew(E.add, (terms, 0.5 * math.log(2 * math.pi))) if full else terms


# ---- PyTorch's randomized activations and self-normalizing dropouts: rrelu (random negative slopes while
# training, their mean in eval), alpha_dropout/feature_alpha_dropout (dropped values set to SELU's negative
# saturation, then an affine map keeping mean and variance); noise from sg.manual_seed's generator
_SELU_SATURATION = 1.7580993408473766  # SELU's scale * alpha: -this is its limit at -inf


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """x where x > 0, else a x: a drawn uniformly from [lower, upper] per element while training (the gradient
    is the slope drawn), (lower + upper) / 2 otherwise (leaky_relu's)."""
    if lower > upper:
        raise RuntimeError(f"Lower bound should be less than or equal to the upper bound, got {lower} > {upper}")
    if not training:
        return _in_place(inplace, input, lambda x: _activation(_leaky_relu, "RreluWithNoise", x,
                                                               (lower + upper) / 2))
    _refuse_a_mask_drawn_once(input, "rrelu")
    slopes = random_generator().uniform(lower, upper, tuple(input.shape)).astype(input.dtype)
    return _in_place(inplace, input, lambda x: _activation(_leaky_relu, "RreluWithNoise", x, slopes))


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    return rrelu(input, lower, upper, training, inplace=True)


def _alpha_dropout(input, p, training, inplace, feature, name):
    """PyTorch's _dropout_impl with alpha: each element (or, with `feature`, each (n, c) plane) kept with
    probability 1 - p, then x a + b, a = 1 / sqrt((alpha^2 p + 1)(1 - p)), b = alpha a (p - dropped)."""
    if not 0 <= p <= 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if feature and input.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    if not training or p == 0 or math.prod(input.shape) == 0:
        return input
    _refuse_a_mask_drawn_once(input, name)
    if p == 1:
        return _in_place(inplace, input, lambda x: labelled(_ew(E.multiply, (x, np.zeros((), input.dtype))), "Mul"))
    shape = tuple(input.shape[:2]) + (1,) * (input.ndim - 2) if feature else tuple(input.shape)
    keep = (random_generator().random(shape) >= p).astype(np.float64)
    a = 1.0 / math.sqrt((_SELU_SATURATION ** 2 * p + 1) * (1 - p))
    scale, shift = (keep * a).astype(input.dtype), ((keep - 1 + p) * _SELU_SATURATION * a).astype(input.dtype)
    return _in_place(inplace, input, lambda x: labelled(_ew(E.add, (_ew(E.multiply, (x, scale)), shift)), "Add"))


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    return _alpha_dropout(input, p, training, inplace, False, "alpha_dropout")


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    return _alpha_dropout(input, p, training, inplace, True, "feature_alpha_dropout")


from .bags import embedding_bag, renorm_rows  # noqa: E402,F401
from .ctc import ctc_loss  # noqa: E402,F401
from .sampling import affine_grid, grid_sample  # noqa: E402,F401
from .local_response import local_response_norm  # noqa: E402,F401
