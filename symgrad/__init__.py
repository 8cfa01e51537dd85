"""symgrad: trace numeric Python to a static IR, derive gradients symbolically, compile them.

The public names are those of SPEC.md: the NumPy-like namespace, the transforms,
`trace`, `compile` and `elementwise`.
"""
from . import ops as _ops  # noqa: F401  (registers the primitives)
from .numpy_api import (  # noqa: F401
    abs, add, arccos, arcsin, arctan, arctan2, asarray, astype, broadcast_to, clip, concatenate, cos, cosh,
    divide, dot, einsum, equal, erf, exp, expand_dims, expm1, full, greater, greater_equal, inner, less,
    less_equal, log, log1p, log_softmax, logaddexp, logical_and, logical_not, logical_or, logsumexp, matmul,
    max, maximum, mean, min, minimum, moveaxis, multiply, negative, not_equal, ones, ones_like, outer, power,
    prod, ravel, reciprocal, relu, reshape, sigmoid, sign, sin, sinh, softmax, softplus, sqrt, square, squeeze,
    stack, std, stop_gradient, subtract, sum, swapaxes, take, take_along_axis, tan, tanh, transpose, var, where,
    zeros, zeros_like,
)
from .ops.core import ShapeError  # noqa: F401
from .ops.elementwise import elementwise  # noqa: F401
from .tracing import TracerError, trace  # noqa: F401
from .transforms import grad, hessian, jacfwd, jacobian, jacrev, jvp, value_and_grad, vjp  # noqa: F401
from .compile import compile  # noqa: F401
from .symbolic import symbolic  # noqa: F401
from .dtypes import FLOAT32 as float32, FLOAT64 as float64, INT32 as int32, INT64 as int64, BOOL as bool_  # noqa

__version__ = "0.1.0"
