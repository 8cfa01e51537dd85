"""`sg.optim.lr_scheduler`: learning-rate schedules that set each parameter group's "lr", as PyTorch's
(StepLR, ExponentialLR, CosineAnnealingLR, LambdaLR, ReduceLROnPlateau), with get_last_lr, last_epoch and
state_dict. Call `scheduler.step()` after `optimizer.step()`, once per epoch."""
from __future__ import annotations

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
    get_lr(), computed from the current lr (the chained form PyTorch uses)."""

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
        self._step_count = 0
        self.step()

    def get_lr(self) -> list:
        raise NotImplementedError(f"{type(self).__name__} must define get_lr")

    def get_last_lr(self) -> list:
        """The learning rates the last step() set, one per parameter group."""
        return self._last_lr

    def step(self, epoch=None) -> None:
        self._step_count += 1
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
        if self.last_epoch == 0:
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
        if epoch == 0:
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


class LambdaLR(LRScheduler):
    """base_lr times lr_lambda(epoch): one function, or one per parameter group."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        self.lr_lambdas = _per_group(lr_lambda, optimizer, "lr_lambdas")
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        return [base * fn(self.last_epoch) for fn, base in zip(self.lr_lambdas, self.base_lrs)]

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
