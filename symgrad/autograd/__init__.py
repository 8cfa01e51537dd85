"""`sg.autograd`, PyTorch's name for the eager gradient API: backward, grad, gradient modes, custom Functions,
and `functional` (jacobian, hessian, vjp, jvp, hvp, vhp of a function of tensors)."""
from ..eager.function import Function, FunctionCtx, once_differentiable  # noqa: F401
from ..eager.mode import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled  # noqa: F401
from ..eager.tensor import ENGINE
from . import functional  # noqa: F401

backward, grad = ENGINE.backward, ENGINE.grad
