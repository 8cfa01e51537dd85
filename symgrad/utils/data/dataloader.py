"""DataLoader: batches of a dataset, in the order of a sampler, collated (torch.utils.data.DataLoader).

Everything runs in the calling process: `num_workers`, `pin_memory`, `prefetch_factor`, `persistent_workers` and
`timeout` are accepted and change nothing but speed in PyTorch, so the batches are the same.
"""
from __future__ import annotations

import numpy as np

from ...eager.tensor import Tensor
from .collate import default_collate, default_convert
from .dataset import IterableDataset, TensorDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler


class DataLoader:
    """Iterate over batches: `for xb, yb in DataLoader(TensorDataset(x, y), batch_size=64, shuffle=True)`."""

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None, persistent_workers=False,
                 pin_memory_device="", in_order=True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable "
                             "multiprocessing.")
        self.dataset, self.num_workers, self.generator = dataset, num_workers, generator
        self.drop_last, self.batch_size = drop_last, batch_size
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if shuffle not in (None, False):
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle option, but got "
                                 f"shuffle={shuffle}")
            if sampler is not None or batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified sampler and batch_sampler")
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, "
                                 "and drop_last")
            batch_size, drop_last = None, False
            self.batch_size, self.drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with "
                             "drop_last")
        if sampler is None and not self._iterable:
            sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None and not self._iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.sampler, self.batch_sampler = sampler, batch_sampler
        batching = batch_sampler is not None or (self._iterable and batch_size is not None)
        self.collate_fn = collate_fn if collate_fn is not None else (default_collate if batching else default_convert)

    def __iter__(self):
        if self._iterable:
            return self._iterate_stream()
        if self.batch_sampler is None:
            return (self.collate_fn(self.dataset[index]) for index in self.sampler)
        return (self._fetch(indices) for indices in self.batch_sampler)

    def _fetch(self, indices):
        """The collated batch at indices. A TensorDataset with the default collation is indexed once per
        tensor (the batch PyTorch's stack of rows gives, without a tensor per row)."""
        if self.collate_fn is default_collate and type(self.dataset) is TensorDataset and \
                not any(t.requires_grad for t in self.dataset.tensors):
            rows = np.asarray(indices, dtype=np.int64)
            return [Tensor._wrap(t._data[rows]) for t in self.dataset.tensors]
        getitems = getattr(self.dataset, "__getitems__", None)
        samples = getitems(indices) if getitems is not None else [self.dataset[i] for i in indices]
        return self.collate_fn(samples)

    def _iterate_stream(self):
        if self.batch_size is None:
            for sample in self.dataset:
                yield self.collate_fn(sample)
            return
        batch = []
        for sample in self.dataset:
            batch.append(sample)
            if len(batch) == self.batch_size:
                yield self.collate_fn(batch)
                batch = []
        if batch and not self.drop_last:
            yield self.collate_fn(batch)

    def __len__(self):
        if self._iterable:
            length = len(self.dataset)  # a TypeError for a stream without a length, as in PyTorch
            if self.batch_size is None:
                return length
            full, rest = divmod(length, self.batch_size)
            return full if self.drop_last or not rest else full + 1
        return len(self.batch_sampler if self.batch_sampler is not None else self.sampler)
