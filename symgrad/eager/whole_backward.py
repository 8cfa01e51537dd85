"""A repeated training step captured once: forward and backward as one lowered function.

When `loss.backward()` is called on a regular tape (symgrad.eager.tape) whose entries up to the
loss have been seen before, the step is recognized by one lookup of the tape's digest, and its
`Capture` is built once: the loss's ancestors as a forward graph whose inputs are the leaves and
the constant operands, differentiated by the compiler's reverse pass, and lowered, with the
forward values among its outputs. A backward is then one call of that function:
- on a tape that deferred the step (symgrad.eager.tensor._defer: every op matched the capture and
  nothing forced it), the call computes the forward values, which the deferred tensors take, and
  the gradients, with no check to make (an in-place write forces what is pending first);
- on a tape whose values were computed (the first steps, or a step forced midway), one pass from
  the loss through the parents checks each ancestor against its entry and that nothing it read
  was modified since, then the same call recomputes the forward from the leaves and constants.
The capture also computes a deferred prefix op by op, with each primitive's NumPy implementation
(`compute`), when something needs a value before backward.

Anything this path does not handle (hooks on a leaf, a value freed or modified in place since)
returns False before any effect but computing what was deferred, and the general path runs and
raises its own, precise error.
"""
from __future__ import annotations

import collections
import time

import numpy as np

from .. import code_cache, ir
from ..autodiff import backward_pass
from ..caches import Recent
from ..core import Builder, building
from ..ops.control import result_p
from ..ops.ew import ElementwisePrimitive
from ..ops.indexing import slice_p
from ..ops.linalg import matmul_p
from ..ops.shape import concatenate_p, reshape_p
from ..passes.reroll import reroll
from ..passes.dce import dce
from ..passes.decompose import decompose
from ..passes.gather_products import gather_products
from ..tracing import inline
from . import plans
from .adjoint import lowered_graph, reached_values
from .graph import Record
from .tape import current_tape, leaf_slot, written

_cache = Recent(512)  # (digest, root) -> Capture or None (seen once)
# The captures whose steps a tape may defer (Capture.steps), by their last step, newest last: a step whose
# structure alternates (sequence lengths cycled) defers against whichever of them its ops repeat (`alternatives`)
_steady = Recent(8)  # id(capture) -> capture


class _Stage:
    """The root's ancestors on the tape as the forward graph Adjoint differentiates: every constant
    operand and every leaf is an input; the root's output is seeded; the leaves' cotangents are wanted."""

    def __init__(self, entries: dict):
        inputs, nodes, leaf_inputs, node_of = [], [], {}, {}
        self.places = []  # per input: (position, operand slot) of a record that saved its array
        self.uses = []  # per input: every (position, operand slot) that reads it
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
                    inputs.append(ir.typed_value(*value_type))
                    self.places.append((position, operand))
                    self.uses.append([])
                self.uses[leaf_inputs[slot] if slot is not None else -1].append((position, operand))
                values.append(inputs[leaf_inputs[slot]] if slot is not None else inputs[-1])
            node_of[position] = len(nodes)
            nodes.append(ir.Node(prim, tuple(values), attrs, ir.typed_value(*out_type)))
        self.forward = ir.Graph(inputs, nodes, [n.out for n in nodes], "eager_step")
        self.seeded = (len(nodes) - 1,)
        self.leaf_slots = sorted(leaf_inputs)
        self.wanted = tuple(leaf_inputs[s] for s in self.leaf_slots)

    def graph(self):
        return self.forward


