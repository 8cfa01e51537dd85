"""The NumPy arrays a loop's or branch's body sees outside a trace (sg.fori_loop, sg.scan, sg.while_loop, sg.cond,
sg.switch run as Python there): NumPy's own arrays, with JAX's `x.at[key].set(v)` and its kin as a traced value has
them, so a body written for JAX runs on both sides with the same numbers (NumPy's arrays have no `.at`)."""
from __future__ import annotations

import numpy as np

from . import pytree
from .numpy_api.updates import IndexUpdateHelper


class LoopArray(np.ndarray):
    """np.ndarray with `.at`. NumPy's operators and methods keep the class; sg.* functions given one return one
    (their `__sg_function__` / `__sg_elementwise__` hooks run them on the plain arrays), so `.at` chains."""

    at = property(lambda self: _Updates(self))

    @staticmethod
    def __sg_function__(fn, args, kwargs):
        return as_loop_arrays(fn(*[_operand(arg) for arg in args], **kwargs))

    @staticmethod
    def __sg_elementwise__(op, args):
        return as_loop_arrays(op(*[_operand(arg) for arg in args]))


class _Updates:
    """x.at of a LoopArray: IndexUpdateHelper's, whose results are LoopArrays in turn (`x.at[0].set(1).at[1]...`)."""

    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array

    def __getitem__(self, key):
        return _UpdateRef(IndexUpdateHelper(self.array.view(np.ndarray))[key])


class _UpdateRef:
    """x.at[key] of a LoopArray: get, set, add, multiply, min and max of IndexUpdateRef, returning LoopArrays."""

    __slots__ = ("ref",)

    def __init__(self, ref):
        self.ref = ref

    def __getattr__(self, name):
        update = getattr(self.ref, name)
        return lambda *args: as_loop_arrays(update(*args))


def _operand(arg):
    """An sg.* function's argument with its LoopArrays plain (in a list or tuple too: sg.stack's)."""
    if isinstance(arg, LoopArray):
        return arg.view(np.ndarray)
    if isinstance(arg, (list, tuple)):
        return arg.__class__(_operand(item) for item in arg)
    return arg


def as_loop_arrays(tree):
    """tree with each NumPy array leaf (not a scalar, not an eager tensor) viewed as a LoopArray."""
    leaves, treedef = pytree.flatten(tree)
    return pytree.unflatten(treedef, [leaf.view(LoopArray) if leaf.__class__ is np.ndarray else leaf
                                      for leaf in leaves])


def plain(tree):
    """tree with each LoopArray viewed as the np.ndarray it is (what the loop returns)."""
    leaves, treedef = pytree.flatten(tree)
    if not any(isinstance(leaf, LoopArray) for leaf in leaves):
        return tree
    return pytree.unflatten(treedef, [leaf.view(np.ndarray) if isinstance(leaf, LoopArray) else leaf
                                      for leaf in leaves])
