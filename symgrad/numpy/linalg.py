"""`symgrad.numpy.linalg` (`from symgrad.numpy.linalg import solve`, as `jax.numpy.linalg`): symgrad.linalg."""
from ..linalg import *  # noqa: F401,F403
from ..linalg import __all__  # noqa: F401
