"""Tensor methods with PyTorch's meaning where the NumPy-style method of traced values means something else
or is missing: `sort`/`argsort`/`topk`/`median`/`kthvalue`/`cummax` (values and indices), `chunk`/`split`/
`unbind`, `flip`, `roll`, `repeat` (torch's tile), `cumsum(dim)`, `gather`/`scatter`/`scatter_reduce`/`index_add`/
`index_reduce`, the `new_*` factories, `inverse`/`det`/`slogdet` and more. Values are gathers at the computed
indices, so the gradient goes to the element moved into each place. Installed on Tensor when the symgrad.eager
package is imported (before any of its modules is used).
"""
from __future__ import annotations

import collections
import functools
import inspect
import itertools

import numpy as np

from .. import linalg as sglinalg
from .. import numpy_api as sgnp
from ..numpy_api import arrays
from ..numpy_api.torch_keywords import first_axis_of_size_3
from ..ops import elementwise as E
from .mode import is_grad_enabled
from .torch_functions import bmm
from .tensor import (Tensor, _axis, _dim, _index_array, _settle, alias, as_view, elementwise_on_tensors,
                     labelled, values_indices, view_labelled)


def _order(data, dim, descending, stable=True) -> np.ndarray:
    """Indices sorting data along dim, ties in their original order; NaN counts as the largest (PyTorch)."""
    if not descending:
        return np.argsort(data, axis=dim, kind="stable")
    # descending and stable: the ascending stable order of the reversed axis, read backwards
    reversed_order = np.argsort(np.flip(data, dim), axis=dim, kind="stable")
    return data.shape[dim] - 1 - np.flip(reversed_order, dim)


def sort(self, dim=-1, descending=False, stable=False):
    """(values, indices) along dim, as torch.sort (equal elements keep their order whatever `stable` says)."""
    if self.ndim == 0:
        return values_indices(self.clone(), np.zeros((), np.int64), "Sort")
    dim = _dim(dim, self.ndim)
    indices = _order(self._data, dim, descending).astype(np.int64)
    return values_indices(sgnp.take_along_axis(self, indices, dim), indices, "Sort")


def argsort(self, dim=-1, descending=False, stable=False, *, axis=None, kind=None, order=None):
    """torch's argsort(dim, descending); NumPy's keywords (np.argsort(t, axis=...)) give NumPy's."""
    if axis is not None or kind is not None or order is not None:
        return sgnp.argsort(self, -1 if axis is None else axis, kind, order)
    if self.ndim == 0:
        return Tensor._wrap(np.zeros((), np.int64))
    return Tensor._wrap(_order(self._data, _dim(dim, self.ndim), descending).astype(np.int64))


def topk(self, k, dim=-1, largest=True, sorted=True):
    """The k largest (or smallest) elements along dim and their indices, largest first (ties: first index first)."""
    dim = _dim(dim, max(self.ndim, 1))
    length = self.shape[dim] if self.ndim else 1
    if not 0 <= k <= length:
        raise RuntimeError(f"topk: k={k} is out of range for dimension {dim} of size {length}")
    if self.ndim == 0:
        return sort(self)
    picked = np.take(_order(self._data, dim, descending=largest), np.arange(k), axis=dim).astype(np.int64)
    return values_indices(sgnp.take_along_axis(self, picked, dim), picked, "Topk")


def _pieces(self, sizes, dim):
    """Consecutive slices of the given sizes along dim (a tuple of tensors). The bounds are Python ints: a key of
    ints and slices of them is replayed from a cached plan (Tensor.__getitem__), one of NumPy ints is not."""
    starts = [0, *itertools.accumulate(sizes)]
    before = (slice(None),) * dim
    return tuple(self[before + (slice(start, end),)] for start, end in zip(starts[:-1], starts[1:]))


def split(self, split_size_or_sections, dim=0):
    """Pieces of split_size along dim (the last may be smaller), or of the listed sizes (torch.split)."""
    dim = _dim(dim, self.ndim)
    length = self.shape[dim]
    if isinstance(split_size_or_sections, (int, np.integer)):
        size = int(split_size_or_sections)
        if size <= 0 and length:
            raise RuntimeError(f"split: split_size must be positive, got {size}")
        sizes = [min(size, length - start) for start in range(0, length, size)] if length else [0]
    else:
        sizes = [int(s) for s in split_size_or_sections]
        if sum(sizes) != length or any(s < 0 for s in sizes):
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {length} (input tensor's "
                               f"size at dimension {dim}), but got split_sizes={sizes}")
        return tuple(view_labelled(piece, self, "SplitWithSizes") for piece in _pieces(self, sizes, dim))
    return tuple(view_labelled(piece, self, "Split") for piece in _pieces(self, sizes, dim))


