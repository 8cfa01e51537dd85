"""default_collate / default_convert: samples into a batch as PyTorch's (torch.utils.data._utils.collate).

Tensors and arrays are stacked along a new first dimension, Python floats become a float64 tensor, ints an int64
one, bools a bool one; strings stay a list; dicts, named tuples and sequences are collated field by field (a tuple
of fields becomes a list of batches, as in PyTorch).
"""
from __future__ import annotations

import collections.abc

import numpy as np

from ... import dtypes
from ... import numpy_api as sgnp
from ...eager.tensor import Tensor


def default_collate(batch):
    """One batch from a list of samples of the same structure."""
    elem = batch[0]
    if isinstance(elem, Tensor):
        return _stack(batch)
    if isinstance(elem, np.ndarray) and elem.dtype.kind not in "SUO":
        return _stack([Tensor._wrap(_supported(a)) for a in batch])
    if isinstance(elem, np.generic) and not isinstance(elem, (np.str_, np.bytes_)):
        return Tensor._wrap(_supported(np.array(batch)))
    if isinstance(elem, bool):
        return Tensor._wrap(np.array(batch, dtypes.BOOL))
    if isinstance(elem, int):
        return Tensor._wrap(np.array(batch, dtypes.INT64))
    if isinstance(elem, float):
        return Tensor._wrap(np.array(batch, dtypes.FLOAT64))
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        return _same_type(elem, {key: default_collate([sample[key] for sample in batch]) for key in elem})
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(default_collate(list(field)) for field in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(sample) != size for sample in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        fields = [default_collate(list(field)) for field in zip(*batch)]
        if isinstance(elem, tuple):
            return fields
        return _same_type(elem, fields)
    raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
                    f"found {type(elem)}")


def default_convert(data):
    """What DataLoader(batch_size=None) gives per sample: arrays and NumPy numbers become tensors, containers
    are converted element by element, anything else is left as it is."""
    if isinstance(data, np.ndarray) and data.dtype.kind not in "SUO":
        return Tensor._wrap(_supported(data))
    if isinstance(data, np.generic) and not isinstance(data, (np.str_, np.bytes_)):
        return Tensor._wrap(_supported(np.asarray(data)))
    if isinstance(data, collections.abc.Mapping):
        return _same_type(data, {key: default_convert(value) for key, value in data.items()})
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(item) for item in data))
    if isinstance(data, tuple):
        return [default_convert(item) for item in data]  # a list, as PyTorch's
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _same_type(data, [default_convert(item) for item in data])
    return data


def _stack(tensors) -> Tensor:
    """torch.stack(batch): recorded when a sample requires grad, one NumPy stack otherwise."""
    shape = tensors[0].shape
    for position, t in enumerate(tensors):
        if t.shape != shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(shape)} at entry 0 and "
                               f"{list(t.shape)} at entry {position}")
    if any(t.requires_grad for t in tensors):
        return sgnp.stack(list(tensors))
    return Tensor._wrap(np.stack([t._data for t in tensors]))


def _supported(array: np.ndarray) -> np.ndarray:
    return array.astype(dtypes.canonical(array.dtype), copy=False)


def _same_type(template, value):
    """value in the container type of template when that type can be built from it (as PyTorch tries)."""
    try:
        return type(template)(value)
    except TypeError:
        return value
