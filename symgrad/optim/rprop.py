"""Rprop: a per-element step size that grows while the gradient keeps its sign and shrinks when it flips
(PyTorch's update formula)."""
from __future__ import annotations

import numpy as np

from .optimizer import Optimizer


class Rprop(Optimizer):
    """step *= etaplus (same sign as last time), etaminus (flipped: and no move this step), or 1, clipped to
    step_sizes; p -= sign(g) * step."""

    group_keys = ("lr", "etas", "step_sizes", "foreach", "maximize", "differentiable", "capturable")

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, maximize=False, **options):
        if lr < 0 or not 0 < etas[0] < 1 < etas[1]:
            raise ValueError(f"Invalid Rprop hyperparameter: lr={lr}, etas={etas}")
        super().__init__(params, dict(lr=lr, etas=tuple(etas), step_sizes=tuple(step_sizes), maximize=maximize),
                         **options)

    def update(self, param, grad, state, group):
        g = -grad if group["maximize"] else grad
        if not state:
            state.update(step=0, prev=np.zeros_like(param), step_size=np.full_like(param, group["lr"]))
        state["step"] += 1
        etaminus, etaplus = group["etas"]
        agreement = np.sign(g * state["prev"])
        factor = np.where(agreement > 0, etaplus, np.where(agreement < 0, etaminus, 1.0)).astype(param.dtype)
        state["step_size"] = np.clip(state["step_size"] * factor, *group["step_sizes"]).astype(param.dtype)
        g = np.where(agreement < 0, 0, g).astype(param.dtype)
        state["prev"] = g
        return param - np.sign(g) * state["step_size"]
