"""PyTorch's keyword names on the NumPy-like namespace's functions: `sg.matmul(input=a, other=b)`,
`sg.sum(x, dim=1, keepdim=True)`, `sg.argmax(t, dim=1)`.

`input` and `other` name the first two arguments, `dim` is `axis` and `keepdim` is `keepdims`; the result is
what the NumPy-style call gives for the same values (an array, a traced value or a Tensor). `sg.max`/`sg.min`
are not here: on a tensor their `dim` already has PyTorch's meaning, the (values, indices) pair.
"""
from __future__ import annotations

import numpy as np

from .. import numpy_api as sgnp

_RENAMED = {"dim": "axis", "keepdim": "keepdims"}


def torch_axes(dim):
    """PyTorch's dim as NumPy's axis: dim=() (or []) reduces every axis, where NumPy's axis=() reduces none."""
    return None if type(dim) in (tuple, list) and not dim else dim


def check_alpha(input, other, alpha):
    """PyTorch's error for a float alpha of add/sub with integral operands (it was applied in floats, so
    tensor([1, 2]).add(t, alpha=0.5) gave floats)."""
    if isinstance(alpha, (float, np.floating)) and all(
            getattr(o, "dtype", None) is not None and o.dtype.kind in "iub" or type(o) in (int, bool)
            for o in (input, other)):
        raise RuntimeError(f"For integral input tensors, argument alpha must not be a floating point number "
                           f"(alpha={alpha!r})")


def add(input, other, *, alpha=1, out=None):
    """NumPy's add, and torch.add's alpha: other scaled by it first (as Tensor.add and sg.sub)."""
    check_alpha(input, other, alpha)
    return sgnp.add(input, other if alpha == 1 else sgnp.multiply(other, alpha), out=out)


def _with_torch_keywords(fn, name: str, positional=("input",), renamed=_RENAMED):
    def call(*args, **kwargs):
        if kwargs:
            args, kwargs = _as_positional(name, positional, args, kwargs, renamed)
        result = fn(*args, **kwargs)
        if args and result is args[0] and hasattr(result, "requires_grad_"):  # an eager tensor the call left as it
            return result.clone()  # was (sg.sum of a 0-d tensor): PyTorch's gives a tensor of its own
        return result

    call.__name__ = call.__qualname__ = name
    call.__module__ = "symgrad"  # pickled by reference as symgrad.<name>, which is this function
    call.__doc__ = f"{fn.__doc__ or ''}\n\nAlso takes PyTorch's keyword names {', '.join([*positional, *renamed])}."
    call.__wrapped__ = fn
    return call


def _as_positional(name, positional, args, kwargs, renamed_keys):
    """Move the PyTorch-named leading arguments into place and rename dim/keepdim."""
    args = list(args)
    for position, key in enumerate(positional):
        if key in kwargs:
            if position != len(args):
                raise TypeError(f"{name}() got argument {key!r} by name, but {len(args)} positional arguments "
                                f"(it is argument {position + 1})")
            args.append(kwargs.pop(key))
    renamed = {}
    for key, value in kwargs.items():
        value = torch_axes(value) if key == "dim" else value
        key = renamed_keys.get(key, key)
        if key in renamed:
            raise TypeError(f"{name}() got {key!r} twice (by its NumPy and its PyTorch name)")
        renamed[key] = value
    return tuple(args), renamed


matmul = _with_torch_keywords(sgnp.matmul, "matmul", ("input", "other"))
sum = _with_torch_keywords(sgnp.sum, "sum")
mean = _with_torch_keywords(sgnp.mean, "mean")
prod = _with_torch_keywords(sgnp.prod, "prod")
amax = _with_torch_keywords(sgnp.amax, "amax")
amin = _with_torch_keywords(sgnp.amin, "amin")
argmax = _with_torch_keywords(sgnp.argmax, "argmax")
argmin = _with_torch_keywords(sgnp.argmin, "argmin")


