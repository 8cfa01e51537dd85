"""`F.embedding_bag`: the sum, mean or max of the embedding rows of each bag of indices, with PyTorch's
arguments (2-d input: a bag per row; 1-d input: bags starting at `offsets`). Sums and means are one matrix
product of a (bags, indices) weight matrix with the picked rows, so the gradient reaches the table and the
per-sample weights; a max takes, per bag and column, the first maximal row's element. max_norm (here and in
F.embedding) rescales the rows looked up in place first, as PyTorch's embedding_renorm_."""
from __future__ import annotations

import numpy as np

from .. import numpy_api as sgnp
from ..core import UnsupportedOpError, current_builder, with_user_line
from ..eager.mode import no_grad
from ..eager.tensor import Tensor, _index_array, labelled
from ..ops.indexing import take_p


def _bags(input, offsets, include_last_offset) -> tuple:
    """(flat indices, the bag of each, the number of bags) from PyTorch's input and offsets."""
    index = _index_array(input)
    if index.dtype.kind not in "iu":
        raise TypeError(f"embedding_bag: indices must be integers, got dtype {index.dtype}")
    if index.ndim == 2:
        if offsets is not None:
            raise ValueError("embedding_bag: if input is 2D, then offsets has to be None, as input is treated as a "
                             "mini-batch of fixed length sequences")
        bags, length = index.shape
        return index.reshape(-1), np.repeat(np.arange(bags), length), bags
    if index.ndim != 1 or offsets is None:
        raise ValueError(f"embedding_bag: input has to be 1D (with offsets) or 2D, got shape {index.shape}"
                         + ("" if index.ndim != 1 else " and no offsets"))
    starts = _index_array(offsets).astype(np.int64).reshape(-1)
    if starts.size == 0 or starts[0] != 0:
        raise RuntimeError("embedding_bag: offsets[0] has to be 0, i.e., the first sequence in the mini-batch has "
                           "to start from position 0")
    if starts[-1] > index.size or np.any(np.diff(starts) < 0):
        raise RuntimeError(f"embedding_bag: offsets must be non-decreasing and at most the input's length "
                           f"{index.size}, got {starts.tolist()}")
    bags = starts.size - 1 if include_last_offset else starts.size
    # the last bag runs to the end of input, whatever a last offset says (PyTorch reads only its position)
    ends = np.append(starts[1:bags], index.size)[:bags]
    bag_of = np.repeat(np.arange(bags), ends - starts[:bags])
    return index[:bag_of.size], bag_of, bags


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
                  sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """(bags, embedding_dim): each bag's rows of weight summed, averaged or maximized (an empty bag, or one of
    padding_idx entries only, gives zeros); per_sample_weights (mode 'sum') scale each index's row."""
    if scale_grad_by_freq or sparse:
        raise UnsupportedOpError("embedding_bag: scale_grad_by_freq and sparse are not supported")
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"embedding_bag: mode has to be one of sum, mean or max, got {mode!r}")
    if per_sample_weights is not None and mode != "sum":
        raise UnsupportedOpError(f"embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                 f"supported for mode='sum' (got mode='{mode}')")
    flat, bag_of, bags = _bags(input, offsets, include_last_offset)
    rows = weight.shape[0]
    if flat.size and (flat.min() < 0 or flat.max() >= rows):
        raise IndexError("embedding_bag: index out of range in self")
    if max_norm is not None:
        renorm_rows(weight, np.unique(flat), float(max_norm), float(norm_type))
    keep = np.ones(flat.size, bool) if padding_idx is None else flat != padding_idx % rows
    picked = take_p(weight, flat.astype(np.int64), axis=0)  # (indices, dim)
    if per_sample_weights is not None:
        if tuple(per_sample_weights.shape) != tuple(input.shape):  # a 2-d input's weights are 2-d too
            raise ValueError(f"embedding_bag: per_sample_weights of shape {tuple(per_sample_weights.shape)} should "
                             f"match the input's {tuple(input.shape)}")
        picked = picked * sgnp.reshape(per_sample_weights, (-1, 1))
    if mode == "max":
        return labelled(_bag_max(picked, bag_of, keep, bags), "EmbeddingBag")
    member = np.zeros((bags, flat.size), weight.dtype)
    member[bag_of[keep], np.flatnonzero(keep)] = 1
    if mode == "mean":
        member /= np.maximum(member.sum(1, keepdims=True), 1)
    return labelled(sgnp.matmul(member, picked), "EmbeddingBag")


def _bag_max(picked, bag_of, keep, bags):
    """Per bag and column, the first maximal element among the bag's kept rows (zero for a bag with none)."""
    values = _index_array(picked)
    dim = values.shape[1]
    best = np.zeros((bags, dim), np.int64)
    filled = np.zeros(bags, bool)
    for bag in range(bags):
        members = np.flatnonzero((bag_of == bag) & keep)
        if members.size:
            best[bag] = members[np.argmax(values[members], axis=0)]
            filled[bag] = True
    if values.shape[0] == 0:
        return sgnp.matmul(np.zeros((bags, 0), values.dtype), picked)  # zeros, still a function of the table
    return sgnp.where(filled[:, None], sgnp.take_along_axis(picked, best, 0), 0.0)


def renorm_rows(weight, rows, max_norm, norm_type):
    """PyTorch's embedding_renorm_: each row whose norm exceeds max_norm times max_norm / (norm + 1e-7), written
    into the table under no_grad (a version bump, as any in-place write); the others are left as they are."""
    if not isinstance(weight, Tensor) or current_builder() is not None:
        raise UnsupportedOpError(with_user_line(
            "max_norm rescales rows of the table in place, which needs an eager tensor as weight, outside "
            f"sg.compile/sg.grad (got {type(weight).__name__}{' in a trace' if current_builder() else ''}: a trace "
            "would rescale once, when traced); renormalize the table yourself there, or call the layer eagerly"))
    table = weight.detach().numpy()
    norms = np.linalg.norm(table[rows], ord=norm_type, axis=1)
    over = rows[norms > max_norm]
    if over.size:
        scale = max_norm / (norms[norms > max_norm] + 1e-7)
        with no_grad():
            weight[over] = (table[over] * scale[:, None]).astype(table.dtype)
