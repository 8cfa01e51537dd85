"""Random tensors with PyTorch's signatures (rand, randn, normal, randint, randperm, *_like) and `sg.Generator`.

The numbers come from NumPy's PCG64 (seeded by `sg.manual_seed` or a Generator's manual_seed), so a seed
gives the same numbers on every run, but not the numbers PyTorch draws for it.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from .device import CPU, check_device
from .tensor import Tensor, random_generator, refuse_draws

_TORCH_DEFAULT_SEED = 67280421310721  # torch.Generator().initial_seed()


class Generator:
    """torch.Generator: a seeded source of random numbers for `generator=` (random factories,
    DataLoader's shuffling, random_split)."""

    def __init__(self, device="cpu"):
        check_device(device)
        self.manual_seed(_TORCH_DEFAULT_SEED)

    def manual_seed(self, seed) -> "Generator":
        self._seed = int(seed)
        self.numpy_generator = np.random.default_rng(self._seed)
        return self

    def initial_seed(self) -> int:
        return self._seed

    def seed(self) -> int:
        """Seed from the operating system's entropy (as torch's seed()); returns the seed."""
        self.manual_seed(np.random.SeedSequence().entropy % 2 ** 63)
        return self._seed

    def get_state(self) -> dict:
        return self.numpy_generator.bit_generator.state

    def set_state(self, state: dict) -> "Generator":
        self.numpy_generator.bit_generator.state = state
        return self

    device = property(lambda self: CPU)


def numpy_generator(generator) -> np.random.Generator:
    """The NumPy generator behind `generator=` (None: the one sg.manual_seed seeds)."""
    if generator is None:
        return random_generator()
    if not isinstance(generator, Generator):
        raise TypeError(f"generator= expects an sg.Generator, got {type(generator).__name__}")
    refuse_draws()
    return generator.numpy_generator


def sizes(size, name: str) -> tuple:
    """PyTorch's size arguments: separate ints, one tuple/list (or torch.Size), or nothing for a 0-d tensor."""
    shape = tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else tuple(size)
    for extent in shape:
        if isinstance(extent, bool) or not isinstance(extent, (int, np.integer)):
            raise TypeError(f"{name}(): size must be ints, got {shape!r}")
        if extent < 0:
            raise RuntimeError(f"{name}(): trying to create tensor with negative dimension {extent}: {list(shape)}")
    return tuple(int(extent) for extent in shape)


def checked_dtype(dtype, device, requires_grad, name: str, default=dtypes.FLOAT64) -> np.dtype:
    """The dtype a factory makes (`default` for None), after PyTorch's checks of device= and requires_grad=."""
    check_device(device)
    dtype = dtypes.canonical(default if dtype is None else dtype)
    if requires_grad and dtype.kind != "f":
        raise RuntimeError(f"Only Tensors of floating point and complex dtype can require gradients ({name}() of "
                           f"{dtype})")
    return dtype


def new_tensor(array, dtype, device, requires_grad, name: str, default=dtypes.FLOAT64) -> Tensor:
    """A leaf tensor holding `array` in `dtype` (default `default`), after the checks of checked_dtype."""
    dtype = checked_dtype(dtype, device, requires_grad, name, default)
    return Tensor(np.asarray(array).astype(dtype, copy=False), requires_grad=requires_grad)


def _float_dtype(dtype, name) -> np.dtype:
    dtype = dtypes.canonical(dtypes.FLOAT64 if dtype is None else dtype)
    if dtype.kind != "f":
        raise TypeError(f"{name}(): dtype must be a float dtype, got {dtype}")
    return dtype


def rand(*size, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
         pin_memory=False) -> Tensor:
    """Uniform samples in [0, 1), float64 unless dtype= says otherwise."""
    refuse_extras("rand", out, layout, pin_memory)
    shape = sizes(size, "rand")
    _float_dtype(dtype, "rand")
    samples = numpy_generator(generator).random(shape)  # float64 draws: a seed gives the same values in any dtype
    return new_tensor(samples, dtype, device, requires_grad, "rand")


def randn(*size, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False) -> Tensor:
    """Standard normal samples, float64 unless dtype= says otherwise."""
    refuse_extras("randn", out, layout, pin_memory)
    shape = sizes(size, "randn")
    _float_dtype(dtype, "randn")
    samples = numpy_generator(generator).standard_normal(shape)
    return new_tensor(samples, dtype, device, requires_grad, "randn")


def normal(mean=0.0, std=1.0, size=None, *, generator=None, out=None, dtype=None, layout=None, device=None,
           requires_grad=False, pin_memory=False) -> Tensor:
    """torch.normal: samples of N(mean, std), with tensor means and stds broadcast (their dtype, else float64), or of
    float ones in `size` (d2l's weights: normal(0, 0.01, size=(784, 10), requires_grad=True)). A mean or std that
    requires grad is refused (PyTorch gives it a zero gradient)."""
    refuse_extras("normal", out, layout, pin_memory)
    for name, value in (("mean", mean), ("std", std)):
        if isinstance(value, Tensor) and value.requires_grad:
            raise RuntimeError(f"normal(): {name} requires grad; symgrad does not differentiate normal(), "
                               f"pass {name}.detach()")
    tensors = [value for value in (mean, std) if isinstance(value, Tensor)]
    if tensors and size is not None:
        raise TypeError("normal(): size= goes with float mean and std, not tensors")
    shape = sizes((() if size is None else size,), "normal")
    loc, scale = (value._data if isinstance(value, Tensor) else value for value in (mean, std))
    if np.any(np.asarray(scale) < 0):
        raise RuntimeError(f"normal expects all elements of std >= 0.0, got {std}")
    samples = numpy_generator(generator).normal(loc, scale, np.broadcast_shapes(np.shape(loc), np.shape(scale), shape))
    dtype = _float_dtype(dtype if dtype is not None or not tensors else tensors[0].dtype, "normal")
    return new_tensor(samples, dtype, device, requires_grad, "normal")


def randint(*args, size=None, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
            pin_memory=False, low=None, high=None) -> Tensor:
    """Integers uniform in [low, high): randint(high, size) or randint(low, high, size); int64 by default."""
    refuse_extras("randint", out, layout, pin_memory)
    given = list(args)
    if size is None and given and isinstance(given[-1], (tuple, list)):
        size = given.pop()
    if high is None and given:
        high = given.pop()
    if low is None:
        low = given.pop() if given else 0
    if given or size is None or high is None:
        raise TypeError("randint(low=0, high, size, *, generator=None, dtype=None, ...): expected (high, size) or "
                        f"(low, high, size), got {args!r}")
    if high <= low:
        raise RuntimeError(f"randint(): random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    samples = numpy_generator(generator).integers(low, high, sizes((size,), "randint"))
    return new_tensor(samples, dtype, device, requires_grad, "randint", default=dtypes.INT64)


def randperm(n, *, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
             pin_memory=False) -> Tensor:
    """A random permutation of 0 .. n-1 (int64)."""
    refuse_extras("randperm", out, layout, pin_memory)
    if n < 0:
        raise RuntimeError(f"randperm(): n must be non-negative, got {n}")
    return new_tensor(numpy_generator(generator).permutation(int(n)), dtype, device, requires_grad, "randperm",
                      default=dtypes.INT64)


def rand_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None,
              generator=None) -> Tensor:
    return rand(*_shape(input), generator=generator, dtype=dtype or _dtype(input), layout=layout, device=device,
                requires_grad=requires_grad)


def randn_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None,
               generator=None) -> Tensor:
    return randn(*_shape(input), generator=generator, dtype=dtype or _dtype(input), layout=layout, device=device,
                 requires_grad=requires_grad)


def _shape(value) -> tuple:
    """The shape of a tensor, array, traced value or nested list."""
    return tuple(value.shape) if hasattr(value, "shape") else np.shape(value)


def _dtype(value):
    if isinstance(value, Tensor):
        return value._data.dtype
    return value.dtype if hasattr(value, "dtype") else np.asarray(value).dtype


def refuse_extras(name, out, layout, pin_memory) -> None:
    """What symgrad does not have: out= tensors, sparse layouts, pinned memory."""
    if out is not None:
        raise TypeError(f"{name}(): out= is not supported; assign the result")
    if layout is not None and str(layout) not in ("torch.strided", "strided"):
        raise TypeError(f"{name}(): layout={layout!r} is not supported (tensors are dense, strided)")
    if pin_memory:
        raise RuntimeError(f"{name}(): pin_memory=True needs an accelerator; symgrad runs on the CPU")
