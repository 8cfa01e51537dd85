"""Rprop: a per-element step size that grows while the gradient keeps its sign and shrinks when it flips
(PyTorch's update formula), written in parts (`Optimizer.formula`), so a group's step is compiled."""
from __future__ import annotations

import numpy as np

from ..ops import elementwise as E
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

    def prepare(self, param, state, group):
        if not state:
            state.update(step=0, prev=np.zeros_like(param), step_size=np.full_like(param, group["lr"]))
        state["step"] += 1
        return (*group["etas"], *group["step_sizes"])

    def buffers(self, state, group):
        return state["prev"], state["step_size"]

    def store(self, state, buffers, group):
        state["prev"], state["step_size"] = buffers

    def structure(self, group):
        return "Rprop", group["maximize"]

    def formula(self, param, grad, buffers, coefficients, group):
        etaminus, etaplus, smallest, largest = coefficients
        g = -grad if group["maximize"] else grad
        agreement = g * buffers[0]
        factor = E.where(agreement > 0, etaplus, E.where(agreement < 0, etaminus, 1.0))  # (1 at NaN, as PyTorch)
        step_size = np.minimum(np.maximum(buffers[1] * factor, smallest), largest)
        g = E.where(agreement < 0, 0.0, g)
        return param - _sign(g) * step_size, (g, step_size)


def _sign(x):
    """PyTorch's sign: 0 at NaN (NumPy's is NaN), so a NaN gradient leaves the parameter as it is."""
    return E.where(E.not_equal(x, x), 0.0, np.sign(x))
