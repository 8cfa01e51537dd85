"""PyTorch-style autograd on the compiler: backward, grad, gradient modes, custom Functions."""
from .engine import backward, grad  # noqa: F401
from .function import Function, FunctionCtx  # noqa: F401
from .mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled  # noqa: F401
