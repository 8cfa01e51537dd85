"""Convolution and pooling over N-d images (N, C, *spatial), with PyTorch's arguments, written with the
im2col primitive (symgrad/ops/conv.py), a matrix product and reductions: they work on arrays, traced
values and tensors, and every transform (grad, jvp, vmap) and both backends see ordinary primitives.

A max pooling hands its gradient to the first maximal element of each window, as PyTorch does (NaN
counts as maximal, so it propagates).
"""
from __future__ import annotations

import math

import numpy as np

from .. import numpy_api as sgnp
from ..core import Tracer, UnsupportedOpError, fail
from ..ops.conv import col2im_p, im2col_impl, im2col_p, output_size as output_size_of
from ..ops.indexing import take_p
from ..ops.linalg import matmul_p
from ..ops.reduce import first_max_p
from ..ops.shape import broadcast_to_p, reduce_sum_p, reshape_p, transpose_p


def _sizes(value, d, name) -> tuple:
    """An int or a sequence of d ints, as d ints."""
    values = (value,) * d if isinstance(value, (int, np.integer)) else tuple(value)
    if len(values) != d or not all(isinstance(v, (int, np.integer)) for v in values):
        fail(f"{name} must be an int or {d} ints, got {value!r}", ValueError)
    return tuple(int(v) for v in values)


