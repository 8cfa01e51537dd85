"""PyTorch's tensor factories under the names the NumPy-like namespace also has: sg.zeros, sg.ones, sg.full,
sg.empty, sg.eye, sg.arange, sg.linspace and their *_like forms.

A call is PyTorch's, and returns a Tensor, when only PyTorch could mean it (`is_torch_call`): sizes as separate
ints or no size at all (`zeros(5, 3)`, `zeros()`), a keyword only PyTorch has (requires_grad, device, generator,
layout, pin_memory, memory_format, or the function's own PyTorch names: size, end, steps), a PyTorch dtype name
(`sg.float`, `sg.long` ...), or a Tensor argument. Every other call is NumPy's and unchanged: an array, or inside
a trace a traced value. A PyTorch-style call inside a trace gives the traced value of PyTorch's meaning (its
shape and dtype), not a Tensor, and `requires_grad=True` there is an error.

Where PyTorch's default float dtype is float32, these give float64, as `sg.tensor(1.0)` does (SPEC: Python
floats are float64); `dtype=sg.float` gives float32.
"""
from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from .. import numpy_api as sgnp
from ..core import TracerError, current_builder
from ..dtypes import TorchDType
from .random import checked_dtype, new_tensor, refuse_extras, sizes
from .tensor import Tensor

_TORCH_KEYWORDS = frozenset({"requires_grad", "device", "generator", "layout", "pin_memory", "memory_format"})


def is_torch_call(args, kwargs, own_keywords=()) -> bool:
    """True when the call can only be PyTorch's: a PyTorch-only keyword, a PyTorch dtype name, a Tensor."""
    for name, value in kwargs.items():
        if name in _TORCH_KEYWORDS or name in own_keywords or isinstance(value, (TorchDType, Tensor)):
            return True
    return any(isinstance(arg, (TorchDType, Tensor)) for arg in args)


def _separate_sizes(args) -> bool:
    """zeros(5, 3) or zeros(): NumPy's zeros takes one shape (and a dtype, never an int, second)."""
    return len(args) != 1 and all(isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in args)


def _result(value, dtype, device, requires_grad, name) -> "Tensor | object":
    """A PyTorch-style call's result: a new leaf Tensor, or inside a trace the traced value itself."""
    if current_builder() is not None:
        if requires_grad:
            raise TracerError(f"{name}(requires_grad=True) inside a traced function: a traced value is "
                              f"differentiated by the transform (sg.grad ...), not by requires_grad")
        checked_dtype(dtype, device, False, name)
        return value
    return new_tensor(value, dtype, device, requires_grad, name)


def _constant(name, size, fill, dtype, default, out, layout, device, requires_grad, pin_memory):
    refuse_extras(name, out, layout, pin_memory)
    dtype = dtypes.canonical(default if dtype is None else dtype)
    return _result(sgnp.full(sizes(size, name), fill, dtype), dtype, device, requires_grad, name)


def _sized(name, fill, numpy_fn):
    """zeros / ones / empty: PyTorch's form (*size, out=None, dtype=None, layout=None, device=None,
    requires_grad=False, pin_memory=False, memory_format=None), or NumPy's `numpy_fn(shape, dtype)`."""
    def factory(*args, **kwargs):
        if not (_separate_sizes(args) or is_torch_call(args, kwargs, ("size", "out"))):
            return numpy_fn(*args, **kwargs)
        return _torch_sized(*args, **kwargs)

    def _torch_sized(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
                     memory_format=None, **named):
        size = _size_keyword(name, size, named)
        return _constant(name, size, fill, dtype, dtypes.FLOAT64, out, layout, device, requires_grad, pin_memory)

    factory.__name__ = factory.__qualname__ = name
    factory.__doc__ = (f"{name}(*size, dtype=None, device=None, requires_grad=False): a Tensor (PyTorch's form), "
                       f"or NumPy's {name}(shape, dtype) (see symgrad.eager.factories).")
    return factory


def _size_keyword(name, size, named) -> tuple:
    if "size" in named:
        if size:
            raise TypeError(f"{name}() got the size twice: positionally {size} and size={named['size']}")
        size = (named.pop("size"),)
    if named:
        raise TypeError(f"{name}() got an unexpected keyword argument {next(iter(named))!r}")
    return size


zeros = _sized("zeros", 0, sgnp.zeros)
ones = _sized("ones", 1, sgnp.ones)
empty = _sized("empty", 0, sgnp.empty)  # zeros, as NumPy's sg.empty gives: no uninitialized memory


def full(*args, **kwargs):
    """full(size, fill_value, *, dtype=None, device=None, requires_grad=False): PyTorch's form gives a Tensor
    whose dtype follows fill_value (bool, int64, float64); NumPy's full(shape, fill_value, dtype) otherwise."""
    if not is_torch_call(args, kwargs, ("size", "out")):
        return sgnp.full(*args, **kwargs)
    return _torch_full(*args, **kwargs)


def _torch_full(size, fill_value, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
                pin_memory=False, memory_format=None):
    size = tuple(size) if isinstance(size, (tuple, list)) else (size,)
    fill = fill_value._data if isinstance(fill_value, Tensor) else fill_value
    return _constant("full", size, fill, dtype, _dtype_of(fill), out, layout, device, requires_grad, pin_memory)


def _dtype_of(value) -> np.dtype:
    """PyTorch's dtype for a Python number (bool, int64, float64 here) or an array's own."""
    if isinstance(value, bool):
        return dtypes.BOOL
    if isinstance(value, (int, np.integer)) and not isinstance(value, np.bool_):
        return dtypes.INT64
    if isinstance(value, (float, np.floating)) and not isinstance(value, np.ndarray):
        return dtypes.FLOAT64
    return dtypes.canonical(np.asarray(value).dtype)


