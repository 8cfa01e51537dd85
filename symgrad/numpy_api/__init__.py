"""The `sg.*` NumPy-like namespace: functions that work on arrays, on traced values and on eager tensors.

Its names are derived, not listed: every ufunc and every public function of arrays.py,
indexing.py, contraction.py, ordering.py, rearrange.py, ufuncs.py, statistics.py, sequences.py and
layout.py (`sg.getitem(x, key)` is `x[key]`). Importing the package
also gives traced values their NumPy-style operators (methods.py).
"""
import types

from ..ops.elementwise import ElementwiseOp
from . import arrays, contraction, indexing, methods, ordering, rearrange
from . import layout, sequences, statistics, ufuncs


def _public(module) -> dict:
    """The functions `module` defines (or the ufuncs it binds) under a name without a leading underscore."""
    return {name: value for name, value in vars(module).items()
            if not name.startswith("_") and (isinstance(value, ElementwiseOp) or
                                             (isinstance(value, types.FunctionType) and
                                              getattr(value, "__module__", None) == module.__name__))}


_NAMESPACE = {**_public(arrays), **_public(indexing), **_public(contraction), **_public(ordering),
              **_public(rearrange),
              **_public(ufuncs), **_public(statistics), **_public(sequences), **_public(layout)}
globals().update(_NAMESPACE)
__all__ = sorted(_NAMESPACE)
methods.install()
