"""The tape: the ops recorded since the last backward, with a running structural hash.

Every record joins the current thread's tape as it is created, with one structural entry
(`record.entry`): (primitive, attributes, where each operand comes from, operand types, output
type). An operand comes from an earlier entry of the tape (its position), a leaf that requires
grad (-3 - its slot, slots in order of first use), or a constant (-1); no two sources hash alike
(hash(-2) == hash(-1): a first leaf as -2 gave a step reading a constant there and one reading
that leaf one digest). `digests[i]` hashes entries 0..i, so a training step whose structure
repeats is recognized at backward by one dictionary lookup, never by building a key from the
graph (symgrad.eager.whole_backward).

A tape is `regular` while every entry is an ordinary op reading the current version of its
operands: a custom Function, an operand recorded before the tape began (or on another thread),
an in-place op's snapshot, a hook or retain_grad make it irregular, and the next backward
takes the general path (symgrad.eager.engine). Backward starts a new tape. The tape keeps
digests (plain ints), the entries (structure, no arrays: a step's ops that do not lead to its loss
are captured from them) and weak references to leaves: it never keeps a graph or an array alive.

A tape started after the backward of a captured step carries that `capture`: while the ops
recorded match it, they are deferred (symgrad.eager.tensor._defer) and wait in `pending`, which is
the one place that holds them until a backward runs them, or something forces them.

The memory-sharing rule that keeps a deferred op computing what its line would have computed:
every in-place write through symgrad computes the thread's pending ops first (`force_pending`);
a deferred op keeps a copy of a leaf or constant array that NumPy may write unseen (its version
counter is `exposed`: handed to NumPy by numpy(), __array__ or .data, or taken from it by
from_numpy or as an operand); `t.data = array` on a leaf the tape read makes the tape irregular, and on an op's
result it stops deferring too.
"""
from __future__ import annotations

import threading
import weakref

import numpy as np

MAX_ENTRIES = 4096  # a longer tape (ops recorded without a backward) starts over
CONSTANT = -1  # the source of an operand that is neither a record's output nor a leaf requiring grad


class Tape:
    __slots__ = ("digests", "entries", "leaves", "leaf_slots", "regular", "capture", "pending", "forced", "snapshots",
                 "arrays", "intermediates", "views", "hint", "hinted", "exposed")

    def __init__(self, capture=None, hint=()):
        self.digests = []
        self.entries = []      # the entries appended one by one (a deferred op's comes from the capture at `abandon`)
        self.intermediates = set()  # positions of a plan's intermediate results, which no tensor holds
        self.leaves = []       # weakrefs to the leaves requiring grad, by slot
        self.leaf_slots = {}   # id(leaf) -> slot (but the leading slots taken from `hint`: see `slots`)
        self.hint = hint       # the previous tape's leaves (weakrefs by slot): a repeated step meets them in that order
        self.hinted = 0        # how many leading slots hold the hint's references (-1 once they are in leaf_slots)
        self.regular = True
        self.capture = capture  # the captured step the next ops are expected to repeat, or None
        self.pending = []       # deferred records not computed yet, in tape order (a plan's last only: Record.make)
        self.arrays = []        # the leaf and constant arrays deferred ops read, in the order the capture takes them
        self.forced = False     # whether deferred records were computed op by op (then backward checks versions)
        self.snapshots = {}     # leaf slot -> the copy deferred ops read of a leaf whose array NumPy may write
        self.exposed = []       # (copy, array) per array NumPy may write that deferred ops read a copy of
        self.views = set()      # the positions of records whose output views an operand's memory (Record.mark_view)

    def slots(self) -> dict:
        """id(leaf) -> slot for every leaf of the tape: the slots taken from the hint (symgrad.eager.tensor's
        _leaf_has_slot) are entered now, and the later leaves get theirs by this table."""
        if self.hinted > 0:  # (none taken yet: the hint stays usable, as the table gets a slot only with a leaf)
            for slot in range(self.hinted):
                leaf = self.leaves[slot]()
                if leaf is not None:
                    self.leaf_slots[id(leaf)] = slot
            self.hinted = -1
        return self.leaf_slots

    def force(self) -> None:
        """Compute the pending deferred records op by op, in order (symgrad.eager.tensor._defer)."""
        if self.pending:
            self.forced = True
            self.capture.compute(self)

    def abandon(self) -> None:
        """Stop deferring: an op that does not match the capture comes next; what is pending is computed first,
        and the deferred ops' entries (the capture's) are the tape's, so that a capture of this step sees them all."""
        capture = self.capture
        if capture is not None:
            self.force()
            self.capture = None
            if not self.entries:  # (every op so far was deferred: none appended its entry)
                self.entries = [step[4] for step in capture.steps[:len(self.digests)]]

    def leaf_source(self, leaf) -> int:
        """The source of an operand that is a leaf requiring grad: -3 - its slot, slots in order of first use."""
        slots = self.leaf_slots if self.hinted <= 0 else self.slots()  # (a call per leaf saved)
        slot = slots.get(id(leaf))
        if slot is None or self.leaves[slot]() is not leaf:
            slot = slots[id(leaf)] = len(self.leaves)
            self.leaves.append(weakref.ref(leaf))
        return -3 - slot

    def append(self, record, key) -> None:
        """Add `record` (a new Record) as the tape's next entry, of `key` (see `_ENTRIES`: its kind, then its operands'
        sources, which Record.of_op reads): sets its tape, position and entry."""
        if record.extra is not None:  # (at its creation: an autograd.Function's)
            self.regular = False
        known = _ENTRIES.get(key)
        entry, entry_hash = known if known is not None else _interned(key)
        digests = self.digests
        record.entry = entry
        record.tape, record.position = self, len(digests)
        self.entries.append(entry)
        if entry_hash is None:  # an attribute that is not hashable data: a structure never captured
            self.regular = False
            digests.append(0)
        else:
            digests.append(hash((digests[-1] if digests else 0, entry_hash)))


