"""einsum as a sequence of pairwise contractions, each one transpose + reshape + matmul.

Indices an operand alone carries (and the output does not) are summed first; repeated
indices within one operand take the diagonal. '...' stands for broadcast axes (letters of its own),
and NumPy's interleaved form einsum(a, [0, 1], b, [1, 2], [0, 2]) is the same subscripts as numbers.
Also here: tensordot, vdot and the 1-d convolve/correlate (a gather of windows and one product).
"""
from __future__ import annotations

import operator

import numpy as np

from .. import dtypes
from ..core import fail
from . import arrays as sg
from .dispatch import array_function_dispatch
from .indexing import take


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _parse(subscripts: str, ndims: list):
    """(terms, output) with every '...' spelled out in letters no term uses, right-aligned across operands
    as NumPy broadcasts them."""
    subscripts = subscripts.replace(" ", "")
    inputs, arrow, output = subscripts.partition("->")
    terms = inputs.split(",")
    if len(terms) != len(ndims):
        raise ValueError(f"einsum: {subscripts!r} names {len(terms)} operands but {len(ndims)} were given")
    spare = [c for c in reversed(_LETTERS) if c not in subscripts]
    widest = 0
    for i, (term, ndim) in enumerate(zip(terms, ndims)):
        if "..." in term:
            width = ndim - (len(term) - 3)
            if width < 0:
                fail(f"einsum: term {term!r} has more letters than the operand has axes ({ndim})")
            widest = max(widest, width)
            terms[i] = term.replace("...", "".join(spare[:width][::-1]))
        elif "." in term:
            fail(f"einsum: {term!r} has a '.' that is not part of '...'")
    broadcast = "".join(spare[:widest][::-1])
    if not arrow:
        letters = "".join(terms)
        output = broadcast + "".join(sorted(c for c in set(letters) if letters.count(c) == 1 and c not in broadcast))
    else:
        output = output.replace("...", broadcast)
    return terms, output


def _sublists(operands):
    """NumPy's interleaved form (a, [0, 1], b, [1, 2], [0, 2]) as (subscripts, operands)."""
    def letters(sublist):
        return "".join("..." if s is Ellipsis else _LETTERS[operator.index(s)] for s in sublist)
    has_output = len(operands) % 2 == 1
    pairs = operands[:-1] if has_output else operands
    output = "->" + letters(operands[-1]) if has_output else ""
    return ",".join(letters(s) for s in pairs[1::2]) + output, list(pairs[0::2])


def _diagonal(x, term):
    """Collapse repeated letters of one operand onto their diagonal."""
    while len(set(term)) < len(term):
        letter = next(c for c in term if term.count(c) > 1)
        first, second = [i for i, c in enumerate(term) if c == letter][:2]
        size = x.shape[first]
        x = sg.moveaxis(sg.moveaxis(x, second, -1), first, -2)
        rest = x.shape[:-2]
        x = take(sg.reshape(x, rest + (size * size,)), np.arange(size) * (size + 1), axis=-1)
        term = "".join(c for i, c in enumerate(term) if i not in (first, second)) + letter
    return x, term


def _sum_unshared(x, term, keep):
    """x summed over the axes of `term` not in `keep`, in x's dtype (NumPy's einsum keeps integers' and bools')."""
    axes = tuple(i for i, c in enumerate(term) if c not in keep)
    return (sg.sum(x, axes, dtype=x.dtype) if axes else x), "".join(c for c in term if c in keep)


def _contract(a, ta, b, tb, keep):
    batch = [c for c in ta if c in tb and c in keep]
    summed = [c for c in ta if c in tb and c not in keep]
    free_a = [c for c in ta if c not in tb]
    free_b = [c for c in tb if c not in ta]
    sizes = {**dict(zip(ta, a.shape)), **dict(zip(tb, b.shape))}

    def arrange(x, term, order):
        return sg.transpose(x, [term.index(c) for c in order])

    def size(letters):
        return int(np.prod([sizes[c] for c in letters], dtype=np.int64))

    a3 = sg.reshape(arrange(a, ta, batch + free_a + summed), (size(batch), size(free_a), size(summed)))
    b3 = sg.reshape(arrange(b, tb, batch + summed + free_b), (size(batch), size(summed), size(free_b)))
    out = sg.reshape(sg.matmul(a3, b3), tuple(sizes[c] for c in batch + free_a + free_b))
    return out, "".join(batch + free_a + free_b)


