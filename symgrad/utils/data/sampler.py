"""Samplers: the order of indices a DataLoader reads (torch.utils.data.sampler's)."""
from __future__ import annotations

from ...eager.random import numpy_generator


class Sampler:
    """An iterable of indices (or of lists of indices, for a batch sampler)."""

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__} must define __iter__")


class SequentialSampler(Sampler):
    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    """A new random permutation per pass (or `num_samples` draws with replacement) from `generator`
    (None: the generator sg.manual_seed seeds)."""

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source, self.replacement, self.generator = data_source, replacement, generator
        self._num_samples = num_samples
        if not isinstance(replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={replacement}")
        if num_samples is not None and (isinstance(num_samples, bool) or not isinstance(num_samples, int)
                                        or num_samples <= 0):
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={num_samples}")

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n, rng = len(self.data_source), numpy_generator(self.generator)
        if self.replacement:
            return iter(rng.integers(0, n, self.num_samples).tolist())
        passes, rest = divmod(self.num_samples, n) if n else (0, 0)
        order = [index for _ in range(passes) for index in rng.permutation(n).tolist()]
        return iter(order + rng.permutation(n).tolist()[:rest])

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices in a random order, a new one per pass."""

    def __init__(self, indices, generator=None):
        self.indices, self.generator = indices, generator

    def __iter__(self):
        return iter([self.indices[i] for i in numpy_generator(self.generator).permutation(len(self.indices))])

    def __len__(self):
        return len(self.indices)


class BatchSampler(Sampler):
    """Lists of `batch_size` indices from `sampler`; the last one shorter unless drop_last."""

    def __init__(self, sampler, batch_size, drop_last):
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self):
        batch = []
        for index in self.sampler:
            batch.append(index)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        full, rest = divmod(len(self.sampler), self.batch_size)
        return full if self.drop_last or not rest else full + 1
