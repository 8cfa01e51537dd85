"""The tape's structural entries (symgrad.eager.tape): made and hashed once per kind of op, not per recorded op, so
recording leaves Python's cyclic collector nothing new to walk, and equal structures still hash alike."""

import gc

import numpy as np

import symgrad as sg
from symgrad.eager import plans, tape


def _operands():
    rng = np.random.default_rng(0)
    return sg.tensor(rng.standard_normal((4, 3)), requires_grad=True), sg.from_numpy(rng.standard_normal((4, 3)))


def test_a_repeated_op_shares_its_entry_and_leaves_no_tracked_object():
    a, b = _operands()
    tape.start_over()
    assert (a * b)._node.entry is (a * b)._node.entry
    enabled = gc.isenabled()
    gc.disable()  # (a collection would untrack the tuples of plain data this counts)
    try:
        tape.start_over()
        for _ in range(10):
            a * b
        before = len(gc.get_objects())
        for _ in range(500):
            a * b
        grown = len(gc.get_objects()) - before
    finally:
        if enabled:
            gc.enable()
    assert grown < 50  # (before: eight tuples per recorded op, 4000)


def test_equal_structures_hash_alike_whatever_objects_hold_their_attributes():
    a, b = _operands()
    digests = []
    for _ in range(2):
        tape.start_over()
        loss = sg.sum(sg.tanh(a * b), axis=0)
        digests.append(tape.current_tape().digests[:])
        entries = tape.current_tape().entries[:]
        plans._plans.clear()  # the next plans are new objects, with attributes equal to these, not the same
    assert digests[0] == digests[1] and len(digests[0]) == 3
    assert entries[0][1] is not None and loss.shape == (3,)
    tape.start_over()
    a + b  # another op: another digest
    assert tape.current_tape().digests[0] != digests[0][0]


def test_the_table_of_entries_stays_bounded():
    a, b = _operands()
    prim, attrs = (a * b)._node.prim, (a * b)._node.attrs
    f64 = np.dtype(np.float64)
    for n in range(tape._MAX_INTERNED + 10):  # as many kinds of op as output shapes
        tape._interned((prim, id(attrs), -3, (n,), f64, -1, (n,), f64, (n,), f64), attrs)
    assert 0 < len(tape._ENTRIES) <= tape._MAX_INTERNED
    entry, entry_hash = tape._interned((prim, id(attrs), -3, (5,), f64, -1, (), f64, (5,), f64), attrs)
    assert entry == (prim, attrs, (-3, -1), (((5,), f64), ((), f64)), ((5,), f64)) and entry_hash == hash(entry)
