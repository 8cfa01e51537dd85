"""`Optimizer`: parameter groups, per-parameter state, zero_grad(); subclasses write `update`."""
from __future__ import annotations

from ..eager.mode import enable_grad, no_grad
from ..eager.tape import force_pending
from ..eager.tensor import Tensor


class Optimizer:
    """Holds param_groups (dicts of 'params' and hyperparameters) and a state dict per parameter."""

    def __init__(self, params, defaults: dict):
        self.defaults = defaults
        params = list(params)
        if not params:
            raise ValueError("optimizer got an empty parameter list")
        groups = params if isinstance(params[0], dict) else [{"params": params}]
        self.param_groups = []
        for group in groups:
            group = {**defaults, **group, "params": list(group["params"])}
            for p in group["params"]:
                if not isinstance(p, Tensor) or not p.is_leaf:
                    raise ValueError("can't optimize a non-leaf Tensor (or a non-tensor)")
            self.param_groups.append(group)
        self.state = {}

    def zero_grad(self, set_to_none=True):
        """Set every parameter's .grad to None (or to zeros with set_to_none=False)."""
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    p.grad.detach_()
                    p.grad.zero_()

    def step(self, closure=None):
        """One update of every parameter that has a gradient; returns closure() if given."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        force_pending()  # deferred ops read the parameters as they are before this update
        with no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is not None:
                        state = self.state.setdefault(id(p), {})
                        p._data[...] = self.update(p._data, p.grad._data, state, group)
                        p._version.value += 1
        return loss

    def update(self, param, grad, state: dict, group: dict):
        """The new value of one parameter (NumPy arrays in, array out)."""
        raise NotImplementedError
