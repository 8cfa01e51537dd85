"""einsum as a sequence of pairwise contractions, each one transpose + reshape + matmul.

Indices an operand alone carries (and the output does not) are summed first; repeated
indices within one operand take the diagonal. No ellipsis; sizes must match exactly.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..core import fail
from . import arrays as sg
from .indexing import take


def _parse(subscripts: str, count: int):
    subscripts = subscripts.replace(" ", "")
    if "." in subscripts:
        raise NotImplementedError("sg.einsum does not support '...'; spell the axes out")
    inputs, arrow, output = subscripts.partition("->")
    terms = inputs.split(",")
    if len(terms) != count:
        raise ValueError(f"einsum: {subscripts!r} names {len(terms)} operands but {count} were given")
    if not arrow:
        letters = "".join(terms)
        output = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    return terms, output


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
    axes = tuple(i for i, c in enumerate(term) if c not in keep)
    return (sg.sum(x, axes) if axes else x), "".join(c for c in term if c in keep)


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


def einsum(subscripts: str, *operands):
    terms, output = _parse(subscripts, len(operands))
    operands = [sg.asarray(x) for x in operands]
    dtype = dtypes.promote([x.dtype for x in operands])
    sizes = {}
    for x, term in zip(operands, terms):
        if len(term) != x.ndim:
            fail(f"einsum: term {term!r} has {len(term)} letters but the operand has shape {x.shape}")
        for c, d in zip(term, x.shape):
            if sizes.setdefault(c, d) != d:
                fail(f"einsum: index {c!r} has sizes {sizes[c]} and {d}")
    work = []
    for x, term in zip(operands, terms):
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
