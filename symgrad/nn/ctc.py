"""`F.ctc_loss`: the connectionist temporal classification loss, -log of the total probability of every
alignment of each target to its input (blanks between and around the labels, repeats merged), by the forward
(alpha) recursion in log space over tensors, so the gradient is reverse-mode differentiation of that recursion.

It is the true derivative with respect to log_probs. PyTorch's CTC backward instead returns exp(log_probs) minus
the alignment posteriors (it assumes log_probs come from log_softmax): through a log_softmax, the way CTC is
used, the two give the same gradient of the logits."""
from __future__ import annotations

import numpy as np

from .. import numpy_api as sgnp
from ..eager.tensor import int64_array, labelled


def _logsumexp(terms):
    """log(sum(exp(terms))) elementwise over a list of same-shape values, -inf (with a zero gradient, not NaN)
    where every term is -inf."""
    peak = terms[0]
    for term in terms[1:]:
        peak = sgnp.maximum(peak, term)
    peak = sgnp.stop_gradient(sgnp.where(sgnp.isfinite(peak), peak, 0.0))
    total = sum(sgnp.exp(term - peak) for term in terms)
    positive = total > 0
    return sgnp.where(positive, peak + sgnp.log(sgnp.where(positive, total, 1.0)), -np.inf)


def _extended_targets(targets, target_lengths, batch, blank) -> np.ndarray:
    """(N, 2 S + 1) labels with blanks between and around each target (padded with blanks past its length)."""
    data = int64_array(targets)
    longest = int(target_lengths.max(initial=0))
    labels = np.full((batch, longest), blank, np.int64)
    if data.ndim == 2:
        if data.shape[1] < longest:
            raise RuntimeError(f"ctc_loss: targets of shape {data.shape} are shorter than target_lengths "
                               f"{target_lengths.tolist()}")
        for n, length in enumerate(target_lengths):
            labels[n, :length] = data[n, :length]
    else:
        if data.size < target_lengths.sum():
            raise RuntimeError(f"ctc_loss: concatenated targets hold {data.size} labels, target_lengths sum to "
                               f"{int(target_lengths.sum())}")
        starts = np.concatenate([[0], np.cumsum(target_lengths)])
        for n, length in enumerate(target_lengths):
            labels[n, :length] = data[starts[n]:starts[n] + length]
    extended = np.full((batch, 2 * longest + 1), blank, np.int64)
    extended[:, 1::2] = labels
    return extended


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    """log_probs (T, N, C) (or (T, C)), targets (N, S) padded or 1-d concatenated, the lengths per example; the
    loss per example ('none'), summed, or each divided by its target length and averaged ('mean')."""
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    unbatched = log_probs.ndim == 2
    if unbatched:
        log_probs = sgnp.expand_dims(log_probs, 1)
        targets = int64_array(targets).reshape(1, -1)
    if log_probs.ndim != 3:
        raise RuntimeError(f"ctc_loss: log_probs must be (T, N, C) or (T, C), got shape {tuple(log_probs.shape)}")
    steps, batch, classes = log_probs.shape
    input_lengths, target_lengths = (int64_array(lengths).reshape(-1) for lengths in (input_lengths, target_lengths))
    if input_lengths.size != batch or target_lengths.size != batch:
        raise RuntimeError(f"ctc_loss: expected {batch} input_lengths and target_lengths, got "
                           f"{input_lengths.size} and {target_lengths.size}")
    if np.any(input_lengths > steps) or np.any(input_lengths < 0) or np.any(target_lengths < 0):
        raise RuntimeError(f"ctc_loss: input_lengths {input_lengths.tolist()} must be in 0..{steps} and "
                           f"target_lengths {target_lengths.tolist()} non-negative")
    if not 0 <= blank < classes:
        raise RuntimeError(f"ctc_loss: blank must be in label range 0..{classes - 1}, got {blank}")
    extended = _extended_targets(targets, target_lengths, batch, blank)
    width = extended.shape[1]
    # the label two places back may be skipped to when both are labels and differ
    skip = np.zeros((batch, width), bool)
    skip[:, 2:] = (extended[:, 2:] != blank) & (extended[:, 2:] != extended[:, :-2])
    index = np.broadcast_to(extended[None], (steps, batch, width))
    emissions = sgnp.take_along_axis(log_probs, index, 2)  # (T, N, 2 S + 1)
    start = np.full((batch, width), -np.inf)
    start[:, :2] = 0
    alpha = sgnp.where(start == 0, emissions[0], -np.inf)
    for t in range(1, steps):
        previous = [alpha, sgnp.pad(alpha, ((0, 0), (1, 0)), constant_values=-np.inf)[:, :width],
                    sgnp.where(skip, sgnp.pad(alpha, ((0, 0), (2, 0)), constant_values=-np.inf)[:, :width], -np.inf)]
        advanced = _logsumexp(previous) + emissions[t]
        alpha = sgnp.where((t < input_lengths)[:, None], advanced, alpha)
    last = 2 * target_lengths
    ends = sgnp.take_along_axis(alpha, np.stack([last, np.maximum(last - 1, 0)], 1), 1)
    ends = sgnp.where(np.stack([np.ones(batch, bool), last > 0], 1), ends, -np.inf)
    loss = -_logsumexp([ends[:, 0], ends[:, 1]])
    loss = sgnp.where(input_lengths > 0, loss, np.where(target_lengths > 0, np.inf, 0.0))  # no steps at all
    if zero_infinity:
        loss = sgnp.where(sgnp.isinf(loss), 0.0, loss)
    if reduction == "sum":
        loss = sgnp.sum(loss)
    elif reduction == "mean":
        loss = sgnp.mean(loss / np.maximum(target_lengths, 1).astype(np.dtype(log_probs.dtype)))
    elif unbatched:
        loss = loss[0]
    return labelled(loss, "CtcLoss")

