"""Rerolling: a Python loop unrolled by tracing becomes a `scan` again.

Tracing runs a Python loop, so its steps reach the IR as the same few nodes repeated, each block
reading the one before. Found and rolled back into one `scan` node whose body is one block, the loop
costs what one step does to differentiate, optimize and compile, as `sg.fori_loop` would: compile
time stops growing with the number of steps. The values are computed by the same operations in the
same order, so the results are bitwise those of the unrolled program.

A region is rolled when it holds at least MIN_BLOCKS blocks, each with the same operations and
attributes as the first, reading only values of its own block, of the block before it (the loop's
carries, each entering the first block as one value of its type), or the same values from before the
region (its constants), or a slice of a value from before the region one element wide along an axis
whose start moves by the same step from block to block (`x[t]` of a traced x: the scan's xs), or inputs of
the graph one per block (an eager step's x[t] and numbers: stacked before the loop as more xs). What
is read after the region becomes the scan's results: the last block's carries, and for a value of an
earlier block, every block's copy of it stacked (the scan's ys; `sg.stack` of a value of every step is
those rows as they are). When only the last block's values are read afterwards and some are not
carried, that last step stays unrolled instead (no ys to stack). Other repetitions (a step reading
x[i] with i not moving steadily) stay unrolled.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from .. import ir
from ..core import const_p
from ..ops.control import result_p, scan_p
from ..ops.indexing import slice_p
from ..ops.shape import concatenate_p, reshape_p, transpose_p

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
        # constants match whatever their values: one differing from step to step is a row of the loop's xs;
        # slices whatever their starts: one advancing from step to step reads a row of the loop's xs
        attrs = () if node.prim is const_p else (node.params["steps"], node.params["sizes"]) \
            if node.prim is slice_p else node.attrs
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
    position q of the block before, initially the first block's input), ("const",) or ("row",) (an input of
    the graph of each block's own: `_input_row`)."""
    nodes = graph.nodes
    count = min(count, (len(nodes) - start) // period)  # a run counted from a later kind may not fit
    slots = {}  # also slots[(j, -1)]: ("stride", steps) of the first block's slice j, its start's advance per block
    blocks = 1
    while blocks < count and _same_block(nodes, kinds, position, start, period, blocks, slots):
        blocks += 1
    if not _initial_values_agree(nodes[start:start + period], slots):
        return None
    carried = {kind[1] for kind in slots.values() if kind[0] == "carry"}
    if not carried and any(kind[0] == "row" for kind in slots.values()):
        return None  # blocks reading inputs of their own and carrying nothing: a map (their stack, _input_row_value)
    while blocks >= MIN_BLOCKS and blocks * period >= MIN_NODES:
        end, last = start + blocks * period, start + (blocks - 1) * period
        read_after = [position.get(id(v), -1) for v in [v for node in nodes[end:] for v in node.inputs] + graph.outputs]
        if any(start <= where < last for where in read_after):
            return start, period, blocks, slots  # a value of an earlier step read after the loop: stacked as ys
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
            elif where < -period * k:  # from before the region: a constant, or an input of the graph per block
                kind = ("const",) if value is first else _input_row(value, first, position)
                if kind is None:
                    return False
            else:
                return False
            if slots.setdefault((j, t), kind) != kind:
                return False
        if nodes[start + j].prim is slice_p:
            stride = _slice_stride(nodes[start + j], nodes[base + j], k)
            if stride is None or slots.setdefault((j, -1), ("stride", stride)) != ("stride", stride):
                return False
            if any(stride) and slots.get((j, 0)) != ("const",):
                return False  # only a value from before the loop can be read a row a step
    return True


def _input_row(value, first, position):
    """("row",) when `value` and the first block's `first` are two inputs of the graph of one type: each block reads
    an input of its own (an eager step's constants, x[t] computed before recording), a row of the loop's xs."""
    if id(value) in position or id(first) in position or (value.shape, value.dtype) != (first.shape, first.dtype):
        return None
    return ("row",)


def _slice_stride(first, node, k):
    """How far the starts of a slice advance per block, from its copies in blocks 0 and k: along at most
    one axis, where the slice is one element wide (x[t], x[:, t] with t advancing or going back), else None."""
    deltas = [b - a for a, b in zip(first.params["starts"], node.params["starts"])]
    if any(delta % k for delta in deltas):
        return None
    stride = tuple(delta // k for delta in deltas)
    moving = [axis for axis, step in enumerate(stride) if step]
    if len(moving) > 1 or moving and first.params["sizes"][moving[0]] != 1:
        return None
    return stride


def _sliced_rows(node, stride, blocks) -> list:
    """Nodes gathering every block's copy of the slice `node` (its start advancing by `stride`) as the rows
    of one array, the last node's output."""
    (axis,) = [axis for axis, step in enumerate(stride) if step]
    x, params = node.inputs[0], node.params
    sizes = params["sizes"][:axis] + (blocks,) + params["sizes"][axis + 1:]
    steps = params["steps"][:axis] + (stride[axis],) + params["steps"][axis + 1:]
    rows = ir.Value(sizes, x.dtype)
    nodes = [ir.Node(slice_p, (x,), ir.freeze_attrs({"starts": params["starts"], "steps": steps, "sizes": sizes}),
                     rows, node.meta)]
    if axis:
        perm = (axis,) + tuple(a for a in range(len(sizes)) if a != axis)
        moved = ir.Value(tuple(sizes[a] for a in perm), x.dtype)
        nodes.append(ir.Node(transpose_p, (rows,), ir.freeze_attrs({"perm": perm}), moved, node.meta))
    return nodes


def _rolled(graph, start, period, blocks, slots):
    """The graph with the region replaced by a scan over its first block, and results for what is read after:
    the last block's carries, and every block's copy of another value read after (the scan's ys)."""
    nodes = graph.nodes
    end, last = start + blocks * period, start + (blocks - 1) * period
    block = nodes[start:start + period]
    init = {kind[1]: block[j].inputs[t] for (j, t), kind in slots.items() if kind[0] == "carry"}
    positions = sorted(init)
    rowwise = {j for (j, t), kind in slots.items() if kind[0] == "stride" and any(kind[1])}
    consts = {}
    for (j, t), kind in sorted(slots.items()):
        if kind[0] == "const" and j not in rowwise:
            value = block[j].inputs[t]
            consts.setdefault(id(value), (value, ir.Value(value.shape, value.dtype, value.hint)))
    carry_inputs = {q: ir.Value(block[q].out.shape, block[q].out.dtype) for q in positions}
    stacked = []  # (nodes before the loop, their array of every step's rows, the body input standing for a row)
    input_rows = {}  # the ids of the blocks' inputs read at a ("row",) slot -> the body input standing for a row
    body_nodes = []
    for j, node in enumerate(block):
        if node.prim is const_p:
            rows = [nodes[start + k * period + j].params["value"] for k in range(blocks)]
            if any(row != rows[0] for row in rows):
                array = np.stack([row.array for row in rows])
                table = ir.Node(const_p, (), ir.freeze_attrs({"value": ir.Constant(array)}),
                                ir.Value(array.shape, array.dtype))
                stacked.append(([table], table.out, node.out))
                continue
        if j in rowwise:
            gather = _sliced_rows(node, slots[(j, -1)][1], blocks)
            row = ir.Value(gather[-1].out.shape[1:], node.out.dtype)
            stacked.append((gather, gather[-1].out, row))
            body_nodes.append(ir.Node(reshape_p, (row,), ir.freeze_attrs({"shape": node.out.shape}), node.out,
                                      node.meta))
            continue
        inputs = list(node.inputs)
        for t, value in enumerate(inputs):
            kind = slots.get((j, t))
            if kind is not None and kind[0] == "row":
                inputs[t] = _input_row_value([nodes[start + k * period + j].inputs[t] for k in range(blocks)],
                                             input_rows, stacked)
            elif kind is not None:
                inputs[t] = carry_inputs[kind[1]] if kind[0] == "carry" else consts[id(value)][1]
        body_nodes.append(node if tuple(inputs) == node.inputs else replace(node, inputs=tuple(inputs)))
    copies = {id(nodes[start + k * period + q].out): (k, q) for k in range(blocks) for q in range(period)}
    read = {copies[id(v)] for v in [v for node in nodes[end:] for v in node.inputs] + list(graph.outputs)
            if id(v) in copies}
    ys = sorted({q for k, q in read if k < blocks - 1 or q not in init})
    const_values = [outer for outer, _ in consts.values()]
    body = ir.Graph([local for _, local in consts.values()] + [carry_inputs[q] for q in positions] +
                    [row for _, _, row in stacked], body_nodes, [block[q].out for q in positions + ys], "step")
    inputs = tuple(const_values) + tuple(init[q] for q in positions) + tuple(rows for _, rows, _ in stacked)
    attrs = dict(body=body, length=blocks, reverse=False, num_consts=len(const_values), num_carry=len(positions))
    shape, dtype = scan_p.abstract_eval(inputs, **attrs)  # checks the body against its operands
    scan = ir.Node(scan_p, inputs, ir.freeze_attrs(attrs), ir.Value(shape, dtype), block[0].meta)
    results = [ir.Node(result_p, (scan.out,), ir.freeze_attrs({"index": k}), nodes[last + q].out,
                       nodes[last + q].meta) for k, q in enumerate(positions) if (blocks - 1, q) in read]
    before = [node for gather, _, _ in stacked for node in gather]
    tail, outputs = _read_back(nodes[end:], list(graph.outputs), scan, copies, ys, len(positions), blocks, init)
    return ir.Graph(list(graph.inputs), nodes[:start] + before + [scan] + results + tail, outputs, graph.name)


def _input_row_value(values, input_rows, stacked) -> ir.Value:
    """The body input standing for the row of `values` (the blocks' inputs read at one place), stacked before the
    loop (as sg.stack: a concatenate of their unit-axis reshapes) the first time these inputs are read."""
    key = tuple(id(value) for value in values)
    if key not in input_rows:
        first = values[0]
        units = [ir.Node(reshape_p, (value,), ir.freeze_attrs({"shape": (1,) + value.shape}),
                         ir.Value((1,) + value.shape, value.dtype)) for value in values]
        table = ir.Node(concatenate_p, tuple(unit.out for unit in units), ir.freeze_attrs({"axis": 0}),
                        ir.Value((len(values),) + first.shape, first.dtype))
        input_rows[key] = ir.Value(first.shape, first.dtype)
        stacked.append((units + [table], table.out, input_rows[key]))
    return input_rows[key]


def _read_back(after, outputs, scan, copies, ys, num_carry, blocks, carried):
    """The nodes after a rolled region and the graph's outputs, reading the scan's ys where they read a copy
    (k, q) of a block's value q that is not a result of the scan: `sg.stack` of every block's copy (a
    concatenate of their unit-axis reshapes) is the ys as they are (a stack that goes on past them, with a last step
    left unrolled, is those ys and its other pieces), any other copy a row of them."""
    index = {q: num_carry + i for i, q in enumerate(ys)}
    unit_rows = {id(node.out): copies[id(node.inputs[0])] for node in after
                 if node.prim is reshape_p and id(node.inputs[0]) in copies}
    producers = {id(node.out): node for node in after}
    stacks = {}  # id(concatenate node) -> (q, k, n): its first n pieces are the copies of q from block k on, in order
    for node in after:
        if node.prim is concatenate_p:
            rows, axis = [unit_rows.get(id(value)) for value in node.inputs], node.params["axis"]
            count = 0
            while count < len(rows) and rows[0] is not None and rows[count] == (rows[0][0] + count, rows[0][1]) and \
                    node.inputs[count].shape == _unit_axis(producers[id(node.inputs[count])].inputs[0].shape, axis):
                count += 1
            if rows[0] is not None and rows[0][1] in index and (count == len(rows) or count > 1):
                stacks[id(node)] = rows[0][1], rows[0][0], count
    uses = ir.Graph([], after, outputs).consumers()
    stacked_uses = {}
    for node in after:
        if id(node) in stacks:
            for value in node.inputs[:stacks[id(node)][2]]:
                stacked_uses[id(value)] = stacked_uses.get(id(value), 0) + 1
    tail, rows = [], {}

    def row(value):
        """value, or its copy read back from the ys when the scan does not return it."""
        k, q = copies.get(id(value), (None, None))
        if k is None or k == blocks - 1 and q in carried:
            return value
        if (k, q) not in rows:
            ys = ir.Value((blocks,) + value.shape, value.dtype)
            sliced = ir.Value((1,) + value.shape, value.dtype)
            rows[k, q] = ir.Value(value.shape, value.dtype)
            tail.extend([ir.Node(result_p, (scan.out,), ir.freeze_attrs({"index": index[q]}), ys, {}),
                         ir.Node(slice_p, (ys,), ir.freeze_attrs({"starts": (k,) + (0,) * value.ndim,
                                                                  "steps": (1,) * ys.ndim,
                                                                  "sizes": sliced.shape}), sliced, {}),
                         ir.Node(reshape_p, (sliced,), ir.freeze_attrs({"shape": value.shape}), rows[k, q], {})])
        return rows[k, q]

    for node in after:
        if id(node) in stacks:
            q, first, count = stacks[id(node)]
            if count == len(node.inputs):
                tail.extend(_stacked_ys(scan, index[q], blocks, first, node))
                continue
            axis, shape = node.params["axis"], node.out.shape
            part = ir.Node(concatenate_p, node.inputs[:count], node.attrs,
                           ir.Value(shape[:axis] + (count,) + shape[axis + 1:], node.out.dtype), node.meta)
            tail.extend(_stacked_ys(scan, index[q], blocks, first, part))
            tail.append(ir.Node(concatenate_p, (part.out,) + tuple(row(value) for value in node.inputs[count:]),
                                node.attrs, node.out, node.meta))
        elif id(node.out) in stacked_uses and uses.get(id(node.out), 0) == stacked_uses.get(id(node.out), 0):
            continue  # read by stacks only, which read the ys instead
        else:
            inputs = tuple(row(value) for value in node.inputs)
            tail.append(node if inputs == node.inputs else replace(node, inputs=inputs))
    return tail, [row(value) for value in outputs]


def _unit_axis(shape, axis) -> tuple:
    """shape with a unit axis inserted at `axis` (what sg.stack reshapes each piece to)."""
    return shape[:axis] + (1,) + shape[axis:]


def _stacked_ys(scan, index, blocks, first, stack) -> list:
    """Nodes computing `stack` (a concatenate of the steps' copies of a value from step `first` on, each with a
    unit axis) from the scan's ys `index`: the rows it holds, their step axis moved to where the stack has it."""
    axis, shape, dtype = stack.params["axis"], stack.out.shape, stack.out.dtype
    count = shape[axis]
    rows = (count,) + shape[:axis] + shape[axis + 1:]
    ys = ir.Value((blocks,) + rows[1:], dtype) if count != blocks else ir.Value(rows, dtype) if axis else stack.out
    nodes = [ir.Node(result_p, (scan.out,), ir.freeze_attrs({"index": index}), ys, stack.meta)]
    if count != blocks:
        taken = ir.Value(rows, dtype) if axis else stack.out
        nodes.append(ir.Node(slice_p, (ys,), ir.freeze_attrs({"starts": (first,) + (0,) * (len(rows) - 1),
                                                              "steps": (1,) * len(rows), "sizes": rows}),
                             taken, stack.meta))
    if axis:
        perm = tuple(range(1, axis + 1)) + (0,) + tuple(range(axis + 1, len(shape)))
        nodes.append(ir.Node(transpose_p, (nodes[-1].out,), ir.freeze_attrs({"perm": perm}), stack.out,
                             stack.meta))
    return nodes
