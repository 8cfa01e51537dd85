"""`nn.utils.rnn.pad_sequence`: sequences of different lengths padded into one tensor (PackedSequence and
pack_padded_sequence are not supported)."""
from __future__ import annotations

from ... import numpy_api as sgnp
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
