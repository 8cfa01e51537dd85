"""The tape: the ops recorded since the last backward, with a running structural hash.

Every record joins the current thread's tape as it is created, with one structural entry
(`record.entry`): (primitive, attributes, where each operand comes from, operand types, output
type). An operand comes from an earlier entry of the tape (its position), a leaf that requires
grad (its slot, in order of first use), or a constant (-1). `digests[i]` hashes entries 0..i, so
a training step whose structure repeats is recognized at backward by one dictionary lookup,
never by building a key from the graph (symgrad.eager.whole_backward).

A tape is `regular` while every entry is an ordinary op reading the current version of its
operands: a custom Function, an operand recorded before the tape began (or on another thread),
an in-place op's snapshot, a hook or retain_grad make it irregular, and the next backward
takes the general path (symgrad.eager.engine). Backward starts a new tape. The tape keeps
digests (plain ints) and weak references to leaves only: entries live and die with their
records, so the tape never keeps a graph alive nor grows what the garbage collector scans.
"""
from __future__ import annotations

import threading
import weakref

MAX_ENTRIES = 4096  # a longer tape (ops recorded without a backward) starts over
_CONSTANT = -1


class Tape:
    __slots__ = ("digests", "leaves", "leaf_slots", "regular")

    def __init__(self):
        self.digests = []
        self.leaves = []       # weakrefs to the leaves requiring grad, by slot
        self.leaf_slots = {}   # id(leaf) -> slot
        self.regular = True

    def append(self, record) -> None:
        """Add `record` (a new Record) as the tape's next entry: sets its tape, position and entry."""
        sources = []
        for parent, (counter, version) in zip(record.parents, record.versions):
            if parent is None:
                sources.append(_CONSTANT)
            elif parent.__class__ is record.__class__:  # a Record: on this tape, at the version it made?
                if parent.tape is not self or parent.out_version[0] is not counter \
                        or parent.out_version[1] != version:
                    self.regular = False
                sources.append(parent.position)
            else:  # a leaf that requires grad
                slot = self.leaf_slots.get(id(parent))
                if slot is None or self.leaves[slot]() is not parent:
                    slot = self.leaf_slots[id(parent)] = len(self.leaves)
                    self.leaves.append(weakref.ref(parent))
                sources.append(-2 - slot)
        if record.function is not None:
            self.regular = False
        digests = self.digests
        record.entry = entry = (record.prim, record.attrs, tuple(sources), record.in_types, record.out_type)
        record.tape, record.position = self, len(digests)
        try:
            digests.append(hash((digests[-1] if digests else 0, entry)))
        except TypeError:  # an attribute that is not hashable data: a structure never captured
            self.regular = False
            digests.append(0)


_state = threading.local()


def current_tape() -> Tape:
    """This thread's tape (a new one when it has none, or when it grew past MAX_ENTRIES)."""
    tape = getattr(_state, "tape", None)
    if tape is None or len(tape.digests) >= MAX_ENTRIES:
        tape = _state.tape = Tape()
    return tape


def start_over() -> None:
    """Begin a new tape (after a backward or autograd.grad): the next step's ops get positions from 0 again."""
    _state.tape = Tape()


def leaf_slot(source: int) -> "int | None":
    """The leaf slot an entry's operand source names, or None (a constant or an earlier entry)."""
    return -2 - source if source <= -2 else None
