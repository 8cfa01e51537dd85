"""`Optimizer`: parameter groups, per-parameter state, zero_grad(); subclasses write the update formula.

A subclass says how one parameter moves either with `update` (NumPy arrays in, the new value out),
or, to have its step compiled, in parts: `prepare` (its state and the step's coefficients, Python
floats computed from the hyper-parameters: lr, betas, bias corrections), `buffers`/`store` (the
state arrays the formula reads and rewrites), `structure` (the options that change the formula's
operations) and `formula` (arithmetic on the parameter, its gradient, its buffers and the
coefficients). The formula runs on NumPy arrays. From the second step of a group with the same
parameters and options on, a formula that keeps state (momentum, Adam's moments) is traced once
for the whole group and lowered to one native function whose coefficients are run-time inputs, so
a learning-rate schedule never compiles again: one call per group instead of several NumPy calls
per parameter (plain SGD's two calls per parameter stay faster as they are).
"""
from __future__ import annotations

import numpy as np

from .. import code_cache
from ..core import Builder, building
from ..eager.mode import enable_grad, no_grad
from ..eager.tape import force_pending
from ..eager.tensor import Tensor


class ParamState(dict):
    """The state of each parameter, keyed by id(parameter); `state[p]` (PyTorch's way of reading it) also takes the
    parameter itself. A tensor hashes as its id, so the plain dict compared p with the int key elementwise: an
    error ("Boolean value of Tensor ... is ambiguous") or a KeyError."""

    def __getitem__(self, key):
        return super().__getitem__(id(key) if isinstance(key, Tensor) else key)

    def __setitem__(self, key, value):  # (under p itself, state[p] = {...} was an entry the optimizer never read)
        super().__setitem__(id(key) if isinstance(key, Tensor) else key, value)

    def __missing__(self, key):
        """An empty state, kept, for a parameter that has none yet: PyTorch's defaultdict(dict)."""
        self[key] = state = {}
        return state

    def __contains__(self, key):
        return super().__contains__(id(key) if isinstance(key, Tensor) else key)

    def get(self, key, default=None):
        return super().get(id(key) if isinstance(key, Tensor) else key, default)


# PyTorch's implementation options and their defaults: they choose how PyTorch runs a step (a loop per tensor or a
# foreach kernel, CUDA graphs, a fused kernel), not its numbers. Each optimizer's param groups hold the ones PyTorch
# puts there, so state_dict() and the printed optimizer read as PyTorch's; symgrad runs a step one way.
_OPTIONS = {"foreach": None, "capturable": False, "differentiable": False, "fused": None}


