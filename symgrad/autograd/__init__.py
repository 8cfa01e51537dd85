"""`sg.autograd`, PyTorch's name for the eager gradient API: backward, grad, gradient modes, custom Functions,
`functional` (jacobian, hessian, vjp, jvp, hvp, vhp of a function of tensors), gradcheck and gradgradcheck,
`graph.saved_tensors_hooks`."""
import warnings

from ..eager.function import Function, FunctionCtx, once_differentiable  # noqa: F401
from ..eager.mode import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled  # noqa: F401
from ..eager.tensor import ENGINE, Tensor
from . import functional  # noqa: F401
from . import graph  # noqa: F401
from .gradcheck import GradcheckError, gradcheck, gradgradcheck  # noqa: F401

backward, grad = ENGINE.backward, ENGINE.grad


class _EveryTensor(type):
    def __instancecheck__(cls, value) -> bool:
        return isinstance(value, Tensor)


class Variable(metaclass=_EveryTensor):
    """torch.autograd.Variable, PyTorch's legacy wrapper that older programs (the BiLSTM-CRF tutorial) still call:
    `Variable(t)` is `t` detached, sharing its memory, with `requires_grad` as given; every tensor is a Variable.
    `volatile`, removed in PyTorch 0.4, is accepted with PyTorch's warning and no effect (WGAN-GP's gan_toy.py)."""

    def __new__(cls, data, requires_grad=False, volatile=None):
        if volatile is not None:
            warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` instead.",
                          UserWarning, stacklevel=2)
        return data.detach().requires_grad_(requires_grad)
