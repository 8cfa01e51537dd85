"""`nn.utils.prune`'s unstructured basics, PyTorch's: `l1_unstructured` (the entries of smallest magnitude) and
`random_unstructured` (drawn from sg.manual_seed's generator) move `module.<name>` to the parameter `<name>_orig`
and a buffer `<name>_mask`, and recompute `module.<name> = orig * mask` before each forward (a forward pre-hook);
pruning again prunes among the entries left. `remove` makes the pruned tensor the parameter again; `is_pruned`."""
from __future__ import annotations

import numbers

import numpy as np

from ...eager.tensor import Tensor, random_generator
from ..parameter import Parameter


class _Pruning:
    """The forward pre-hook of one pruned tensor: module.<name> = <name>_orig * <name>_mask."""

    def __init__(self, name):
        self.name = name
        self.handle = None

    def __call__(self, module, inputs):
        setattr(module, self.name, _pruned(module, self.name))


def _pruned(module, name):
    return getattr(module, name + "_orig") * getattr(module, name + "_mask")


def _count(amount, size) -> int:
    """How many entries `amount` prunes: an int as is, a float its fraction of size, rounded (PyTorch's checks)."""
    if isinstance(amount, numbers.Integral) and not isinstance(amount, bool):
        if amount < 0:
            raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a non-negative integer")
        if amount > size:
            raise ValueError(f"amount={amount} should be smaller than the number of parameters to prune={size}")
        return int(amount)
    if isinstance(amount, bool):  # (PyTorch's error: True is no fraction, 1.0, of every entry)
        raise TypeError(f"prune: amount must be an int or a float, not bool ({amount})")
    if not isinstance(amount, numbers.Real) or not 0 <= amount <= 1:
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a non-negative integer")
    return round(amount * size)


def _prune(module, name, choose):
    """Zero the entries `choose(flat original, flat positions still kept)` picks (indices into those positions) in
    the tensor's mask."""
    hooks = _hooks(module)
    if name in hooks:
        orig, mask = getattr(module, name + "_orig"), getattr(module, name + "_mask")
    else:
        orig = getattr(module, name)
        if not isinstance(orig, Parameter):
            raise ValueError(f"prune: module has no parameter named {name!r}")
        mask = Tensor._wrap(np.ones(orig.shape, orig.dtype))
    kept = np.flatnonzero(mask._data.reshape(-1))
    data = mask._data.copy()
    data.reshape(-1)[kept[choose(orig._data.reshape(-1), kept)]] = 0
    if name not in hooks:
        delattr(module, name)
        module.register_parameter(name + "_orig", orig)
        hook = hooks[name] = _Pruning(name)
        hook.handle = module.register_forward_pre_hook(hook)
    module.register_buffer(name + "_mask", Tensor._wrap(data))
    setattr(module, name, _pruned(module, name))
    return module


def _hooks(module) -> dict:
    if "_pruning" not in module.__dict__:
        object.__setattr__(module, "_pruning", {})
    return module.__dict__["_pruning"]


def l1_unstructured(module, name, amount, importance_scores=None):
    """Prune the `amount` entries (a count, or a fraction of those left) of smallest absolute value."""
    def choose(values, kept):
        source = values if importance_scores is None else \
            np.asarray(getattr(importance_scores, "_data", importance_scores)).reshape(-1)
        return np.argsort(np.abs(source[kept]), kind="stable")[:_count(amount, kept.size)]
    return _prune(module, name, choose)


def random_unstructured(module, name, amount):
    """Prune `amount` entries (a count, or a fraction of those left) chosen at random."""
    return _prune(module, name, lambda values, kept: random_generator().permutation(kept.size)[:_count(amount,
                                                                                                       kept.size)])


def remove(module, name):
    """Make the pruning permanent: module.<name> becomes a parameter holding orig * mask."""
    hooks = _hooks(module)
    if name not in hooks:
        raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning can be removed")
    hooks.pop(name).handle.remove()
    value = _pruned(module, name).detach()
    delattr(module, name + "_orig")
    delattr(module, name + "_mask")
    if name in module.__dict__:
        del module.__dict__[name]
    setattr(module, name, Parameter(value))
    return module


def is_pruned(module) -> bool:
    """Whether the module or a submodule has a pruned tensor."""
    return any(module.__dict__.get("_pruning") for module in module.modules())
