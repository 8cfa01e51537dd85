"""PyTorch's answers where integer tensors meet the edge of integer arithmetic: an integer tensor raised to a
tensor of negative integers is a value (1 ** -n = 1, (-1) ** -n = +-1, others 0), where NumPy raises; an integer
`%`, `//`, fmod, remainder or rounding div by zero is PyTorch's ZeroDivisionError, where NumPy gives 0 and a
warning (a silent wrong answer). Installed on Tensor's power operators and methods and on the eager plans of the
quotients and remainders (every form of the call); NumPy arrays and traced code keep NumPy's rules."""
from __future__ import annotations

import numpy as np

from ..ops import elementwise as E
from .plans import GUARDS
from .tensor import Tensor


def _integer_kind(value) -> bool:
    """Whether value is an integer (or bool) tensor, NumPy value or Python int."""
    if isinstance(value, Tensor):  # (first, and without np.dtype(): a tensor's ** costs one check)
        return value._data.dtype.kind in "iub"
    if isinstance(value, (bool, int, np.integer, np.bool_)):
        return True
    dtype = getattr(value, "dtype", None)
    return dtype is not None and np.dtype(dtype).kind in "iub"


def _data(value):
    """The values of a tensor or a NumPy value, a Python int as it is (NumPy's promotion takes its type from the
    array's, as the operator's does: 2 ** an int8 tensor is int8); None for anything else (a traced value)."""
    if isinstance(value, Tensor):
        return value._data
    if isinstance(value, (bool, int)):
        return value
    return np.asarray(value) if isinstance(value, (np.ndarray, np.generic)) else None


def _zero_divisor_guard(evaluate, signature):
    """evaluate (the step making a quotient or remainder of `signature`'s dividend and divisor) raising PyTorch's
    error for an integer divisor of zero, where NumPy gives 0 and a warning; as it is for floats (inf or NaN, as
    PyTorch's). A divisor array is the step's last operand; a Python number stays in its expression."""
    if len(signature) != 2 or not all(_integer_entry(entry) for entry in signature):
        return evaluate
    if not signature[1][0]:
        return evaluate if signature[1][3] else _zero_divisor

    def checked(*arrays):
        if not np.all(arrays[-1]):
            _zero_divisor()
        return evaluate(*arrays)
    return checked


def _integer_entry(entry) -> bool:
    """Whether a plan's signature entry (is_array, shape or type, dtype, value) is of an integer or bool."""
    is_array, shape_or_type, dtype, _ = entry
    return dtype.kind in "iub" if is_array else shape_or_type in (int, bool)


def _zero_divisor(*arrays):
    raise RuntimeError("ZeroDivisionError")


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


for _op in (E.floor_divide, E.mod, E.fmod):  # (every form: operators, methods, sg.fmod, div's rounding modes)
    GUARDS[id(_op)] = _zero_divisor_guard
Tensor.__pow__, Tensor.pow = _powering(Tensor.__pow__), _powering(Tensor.pow)
Tensor.__rpow__ = _powering(Tensor.__rpow__, reflected=True)
