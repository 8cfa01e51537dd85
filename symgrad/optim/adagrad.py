"""Adagrad with learning-rate decay and L2 weight decay: PyTorch's update formula, in parts (`Optimizer.formula`),
so its group step is compiled."""
from __future__ import annotations

import numpy as np

from .adaptive import _direction
from ..eager.tensor import Tensor
from .optimizer import Optimizer


class Adagrad(Optimizer):
    """s += g^2; p -= lr / (1 + (step - 1) lr_decay) * g / (sqrt(s) + eps), s starting at
    initial_accumulator_value."""

    group_keys = (
        "lr", "lr_decay", "eps", "weight_decay", "initial_accumulator_value", "foreach", "maximize", "differentiable",
        "fused",
    )

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 maximize=False, **options):
        if lr < 0 or lr_decay < 0 or weight_decay < 0 or initial_accumulator_value < 0 or eps < 0:
            raise ValueError(f"Invalid Adagrad hyperparameter: lr={lr}, lr_decay={lr_decay}, "
                             f"weight_decay={weight_decay}, initial_accumulator_value={initial_accumulator_value}, "
                             f"eps={eps}")
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value, eps=eps, maximize=maximize),
                         **options)
        for group in self.param_groups:  # the state made here, as PyTorch's (state_dict() before a step shows it)
            for p in group["params"]:
                self.state[p] = {"step": 0, "sum": Tensor._wrap(self._initial(p._data))}

    def _initial(self, param):
        """The sum's start: the constructor's initial value, as PyTorch's (a group's own is kept but not read)."""
        return np.full_like(param, self.defaults["initial_accumulator_value"])

    def prepare(self, param, state, group):
        if not state:  # (a group added later)
            state.update(step=0, sum=self._initial(param))
        state["step"] += 1
        return group["weight_decay"], group["lr"] / (1 + (state["step"] - 1) * group["lr_decay"]), group["eps"]

    def buffers(self, state, group):
        return (state["sum"],)

    def store(self, state, buffers, group):
        state["sum"], = buffers

    def structure(self, group):
        return "Adagrad", bool(group["weight_decay"]), group["maximize"]

    def formula(self, param, grad, buffers, coefficients, group):
        weight_decay, clr, eps = coefficients
        g = _direction(param, grad, weight_decay, group)
        total = buffers[0] + g * g
        return param - clr * (g / (np.sqrt(total) + eps)), (total,)
