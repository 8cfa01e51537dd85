"""Automatic differentiation passes over IR graphs: reverse mode (adjoint) and forward mode (JVP)."""
from .forward import forward_pass  # noqa: F401
from .reverse import backward_pass, primals_from_rules  # noqa: F401
from . import control  # noqa: F401 (the control-flow primitives' rules)
from . import custom  # noqa: F401 (the custom-derivative primitives' rules)
