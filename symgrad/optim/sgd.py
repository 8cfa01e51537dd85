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

    def update(self, param, grad, state, group):
        d = -grad if group["maximize"] else grad
        if group["weight_decay"]:
            d = d + group["weight_decay"] * param
        momentum = group["momentum"]
        if momentum:
            buffer = state.get("momentum_buffer")
            if buffer is None:
                buffer = d.copy()
            else:
                buffer = momentum * buffer + (1 - group["dampening"]) * d
            state["momentum_buffer"] = buffer
            d = d + momentum * buffer if group["nesterov"] else buffer
        return param - group["lr"] * d
