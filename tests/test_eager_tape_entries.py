"""The tape's structural entries (symgrad.eager.tape): made and hashed once per kind of op, not per recorded op, so
recording leaves Python's cyclic collector nothing new to walk, and equal structures still hash alike."""

import gc

import numpy as np

import symgrad as sg
from symgrad.core import bind
from symgrad.eager import plans, tape
from symgrad.ops import elementwise as E


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
        tape._interned((tape.Kind(prim, attrs, (((n,), f64), ((n,), f64)), ((n,), f64)), -3, -1))
    assert 0 < len(tape._ENTRIES) <= tape._MAX_INTERNED
    entry, entry_hash = tape._interned((tape.Kind(prim, attrs, (((5,), f64), ((), f64)), ((5,), f64)), -3, -1))
    assert entry == (prim, attrs, (-3, -1), (((5,), f64), ((), f64)), ((5,), f64)) and entry_hash == hash(entry)


def test_an_op_of_a_plan_and_the_same_op_bound_directly_have_equal_entries():
    """A plan's step carries its kind (types from the plan's trace); an op bound without a plan (core.bind) gets a
    kind read from its arrays: the same structure either way, so a capture recognizes the step either way."""
    a, b = _operands()
    tape.start_over()
    planned = (a * b)._node
    step = plans.tensor_plan_for(E.multiply, (a, b)).single  # (the plan of `*`)
    tape.start_over()
    bound = bind(step[0], (a, b), dict(step[3]))._node
    assert planned.entry == bound.entry and planned.entry is not bound.entry
    assert tape.current_tape().digests[0] == hash((0, hash(planned.entry)))
