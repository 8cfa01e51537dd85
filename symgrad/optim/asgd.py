"""ASGD: SGD with a decaying step and a running average of the iterates (PyTorch's update formula), written in parts
(`Optimizer.formula`), so a group's step is compiled with eta and mu as run-time inputs."""
from __future__ import annotations

import numpy as np

from ..ops import elementwise as E
from .adaptive import _direction
from .optimizer import Optimizer


class ASGD(Optimizer):
    """p = p (1 - lambd eta) - eta g; ax averages p from step t0 on; eta = lr / (1 + lambd lr step)^alpha and
    mu = 1 / max(1, step - t0) for the next step. The average is state['ax']."""

    group_keys = ("lr", "lambd", "alpha", "t0", "weight_decay", "foreach", "maximize", "differentiable", "capturable")

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, maximize=False, **options):
        if lr < 0 or weight_decay < 0:
            raise ValueError(f"Invalid ASGD hyperparameter: lr={lr}, weight_decay={weight_decay}")
        super().__init__(params, dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                                      maximize=maximize), **options)

    def prepare(self, param, state, group):
        """This step's eta and mu (as PyTorch, those its last step left), then the next step's in the state, rounded
        to float32 as PyTorch keeps them (its default dtype, as NAdam's product of the mu_t)."""
        if not state:
            state.update(step=0, eta=_float32(group["lr"]), mu=1.0, ax=np.zeros_like(param))
        state["step"] += 1
        eta, mu, lambd, lr = state["eta"], state["mu"], group["lambd"], group["lr"]
        state["eta"] = _float32(lr / ((1 + lambd * lr * state["step"]) ** group["alpha"]))
        state["mu"] = _float32(1 / max(1, state["step"] - group["t0"]))
        # (mu = 1 copies the parameter into the average, as PyTorch: ax + (p - ax) * 1 may round otherwise)
        return group["weight_decay"], 1 - lambd * eta, eta, mu, float(mu == 1)

    def buffers(self, state, group):
        return (state["ax"],)

    def store(self, state, buffers, group):
        state["ax"], = buffers

    def structure(self, group):
        return "ASGD", bool(group["weight_decay"]), group["maximize"]

    def formula(self, param, grad, buffers, coefficients, group):
        weight_decay, shrink, eta, mu, copied = coefficients
        g = _direction(param, grad, weight_decay, group)
        param = param * shrink - eta * g
        ax = buffers[0]
        return param, (E.where(copied > 0, param, ax + (param - ax) * mu),)


def _float32(number) -> float:
    return float(np.float32(number))
