"""`F.affine_grid` and `F.grid_sample` (2-d, PyTorch's arguments): sampling locations from affine matrices,
and an image read at such locations, bilinear or nearest, outside the image zeros or the border value.

grid_sample gathers the (up to four) neighbouring pixels at integer places computed from the grid's values
and weighs them by differentiable functions of the grid, so the gradient reaches the image (through the
gathers) and the grid (through the weights; nearest sampling gives the grid none, as PyTorch)."""
from __future__ import annotations

import numpy as np

from .. import numpy_api as sgnp
from ..core import Tracer, UnsupportedOpError, with_user_line
from ..eager.tensor import Tensor, _index_array, labelled


def _base(size, align_corners, dtype) -> np.ndarray:
    """The normalized [-1, 1] coordinates of `size` pixel centres (align_corners: of the corner pixels)."""
    if align_corners:
        return np.linspace(-1, 1, size, dtype=dtype) if size > 1 else np.zeros(size, dtype)
    return ((np.arange(size, dtype=dtype) * 2 + 1) / size - 1).astype(dtype)


def affine_grid(theta, size, align_corners=False):
    """(N, H, W, 2) sampling locations (x, y) = theta @ (x_base, y_base, 1) for an (N, 2, 3) theta and an output
    size (N, C, H, W)."""
    size = tuple(int(n) for n in size)
    if len(size) != 4:
        raise UnsupportedOpError(f"affine_grid: only 2-d grids (size (N, C, H, W)) are supported, got size {size}")
    batch, _, height, width = size
    if tuple(theta.shape) != (batch, 2, 3):
        raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {list(size)}. Got "
                         f"{list(theta.shape)}.")
    dtype = np.dtype(theta.dtype)
    xs, ys = np.meshgrid(_base(width, align_corners, dtype), _base(height, align_corners, dtype))
    base = np.stack([xs, ys, np.ones_like(xs)], axis=-1).reshape(1, height * width, 3)
    grid = sgnp.matmul(base, sgnp.swapaxes(theta, 1, 2))  # (N, H * W, 2)
    return labelled(sgnp.reshape(grid, (batch, height, width, 2)), "AffineGridGenerator")


def _unnormalize(coordinate, size, align_corners):
    """A normalized coordinate as a pixel position (differentiable)."""
    if align_corners:
        return (coordinate + 1) * ((size - 1) / 2)
    return ((coordinate + 1) * size - 1) / 2


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """input (N, C, H, W) read at grid (N, H_out, W_out, 2) locations (x, y) in [-1, 1] (outside: zeros, or the
    border pixels with padding_mode 'border'), bilinearly or at the nearest pixel; (N, C, H_out, W_out)."""
    if mode not in ("bilinear", "nearest"):
        raise UnsupportedOpError(f"grid_sample: mode {mode!r} is not supported (bilinear, nearest)")
    if padding_mode not in ("zeros", "border"):
        raise UnsupportedOpError(f"grid_sample: padding_mode {padding_mode!r} is not supported (zeros, border)")
    if input.ndim != 4 or grid.ndim != 4 or grid.shape[-1] != 2 or grid.shape[0] != input.shape[0]:
        raise UnsupportedOpError(f"grid_sample: expected a 4-d input (N, C, H, W) and a grid (N, H_out, W_out, 2), "
                                 f"got shapes {tuple(input.shape)} and {tuple(grid.shape)}")
    if isinstance(grid, Tracer) and not isinstance(grid, Tensor):
        raise UnsupportedOpError(with_user_line("grid_sample inside a traced function: the pixels read depend on "
                                                "the grid's values; run it eagerly"))
    align_corners = bool(align_corners)
    batch, channels, height, width = input.shape
    out_h, out_w = grid.shape[1:3]
    x = _unnormalize(grid[..., 0], width, align_corners)
    y = _unnormalize(grid[..., 1], height, align_corners)
    if padding_mode == "border":
        x, y = sgnp.clip(x, 0, width - 1), sgnp.clip(y, 0, height - 1)
    # (N * H * W, C): a pixel's channels are one row, so every corner is one gather of rows
    pixels = sgnp.reshape(sgnp.transpose(input, (0, 2, 3, 1)), (batch * height * width, channels))
    first = (np.arange(batch) * height * width).reshape(batch, 1, 1)
    xv, yv = _index_array(x), _index_array(y)

    def corner(ix, iy):
        """The pixels at integer places (ix, iy) (N, H_out, W_out, C), zero where outside the image."""
        inside = (ix >= 0) & (ix < width) & (iy >= 0) & (iy < height)
        flat = first + np.clip(iy, 0, height - 1) * width + np.clip(ix, 0, width - 1)
        values = sgnp.reshape(sgnp.take(pixels, flat.reshape(-1).astype(np.int64), axis=0),
                              (batch, out_h, out_w, channels))
        return sgnp.where(inside[..., None], values, 0.0)

    if mode == "nearest":
        out = corner(np.rint(xv).astype(np.int64), np.rint(yv).astype(np.int64))
    else:
        x0, y0 = np.floor(xv).astype(np.int64), np.floor(yv).astype(np.int64)
        wx1, wy1 = x - x0.astype(xv.dtype), y - y0.astype(yv.dtype)  # weights of the far corners
        wx0, wy0 = 1 - wx1, 1 - wy1
        out = 0
        for ix, iy, weight in ((x0, y0, wx0 * wy0), (x0 + 1, y0, wx1 * wy0), (x0, y0 + 1, wx0 * wy1),
                               (x0 + 1, y0 + 1, wx1 * wy1)):
            out = out + corner(ix, iy) * sgnp.expand_dims(weight, -1)
    return labelled(sgnp.transpose(out, (0, 3, 1, 2)), "GridSampler2D")
