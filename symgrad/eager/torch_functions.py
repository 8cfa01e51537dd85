"""PyTorch's function forms of Tensor methods that the NumPy-like namespace has no name for: `sg.unsqueeze(x, 0)`,
`sg.flatten(x, 1)`, `sg.clamp(x, min=0)`, `sg.mm(a, b)`, `sg.bmm`, `sg.permute`, `sg.t`, `sg.clone`, `sg.norm`,
`sg.numel`, `sg.topk`, `sg.chunk`, `sg.unbind`, `sg.scatter`, `sg.scatter_add`, `sg.scatter_reduce`,
`sg.gather`,
`sg.index_select`, `sg.masked_fill`, `sg.masked_select`, `sg.rsqrt`, `sg.eq ne gt ge lt le`, `sg.mul sub div neg atan2`,
`sg.bincount`, `sg.histc`, `sg.lerp`, `sg.clamp_min/max`,
`sg.multinomial`, `sg.bernoulli`, `sg.nonzero`, `sg.addmm`, `sg.sgn`, `sg.lgamma`, `sg.take_along_dim`, `sg.narrow`,
`sg.movedim`, `sg.repeat_interleave`, `sg.unflatten`, `sg.var_mean`, `sg.std_mean`, `sg.asin acos atan asinh acosh
atanh`, `sg.unique`, `sg.kthvalue`, `sg.is_floating_point`, `sg.mv`, `sg.addcmul`, `sg.addcdiv`, `sg.frac`,
`sg.aminmax`, `sg.logcumsumexp`, `sg.diag_embed`, `sg.xlogy`, `sg.argwhere`, `sg.broadcast_tensors`,
`sg.inverse det logdet slogdet pinverse matrix_power` and
`sg.is_tensor`. Each is `input.method(...)`; an array or a number given as input is taken as a constant tensor.
The in-place forms `sg.sin_ cos_ exp_ abs_ sigmoid_ square_` take a tensor only."""
from __future__ import annotations

import numpy as np

from .. import numpy_api as sgnp
from ..core import Tracer, TracerError
from .tensor import Tensor, labelled, write_out


def _as_tensor(value, name: str) -> Tensor:
    if isinstance(value, Tensor):
        return value
    if isinstance(value, Tracer):
        raise TracerError(f"sg.{name} is PyTorch's function of tensors; a traced value takes the NumPy-like "
                          f"namespace's functions (sg.expand_dims, sg.reshape, sg.clip, sg.matmul, ...)")
    return Tensor._wrap(sgnp.asarray(np.asarray(value)))


def _method_form(name: str):
    def function(input, *args, out=None, **kwargs):
        method = getattr(_as_tensor(input, name), name)
        if out is None:
            return method(*args, **kwargs)
        return write_out(name, out, (input, *args, *kwargs.values()), lambda: method(*args, **kwargs))

    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"torch.{name}(input, ...): input.{name}(...) (see Tensor.{name})."
    return function


unsqueeze = _method_form("unsqueeze")
flatten = _method_form("flatten")
clamp = _method_form("clamp")
mm = _method_form("mm")
permute = _method_form("permute")
t = _method_form("t")
clone = _method_form("clone")
norm = _method_form("norm")
numel = _method_form("numel")
topk = _method_form("topk")
chunk = _method_form("chunk")
unbind = _method_form("unbind")
scatter = _method_form("scatter")
scatter_add = _method_form("scatter_add")
scatter_reduce = _method_form("scatter_reduce")
gather = _method_form("gather")
index_select = _method_form("index_select")
masked_fill = _method_form("masked_fill")
masked_select = _method_form("masked_select")
rsqrt = _method_form("rsqrt")
eq, ne, gt, ge, lt, le = (_method_form(name) for name in ("eq", "ne", "gt", "ge", "lt", "le"))
mul, sub, div, neg = (_method_form(name) for name in ("mul", "sub", "div", "neg"))
atan2 = _method_form("atan2")
bincount, histc = _method_form("bincount"), _method_form("histc")
# (erfinv, digamma, logit and xlogy are elementwise ops of sg.scipy.special, which work on tensors too)
(lerp, clamp_min, clamp_max, multinomial, bernoulli, nonzero, addmm, sgn, lgamma, take_along_dim, narrow, movedim,
 repeat_interleave, unflatten) = (_method_form(name) for name in (
    "lerp", "clamp_min", "clamp_max", "multinomial", "bernoulli", "nonzero", "addmm", "sgn", "lgamma",
    "take_along_dim", "narrow", "movedim", "repeat_interleave", "unflatten"))


