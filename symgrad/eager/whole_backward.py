"""Backward of a repeated training step as one compiled adjoint, found by the tape's running hash.

When `loss.backward()` is called on a regular tape (symgrad.eager.tape) whose entries up to the
loss have been seen before, the adjoint of the loss's ancestors is already traced and lowered: the
step is recognized by one lookup of the tape's digest; one pass from the loss through the parents
checks each ancestor against its entry and reads its saved values (each at the version it was
recorded at); one call of the lowered adjoint; the gradients go to the leaves. No key built from
the graph, no per-backward analysis. The first time a structure is seen, the general path runs
(op by op with NumPy); from the second time on, this one, lowered at once.

Anything this path does not handle (hooks on a leaf, a value freed or modified in place since)
returns False before any effect, and the general path runs and raises its own, precise error.
"""
from __future__ import annotations

import collections

import numpy as np

from .. import ir
from .adjoint import Adjoint
from .tape import current_tape, leaf_slot

_CACHE_SIZE = 512
_cache: "collections.OrderedDict" = collections.OrderedDict()  # (digest, root) -> WholeBackward or None (seen once)


class _Stage:
    """The root's ancestors on the tape as the forward graph Adjoint differentiates: every constant
    operand and every leaf is an input; the root's output is seeded; the leaves' cotangents are wanted."""

    def __init__(self, entries: dict):
        inputs, nodes, leaf_inputs, node_of = [], [], {}, {}
        self.places = []  # per input: (position, operand slot) of a record that saved its array
        self.positions = sorted(entries)  # per node: its position on the tape
        for position in self.positions:
            prim, attrs, sources, in_types, out_type = entries[position]
            values = []
            for operand, (source, value_type) in enumerate(zip(sources, in_types)):
                if source >= 0:
                    values.append(nodes[node_of[source]].out)
                    continue
                slot = leaf_slot(source)
                if slot is None or slot not in leaf_inputs:
                    if slot is not None:
                        leaf_inputs[slot] = len(inputs)
                    inputs.append(ir.Value(*value_type))
                    self.places.append((position, operand))
                values.append(inputs[leaf_inputs[slot]] if slot is not None else inputs[-1])
            node_of[position] = len(nodes)
            nodes.append(ir.Node(prim, tuple(values), attrs, ir.Value(*out_type)))
        self.forward = ir.Graph(inputs, nodes, [n.out for n in nodes], "eager_step")
        self.seeded = (len(nodes) - 1,)
        self.leaf_slots = sorted(leaf_inputs)
        self.wanted = tuple(leaf_inputs[s] for s in self.leaf_slots)

    def graph(self):
        return self.forward


class WholeBackward:
    """The lowered adjoint of the ancestors of one root on the tape, and where its operands are read."""

    def __init__(self, root_record):
        self.entries = _ancestors(root_record)  # position -> entry
        self.order = sorted(self.entries, reverse=True)  # the root first; parents after their children
        stage = _Stage(self.entries)
        self.adjoint = Adjoint(stage)
        count = len(stage.forward.inputs)
        # per operand of the adjoint: (position, operand slot) of a saved input, or (position, None) of an output
        self.reads = [stage.places[i] if i < count else (stage.positions[i - count], None)
                      for i in self.adjoint.value_positions]
        self.leaf_slots = stage.leaf_slots
        self.released = _leading_to_a_leaf(self.entries)
        self.executable = self.adjoint.lowered()

    def run(self, engine, root_record, seed, retain_graph) -> bool:
        """Accumulate the gradients of the root (seeded with `seed`) into the leaves; False, with no effect,
        when the recorded ancestors differ from this structure or this path cannot run (the general path
        then runs). The ancestors are found from the root through their parents, each checked against
        its entry, in one pass."""
        entries = self.entries
        records, leaves = {self.order[0]: root_record}, {}
        for position in self.order:
            record = records.get(position)
            if record is None or record.entry != entries[position]:
                return False
            for operand, source in enumerate(record.entry[2]):
                if source >= 0:
                    records[source] = record.parents[operand]
                elif source != -1:
                    leaves[leaf_slot(source)] = record.parents[operand]
        operands = []
        for position, operand in self.reads:
            record = records[position]
            if operand is None:
                array, (counter, version) = record.out, record.out_version
            else:
                array, (counter, version) = record.saved[operand], record.versions[operand]
            if array is None or counter.value != version:
                return False  # freed or modified in place: the general path raises the error
            operands.append(array)
        leaves = [leaves[slot] for slot in self.leaf_slots]
        if any(leaf._hooks for leaf in leaves):
            return False
        results = iter(self.executable(*operands, *([seed] if self.adjoint.seed_positions else [])))
        for leaf, present, zero in zip(leaves, self.adjoint.returned, self.adjoint.zero):
            if present:
                engine.accumulate(leaf, next(results))
            elif zero:
                engine.accumulate(leaf, np.zeros(leaf.shape, leaf.dtype))
        if not retain_graph:
            for position in self.released:
                records[position].release()
        return True


def _ancestors(root_record) -> dict:
    """position -> entry of the root's record and every record it was computed from on its tape."""
    entries, stack = {}, [root_record]
    while stack:
        record = stack.pop()
        if record.position not in entries:
            entries[record.position] = record.entry
            stack.extend(p for p, s in zip(record.parents, record.entry[2]) if s >= 0)
    return entries


def _leading_to_a_leaf(entries: dict) -> list:
    """Positions of the entries that lead to a leaf: the records the general path processes (and
    frees, without retain_graph)."""
    useful = {}
    for position in sorted(entries):
        useful[position] = any(leaf_slot(s) is not None or (s >= 0 and useful[s]) for s in entries[position][2])
    return [p for p, flag in useful.items() if flag]


def try_backward(engine, root, seed, retain_graph) -> bool:
    """Run backward of `root` through the cached whole-prefix adjoint if its tape is regular and its
    structure was seen before; False when the general path must run (and then the tape starts over)."""
    record = root._node
    tape = current_tape()
    if record is None or record.tape is not tape or not tape.regular:
        return False
    position = record.position
    key = (tape.digests[position], position)
    plan = _cache.get(key, _MISSING)
    if plan is _MISSING:
        _remember(key, None)  # seen once: the general path runs it op by op this time
        return False
    if plan is None:
        try:
            plan = _remember(key, WholeBackward(record))
        except Exception:  # noqa: BLE001  (the general path runs it, and raises its own error if there is one)
            plan = _remember(key, _UNSUPPORTED)
    _cache.move_to_end(key)
    return plan is not _UNSUPPORTED and plan.run(engine, record, seed, retain_graph)


def _remember(key, plan):
    _cache[key] = plan
    if len(_cache) > _CACHE_SIZE:
        _cache.popitem(last=False)
    return plan


_MISSING = object()
_UNSUPPORTED = object()  # a structure whose whole-prefix adjoint could not be traced
