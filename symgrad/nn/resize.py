"""PyTorch's F.pad and F.interpolate on arrays, traced values and tensors, written with sg.pad, slicing and
gathers (sg.take) along each spatial axis, so gradients and both backends come from those ops.

Interpolation is separable: bilinear and trilinear are linear along each axis in turn, bicubic cubic convolution
along each (the same weights as PyTorch's, to rounding); 'area' is adaptive average pooling, as in PyTorch.
"""
from __future__ import annotations

import math

import numpy as np

from .. import numpy_api as sgnp
from ..core import UnsupportedOpError, fail
from . import convolution

_PAD_MODES = {"constant": "constant", "reflect": "reflect", "replicate": "edge", "circular": "wrap"}


def pad(input, pad, mode="constant", value=None):
    """`pad` lists (before, after) widths from the last dimension backwards; a negative width in constant mode
    crops. reflect needs widths smaller than the axis, circular at most its size."""
    input = input if hasattr(input, "ndim") else sgnp.asarray(input)
    widths = [int(w) for w in pad]
    if len(widths) % 2 or len(widths) > 2 * input.ndim:
        fail(f"pad: padding length {len(widths)} must be even and at most twice the input's {input.ndim} "
             f"dimensions", ValueError)
    if mode not in _PAD_MODES:
        fail(f"pad: mode {mode!r} is not one of {tuple(_PAD_MODES)}", ValueError)
    if mode != "constant" and value:
        fail(f"pad: padding mode {mode!r} doesn't take in value argument", ValueError)
    pairs = [(0, 0)] * input.ndim
    for i in range(len(widths) // 2):
        pairs[input.ndim - 1 - i] = (widths[2 * i], widths[2 * i + 1])
    for axis, (before, after) in enumerate(pairs):
        size = input.shape[axis]
        if mode == "constant" and size + before + after < 0:
            fail(f"pad: padding ({before}, {after}) leaves a negative size of dimension {axis} (size {size})",
                 ValueError)
        if mode != "constant" and min(before, after) < 0:
            fail(f"pad: negative padding ({before}, {after}) is only supported in constant mode", ValueError)
        if mode == "reflect" and max(before, after) >= size:
            fail(f"pad: Padding size should be less than the corresponding input dimension, but got: padding "
                 f"({before}, {after}) at dimension {axis} of input {tuple(input.shape)}", ValueError)
        if mode == "circular" and max(before, after) > size:
            fail(f"pad: Padding value causes wrapping around more than once: ({before}, {after}) at dimension "
                 f"{axis} of size {size}", ValueError)
    cropped = tuple(slice(-min(b, 0), size + min(a, 0)) for (b, a), size in zip(pairs, input.shape))
    if any(min(p) < 0 for p in pairs):
        input = input[cropped]
    growth = tuple((max(b, 0), max(a, 0)) for b, a in pairs)
    if not any(map(any, growth)):
        return input
    if mode == "constant":
        return sgnp.pad(input, growth, constant_values=0.0 if value is None else value)
    return sgnp.pad(input, growth, mode=_PAD_MODES[mode])


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resize the spatial axes of (N, C, *spatial) to `size` or floor(spatial * scale_factor): 'nearest' (the
    source floor(i step)), 'nearest-exact' (floor((i + 0.5) step), PyTorch's and PIL's), 'linear' (3-d),
    'bilinear' or 'bicubic' (4-d), 'trilinear' (5-d) or 'area'. A scale_factor sets the source step
    1 / scale_factor, as PyTorch, unless recompute_scale_factor (then the sizes' ratio)."""
    input = input if hasattr(input, "ndim") else sgnp.asarray(input)
    d = input.ndim - 2
    if d < 1:
        fail(f"interpolate: expected an input (N, C, *spatial), got shape {tuple(input.shape)}", ValueError)
    if antialias:
        fail("interpolate: antialias=True is not supported", UnsupportedOpError)
    linear = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}
    if mode not in ("nearest", "nearest-exact", "area", *linear):
        fail(f"interpolate: mode {mode!r} is not supported (nearest, nearest-exact, linear, bilinear, bicubic, "
             "trilinear, area)",
             UnsupportedOpError)
    if mode in linear and linear[mode] != d:
        fail(f"interpolate: mode {mode!r} needs a {linear[mode] + 2}-d input, got shape {tuple(input.shape)}",
             ValueError)
    if align_corners is not None and mode not in linear:
        fail("align_corners option can only be set with the interpolating modes: linear | bilinear | bicubic | "
             "trilinear", ValueError)
    if np.dtype(input.dtype).kind != "f":
        fail(f"interpolate: needs a float input, got {np.dtype(input.dtype)}", TypeError)
    spatial = tuple(input.shape[2:])
    sizes, steps = _target(spatial, size, scale_factor, recompute_scale_factor, d)
    if mode == "area":
        return convolution.adaptive_avg_pool(input, sizes, d=d, name="interpolate")
    out = input
    for axis, (n_in, n_out, step) in enumerate(zip(spatial, sizes, steps)):
        if mode in ("nearest", "nearest-exact"):
            places = np.arange(n_out) + (0.5 if mode == "nearest-exact" else 0.0)
            index = np.minimum(np.floor(places * step).astype(np.int64), n_in - 1)
            out = sgnp.take(out, index, axis=2 + axis)
        else:
            along = _cubic_along if mode == "bicubic" else _linear_along
            out = along(out, 2 + axis, n_in, n_out, step, bool(align_corners))
    return out


def _target(spatial, size, scale_factor, recompute, d):
    """(output sizes, source step per output step) along each spatial axis."""
    if (size is None) == (scale_factor is None):
        fail("interpolate: give exactly one of size and scale_factor", ValueError)
    if size is not None:
        sizes = (size,) * d if isinstance(size, (int, np.integer)) else tuple(size)
        if len(sizes) != d or any(int(s) <= 0 for s in sizes):
            fail(f"interpolate: size must be {d} positive ints, got {size!r}", ValueError)
        sizes = tuple(int(s) for s in sizes)
        return sizes, tuple(i / o for i, o in zip(spatial, sizes))
    factors = (scale_factor,) * d if isinstance(scale_factor, (int, float, np.number)) else tuple(scale_factor)
    if len(factors) != d or any(f <= 0 for f in factors):
        fail(f"interpolate: scale_factor must be {d} positive numbers, got {scale_factor!r}", ValueError)
    sizes = tuple(int(math.floor(i * f)) for i, f in zip(spatial, factors))
    if any(s <= 0 for s in sizes):
        fail(f"interpolate: scale_factor {scale_factor!r} gives an empty output from {spatial}", ValueError)
    if recompute:
        return sizes, tuple(i / o for i, o in zip(spatial, sizes))
    return sizes, tuple(1.0 / f for f in factors)


def _source(n_in, n_out, step, align_corners):
    """PyTorch's source coordinate of each output place (area_pixel_compute_source_index), before clamping."""
    places = np.arange(n_out, dtype=np.float64)
    if align_corners:
        return places * ((n_in - 1) / (n_out - 1)) if n_out > 1 else np.zeros(n_out)
    return (places + 0.5) * step - 0.5


def _linear_along(x, axis, n_in, n_out, step, align_corners):
    """Linear interpolation along one axis at PyTorch's source coordinates. An axis of unchanged size is PyTorch's
    copy (each place its own neighbour, of weight 0): a neighbour's infinity would make its 0 weight NaN."""
    source = np.maximum(_source(n_in, n_out, step, align_corners), 0.0)
    low = np.minimum(np.floor(source).astype(np.int64), n_in - 1)
    high = low if n_in == n_out else np.minimum(low + 1, n_in - 1)
    shape = (n_out,) + (1,) * (x.ndim - 1 - axis)
    weight = (source - low).reshape(shape)
    below, above = sgnp.take(x, low, axis=axis), sgnp.take(x, high, axis=axis)
    return sgnp.add(sgnp.multiply(below, (1.0 - weight).astype(x.dtype)), sgnp.multiply(above, weight.astype(x.dtype)))


_CUBIC_A = -0.75  # PyTorch's (and OpenCV's) cubic convolution coefficient


def _cubic_along(x, axis, n_in, n_out, step, align_corners):
    """Cubic convolution along one axis (Keys, A = -0.75) over the four neighbours of PyTorch's source
    coordinate, unclamped as its bicubic, the neighbours' indices clamped to the edge; separable, so two axes
    in turn give PyTorch's bicubic to rounding."""
    source = _source(n_in, n_out, step, align_corners)
    start = np.floor(source)
    t = source - start
    a = _CUBIC_A
    near = lambda s: ((a + 2) * s - (a + 3)) * s * s + 1  # noqa: E731  |s| <= 1
    far = lambda s: ((a * s - 5 * a) * s + 8 * a) * s - 4 * a  # noqa: E731  1 < |s| < 2
    shape = (n_out,) + (1,) * (x.ndim - 1 - axis)
    out = None
    for k, weight in enumerate((far(t + 1), near(t), near(1 - t), far(2 - t))):
        index = np.clip(start.astype(np.int64) - 1 + k, 0, n_in - 1)
        term = sgnp.multiply(sgnp.take(x, index, axis=axis), weight.reshape(shape).astype(x.dtype))
        out = term if out is None else sgnp.add(out, term)
    return out
