"""`nn.utils.rnn`: sequences of different lengths padded into one tensor (`pad_sequence`) or packed
(`PackedSequence`, `pack_padded_sequence`, `pack_sequence`, `pad_packed_sequence`), as PyTorch lays them out:
a packed sequence's data holds the first step of every sequence (longest first), then the second step of
those that have one, and so on. Packing and unpacking are gathers at fixed places, so gradients go through;
RNN, LSTM and GRU take a PackedSequence and return one."""
from __future__ import annotations

import collections

import numpy as np

from ... import numpy_api as sgnp
from ...eager.tensor import Tensor, int64_array
from .. import functional as F


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """(longest, batch, *) (or (batch, longest, *)) from tensors of shapes (L_i, *), padded with padding_value."""
    if padding_side not in ("right", "left"):
        raise ValueError(f"padding_side must be 'left' or 'right', got {padding_side!r}")
    sequences = list(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    longest = max(s.shape[0] for s in sequences)
    padded = []
    for s in sequences:
        extra = longest - s.shape[0]
        widths = (0, 0) * (s.ndim - 1) + ((0, extra) if padding_side == "right" else (extra, 0))
        padded.append(F.pad(s, widths, value=padding_value) if extra else s)
    return sgnp.stack(padded, axis=0 if batch_first else 1)


class PackedSequence(collections.namedtuple("PackedSequence", ["data", "batch_sizes", "sorted_indices",
                                                                "unsorted_indices"])):
    """Packed steps (data), how many sequences reach each step (batch_sizes), and the order of the sequences by
    decreasing length (sorted_indices; None when they were given in that order) with its inverse."""

    __slots__ = ()

    def __new__(cls, data, batch_sizes, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None and sorted_indices is not None:
            unsorted_indices = Tensor._wrap(np.argsort(int64_array(sorted_indices)))
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def lengths(self) -> np.ndarray:
        """Each sequence's length, in the order given (not sorted)."""
        sizes = int64_array(self.batch_sizes)
        by_length = (np.arange(sizes[0])[:, None] < sizes[None, :]).sum(1)
        return by_length if self.unsorted_indices is None else by_length[int64_array(self.unsorted_indices)]

    def order(self) -> np.ndarray:
        count = int64_array(self.batch_sizes)[0]
        return np.arange(count) if self.sorted_indices is None else int64_array(self.sorted_indices)


def _packed_places(batch_sizes, order, batch) -> np.ndarray:
    """The place in a time-major (longest * batch) flattening of each packed row."""
    return np.concatenate([t * batch + order[:size] for t, size in enumerate(batch_sizes)]) \
        if len(batch_sizes) else np.zeros(0, np.int64)


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """A PackedSequence of a padded (longest, batch, *) (or (batch, longest, *)) tensor and each sequence's length."""
    lengths = int64_array(lengths).reshape(-1)
    if enforce_sorted and np.any(np.diff(lengths) > 0):
        raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You "
                           "can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep "
                           "this requirement.")
    x = sgnp.swapaxes(input, 0, 1) if batch_first else input
    longest, batch = x.shape[0], x.shape[1]
    if lengths.size != batch or (lengths.size and (lengths.min() <= 0 or lengths.max() > longest)):
        raise RuntimeError(f"pack_padded_sequence: expected {batch} lengths in 1..{longest} (every sequence "
                           f"non-empty), got {lengths.tolist()}")
    order = np.arange(batch) if enforce_sorted else np.argsort(-lengths, kind="stable")
    batch_sizes = (lengths[None, :] > np.arange(int(lengths.max()))[:, None]).sum(1)
    sorted_indices = None if enforce_sorted else Tensor._wrap(order.astype(np.int64))
    return packed_like(x, PackedSequence(None, Tensor._wrap(batch_sizes.astype(np.int64)), sorted_indices))


def packed_like(padded, packed) -> PackedSequence:
    """A time-major padded (longest, batch, *) tensor packed with the batch sizes and order of `packed`."""
    longest, batch = padded.shape[0], padded.shape[1]
    places = _packed_places(int64_array(packed.batch_sizes), packed.order(), batch)
    data = sgnp.take(sgnp.reshape(padded, (longest * batch, *padded.shape[2:])), places, axis=0)
    return packed._replace(data=data)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """(padded tensor, lengths) of a PackedSequence, the sequences in their original order."""
    batch_sizes, order = int64_array(sequence.batch_sizes), sequence.order()
    longest, batch = len(batch_sizes), int(batch_sizes[0])
    if total_length is not None:
        if total_length < longest:
            raise ValueError(f"Expected total_length to be at least the length of the longest sequence {longest}, "
                             f"got total_length={total_length}")
        longest = total_length
    source = np.full(longest * batch, -1, np.int64)
    source[_packed_places(batch_sizes, order, batch)] = np.arange(int(batch_sizes.sum()))
    picked = sgnp.take(sequence.data, np.maximum(source, 0), axis=0)
    feature_axes = (1,) * (sequence.data.ndim - 1)
    padded = sgnp.where((source >= 0).reshape(-1, *feature_axes), picked,
                        sgnp.astype(padding_value, sequence.data.dtype))
    padded = sgnp.reshape(padded, (longest, batch, *sequence.data.shape[1:]))
    return (sgnp.swapaxes(padded, 0, 1) if batch_first else padded), Tensor._wrap(sequence.lengths())


def pack_sequence(sequences, enforce_sorted=True):
    """A PackedSequence of tensors of shapes (L_i, *)."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The tensors of shapes (L_i, *) a PackedSequence holds."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return [padded[i, :int(n)] for i, n in enumerate(int64_array(lengths))]