class Kind:
    """An op's structure but for where its operands come from: (primitive, attributes, operand types, output type),
    each a tape entry's field. A plan's step has one, made once (symgrad.eager.plans), so a recorded op finds its
    entry by its kind and its operands' sources alone (`_ENTRIES`), without hashing types or attributes; `label` is
    the name of the records of a plan's result (PyTorch's name of the user-level op), None for other steps."""

    __slots__ = ("prim", "attrs", "in_types", "out_type", "label")

    def __init__(self, prim, attrs, in_types, out_type, label=None):
        self.prim = prim
        self.attrs = attrs
        self.in_types = in_types
        self.out_type = out_type
        self.label = label


# (kind, then each operand's source) -> (entry, hash(entry) or None): the entries of the ops recorded lately, each made
# and hashed once. A kind is hashed by its identity, so a repeated op finds its entry without hashing its attributes
# (a SymPy expression's hash is a Python call per symbol) or types, and the tape keeps no new tuple per op for
# Python's cyclic collector to walk. A record of no known kind (not a plan's step) gets a kind of its own, and so a
# new entry.
_ENTRIES = {}
_MAX_INTERNED = 4096


def _interned(key) -> tuple:
    """(entry, its hash or None when unhashable) of an op of `key` (as in `_ENTRIES`): (prim, attrs, operand sources,
    operand types, output type), made and kept in `_ENTRIES` (Tape.append looks there first)."""
    kind = key[0]
    entry = (kind.prim, kind.attrs, key[1:], kind.in_types, kind.out_type)
    try:
        entry_hash = hash(entry)
    except TypeError:
        entry_hash = None
    if len(_ENTRIES) >= _MAX_INTERNED:
        _ENTRIES.clear()
    known = _ENTRIES[key] = (entry, entry_hash)
    return known


class _State(threading.local):
    """.tape: this thread's tape (None until its first record: a class default, read without a failed lookup)."""

    tape = None


state = _State()


def current_tape() -> Tape:
    """This thread's tape (a new one when it has none, or when it grew past MAX_ENTRIES)."""
    tape = state.tape
    if tape is None or len(tape.digests) >= MAX_ENTRIES:
        tape = state.tape = Tape()
    return tape


def start_over(capture=None) -> None:
    """Begin a new tape (after a backward or autograd.grad): the next step's ops get positions from 0 again,
    deferred while they repeat `capture`. What the old tape still defers is computed first."""
    old = state.tape
    if old is not None and old.pending:
        old.force()
    state.tape = Tape(capture, () if old is None else old.leaves)


def force_pending() -> None:
    """Compute this thread's deferred ops now: an array they read is about to be written in place."""
    tape = state.tape
    if tape is not None and tape.pending:
        tape.force()


def leaf_slot(source: int) -> "int | None":
    """The leaf slot an entry's operand source names, or None (a constant or an earlier entry)."""
    return -3 - source if source <= -3 else None


def written(exposed) -> bool:
    """Whether NumPy wrote an array since a copy of it was kept (exposed: (copy, array) pairs), by its bits: a NaN
    read back is unwritten and -0.0 written over 0.0 is a write."""
    return not all(same_bits(copy, array) for copy, array in exposed)


def same_bits(copy: np.ndarray, array: np.ndarray) -> bool:
    """Whether `array` still holds the bits of its `copy` (unwritten since): a small array's bytes compared (one
    memcmp, a few times faster than a NumPy comparison's calls), a large one's as unsigned integers (its bytes would
    be copied twice first)."""
    if array.nbytes <= 65536:
        return copy.tobytes() == array.tobytes()
    return np.array_equal(_bits(copy), _bits(array))


def _bits(array: np.ndarray) -> np.ndarray:
    """`array` as unsigned integers of its items' width (itself for a width no integer has, complex128's)."""
    return array.view(f"u{array.itemsize}") if array.itemsize in (1, 2, 4, 8) else array