class Capture:
    """The lowered forward + adjoint of the ancestors of one root on the tape, and how to feed it."""

    def __init__(self, root_record, prefix=None, every_value=False):
        """The capture of the root's ancestors; with `prefix` (the tape's entries up to the root), of them all:
        a step whose other ops (an RNN's final state, a metric) do not lead to the root still defers whole.
        The function returns the forward values a tensor may hold, not a plan's intermediate results (a
        deferred step needs those only to make its records' saved values, under retain_graph: `_full`), or,
        with `every_value` (a capture by a backward with retain_graph, whose next ones will want them), all."""
        self.entries = dict(enumerate(prefix)) if prefix is not None else _ancestors(root_record)  # position -> entry
        intermediates = () if every_value else root_record.tape.intermediates  # (after _ancestors made records)
        ancestors = _reached(self.entries, root_record.position)
        # whether every entry leads to the root; if not, a step computed op by op is checked from the root (the
        # records of the others may be gone) and the inputs only they read are given zeros (see `_operands`)
        self.complete = len(ancestors) == len(self.entries)
        self.views = frozenset(p for p in root_record.tape.views if p in self.entries)  # the positions of views
        self.checked_order = sorted(ancestors)[::-1]
        positions = sorted(self.entries)
        self.order = positions[::-1]  # the root first; parents after their children
        stage = _Stage(self.entries)
        self.places = stage.places  # per input: (position, operand) of the record that saved its array
        self.leaf_slots = stage.leaf_slots
        self.shared_leaves = _uses_of_shared_leaves(ancestors)
        self.input_uses = stage.uses
        self.input_types = [(value.shape, value.dtype) for value in stage.forward.inputs]
        # the records the general path would free, with the saved values each then holds (none)
        self.released = [(position, (None,) * len(self.entries[position][2]))
                         for position in _leading_to_a_leaf(ancestors)]
        kept = [index for index, position in enumerate(stage.positions) if position not in intermediates]
        self.value_slots = {stage.positions[index]: slot for slot, index in enumerate(kept)}
        self.full = None  # the function returning every forward value, made when first needed
        graph, self.returned, self.zero, self.rows, self.packing, self.twins = _fused(stage, kept)
        self.gradients = sum(self.returned)
        self.executable = lowered_graph(graph, quick=True)  # (upgraded once it has run long: `run`)
        self.timed = True  # whether `run` times its calls (while the code is quick)
        # the LLVM executable's native entry, called directly on arrays it takes as they are (it returns
        # NotImplemented for others, e.g. a broadcast number): no per-call conversions or flattening
        self.entry = getattr(self.executable, "entry", None) if not getattr(
            self.executable, "python_floats", ()) else None
        self.evaluators = None  # per position: its NumPy implementation, made when first needed
        self.plan_matches = {}  # (position, plan) -> how a plan applied there repeats the steps (tensor._plan_match)
        # position -> (op, call key, whether one primitive, which arguments are operands, its step or its plan's match,
        # its label) (tensor._shortcut)
        self.shortcuts = {}
        self.fresh = None  # whether the native entry's results are arrays of their own (`_fresh`)
        # per function (False: `executable`, True: `full`), the slots of the forward values that share memory with
        # another value or an operand
        self.aliased = {}
        # The expected ops of a deferred step, by position: (prim, attrs, in_types, out_type, entry, sources,
        # digest, the operands that are inputs of the function (places), whether its value was a view of an
        # operand's); only when the root's ancestors are the whole tape before it (else no step defers).
        tape, root = root_record.tape, root_record.position
        self.steps = None
        if positions == list(range(root + 1)):
            places = collections.defaultdict(list)
            for position, operand in self.places:
                places[position].append(operand)
            self.steps = [(e[0], e[1], e[3], e[4], e, e[2], tape.digests[p], tuple(places[p]), p in self.views)
                          for p, e in sorted(self.entries.items())]
        self.released_positions = frozenset(position for position, _ in self.released)
        self.handouts = {}  # a deferred step's records' positions -> how its call's results reach them (`_handout`)
        self.last_results = None  # the results of the last call of the native entry (`_run_deferred`)

    def deferred(self, tape, root_record) -> bool:
        """Whether every op of the tape up to the root was deferred against this capture, nothing computed yet."""
        pending = tape.pending
        return tape.capture is self and not tape.forced and pending and pending[-1] is root_record \
            and root_record.position == len(self.order) - 1 and len(tape.arrays) == len(self.places)

    def run(self, engine, root_record, tape, seed, retain_graph, deferred=None) -> bool:
        """Accumulate the gradients of the root (seeded with `seed`) into the leaves; False when this
        path cannot run (then the general path runs, with whatever was deferred computed). `deferred`:
        `self.deferred(tape, root_record)` when the caller knows it."""
        if not self.timed:
            return self._run(engine, root_record, tape, seed, retain_graph, deferred)
        start = time.thread_time()
        ran = self._run(engine, root_record, tape, seed, retain_graph, deferred)
        self.timed = code_cache.ran(self.executable, time.thread_time() - start)
        return ran

    def _run(self, engine, root_record, tape, seed, retain_graph, deferred) -> bool:
        """`run`'s work (untimed)."""
        pending = tape.pending
        if deferred is None:
            deferred = self.deferred(tape, root_record)
        if deferred and not retain_graph and self.entry is not None:
            ran = self._run_deferred(engine, tape, pending, seed)
            if ran is not None:
                return ran
        if tape.exposed and written(tape.exposed):  # PyTorch's backward reads what NumPy wrote after the forward
            tape.force()
            return False
        if deferred:  # every op of the step deferred, nothing computed yet
            leaves = [tape.leaves[slot]() for slot in self.leaf_slots]
            operands = list(tape.arrays)
        else:
            tape.force()
            records, leaves = self._checked(root_record)
            if records is None:
                return False
            operands = self._operands(records)
        for leaf in leaves:
            if leaf is not None and leaf._hooks:
                return False
        operands.append(seed)
        for index in self.twins:  # (nothing written since the forward: the arrays it read)
            operands.append(operands[index])
        results = None
        if deferred:  # the deferred values, computed by this call: where each is among its results
            if retain_graph:  # every record, with what the general path reads, for a later backward through them
                pending = _made(pending)
            # the records a tensor holds take values (a plan's intermediate results only under retain_graph)
            shown = pending if retain_graph else [record for record in pending
                                                  if record.position not in tape.intermediates]
            slots = [self.value_slots.get(record.position) for record in shown]
            if None in slots:  # a value the function does not return: a plan's intermediate result at the capture
                shown, slots = pending, [record.position for record in pending]
                results, owned = self._full()(*operands[:len(operands) - len(self.twins)]), False
        if results is None:
            operands = _packed(operands, self.packing)
            try:
                results = NotImplemented if self.entry is None else self.entry(*operands)
            except Exception:  # noqa: BLE001  (an op that does not lead to the root, given zeros, failed: no effect)
                if self.complete:
                    raise
                return False
            owned = results is not NotImplemented and self._fresh(results, operands)
            if results is NotImplemented:
                results = self.executable(*operands)
            results = _expanded(results, self.gradients, self.rows)
        first = self.gradients
        if deferred:
            tape.pending = []
            aliased = self._aliased(results, first, operands)
            for record, slot in zip(shown, slots):  # a value of its own (a view's is made one of its operand's
                value = results[first + slot]  # when read: view_value)
                record.value = value.copy() if slot in aliased else value
            if retain_graph:
                for record in pending:
                    record.array = record.value
                    record.saved = tuple(p.value if a is None else a for p, a in zip(record.parents, record.saved))
        gradients = iter(results)
        for leaf, present, zero in zip(leaves, self.returned, self.zero):
            if present:
                engine.accumulate(leaf, next(gradients), owned=owned)
            elif zero:
                engine.accumulate(leaf, np.zeros(leaf.shape, leaf.dtype))
        if not retain_graph:  # Record.release, for records that hold no Function context (a plan's unmade
            # records are made released: Record.make)
            if deferred:
                released = self.released_positions
                for record in pending:
                    if record.position in released:
                        record.saved, record.array, record.released = (None,) * len(record.saved), None, True
            else:
                for position, nothing in self.released:
                    record = records[position]
                    record.saved, record.array, record.released = nothing, None, True
        return True

    def _run_deferred(self, engine, tape, pending, seed) -> "bool | None":
        """`run` of a step every op of which was deferred, without retain_graph, on the native entry: its call, then
        its values handed to the records tensors hold, the gradients to the leaves and the records freed, as `run`
        does, by a plan made once per way the step's ops were deferred (`_handout`). None, with nothing done, where
        `run` must judge (a value the call does not return, results it does not take as they are)."""
        key = []
        for record in pending:  # (a loop: a list comprehension is a call of its own on Python 3.11)
            key.append(record.position)
        key = tuple(key)
        handout = self.handouts.get(key)
        if handout is False:
            return None
        leaves = []
        for slot in self.leaf_slots:
            leaf = tape.leaves[slot]()
            if leaf is not None and leaf._hooks:
                return False
            leaves.append(leaf)
        arrays = tape.arrays
        operands = _packed(arrays + [seed], self.packing)
        exposed = tape.exposed
        if exposed:  # arrays NumPy may have written since the forward read a copy of them (_deferred_operand)
            operands = self._live_operands(operands, arrays, exposed)
            if operands is None:
                return None
        elif self.twins:
            for index in self.twins:
                operands.append(arrays[index])
        try:
            results = self.entry(*operands)
        except Exception:  # noqa: BLE001  (an op that does not lead to the root, given zeros, failed: no effect)
            if self.complete:
                raise
            return False
        if results is NotImplemented:
            self.handouts[key] = False
            return None
        # the results stay referenced until the next call has made its own: a rolled step's stacked values are
        # large arrays, and freeing them before the next call allocates returns their memory to the system, to be
        # faulted in again (T = 100: 1.75 -> 1.06 ms a call)
        self.last_results = results
        owned = self.fresh if self.fresh is not None else self._fresh(results, operands)
        if self.rows is not None:
            results = _expanded(results, self.gradients, self.rows)
        if handout is None:
            handout = self.handouts[key] = self._handout(tape, pending, results, operands)
            if handout is False:  # (a value the function does not return: `run` calls the function that does)
                return None
        first = self.gradients
        tape.pending = []
        for index, slot, copied in handout[0]:
            value = results[first + slot]
            pending[index].value = value.copy() if copied else value
        gradients = iter(results)
        for leaf, present, zero in zip(leaves, self.returned, self.zero):
            if present:
                engine.accumulate(leaf, next(gradients), False, owned)
            elif zero:
                engine.accumulate(leaf, np.zeros(leaf.shape, leaf.dtype))
        for index, nothing in handout[1]:
            record = pending[index]
            record.saved, record.array, record.released = nothing, None, True
        return True

    def _live_operands(self, operands, arrays, exposed) -> "list | None":
        """`operands` with, per twin input (`_live_reads`), the array as it is now where the forward read a copy:
        PyTorch's backward reads the memory NumPy wrote since. None (`run` then judges) if NumPy wrote an array
        some other input was copied from, whose backward reads cannot take it as it is now."""
        live = {}
        for copy, array in exposed:
            live[id(copy)] = array
        for index in self.twins:
            array = arrays[index]
            operands.append(live.pop(id(array), array))
        if live and written([pair for pair in exposed if id(pair[0]) in live]):  # (those no twin takes)
            return None
        return operands

    def _handout(self, tape, pending, results, operands):
        """How `_run_deferred` hands out the results of a call for these pending records: per record a tensor holds,
        (its index in pending, its value's slot among the results, whether the value is copied: it shares memory),
        and per record the general path would free, (its index, its freed saved values); False when a value a tensor
        holds is not returned (a plan's intermediate result at the capture)."""
        shown = [(index, self.value_slots.get(record.position)) for index, record in enumerate(pending)
                 if record.position not in tape.intermediates]
        if any(slot is None for _, slot in shown):
            return False
        aliased = self._aliased(results, self.gradients, operands)
        released = self.released_positions
        return (tuple((index, slot, slot in aliased) for index, slot in shown),
                tuple((index, (None,) * len(record.saved)) for index, record in enumerate(pending)
                      if record.position in released))

    def _full(self):
        """The function returning every forward value (not only those a tensor may hold), lowered once."""
        if self.full is None:
            stage = _Stage(self.entries)
            graph, _, _, rows, packing, twins = _fused(stage, range(len(stage.positions)))
            executable, first = lowered_graph(graph), self.gradients
            self.full = lambda *operands: _expanded(executable(*_packed(operands, packing), *(
                operands[index] for index in twins)), first, rows)
        return self.full

    def _aliased(self, results, first, operands) -> frozenset:
        """The slots of the forward values among `results` (from `first` on) that may share memory with another
        value or an operand: found once per function (`executable` or `full`, told apart by their count)."""
        full = len(results) - first != len(self.value_slots)
        if full not in self.aliased:
            self.aliased[full] = _aliased(results[first:], operands)
        return self.aliased[full]

    def _fresh(self, results, operands) -> bool:
        """Whether the native entry's results are arrays of their own (none an operand passed through, a view,
        or another result), so that its gradients become .grad without a copy. The same for every call of
        the same code: found at the first."""
        if self.fresh is None:
            ids = {id(result) for result in results if result.base is None}
            self.fresh = len(ids) == len(results) and ids.isdisjoint(id(operand) for operand in operands)
        return self.fresh

    def _operands(self, records) -> list:
        """The function's inputs from the records of a step computed op by op: each as its first reader saved
        it, or zeros where only ops that do not lead to the root read it (their values are already computed;
        the gradients do not depend on them)."""
        if self.complete:
            return [records[position].saved[operand] for position, operand in self.places]
        operands = []
        for uses, (shape, dtype) in zip(self.input_uses, self.input_types):
            reader = next(((position, operand) for position, operand in uses if position in records), None)
            operands.append(np.zeros(shape, dtype) if reader is None else records[reader[0]].saved[reader[1]])
        return operands

    def _checked(self, root_record):
        """(records by position, leaves by slot) of the root's ancestors, checked against their entries,
        with every operand still at the version it was read at, every leaf and constant array as it was read
        (the call recomputes the forward from them), and no result read after its array went out to NumPy or
        as .data (written there unseen, it is not what the forward recomputes); (None, None) otherwise."""
        entries = self.entries
        records, leaves = {self.order[0]: root_record}, {}
        for position in self.checked_order:
            record = records.get(position)
            if record is None or record.released or record.entry != entries[position]:
                return None, None
            for operand, source in enumerate(record.entry[2]):
                counter, version = record.versions[operand]
                if counter.value != version or (counter.exposed is not False and (source >= 0 or record.value is None)):
                    return None, None  # modified since, or an array NumPy may have written (not a deferred copy)
                if source >= 0:
                    records[source] = record.parents[operand]
                elif source != -1:
                    leaves[leaf_slot(source)] = record.parents[operand]
        for uses in self.shared_leaves:  # the one input of a leaf: every use must have read the same array
            first = records[uses[0][0]].saved[uses[0][1]]
            if any(records[position].saved[operand] is not first for position, operand in uses[1:]):
                return None, None
        return records, [leaves.get(slot) for slot in self.leaf_slots]  # (None: a leaf only other ops read)

    def compute(self, tape) -> None:
        """Compute the tape's pending records op by op with NumPy, as the eager recorder would have."""
        pending = _made(tape.pending)
        views = self.views
        for index, record in enumerate(pending):
            arrays = _operand_arrays(record, live=record.position in views)
            if self.evaluators is None:
                self.evaluators = {position: plans.evaluator(prim, dict(attrs))
                                   for position, (prim, attrs, _, _, _) in self.entries.items()}
            try:
                result = _evaluated(record, arrays, self.evaluators[record.position])
            except Exception:
                tape.pending = pending[index:]
                raise
            if record.position in views and not record.viewed and record.position not in tape.intermediates:
                result = result.copy()  # (a plan's result viewing its own intermediate: its own, as a native call's)
            record.value = record.array = result
            record.saved = _live(arrays, tape.exposed) if tape.exposed else arrays
        tape.pending = []


