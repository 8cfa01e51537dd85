"""Adadelta, Adamax, NAdam and RAdam: PyTorch's update formulas (its single-tensor code path), written in parts
(`Optimizer.formula`), so a group's step is compiled; the coefficients (Python floats from the step count and the
hyper-parameters) are its run-time inputs."""
from __future__ import annotations

import math

import numpy as np

from ..ops import elementwise as E
from .optimizer import Optimizer


def _checked(name, lr, eps, weight_decay, betas=(0.0, 0.0)):
    if lr < 0 or eps < 0 or weight_decay < 0 or not all(0 <= b < 1 for b in betas):
        raise ValueError(f"Invalid {name} hyperparameter: lr={lr}, eps={eps}, weight_decay={weight_decay}, "
                         f"betas={betas}")


def _decay(group) -> float:
    """The weight decay's coefficient: L2's in the gradient, or the parameter's factor 1 - lr * weight_decay when
    the decay is decoupled (AdamW's)."""
    if group.get("decoupled_weight_decay"):
        return 1 - group["lr"] * group["weight_decay"]
    return group["weight_decay"]


def _decayed(param, decay, group):
    """The parameter shrunk by its factor first, for decoupled weight decay."""
    return param * decay if group["weight_decay"] and group.get("decoupled_weight_decay") else param


def _direction(param, grad, decay, group):
    """The gradient (negated to maximize) plus L2 weight decay, unless the decay is decoupled."""
    g = -grad if group["maximize"] else grad
    if group["weight_decay"] and not group.get("decoupled_weight_decay"):
        g = g + decay * param
    return g


def _adam_state(state, param, second="exp_avg_sq", **numbers):
    """The step count (and other numbers) and the two running moments, made on the first step in PyTorch's order;
    the count advanced."""
    if not state:
        state.update(step=0, **numbers, exp_avg=np.zeros_like(param), **{second: np.zeros_like(param)})
    state["step"] += 1
    return state["step"]


def _structure(name, group):
    return name, bool(group["weight_decay"]), bool(group.get("decoupled_weight_decay")), group["maximize"]


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

    def prepare(self, param, state, group):
        step = _adam_state(state, param, "exp_inf")
        beta1, beta2 = group["betas"]
        return group["weight_decay"], 1 - beta1, beta2, group["eps"], group["lr"] / (1 - beta1 ** step)

    def buffers(self, state, group):
        return state["exp_avg"], state["exp_inf"]

    def store(self, state, buffers, group):
        state["exp_avg"], state["exp_inf"] = buffers

    def structure(self, group):
        return _structure("Adamax", group)

    def formula(self, param, grad, buffers, coefficients, group):
        decay, mix1, beta2, eps, clr = coefficients
        g = _direction(param, grad, decay, group)
        exp_avg = buffers[0] + (g - buffers[0]) * mix1
        exp_inf = np.maximum(buffers[1] * beta2, np.abs(g) + eps)
        return param - clr * (exp_avg / exp_inf), (exp_avg, exp_inf)


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

    def prepare(self, param, state, group):
        step = _adam_state(state, param, mu_product=1.0)
        beta1, beta2 = group["betas"]
        lr, momentum_decay = group["lr"], group["momentum_decay"]
        mu = beta1 * (1.0 - 0.5 * 0.96 ** (step * momentum_decay))
        mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((step + 1) * momentum_decay))
        # PyTorch keeps the product of the mu_t in a float32 tensor (its scalar dtype): so does this, for its numbers
        state["mu_product"] = product = float(np.float32(state["mu_product"]) * np.float32(mu))
        return (_decay(group), 1 - beta1, beta2, 1 - beta2, 1 - beta2 ** step, group["eps"],
                -lr * (1.0 - mu) / (1.0 - product), -lr * mu_next / (1.0 - product * mu_next))

    def buffers(self, state, group):
        return state["exp_avg"], state["exp_avg_sq"]

    def store(self, state, buffers, group):
        state["exp_avg"], state["exp_avg_sq"] = buffers

    def structure(self, group):
        return _structure("NAdam", group)

    def formula(self, param, grad, buffers, coefficients, group):
        decay, mix1, beta2, mix2, bias_correction2, eps, grad_step, avg_step = coefficients
        param = _decayed(param, decay, group)
        g = _direction(param, grad, decay, group)
        exp_avg = buffers[0] + (g - buffers[0]) * mix1
        exp_avg_sq = buffers[1] * beta2 + mix2 * g * g
        denom = np.sqrt(exp_avg_sq / bias_correction2) + eps
        param = param + g / denom * grad_step
        return param + exp_avg / denom * avg_step, (exp_avg, exp_avg_sq)


class RAdam(Optimizer):
    """Adam whose adaptive step is rectified by the variance of its estimate, plain momentum SGD while
    that variance is undefined (rho_t <= 5). Which of the two a step takes is a run-time input (a select), so the
    group's update compiles once."""

    group_keys = (
        "lr", "betas", "eps", "weight_decay", "maximize", "foreach", "capturable", "decoupled_weight_decay",
        "differentiable",
    )

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
                 maximize=False, **options):
        _checked("RAdam", lr, eps, weight_decay, betas)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                      decoupled_weight_decay=decoupled_weight_decay, maximize=maximize), **options)

    def prepare(self, param, state, group):
        step = _adam_state(state, param)
        beta1, beta2 = group["betas"]
        bias_correction2 = 1 - beta2 ** step
        step_size = group["lr"] / (1 - beta1 ** step)
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
        rectified = rho_t > 5.0
        rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5 if rectified \
            else 0.0
        return (_decay(group), 1 - beta1, beta2, 1 - beta2, step_size, float(rectified),
                math.sqrt(bias_correction2) * rect, group["eps"])

    def buffers(self, state, group):
        return state["exp_avg"], state["exp_avg_sq"]

    def store(self, state, buffers, group):
        state["exp_avg"], state["exp_avg_sq"] = buffers

    def structure(self, group):
        return _structure("RAdam", group)

    def formula(self, param, grad, buffers, coefficients, group):
        decay, mix1, beta2, mix2, step_size, rectified, adaptive_step, eps = coefficients
        param = _decayed(param, decay, group)
        g = _direction(param, grad, decay, group)
        exp_avg = buffers[0] + (g - buffers[0]) * mix1
        exp_avg_sq = buffers[1] * beta2 + mix2 * g * g
        # (the adaptive factor selected, not multiplied by 0: with eps = 0 it is NaN where exp_avg_sq is 0)
        factor = E.where(rectified > 0, adaptive_step / (np.sqrt(exp_avg_sq) + eps), 1.0)
        return param - exp_avg * step_size * factor, (exp_avg, exp_avg_sq)
