"""symgrad: trace numeric Python to a static IR, derive gradients symbolically, compile them.

The public names are those of SPEC.md: the NumPy-like namespace, the transforms,
`trace`, `compile` and `elementwise`, the eager API, and `load` / `aot`.

Names are imported on first use (PEP 562), so `import symgrad` is fast and needs only
NumPy: a process without SymPy or llvmlite can still `symgrad.load` an AOT artifact.
"""
import importlib

from .dtypes import FLOAT32 as float32, FLOAT64 as float64, INT32 as int32, INT64 as int64, BOOL as bool_  # noqa

__version__ = "0.1.0"

# submodule -> the public names it provides (imported when one is first used).
_LAZY = {
    ".numpy_api": """abs add arccos arcsin arctan arctan2 asarray astype broadcast_to clip concatenate cos cosh
        cumprod cumsum divide dot einsum equal erf exp expand_dims expm1 full greater greater_equal inner less
        less_equal log log1p log_softmax logaddexp logical_and logical_not logical_or logsumexp matmul
        max maximum mean min minimum moveaxis multiply negative not_equal ones ones_like outer power
        prod ravel reciprocal relu reshape roll sigmoid sign sin sinh softmax softplus sqrt square squeeze
        stack std stop_gradient subtract sum swapaxes take take_along_axis tan tanh transpose var where
        zeros zeros_like""",
    ".ops.core": "ShapeError UnsupportedOpError",
    ".ops.elementwise": "elementwise",
    ".tracing": "TracerError trace",
    ".transforms": "grad hessian jacfwd jacobian jacrev jvp value_and_grad vjp",
    ".finite_differences": "check_grads",
    ".compiler": "compile",
    ".closed_form": "symbolic",
    ".eager.tensor": "Tensor cat from_numpy manual_seed rand randn tensor",
    ".autograd": "enable_grad is_grad_enabled no_grad set_grad_enabled",
    ".loader": "load",
}
_SOURCE = {name: module for module, names in _LAZY.items() for name in names.split()}
_SUBMODULES = ("autograd", "nn", "optim", "aot")  # public submodules, also imported on first use
__all__ = sorted([*_SOURCE, *_SUBMODULES, "float32", "float64", "int32", "int64", "bool_", "__version__"])


def __getattr__(name):
    if name in _SOURCE:
        if _SOURCE[name] != ".loader":
            importlib.import_module(".ops", __name__)  # registers the primitives first
        value = getattr(importlib.import_module(_SOURCE[name], __name__), name)
    elif name in _SUBMODULES:
        importlib.import_module(".ops", __name__)
        value = importlib.import_module("." + name, __name__)
    else:
        raise AttributeError(f"module 'symgrad' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))

