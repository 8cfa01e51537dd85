"""PyTorch's randomized activations and self-normalizing dropouts: `F.rrelu` (random negative slopes while
training, their mean in eval) and `F.alpha_dropout`/`F.feature_alpha_dropout` (dropped values set to SELU's
negative saturation, then an affine map keeping mean and variance). Noise comes from sg.manual_seed's generator."""
from __future__ import annotations

import math

import numpy as np

from ..ops import elementwise as E
from ..eager.tensor import labelled, random_generator
from .functional import _activation, _ew, _in_place, _leaky_relu, _refuse_a_mask_drawn_once

_SELU_SATURATION = 1.7580993408473766  # SELU's scale * alpha: -this is its limit at -inf


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """x where x > 0, else a x: a drawn uniformly from [lower, upper] per element while training (the gradient
    is the slope drawn), (lower + upper) / 2 otherwise (leaky_relu's)."""
    if lower > upper:
        raise RuntimeError(f"Lower bound should be less than or equal to the upper bound, got {lower} > {upper}")
    if not training:
        return _in_place(inplace, input, lambda x: _activation(_leaky_relu, "RreluWithNoise", x,
                                                               (lower + upper) / 2))
    _refuse_a_mask_drawn_once(input, "rrelu")
    slopes = random_generator().uniform(lower, upper, tuple(input.shape)).astype(input.dtype)
    return _in_place(inplace, input, lambda x: _activation(_leaky_relu, "RreluWithNoise", x, slopes))


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    return rrelu(input, lower, upper, training, inplace=True)


def _alpha_dropout(input, p, training, inplace, feature, name):
    """PyTorch's _dropout_impl with alpha: each element (or, with `feature`, each (n, c) plane) kept with
    probability 1 - p, then x a + b, a = 1 / sqrt((alpha^2 p + 1)(1 - p)), b = alpha a (p - dropped)."""
    if not 0 <= p <= 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if feature and input.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    if not training or p == 0 or math.prod(input.shape) == 0:
        return input
    _refuse_a_mask_drawn_once(input, name)
    if p == 1:
        return _in_place(inplace, input, lambda x: labelled(_ew(E.multiply, (x, np.zeros((), input.dtype))), "Mul"))
    shape = tuple(input.shape[:2]) + (1,) * (input.ndim - 2) if feature else tuple(input.shape)
    keep = (random_generator().random(shape) >= p).astype(np.float64)
    a = 1.0 / math.sqrt((_SELU_SATURATION ** 2 * p + 1) * (1 - p))
    scale, shift = (keep * a).astype(input.dtype), ((keep - 1 + p) * _SELU_SATURATION * a).astype(input.dtype)
    return _in_place(inplace, input, lambda x: labelled(_ew(E.add, (_ew(E.multiply, (x, scale)), shift)), "Add"))


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    return _alpha_dropout(input, p, training, inplace, False, "alpha_dropout")


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    return _alpha_dropout(input, p, training, inplace, True, "feature_alpha_dropout")
