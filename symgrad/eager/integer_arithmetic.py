"""PyTorch's answers where integer tensors meet the edge of integer arithmetic: an integer tensor raised to a
tensor of negative integers is a value (1 ** -n = 1, (-1) ** -n = +-1, others 0), where NumPy raises; an integer
`%`, `//`, fmod, remainder or rounding div by zero is PyTorch's ZeroDivisionError, where NumPy gives 0 and a
warning (a silent wrong answer). Installed on Tensor's operators and methods; NumPy arrays keep NumPy's rules."""
from __future__ import annotations

import numpy as np

from .tensor import Tensor


def _integer_kind(value) -> bool:
    """Whether value is an integer (or bool) tensor, NumPy value or Python int."""
    if isinstance(value, Tensor):  # (first, and without np.dtype(): a float tensor's % costs one check)
        return value._data.dtype.kind in "iub"
    if isinstance(value, (bool, int, np.integer, np.bool_)):
        return True
    dtype = getattr(value, "dtype", None)
    return dtype is not None and np.dtype(dtype).kind in "iub"


def _data(value):
    """The values of a tensor, a NumPy value or a Python number; None for anything else (a traced value)."""
    if isinstance(value, Tensor):
        return value._data
    return np.asarray(value) if isinstance(value, (bool, int, np.ndarray, np.generic)) else None


def _refuse_zero_divisor(dividend, divisor) -> None:
    """PyTorch's error for an integer quotient or remainder by zero (a float operand gives inf or NaN instead)."""
    if _integer_kind(dividend) and _integer_kind(divisor):
        values = _data(divisor)
        if values is not None and not np.all(values):
            raise RuntimeError("ZeroDivisionError")


def _dividing(method, reflected=False, rounding=False):
    """method refusing an integer divisor of zero; with `rounding` (div) only where a rounding_mode is given."""
    def checked(self, other, *args, **kwargs):
        if not rounding or kwargs.get("rounding_mode") is not None:
            _refuse_zero_divisor(*((other, self) if reflected else (self, other)))
        return method(self, other, *args, **kwargs)
    checked.__name__, checked.__doc__ = method.__name__, method.__doc__
    return checked


def _negative_integer_power(base, exponent):
    """base ** exponent of integers as PyTorch computes it where an exponent is negative (the reciprocal truncated
    toward zero), or None where none is (the ordinary path). No gradient: the values are integers."""
    if type(exponent) in (int, float) or not isinstance(exponent, Tensor):
        return None
    if not (_integer_kind(base) and _integer_kind(exponent)):
        return None
    b, e = _data(base), _data(exponent)
    if b is None or not np.any(e < 0):
        return None
    with np.errstate(all="ignore"):
        positive = np.power(b, np.maximum(e, 0))
        negative = np.where(b == 1, 1, np.where(b == -1, np.where(e % 2 == 0, 1, -1), 0))
        return Tensor._wrap(np.where(e < 0, negative, positive).astype(positive.dtype))


def _powering(method, reflected=False):
    def power(self, exponent):
        result = _negative_integer_power(*((exponent, self) if reflected else (self, exponent)))
        return method(self, exponent) if result is None else result
    power.__name__, power.__doc__ = method.__name__, method.__doc__
    return power


for _name in ("__mod__", "__floordiv__", "fmod", "remainder"):
    setattr(Tensor, _name, _dividing(getattr(Tensor, _name)))
Tensor.div = _dividing(Tensor.div, rounding=True)
for _name in ("__rmod__", "__rfloordiv__"):
    setattr(Tensor, _name, _dividing(getattr(Tensor, _name), reflected=True))
Tensor.__pow__, Tensor.pow = _powering(Tensor.__pow__), _powering(Tensor.pow)
Tensor.__rpow__ = _powering(Tensor.__rpow__, reflected=True)