def einsum(subscripts, *operands):
    """np.einsum: subscripts as a string (with '...') or NumPy's interleaved operand/sublist form."""
    if not isinstance(subscripts, str):
        subscripts, operands = _sublists((subscripts, *operands))
    operands = [sg.asarray(x) for x in operands]
    terms, output = _parse(subscripts, [x.ndim for x in operands])
    dtype = dtypes.promote([x.dtype for x in operands])
    sizes = {}
    for x, term in zip(operands, terms):
        if len(term) != x.ndim:
            fail(f"einsum: term {term!r} has {len(term)} letters but the operand has shape {x.shape}")
        for c, d in zip(term, x.shape):
            if sizes.setdefault(c, d) != d and 1 not in (sizes[c], d):
                fail(f"einsum: index {c!r} has sizes {sizes[c]} and {d}")
            sizes[c] = max(sizes[c], d)
    work = []
    for x, term in zip(operands, terms):
        x = sg.broadcast_to(x, tuple(sizes[c] for c in term))  # an axis of size 1 broadcast, as NumPy
        x, term = _diagonal(sg.astype(x, dtype), term)
        work.append((x, term))
    x, term = work[0]
    for position, (y, other) in enumerate(work[1:], start=1):
        later = "".join(t for _, t in work[position + 1:]) + output
        x, term = _sum_unshared(x, term, set(other) | set(later))
        y, other = _sum_unshared(y, other, set(term) | set(later))
        x, term = _contract(x, term, y, other, set(later))
    x, term = _sum_unshared(x, term, set(output))
    return sg.transpose(x, [term.index(c) for c in output])


@array_function_dispatch
def tensordot(a, b, axes=2):
    """np.tensordot: sum over a's `axes` and b's (an int n: a's last n and b's first n), as one product."""
    a, b = sg.asarray(a), sg.asarray(b)
    if isinstance(axes, (int, np.integer)):
        n = operator.index(axes)
        if n < 0 or n > min(a.ndim, b.ndim):
            fail(f"tensordot: axes={n} does not fit shapes {a.shape} and {b.shape}", ValueError)
        axes_a, axes_b = list(range(a.ndim - n, a.ndim)), list(range(n))
    else:
        axes_a, axes_b = ([x] if isinstance(x, (int, np.integer)) else list(x) for x in axes)
    axes_a, axes_b = [x % max(a.ndim, 1) for x in axes_a], [x % max(b.ndim, 1) for x in axes_b]
    if len(axes_a) != len(axes_b) or any(a.shape[i] != b.shape[j] for i, j in zip(axes_a, axes_b)):
        fail(f"tensordot: shape-mismatch for sum: axes {axes_a} of {a.shape} and {axes_b} of {b.shape}", ValueError)
    free_a = [i for i in range(a.ndim) if i not in axes_a]
    free_b = [i for i in range(b.ndim) if i not in axes_b]
    def size(x, axes):
        return int(np.prod([x.shape[i] for i in axes], dtype=np.int64))
    left = sg.reshape(sg.transpose(a, free_a + axes_a), (size(a, free_a), size(a, axes_a)))
    right = sg.reshape(sg.transpose(b, axes_b + free_b), (size(b, axes_b), size(b, free_b)))
    return sg.reshape(sg.matmul(left, right), tuple(a.shape[i] for i in free_a) + tuple(b.shape[i] for i in free_b))


@array_function_dispatch
def vdot(a, b):
    """np.vdot of real arrays: the dot product of the flattened arrays."""
    return sg.dot(sg.ravel(a), sg.ravel(b))


@array_function_dispatch
def convolve(a, v, mode="full"):
    """np.convolve of 1-d arrays: each output is a window of the zero-padded longer one times the
    reversed shorter one (a gather of windows, then one product)."""
    a, v = sg.asarray(a), sg.asarray(v)
    if a.ndim != 1 or v.ndim != 1:
        fail(f"convolve: object too deep for desired array (shapes {a.shape} and {v.shape}; both must be 1-d)",
             ValueError)
    if a.shape[0] == 0 or v.shape[0] == 0:
        fail("convolve: a cannot be empty" if a.shape[0] == 0 else "convolve: v cannot be empty", ValueError)
    if v.shape[0] > a.shape[0]:
        a, v = v, a
    n, m = a.shape[0], v.shape[0]
    dtype = dtypes.promote([a.dtype, v.dtype])
    a, v = sg.astype(a, dtype), sg.astype(v, dtype)
    starts = {"full": (0, n + m - 1), "same": ((m - 1) // 2, n), "valid": (m - 1, n - m + 1)}
    if mode not in starts:
        fail(f"convolve: mode must be 'full', 'same' or 'valid', got {mode!r}", ValueError)
    first, count = starts[mode]
    zeros = sg.zeros((m - 1,), dtype)
    padded = sg.concatenate([zeros, a, zeros]) if m > 1 else a
    windows = take(padded, (np.arange(first, first + count)[:, None] + np.arange(m)[None, :]))
    return sg.matmul(windows, v[::-1])


@array_function_dispatch
def correlate(a, v, mode="valid"):
    """np.correlate of real 1-d arrays: the convolution with v reversed (the result reversed when v is
    the longer, as NumPy swaps them)."""
    a, v = sg.asarray(a), sg.asarray(v)
    if a.ndim == 1 and v.ndim == 1 and v.shape[0] > a.shape[0]:
        return convolve(v, a[::-1], mode)[::-1]
    return convolve(a, v[::-1] if v.ndim == 1 else v, mode)
