"""`sg.nn`: modules, parameters and losses on eager tensors, with PyTorch's names."""
from . import functional  # noqa: F401
from .modules import (BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, Flatten, Identity, Linear,  # noqa: F401
                      LogSoftmax, Module, MSELoss, NLLLoss, ReLU, Sequential, Sigmoid, Softmax, Tanh)
from .parameter import Parameter  # noqa: F401
from . import init  # noqa: F401
from .container import ModuleDict, ModuleList  # noqa: F401
from .conv import Conv1d  # noqa: F401
from .conv import Conv2d  # noqa: F401
from .conv import MaxPool1d  # noqa: F401
from .conv import MaxPool2d  # noqa: F401
from .conv import AvgPool1d  # noqa: F401
from .conv import AvgPool2d  # noqa: F401
from .conv import AdaptiveAvgPool1d  # noqa: F401
from .conv import AdaptiveAvgPool2d  # noqa: F401
from .layers import Dropout  # noqa: F401
from .layers import ELU  # noqa: F401
from .layers import Embedding  # noqa: F401
from .layers import GELU  # noqa: F401
from .layers import LeakyReLU  # noqa: F401
from .normalization import BatchNorm1d  # noqa: F401
from .normalization import BatchNorm2d  # noqa: F401
from .normalization import LayerNorm  # noqa: F401
from .loss import HuberLoss  # noqa: F401
from .loss import KLDivLoss  # noqa: F401
from .loss import L1Loss  # noqa: F401
from .loss import SmoothL1Loss  # noqa: F401
from .conv import Conv3d  # noqa: F401
from .conv import MaxPool3d  # noqa: F401
from .conv import AvgPool3d  # noqa: F401
from .conv import AdaptiveAvgPool3d  # noqa: F401
from .normalization import BatchNorm3d  # noqa: F401
from .conv import ConvTranspose1d  # noqa: F401
from .conv import ConvTranspose2d  # noqa: F401
from .normalization import GroupNorm  # noqa: F401
from .normalization import InstanceNorm1d  # noqa: F401
from .normalization import InstanceNorm2d  # noqa: F401