def _evaluated(record, arrays, evaluate) -> np.ndarray:
    """The value of a deferred record's op on `arrays`, by `evaluate` (its primitive's NumPy implementation)."""
    result = evaluate(*arrays)
    if result.__class__ is not np.ndarray:
        result = np.asarray(result)
    dtype = record.entry[4][1]
    return result if result.dtype == dtype else result.astype(dtype)


def view_value(record) -> np.ndarray:
    """The value of a deferred view's record, made a view of its operand's (a leaf's own array, or its parent's
    value, made a view first if it is one): the lowered function computed an array of its own. Made when its tensor
    is first read (DeferredTensor), so a view nothing reads (a chunk of an LSTM's gates) costs nothing."""
    arrays = []
    for parent, array in zip(record.parents, record.saved):
        if isinstance(parent, Record):  # an earlier deferred record's value
            arrays.append(view_value(parent) if parent.viewed else parent.value)
        else:  # a leaf's own array (not the copy kept of one NumPy may write), or a constant
            arrays.append(parent._data if parent is not None else array)
    value = record.value
    if not any(array is not None and np.may_share_memory(value, array) for array in arrays) and (
            all(array is not None for array in arrays)):  # (a constant operand freed by a backward: kept as is)
        value = record.value = _evaluated(record, arrays, plans.evaluator(record.prim, dict(record.attrs)))
    return value


