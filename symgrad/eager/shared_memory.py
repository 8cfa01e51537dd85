"""Tensor.share_memory_() and is_shared(): a tensor's array moved into anonymous shared memory (an mmap, shared
with every process forked afterwards), as PyTorch's hogwild training needs (torch.multiprocessing with the fork
start method: the workers' optimizer steps write the parent's parameters). Sending such a tensor to another
process by multiprocessing's pickling (the spawn or forkserver start methods, a Queue) would copy it, which
PyTorch does not: that is a clear error instead."""
from __future__ import annotations

import mmap

import numpy as np

from .tensor import Tensor


def _on_shared_memory(array) -> bool:
    """Whether array's memory is an mmap (the chain of bases NumPy keeps: arrays, a memoryview, the mmap)."""
    base = array
    while base is not None:
        if isinstance(base, mmap.mmap):
            return True
        base = base.obj if isinstance(base, memoryview) else getattr(base, "base", None)
    return False


def is_shared(self) -> bool:
    """Whether the tensor's memory is shared with processes forked after share_memory_()."""
    return _on_shared_memory(self._data)


def share_memory_(self):
    """Move the data into shared memory (in place: the tensor keeps its values, grad_fn and requires_grad)."""
    if is_shared(self):
        return self
    if self._base is not None:
        raise RuntimeError("share_memory_() of a view would leave its base in private memory: call it on the base "
                           "tensor (symgrad moves one tensor's array, PyTorch the whole storage)")
    _refuse_pickling_to_processes(type(self))
    array = np.ndarray(self._data.shape, self._data.dtype, buffer=mmap.mmap(-1, max(self._data.nbytes, 1)))
    array[...] = self._data
    Tensor.data.fset(self, array)
    self._version.exposed = True  # written by other processes, unseen: in-place ops write this memory, never a copy
    return self


def _reduce_for_another_process(tensor):
    if is_shared(tensor):
        raise RuntimeError("a tensor in shared memory (share_memory_()) cannot be sent to another process by "
                           "pickling: symgrad shares it with forked processes only (multiprocessing's 'fork' start "
                           "method, the processes started after share_memory_()), and a pickled copy would not "
                           "see the other processes' writes")
    return tensor.__reduce__()


def _refuse_pickling_to_processes(cls) -> None:
    """Register the reducer with multiprocessing's pickler, which looks up the exact class (a Parameter is its own);
    its import waits for the first shared tensor."""
    from multiprocessing.reduction import ForkingPickler
    ForkingPickler.register(cls, _reduce_for_another_process)


Tensor.share_memory_, Tensor.is_shared = share_memory_, is_shared
