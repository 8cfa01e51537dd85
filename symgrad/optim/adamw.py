"""AdamW: Adam with decoupled weight decay (the parameter shrinks by lr * weight_decay before Adam's step)."""
from __future__ import annotations

from .adam import Adam


class AdamW(Adam):
    """PyTorch's AdamW: p *= 1 - lr * weight_decay, then Adam's update without L2 in the gradient. Written as Adam's
    formula of the shrunk parameter, so a group's update is compiled as Adam's is (the factor a run-time input)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False,
                 maximize=False, **options):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                         maximize=maximize, decoupled_weight_decay=True, **options)

    def prepare(self, param, state, group):
        return (1 - group["lr"] * group["weight_decay"],) + super().prepare(param, state, _without_l2(group))

    def structure(self, group):
        return ("AdamW",) + super().structure(_without_l2(group))[2:]

    def formula(self, param, grad, buffers, coefficients, group):
        return super().formula(param * coefficients[0], grad, buffers, coefficients[1:], _without_l2(group))


def _without_l2(group) -> dict:
    """The group as Adam reads it: the decay is decoupled, none of it goes into the gradient."""
    return {**group, "weight_decay": 0}