def _operand_arrays(record, live=False) -> tuple:
    """The arrays a deferred record's op reads: its parents' values and the leaf and constant arrays it kept; `live`,
    a leaf's own array, not the copy kept of one NumPy may write (a view must be of the leaf's memory)."""
    return tuple(parent.value if array is None else (parent._data if live and parent is not None else array)
                 for parent, array in zip(record.parents, record.saved))


def _live(arrays, exposed) -> tuple:
    """`arrays` with each copy of an array NumPy may write replaced by the array: what a backward reads, as
    PyTorch's saved tensors share the memory NumPy writes (the forward's values were computed from the copies)."""
    arrays_of = {id(copy): array for copy, array in exposed}
    return tuple(arrays_of.get(id(array), array) for array in arrays)


def _made(pending: list) -> list:
    """The pending records with the records of their deferred plans' steps made (Record.make), in tape order."""
    records = []
    for record in pending:
        if record.unmade is not None:
            records.extend(record.make())
        records.append(record)
    return records


def _fused(stage, kept):
    """The graph computing the stage's forward from its inputs and the root's seed, then the adjoint:
    outputs the leaves' cotangents that are not zero, then the values of the nodes `kept` (indices). Also,
    per leaf, whether its cotangent is returned and whether it is zero (reached through ops whose
    derivative is 0), the `rows` that `_expanded` reads the kept values by (None: as they are), and the
    `packing` of the operands (`_packed`).
    A Python loop in the step is rolled into a scan first (passes.reroll), as sg.compile does: it is
    differentiated and compiled as one step of it, not once per step. A kept value of a rolled step is then a
    row of the scan's stacked values (ys): the graph returns each such stack once, and `rows` says which row.
    The inputs the steps read one each (x[t]), which the roll stacks, are stacked by the caller (`packing`):
    the lowered function takes the stack, and its code does not grow with the number of steps."""
    forward = stage.forward
    nodes = forward.nodes
    unrolled = gather_products(_decomposed(ir.Graph(forward.inputs, nodes,
                                                    [nodes[-1].out] + [nodes[index].out for index in kept])))
    rolled = reroll(unrolled)
    outputs, rows = _stacks_of_rows(rolled) if rolled is not unrolled else (rolled.outputs[1:], None)
    leaves = [forward.inputs[i] for i in stage.wanted]
    rolled, packing = _stacked_inputs(rolled, leaves) if rolled is not unrolled else (rolled, None)
    builder = Builder()
    with building(builder):
        env = inline(rolled, [builder.new_input(v.shape, v.dtype) for v in rolled.inputs])
        forward_count = len(builder.nodes)
        root = rolled.outputs[0]
        seed = builder.new_input(root.shape, root.dtype, "seed")
        cts = backward_pass(rolled, env, [(id(root), seed)])
        results = [cts[id(leaf)] for leaf in leaves]
        reached = reached_values(rolled, {id(root): seed})
        returned = [ct is not None for ct in results]
        zero = [ct is None and id(leaf) in reached for ct, leaf in zip(results, leaves)]
        values = [env[id(value)] for value in outputs]
        graph = builder.finish([ct for ct in results if ct is not None] + values, "eager_step")
    graph, twins = _live_reads(graph, forward_count, len(rolled.inputs)) if rolled is unrolled else (graph, ())
    return dce(graph), returned, zero, rows, packing, twins