def chunk(self, chunks, dim=0):
    """At most `chunks` pieces of ceil(size / chunks) along dim, as torch.chunk (so possibly fewer); an empty
    dim gives `chunks` empty pieces, as PyTorch's."""
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    dim = _dim(dim, self.ndim)
    length = self.shape[dim]
    if length == 0:
        return tuple(view_labelled(piece, self, "Split") for piece in _pieces(self, [0] * int(chunks), dim))
    return split(self, -(-length // chunks), dim)


def unbind(self, dim=0):
    """The slices along dim, that dimension removed."""
    dim = _dim(dim, self.ndim)
    return tuple(view_labelled(sgnp.take(self, i, axis=dim), self, "Unbind") for i in range(self.shape[dim]))


def flip(self, *dims):
    """A copy with dims reversed, as PyTorch's (NumPy's flip is a view: a write to t.flip(0) changed t)."""
    dims = dims[0] if len(dims) == 1 and not isinstance(dims[0], (int, np.integer)) else dims
    index = [slice(None)] * self.ndim
    for d in (dims,) if isinstance(dims, (int, np.integer)) else dims:
        if self.ndim:  # (a 0-d tensor takes dim 0 or -1, and is itself flipped)
            index[_dim(d, self.ndim)] = slice(None, None, -1)
    return labelled(self[tuple(index)].clone(), "Flip")


def __reversed__(self):
    """reversed(t): t flipped along its first dimension, a tensor (PyTorch's; d2l's bidirectional RNN runs its
    backward direction on reversed(inputs)); a 0-d tensor is itself."""
    return self if self.ndim == 0 else flip(self, 0)


def fliplr(self):
    return flip(self, 1)


def flipud(self):
    return flip(self, 0)


def rot90(self, k=1, dims=(0, 1)):
    """A copy of self rotated by 90 degrees k times in the plane of dims, as PyTorch's (NumPy's is a view)."""
    grid = np.rot90(np.arange(self.numel()).reshape(tuple(self.shape)), k, dims)
    return labelled(sgnp.reshape(sgnp.take(sgnp.reshape(self, (-1,)), grid.ravel()), grid.shape), "Rot90")


def roll(self, shifts, dims=None):
    return sgnp.roll(self, shifts, dims)


_NUMPY_CALL = object()  # np.repeat(t, n) calls t.repeat(n, axis=...): NumPy's meaning


def repeat(self, *sizes, axis=_NUMPY_CALL):
    """torch's repeat: the tensor tiled `sizes` times; np.repeat(t, n, axis) keeps NumPy's meaning."""
    if axis is not _NUMPY_CALL:
        return sgnp.repeat(self, *sizes, axis=axis)
    sizes = tuple(sizes[0]) if len(sizes) == 1 and not isinstance(sizes[0], (int, np.integer)) else sizes
    if len(sizes) < self.ndim:
        raise RuntimeError(f"Number of dimensions of repeat dims can not be smaller than number of dimensions of "
                           f"tensor: repeat{tuple(sizes)} of a {self.ndim}-d tensor (NumPy's repeat: pass axis=)")
    tiled = sgnp.tile(self, sizes)
    # a new tensor, as PyTorch's: not a broadcast view (a 1-sized axis repeated), which refused in-place writes, nor
    # with no repeats a view of self, which they changed; a repeated axis of more elements is a copy already
    if all(size == 1 for size in sizes) or not tiled.is_contiguous():
        tiled = tiled.clone(_row_major=True)
    return labelled(tiled, "Repeat")


def _cumulative(numpy_form, name):
    def method(self, dim=None, *, dtype=None, axis=None, out=None):
        if self.ndim == 0 and out is None:  # (NumPy's cumsum of a 0-d value is 1-d; PyTorch's is 0-d)
            result = sgnp.reshape(numpy_form(self, _dim(_axis(dim, axis), 0), dtype=dtype), ())
        else:
            result = numpy_form(self, _axis(dim, axis), dtype=dtype, out=out)
        if name == "cumsum" and out is None and result.dtype.kind == "f":
            result = labelled(result + 0.0, "Cumsum")  # PyTorch's sums start from +0: a leading -0.0 is +0.0
        return result
    method.__name__ = name
    method.__doc__ = f"torch's {name}(dim) (NumPy's {name}(axis) too)."
    return method


def _check_bounds(index, dim, size, error=RuntimeError, name=""):
    """PyTorch's refusal of an index out of 0..size-1 (a negative one too: NumPy would count it from the end)."""
    if index.size and (index.min() < 0 or index.max() >= size):
        bad = int(index.min()) if index.min() < 0 else int(index.max())
        raise error(f"{name}index {bad} is out of bounds for dimension {dim} with size {size}")


def _scatter_index(self, dim, index):
    """The full index of torch.scatter: index's values along dim, its own positions along the other axes."""
    index = _index_array(index).astype(np.int64)
    dim = _dim(dim, self.ndim)
    if index.ndim == 0 and self.ndim == 1:  # PyTorch takes a 0-d index as one of one element (a one-hot's
        index = index.reshape(1)             # zeros(10).scatter_(0, tensor(y), value=1))
    if index.ndim != self.ndim:
        raise RuntimeError(f"scatter: index has {index.ndim} dimensions, the tensor {self.ndim}")
    _check_bounds(index, dim, self.shape[dim])
    grid = list(np.indices(index.shape, sparse=True))
    grid[dim] = index
    return tuple(grid), index.shape


def _of_one_element(method, label, self, dim, index, *args, **kwargs):
    """method of a 0-d self as of a tensor of one element, reshaped back (PyTorch takes a 0-d self, index and src)."""
    _dim(dim, 0)
    result = method(sgnp.reshape(self, (1,)), 0, index, *args, **kwargs)
    return labelled(sgnp.reshape(result, ()), label, (self, *(a for a in args if isinstance(a, Tensor))))


def gather(self, dim, index):
    """self[index] along dim, per position of index (torch.gather: take_along_axis of self cut to index's size
    along the other dimensions, which may be smaller); a 0-d index of a 1-d tensor gives a 0-d result."""
    if self.ndim == 0:
        return _of_one_element(gather, "Gather", self, dim, index)
    index = _index_array(index).astype(np.int64)
    dim = _dim(dim, self.ndim)
    if index.ndim == 0 and self.ndim == 1:
        return labelled(sgnp.reshape(gather(self, dim, index.reshape(1)), ()), "Gather")
    if index.ndim != self.ndim or any(i > s for d, (i, s) in enumerate(zip(index.shape, self.shape)) if d != dim):
        raise RuntimeError(f"gather: index of shape {index.shape} must have the tensor's {self.ndim} dimensions, "
                           f"none larger than the tensor's {tuple(self.shape)} except dimension {dim}")
    _check_bounds(index, dim, self.shape[dim])
    cut = tuple(slice(None) if d == dim else slice(0, n) for d, n in enumerate(index.shape))
    source = self if all(n == s for n, s in zip(index.shape, self.shape)) else self[cut]
    return labelled(sgnp.take_along_axis(source, index, dim), "Gather")


def _source(name, src, shape, like):
    """src's elements for the index's shape (a number: filled with it); a tensor of another dtype than self is
    PyTorch's error (a float64 src was cast into a float32 self)."""
    if isinstance(src, (int, float, bool, np.number)):
        return np.full(shape, src, like.dtype)
    if src.dtype != like.dtype:
        raise RuntimeError(f"{name}(): Expected self.dtype to be equal to src.dtype (self is {like.dtype}, src "
                           f"{src.dtype})")
    if src.ndim == 0 and len(shape) == 1:  # a 0-d src with a 0-d index, as PyTorch takes them
        src = sgnp.reshape(src, (1,))
    return src[tuple(slice(0, n) for n in shape)]


def scatter(self, dim, index, src=None, *, value=None, reduce=None):
    """A copy with src's elements (or value) written at index along dim (torch.scatter, out of place)."""
    if reduce is not None:
        raise RuntimeError("scatter: reduce= (deprecated in PyTorch) is not supported; use scatter_reduce")
    if self.ndim == 0:
        return _of_one_element(scatter, "Scatter", self, dim, index, src, value=value)
    key, shape = _scatter_index(self, dim, index)
    return labelled(self.at[key].set(_source("scatter", value if src is None else src, shape, self)), "Scatter")


def scatter_add(self, dim, index, src):
    """A copy with src's elements added at index along dim (repeated indices add up)."""
    if self.ndim == 0:
        return _of_one_element(scatter_add, "ScatterAdd", self, dim, index, src)
    key, shape = _scatter_index(self, dim, index)
    return labelled(self.at[key].add(_source("scatter_add", src, shape, self)), "ScatterAdd")


def _scatter_extremum(self, key, src, reduce, include_self):
    """amax/amin of the elements scattered to each place (self's too with include_self): the sum of those equal
    to the result over their count, so that the gradient is split evenly among the ties as PyTorch's (summed with
    the result's sign, so that a -0.0 stays one); a place whose result is NaN gives all its elements a NaN gradient
    (PyTorch's 0/0)."""
    data, values = self._data, np.asarray(src._data if isinstance(src, Tensor) else src)  # (sg.ones gives an array)
    touched = np.zeros(self.shape, bool)
    touched[key] = True
    result = np.where(touched, np.nan, data) if not include_self else data.copy()
    (np.fmax if reduce == "amax" else np.fmin).at(result, key, values)  # (NaN spreads next, as PyTorch's)
    lost = np.zeros(self.shape, bool)
    np.logical_or.at(lost, key, np.isnan(values))
    result[lost | np.isnan(data) & (include_self | ~touched)] = np.nan
    tied_self = touched & ((data == result) | np.isnan(result)) if include_self else np.zeros(self.shape, bool)
    tied_src = (values == result[key]) | np.isnan(result[key])
    count = (tied_self & (data == result)).astype(data.dtype)
    np.add.at(count, key, tied_src & (values == result[key]))
    sign = np.where(np.signbit(result), -1, 1).astype(data.dtype)
    total = sgnp.where(tied_self, self * sign, 0).at[key].add(sgnp.where(tied_src, src * sign[key], 0)) * sign
    return sgnp.where(touched, total / np.where(count == 0, np.nan, count), self)


def scatter_reduce(self, dim, index, src, reduce, *, include_self=True):
    """src's elements reduced into self at index along dim (torch.scatter_reduce: sum, prod, mean, amax, amin),
    with self's element when include_self, else self's only where nothing is scattered. The gradient is PyTorch's
    (amax/amin: split evenly among the elements equal to the result; mean: over the count with self's)."""
    if reduce not in ("sum", "prod", "mean", "amax", "amin"):
        raise RuntimeError(f"scatter_reduce: reduce must be sum, prod, mean, amax or amin, not {reduce!r}")
    if self.ndim == 0:
        return _of_one_element(scatter_reduce, "ScatterReduce", self, dim, index, src, reduce,
                               include_self=include_self)
    key, shape = _scatter_index(self, dim, index)
    src = _source("scatter_reduce", src, shape, self)
    if reduce in ("amax", "amin") and self.dtype.kind == "f":
        return labelled(_scatter_extremum(self, key, src, reduce, include_self), "ScatterReduce", (self, src))
    if reduce in ("amax", "amin") and self.dtype.kind not in "iu":
        raise NotImplementedError(f"symgrad's scatter_reduce {reduce} takes float or integer tensors, not {self.dtype}")
    touched = np.zeros(self.shape, bool)
    touched[key] = True
    bounds = np.iinfo(self.dtype) if reduce in ("amax", "amin") else None  # (integers: no gradient to split)
    identity = {"prod": 1, "amax": bounds and bounds.min, "amin": bounds and bounds.max}.get(reduce, 0)
    base = self if include_self else sgnp.where(touched, np.array(identity, self.dtype), self)
    update = {"prod": "multiply", "amax": "max", "amin": "min"}.get(reduce, "add")
    out = getattr(base.at[key], update)(src)
    if reduce == "mean":
        count = np.full(self.shape, int(include_self), np.int64)
        np.add.at(count, key, 1)
        count = np.maximum(count, 1)
        out = out / count if self.dtype.kind == "f" else sgnp.floor_divide(out, count)
    return labelled(sgnp.astype(out, self.dtype), "ScatterReduce", (self, src))


def index_reduce(self, dim, index, source, reduce, *, include_self=True):
    """torch.index_reduce: source's slices along dim reduced into self's at index (prod, mean, amax, amin), which
    is scatter_reduce with the index spread over source's other axes (a GraphSAGE-style mean of neighbours)."""
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    dim = _dim(dim, self.ndim)
    index = _index_array(index).astype(np.int64).reshape(-1)
    shape = tuple(np.shape(source))
    spread = np.broadcast_to(index.reshape([-1 if axis == dim else 1 for axis in range(len(shape))]), shape)
    return scatter_reduce(self, dim, spread, source, reduce, include_self=include_self)

def _new(fill):
    def method(self, *size, fill_value=None, dtype=None, device=None, requires_grad=False, layout=None,
               pin_memory=False):
        from .random import new_tensor, sizes  # random imports tensor, which imports this module
        if fill is None:  # new_full(size, fill_value)
            size, fill_value = (size[0], size[1]) if len(size) == 2 else (size[0], fill_value)
            size = (size,)
        value = 0 if fill == "empty" else (fill if fill is not None else fill_value)
        shape = sizes(size, method.__name__)
        return new_tensor(np.full(shape, value), self.dtype if dtype is None else dtype, device, requires_grad,
                          method.__name__)
    method.__name__ = {0: "new_zeros", 1: "new_ones", None: "new_full", "empty": "new_empty"}[fill]
    method.__doc__ = f"{method.__name__}(size, ...): a new tensor of this one's dtype (new_empty: zeros)."
    return method


def new_tensor(self, data, dtype=None, device=None, requires_grad=False):
    from .random import new_tensor as make
    return make(np.array(data._data if isinstance(data, Tensor) else data), self.dtype if dtype is None else dtype,
                device, requires_grad, "new_tensor")


def view_as(self, other):
    return sgnp.reshape(self, tuple(other.shape))


def expand_as(self, other):
    return sgnp.broadcast_to(self, tuple(other.shape))


def where(self, condition, other):
    """self where condition, else other (torch's Tensor.where)."""
    return labelled(sgnp.where(condition, self, other), "Where", (self, other))


def masked_select(self, mask):
    """The elements where mask (broadcast) is true, as a 1-d tensor in row-major order."""
    mask = np.broadcast_to(_index_array(mask).astype(bool), np.broadcast_shapes(self.shape, np.shape(_index_array(mask))))
    return labelled(sgnp.broadcast_to(self, mask.shape)[mask], "MaskedSelect")


def nonzero(self, *, as_tuple=False):
    """The indices of the nonzero elements: (count, ndim) int64, or one 1-d tensor per dimension."""
    found = np.nonzero(self._data) if self.ndim else np.nonzero(self._data.reshape(1))
    if as_tuple:
        return tuple(Tensor._wrap(axis.astype(np.int64)) for axis in found)
    return Tensor._wrap(np.stack(found, axis=1).astype(np.int64) if self.ndim else
                        np.zeros((len(found[0]), 0), np.int64))


def _extremes(reduce, name):
    def method(self, dim=(), keepdim=False):
        axes = None if dim == () or dim is None or dim == [] else dim
        if self.ndim == 0:  # its one element reduced, as PyTorch's (a copy's gradient was 1 at a NaN: PyTorch's NaN)
            for d in (() if axes is None else [axes] if isinstance(axes, (int, np.integer)) else axes):
                _dim(d, 0)
            return labelled(sgnp.reshape(reduce(sgnp.reshape(self, (1,)), axis=0), ()), name)
        return labelled(reduce(self, axis=tuple(axes) if isinstance(axes, list) else axes, keepdims=keepdim), name)
    method.__name__ = name.lower()
    method.__doc__ = f"torch's {name.lower()}(dim, keepdim): the {'largest' if 'x' in name else 'smallest'} " \
                     "values, the gradient shared among ties."
    return method


def tril(self, diagonal=0):
    return sgnp.tril(self, diagonal)


def triu(self, diagonal=0):
    return sgnp.triu(self, diagonal)


def movedim(self, source, destination):
    if self.ndim == 0:  # dim 0 or -1 of a 0-d tensor, as PyTorch takes them: its view (NumPy has no axis there)
        _dim(source, 0), _dim(destination, 0)
        return sgnp.reshape(self, ())
    return sgnp.moveaxis(self, source, destination)


def swapaxes(self, dim0, dim1):
    return self.transpose(dim0, dim1)


def tile(self, *dims):
    """torch's tile: repeat, with 1s before `dims` when they are fewer than the axes."""
    dims = tuple(dims[0]) if len(dims) == 1 and not isinstance(dims[0], (int, np.integer)) else dims
    return self.repeat((1,) * (self.ndim - len(dims)) + tuple(dims))


def repeat_interleave(self, repeats, dim=None, *, output_size=None):
    """Each element repeated `repeats` times (an int or one count per element) along dim (flattened if None)."""
    repeats = _index_array(repeats) if isinstance(repeats, Tensor) else repeats
    return sgnp.repeat(self, repeats, axis=dim)


def lerp(self, end, weight):
    """self + weight (end - self), written as PyTorch's kernel writes it (from the nearer end)."""
    difference = end - self
    weight = weight if isinstance(weight, Tensor) else float(weight)
    near_start = self + weight * difference
    near_end = end - difference * (1 - weight)
    small = (weight < 0.5) if isinstance(weight, Tensor) else weight < 0.5
    return near_start if small is True else (near_end if small is False else sgnp.where(small, near_start, near_end))


def addcmul(self, tensor1, tensor2, *, value=1):
    return self + value * (tensor1 * tensor2)


def addcdiv(self, tensor1, tensor2, *, value=1):
    return self + value * (tensor1 / tensor2)


def nan_to_num(self, nan=0.0, posinf=None, neginf=None):
    return sgnp.nan_to_num(self, nan=nan, posinf=posinf, neginf=neginf)


def diff(self, n=1, dim=-1, prepend=None, append=None):
    extra = {key: value for key, value in (("prepend", prepend), ("append", append)) if value is not None}
    return sgnp.diff(self, n, dim, **extra)


def _picked(self, dim, keepdim, position, name, nan_wins=False):
    """(values, indices) of the element sorted into `position` along dim (ties: the first index); with nan_wins,
    a slice holding NaN picks its first NaN (PyTorch's median)."""
    if self.ndim == 0:
        return values_indices(self.clone(), np.zeros((), np.int64), name)
    dim = _dim(dim, self.ndim)
    order = _order(self._data, dim, descending=False)
    indices = np.take(order, [position], axis=dim).astype(np.int64)
    if nan_wins:
        nan = np.isnan(self._data)
        indices = np.where(nan.any(axis=dim, keepdims=True), np.argmax(nan, axis=dim, keepdims=True), indices)
    values = sgnp.take_along_axis(self, indices, dim)
    if not keepdim:
        values, indices = sgnp.squeeze(values, dim), np.squeeze(indices, dim)
    return values_indices(values, indices, name)


def median(self, dim=None, keepdim=False):
    """The lower median (PyTorch's: no averaging of the two middle elements), NaN where there is one; with dim,
    (values, indices). Without dim the gradient is shared among the elements equal to it (the NaNs, where there
    are), as PyTorch's."""
    if dim is not None:
        length = self.shape[_dim(dim, self.ndim)] if self.ndim else 1
        return _picked(self, dim, keepdim, (length - 1) // 2, "Median", nan_wins=True)
    data = self._data.reshape(-1)
    if data.size == 0:
        return labelled(sgnp.reshape(sgnp.sum(self) * np.nan, ()), "Median")
    equal = np.isnan(self._data)
    if not equal.any():
        equal = self._data == np.sort(data)[(data.size - 1) // 2]
    return labelled(sgnp.sum(sgnp.where(equal, self, 0.0)) / float(equal.sum()), "Median")


def kthvalue(self, k, dim=-1, keepdim=False):
    """The k-th smallest element along dim (k from 1) and its index."""
    length = self.shape[_dim(dim, self.ndim)] if self.ndim else 1
    if not 1 <= k <= length:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {dim} of size {length}")
    return _picked(self, dim, keepdim, k - 1, "Kthvalue")


def _cumulative_extreme(accumulate, name):
    def method(self, dim):
        """(values, indices): the running extreme along dim, the index of its latest occurrence (PyTorch's); values
        are self's at the indices, so the gradient goes to that element."""
        dim = _dim(dim, max(self.ndim, 1))
        data = self._data if self.ndim else self._data.reshape(1)
        running = accumulate(data, axis=dim)
        places = np.arange(data.shape[dim]).reshape((-1,) + (1,) * (data.ndim - 1 - dim))
        reached = data == running
        if data.dtype.kind == "f":  # a NaN is the extreme from there on, and a later NaN takes its place (PyTorch's)
            reached |= np.isnan(data)
        indices = np.maximum.accumulate(np.where(reached, places, 0), axis=dim).astype(np.int64)
        values = sgnp.take_along_axis(self if self.ndim else sgnp.reshape(self, (1,)), indices, dim)
        if not self.ndim:
            values, indices = sgnp.reshape(values, ()), indices.reshape(())
        return values_indices(values, indices, name)
    method.__name__ = name.lower()
    return method


def _index_update(kind):
    def method(self, dim, index, source, *, alpha=1):
        dim = _dim(dim, self.ndim)
        index = _index_array(index).astype(np.int64).reshape(-1)
        if kind == "add" and index.size and (index.min() < 0 or index.max() >= self.shape[dim]):
            raise IndexError("index out of range in self")  # (PyTorch's words; index_fill counts -1 from the end)
        if kind == "copy":
            _check_bounds(index, dim, self.shape[dim], IndexError, "index_copy_(): ")
        key = (slice(None),) * dim + (index,)
        if kind == "fill":
            return labelled(self.at[key].set(source), "IndexFill")
        if kind == "copy":
            return labelled(self.at[key].set(source), "IndexCopy")
        return labelled(self.at[key].add(source if alpha == 1 else source * alpha), "IndexAdd")
    method.__name__ = f"index_{kind}"
    method.__doc__ = f"torch's index_{kind} (out of place): a copy with source written along dim at index."
    return method


def unique(self, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The distinct values, sorted (no gradient, as PyTorch's), with the inverse indices and counts if asked."""
    found = np.unique(self._data, return_inverse=return_inverse, return_counts=return_counts, axis=dim)
    found = found if isinstance(found, tuple) else (found,)
    wrapped = [Tensor._wrap(found[0])]
    wrapped += [Tensor._wrap(np.asarray(extra, np.int64).reshape(self.shape if dim is None and position == 1
                                                                   and return_inverse else -1))
                for position, extra in enumerate(found[1:], start=1)]
    return wrapped[0] if len(wrapped) == 1 else tuple(wrapped)


def multinomial(self, num_samples, replacement=False, *, generator=None):
    """Indices drawn by the (unnormalized) probabilities of each row (sg.manual_seed's generator, so not
    PyTorch's draws)."""
    from .random import numpy_generator  # random imports tensor, which imports this module
    rows = self._data.reshape(-1, self.shape[-1]) if self.ndim else None
    if rows is None or self.ndim > 2:
        raise RuntimeError("multinomial: prob_dist must be 1 or 2 dim")
    if not replacement and num_samples > rows.shape[1]:
        raise RuntimeError("multinomial: cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    if (rows < 0).any() or not np.isfinite(rows).all() or (rows.sum(axis=1) <= 0).any():
        raise RuntimeError("multinomial: probability tensor contains either `inf`, `nan` or element < 0, or a row "
                           "sums to 0")
    rng = numpy_generator(generator)
    drawn = np.stack([rng.choice(rows.shape[1], num_samples, replace=replacement, p=row / row.sum())
                      for row in rows]).astype(np.int64)
    return Tensor._wrap(drawn.reshape(self.shape[:-1] + (num_samples,)))


def bernoulli(self, p=None, *, generator=None):
    """1.0 with probability self (or p) per element, else 0.0, in self's dtype."""
    from .random import numpy_generator
    probability = self._data if p is None else np.broadcast_to(np.asarray(p, self.dtype), self.shape)
    if ((probability < 0) | (probability > 1)).any():
        raise RuntimeError("bernoulli: all elements of the probability must be in [0, 1]")
    return Tensor._wrap((numpy_generator(generator).random(self.shape) < probability).astype(self.dtype))


def _in_place(name):
    def method(self, *args, **kwargs):
        return self._inplace(lambda source: getattr(Tensor, name)(source, *args, **kwargs))
    method.__name__ = name + "_"
    method.__doc__ = f"{name} written into this tensor (PyTorch's {name}_; its version is bumped)."
    return method


def _random_fill(draw):
    def method(self, *args, generator=None):
        from .random import numpy_generator
        return self.copy_(draw(numpy_generator(generator), tuple(self.shape), *args))
    return method


def fill_diagonal_(self, fill_value, wrap=False):
    """fill_value on the main diagonal of a 2-d tensor (wrap: again every columns + 1 rows of a tall one)."""
    if self.ndim != 2:
        raise RuntimeError("fill_diagonal_: only 2-d tensors are supported here")
    rows, columns = self.shape
    mask = np.eye(rows, columns, dtype=bool)
    if wrap and rows > columns:
        mask = np.zeros((rows, columns), bool)
        places = np.arange(rows)
        keep = places % (columns + 1) < columns
        mask[places[keep], (places % (columns + 1))[keep]] = True
    return self._inplace(lambda source: sgnp.where(mask, sgnp.astype(fill_value, self.dtype), source))


def addmm(self, mat1, mat2, *, beta=1, alpha=1):
    """beta self + alpha (mat1 @ mat2)."""
    product = sgnp.matmul(mat1, mat2)
    return (self if beta == 1 else self * beta) + (product if alpha == 1 else product * alpha)


def narrow(self, dim, start, length):
    dim = _dim(dim, self.ndim)
    start = start + self.shape[dim] if start < 0 else start
    if not 0 <= start <= start + length <= self.shape[dim]:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({self.shape[dim]}).")
    return self[(slice(None),) * dim + (slice(start, start + length),)]


def diagonal(self, offset=0, dim1=0, dim2=1):
    """torch.diagonal: the diagonal as the last dimension, a view of self (a write to it reaches self)."""
    dim1, dim2 = _dim(dim1, self.ndim), _dim(dim2, self.ndim)
    values = sgnp.diagonal(self, offset, dim1, dim2)
    if not isinstance(values, Tensor):  # traced
        return values
    return as_view(labelled(values, "Diagonal"), self, np.diagonal(self._data, offset, dim1, dim2))


def select(self, dim, index):
    return view_labelled(sgnp.take(self, int(index), axis=_dim(dim, self.ndim)), self, "Select")


def unflatten(self, dim, sizes):
    dim = _dim(dim, self.ndim)
    return sgnp.reshape(self, tuple(self.shape[:dim]) + tuple(sizes) + tuple(self.shape[dim + 1:]))


def cross(self, other, dim=None):
    """The cross product along dim (None: the first dimension of size 3, PyTorch's old default)."""
    dim = first_axis_of_size_3(self.shape) if dim is None else dim
    if dim is None:
        raise RuntimeError(f"no dimension of size 3 in input of shape {tuple(self.shape)}")
    return sgnp.cross(self, other, axis=dim)


def allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(np.allclose(self._data, _index_array(other), rtol=rtol, atol=atol, equal_nan=equal_nan))


def isclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return Tensor._wrap(np.isclose(self._data, _index_array(other), rtol=rtol, atol=atol, equal_nan=equal_nan))


def equal(self, other):
    """True when other has the same shape and elements (torch.equal)."""
    other = _index_array(other)
    return self.shape == other.shape and bool((self._data == other).all())


def count_nonzero(self, dim=None):
    axes = _axis(dim, None)
    return Tensor._wrap(np.asarray(np.count_nonzero(self._data, axis=tuple(axes) if type(axes) is list else axes),
                                   np.int64))


def logical_xor(self, other):
    return elementwise_on_tensors(E.logical_xor, (self, other))


def half(self):
    raise TypeError("symgrad has no float16 tensors: use .float() (float32) or .double()")


def stride(self, dim=None):
    """The C-order strides in elements that PyTorch gives a contiguous tensor of this shape (every tensor
    here is contiguous): a dimension's stride is the product of the later sizes, a size 0 counted as 1."""
    strides, step = [], 1
    for size in reversed(self.shape):
        strides.append(step)
        step *= max(size, 1)
    strides = tuple(reversed(strides))
    return strides if dim is None else strides[_dim(dim, self.ndim)]


def _becomes(self, result) -> "Tensor":
    """self rebound to an out-of-place result (a metadata change: t_, unsqueeze_, squeeze_, transpose_): the
    old array is not written, so what earlier ops saved of it stays valid; a leaf requiring grad is refused."""
    if is_grad_enabled() and self._requires_grad and self._node is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    _settle(self)
    self._data, self._node, self._requires_grad = result._data, result._node, result._requires_grad
    self._version = result._version
    return self


def _metadata_in_place(name):
    def method(self, *args, **kwargs):
        return _becomes(self, getattr(Tensor, name)(self, *args, **kwargs))
    method.__name__ = name + "_"
    method.__doc__ = f"self becomes self.{name}(...) (PyTorch's {name}_, a change of shape only)."
    return method


def resize_(self, *sizes):
    """self's elements in flat order, cut or extended (with zeros; PyTorch leaves them uninitialized) to the
    new shape. Not recorded, as in PyTorch, which refuses a tensor requiring grad."""
    sizes = tuple(sizes[0]) if len(sizes) == 1 and not isinstance(sizes[0], (int, np.integer)) else sizes
    if self._requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    if any(int(n) < 0 for n in sizes):
        raise RuntimeError(f"resize_: sizes must be non-negative, got {list(sizes)}")
    flat = np.zeros(int(np.prod(sizes, dtype=np.int64)), self.dtype)
    kept = min(flat.size, self.numel())
    flat[:kept] = self._data.reshape(-1)[:kept]
    self._data = flat.reshape(tuple(int(n) for n in sizes))
    self._version.value += 1
    return self


def _bitwise(name, op, reflected=False):
    """torch's bitwise op on integer and boolean tensors (and Python ints and bools): the elementwise op, recorded
    as any (booleans take the logical op). A float operand is refused, as in PyTorch."""
    def method(self, *others):
        operands = (*others, self) if reflected else (self, *others)
        kinds = {np.asarray(o._data if isinstance(o, Tensor) else o).dtype.kind for o in operands}
        if kinds & set("fc"):
            raise RuntimeError(f'"{name}" is not implemented for float tensors: it takes integer or boolean '
                               f"tensors (got {[str(o.dtype) if isinstance(o, Tensor) else o for o in operands]})")
        return elementwise_on_tensors(op, operands)
    method.__name__ = name
    method.__doc__ = f"torch's {name} (np.{op.name}) on integer or boolean tensors, no gradient."
    return method


def bincount(self, weights=None, minlength=0):
    """How often each value 0..max occurs in a 1-d tensor of non-negative integers (or the sum of `weights`
    at its occurrences, in weights' dtype), at least minlength long. Not differentiable, as in PyTorch."""
    data = self._data
    if data.ndim != 1 or data.dtype.kind not in "iub" or (data.size and data.min() < 0):
        raise RuntimeError(f"bincount only supports 1-d non-negative integral inputs (got shape "
                           f"{list(self.shape)}, dtype {self.dtype})")
    if weights is None:
        return Tensor._wrap(np.bincount(data, minlength=minlength).astype(np.int64))
    weights = _index_array(weights)
    if weights.shape != data.shape:
        raise RuntimeError(f"bincount: weights of shape {list(weights.shape)} should match the input's "
                           f"{list(data.shape)}")
    dtype = weights.dtype if weights.dtype.kind == "f" else np.dtype(np.float64)
    return Tensor._wrap(np.bincount(data, weights, minlength).astype(dtype))


def histc(self, bins=100, min=0, max=0):
    """A histogram of `bins` equal bins over [min, max] (the data's own range when min == max), elements
    outside ignored, the last bin closed: PyTorch's bin of x is floor((x - min) * bins / (max - min))."""
    data = self._data
    if data.dtype.kind != "f":
        raise RuntimeError(f'"histogram_cpu" not implemented for {self.dtype} tensors: histc takes floats')
    if bins <= 0 or min > max:
        raise RuntimeError(f"histc: bins must be > 0 and min <= max (got bins={bins}, min={min}, max={max})")
    low, high = float(min), float(max)
    if low == high and data.size:
        low, high = float(data.min()), float(data.max())
    if low == high:
        low, high = low - 1, high + 1
    kept = data[(data >= low) & (data <= high)].astype(np.float64)
    index = np.minimum(((kept - low) * bins / (high - low)).astype(np.int64), bins - 1)
    return Tensor._wrap(np.bincount(index, minlength=bins).astype(self.dtype))


for _method in (sort, argsort, topk, split, chunk, unbind, flip, fliplr, flipud, rot90, __reversed__, roll, repeat,
                gather, scatter, scatter_add, scatter_reduce, index_reduce, new_tensor, view_as, expand_as, where,
                masked_select, nonzero, tril, triu, movedim, swapaxes, tile, half, repeat_interleave, lerp, addcmul,
                addcdiv, nan_to_num, diff, median, kthvalue, unique, multinomial, bernoulli):
    setattr(Tensor, _method.__name__, _method)
for _fill in (0, 1, None, "empty"):
    _method = _new(_fill)
    setattr(Tensor, _method.__name__, _method)
for _name in ("masked_fill", "scatter", "scatter_add", "scatter_reduce", "index_add", "index_fill", "index_copy",
              "index_reduce",
              "relu", "exp", "log", "sqrt", "abs", "neg", "sigmoid", "tanh", "sin", "cos", "floor", "ceil", "trunc",
              "round", "lerp", "addcmul", "addcdiv", "nan_to_num", "reciprocal", "square", "sign", "log1p", "expm1",
              "rsqrt", "clamp_min", "clamp_max", "where", "tril", "triu", "cumsum", "logical_and", "logical_or",
              "logical_not", "logical_xor"):
    setattr(Tensor, _name + "_", _in_place(_name))
Tensor.clip_ = Tensor.clamp_
Tensor.uniform_ = _random_fill(lambda rng, shape, a=0.0, b=1.0: rng.uniform(a, b, shape))
Tensor.normal_ = _random_fill(lambda rng, shape, mean=0.0, std=1.0: rng.normal(mean, std, shape))
Tensor.bernoulli_ = _random_fill(lambda rng, shape, p=0.5: (rng.random(shape) < np.asarray(p)).astype(float))
Tensor.exponential_ = _random_fill(lambda rng, shape, lambd=1.0: rng.exponential(1.0 / lambd, shape))
Tensor.fill_diagonal_ = fill_diagonal_
for _method in (addmm, diagonal, narrow, select, unflatten, cross, allclose, isclose, equal, count_nonzero, logical_xor):
    setattr(Tensor, _method.__name__, _method)
for _name, _function in {"outer": sgnp.outer, "inner": sgnp.inner, "mv": sgnp.matmul, "bmm": bmm,
                         "broadcast_to": sgnp.broadcast_to,
                         "take_along_dim": lambda t, indices, dim=None: sgnp.take_along_axis(  # (None: both flat)
                             t, _index_array(indices).reshape(-1) if dim is None else _index_array(indices), dim),
                         "nansum": sgnp.nansum, "nanmean": sgnp.nanmean, "diag": sgnp.diag, "kron": sgnp.kron,
                         "float_power": lambda t, exponent: sgnp.power(sgnp.astype(t, np.float64), exponent),
                         "positive": lambda t: t, "msort": lambda t: sort(t, 0).values,
                         "split_with_sizes": lambda t, sizes, dim=0: split(t, list(sizes), dim)}.items():
    setattr(Tensor, _name, _function)
for _name, _op in {"sgn": E.sign, "absolute": E.abs, "arccos": E.arccos, "arcsin": E.arcsin, "arctan": E.arctan,
                   "arcsinh": E.arcsinh, "arccosh": E.arccosh, "arctanh": E.arctanh, "asinh": E.arcsinh,
                   "acosh": E.arccosh, "atanh": E.arctanh, "digamma": E.digamma, "lgamma": E.gammaln}.items():
    setattr(Tensor, _name, (lambda op: lambda self: elementwise_on_tensors(op, (self,)))(_op))
Tensor.mT = property(lambda self: sgnp.swapaxes(self, -2, -1))
Tensor.is_complex = lambda self: False  # symgrad has no complex tensors
Tensor.is_signed = lambda self: self.dtype.kind in "if"
Tensor.is_cpu = property(lambda self: True)
Tensor.is_xpu = Tensor.is_mps = Tensor.is_meta = property(lambda self: False)  # (pytorch/examples' dcgan asks is_xpu)
Tensor.get_device = lambda self: -1  # PyTorch's answer for a CPU tensor
Tensor.itemsize = property(lambda self: self.dtype.itemsize)
Tensor.nbytes = property(lambda self: self.numel() * self.dtype.itemsize)
Tensor.cummax = _cumulative_extreme(np.maximum.accumulate, "Cummax")
Tensor.cummin = _cumulative_extreme(np.minimum.accumulate, "Cummin")
for _kind in ("add", "fill", "copy"):
    _method = _index_update(_kind)
    setattr(Tensor, _method.__name__, _method)
Tensor.reshape_as, Tensor.moveaxis, Tensor.swapdims = view_as, movedim, swapaxes
Tensor.amax, Tensor.amin = _extremes(sgnp.max, "Amax"), _extremes(sgnp.min, "Amin")
Tensor.nelement, Tensor.ndimension = Tensor.numel, Tensor.dim
Tensor.clamp_min = lambda self, min: labelled(sgnp.maximum(self, min), "ClampMin")
Tensor.clamp_max = lambda self, max: labelled(sgnp.minimum(self, max), "ClampMax")
for _name, _op in {"isnan": E.isnan, "isinf": E.isinf, "isfinite": E.isfinite, "floor": E.floor, "ceil": E.ceil,
                   "trunc": E.trunc, "log2": E.log2, "log10": E.log10, "logical_and": E.logical_and,
                   "logical_or": E.logical_or, "logical_not": E.logical_not, "multiply": E.multiply,
                   "subtract": E.subtract, "divide": E.divide, "negative": E.negative, "greater": E.greater,
                   "less": E.less, "greater_equal": E.greater_equal, "less_equal": E.less_equal,
                   "not_equal": E.not_equal, "atan2": E.arctan2, "arctan2": E.arctan2, "erfc": E.erfc,
                   "erfinv": E.erfinv, "exp2": E.exp2, "fmod": E.fmod, "remainder": E.mod,
                   "logit": E.logit, "hypot": E.hypot, "signbit": E.signbit, "logaddexp": E.logaddexp,
                   "sinc": E.sinc, "deg2rad": E.deg2rad, "rad2deg": E.rad2deg, "copysign": E.copysign,
                   "fmax": E.fmax, "fmin": E.fmin, "heaviside": E.heaviside, "xlogy": E.xlogy}.items():
    setattr(Tensor, _name, (lambda op: lambda self, *args: elementwise_on_tensors(op, (self, *args)))(_op))
Tensor.cumsum = _cumulative(arrays.cumsum, "cumsum")
Tensor.cumprod = _cumulative(arrays.cumprod, "cumprod")
for _method in (stride, resize_, bincount, histc):
    setattr(Tensor, _method.__name__, _method)
for _name in ("t", "unsqueeze", "squeeze", "transpose", "swapdims", "swapaxes"):
    setattr(Tensor, _name + "_", _metadata_in_place(_name))
for _name, _op in (("and", E.bitwise_and), ("or", E.bitwise_or), ("xor", E.bitwise_xor),
                   ("left_shift", E.left_shift), ("right_shift", E.right_shift)):
    _method = _bitwise("bitwise_" + _name, _op)
    setattr(Tensor, "bitwise_" + _name, _method)
    setattr(Tensor, "bitwise_" + _name + "_", _in_place("bitwise_" + _name))
    _operator = {"left_shift": "lshift", "right_shift": "rshift"}.get(_name, _name)
    setattr(Tensor, f"__{_operator}__", _method)
    setattr(Tensor, f"__r{_operator}__", _bitwise("bitwise_" + _name, _op, reflected=True))
    setattr(Tensor, f"__i{_operator}__", getattr(Tensor, "bitwise_" + _name + "_"))
Tensor.bitwise_not = Tensor.__invert__ = _bitwise("bitwise_not", E.invert)
Tensor.bitwise_not_ = _in_place("bitwise_not")


def frac(self):
    """self minus its integer part, sign kept (torch.frac; gradient 1)."""
    _floats_only("frac", self)
    return labelled(self - self.trunc(), "Frac")


def _on_booleans(op, form):
    """Tensor method `op` with PyTorch's meaning on a boolean tensor, `form` of it, where NumPy's (sg.<op>) differs:
    sign() copies the truth values (NumPy refuses booleans), square() is int64 (NumPy's int8)."""
    elementwise = getattr(Tensor, op)

    def method(self):
        return form(self) if self.dtype == np.bool_ else elementwise(self)
    method.__name__ = op
    return method


def _floats_only(name, t):
    """PyTorch's error for an op defined on floating-point tensors only, given an integer or boolean one."""
    if t.dtype.kind not in "fc":
        raise RuntimeError(f'"{name}" not implemented for {t.dtype} tensors: it takes floating-point tensors')


def take(self, index):
    """The elements of self at flat row-major `index` (negatives count from the end), of index's shape."""
    index, size = _index_array(index), self.numel()
    _check_bounds(np.where(index < 0, index + size, index), 0, size, IndexError)
    return labelled(sgnp.take(sgnp.reshape(self, (-1,)), index % max(size, 1)), "Take")


_AMINMAX = collections.namedtuple("aminmax", ["min", "max"])


def aminmax(self, *, dim=None, keepdim=False):
    """(min, max) over dim, or over every element: amin's and amax's values, the gradient shared among ties."""
    dims = () if dim is None else dim
    return _AMINMAX(self.amin(dims, keepdim), self.amax(dims, keepdim))


def logcumsumexp(self, dim):
    """log(cumsum(exp(self))) along dim, as rounds of logaddexp with the element `shift` places before, shift
    doubling (a parallel prefix scan): no exp overflows or underflows, as one shift by the largest element let
    the elements far below it (1 before 1000) underflow to -inf."""
    _floats_only("logcumsumexp", self)
    dim = _dim(dim, self.ndim)
    length = self.shape[dim] if self.ndim else 0  # (PyTorch's of a 0-d tensor is a copy)
    total, shift = self.clone(), 1
    while shift < max(length, 2 if length else 0):  # one round at least, as at -inf PyTorch's gradient is NaN
        padding = np.full(self.shape[:dim] + (shift,) + self.shape[dim + 1:], -np.inf,
                          np.result_type(self.dtype, np.float16))
        before = total[(slice(None),) * dim + (slice(None, length - shift),)]
        total = sgnp.logaddexp(total, sgnp.concatenate([padding, before], axis=dim))
        shift *= 2
    return labelled(total, "Logcumsumexp")


def unfold(self, dimension, size, step):
    """The windows of `size` elements along `dimension`, `step` apart, as a new last dimension: a view of self
    (torch.Tensor.unfold), its values gathered from self so that the gradient reaches each window's elements."""
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    data = self._data if self.ndim else self._data.reshape(1)
    dim = _dim(dimension, self.ndim)
    if not 0 <= size <= data.shape[dim]:
        raise RuntimeError(f"maximum size for tensor at dimension {dim} is {data.shape[dim]} but size is {size}")
    windows = np.lib.stride_tricks.sliding_window_view(data, size, axis=dim, writeable=True)
    windows = windows[(slice(None),) * dim + (slice(None, None, step),)]
    if not self.ndim:
        windows = windows[0]
    starts = np.arange(0, data.shape[dim] - size + 1, step)
    index = (starts[:, None] + np.arange(size)).reshape(-1)
    source = self if self.ndim else sgnp.reshape(self, (1,))
    picked = sgnp.take(source, index, axis=dim)
    values = sgnp.moveaxis(sgnp.reshape(picked, data.shape[:dim] + (len(starts), size) + data.shape[dim + 1:]),
                           dim + 1, -1)
    if not self.ndim:
        values = sgnp.reshape(values, windows.shape)
    return as_view(labelled(values, "Unfold"), self, windows)


def index_put(self, indices, values, accumulate=False):
    """self with `values` at self[indices] (a tuple of index tensors), or added there with accumulate (repeated
    positions summing), as torch.index_put."""
    key = tuple(_index_array(i) if isinstance(i, Tensor) else i for i in indices)
    at = self.at[key]
    return labelled(at.add(values) if accumulate else at.set(values), "IndexPut")


def masked_scatter(self, mask, source):
    """self with source's leading elements, in row-major order, at the places mask (broadcast) is true."""
    mask = np.broadcast_to(_index_array(mask).astype(bool), self.shape)
    count = int(mask.sum())
    if source.numel() < count:
        raise RuntimeError(f"masked_scatter: expected source to have at least {count} elements, got {source.numel()}")
    if count == 0:
        return labelled(self.clone(), "MaskedScatter")
    order = np.maximum(np.cumsum(mask.reshape(-1)) - 1, 0).reshape(self.shape)
    return labelled(sgnp.where(mask, sgnp.take(sgnp.reshape(source, (-1,)), order), self), "MaskedScatter")


def argwhere(self):
    """The indices of the nonzero elements as a (count, ndim) int64 tensor: nonzero's (torch.argwhere)."""
    return nonzero(self)


def diag_embed(self, offset=0, dim1=-2, dim2=-1):
    """Matrices with self's last dimension on their diagonal (torch.diag_embed); zeros elsewhere, also beside a
    NaN or an infinity. Only the default offset and dims."""
    for dim in (dim1, dim2):  # dims of the result: a 0-d self's has no dim -2 (PyTorch's IndexError)
        _dim(dim, self.ndim + 1)
    if (offset, dim1, dim2) != (0, -2, -1):
        raise NotImplementedError("symgrad's diag_embed takes only offset=0, dim1=-2, dim2=-1")
    size = self.shape[-1]
    column = sgnp.expand_dims(self, -1)
    return labelled(sgnp.where(np.eye(size, dtype=bool), column, sgnp.zeros((), self.dtype)), "DiagEmbed")


def _own_result(method, make):
    """method, giving `make(self)` where it gave self back (an op that changes nothing: a reshape to self's shape, a
    sum over the one axis of a 0-d tensor): PyTorch's ops give a tensor of their own, so that an in-place write to
    the result does not write self (a reduction's result is a copy) and requires_grad_ on it is not self's. (Not
    flatten: PyTorch's gives self when start_dim == end_dim.)"""
    @functools.wraps(method)
    def wrapped(self, *args, **kwargs):
        result = method(self, *args, **kwargs)
        if result is self:
            return make(self)
        if isinstance(result, tuple) and any(r is self for r in result):
            return type(result)(*(make(self) if r is self else r for r in result))
        return result
    return wrapped


for _name in ("view", "reshape", "unflatten", "squeeze", "expand", "expand_as", "view_as", "reshape_as",
              "permute", "transpose", "swapaxes", "swapdims", "movedim", "moveaxis", "narrow", "__getitem__", "split",
              "chunk", "ravel", "broadcast_to"):
    if hasattr(Tensor, _name):
        setattr(Tensor, _name, _own_result(getattr(Tensor, _name), alias))
for _name in ("sum", "mean", "prod", "amax", "amin", "max", "min", "median", "nansum", "nanmean", "logsumexp",
              "cumsum", "cumprod"):
    setattr(Tensor, _name, _own_result(getattr(Tensor, _name), Tensor.clone))


def _numpy_keywords(method):
    """method, also taking NumPy's axis= and keepdims= for its dim= and keepdim=, as PyTorch's argument parser does
    for every method with a dim (t.std(axis=1), t.softmax(axis=0), t.median(axis=1, keepdims=True)); a method
    with an axis= of its own (NumPy's meaning: argsort's) is left alone."""
    try:
        parameters = inspect.signature(method).parameters
    except (TypeError, ValueError):
        return method
    renames = {old: new for old, new in (("axis", "dim"), ("keepdims", "keepdim"))
               if new in parameters and old not in parameters}
    if "dim" not in renames.values():
        return method

    @functools.wraps(method)
    def wrapped(self, *args, **kwargs):
        for old, new in renames.items():
            if old in kwargs:
                if new in kwargs:
                    raise TypeError(f"{method.__name__}() got {new}= and its alias {old}=")
                kwargs[new] = kwargs.pop(old)
        return method(self, *args, **kwargs)
    return wrapped


for _method in (frac, take, aminmax, logcumsumexp, unfold, index_put, masked_scatter, argwhere, diag_embed):
    setattr(Tensor, _method.__name__, _method)
Tensor.sign, Tensor.sgn = _on_booleans("sign", Tensor.clone), _on_booleans("sgn", Tensor.clone)
Tensor.square = _on_booleans("square", Tensor.long)
for _name in ("index_put", "masked_scatter"):
    setattr(Tensor, _name + "_", _in_place(_name))
for _name, _value in list(vars(Tensor).items()):
    if not _name.startswith("_") and inspect.isfunction(_value):
        setattr(Tensor, _name, _numpy_keywords(_value))


class _Slogdet(collections.namedtuple("slogdet", ["sign", "logabsdet"])):
    """torch.return_types.slogdet: a (sign, logabsdet) pair with names."""


def logdet(self):
    """log det of a (batch of) square matrices, NaN where the determinant is negative, as torch.logdet."""
    sign, logabsdet = sglinalg.slogdet(self)
    return sgnp.where(_index_array(sign) < 0, np.nan, logabsdet)


# PyTorch's linear-algebra methods (Invertible1x1Conv's torch.inverse, MultivariateNormal's precision matrix)
Tensor.inverse, Tensor.det, Tensor.logdet = sglinalg.inv, sglinalg.det, logdet
Tensor.slogdet = lambda self: _Slogdet(*sglinalg.slogdet(self))
Tensor.pinverse = lambda self, rcond=1e-15: sglinalg.pinv(self, rcond)
Tensor.matrix_power = sglinalg.matrix_power
Tensor.cholesky = lambda self, upper=False: sglinalg.cholesky(self, upper=upper)
