"""The primitives, by family. Importing this package registers every one in `symgrad.core.REGISTRY`."""
from . import indexing, shape, ew, elementwise, reduce, linalg, cumulative, control, sorting, lapack, conv  # noqa: F401
