"""`sg.optim`: optimizers over eager tensors' .grad, with PyTorch's update formulas."""
from .adam import Adam  # noqa: F401
from .optimizer import Optimizer  # noqa: F401
from .sgd import SGD  # noqa: F401
from .adamw import AdamW  # noqa: F401
from .rmsprop import RMSprop  # noqa: F401
from .adagrad import Adagrad  # noqa: F401
from . import lr_scheduler  # noqa: F401
from .adaptive import Adadelta, Adamax, NAdam, RAdam  # noqa: F401
from .rprop import Rprop  # noqa: F401,E402
from .asgd import ASGD  # noqa: F401,E402
from .lbfgs import LBFGS  # noqa: F401,E402
