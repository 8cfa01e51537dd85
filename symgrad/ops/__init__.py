"""The primitives. Importing this package registers every one in `core.REGISTRY`."""
from . import core, shape, elementwise, reduce, linalg, indexing, cumulative  # noqa: F401
from .core import REGISTRY, Primitive, ShapeError  # noqa: F401
