"""RMSprop with momentum, centering and L2 weight decay: PyTorch's update formula."""
from __future__ import annotations

import numpy as np

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

    def update(self, param, grad, state, group):
        alpha = group["alpha"]
        g = -grad if group["maximize"] else grad
        if group["weight_decay"]:
            g = g + group["weight_decay"] * param
        if not state:
            state.update(step=0, square_avg=np.zeros_like(param))
            if group["momentum"] > 0:
                state["momentum_buffer"] = np.zeros_like(param)
            if group["centered"]:
                state["grad_avg"] = np.zeros_like(param)
        state["step"] += 1
        state["square_avg"] = square_avg = state["square_avg"] * alpha + (1 - alpha) * g * g
        if group["centered"]:
            state["grad_avg"] = grad_avg = state["grad_avg"] + (g - state["grad_avg"]) * (1 - alpha)
            avg = np.sqrt(square_avg - grad_avg * grad_avg) + group["eps"]
        else:
            avg = np.sqrt(square_avg) + group["eps"]
        if group["momentum"] > 0:
            state["momentum_buffer"] = buffer = state["momentum_buffer"] * group["momentum"] + g / avg
            return param - group["lr"] * buffer
        return param - group["lr"] * (g / avg)