def _live_reads(graph: ir.Graph, forward_count: int, count: int) -> tuple:
    """(`graph` whose adjoint (its nodes from `forward_count` on) reads each input it reads from a twin input
    appended, the indices of those inputs among the first `count`, the step's): the call passes the array the
    forward read a copy of (one NumPy may write) as its twin, as PyTorch's backward reads the memory NumPy wrote
    since the forward, and nothing is compared (`_live_operands`). Only inputs that the forward reads by ops making
    arrays of their own (products, elementwise ops): where it read a view of one, the adjoint reads that view,
    which PyTorch's would read in the array as it is now too; those keep their copy compared (`written`)."""
    inputs = {id(value): index for index, value in enumerate(graph.inputs[:count])}
    nodes = graph.nodes
    for node in nodes[:forward_count]:
        if node.prim is not matmul_p and not isinstance(node.prim, ElementwisePrimitive):
            for value in node.inputs:
                inputs.pop(id(value), None)
    read = {id(value) for node in nodes[forward_count:] for value in node.inputs}
    twins = {key: ir.Value(value.shape, value.dtype) for key, value in
             ((id(value), value) for value in graph.inputs[:count]) if key in inputs and key in read}
    if not twins:
        return graph, ()
    adjoint = [node if not any(id(value) in twins for value in node.inputs) else
               ir.Node(node.prim, tuple(twins.get(id(value), value) for value in node.inputs), node.attrs, node.out,
                       node.meta) for node in nodes[forward_count:]]
    return (ir.Graph(graph.inputs + list(twins.values()), nodes[:forward_count] + adjoint, graph.outputs, graph.name),
            tuple(inputs[key] for key in twins))


