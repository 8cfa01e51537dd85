"""`sg.optim`: optimizers over eager tensors' .grad, with PyTorch's update formulas."""
from .adam import Adam  # noqa: F401
from .optimizer import Optimizer  # noqa: F401
from .sgd import SGD  # noqa: F401
