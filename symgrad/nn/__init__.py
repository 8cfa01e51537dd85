"""`sg.nn`: modules, parameters and losses on eager tensors, with PyTorch's names."""
from . import functional  # noqa: F401
from .modules import (BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, Flatten, Identity, Linear,  # noqa: F401
                      LogSoftmax, Module, MSELoss, NLLLoss, ReLU, Sequential, Sigmoid, Softmax, Tanh)
from .parameter import Parameter  # noqa: F401
