"""Datasets: Dataset, IterableDataset, TensorDataset, ConcatDataset, Subset, random_split (torch.utils.data's)."""
from __future__ import annotations

import bisect
import itertools
import math
import warnings

from ...eager.random import randperm
from ...eager.tensor import Tensor


class Dataset:
    """A map-style dataset: `dataset[i]` is a sample and `len(dataset)` their number; `a + b` concatenates."""

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__")

    def __add__(self, other) -> "ConcatDataset":
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A dataset read by iterating it (`__iter__`), as a stream: DataLoader batches what it yields in order."""

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__} must define __iter__")

    def __add__(self, other):
        raise TypeError("an IterableDataset cannot be concatenated with +; chain the iterators")


class TensorDataset(Dataset):
    """Samples are the tensors' rows: `dataset[i] == (t0[i], t1[i], ...)`; all tensors have the same first size."""

    def __init__(self, *tensors):
        if not tensors:
            raise ValueError("TensorDataset needs at least one tensor")
        for position, t in enumerate(tensors):
            if not isinstance(t, Tensor):
                raise TypeError(f"TensorDataset: argument {position} is a {type(t).__name__}, not a Tensor "
                                f"(wrap arrays with sg.tensor or sg.from_numpy)")
            if t.ndim == 0 or t.shape[0] != tensors[0].shape[0]:
                raise ValueError(f"Size mismatch between tensors: argument 0 has shape {tuple(tensors[0].shape)}, "
                                 f"argument {position} has shape {tuple(t.shape)} (the first sizes must agree)")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].shape[0]


class ConcatDataset(Dataset):
    """Datasets one after another: index i goes to the dataset whose range holds it."""

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("ConcatDataset: datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise TypeError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = list(itertools.accumulate(len(d) for d in self.datasets))

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, index):
        if index < 0:
            if -index > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            index += len(self)
        which = bisect.bisect_right(self.cumulative_sizes, index)
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][index - start]


class Subset(Dataset):
    """The samples of `dataset` at `indices`, in that order."""

    def __init__(self, dataset, indices):
        self.dataset, self.indices = dataset, indices

    def __getitem__(self, index):
        if isinstance(index, list):
            return [self.dataset[self.indices[i]] for i in index]
        return self.dataset[self.indices[index]]

    def __len__(self):
        return len(self.indices)


def random_split(dataset, lengths, generator=None) -> list:
    """Split into non-overlapping Subsets of the given lengths, or of fractions of len(dataset) summing to 1
    (the remainder of flooring goes one by one to the first subsets, as PyTorch does)."""
    lengths = list(lengths)
    total = len(dataset)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        counts = []
        for position, fraction in enumerate(lengths):
            if not 0 <= fraction <= 1:
                raise ValueError(f"Fraction at index {position} is not between 0 and 1")
            counts.append(int(math.floor(total * fraction)))
        for extra in range(total - sum(counts)):
            counts[extra % len(counts)] += 1
        for position, count in enumerate(counts):
            if count == 0:
                warnings.warn(f"Length of split at index {position} is 0. This might result in an empty dataset.")
        lengths = counts
    if sum(lengths) != total:
        raise ValueError(f"Sum of input lengths ({sum(lengths)}) does not equal the length of the input dataset "
                         f"({total})!")
    order = randperm(sum(lengths), generator=generator).tolist()
    return [Subset(dataset, order[end - length:end])
            for end, length in zip(itertools.accumulate(lengths), lengths)]
