"""The eager PyTorch-style API: tensors recording into the IR, backward through the compiler's adjoint pass.

Public under PyTorch's names: `sg.Tensor`, `sg.tensor`, ... and `sg.autograd` (symgrad/autograd/).
Its modules import only downward: mode, tape < graph (records) < plans, adjoint < whole_backward < engine
(which creates tensors only through the class it is given) < tensor (makes the engine for Tensor) < function,
random < torch_methods (PyTorch's Tensor methods, installed by this package).
"""

from . import torch_methods  # noqa: E402,F401  PyTorch's sort, topk, split, repeat, ... installed on Tensor
