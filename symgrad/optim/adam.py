"""Adam (and AMSGrad) with L2 weight decay: PyTorch's update formula, bias corrections included."""
from __future__ import annotations

import math

import numpy as np

from .optimizer import Optimizer


class Adam(Optimizer):
    """m, v: running means of the gradient and its square; p -= lr/(1-b1^t) * m / (sqrt(v)/sqrt(1-b2^t) + eps)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False,
                 maximize=False):
        if lr < 0 or eps < 0 or weight_decay < 0 or not all(0 <= b < 1 for b in betas):
            raise ValueError(f"Invalid Adam hyperparameter: lr={lr}, betas={betas}, eps={eps}, "
                             f"weight_decay={weight_decay}")
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                      amsgrad=amsgrad, maximize=maximize))

    def update(self, param, grad, state, group):
        beta1, beta2 = group["betas"]
        g = -grad if group["maximize"] else grad
        if group["weight_decay"]:
            g = g + group["weight_decay"] * param
        if not state:
            state.update(step=0, exp_avg=np.zeros_like(param), exp_avg_sq=np.zeros_like(param))
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = np.zeros_like(param)
        state["step"] += 1
        step = state["step"]
        state["exp_avg"] = exp_avg = state["exp_avg"] + (g - state["exp_avg"]) * (1 - beta1)
        state["exp_avg_sq"] = exp_avg_sq = state["exp_avg_sq"] * beta2 + (1 - beta2) * g * g
        if group["amsgrad"]:
            state["max_exp_avg_sq"] = exp_avg_sq = np.maximum(state["max_exp_avg_sq"], exp_avg_sq)
        bias_correction1 = 1 - beta1 ** step
        bias_correction2_sqrt = math.sqrt(1 - beta2 ** step)
        denom = np.sqrt(exp_avg_sq) / bias_correction2_sqrt + group["eps"]
        return param - (group["lr"] / bias_correction1) * exp_avg / denom
