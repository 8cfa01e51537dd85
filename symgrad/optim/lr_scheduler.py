"""`sg.optim.lr_scheduler`: learning-rate schedules that set each parameter group's "lr", as PyTorch's
(StepLR, MultiStepLR, ExponentialLR, ConstantLR, LinearLR, PolynomialLR, CosineAnnealingLR,
CosineAnnealingWarmRestarts, OneCycleLR, CyclicLR, LambdaLR, MultiplicativeLR, SequentialLR, ChainedScheduler,
ReduceLROnPlateau), with get_last_lr, last_epoch and state_dict. Call `scheduler.step()` after
`optimizer.step()`, once per epoch (OneCycleLR: once per batch)."""
from __future__ import annotations

import bisect
import collections
import math
import types

from .optimizer import Optimizer


def _per_group(value, optimizer, name: str) -> list:
    """One value for every parameter group, or a list/tuple of one per group."""
    groups = len(optimizer.param_groups)
    if not isinstance(value, (list, tuple)):
        return [value] * groups
    if len(value) != groups:
        raise ValueError(f"Expected {groups} {name}, but got {len(value)}")
    return list(value)


class LRScheduler:
    """Base: base_lrs from each group's 'initial_lr'; step() advances last_epoch and sets the groups' lr to
    get_lr(), computed from the current lr (the chained form PyTorch uses). The constructor's step is the
    initial one (`_is_initial`), which most schedules leave the lr alone on, as PyTorch 2.13: resuming with
    last_epoch=k keeps the optimizer's lr for epoch k + 1."""

    _is_initial = False

    def __init__(self, optimizer, last_epoch=-1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for position, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(f"param 'initial_lr' is not specified in param_groups[{position}] when resuming "
                                   f"an optimizer")
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self) -> None:
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def get_lr(self) -> list:
        raise NotImplementedError(f"{type(self).__name__} must define get_lr")

    def get_last_lr(self) -> list:
        """The learning rates the last step() set, one per parameter group."""
        return self._last_lr

    def step(self, epoch=None) -> None:
        self._step_count += 1
        self._update_lr(epoch)

    def _update_lr(self, epoch=None) -> None:
        """The next epoch's lr (chained), or with `epoch` the closed form at that epoch where there is one."""
        if epoch is None:
            self.last_epoch += 1
            values = self.get_lr()
        else:
            self.last_epoch = epoch
            values = self._closed_form() if hasattr(self, "_closed_form") else self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, values):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def state_dict(self) -> dict:
        """Everything but the optimizer (save it with the optimizer's own state_dict)."""
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict: dict) -> None:
        self.__dict__.update(state_dict)

    def _lrs(self) -> list:
        return [group["lr"] for group in self.optimizer.param_groups]