# PyTorch's names NumPy spells otherwise (arcsin), and methods tutorials call as functions (torch.unique(t))
(asin, acos, atan, asinh, acosh, atanh, unique, kthvalue, is_floating_point, mv, addcmul, addcdiv) = (
    _method_form(name) for name in ("asin", "acos", "atan", "asinh", "acosh", "atanh", "unique", "kthvalue",
                                    "is_floating_point", "mv", "addcmul", "addcdiv"))


# (sg.take is NumPy's, which is torch.take's meaning: flat indices)
(frac, aminmax, logcumsumexp, diag_embed, xlogy, argwhere) = (
    _method_form(name) for name in ("frac", "aminmax", "logcumsumexp", "diag_embed", "xlogy", "argwhere"))


# PyTorch's linear algebra by its old names (torch.inverse, torch.det, ...; torch.linalg's are sg.linalg's)
inverse, det, logdet, slogdet, pinverse, matrix_power = (_method_form(name) for name in (
    "inverse", "det", "logdet", "slogdet", "pinverse", "matrix_power"))


def broadcast_tensors(*tensors):
    """The tensors broadcast to their common shape (views), as torch.broadcast_tensors."""
    return sgnp.broadcast_arrays(*(_as_tensor(t, "broadcast_tensors") for t in tensors))


def _inplace_form(name: str):
    def function(input, *args, **kwargs):
        if not isinstance(input, Tensor):  # (an array would be copied into a tensor, and the copy changed)
            raise TypeError(f"sg.{name}() changes a tensor in place; got {type(input).__name__}")
        return getattr(input, name)(*args, **kwargs)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"torch.{name}(input, ...): input.{name}(...), in place (see Tensor.{name})."
    return function


sin_, cos_, exp_, abs_, sigmoid_, square_ = (_inplace_form(name) for name in (
    "sin_", "cos_", "exp_", "abs_", "sigmoid_", "square_"))


def _moments(spread):
    def function(input, dim=None, *, correction=1, keepdim=False, unbiased=None):
        """(spread, mean) along dim with PyTorch's correction (1: the unbiased estimate)."""
        input = _as_tensor(input, spread + "_mean")
        correction = correction if unbiased is None else int(unbiased)
        return (getattr(input, spread)(dim, keepdim=keepdim, correction=correction),
                input.mean(dim, keepdim=keepdim))
    function.__name__ = spread + "_mean"
    return function


var_mean, std_mean = _moments("var"), _moments("std")


def bmm(input, mat2):
    """Batched matrix product of (b, n, m) and (b, m, p) tensors, as torch.bmm (no broadcasting of the batch); its
    grad_fn is PyTorch's BmmBackward0 (d2l's attention prints it)."""
    input, mat2 = _as_tensor(input, "bmm"), _as_tensor(mat2, "bmm")
    if input.ndim != 3 or mat2.ndim != 3 or input.shape[0] != mat2.shape[0]:
        raise RuntimeError(f"bmm: expected two 3-d tensors with the same batch size, got shapes "
                           f"{list(input.shape)} and {list(mat2.shape)}")
    return labelled(sgnp.matmul(input, mat2), "Bmm")


def is_tensor(obj) -> bool:
    return isinstance(obj, Tensor)
