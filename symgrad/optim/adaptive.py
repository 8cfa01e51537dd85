"""Adadelta, Adamax, NAdam and RAdam: PyTorch's update formulas (its single-tensor code path). Adadelta's is written
in parts (`Optimizer.formula`), so its group step is compiled; the others with `Optimizer.update` on NumPy arrays."""
from __future__ import annotations

import math

import numpy as np

from .optimizer import Optimizer


def _checked(name, lr, eps, weight_decay, betas=(0.0, 0.0)):
    if lr < 0 or eps < 0 or weight_decay < 0 or not all(0 <= b < 1 for b in betas):
        raise ValueError(f"Invalid {name} hyperparameter: lr={lr}, eps={eps}, weight_decay={weight_decay}, "
                         f"betas={betas}")


def _direction(param, grad, decay, group):
    """The gradient (negated to maximize) plus L2 weight decay, unless the decay is decoupled."""
    g = -grad if group["maximize"] else grad
    if group["weight_decay"] and not group.get("decoupled_weight_decay"):
        g = g + decay * param
    return g


def _decayed(param, group):
    """The parameter shrunk by lr * weight_decay first, for decoupled weight decay (AdamW's)."""
    if group["weight_decay"] and group.get("decoupled_weight_decay"):
        return param * (1 - group["lr"] * group["weight_decay"])
    return param


def _moments(state, g, beta1, beta2):
    """Adam's running means of the gradient and its square, updated in the state."""
    state["exp_avg"] = state["exp_avg"] + (g - state["exp_avg"]) * (1 - beta1)
    state["exp_avg_sq"] = state["exp_avg_sq"] * beta2 + (1 - beta2) * g * g
    return state["exp_avg"], state["exp_avg_sq"]


class Adadelta(Optimizer):
    """v = rho v + (1 - rho) g^2; d = sqrt(u + eps) / sqrt(v + eps) g; u = rho u + (1 - rho) d^2; p -= lr d."""

    group_keys = ("lr", "rho", "eps", "weight_decay", "maximize", "capturable", "foreach", "differentiable")

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, maximize=False, **options):
        _checked("Adadelta", lr, eps, weight_decay)
        if not 0 <= rho <= 1:
            raise ValueError(f"Invalid rho value: {rho}")
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize), **options)

    def prepare(self, param, state, group):
        if not state:
            state.update(step=0, square_avg=np.zeros_like(param), acc_delta=np.zeros_like(param))
        state["step"] += 1
        return group["weight_decay"], group["rho"], 1 - group["rho"], group["eps"], group["lr"]

    def buffers(self, state, group):
        return state["square_avg"], state["acc_delta"]

    def store(self, state, buffers, group):
        state["square_avg"], state["acc_delta"] = buffers

    def structure(self, group):
        return "Adadelta", bool(group["weight_decay"]), group["maximize"]

    def formula(self, param, grad, buffers, coefficients, group):
        weight_decay, rho, mix, eps, lr = coefficients
        g = _direction(param, grad, weight_decay, group)
        square_avg = buffers[0] * rho + mix * g * g
        delta = np.sqrt(buffers[1] + eps) / np.sqrt(square_avg + eps) * g
        acc_delta = buffers[1] * rho + mix * delta * delta
        return param - lr * delta, (square_avg, acc_delta)


class Adamax(Optimizer):
    """Adam with the infinity norm: u = max(beta2 u, |g| + eps); p -= lr / (1 - beta1^t) m / u."""

    group_keys = ("lr", "betas", "eps", "weight_decay", "foreach", "maximize", "differentiable", "capturable")

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, maximize=False, **options):
        _checked("Adamax", lr, eps, weight_decay, betas)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                      maximize=maximize), **options)

    def update(self, param, grad, state, group):
        beta1, beta2 = group["betas"]
        g = _direction(param, grad, group["weight_decay"], group)
        if not state:
            state.update(step=0, exp_avg=np.zeros_like(param), exp_inf=np.zeros_like(param))
        state["step"] += 1
        state["exp_avg"] = exp_avg = state["exp_avg"] + (g - state["exp_avg"]) * (1 - beta1)
        state["exp_inf"] = exp_inf = np.maximum(state["exp_inf"] * beta2, np.abs(g) + group["eps"])
        return param - group["lr"] / (1 - beta1 ** state["step"]) * (exp_avg / exp_inf)


class NAdam(Optimizer):
    """Adam with Nesterov momentum and PyTorch's momentum schedule mu_t = beta1 (1 - 0.96^(t psi) / 2); the
    running product of the mu_t is rounded to float32 as PyTorch stores it."""

    group_keys = (
        "lr", "betas", "eps", "weight_decay", "momentum_decay", "decoupled_weight_decay", "maximize", "foreach",
        "capturable", "differentiable",
    )

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, maximize=False, **options):
        _checked("NAdam", lr, eps, weight_decay, betas)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                      momentum_decay=momentum_decay, decoupled_weight_decay=decoupled_weight_decay,
                                      maximize=maximize), **options)

    def update(self, param, grad, state, group):
        beta1, beta2 = group["betas"]
        lr, decay = group["lr"], group["momentum_decay"]
        if not state:
            state.update(step=0, mu_product=1.0, exp_avg=np.zeros_like(param), exp_avg_sq=np.zeros_like(param))
        state["step"] += 1
        step = state["step"]
        param = _decayed(param, group)
        g = _direction(param, grad, group["weight_decay"], group)
        mu = beta1 * (1.0 - 0.5 * 0.96 ** (step * decay))
        mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((step + 1) * decay))
        # PyTorch keeps the product of the mu_t in a float32 tensor (its scalar dtype): so does this, for its numbers
        state["mu_product"] = float(np.float32(state["mu_product"]) * np.float32(mu))
        exp_avg, exp_avg_sq = _moments(state, g, beta1, beta2)
        denom = np.sqrt(exp_avg_sq / (1 - beta2 ** step)) + group["eps"]
        param = param + g / denom * (-lr * (1.0 - mu) / (1.0 - state["mu_product"]))
        return param + exp_avg / denom * ((-lr * mu_next) / (1.0 - state["mu_product"] * mu_next))


class RAdam(Optimizer):
    """Adam whose adaptive step is rectified by the variance of its estimate, plain momentum SGD while
    that variance is undefined (rho_t <= 5)."""

    group_keys = (
        "lr", "betas", "eps", "weight_decay", "maximize", "foreach", "capturable", "decoupled_weight_decay",
        "differentiable",
    )

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
                 maximize=False, **options):
        _checked("RAdam", lr, eps, weight_decay, betas)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                      decoupled_weight_decay=decoupled_weight_decay, maximize=maximize), **options)

    def update(self, param, grad, state, group):
        beta1, beta2 = group["betas"]
        if not state:
            state.update(step=0, exp_avg=np.zeros_like(param), exp_avg_sq=np.zeros_like(param))
        state["step"] += 1
        step, lr = state["step"], group["lr"]
        param = _decayed(param, group)
        exp_avg, exp_avg_sq = _moments(state, _direction(param, grad, group["weight_decay"], group), beta1, beta2)
        bias_correction2 = 1 - beta2 ** step
        corrected = exp_avg / (1 - beta1 ** step)
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
        if rho_t <= 5.0:
            return param - corrected * lr
        rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
        adaptive = math.sqrt(bias_correction2) / (np.sqrt(exp_avg_sq) + group["eps"])
        return param - corrected * lr * adaptive * rect