def eye(*args, **kwargs):
    """eye(n, m=None, *, dtype=None, device=None, requires_grad=False) as PyTorch's (a Tensor), or NumPy's
    eye(N, M=None, k=0, dtype=float64)."""
    if not is_torch_call(args, kwargs, ("n", "m", "out")):
        return sgnp.eye(*args, **kwargs)
    return _torch_eye(*args, **kwargs)


def _torch_eye(n, m=None, *, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    refuse_extras("eye", out, layout, pin_memory)
    n, m = sizes((n, n if m is None else m), "eye")
    dtype = dtypes.canonical(dtypes.FLOAT64 if dtype is None else dtype)
    return _result(sgnp.eye(n, m, 0, dtype), dtype, device, requires_grad, "eye")


def arange(*args, **kwargs):
    """arange(end) / arange(start, end, step=1, *, dtype=None, device=None, requires_grad=False) as PyTorch's
    (int64 when start, end and step are ints, else float64), or NumPy's arange(start, stop, step, dtype)."""
    if not is_torch_call(args, kwargs, ("end", "out")):
        return sgnp.arange(*args, **kwargs)
    return _torch_arange(*args, **kwargs)


def _torch_arange(start=0, end=None, step=1, *, out=None, dtype=None, layout=None, device=None,
                  requires_grad=False, pin_memory=False):
    refuse_extras("arange", out, layout, pin_memory)
    if end is None:
        start, end = 0, start
    bounds = [b._data.item() if isinstance(b, Tensor) else b for b in (start, end, step)]
    if bounds[2] == 0:
        raise RuntimeError("arange(): step must be nonzero")
    if any(isinstance(b, float) and not math.isfinite(b) for b in bounds):
        raise RuntimeError(f"arange(): unsupported range: {bounds[0]} -> {bounds[1]}")
    if (bounds[1] - bounds[0]) * bounds[2] < 0:
        raise RuntimeError(f"arange(): upper bound and larger bound inconsistent with step sign: "
                           f"start={bounds[0]}, end={bounds[1]}, step={bounds[2]}")
    integral = all(isinstance(b, (int, np.integer)) for b in bounds)
    dtype = dtypes.canonical((dtypes.INT64 if integral else dtypes.FLOAT64) if dtype is None else dtype)
    if dtype == dtypes.BOOL:
        raise RuntimeError('"arange_cpu" not implemented for \'Bool\' (PyTorch has no boolean range)')
    values = np.arange(*bounds, dtype=np.int64 if integral else np.float64)
    return _result(values.astype(dtype), dtype, device, requires_grad, "arange")


def linspace(*args, **kwargs):
    """linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False) as PyTorch's (computed as
    PyTorch computes it: from start up to the middle, from end down after it), or NumPy's
    linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0)."""
    if not is_torch_call(args, kwargs, ("end", "steps", "out")):
        return sgnp.linspace(*args, **kwargs)
    return _torch_linspace(*args, **kwargs)


def _torch_linspace(start, end, steps, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
                    pin_memory=False):
    refuse_extras("linspace", out, layout, pin_memory)
    start, end = (b._data.item() if isinstance(b, Tensor) else b for b in (start, end))
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < 0:
        raise RuntimeError(f"linspace(): number of steps must be a non-negative int, got {steps!r}")
    dtype = dtypes.canonical(dtypes.FLOAT64 if dtype is None else dtype)
    index = np.arange(steps, dtype=np.float64)
    step = (end - start) / (steps - 1) if steps > 1 else 0.0
    values = np.where(index < steps // 2, start + step * index, end - step * (steps - 1 - index))
    values = values if steps != 1 else np.array([start], np.float64)
    if dtype.kind != "f":  # PyTorch truncates toward zero into an integer dtype
        values = np.trunc(values)
    return _result(values.astype(dtype), dtype, device, requires_grad, "linspace")


def _like(name, numpy_fn, fill):
    """zeros_like / ones_like / empty_like: PyTorch's (input, *, dtype=None, device=None, requires_grad=False,
    memory_format=None) for a Tensor input or a PyTorch keyword, NumPy's (x, dtype) otherwise."""
    def like(*args, **kwargs):
        if not is_torch_call(args, kwargs, ("input",)):
            return numpy_fn(*args, **kwargs)
        return _torch_like(*args, **kwargs)

    def _torch_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
        shape, own = _shape_and_dtype(input)
        return _constant(name, shape, fill, dtype, own, None, layout, device, requires_grad, False)

    like.__name__ = like.__qualname__ = name
    like.__doc__ = f"{name}(input, *, dtype=None, device=None, requires_grad=False) (see symgrad.eager.factories)."
    return like


def _shape_and_dtype(value):
    if isinstance(value, Tensor):
        return value.shape, value.dtype
    value = sgnp.asarray(value)
    return tuple(value.shape), value.dtype


zeros_like = _like("zeros_like", sgnp.zeros_like, 0)
ones_like = _like("ones_like", sgnp.ones_like, 1)
empty_like = _like("empty_like", sgnp.empty_like, 0)


def full_like(*args, **kwargs):
    """full_like(input, fill_value, *, dtype=None, device=None, requires_grad=False) as PyTorch's, or NumPy's
    full_like(x, fill_value, dtype)."""
    if not is_torch_call(args, kwargs, ("input",)):
        return sgnp.full_like(*args, **kwargs)
    return _torch_full_like(*args, **kwargs)


def _torch_full_like(input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False,
                     memory_format=None):
    shape, own = _shape_and_dtype(input)
    fill = fill_value._data if isinstance(fill_value, Tensor) else fill_value
    return _constant("full_like", shape, fill, dtype, own, None, layout, device, requires_grad, False)
