"""The eager PyTorch-style API: tensors recording into the IR, backward through the compiler's adjoint pass.

Public under PyTorch's names: `sg.Tensor`, `sg.tensor`, ... and `sg.autograd` (symgrad/autograd.py).
Its modules import only downward: mode, tape < graph (records) < plans, adjoint < whole_backward < engine
(which creates tensors only through the class it is given) < tensor (makes the engine for Tensor) < function.
"""
