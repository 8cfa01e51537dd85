"""`torch.autograd.function`'s path, from which tutorials import `once_differentiable` (and `Function`)."""
from ..eager.function import Function, FunctionCtx, once_differentiable  # noqa: F401
