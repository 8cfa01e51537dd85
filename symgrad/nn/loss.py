"""More loss modules: L1Loss, SmoothL1Loss (beta), HuberLoss (delta), KLDivLoss (log_target, 'batchmean'), and
the margin, embedding and likelihood losses (their functional forms with fixed options)."""
from __future__ import annotations

from . import functional as F
from .functional import huber_loss, kl_div, l1_loss, smooth_l1_loss
from .modules import _Loss


class L1Loss(_Loss):
    loss = staticmethod(l1_loss)


class SmoothL1Loss(_Loss):
    def __init__(self, size_average=None, reduce=None, reduction="mean", beta=1.0):
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input, target):
        return smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    def __init__(self, reduction="mean", delta=1.0):
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input, target):
        return huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class KLDivLoss(_Loss):
    def __init__(self, size_average=None, reduce=None, reduction="mean", log_target=False):
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input, target):
        return kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class _OptionsLoss(_Loss):
    """A loss taking its inputs and `options` (keyword arguments of the functional form, set when built)."""

    options = {}
    inputs = ("input", "target")  # forward's parameters, PyTorch's names (a program may pass them by keyword)

    def __init__(self, *args, size_average=None, reduce=None, reduction="mean", **kwargs):
        super().__init__(size_average, reduce, reduction)
        names = tuple(type(self).options)
        if len(args) > len(names) or any(key not in names for key in kwargs):
            raise TypeError(f"{type(self).__name__} takes {names} and reduction, got {args} {kwargs}")
        for name, value in {**type(self).options, **dict(zip(names, args)), **kwargs}.items():
            setattr(self, name, value)

    def forward(self, *args, **kwargs):
        names = type(self).inputs
        given = {**dict(zip(names, args)), **kwargs}
        if len(args) > len(names) or len(given) != len(args) + len(kwargs) or set(given) != set(names):
            raise TypeError(f"{type(self).__name__}.forward takes {names}, got {len(args)} positional and "
                            f"{sorted(kwargs)} by keyword")
        return type(self).loss(*(given[name] for name in names),
                               **{name: getattr(self, name) for name in type(self).options}, reduction=self.reduction)


class MarginRankingLoss(_OptionsLoss):
    loss, options = staticmethod(F.margin_ranking_loss), {"margin": 0.0}
    inputs = ("input1", "input2", "target")


class HingeEmbeddingLoss(_OptionsLoss):
    loss, options = staticmethod(F.hinge_embedding_loss), {"margin": 1.0}


class SoftMarginLoss(_OptionsLoss):
    loss = staticmethod(F.soft_margin_loss)


class MultiLabelSoftMarginLoss(_OptionsLoss):
    loss, options = staticmethod(F.multilabel_soft_margin_loss), {"weight": None}


class MultiMarginLoss(_OptionsLoss):
    loss, options = staticmethod(F.multi_margin_loss), {"p": 1, "margin": 1.0, "weight": None}


class CosineEmbeddingLoss(_OptionsLoss):
    loss, options = staticmethod(F.cosine_embedding_loss), {"margin": 0.0}
    inputs = ("input1", "input2", "target")


class TripletMarginLoss(_OptionsLoss):
    loss, options = staticmethod(F.triplet_margin_loss), {"margin": 1.0, "p": 2.0, "eps": 1e-6, "swap": False}
    inputs = ("anchor", "positive", "negative")


class PoissonNLLLoss(_OptionsLoss):
    loss, options = staticmethod(F.poisson_nll_loss), {"log_input": True, "full": False, "eps": 1e-8}
    inputs = ("log_input", "target")


class GaussianNLLLoss(_OptionsLoss):
    loss, options = staticmethod(F.gaussian_nll_loss), {"full": False, "eps": 1e-6}
    inputs = ("input", "target", "var")


class CTCLoss(_Loss):
    """F.ctc_loss with a fixed blank, reduction and zero_infinity."""

    def __init__(self, blank=0, reduction="mean", zero_infinity=False):
        super().__init__(reduction=reduction)
        self.blank, self.zero_infinity = blank, zero_infinity

    def forward(self, log_probs, targets, input_lengths, target_lengths):
        return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank, self.reduction,
                          self.zero_infinity)
