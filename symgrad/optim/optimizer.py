"""`Optimizer`: parameter groups, per-parameter state, zero_grad(); subclasses write `update`."""
from __future__ import annotations

import numpy as np

from ..eager.mode import enable_grad, no_grad
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

    # ------------------------------------------------------------------ PyTorch's state dicts (issue 14)
    def state_dict(self) -> dict:
        """{'state': {index: {name: value}}, 'param_groups': [{hyperparameters, 'params': [indices]}]}, parameters
        numbered in the order of the groups, as PyTorch's; arrays of the state are tensors sharing its memory."""
        numbers, groups = {}, []
        for group in self.param_groups:
            indices = [numbers.setdefault(id(p), len(numbers)) for p in group["params"]]
            groups.append({**{k: v for k, v in group.items() if k != "params"}, "params": indices})
        state = {numbers[key]: {name: Tensor._wrap(value) if isinstance(value, np.ndarray) else value
                                for name, value in entry.items()}
                 for key, entry in self.state.items() if key in numbers}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        """Take the state and hyperparameters of `state_dict` (from state_dict(), maybe through sg.save/sg.load)
        for this optimizer's parameters, matched by position; arrays are copied, floats cast to the parameter's
        dtype."""
        groups = state_dict["param_groups"]
        if len(groups) != len(self.param_groups):
            raise ValueError(f"loaded state dict has a different number of parameter groups ({len(groups)}) than "
                             f"the optimizer ({len(self.param_groups)})")
        by_number = {}
        for position, (mine, saved) in enumerate(zip(self.param_groups, groups)):
            if len(mine["params"]) != len(saved["params"]):
                raise ValueError(f"loaded state dict contains a parameter group that doesn't match the size of "
                                 f"optimizer's group {position}: {len(saved['params'])} against {len(mine['params'])}")
            by_number.update(zip((int(n) for n in saved["params"]), mine["params"]))
        self.state = {}
        for number, entry in state_dict["state"].items():
            param = by_number[int(number)]
            self.state[id(param)] = {name: _state_value(value, param) for name, value in entry.items()}
        for mine, saved in zip(self.param_groups, groups):
            mine.update({k: _group_value(v) for k, v in saved.items() if k != "params"})

    def add_param_group(self, param_group: dict) -> None:
        """Another group of parameters, with this optimizer's defaults for what it does not set."""
        params = param_group["params"]
        params = [params] if isinstance(params, Tensor) else list(params)
        known = {id(p) for group in self.param_groups for p in group["params"]}
        if any(id(p) in known for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        for p in params:
            if not isinstance(p, Tensor) or not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor (or a non-tensor)")
        self.param_groups.append({**self.defaults, **param_group, "params": params})


def _state_value(value, param):
    """A saved state entry as the optimizer keeps it: arrays (floats in the parameter's dtype), Python numbers."""
    if isinstance(value, (Tensor, np.ndarray)):
        array = np.array(value._data if isinstance(value, Tensor) else value)
        if array.ndim == 0 and array.dtype.kind in "iu":
            return int(array)
        return array.astype(param.dtype) if array.dtype.kind == "f" else array
    return value


def _group_value(value):
    """Hyperparameters come back from a file as arrays or lists (betas); PyTorch keeps tuples."""
    if isinstance(value, np.ndarray):
        return value.item() if value.ndim == 0 else tuple(value.tolist())
    return tuple(value) if isinstance(value, list) else value
