"""SGD with momentum, dampening, Nesterov and weight decay: PyTorch's update formula."""
from __future__ import annotations

from .optimizer import Optimizer


class SGD(Optimizer):
    """p -= lr * d, where d is the gradient (plus weight_decay * p), through the momentum buffer if any."""

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, maximize=False):
        if lr < 0 or momentum < 0 or weight_decay < 0:
            raise ValueError(f"Invalid SGD hyperparameter: lr={lr}, momentum={momentum}, weight_decay={weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                                      nesterov=nesterov, maximize=maximize))

    def prepare(self, param, state, group):
        return group["lr"], group["weight_decay"], group["momentum"], 1 - group["dampening"]

    def buffers(self, state, group):
        return (state.get("momentum_buffer"),) if group["momentum"] else ()

    def store(self, state, buffers, group):
        if buffers:
            state["momentum_buffer"] = buffers[0]

    def structure(self, group):
        return "SGD", bool(group["weight_decay"]), bool(group["momentum"]), group["nesterov"], group["maximize"]

    def formula(self, param, grad, buffers, coefficients, group):
        lr, weight_decay, momentum, undamped = coefficients
        d = -grad if group["maximize"] else grad
        if group["weight_decay"]:
            d = d + weight_decay * param
        if not group["momentum"]:
            return param - lr * d, ()
        buffer = d.copy() if buffers[0] is None else momentum * buffers[0] + undamped * d
        d = d + momentum * buffer if group["nesterov"] else buffer
        return param - lr * d, (buffer,)