def _decomposed(graph: ir.Graph) -> ir.Graph:
    """graph with the ops whose primitive is `decomposed_to_differentiate` written as their decomposition (a recurrent
    layer's fused sequence as its scan), so the reverse pass reads the residuals the forward computes once."""
    if not any(getattr(node.prim, "decomposed_to_differentiate", False) for node in graph.nodes):
        return graph
    return decompose(graph, lambda prim: not getattr(prim, "decomposed_to_differentiate", False))


def _stacked_inputs(rolled: ir.Graph, leaves) -> tuple:
    """(the graph with each stack of its inputs (a concatenate of their unit-axis reshapes, which reroll makes of the
    inputs the steps read one each) an input of its own, the packing `_packed` makes the operands by: per input of
    that graph and then the seed, the index of an operand, or the indices of the operands stacked); the leaves (their
    cotangents are wanted) are not stacked. (rolled, None) when there is no such stack."""
    index = {id(value): i for i, value in enumerate(rolled.inputs)}
    kept = set(map(id, leaves))
    producers, uses = {id(node.out): node for node in rolled.nodes}, rolled.consumers()
    stacks, dropped = {}, set()  # id(stack node) -> the indices of the inputs it stacks; ids of nodes dropped
    for node in rolled.nodes:
        units = [producers.get(id(value)) for value in node.inputs] if node.prim is concatenate_p and \
            node.params["axis"] == 0 else [None]
        if all(unit is not None and unit.prim is reshape_p and id(unit.inputs[0]) in index and
               id(unit.inputs[0]) not in kept and unit.out.shape == (1,) + unit.inputs[0].shape and
               uses[id(unit.out)] == 1 for unit in units):
            stacks[id(node)] = tuple(index[id(unit.inputs[0])] for unit in units)
            dropped.update(map(id, units + [node]))
    if not stacks:
        return rolled, None
    nodes = [node for node in rolled.nodes if id(node) not in dropped]
    read = {id(value) for node in nodes for value in node.inputs} | set(map(id, rolled.outputs)) | kept
    inputs = [value for value in rolled.inputs if id(value) in read]
    tables = [node for node in rolled.nodes if id(node) in stacks]
    packing = [index[id(value)] for value in inputs] + [stacks[id(node)] for node in tables] + [len(rolled.inputs)]
    return ir.Graph(inputs + [node.out for node in tables], nodes, rolled.outputs, rolled.name), tuple(packing)


