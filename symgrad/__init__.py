"""symgrad: trace numeric Python to a static IR, derive gradients symbolically, compile them.

The public names are those of SPEC.md: the NumPy-like namespace, the transforms,
`trace`, `compile` and `elementwise`, the eager API, and `load` / `aot`.

Names are imported on first use (PEP 562), so `import symgrad` is fast and needs only
NumPy: a process without SymPy or llvmlite can still `symgrad.load` an AOT artifact.
"""
import importlib
import importlib.util

from .dtypes import FLOAT32 as float32, FLOAT64 as float64, INT32 as int32, INT64 as int64, BOOL as bool_  # noqa
from .dtypes import UINT8 as uint8, INT8 as int8, INT16 as int16, UINT16 as uint16, UINT32 as uint32  # noqa

__version__ = "0.1.0"

# submodule -> the public names it provides (imported when one is first used); the NumPy-like
# names are whatever symgrad.numpy_api defines (its __all__).
_LAZY = {
    ".core": "ShapeError TracerError UnsupportedOpError",
    ".ops.elementwise": "elementwise",
    ".tracing": "trace",
    ".control_flow": "checkpoint cond fori_loop scan switch while_loop",
    ".batching": "vmap",
    ".custom_derivatives": "custom_jvp custom_vjp",
    ".transforms": "grad hessian hvp jacfwd jacobian jacrev jvp linearize value_and_grad vjp",
    ".finite_differences": "check_grads",
    ".compiler": "compile",
    ".closed_form": "symbolic",
    ".eager.size": "Size",
    ".eager.tensor": "Tensor as_tensor cat from_numpy manual_seed tensor",
    ".autograd": "enable_grad inference_mode is_grad_enabled no_grad set_grad_enabled",
    ".loader": "load",
    ".eager.random": "Generator normal rand rand_like randint randn randn_like randperm",
    ".eager.factories": "arange empty empty_like eye full full_like linspace ones ones_like zeros zeros_like",
    ".numpy_api.torch_keywords": "amax amin argmax argmin cumprod cumsum log_softmax logsumexp matmul mean prod "
                                  "softmax stack sum cross add tensordot tril triu split",
    ".eager.dtype_names": "bool double float float16 half int long short",
    ".eager.legacy": "BoolTensor ByteTensor CharTensor DoubleTensor FloatTensor IntTensor LongTensor ShortTensor",
    ".eager.device": "accelerator cuda device get_default_device set_default_device",
    ".amp": "autocast",
    ".serialization": "load save",
    ".eager.print_options": "get_printoptions set_printoptions",
    ".eager.torch_functions": "atan2 bincount bmm chunk clamp clone div eq flatten gather ge gt histc "
                              "index_select is_tensor le lt "
                              "masked_fill masked_select mm mul ne neg norm numel permute rsqrt scatter scatter_add sub t topk "
                              "scatter_reduce "
                              "unbind unsqueeze lerp clamp_min clamp_max multinomial bernoulli nonzero addmm sgn lgamma "
                              "take_along_dim narrow movedim repeat_interleave unflatten var_mean std_mean "
                              "asin acos atan asinh acosh atanh unique kthvalue is_floating_point mv "
                              "addcmul addcdiv sin_ cos_ exp_ abs_ sigmoid_ square_ "
                              "frac aminmax logcumsumexp diag_embed xlogy argwhere broadcast_tensors "
                              "inverse det logdet slogdet pinverse matrix_power",
}
_SOURCE = {name: module for module, names in _LAZY.items() for name in names.split()}
# public submodules, also imported on first use
_SUBMODULES = ("autograd", "nn", "optim", "aot", "scipy", "linalg", "utils", "tree_util", "distributions", "amp")
_OWN = ("float32", "float64", "int32", "int64", "bool_", "uint8", "int8", "int16", "uint16", "uint32",
        "__version__", "inf", "nan", "pi", "e", "newaxis")
# the constants of numpy, jax.numpy and torch (sg.inf in ns.linalg.norm(x, ord=ns.inf) was an AttributeError)
inf, nan, pi, e, newaxis = float("inf"), float("nan"), 3.141592653589793, 2.718281828459045, None


def __getattr__(name):
    if name in _SOURCE:
        if _SOURCE[name] not in (".loader", ".serialization"):  # sg.load runs AOT artifacts with NumPy alone
            importlib.import_module(".tracing", __name__)  # the primitives and the Tracer methods first
        value = getattr(importlib.import_module(_SOURCE[name], __name__), name)
    elif name in _SUBMODULES:
        importlib.import_module(".tracing", __name__)
        value = importlib.import_module("." + name, __name__)
    elif name == "__all__":
        value = sorted({*_SOURCE, *_SUBMODULES, *_OWN, *_numpy_names(name)})  # sg.trace is both
    elif (name.startswith("__") and name.endswith("__")) or importlib.util.find_spec(f"{__name__}.{name}"):
        # a probe (__wrapped__, __path__ ...), or `from symgrad import pytree`: the import system then loads
        # the submodule; neither imports SymPy
        raise AttributeError(f"module 'symgrad' has no attribute {name!r}")
    else:
        if name not in _numpy_names(name):
            raise AttributeError(f"module 'symgrad' has no attribute {name!r}")
        importlib.import_module(".tracing", __name__)
        value = getattr(importlib.import_module(".numpy_api", __name__), name)
    globals()[name] = value
    return value


def _numpy_names(wanted) -> list:
    """The names of the NumPy-like namespace (numpy_api.__all__), which needs SymPy; without it,
    an AttributeError for `wanted` that says so (hasattr and dir() work with NumPy alone)."""
    try:
        return importlib.import_module(".numpy_api", __name__).__all__
    except ImportError as err:
        raise AttributeError(f"module 'symgrad' has no attribute {wanted!r} without its dependencies: {err}") from err


def __dir__():
    try:
        names = __getattr__("__all__")
    except AttributeError:  # no SymPy: what this process can use
        names = [*_SUBMODULES, *_OWN, "load"]
    return sorted(set(globals()) | set(names))

