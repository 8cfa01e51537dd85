"""The primitives, by family. Importing this package registers every one in `symgrad.core.REGISTRY`."""
from . import indexing, shape, elementwise, reduce, linalg, cumulative  # noqa: F401
