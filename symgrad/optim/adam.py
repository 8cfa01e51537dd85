"""Adam (and AMSGrad) with L2 or decoupled weight decay: PyTorch's update formula, bias corrections included."""
from __future__ import annotations

import math

import numpy as np

from .adaptive import _decay, _decayed, _direction
from .optimizer import Optimizer


class Adam(Optimizer):
    """m, v: running means of the gradient and its square; p -= lr/(1-b1^t) * m / (sqrt(v)/sqrt(1-b2^t) + eps).
    A group's weight decay is L2 in the gradient, or with decoupled_weight_decay (AdamW's, which PyTorch's Adam also
    takes, per group) a shrinking of the parameter by 1 - lr * weight_decay before the step."""

    group_keys = (
        "lr", "betas", "eps", "weight_decay", "amsgrad", "maximize", "foreach", "capturable", "differentiable",
        "fused", "decoupled_weight_decay",
    )

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False,
                 maximize=False, decoupled_weight_decay=False, **options):
        if lr < 0 or eps < 0 or weight_decay < 0 or not all(0 <= b < 1 for b in betas):
            raise ValueError(f"Invalid Adam hyperparameter: lr={lr}, betas={betas}, eps={eps}, "
                             f"weight_decay={weight_decay}")
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                      amsgrad=amsgrad, maximize=maximize,
                                      decoupled_weight_decay=decoupled_weight_decay), **options)

    def prepare(self, param, state, group):
        if not state:
            state.update(step=0, exp_avg=np.zeros_like(param), exp_avg_sq=np.zeros_like(param))
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = np.zeros_like(param)
        state["step"] += 1
        beta1, beta2 = group["betas"]
        step = state["step"]
        return (_decay(group), 1 - beta1, beta2, 1 - beta2, group["lr"] / (1 - beta1 ** step),
                math.sqrt(1 - beta2 ** step), group["eps"])

    def buffers(self, state, group):
        names = ("exp_avg", "exp_avg_sq", "max_exp_avg_sq") if group["amsgrad"] else ("exp_avg", "exp_avg_sq")
        return tuple(state[name] for name in names)

    def store(self, state, buffers, group):
        state["exp_avg"], state["exp_avg_sq"] = buffers[:2]
        if group["amsgrad"]:
            state["max_exp_avg_sq"] = buffers[2]

    def structure(self, group):
        return ("Adam", bool(group["weight_decay"]), bool(group["decoupled_weight_decay"]), group["amsgrad"],
                group["maximize"])

    def formula(self, param, grad, buffers, coefficients, group):
        decay, mix1, beta2, mix2, step_size, bias_correction2_sqrt, eps = coefficients
        param = _decayed(param, decay, group)
        g = _direction(param, grad, decay, group)
        exp_avg = buffers[0] + (g - buffers[0]) * mix1
        exp_avg_sq = buffers[1] * beta2 + mix2 * g * g
        new_buffers = (exp_avg, exp_avg_sq)
        if group["amsgrad"]:
            exp_avg_sq = np.maximum(buffers[2], exp_avg_sq)
            new_buffers += (exp_avg_sq,)
        denom = np.sqrt(exp_avg_sq) / bias_correction2_sqrt + eps
        return param - step_size * exp_avg / denom, new_buffers
