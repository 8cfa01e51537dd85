"""AdamW: Adam with decoupled weight decay (the parameter shrinks by lr * weight_decay before Adam's step)."""
from __future__ import annotations

from .adam import Adam


class AdamW(Adam):
    """PyTorch's AdamW: Adam(decoupled_weight_decay=True) with weight_decay 1e-2 by default."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False,
                 maximize=False, **options):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                         maximize=maximize, decoupled_weight_decay=True, **options)
