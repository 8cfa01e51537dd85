"""symgrad: trace numeric Python to a static IR, derive gradients symbolically, compile them.

The public names are those of SPEC.md: the NumPy-like namespace, the transforms,
`trace`, `compile` and `elementwise`, the eager API, and `load` / `aot`.

Names are imported on first use (PEP 562), so `import symgrad` is fast and needs only
NumPy: a process without SymPy or llvmlite can still `symgrad.load` an AOT artifact.
"""
import importlib
import importlib.util

from .dtypes import FLOAT32 as float32, FLOAT64 as float64, INT32 as int32, INT64 as int64, BOOL as bool_  # noqa

__version__ = "0.1.0"

# submodule -> the public names it provides (imported when one is first used); the NumPy-like
# names are whatever symgrad.numpy_api defines (its __all__).
_LAZY = {
    ".core": "ShapeError TracerError UnsupportedOpError",
    ".ops.elementwise": "elementwise",
    ".tracing": "trace",
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
_OWN = ("float32", "float64", "int32", "int64", "bool_", "__version__")


def __getattr__(name):
    if name in _SOURCE:
        if _SOURCE[name] != ".loader":  # sg.load runs AOT artifacts with NumPy alone
            importlib.import_module(".tracing", __name__)  # the primitives and the Tracer methods first
        value = getattr(importlib.import_module(_SOURCE[name], __name__), name)
    elif name in _SUBMODULES:
        importlib.import_module(".tracing", __name__)
        value = importlib.import_module("." + name, __name__)
    elif name == "__all__":
        value = sorted([*_SOURCE, *_SUBMODULES, *_OWN, *importlib.import_module(".numpy_api", __name__).__all__])
    elif importlib.util.find_spec(f"{__name__}.{name}") is not None:  # `from symgrad import pytree`: the
        raise AttributeError(name)  # import system then loads the submodule (and needs no SymPy for it)
    else:
        numpy_api = importlib.import_module(".numpy_api", __name__)
        if name not in numpy_api.__all__:
            raise AttributeError(f"module 'symgrad' has no attribute {name!r}")
        importlib.import_module(".tracing", __name__)
        value = getattr(numpy_api, name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__getattr__("__all__")))

