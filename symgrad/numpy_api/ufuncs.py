"""NumPy's elementwise names beyond arrays.py's: cbrt, copysign, fmax/fmin, fmod, logaddexp2, heaviside,
signbit, isposinf/isneginf, positive, fabs (ops of the library, ops/elementwise.py), NumPy's aliases of
existing ops, and the elementwise functions written with them (float_power, nan_to_num, real/imag/conj).
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..core import Tracer, fail
from ..ops import elementwise as E
from . import arrays as sg
from .dispatch import array_function_dispatch

cbrt, copysign, fmax, fmin, fmod, logaddexp2 = E.cbrt, E.copysign, E.fmax, E.fmin, E.fmod, E.logaddexp2
heaviside, signbit, isposinf, isneginf, positive, fabs = (E.heaviside, E.signbit, E.isposinf, E.isneginf,
                                                         E.positive, E.fabs)
absolute, pow, degrees, radians, fix = E.abs, E.power, E.rad2deg, E.deg2rad, E.trunc


def float_power(x1, x2):
    """np.float_power: x1 ** x2 computed in float64 whatever the operands' dtypes."""
    def as_float64(x):
        if isinstance(x, (bool, int, float)) and not isinstance(x, np.generic):
            return float(x)
        return sg.astype(x, dtypes.FLOAT64)
    return E.power(as_float64(x1), as_float64(x2))


@array_function_dispatch
def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """np.nan_to_num: NaN, +inf and -inf replaced (by default with 0 and the dtype's largest and smallest
    values); gradient 1 where x is finite, 0 where it was replaced. Integers and booleans are unchanged."""
    x = _real(x, "nan_to_num")
    if not dtypes.is_float(x.dtype):
        return x
    info = np.finfo(x.dtype)
    high = float(info.max) if posinf is None else posinf
    low = float(info.min) if neginf is None else neginf
    replaced = sg.where(isposinf(x), sg.astype(high, x.dtype), sg.where(isneginf(x), sg.astype(low, x.dtype), x))
    return sg.where(sg.isnan(x), sg.astype(nan, x.dtype), replaced)


def _real(x, name):
    """x as an array or tracer, refusing complex values (symgrad computes with real numbers only)."""
    if not isinstance(x, Tracer) and np.iscomplexobj(x):
        fail(f"{name}: complex values are not supported (symgrad computes with real numbers)", TypeError)
    return sg.asarray(x)


@array_function_dispatch
def real(val):
    """np.real of a real value: the value itself."""
    return _real(val, "real")


@array_function_dispatch
def imag(val):
    """np.imag of a real value: zeros of its shape and dtype (no gradient flows from them)."""
    val = _real(val, "imag")
    return sg.zeros(val.shape, val.dtype)


@array_function_dispatch
def conj(x):
    """np.conj (np.conjugate) of a real value: the value itself."""
    return _real(x, "conj")


conjugate = conj