def _packed(operands, packing) -> list:
    """The operands of a lowered step whose `_fused` graph takes stacks of some of them (`_stacked_inputs`)."""
    if packing is None:
        return operands
    return [operands[i] if i.__class__ is int else np.stack([operands[j] for j in i]) for i in packing]


def _stacks_of_rows(rolled: ir.Graph) -> tuple:
    """(the values to return, per kept value (rolled.outputs[1:]) its (index among them, row or None, shape or None)):
    a kept value the roll reads back as one row of a scan's ys (reshapes of a one-row slice of them,
    passes.reroll._read_back; a unit-axis reshape of a step's value, as sg.stack makes, is one too) is that row of
    the ys, reshaped where its shape is another, and the ys are returned once, not sliced by a node per value."""
    producers = {id(node.out): node for node in rolled.nodes}
    returned, index, rows = [], {}, []
    for value in rolled.outputs[1:]:
        node, key, row, shape = producers.get(id(value)), id(value), None, None
        while node is not None and node.prim is reshape_p:
            node = producers.get(id(node.inputs[0]))
        if node is not None and node.prim is slice_p and node.out.shape[0] == 1 and node.out.size == value.size:
            ys = producers.get(id(node.inputs[0]))
            if ys is not None and ys.prim is result_p and ys.out.shape[1:] == node.out.shape[1:] and \
                    set(node.params["steps"]) == {1}:  # (each row read back has a result node of its own)
                key, row = (id(ys.inputs[0]), ys.params["index"]), node.params["starts"][0]
                shape = None if node.out.shape[1:] == value.shape else value.shape
                value = ys.out
        if key not in index:
            index[key] = len(returned)
            returned.append(value)
        rows.append((index[key], row, shape))
    return returned, tuple(rows)


def _expanded(results, first: int, rows):
    """The results of a call with the forward values `_fused` returned as rows of a scan's stacked values taken
    apart (a view each): the gradients (the first `first`), then one array per kept value."""
    if rows is None:
        return results
    values = results[first:]
    return list(results[:first]) + [values[i] if row is None else values[i][row] if shape is None else
                                    values[i][row].reshape(shape) for i, row, shape in rows]


def _reached(entries: dict, root: int) -> dict:
    """The entries of `root` and of every entry it was computed from."""
    reached, stack = {}, [root]
    while stack:
        position = stack.pop()
        if position not in reached:
            reached[position] = entries[position]
            stack.extend(source for source in entries[position][2] if source >= 0)
    return reached


def _ancestors(root_record) -> dict:
    """position -> entry of the root's record and every record it was computed from on its tape."""
    entries, stack = {}, [root_record]
    while stack:
        record = stack.pop()
        if record.position not in entries:
            entries[record.position] = record.entry
            stack.extend(p for p, s in zip(record.parents, record.entry[2]) if s >= 0)
    return entries


