"""im2col and col2im: the sliding windows of an N-d image, and their adjoint. Convolution and pooling
are written with them (symgrad/nn/convolution.py): a convolution is im2col then one matrix product
(BLAS), a pooling a reduction over the window axes.

im2col takes x of shape (N, C, *spatial) to the patches (N, C, *kernel, *out), where out[i] =
(spatial[i] + lo + hi - dilation*(kernel - 1) - 1) // stride + 1, and
patches[n, c, *j, *o] = x[n, c, *(o*stride + j*dilation - lo)], or `fill` outside x ("0" for a
convolution, "-inf" for a max pooling: a string, so generated NumPy source can spell it). The batch leads,
then channels and kernel offsets, so a convolution is a batched product (C_out, C*K) @ (N, C*K, L) whose
result is already the image (N, C_out, L), no transpose, and a backend can fill one example's patches at a
time, just before its product. col2im sums patches back
into an image (the transpose of im2col with a 0 fill): each is the other's adjoint, and both are linear
in the image.
"""
import numpy as np

from ..core import Primitive, ShapeError


def output_size(size, kernel, stride, dilation, padding) -> int:
    """Window positions along one axis; a window wider than the padded axis is an error."""
    lo, hi = padding
    span = dilation * (kernel - 1) + 1
    if size + lo + hi < span:
        raise ShapeError(f"a window of {kernel} (dilation {dilation}, so {span} wide) does not fit an axis of "
                         f"{size} padded by ({lo}, {hi})")
    return (size + lo + hi - span) // stride + 1


def _check_window(kernel, stride, dilation, padding, spatial_rank):
    for name, values in (("kernel", kernel), ("stride", stride), ("dilation", dilation)):
        if len(values) != spatial_rank or any(int(v) < 1 for v in values):
            raise ShapeError(f"im2col: {name}={values} needs {spatial_rank} positive sizes")
    if len(padding) != spatial_rank or any(len(p) != 2 or min(p) < 0 for p in padding):
        raise ShapeError(f"im2col: padding={padding} needs {spatial_rank} pairs (lo, hi) of sizes >= 0")


def _im2col_shape(inputs, kernel, stride, dilation, padding, fill):
    (x,) = inputs
    d = len(kernel)
    if x.ndim != d + 2:
        raise ShapeError(f"im2col: a {d}-d window needs an input (N, C, {d} spatial sizes), got shape {x.shape}")
    _check_window(kernel, stride, dilation, padding, d)
    out = tuple(output_size(*args) for args in zip(x.shape[2:], kernel, stride, dilation, padding))
    return (*x.shape[:2], *kernel, *out), x.dtype


def im2col_impl(x, kernel, stride, dilation, padding, fill):
    """NumPy: strided windows of the padded image, dilated and strided by slicing, then (N, C, *kernel, *out)."""
    d = len(kernel)
    padded = x
    if any(map(any, padding)):  # (x copied into a filled array: np.pad's result in a third of its time)
        padded = np.full(x.shape[:2] + tuple(n + lo + hi for n, (lo, hi) in zip(x.shape[2:], padding)),
                         np.asarray(float(fill)).astype(x.dtype), x.dtype)
        padded[(slice(None), slice(None)) + tuple(slice(lo, lo + n) for n, (lo, _) in zip(x.shape[2:], padding))] = x
    spans = tuple(dl * (k - 1) + 1 for k, dl in zip(kernel, dilation))
    windows = np.lib.stride_tricks.sliding_window_view(padded, spans, axis=tuple(range(2, 2 + d)))
    key = (slice(None), slice(None)) + tuple(slice(None, None, s) for s in stride) + \
        tuple(slice(None, None, dl) for dl in dilation)
    perm = (0, 1, *range(2 + d, 2 + 2 * d), *range(2, 2 + d))
    return np.ascontiguousarray(windows[key].transpose(perm))


def _col2im_shape(inputs, kernel, stride, dilation, padding, spatial):
    (cols,) = inputs
    d = len(kernel)
    _check_window(kernel, stride, dilation, padding, d)
    out = tuple(output_size(*args) for args in zip(spatial, kernel, stride, dilation, padding))
    expected = (*kernel, *out)
    if cols.ndim != 2 * d + 2 or tuple(cols.shape[2:]) != expected:
        raise ShapeError(f"col2im: patches of shape {cols.shape} do not match kernel {kernel} and an image "
                         f"{spatial} (expected (N, C, *{kernel}, *{out}))")
    return (*cols.shape[:2], *spatial), cols.dtype


def col2im_impl(cols, kernel, stride, dilation, padding, spatial):
    """NumPy: one strided slice-add per kernel offset into the padded image, then the padding cut off."""
    d = len(kernel)
    out = cols.shape[2 + d:]
    padded = np.zeros(cols.shape[:2] + tuple(s + lo + hi for s, (lo, hi) in zip(spatial, padding)), cols.dtype)
    for offset in np.ndindex(*kernel):
        key = (slice(None), slice(None)) + tuple(slice(j * dl, j * dl + s * (n - 1) + 1, s)
                                                 for j, dl, s, n in zip(offset, dilation, stride, out))
        padded[key] += cols[(slice(None), slice(None)) + offset]
    crop = (slice(None), slice(None)) + tuple(slice(lo, lo + s) for s, (lo, _) in zip(spatial, padding))
    return np.ascontiguousarray(padded[crop])


def _window(attrs) -> dict:
    return {name: attrs[name] for name in ("kernel", "stride", "dilation", "padding")}


def _im2col_vjp(ct, ans, x, **attrs):
    return (col2im_p(ct, spatial=tuple(x.shape[2:]), **_window(attrs)),)


def _im2col_jvp(tangents, ans, x, **attrs):
    (t,) = tangents
    return None if t is None else im2col_p(t, fill="0", **_window(attrs))  # the fill is a constant


def _col2im_vjp(ct, ans, cols, **attrs):
    return (im2col_p(ct, fill="0", **_window(attrs)),)


im2col_p = Primitive("im2col", _im2col_shape, im2col_impl, vjp=_im2col_vjp, jvp=_im2col_jvp)
col2im_p = Primitive("col2im", _col2im_shape, col2im_impl, vjp=_col2im_vjp, linear=True)
