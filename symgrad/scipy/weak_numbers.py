"""Python numbers given to sg.scipy functions, as 0-d arrays of the float dtype the array arguments promote to.

They stay weak, as in NumPy's and JAX's promotion (float32 data gives float32 results), and they are
run-time values rather than constants of the op's SymPy expression, where SymPy would fold log(0) in
xlogy(x, 0.0), or polygamma(0, 0) in a derivative of betaln(a, 0.0), to complex infinity.
"""
import numpy as np

from .. import dtypes


def weak_numbers(args) -> tuple:
    """args with each Python int or float as a 0-d array of the arrays' promoted float dtype (float64 if none)."""
    arrays = [a.dtype for a in args if hasattr(a, "dtype")]
    dtype = dtypes.float_result(dtypes.promote(arrays)) if arrays else dtypes.FLOAT64
    return tuple(np.asarray(a, dtype) if isinstance(a, (int, float)) and not isinstance(a, bool) else a for a in args)


def with_weak_numbers(op):
    """An elementwise op taking Python numbers as weak run-time values (see the module)."""
    def call(*args):
        return op(*weak_numbers(args))
    call.__name__ = call.__qualname__ = op.name
    call.__doc__ = f"scipy.special.{op.name}, elementwise (symgrad's op {op.name!r})."
    return call