def _aliased(values, operands) -> frozenset:
    """The positions of the values (the lowered function's forward results) that may share memory with another
    value or with an operand (a value passed through, or a view): the same for every call of the same code. Found
    from the arrays' address ranges: every value in a run of overlapping ranges of several arrays."""
    spans = sorted([(*_span(a), position) for position, a in enumerate(values) if isinstance(a, np.ndarray) and a.size]
                   + [(*_span(a), -1) for a in operands if isinstance(a, np.ndarray) and a.size])
    aliased, run, reach = set(), [], None
    for low, high, position in spans + [(None, None, None)]:
        if low is None or reach is None or low >= reach:
            if len(run) > 1:
                aliased.update(p for p in run if p >= 0)
            run, reach = [], high
        run.append(position)
        reach = high if reach is None or high > reach else reach
    return frozenset(aliased)


def _span(array: np.ndarray) -> tuple:
    """The addresses of the first and past the last byte of `array`'s memory."""
    start = array.__array_interface__["data"][0]
    reaches = [(size - 1) * stride for size, stride in zip(array.shape, array.strides)]
    return start + sum(r for r in reaches if r < 0), start + sum(r for r in reaches if r > 0) + array.itemsize


def _uses_of_shared_leaves(entries: dict) -> list:
    """Per leaf used by several entries: its uses, as (position, operand)."""
    uses = collections.defaultdict(list)
    for position in sorted(entries):
        for operand, source in enumerate(entries[position][2]):
            if leaf_slot(source) is not None:
                uses[leaf_slot(source)].append((position, operand))
    return [places for places in uses.values() if len(places) > 1]


def _leading_to_a_leaf(entries: dict) -> list:
    """Positions of the entries that lead to a leaf: the records the general path processes (and
    frees, without retain_graph)."""
    useful = {}
    for position in sorted(entries):
        useful[position] = any(leaf_slot(s) is not None or (s >= 0 and useful[s]) for s in entries[position][2])
    return [p for p, flag in useful.items() if flag]


def try_backward(engine, root, seed, retain_graph) -> tuple:
    """Run backward of `root` through the captured step if its tape is regular and its structure was
    seen before. Returns (whether it ran, the capture the next step may repeat, or None); when it did
    not run, the general path must."""
    record = root._node
    tape = current_tape()
    if record is None or record.tape is not tape or not tape.regular:
        return False, None
    capture = tape.capture
    if capture is not None and capture.deferred(tape, record):  # the step this tape repeated, whole: no lookup
        if next(reversed(_steady), None) != id(capture):  # (the newest already: no move)
            _steadied(capture)
        return capture.run(engine, record, tape, seed, retain_graph, True), capture
    position = record.position
    key = (tape.digests[position], position)
    plan = _cache.used(key, _MISSING)
    if plan is _MISSING:
        _remember(key, None)  # seen once: the general path runs it op by op this time
        return False, None
    whole = len(tape.entries) == len(tape.digests)  # every entry appended one by one, none deferred
    if plan is None or (plan is not _UNSUPPORTED and plan.steps is None and whole):
        try:  # (again, for a capture of the root's ancestors that are not the whole tape, when the tape has it all)
            plan = _remember(key, Capture(record, tape.entries[:position + 1] if whole else None, retain_graph))
        except Exception:  # noqa: BLE001  (the general path runs it, and raises its own error if there is one)
            plan = _remember(key, _UNSUPPORTED)
    if plan is _UNSUPPORTED:
        return False, None
    if plan.steps is None:
        return plan.run(engine, record, tape, seed, retain_graph), None
    _steadied(plan)  # (also when this step cannot take it: one computed op by op that read an array NumPy may
    return plan.run(engine, record, tape, seed, retain_graph), plan  # write, which the next step, deferred, copies)


def _steadied(capture) -> None:
    """Note that a step had the structure of `capture`, which the next tape expects (the newest of the steady
    captures; the oldest of more than 8 forgotten)."""
    _steady.keep(id(capture), capture)


def alternatives(capture, position, digest) -> list:
    """The other steady captures, newest first, that a tape deferring `capture` may take instead at `position`
    (its ops there do not repeat `capture`'s): those whose steps before it have the same running hash `digest`
    (the tape's last: the same entries), or any at the step's first op."""
    found = []
    for other in reversed(tuple(_steady.values())):  # (a copy: another thread's backward may note a capture)
        steps = other.steps
        if other is not capture and len(steps) > position and (position == 0 or steps[position - 1][6] == digest):
            found.append(other)
    return found


def _remember(key, plan):
    """Cache `plan`; the oldest beyond the cache's limit is forgotten, by the steady captures too (its code freed)."""
    return _cache.keep(key, plan, _unsteadied)


def _unsteadied(key, evicted) -> None:
    """An evicted capture is no longer one a tape may defer against."""
    _steady.pop(id(evicted), None)


_MISSING = object()
_UNSUPPORTED = object()  # a structure whose whole-prefix adjoint could not be traced
