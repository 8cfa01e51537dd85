"""`import symgrad.numpy as np`: the NumPy-like namespace under the name JAX and autograd programs import
(`jax.numpy`, `autograd.numpy`), so such a program ports by renaming its import.

Its functions are `sg.*`'s NumPy-like ones (numpy_api), with NumPy's dtypes, constants and `np.linalg`; the
PyTorch names of `sg` (tensor, nn, dim=) are not here. `random` is NumPy's own module, as autograd's
(`import symgrad.numpy.random as npr` too): its arrays are what symgrad's functions take.
"""
import sys as _sys

import numpy as _np
from numpy import random  # noqa: F401

from .. import tracing as _tracing  # noqa: F401  (the primitives and the traced values' methods, before the namespace)
from . import linalg  # noqa: F401  (numpy.linalg: symgrad.linalg)
from ..dtypes import BOOL as bool_, FLOAT32 as float32, FLOAT64 as float64  # noqa: F401
from ..dtypes import INT8 as int8, INT16 as int16, INT32 as int32, INT64 as int64, UINT8 as uint8  # noqa: F401
from ..numpy_api import *  # noqa: F401,F403
from ..numpy_api import __all__ as _names

newaxis, pi, e, inf, nan, euler_gamma = None, _np.pi, _np.e, _np.inf, _np.nan, _np.euler_gamma
_sys.modules[__name__ + ".random"] = random
__all__ = [*_names, "linalg", "random", "bool_", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
           "newaxis", "pi", "e", "inf", "nan", "euler_gamma"]