class StepLR(LRScheduler):
    """lr times gamma every step_size epochs."""

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1):
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return self._lrs()
        return [lr * self.gamma for lr in self._lrs()]

    def _closed_form(self):
        return [base * self.gamma ** (self.last_epoch // self.step_size) for base in self.base_lrs]


class ExponentialLR(LRScheduler):
    """lr times gamma every epoch."""

    def __init__(self, optimizer, gamma, last_epoch=-1):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self._is_initial:
            return self._lrs()
        return [lr * self.gamma for lr in self._lrs()]

    def _closed_form(self):
        return [base * self.gamma ** self.last_epoch for base in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """eta_min + (base_lr - eta_min) (1 + cos(pi epoch / T_max)) / 2, in PyTorch's recursive form (which also
    follows lr changes made by others, and rises again after T_max)."""

    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1):
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        epoch, t_max, eta_min = self.last_epoch, self.T_max, self.eta_min
        if self._is_initial:
            return self._lrs()
        if self._step_count == 1 and epoch > 0:
            return [eta_min + (base - eta_min) * (1 + math.cos(epoch * math.pi / t_max)) / 2 for base in self.base_lrs]
        if (epoch - 1 - t_max) % (2 * t_max) == 0:
            return [lr + (base - eta_min) * (1 - math.cos(math.pi / t_max)) / 2
                    for lr, base in zip(self._lrs(), self.base_lrs)]
        return [(1 + math.cos(math.pi * epoch / t_max)) / (1 + math.cos(math.pi * (epoch - 1) / t_max))
                * (lr - eta_min) + eta_min for lr in self._lrs()]

    def _closed_form(self):
        return [self.eta_min + (base - self.eta_min) * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base in self.base_lrs]


class _LambdasScheduler(LRScheduler):
    """A schedule driven by lr_lambda: one function, or one per parameter group; state_dict as PyTorch's."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        self.lr_lambdas = _per_group(lr_lambda, optimizer, "lr_lambdas")
        for fn in self.lr_lambdas:
            if not callable(fn):
                raise TypeError(f"lr_lambda should be a function, but got {type(fn).__name__}")
        super().__init__(optimizer, last_epoch)

    def state_dict(self):
        """As PyTorch's: the functions are not saved (a callable object's attributes are)."""
        state = {key: value for key, value in self.__dict__.items() if key not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [None if isinstance(fn, types.FunctionType) else dict(fn.__dict__)
                               for fn in self.lr_lambdas]
        return state

    def load_state_dict(self, state_dict):
        state = dict(state_dict)
        saved = state.pop("lr_lambdas")
        super().load_state_dict(state)
        for fn, attributes in zip(self.lr_lambdas, saved):
            if attributes is not None:
                fn.__dict__.update(attributes)


class LambdaLR(_LambdasScheduler):
    """base_lr times lr_lambda(epoch)."""

    def get_lr(self):
        return [base * fn(self.last_epoch) for fn, base in zip(self.lr_lambdas, self.base_lrs)]


class MultiplicativeLR(_LambdasScheduler):
    """lr times lr_lambda(epoch) every epoch after the first."""

    def get_lr(self):
        if self._is_initial:
            return self._lrs()
        return [lr * fn(self.last_epoch) for fn, lr in zip(self.lr_lambdas, self._lrs())]


class PolynomialLR(LRScheduler):
    """base_lr times (1 - epoch / total_iters) ** power, reaching 0 at total_iters."""

    def __init__(self, optimizer, total_iters=5, power=1.0, last_epoch=-1):
        self.total_iters, self.power = total_iters, power
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self._is_initial or self.last_epoch > self.total_iters:
            return self._lrs()
        factor = ((1.0 - self.last_epoch / self.total_iters) /
                  (1.0 - (self.last_epoch - 1) / self.total_iters)) ** self.power
        return [lr * factor for lr in self._lrs()]

    def _closed_form(self):
        return [base * (1.0 - min(self.total_iters, self.last_epoch) / self.total_iters) ** self.power
                for base in self.base_lrs]


class MultiStepLR(LRScheduler):
    """lr times gamma at each milestone epoch (gamma ** n at a milestone listed n times)."""

    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1):
        self.milestones, self.gamma = collections.Counter(milestones), gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch not in self.milestones:
            return self._lrs()
        return [lr * self.gamma ** self.milestones[self.last_epoch] for lr in self._lrs()]

    def _closed_form(self):
        milestones = sorted(self.milestones.elements())
        return [base * self.gamma ** bisect.bisect_right(milestones, self.last_epoch) for base in self.base_lrs]


class ConstantLR(LRScheduler):
    """lr times factor for the first total_iters epochs."""

    def __init__(self, optimizer, factor=1.0 / 3, total_iters=5, last_epoch=-1):
        if not 0 <= factor <= 1:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor, self.total_iters = factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch == 0:
            return [lr * self.factor for lr in self._lrs()]
        if self.last_epoch != self.total_iters:
            return self._lrs()
        return [lr * (1.0 / self.factor) for lr in self._lrs()]

    def _closed_form(self):
        return [base * (self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor))
                for base in self.base_lrs]


class LinearLR(LRScheduler):
    """lr times a factor going linearly from start_factor to end_factor over total_iters epochs."""

    def __init__(self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5, last_epoch=-1):
        if not 0 < start_factor <= 1:
            raise ValueError("Starting multiplicative factor expected to be greater than 0 and less or equal to 1.")
        if not 0 <= end_factor <= 1:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor, self.end_factor, self.total_iters = start_factor, end_factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch == 0:
            return [lr * self.start_factor for lr in self._lrs()]
        if self._is_initial or self.last_epoch > self.total_iters:
            return self._lrs()
        change = self.end_factor - self.start_factor
        return [lr * (1.0 + change / (self.total_iters * self.start_factor + (self.last_epoch - 1) * change))
                for lr in self._lrs()]

    def _closed_form(self):
        return [base * (self.start_factor + (self.end_factor - self.start_factor)
                        * min(self.total_iters, self.last_epoch) / self.total_iters) for base in self.base_lrs]


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing from base_lr to eta_min over T_i epochs, restarting with T_i times T_mult (SGDR).
    step(epoch) takes fractional epochs (a step per batch)."""

    def __init__(self, optimizer, T_0, T_mult=1, eta_min=0.0, last_epoch=-1):
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        self.T_0, self.T_i, self.T_mult, self.eta_min, self.T_cur = T_0, T_0, T_mult, eta_min, last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        return [self.eta_min + (base - self.eta_min) * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
                for base in self.base_lrs]

    def step(self, epoch=None) -> None:
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur += 1
            if self.T_cur >= self.T_i:
                self.T_cur, self.T_i = self.T_cur % self.T_i, self.T_i * self.T_mult
        elif epoch < 0:
            raise ValueError(f"Expected non-negative epoch, but got {epoch}")
        elif epoch >= self.T_0:
            if self.T_mult == 1:
                self.T_cur = epoch % self.T_0
            else:
                n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
                self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
                self.T_i = self.T_0 * self.T_mult ** n
        else:
            self.T_i, self.T_cur = self.T_0, epoch
        self.last_epoch = math.floor(epoch)
        for group, lr in zip(self.optimizer.param_groups, self.get_lr()):
            group["lr"] = lr
        self._last_lr = self._lrs()


def _set_momentum(group, value, use_beta1):
    """A cycled momentum: SGD's momentum, or Adam's beta1."""
    if use_beta1:
        group["betas"] = (value, *group["betas"][1:])
    else:
        group["momentum"] = value


class OneCycleLR(LRScheduler):
    """The 1cycle policy, stepped once per batch: lr from max_lr / div_factor up to max_lr over pct_start of
    total_steps, then down to that / final_div_factor (cosine or linear; three_phase comes back to the
    initial lr first), cycling the momentum (or Adam's beta1) the other way."""

    def __init__(self, optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None, pct_start=0.3,
                 anneal_strategy="cos", cycle_momentum=True, base_momentum=0.85, max_momentum=0.95, div_factor=25.0,
                 final_div_factor=1e4, three_phase=False, last_epoch=-1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        self.total_steps = _total_steps(total_steps, epochs, steps_per_epoch)
        if not isinstance(pct_start, float) or not 0 <= pct_start <= 1:
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self.anneal_strategy = anneal_strategy
        rise = float(pct_start * self.total_steps) - 1
        if three_phase:
            self._phases = [(rise, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                            (float(2 * pct_start * self.total_steps) - 2, "max_lr", "initial_lr", "base_momentum",
                             "max_momentum"),
                            (self.total_steps - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum")]
        else:
            self._phases = [(rise, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                            (self.total_steps - 1, "max_lr", "min_lr", "base_momentum", "max_momentum")]
        if last_epoch == -1:
            for group, top in zip(optimizer.param_groups, _per_group(max_lr, optimizer, "max_lr")):
                group["initial_lr"], group["max_lr"] = top / div_factor, top
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError("optimizer must support momentum or beta1 with `cycle_momentum` option enabled")
            self.use_beta1 = "betas" in optimizer.defaults
            if last_epoch == -1:
                for group, high, low in zip(optimizer.param_groups,
                                            _per_group(max_momentum, optimizer, "max_momentum"),
                                            _per_group(base_momentum, optimizer, "base_momentum")):
                    _set_momentum(group, high, self.use_beta1)
                    group["max_momentum"], group["base_momentum"] = high, low
        super().__init__(optimizer, last_epoch)

    def _anneal(self, start, end, pct):
        if self.anneal_strategy == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self):
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"Tried to step {step} times. The specified number of total steps is {self.total_steps}")
        lrs = []
        for group in self.optimizer.param_groups:
            start = 0.0
            for position, (end, lr_from, lr_to, momentum_from, momentum_to) in enumerate(self._phases):
                if step <= end or position == len(self._phases) - 1:
                    pct = (step - start) / (end - start)
                    lrs.append(self._anneal(group[lr_from], group[lr_to], pct))
                    if self.cycle_momentum:
                        momentum = self._anneal(group[momentum_from], group[momentum_to], pct)
                        _set_momentum(group, momentum, self.use_beta1)
                    break
                start = end
        return lrs


class CyclicLR(LRScheduler):
    """The cyclical policy, stepped once per batch: lr from base_lr up to max_lr over step_size_up steps and back
    over step_size_down, the height scaled per cycle (triangular: 1, triangular2: halved each cycle) or per
    step (exp_range: gamma ** step), or by scale_fn; the momentum (or Adam's beta1) cycles the other way."""

    def __init__(self, optimizer, base_lr, max_lr, step_size_up=2000, step_size_down=None, mode="triangular",
                 gamma=1.0, scale_fn=None, scale_mode="cycle", cycle_momentum=True, base_momentum=0.8,
                 max_momentum=0.9, last_epoch=-1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        base_lrs = _per_group(base_lr, optimizer, "base_lr")
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                group["lr"] = lr
        self.max_lrs = _per_group(max_lr, optimizer, "max_lr")
        up = float(step_size_up)
        self.total_size = up + (float(step_size_down) if step_size_down is not None else up)
        self.step_ratio = up / self.total_size
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode, self.gamma, self._scale_fn_custom = mode, gamma, scale_fn
        self.scale_mode = scale_mode if scale_fn is not None else ("iterations" if mode == "exp_range" else "cycle")
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError("optimizer must support momentum or beta1 with `cycle_momentum` option enabled")
            self.use_beta1 = "betas" in optimizer.defaults
            self.base_momentums = _per_group(base_momentum, optimizer, "base_momentum")
            self.max_momentums = _per_group(max_momentum, optimizer, "max_momentum")
            if last_epoch == -1:
                for group, high, low in zip(optimizer.param_groups, self.max_momentums, self.base_momentums):
                    _set_momentum(group, high, self.use_beta1)
                    group["max_momentum"], group["base_momentum"] = high, low
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def scale_fn(self, x) -> float:
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        return {"triangular": 1.0, "triangular2": 1 / (2.0 ** (x - 1)), "exp_range": self.gamma ** x}[self.mode]

    def get_lr(self):
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        height = x / self.step_ratio if x <= self.step_ratio else (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        if self.cycle_momentum:
            for group, low, high in zip(self.optimizer.param_groups, self.base_momentums, self.max_momentums):
                _set_momentum(group, high - (high - low) * height * scale, self.use_beta1)
        return [low + (high - low) * height * scale for low, high in zip(self.base_lrs, self.max_lrs)]

    def state_dict(self) -> dict:  # a custom scale_fn is a function: not saved, as PyTorch's
        return {key: value for key, value in self.__dict__.items() if key not in ("optimizer", "_scale_fn_custom")}


def _total_steps(total_steps, epochs, steps_per_epoch) -> int:
    if total_steps is not None:
        if not isinstance(total_steps, int) or total_steps <= 0:
            raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
        return total_steps
    if epochs is None or steps_per_epoch is None:
        raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")
    for name, value in (("epochs", epochs), ("steps_per_epoch", steps_per_epoch)):
        if not isinstance(value, int) or value <= 0:
            raise ValueError(f"Expected positive integer {name}, but got {value}")
    return epochs * steps_per_epoch


class _SchedulerOfSchedulers(LRScheduler):
    """A scheduler driving others (self._schedulers), saved with their states, as PyTorch's."""

    def _check(self, optimizer, schedulers):
        name = type(self).__name__
        if not schedulers:
            raise ValueError(f"{name} expects at least one scheduler, but got no scheduler.")
        for position, scheduler in enumerate(schedulers):
            if isinstance(scheduler, ReduceLROnPlateau):
                raise ValueError(f"{name} does not support `ReduceLROnPlateau` scheduler as it requires "
                                 f"additional kwargs to be specified when calling `step`, but got one at index "
                                 f"{position} in the given schedulers sequence.")
            if getattr(scheduler, "optimizer", None) is not optimizer:
                raise ValueError(f"{name} expects all schedulers to belong to the same optimizer, but got "
                                 f"scheduler {type(scheduler).__name__} at index {position} with another one")

    def state_dict(self) -> dict:
        state = {key: value for key, value in self.__dict__.items() if key not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [scheduler.state_dict() for scheduler in self._schedulers]
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        state = dict(state_dict)
        for scheduler, saved in zip(self._schedulers, state.pop("_schedulers")):
            scheduler.load_state_dict(saved)
        self.__dict__.update(state)


class ChainedScheduler(_SchedulerOfSchedulers):
    """Step every scheduler in turn, each from the lr the one before it set (their chained forms compose)."""

    def __init__(self, schedulers, optimizer=None):
        optimizer = optimizer if optimizer is not None else (schedulers[0].optimizer if schedulers else None)
        self._check(optimizer, schedulers)
        self._schedulers, self.optimizer = list(schedulers), optimizer
        self._last_lr = [group["lr"] for group in optimizer.param_groups]

    def step(self) -> None:
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]


class SequentialLR(_SchedulerOfSchedulers):
    """Hand the schedule to schedulers[i] from epoch milestones[i - 1] on (it restarts at its epoch 0 there)."""

    def __init__(self, optimizer, schedulers, milestones, last_epoch=-1):
        self._check(optimizer, schedulers)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(f"Sequential Schedulers expects number of schedulers provided to be one more than the "
                             f"number of milestone points, but got number of schedulers {len(schedulers)} and the "
                             f"number of milestones to be equal to {len(milestones)}")
        self._schedulers, self._milestones = list(schedulers), list(milestones)
        self.last_epoch, self.optimizer = last_epoch + 1, optimizer
        for group in optimizer.param_groups:  # back to the initial lr, and undo the schedulers' initial steps
            group["lr"] = group["initial_lr"]
        self._undo(self)
        first = self._schedulers[bisect.bisect_right(self._milestones, 0)]
        first._initial_step()
        self._last_lr = first.get_last_lr()

    def _undo(self, scheduler):
        if hasattr(scheduler, "_schedulers"):
            for inner in scheduler._schedulers:
                self._undo(inner)
        else:
            scheduler.last_epoch -= 1

    def _update_lr(self, epoch=None) -> None:
        raise TypeError("a SequentialLR inside a SequentialLR can only come first: it cannot restart at a "
                        "milestone (PyTorch's cannot either)")

    def step(self) -> None:
        self.last_epoch += 1
        position = bisect.bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[position]
        if position > 0 and self._milestones[position - 1] == self.last_epoch:
            scheduler._update_lr(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()


class ReduceLROnPlateau:
    """lr times factor when the metric passed to step(metric) has not improved for `patience` epochs
    (improved: by more than threshold, relative or absolute, in mode 'min' or 'max'), then `cooldown` epochs
    of rest; never below min_lr."""

    def __init__(self, optimizer, mode="min", factor=0.1, patience=10, threshold=1e-4, threshold_mode="rel",
                 cooldown=0, min_lr=0, eps=1e-8):
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        if mode not in ("min", "max"):
            raise ValueError(f"mode {mode} is unknown!")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError(f"threshold mode {threshold_mode} is unknown!")
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        self.min_lrs = _per_group(min_lr, optimizer, "min_lrs")
        self.mode, self.factor, self.patience, self.threshold = mode, factor, patience, threshold
        self.threshold_mode, self.cooldown, self.eps = threshold_mode, cooldown, eps
        self.best = math.inf if mode == "min" else -math.inf
        self.num_bad_epochs, self.cooldown_counter, self.last_epoch = 0, 0, 0
        self._last_lr = [group["lr"] for group in optimizer.param_groups]

    def step(self, metrics) -> None:
        current = float(metrics)
        self.last_epoch += 1
        if self._is_better(current):
            self.best, self.num_bad_epochs = current, 0
        else:
            self.num_bad_epochs += 1
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            for group, min_lr in zip(self.optimizer.param_groups, self.min_lrs):
                old = float(group["lr"])
                new = max(old * self.factor, min_lr)
                if old - new > self.eps:
                    group["lr"] = new
            self.cooldown_counter, self.num_bad_epochs = self.cooldown, 0
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def _is_better(self, value) -> bool:
        if self.mode == "min":
            bound = self.best * (1 - self.threshold) if self.threshold_mode == "rel" else self.best - self.threshold
            return value < bound
        bound = self.best * (1 + self.threshold) if self.threshold_mode == "rel" else self.best + self.threshold
        return value > bound

    @property
    def in_cooldown(self) -> bool:
        return self.cooldown_counter > 0

    def get_last_lr(self) -> list:
        return self._last_lr

    def state_dict(self) -> dict:
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict: dict) -> None:
        self.__dict__.update(state_dict)
