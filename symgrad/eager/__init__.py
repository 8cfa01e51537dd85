"""The eager PyTorch-style API: tensors recording into the IR, backward through the compiler's adjoint pass.

Public under PyTorch's names: `sg.Tensor`, `sg.tensor`, ... and `sg.autograd` (symgrad/autograd/).
Its modules import only downward: mode, tape < graph (records) < plans, adjoint < whole_backward < engine
(which creates tensors only through the class it is given) < tensor (makes the engine for Tensor) < function,
random < torch_methods, integer_arithmetic, shared_memory, custom_rules (PyTorch's Tensor methods, integer edge
cases, share_memory_ and custom derivative rules on tensors, installed by this package).
"""

from . import torch_methods  # noqa: E402,F401  PyTorch's sort, topk, split, repeat, ... installed on Tensor
from . import integer_arithmetic  # noqa: E402,F401  PyTorch's integer ** negative and division by zero
from . import shared_memory  # noqa: E402,F401  Tensor.share_memory_ and is_shared
from . import custom_rules  # noqa: E402,F401  custom_jvp/custom_vjp rules on tensors in any form
