"""matmul over (..., m, k) @ (..., k, n) with equal batch dims (the tracer broadcasts them)."""
import numpy as np

from ..core import Primitive, ShapeError
from . import elementwise as E
from .shape import transpose_p


def _matmul_shape(inputs):
    x, w = inputs
    if x.ndim < 2 or w.ndim < 2 or x.shape[:-2] != w.shape[:-2] or x.shape[-1] != w.shape[-2]:
        raise ShapeError(f"matmul: shapes {x.shape} and {w.shape} are not aligned "
                         f"(inner dimensions {x.shape[-1:]} vs {w.shape[-2:-1]})")
    if x.dtype != w.dtype:
        raise TypeError(f"matmul: dtypes {x.dtype} and {w.dtype} differ")
    return x.shape[:-1] + w.shape[-1:], x.dtype


def swap_last(x):
    """Transpose the last two axes."""
    perm = tuple(range(x.ndim - 2)) + (x.ndim - 1, x.ndim - 2)
    return transpose_p(x, perm=perm)


def _matmul_vjp(ct, ans, x, w):
    return matmul_p(ct, swap_last(w)), matmul_p(swap_last(x), ct)


def _matmul_jvp(tangents, ans, x, w):
    tx, tw = tangents
    terms = []
    if tx is not None:
        terms.append(matmul_p(tx, w))
    if tw is not None:
        terms.append(matmul_p(x, tw))
    if not terms:
        return None
    return terms[0] if len(terms) == 1 else E.add(*terms)


matmul_p = Primitive("matmul", _matmul_shape, np.matmul, vjp=_matmul_vjp, jvp=_matmul_jvp)
