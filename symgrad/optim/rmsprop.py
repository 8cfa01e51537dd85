"""RMSprop with momentum, centering and L2 weight decay: PyTorch's update formula, in parts (`Optimizer.formula`),
so its group step is compiled."""
from __future__ import annotations

import numpy as np

from .adaptive import _direction
from .optimizer import Optimizer


class RMSprop(Optimizer):
    """v = alpha v + (1 - alpha) g^2; p -= lr g / (sqrt(v - mean(g)^2 if centered) + eps), through a momentum
    buffer when momentum > 0."""

    group_keys = (
        "lr", "momentum", "alpha", "eps", "centered", "weight_decay", "capturable", "foreach", "maximize",
        "differentiable",
    )

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 maximize=False, **options):
        if lr < 0 or eps < 0 or momentum < 0 or weight_decay < 0 or alpha < 0:
            raise ValueError(f"Invalid RMSprop hyperparameter: lr={lr}, alpha={alpha}, eps={eps}, "
                             f"weight_decay={weight_decay}, momentum={momentum}")
        super().__init__(params, dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay, momentum=momentum,
                                      centered=centered, maximize=maximize), **options)

    def prepare(self, param, state, group):
        if not state:
            state.update(step=0, square_avg=np.zeros_like(param))
            if group["momentum"] > 0:
                state["momentum_buffer"] = np.zeros_like(param)
            if group["centered"]:
                state["grad_avg"] = np.zeros_like(param)
        state["step"] += 1
        return group["weight_decay"], group["alpha"], 1 - group["alpha"], group["eps"], group["momentum"], group["lr"]

    def _names(self, group):
        return ("square_avg",) + (("grad_avg",) if group["centered"] else ()) + (
            ("momentum_buffer",) if group["momentum"] > 0 else ())

    def buffers(self, state, group):
        return tuple(state[name] for name in self._names(group))

    def store(self, state, buffers, group):
        state.update(zip(self._names(group), buffers))

    def structure(self, group):
        return "RMSprop", bool(group["weight_decay"]), group["centered"], group["momentum"] > 0, group["maximize"]

    def formula(self, param, grad, buffers, coefficients, group):
        weight_decay, alpha, mix, eps, momentum, lr = coefficients
        g = _direction(param, grad, weight_decay, group)
        square_avg = buffers[0] * alpha + mix * g * g
        new_buffers = (square_avg,)
        if group["centered"]:
            grad_avg = buffers[1] + (g - buffers[1]) * mix
            new_buffers += (grad_avg,)
            avg = np.sqrt(square_avg - grad_avg * grad_avg) + eps
        else:
            avg = np.sqrt(square_avg) + eps
        if group["momentum"] > 0:
            buffer = buffers[-1] * momentum + g / avg
            return param - lr * buffer, new_buffers + (buffer,)
        return param - lr * (g / avg), new_buffers
