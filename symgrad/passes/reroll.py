"""Rerolling: a Python loop unrolled by tracing becomes a `scan` again.

Tracing runs a Python loop, so its steps reach the IR as the same few nodes repeated, each block
reading the one before. Found and rolled back into one `scan` node whose body is one block, the loop
costs what one step does to differentiate, optimize and compile, as `sg.fori_loop` would: compile
time stops growing with the number of steps. The values are computed by the same operations in the
same order, so the results are bitwise those of the unrolled program.

A region is rolled when it holds at least MIN_BLOCKS blocks, each with the same operations and
attributes as the first, reading only values of its own block, of the block before it (the loop's
carries, each entering the first block as one value of its type), or the same values from before the
region (its constants); only the last block's carries may be read after it (a last step whose other
values are read afterwards stays unrolled). Other repetitions (a step reading x[i] with i changing)
stay unrolled.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from .. import ir
from ..core import const_p
from ..ops.control import result_p, scan_p

MIN_BLOCKS = 16  # shorter loops stay unrolled: their code is small, and straight-line code is fastest
MIN_NODES = 64   # nor is a region of fewer nodes than this worth a loop
SKIPPED_BLOCKS = 2  # how many leading blocks of a run may stay unrolled for the rest to roll


def reroll(graph: ir.Graph) -> ir.Graph:
    """`graph` with each repeated region rolled into a scan: inner loops first, then (their scans now
    repeating) the loops around them."""
    while True:
        rolled = _roll_innermost(graph)
        if rolled is graph:
            return graph
        graph = rolled


def _roll_innermost(graph: ir.Graph) -> ir.Graph:
    """`graph` with the regions that repeat with the shortest periods rolled, as many as do not overlap."""
    nodes = graph.nodes
    if len(nodes) < MIN_NODES:
        return graph
    kinds, signatures = [], {}
    for node in nodes:
        # constants match whatever their values: one differing from step to step is a row of the loop's xs
        attrs = () if node.prim is const_p else node.attrs
        key = (node.prim.name, attrs, node.out.shape, node.out.dtype.str, len(node.inputs))
        kinds.append(signatures.setdefault(key, len(signatures)))
    position = {id(node.out): i for i, node in enumerate(nodes)}
    taken = []  # the regions found, as (start, period, blocks, slots)
    for period, start, count in _candidates(kinds):
        if any(lo <= start < lo + p * n or start <= lo < start + period * count for lo, p, n, _ in taken):
            continue
        for skip in range(SKIPPED_BLOCKS + 1):  # the first steps may differ (one creates a constant the rest read)
            region = _region(graph, kinds, position, start + skip * period, period, count - skip)
            if region is not None:
                region = _best_rotation(graph, kinds, position, region)
                if not any(lo < region[0] + period * region[2] and region[0] < lo + p * n for lo, p, n, _ in taken):
                    taken.append(region)
                break
    for region in sorted(taken, key=lambda region: -region[0]):  # from the last: earlier positions stay valid
        graph = _rolled(graph, *region)
    return graph


def _candidates(kinds) -> list:
    """(period, start, occurrences) of the runs in which one kind of node recurs at a fixed distance:
    shortest periods first (inner loops), then the longest runs, then the earliest (so that a block
    starts where a step does)."""
    runs, current, seen = [], {}, {}  # current: kind -> [gap, first occurrence, occurrences] of its run
    for i, kind in enumerate(kinds):
        previous = seen.get(kind)
        seen[kind] = i
        if previous is None:
            continue
        run = current.get(kind)
        if run is not None and run[0] == i - previous:
            run[2] += 1
        else:
            if run is not None:
                runs.append(tuple(run))
            current[kind] = [i - previous, previous, 2]
    runs.extend(tuple(run) for run in current.values())
    return sorted({run for run in runs if run[2] >= MIN_BLOCKS}, key=lambda run: (run[0], -run[2], run[1]))


def _region(graph, kinds, position, start, period, count):
    """(start, period, blocks, slots) for the blocks from `start` that repeat the first, or None.
    slots[(j, t)] says what input t of the first block's node j is: ("carry", q) (the value at
    position q of the block before, initially the first block's input) or ("const",)."""
    nodes = graph.nodes
    count = min(count, (len(nodes) - start) // period)  # a run counted from a later kind may not fit
    slots = {}
    blocks = 1
    while blocks < count and _same_block(nodes, kinds, position, start, period, blocks, slots):
        blocks += 1
    if not _initial_values_agree(nodes[start:start + period], slots):
        return None
    carried = {kind[1] for kind in slots.values() if kind[0] == "carry"}
    while blocks >= MIN_BLOCKS and blocks * period >= MIN_NODES:
        end, last = start + blocks * period, start + (blocks - 1) * period
        read_after = [position.get(id(v), -1) for v in [v for node in nodes[end:] for v in node.inputs] + graph.outputs]
        if any(start <= where < last for where in read_after):
            return None  # a value of an earlier step read after the loop: it would need stacking
        if all(where - last in carried for where in read_after if last <= where < end):
            return start, period, blocks, slots
        blocks -= 1  # the last step stays unrolled, computing what is read after the loop but not carried
    return None


def _initial_values_agree(block, slots) -> bool:
    """Whether every input of the first block that stands for carry q is one value, of q's type: two
    variables equal from the second step on (a = b = c) may start from different values."""
    initial = {}
    for (j, t), kind in slots.items():
        if kind[0] == "carry":
            value, carried = block[j].inputs[t], block[kind[1]].out
            if initial.setdefault(kind[1], value) is not value or ir.is_tuple_dtype(carried.dtype) or \
                    (value.shape, value.dtype) != (carried.shape, carried.dtype):
                return False  # (a loop's tuple-typed result is never a carry: the block must hold its reads)
    return True


def _best_rotation(graph, kinds, position, region):
    """The region, its blocks starting at the node where the fewest values cross from one block to the
    next (a block found at any node of a step would carry the step's intermediate values too, and a
    scan keeps every carry of every step for reverse mode)."""
    start, period, blocks, _ = region
    last_use = {}  # position in the first block -> last position (in the first two blocks) reading it
    for b in range(min(2 * period, (blocks - 1) * period)):
        for value in graph.nodes[start + b].inputs:
            a = position.get(id(value), -1) - start
            if 0 <= a < period:
                last_use[a] = max(last_use.get(a, a), b)
    crossing = [0] * (2 * period + 1)  # a value live across offset r (defined before r, read at or after r)
    for a, b in last_use.items():
        crossing[a + 1] += 1
        crossing[b + 1] -= 1
    live, counts = 0, [0] * (2 * period)
    for r in range(2 * period):
        live += crossing[r]
        counts[r] = live
    carries = [counts[r] + counts[r + period] if r else counts[period] for r in range(period)]
    best = min(range(period), key=lambda r: (carries[r], r))
    if best == 0 or blocks - 1 < MIN_BLOCKS:
        return region
    return _region(graph, kinds, position, start + best, period, blocks - 1) or region


def _same_block(nodes, kinds, position, start, period, k, slots) -> bool:
    """Whether block k (k >= 1) repeats block 0: the same kinds, each input from the same place. Block 1
    records in `slots` which inputs are carries and which constants; later blocks must agree."""
    base = start + k * period
    for j in range(period):
        if kinds[base + j] != kinds[start + j]:
            return False
        for t, (first, value) in enumerate(zip(nodes[start + j].inputs, nodes[base + j].inputs)):
            where = position.get(id(value), -1) - base
            at_first = position.get(id(first), -1) - start
            if 0 <= where < period:  # inside the block
                if at_first != where:
                    return False
                continue
            if 0 <= at_first < period:
                return False
            if -period <= where < 0:  # the block before: a carry, entering the first block as `first`
                kind = ("carry", where + period)
            elif where < -period * k:  # from before the region: a constant
                if value is not first:
                    return False
                kind = ("const",)
            else:
                return False
            if slots.setdefault((j, t), kind) != kind:
                return False
    return True


def _rolled(graph, start, period, blocks, slots):
    """The graph with the region replaced by a scan over its first block, and results for what is read after
    (carries only: _region leaves a last step whose other values are read unrolled)."""
    nodes = graph.nodes
    end, last = start + blocks * period, start + (blocks - 1) * period
    block = nodes[start:start + period]
    init = {kind[1]: block[j].inputs[t] for (j, t), kind in slots.items() if kind[0] == "carry"}
    positions = sorted(init)
    consts = {}
    for (j, t), kind in sorted(slots.items()):
        if kind[0] == "const":
            value = block[j].inputs[t]
            consts.setdefault(id(value), (value, ir.Value(value.shape, value.dtype, value.hint)))
    carry_inputs = {q: ir.Value(block[q].out.shape, block[q].out.dtype) for q in positions}
    stacked = []  # (constant of every step's rows, the body input standing for a row): a step's own constant
    body_nodes = []
    for j, node in enumerate(block):
        if node.prim is const_p:
            rows = [nodes[start + k * period + j].params["value"] for k in range(blocks)]
            if any(row != rows[0] for row in rows):
                array = np.stack([row.array for row in rows])
                stacked.append((ir.Node(const_p, (), ir.freeze_attrs({"value": ir.Constant(array)}),
                                        ir.Value(array.shape, array.dtype)), node.out))
                continue
        inputs = list(node.inputs)
        for t, value in enumerate(inputs):
            kind = slots.get((j, t))
            if kind is not None:
                inputs[t] = carry_inputs[kind[1]] if kind[0] == "carry" else consts[id(value)][1]
        body_nodes.append(node if tuple(inputs) == node.inputs else replace(node, inputs=tuple(inputs)))
    const_values = [outer for outer, _ in consts.values()]
    body = ir.Graph([local for _, local in consts.values()] + [carry_inputs[q] for q in positions] +
                    [row for _, row in stacked], body_nodes, [block[q].out for q in positions], "step")
    inputs = tuple(const_values) + tuple(init[q] for q in positions) + tuple(node.out for node, _ in stacked)
    attrs = dict(body=body, length=blocks, reverse=False, num_consts=len(const_values), num_carry=len(positions))
    shape, dtype = scan_p.abstract_eval(inputs, **attrs)  # checks the body against its operands
    scan = ir.Node(scan_p, inputs, ir.freeze_attrs(attrs), ir.Value(shape, dtype), dict(block[0].meta))
    last_block = {id(node.out): j for j, node in enumerate(nodes[last:end])}
    read_after = {last_block[id(v)] for v in [v for node in nodes[end:] for v in node.inputs] + list(graph.outputs)
                  if id(v) in last_block}
    results = [ir.Node(result_p, (scan.out,), ir.freeze_attrs({"index": k}), nodes[last + q].out,
                       dict(nodes[last + q].meta)) for k, q in enumerate(positions) if q in read_after]
    return ir.Graph(list(graph.inputs), nodes[:start] + [node for node, _ in stacked] + [scan] + results + nodes[end:],
                    list(graph.outputs), graph.name)