def _cast_first(fn):
    """fn with PyTorch's dtype= keyword: the input cast to dtype first (torch.softmax(x, 1, dtype=torch.float64))."""
    def call(x, *args, dtype=None, **kwargs):
        return fn(x if dtype is None else sgnp.astype(x, dtype), *args, **kwargs)
    call.__doc__ = fn.__doc__
    return call


def split(ary, indices_or_sections, axis=0, *, dim=None):
    """NumPy's split (sections, or the indices to cut at), and with `dim` torch.split's meaning: pieces of the size
    given (the last shorter), or of the sizes listed (torch.split(out, K, dim=2) in neural spline flows)."""
    if dim is None:
        return sgnp.split(ary, indices_or_sections, axis)
    length = np.shape(ary)[dim]
    if isinstance(indices_or_sections, (int, np.integer)):
        cuts = list(range(int(indices_or_sections), length, int(indices_or_sections)))
    elif sum(indices_or_sections) != length:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {length} (input tensor's size at "
                           f"dimension {dim}), but got split_sizes={list(indices_or_sections)}")
    else:
        cuts = list(np.cumsum(indices_or_sections)[:-1])
    return tuple(sgnp.split(ary, cuts, dim))


tril = _with_torch_keywords(sgnp.tril, "tril", renamed={"diagonal": "k"})  # torch.triu(U, diagonal=1)
triu = _with_torch_keywords(sgnp.triu, "triu", renamed={"diagonal": "k"})
softmax = _with_torch_keywords(_cast_first(sgnp.softmax), "softmax")
log_softmax = _with_torch_keywords(_cast_first(sgnp.log_softmax), "log_softmax")
def first_axis_of_size_3(shape):
    """torch.cross's dim when none is given (deprecated in PyTorch): the input's first dimension of size 3, or None."""
    return next((d for d, n in enumerate(shape) if n == 3), None)


def _cross(a, b, *args, **kwargs):
    """NumPy's cross (the last axis). Of tensors without an axis where PyTorch's (deprecated) default, the input's
    first dimension of size 3, is another one (a 3x3 pair: its columns, NumPy's its rows), an error asking for it."""
    if not args and not kwargs and any(hasattr(v, "requires_grad_") for v in (a, b)):
        first = first_axis_of_size_3(np.shape(a))
        if first is not None and first != len(np.shape(a)) - 1:
            raise ValueError(f"sg.cross of tensors of shapes {tuple(np.shape(a))} and {tuple(np.shape(b))} without "
                             f"an axis: torch.cross's default is dim {first} (the first of size 3), NumPy's the last "
                             f"axis; pass dim= (or axis=)")
    return sgnp.cross(a, b, *args, **kwargs)


cross = _with_torch_keywords(_cross, "cross", ("input", "other"))
logsumexp = _with_torch_keywords(sgnp.logsumexp, "logsumexp")
cumsum = _with_torch_keywords(sgnp.cumsum, "cumsum")
cumprod = _with_torch_keywords(sgnp.cumprod, "cumprod")
stack = _with_torch_keywords(sgnp.stack, "stack", ("tensors",))


def tensordot(a, b, axes=2, *, dims=None):
    """NumPy's tensordot, with torch.tensordot's `dims` (its name for axes) and, of tensors, its broadcasting of a
    contracted axis of size 1 against the other's (which is summed over that axis first; NumPy refuses the pair)."""
    axes = axes if dims is None else dims
    if not any(hasattr(v, "requires_grad_") for v in (a, b)):
        return sgnp.tensordot(a, b, axes)
    if isinstance(axes, (int, np.integer)):
        axes = (list(range(np.ndim(a) - int(axes), np.ndim(a))), list(range(int(axes))))
    axes_a, axes_b = ([x] if isinstance(x, (int, np.integer)) else [int(i) for i in x] for x in axes)
    for i, j in zip(axes_a, axes_b):
        size_a, size_b = np.shape(a)[i], np.shape(b)[j]
        if size_a == 1 and size_b != 1:
            b = sgnp.sum(b, axis=j, keepdims=True)
        elif size_b == 1 and size_a != 1:
            a = sgnp.sum(a, axis=i, keepdims=True)
    return sgnp.tensordot(a, b, (axes_a, axes_b))
