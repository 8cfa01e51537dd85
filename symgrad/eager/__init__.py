"""The eager PyTorch-style API: tensors recording into the IR, backward through the compiler's adjoint pass.

Public under PyTorch's names: `sg.Tensor`, `sg.tensor`, ... and `sg.autograd` (symgrad/autograd.py).
"""