class Optimizer:
    """Holds param_groups (dicts of 'params' and hyperparameters) and a state dict per parameter."""

    group_keys = ()  # PyTorch's keys of a param group, in its order: the hyperparameters and _OPTIONS it takes

    def __init__(self, params, defaults: dict, **options):
        for name, value in options.items():
            if name not in _OPTIONS or name not in type(self).group_keys:
                raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword argument '{name}'")
        if options.get("differentiable"):
            raise NotImplementedError(f"{type(self).__name__}(differentiable=True): symgrad's optimizer steps are "
                                      "not recorded by autograd")
        ordered = {key: defaults[key] if key in defaults else options.get(key, _OPTIONS[key])
                   for key in type(self).group_keys}
        self.defaults = defaults = {**ordered, **defaults}
        params = list(params)
        if not params:
            raise ValueError("optimizer got an empty parameter list")
        self.param_groups = []
        for group in params if isinstance(params[0], dict) else [{"params": params}]:
            self.add_param_group(group)  # (which refuses a parameter of two groups, as PyTorch's constructor)
        self.state = ParamState()
        self._updates = {}  # structure of a group's step -> GroupUpdate, or None when seen once

    def _group(self, param_group: dict) -> dict:
        """A param group as PyTorch makes it: the given keys ('params' a list), then the defaults it does not set."""
        params = param_group["params"]
        group = {**param_group, "params": [params] if isinstance(params, Tensor) else list(params)}
        for p in group["params"]:
            if not isinstance(p, Tensor) or not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor (or a non-tensor)")
        for name, value in self.defaults.items():
            group.setdefault(name, value)
        return group

    def __repr__(self):
        """PyTorch's: each group's settings in sorted order."""
        groups = (f"\nParameter Group {i}\n" + "".join(f"    {key}: {group[key]}\n" for key in sorted(group)
                                                      if key != "params")
                  for i, group in enumerate(self.param_groups))
        return f"{type(self).__name__} (" + "".join(groups) + ")"

    def __getstate__(self) -> dict:
        """Pickled and deep-copied with each parameter's state by its position in the groups (the ids keying
        `state` are this object's parameters'), without the compiled updates (native code, compiled again)."""
        attributes = dict(vars(self))
        attributes["state"] = [self.state.get(id(p)) for p in self._parameters()]
        attributes["_updates"] = {}
        return attributes

    def __setstate__(self, attributes: dict) -> None:
        vars(self).update(attributes)
        self.state = ParamState((id(p), entry) for p, entry in zip(self._parameters(), attributes["state"])
                                if entry is not None)

    def _parameters(self) -> list:
        """The parameters of every group, in order."""
        return [p for group in self.param_groups for p in group["params"]]

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
                params = [p for p in group["params"] if p.grad is not None]
                if params:
                    self._step_group(params, group)
        return loss

    def _step_group(self, params, group):
        if type(self).update is not Optimizer.update or type(self).formula is Optimizer.formula:
            # a subclass that writes (or overrides, as AdamW over Adam) `update`: one parameter at a time
            for p in params:
                state = self.state.setdefault(id(p), {})
                arrays = _arrays(state)
                p._data[...] = self.update(p._data, p.grad._data, arrays, group)
                p._version.value += 1
                _write_back(state, arrays)
            return
        kept = [self.state.setdefault(id(p), {}) for p in params]
        states = [_arrays(state) for state in kept]
        coefficients = [self.prepare(p._data, state, group) for p, state in zip(params, states)]
        buffers = [self.buffers(state, group) for state in states]
        update = None
        shared = coefficients[0]
        # compiled when the formula keeps state, its structure is set (every buffer made), and the
        # coefficients are the group's
        if buffers[0] and all(b is not None for own in buffers for b in own) and all(c == shared for c in coefficients):
            key = (self.structure(group),
                   tuple((p._data.shape, p._data.dtype, len(b)) for p, b in zip(params, buffers)))
            update = self._updates.get(key, _MISSING)
            if update is _MISSING:
                update = self._updates[key] = None  # seen once: NumPy this time, compiled from the next step on
            elif update is None:
                update = self._updates[key] = _compiled_or_none(self, params, buffers, shared, group)
        if update is not None and update is not _UNSUPPORTED:
            results = update(params, buffers, shared)
        else:
            results = [self.formula(p._data, p.grad._data, b, c, group) for p, b, c in zip(params, buffers, coefficients)]
        for p, state, arrays, (value, new_buffers) in zip(params, kept, states, results):
            p._data[...] = value
            p._version.value += 1
            self.store(arrays, new_buffers, group)
            _write_back(state, arrays)

    # ------------------------------------------------------------------ what a subclass writes
    def update(self, param, grad, state: dict, group: dict):
        """The new value of one parameter (NumPy arrays in, array out): the simple way to write an
        optimizer. One that writes the methods below instead gets its step compiled, and this runs them
        for one parameter (so a subclass may override `update` and call super().update)."""
        if type(self).formula is Optimizer.formula:
            raise NotImplementedError(f"{type(self).__name__} writes neither update() nor formula()")
        coefficients = self.prepare(param, state, group)
        value, buffers = self.formula(param, grad, self.buffers(state, group), coefficients, group)
        self.store(state, buffers, group)
        return value

    def prepare(self, param, state: dict, group: dict) -> tuple:
        """Create `state` on the first step, advance its counters; the step's coefficients (Python floats)."""
        raise NotImplementedError

    def buffers(self, state: dict, group: dict) -> tuple:
        """The state arrays the formula reads (None for one not made yet)."""
        raise NotImplementedError

    def store(self, state: dict, buffers: tuple, group: dict) -> None:
        """Keep the formula's new buffers in `state`."""
        raise NotImplementedError

    def structure(self, group: dict) -> tuple:
        """The options that change the formula's operations (not its numbers)."""
        raise NotImplementedError

    def formula(self, param, grad, buffers: tuple, coefficients: tuple, group: dict):
        """(new param, new buffers): arithmetic only, so it runs on arrays and on traced values alike."""
        raise NotImplementedError

    # ------------------------------------------------------------------ PyTorch's state dicts (issue 14)
    def state_dict(self) -> dict:
        """{'state': {index: {name: value}}, 'param_groups': [{hyperparameters, 'params': [indices]}]}, parameters
        numbered in the order of the groups, as PyTorch's; its tensors are the state's own, which the following steps
        update."""
        numbers, groups = {}, []
        for group in self.param_groups:
            indices = [numbers.setdefault(id(p), len(numbers)) for p in group["params"]]
            groups.append({**{k: v for k, v in group.items() if k != "params"}, "params": indices})
        state = {numbers[key]: dict(entry) for key, entry in self.state.items() if key in numbers}
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
        self.state = ParamState()
        for number, entry in state_dict["state"].items():
            param = by_number[int(number)]
            self.state[id(param)] = state = {}
            _write_back(state, {name: _state_value(value, param) for name, value in entry.items()})
        for mine, saved in zip(self.param_groups, groups):
            mine.update({k: _group_value(v) for k, v in saved.items() if k != "params"})

    def add_param_group(self, param_group: dict) -> None:
        """Another group of parameters, with this optimizer's defaults for what it does not set."""
        group = self._group(param_group)
        known = {id(p) for group in self.param_groups for p in group["params"]}
        if any(id(p) in known for p in group["params"]):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(group)