def _padding(padding, kernel, stride, dilation, d) -> tuple:
    """(lo, hi) per spatial axis from an int, d ints, 'valid' or 'same' (PyTorch puts the odd extra at the end)."""
    if padding == "valid":
        return ((0, 0),) * d
    if padding == "same":
        if any(s != 1 for s in stride):
            fail("padding='same' is not supported for strided convolutions", ValueError)
        totals = [dl * (k - 1) for k, dl in zip(kernel, dilation)]
        return tuple((t // 2, t - t // 2) for t in totals)
    if isinstance(padding, str):
        fail(f"Invalid padding string {padding!r}, should be one of ('valid', 'same')", ValueError)
    pads = _sizes(padding, d, "padding")
    if any(p < 0 for p in pads):
        fail(f"negative padding is not supported, got {padding!r}", ValueError)
    return tuple((p, p) for p in pads)


def _batched(input, d, name):
    """(input as (N, C, *spatial), whether a batch axis was added): PyTorch takes (C, *spatial) too."""
    input = input if hasattr(input, "ndim") and hasattr(input, "shape") else sgnp.asarray(input)
    if input.ndim == d + 1:
        return sgnp.reshape(input, (1, *input.shape)), True
    if input.ndim != d + 2:
        fail(f"{name}: expected a {d + 1}-d (unbatched) or {d + 2}-d (batched) input, got shape {tuple(input.shape)}",
             ValueError)
    return input, False


def _unbatched(out, added):
    return sgnp.reshape(out, tuple(out.shape[1:])) if added else out


def _per_example(matrices, batch):
    """The same matrices (..., m, k) for each of `batch` examples: a product's batch axes must match (the
    backends read them from one place, they are not copied)."""
    return broadcast_to_p(matrices, shape=(batch, *matrices.shape))


def _pooled_windows(x, fill, window):
    """(patches as (K, N*C*L), the pooled image's shape (N, C, *out)): a pooling reduces over the first axis,
    each step over all images, channels and positions at once, in memory in that order (NumPy reduces a
    middle axis of short rows, as of im2col's (N, C, *kernel, *out), many times slower)."""
    d = len(window["kernel"])
    patches = im2col_p(x, fill=fill, **window)
    image = (*patches.shape[:2], *patches.shape[2 + d:])
    first = transpose_p(patches, perm=(*range(2, 2 + d), 0, 1, *range(2 + d, 2 + 2 * d)))
    return reshape_p(first, shape=(math.prod(window["kernel"]), math.prod(image))), image


def conv(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, *, d, name="conv"):
    """PyTorch's conv{d}d: weight (C_out, C_in / groups, *kernel), bias (C_out,)."""
    x, added = _batched(input, d, name)
    if weight.ndim != d + 2:
        fail(f"{name}: weight must be {d + 2}-d (C_out, C_in / groups, *kernel), got shape {tuple(weight.shape)}",
             ValueError)
    channels, out_channels, kernel = x.shape[1], weight.shape[0], tuple(weight.shape[2:])
    if not isinstance(groups, (int, np.integer)) or groups < 1 or out_channels % groups:
        fail(f"{name}: groups={groups!r} must be a positive int dividing the {out_channels} output channels",
             ValueError)
    if channels != weight.shape[1] * groups:
        fail(f"{name}: Given groups={groups}, weight of size {tuple(weight.shape)}, expected input{tuple(x.shape)} "
             f"to have {weight.shape[1] * groups} channels, but got {channels} channels instead", ValueError)
    if np.dtype(x.dtype).kind != "f" or np.dtype(weight.dtype).kind != "f":
        fail(f"{name}: needs float input and weight, got {np.dtype(x.dtype)} and {np.dtype(weight.dtype)}", TypeError)
    if x.dtype != weight.dtype:  # NumPy's promotion, as sg.matmul (and so nn.Linear) does it
        common = np.promote_types(x.dtype, weight.dtype)
        x, weight = sgnp.astype(x, common), sgnp.astype(weight, common)
    stride, dilation = _sizes(stride, d, "stride"), _sizes(dilation, d, "dilation")
    pads = _padding(padding, kernel, stride, dilation, d)
    cols = im2col_p(x, kernel=kernel, stride=stride, dilation=dilation, padding=pads, fill="0")
    batch, out_sizes = x.shape[0], tuple(cols.shape[2 + d:])
    inner, positions = weight.shape[1] * math.prod(kernel), math.prod(out_sizes)
    by_group = (groups,) if groups > 1 else ()  # (N, C*K, L) patches, or (N, groups, C*K / groups, L)
    weights = _per_example(reshape_p(weight, shape=(*by_group, out_channels // groups, inner)), batch)
    out = matmul_p(weights, reshape_p(cols, shape=(batch, *by_group, inner, positions)))
    out = reshape_p(out, shape=(batch, out_channels, *out_sizes))
    if bias is not None:
        out = sgnp.add(out, sgnp.reshape(bias, (out_channels,) + (1,) * d))
    return _unbatched(out, added)


def conv_transpose(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1, *, d,
                   name="conv_transpose"):
    """PyTorch's conv_transpose{d}d, the input-gradient of conv{d}d: weight (C_in, C_out / groups, *kernel) takes
    the input to patches by one matrix product, which col2im (im2col's adjoint) sums into the image. The output
    is (L - 1) stride - 2 padding + dilation (kernel - 1) + output_padding + 1 long; output_padding adds places
    at the end, filled from the cropped padding where there is some, else zeros."""
    x, added = _batched(input, d, name)
    if weight.ndim != d + 2:
        fail(f"{name}: weight must be {d + 2}-d (C_in, C_out / groups, *kernel), got shape {tuple(weight.shape)}",
             ValueError)
    channels, kernel = x.shape[1], tuple(weight.shape[2:])
    if not isinstance(groups, (int, np.integer)) or groups < 1 or weight.shape[0] % groups:
        fail(f"{name}: groups={groups!r} must be a positive int dividing the {weight.shape[0]} input channels",
             ValueError)
    if channels != weight.shape[0]:
        fail(f"{name}: Given transposed=1, weight of size {tuple(weight.shape)}, expected input{tuple(x.shape)} to "
             f"have {weight.shape[0]} channels, but got {channels} channels instead", ValueError)
    if np.dtype(x.dtype).kind != "f" or np.dtype(weight.dtype).kind != "f":
        fail(f"{name}: needs float input and weight, got {np.dtype(x.dtype)} and {np.dtype(weight.dtype)}", TypeError)
    if x.dtype != weight.dtype:
        common = np.promote_types(x.dtype, weight.dtype)
        x, weight = sgnp.astype(x, common), sgnp.astype(weight, common)
    stride, dilation = _sizes(stride, d, "stride"), _sizes(dilation, d, "dilation")
    pads, extras = _sizes(padding, d, "padding"), _sizes(output_padding, d, "output_padding")
    if any(p < 0 for p in pads) or any(s < 1 for s in stride) or any(dl < 1 for dl in dilation):
        fail(f"{name}: padding must be >= 0 and stride, dilation >= 1, got padding={padding!r}, stride={stride}, "
             f"dilation={dilation}", ValueError)
    if any(e < 0 or (e >= s and e >= dl) for e, s, dl in zip(extras, stride, dilation)):
        fail(f"{name}: output padding must be smaller than either stride or dilation, got "
             f"output_padding={output_padding!r}, stride={stride}, dilation={dilation}", ValueError)
    batch, sizes = x.shape[0], tuple(x.shape[2:])
    out_per_group, positions = weight.shape[1], math.prod(sizes)
    rows = out_per_group * math.prod(kernel)
    image = reshape_p(x, shape=(batch, groups, channels // groups, positions))
    by_group = reshape_p(weight, shape=(groups, channels // groups, rows))
    cols = matmul_p(_per_example(transpose_p(by_group, perm=(0, 2, 1)), batch), image)  # (N, groups, rows, L)
    cols = reshape_p(cols, shape=(batch, groups * out_per_group, *kernel, *sizes))
    # col2im crops (p, p - e) where the cropped padding covers output_padding e, and zeros fill the rest
    window = [(p, max(p - e, 0)) for p, e in zip(pads, extras)]
    zeros = [max(e - p, 0) for p, e in zip(pads, extras)]
    spatial = tuple((n - 1) * s - 2 * p + dl * (k - 1) + e + 1 - z
                    for n, s, p, dl, k, e, z in zip(sizes, stride, pads, dilation, kernel, extras, zeros))
    if batch == 0 and all(s + z >= 0 for s, z in zip(spatial, zeros)):  # PyTorch's empty answer, output size 0 too
        out = reshape_p(cols, shape=(0, groups * out_per_group, *(s + z for s, z in zip(spatial, zeros))))
        return _unbatched(out if bias is None else sgnp.add(out, sgnp.reshape(bias, (-1,) + (1,) * d)), added)
    if any(s <= 0 for s in spatial):
        fail(f"{name}: an input of spatial size {sizes} gives a non-positive output size "
             f"{tuple(s + z for s, z in zip(spatial, zeros))}", ValueError)
    out = col2im_p(cols, kernel=kernel, stride=stride, dilation=dilation, padding=tuple(window), spatial=spatial)
    if any(zeros):
        out = sgnp.pad(out, ((0, 0), (0, 0)) + tuple((0, z) for z in zeros))
    if bias is not None:
        out = sgnp.add(out, sgnp.reshape(bias, (groups * out_per_group,) + (1,) * d))
    return _unbatched(out, added)


def _pool_window(kernel_size, stride, padding, dilation, ceil_mode, spatial, name):
    """im2col's window of a pooling. ceil_mode: a last, partial window where one starts inside the image or
    its left padding (PyTorch's rule), reached by padding further on the right."""
    d = len(spatial)
    kernel = _sizes(kernel_size, d, "kernel_size")
    stride = kernel if stride is None or (not isinstance(stride, int) and len(stride) == 0) else \
        _sizes(stride, d, "stride")
    pads, dilation = _sizes(padding, d, "padding"), _sizes(dilation, d, "dilation")
    if any(p > k // 2 for p, k in zip(pads, kernel)):
        fail(f"{name}: pad should be at most half of effective kernel size, but got pad={padding}, "
             f"kernel_size={kernel_size}", ValueError)
    padding = []
    for size, k, s, dl, p in zip(spatial, kernel, stride, dilation, pads):
        span = dl * (k - 1) + 1
        count = (-(-(size + 2 * p - span) // s) if ceil_mode else (size + 2 * p - span) // s) + 1
        if ceil_mode and (count - 1) * s >= size + p:
            count -= 1
        if count < 1:  # ceil_mode keeps one window that starts inside the image even when it overhangs it
            fail(f"{name}: a window of {k} (dilation {dl}) does not fit an input of size {size} padded by {p}",
                 ValueError)
        hi = max(p, (count - 1) * s + span - size - p) if ceil_mode else p
        padding.append((p, hi))
    return dict(kernel=kernel, stride=stride, dilation=dilation, padding=tuple(padding))


def _check_float(x, name):
    if np.dtype(x.dtype).kind != "f":
        fail(f"{name}: needs a float input, got {np.dtype(x.dtype)}", TypeError)


def max_pool(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False, *, d,
             name="max_pool"):
    """The maximum of each window (padding is -inf); the gradient goes to the window's first maximum.
    return_indices: also max_pool_indices (of a concrete input)."""
    if return_indices:
        return (max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, d=d, name=name),
                max_pool_indices(input, kernel_size, stride, padding, dilation, ceil_mode, d=d, name=name))
    x, added = _batched(input, d, name)
    _check_float(x, name)
    window = _pool_window(kernel_size, stride, padding, dilation, ceil_mode, tuple(x.shape[2:]), name)
    patches, image = _pooled_windows(x, "-inf", window)  # (K, N*C*L)
    pooled = _window_maximum(patches)
    if any(lo for lo, _ in window["padding"]):  # the padding that comes first at the low edges
        pooled = _window_maximum(sgnp.stack([_first_inside(x, window, image), pooled]))
    return _unbatched(reshape_p(pooled, shape=image), added)


def _first_inside(x, window, image):
    """(N*C*L,): each window's first place in x. Pooled again with the windows' maxima, in front, it takes the
    gradient of a window of -inf values, which their -inf padding, tied and first, took (PyTorch's goes to that
    place); where it is a finite maximum it was the first one already, and a NaN maximum stays the window's."""
    spatial, out = tuple(x.shape[2:]), image[2:]
    place = np.zeros(out, np.int64)
    for axis, (size, count) in enumerate(zip(spatial, out)):
        start = np.arange(count) * window["stride"][axis] - window["padding"][axis][0]
        dilation = window["dilation"][axis]
        coordinate = np.minimum(start + np.maximum(-(start // dilation), 0) * dilation, size - 1)
        place = place * size + coordinate.reshape((-1,) + (1,) * (len(out) - 1 - axis))
    rows = reshape_p(x, shape=(*x.shape[:2], math.prod(spatial)))
    return reshape_p(take_p(rows, place.reshape(-1), axis=2), shape=(math.prod(image),))


def _window_maximum(patches):
    """The maximum over the leading axis of patches (K, ...), a window's places in row-major order, with
    PyTorch's pooling gradient: all of it to the window's first maximum (or NaN). One primitive, so that an eager
    step defers it (its mask, a comparison, would be computed from values otherwise)."""
    return first_max_p(patches)


def max_pool_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, *, d,
                     name="max_pool"):
    """PyTorch's indices of the window maxima, int64, flat in each (unpadded) image plane: the first maximum of a
    window, or its last NaN (PyTorch's CPU kernel). Integers carry no gradient, so they are computed in NumPy."""
    if isinstance(input, Tracer) and not hasattr(input, "_data"):
        fail(f"{name}: return_indices=True needs a concrete input (a tensor or an array), not a traced value",
             UnsupportedOpError)
    x = np.asarray(input._data if hasattr(input, "_data") else input)
    added = x.ndim == d + 1
    x = x[None] if added else x
    _check_float(x, name)
    window = _pool_window(kernel_size, stride, padding, dilation, ceil_mode, tuple(x.shape[2:]), name)
    patches = im2col_impl(x, fill="-inf", **window)  # (N, C, *kernel, *out)
    out = patches.shape[2 + d:]
    flat = patches.reshape(*patches.shape[:2], math.prod(window["kernel"]), *out)
    nan = np.isnan(flat)
    last_nan = flat.shape[2] - 1 - np.argmax(nan[:, :, ::-1], axis=2)
    # a window whose places in x are all -inf ties with its padding: PyTorch's index is its first place in x
    inside = im2col_impl(np.ones(x.shape, x.dtype), fill="0", **window).reshape(flat.shape) != 0
    first_max = np.argmax(inside & (np.where(nan, -np.inf, flat) == flat.max(axis=2, keepdims=True, initial=-np.inf,
                                                                             where=~nan)), axis=2)
    offset = np.where(nan.any(axis=2), last_nan, first_max)  # (N, C, *out): a row-major place in the window
    place = np.zeros(offset.shape, np.int64)
    for axis, (offsets, size) in enumerate(zip(np.unravel_index(offset, window["kernel"]), x.shape[2:])):
        grid = np.arange(out[axis]).reshape((-1,) + (1,) * (d - 1 - axis))
        coordinate = grid * window["stride"][axis] + offsets * window["dilation"][axis] - window["padding"][axis][0]
        place = place * size + coordinate
    return place[0] if added else place


def max_unpool(input, indices, kernel_size, stride=None, padding=0, output_size=None, *, d, name="max_unpool"):
    """max_pool's partial inverse: zeros, with input's elements at their flat indices in each image plane
    (a gather from input and a 0, so the gradient of input is picked at the indices). Where an index repeats,
    the last element wins."""
    x, added = _batched(input, d, name)
    index = np.asarray(indices._data if hasattr(indices, "_data") else indices)
    index = index[None] if added else index
    if index.dtype.kind not in "iu" or index.shape != tuple(x.shape):
        fail(f"{name}: indices must be integers of the input's shape {tuple(x.shape)}, got {index.dtype} "
             f"{index.shape}", ValueError)
    kernel = _sizes(kernel_size, d, "kernel_size")
    stride = kernel if stride is None else _sizes(stride, d, "stride")
    pads = _sizes(padding, d, "padding")
    sizes = tuple((n - 1) * s - 2 * p + k for n, s, p, k in zip(x.shape[2:], stride, pads, kernel))
    if output_size is not None:
        wanted = tuple(int(v) for v in tuple(output_size)[-d:])
        if len(tuple(output_size)) not in (d, d + 2) or any(w <= 0 for w in wanted):
            fail(f"{name}: output_size must have {d} or {d + 2} positive elements, got {tuple(output_size)}",
                 ValueError)
        sizes = wanted
    planes, per_plane, plane = x.shape[0] * x.shape[1], math.prod(x.shape[2:]), math.prod(sizes)
    if index.size and (index.min() < 0 or index.max() >= plane):
        fail(f"{name}: Found an invalid max index: {int(index.max() if index.max() >= plane else index.min())} "
             f"(output volumes are of size {'x'.join(map(str, sizes))})", ValueError)
    zero_slot = planes * per_plane
    source = np.full((planes, plane), zero_slot, np.int64)
    source[np.repeat(np.arange(planes), per_plane), index.reshape(-1)] = np.arange(zero_slot)
    values = sgnp.concatenate([sgnp.reshape(x, (-1,)), np.zeros(1, x.dtype)])
    out = sgnp.reshape(sgnp.take(values, source.reshape(-1)), (*x.shape[:2], *sizes))
    return _unbatched(out, added)


def avg_pool(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
             divisor_override=None, *, d, name="avg_pool"):
    """The mean of each window: over the whole window (count_include_pad), or over its part inside the image."""
    x, added = _batched(input, d, name)
    _check_float(x, name)
    window = _pool_window(kernel_size, stride, padding, 1, ceil_mode, tuple(x.shape[2:]), name)
    patches, image = _pooled_windows(x, "0", window)
    total = reshape_p(reduce_sum_p(patches, axes=(0,)), shape=image)  # (N, C, *out)
    extended = any(hi != lo for lo, hi in window["padding"])  # by ceil_mode
    if divisor_override is not None:
        if int(divisor_override) <= 0:
            fail(f"{name}: divisor must be not zero", ValueError)
        divisor = float(divisor_override)
    elif not extended and (count_include_pad or not any(map(any, window["padding"]))):
        divisor = float(math.prod(window["kernel"]))
    else:  # per output position (the same for every channel): the window's elements inside the image, or
        # inside the image and its padding (count_include_pad), never those ceil_mode's extension adds
        if count_include_pad:
            counted = np.ones((1, 1, *(size + 2 * lo for size, (lo, _) in zip(x.shape[2:], window["padding"]))))
            counting = dict(window, padding=tuple((0, hi - lo) for lo, hi in window["padding"]))
        else:
            counted, counting = np.ones((1, 1, *x.shape[2:])), window
        inside = im2col_impl(counted, fill="0", **counting).sum(axis=tuple(range(2, 2 + d)))
        divisor = inside.astype(x.dtype)  # (1, 1, *out): broadcasts against (N, C, *out)
    return _unbatched(sgnp.divide(total, divisor), added)


def lp_pool(input, norm_type, kernel_size, stride=None, ceil_mode=False, *, d, name="lp_pool"):
    """PyTorch's power-average pooling: (the average of x**p over each window, times the window's size)**(1/p),
    computed as it computes it (a window of ceil_mode scales its average by the whole window). A window summing
    to 0 gives 0 with gradient 0 (PyTorch's relu there), never the root's infinite slope. p = inf is the largest
    |x| of each window, -inf the smallest, as PyTorch's (x**inf is no norm: windows of 1 or 0)."""
    x, _ = _batched(input, d, name)
    _check_float(x, name)
    p = float(norm_type)
    if math.isinf(p):
        sign = 1.0 if p > 0 else -1.0
        return sign * max_pool(sign * sgnp.abs(input), kernel_size, stride, 0, 1, ceil_mode, d=d, name=name)
    mean = avg_pool(sgnp.power(input, p), kernel_size, stride, 0, ceil_mode, d=d, name=name)
    total = mean * float(math.prod(_sizes(kernel_size, d, "kernel_size")))
    nonzero = sgnp.not_equal(total, 0.0)
    return sgnp.where(nonzero, sgnp.where(nonzero, total, 1.0) ** (1.0 / p), 0.0)


def _adaptive_windows(size, out):
    """PyTorch's adaptive windows along one axis: [floor(i*size/out), ceil((i+1)*size/out)) for each i."""
    return [((i * size) // out, -((-(i + 1) * size) // out)) for i in range(out)]


def adaptive_avg_pool(input, output_size, *, d, name="adaptive_avg_pool"):
    """Averages over PyTorch's adaptive windows: a reshaped mean where the sizes divide, else the means of
    the windows along one axis after another (a window is a product of intervals, so the mean of the row
    means is its mean; a matrix of weights would turn an infinity into NaN where its weight is 0). None in
    output_size keeps that axis's size."""
    return _adaptive(sgnp.mean, input, output_size, d, name)


def adaptive_max_pool(input, output_size, *, d, name="adaptive_max_pool"):
    """The maxima of PyTorch's adaptive windows, one axis after another from the last (a window is a product of
    intervals), the gradient to a window's first maximum in row-major order, as max_pool's."""
    return _adaptive(_first_maximum, input, output_size, d, name)


def _first_maximum(x, axis, keepdims=False):
    """The maximum over `axis` (an int or a tuple, increasing) with _window_maximum's gradient: to the first
    maximum in the row-major order of those axes."""
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    kept = tuple(a for a in range(x.ndim) if a not in axes)
    rest = tuple(x.shape[a] for a in kept)
    patches = sgnp.reshape(sgnp.transpose(x, axes + kept), (math.prod(x.shape[a] for a in axes),) + rest)
    out = _window_maximum(patches)
    return sgnp.reshape(out, tuple(1 if a in axes else n for a, n in enumerate(x.shape))) if keepdims else out


def _adaptive(reduce, input, output_size, d, name):
    x, added = _batched(input, d, name)
    _check_float(x, name)
    sizes = (output_size,) * d if isinstance(output_size, (int, np.integer)) or output_size is None else \
        tuple(output_size)
    if len(sizes) != d:
        fail(f"{name}: output_size must be an int or {d} values, got {output_size!r}", ValueError)
    spatial = tuple(x.shape[2:])
    sizes = tuple(s if o is None else int(o) for s, o in zip(spatial, sizes))
    if any(o <= 0 for o in sizes) or any(s == 0 for s in spatial):
        fail(f"{name}: output_size {sizes} and input spatial sizes {spatial} must be positive", ValueError)
    if all(s % o == 0 for s, o in zip(spatial, sizes)):
        split = tuple(v for s, o in zip(spatial, sizes) for v in (o, s // o))
        out = reduce(sgnp.reshape(x, (*x.shape[:2], *split)), axis=tuple(3 + 2 * i for i in range(d)))
        return _unbatched(out, added)
    out = x
    for axis, (size, target) in reversed(list(enumerate(zip(spatial, sizes)))):  # the last first: row-major ties
        if size == target:
            continue
        before = (slice(None),) * (2 + axis)
        out = sgnp.concatenate([reduce(out[before + (slice(start, end),)], axis=2 + axis, keepdims=True)
                                for start, end in _adaptive_windows(size, target)], axis=2 + axis)
    return _unbatched(out, added)


def _fold_window(kernel_size, dilation, padding, stride, name) -> dict:
    kernel, dilation, stride = (_sizes(v, 2, n) for v, n in ((kernel_size, "kernel_size"), (dilation, "dilation"),
                                                                (stride, "stride")))
    pads = _sizes(padding, 2, "padding")
    if min(kernel + dilation + stride) < 1 or min(pads) < 0:
        fail(f"{name}: kernel_size, dilation and stride must be positive and padding non-negative, got "
             f"kernel_size={kernel_size}, dilation={dilation}, padding={padding}, stride={stride}", ValueError)
    return dict(kernel=kernel, stride=stride, dilation=dilation, padding=tuple((p, p) for p in pads))


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """PyTorch's unfold (im2col): (N, C, H, W) to (N, C * kh * kw, L), a column per window position, rows
    channel-major then kernel offsets; a (C, H, W) input gives (C * kh * kw, L)."""
    x, added = _batched(input, 2, "unfold")
    window = _fold_window(kernel_size, dilation, padding, stride, "unfold")
    cols = im2col_p(x, fill="0", **window)  # (N, C, kh, kw, oh, ow)
    rows = x.shape[1] * math.prod(window["kernel"])
    return _unbatched(reshape_p(cols, shape=(x.shape[0], rows, math.prod(cols.shape[4:]))), added)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """PyTorch's fold (col2im), unfold's adjoint: (N, C * kh * kw, L) to (N, C, *output_size), the values of
    overlapping windows summed; a (C * kh * kw, L) input gives (C, *output_size)."""
    x, added = _batched(input, 1, "fold")
    window = _fold_window(kernel_size, dilation, padding, stride, "fold")
    spatial = _sizes(output_size, 2, "output_size")
    positions = tuple(output_size_of(*args) for args in zip(spatial, window["kernel"], window["stride"],
                                                              window["dilation"], window["padding"]))
    per_channel = math.prod(window["kernel"])
    if x.shape[1] % per_channel or x.shape[2] != math.prod(positions):
        fail(f"fold: expected an input (N, C * {per_channel}, {math.prod(positions)}) for output_size={spatial}, "
             f"kernel_size={window['kernel']} ({positions[0]} x {positions[1]} blocks), got shape "
             f"{tuple(input.shape)}", RuntimeError)
    cols = reshape_p(x, shape=(x.shape[0], x.shape[1] // per_channel, *window["kernel"], *positions))
    return _unbatched(col2im_p(cols, spatial=spatial, **window), added)
