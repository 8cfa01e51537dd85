"""ASGD: SGD with a decaying step and a running average of the iterates (PyTorch's update formula)."""
from __future__ import annotations

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

    def update(self, param, grad, state, group):
        g = -grad if group["maximize"] else grad
        if not state:
            state.update(step=0, eta=float(group["lr"]), mu=1.0, ax=param * 0)
        state["step"] += 1
        if group["weight_decay"]:
            g = g + group["weight_decay"] * param
        eta, lambd, lr = state["eta"], group["lambd"], group["lr"]
        param = param * (1 - lambd * eta) - eta * g
        state["ax"] = state["ax"] + (param - state["ax"]) * state["mu"] if state["mu"] != 1 else param.copy()
        state["eta"] = lr / ((1 + lambd * lr * state["step"]) ** group["alpha"])
        state["mu"] = 1 / max(1, state["step"] - group["t0"])
        return param