class GroupUpdate:
    """The formula of every parameter of a group traced once and lowered: parameters, gradients and
    buffers are inputs, and so are the coefficients, shared by the group (weakly typed, as Python
    numbers: they take the arrays' dtypes)."""

    def __init__(self, optimizer, params, buffers, coefficients, group):
        builder = Builder()
        with building(builder):
            traced = [(builder.new_input(p.shape, p.dtype), builder.new_input(p.shape, p.dtype),
                       tuple(builder.new_input(b.shape, b.dtype) for b in own)) for p, own in zip(params, buffers)]
            numbers = tuple(builder.new_input((), np.float64, weak=True) for _ in coefficients)
            outputs, self.layout = [], []
            for param, grad, own in traced:
                value, new_buffers = optimizer.formula(param, grad, own, numbers, group)
                outputs += [value, *new_buffers]
                self.layout.append(len(new_buffers))
            graph = builder.finish(outputs, "optimizer_step")
        # the coefficients are passed as Python floats (no 0-d array made for each, every step)
        floats = tuple(range(len(graph.inputs) - len(numbers), len(graph.inputs)))
        self.executable = code_cache.lowered(graph, python_floats=floats).executable
        self.entry = getattr(self.executable, "entry", None)  # the native entry, on arrays as they are

    def __call__(self, params, buffers, coefficients):
        operands = []
        for p, own in zip(params, buffers):
            operands += [p._data, p.grad._data, *own]
        for c in coefficients:
            operands.append(float(c))
        flat = NotImplemented if self.entry is None else self.entry(*operands)
        if flat is NotImplemented:
            flat = self.executable(*operands)
        results, start = [], 0
        for count in self.layout:
            results.append((flat[start], tuple(flat[start + 1:start + 1 + count])))
            start += 1 + count
        return results


def _compiled_or_none(optimizer, params, buffers, coefficients, group):
    try:
        return GroupUpdate(optimizer, params, buffers, coefficients, group)
    except Exception:  # noqa: BLE001  (a formula the tracer cannot follow keeps running on NumPy)
        return _UNSUPPORTED


_MISSING = object()
_UNSUPPORTED = object()


def _arrays(state: dict) -> dict:
    """A parameter's state as the formulas read and write it: each tensor's array."""
    return {name: value._data if isinstance(value, Tensor) else value for name, value in state.items()}


def _write_back(state: dict, arrays: dict) -> None:
    """The formulas' new state kept in the state's tensors (a state_dict() taken before holds these tensors, as
    PyTorch's does: new arrays kept instead left it with the old values), each given its new array (cheaper than
    a copy into the old one: an array taken from such a tensor before a step keeps the old values); a new array
    becomes a tensor."""
    for name, value in arrays.items():
        held = state.get(name)
        if not isinstance(value, np.ndarray):
            state[name] = value
        elif not isinstance(held, Tensor) or held._data.shape != value.shape or held._data.dtype != value.dtype:
            state[name] = Tensor._wrap(value)
        elif held._data is not value:  # (`held.data = value`, whose checks it passes: an array of held's dtype)
            held._replace_data(value, True)


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
