"""Run the compiler's adjoint pass over a run of recorded ops, cached by the run's structure.

A run of records is an IR graph (`StageGraph.graph`): its inputs are the values that
come from outside the run, its nodes the records themselves; a run that is its tape's whole
prefix is keyed by the tape's running digest (symgrad.eager.tape), any other by tuples. The adjoint is traced once per
structure by `autodiff.backward_pass` with every forward value as an input (they were
computed eagerly already), dead code is dropped, and what remains says which saved
values the backward really reads. The first time a structure is seen the adjoint is
evaluated op by op with NumPy (unless the shared cache of lowered code, code_cache, holds its
code already); from the second time on it runs the optimized graph lowered by the default
backend (LLVM when registered), so a training loop speeds up.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from .. import code_cache, ir
from ..autodiff import backward_pass
from ..caches import Recent
from ..passes.dce import dce
from ..core import Builder, building
from ..ops.control import result_p, results as results_of
from ..tracing import inline
from .graph import Record, VersionCounter

_cache = Recent(512)  # StageGraph.key() -> Adjoint


class Source:
    """Where one forward value can be read: the output of a record, or input `slot` of the records
    that consumed it (`places`, as (record, slot) with slot None for the output). `node` is what
    the value is in the graph: its producing record, a leaf tensor, or None for a constant."""

    __slots__ = ("places", "node")

    def __init__(self, record, slot, node):
        self.places = [(record, slot)]
        self.node = node

    def array(self):
        """The value's array from any place that still holds it at the version it was recorded at."""
        freed, modified = None, None
        for record, slot in self.places:
            array = record.array if slot is None else record.saved[slot]
            if array is None:
                freed = freed or record
                continue
            counter, version = record.out_version if slot is None else record.versions[slot]
            if counter.value == version and counter.__class__ is not VersionCounter:
                moved = counter.moved()  # a value computed from arrays NumPy may write: as they are now, unless one
                if moved is None:  # was written in place since (PyTorch's one op finds its saved input modified)
                    return counter.current(array)
                modified = modified or (record, slot, *moved)
                continue
            if counter.value == version:
                return array if slot is None else _current(self.node, array)
            modified = modified or (record, slot, counter.value, version)
        if modified is not None:
            record, slot, now, version = modified
            value = record.output() if slot is None else record.valued().inputs[slot]
            role = "the output" if slot is None else f"input {slot}"
            raise RuntimeError(
                "one of the variables needed for gradient computation has been modified by an inplace "
                f"operation: [{value.type_str()}], {role} of {record.name()}, is at version "
                f"{now}; expected version {version} instead. Hint: compute it out of place "
                "(y = y + 1 instead of y += 1) or clone() it before modifying it.")
        raise RuntimeError(
            "Trying to backward through the graph a second time (or directly access saved tensors after "
            "they have already been freed). Saved intermediate values of the graph are freed when you call "
            ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
            f"graph a second time (the freed values belong to {freed.name()})")

    def tensor(self, tensor_type):
        """The value as a tensor of `tensor_type` that keeps its place in the graph (for create_graph)."""
        array = self.array()
        if self.node is not None and not isinstance(self.node, Record):
            return self.node  # a leaf tensor
        tensor = tensor_type._wrap(array)
        if self.node is not None:
            tensor._node, tensor._requires_grad = self.node, True
        return tensor


def _current(node, array):
    """A leaf's saved `array` as a backward reads it: the leaf's array now when `.data =` gave it another of the same
    type since (PyTorch's saved tensors are the leaf's, whose data `.data =` sets; create_graph's operands are the
    leaves themselves), else `array` (a constant's, or a record's output)."""
    if node is None or isinstance(node, Record):
        return array
    data = node._data
    return data if data is not array and data.shape == array.shape and data.dtype == array.dtype else array


def reads_output_of(record, slot, parent) -> bool:
    """Whether input `slot` of `record` is the very output `parent` recorded (its value: the same data and
    version), and not a copy or a later in-place version of it."""
    return record.valued().inputs[slot] is parent.output()


class StageGraph:
    """A run of records as a forward graph: the records are its nodes as they are, its inputs the values they read
    from outside the run (each once), with a hashable key of its structure and where each value can be read."""

    def __init__(self, run, seeded, wanted):
        """run: records in creation order; seeded: those with a pending cotangent;
        wanted(parent) -> whether the cotangent of an outside parent is needed."""
        inside = {id(r.valued().out): i for i, r in enumerate(run)}  # the values the run makes
        slots, sources, external_parents, inputs, input_types, wiring = {}, [], [], [], [], []
        outputs = [Source(r, None, r) for r in run]
        tape = run[0].tape
        prefix = True  # whether the run is its tape's first records, all of them (`key`)
        for index, record in enumerate(run):
            if record.position != index or record.tape is not tape:
                prefix = False
            operands = []
            for slot, (parent, value) in enumerate(zip(record.parents, record.inputs)):
                known = inside.get(id(value))
                if known is not None:  # the very output of an earlier record of the run (reads_output_of)
                    operands.append(-1 - known)
                    outputs[known].places.append((record, slot))
                    continue
                # one input per value: one version of one array (a leaf given another array by `.data =` is another)
                known = slots.get(id(value))
                if known is not None:
                    sources[known].places.append((record, slot))
                else:
                    known = slots[id(value)] = len(sources)
                    sources.append(Source(record, slot, parent))
                    external_parents.append(parent)
                    inputs.append(value)
                    input_types.append((value.shape, value.dtype))
                operands.append(known)
            wiring.append(tuple(operands))
        self.run = run
        self.inputs = inputs
        # The structure: a whole tape prefix's is the tape's running digest at its end, which names its records'
        # entries (primitive, attributes, operand sources and types), with where each operand comes from (the entries
        # do not say which constant operands are one value); any other run's, its records' structure as tuples
        self.digested = prefix and tape.digests[len(run) - 1] != 0  # (0: an entry not hashable)
        if self.digested:
            self.structure = (tape.digests[len(run) - 1], tuple(wiring))
        else:
            self.structure = (tuple(input_types), tuple(
                (r.prim, r.attrs, operands, (r.out.shape, r.out.dtype)) for r, operands in zip(run, wiring)))
        self.sources = sources + outputs
        self.seeded = tuple(i for i, r in enumerate(run) if id(r) in seeded)
        self.wanted = tuple(i for i, p in enumerate(external_parents) if p is not None and wanted(p))
        self.wanted_parents = [external_parents[i] for i in self.wanted]
        self.wanted_types = [input_types[i] for i in self.wanted]

    def key(self):
        return self.structure, self.seeded, self.wanted

    def entries(self) -> "list | None":
        """The run's entries, which an adjoint cached by a digest checks it was traced for (two structures may
        hash alike: hash(-1) == hash(-2), in an attribute); None for a key of tuples, compared whole by the cache."""
        return [record.entry for record in self.run] if self.digested else None

    def graph(self) -> ir.Graph:
        """The run as an IR graph: its records are the nodes (no conversion)."""
        return ir.Graph(list(self.inputs), list(self.run), [record.out for record in self.run], "eager")


class Adjoint:
    """The traced adjoint of one structure: which inputs it reads, which cotangents it returns."""

    def __init__(self, stage: StageGraph):
        forward = stage.graph()
        self.entries = stage.entries()  # what a digest key stands for (adjoint_for)
        builder = Builder()
        with building(builder):
            every_value = list(forward.inputs) + [n.out for n in forward.nodes]
            env = {id(v): builder.new_input(v.shape, v.dtype) for v in every_value}
            seeds = {}
            for index in stage.seeded:
                out = forward.nodes[index].out
                seed = builder.new_input(out.shape, out.dtype, "seed")
                seeds[id(out)] = results_of(seed) if ir.is_tuple_dtype(out.dtype) else seed
            cts = backward_pass(forward, env, seeds.items())
            results = [cts[id(forward.inputs[i])] for i in stage.wanted]
            self.returned = [ct is not None for ct in results]
            reached = reached_values(forward, seeds)
            self.zero = [ct is None and id(forward.inputs[i]) in reached for ct, i in zip(results, stage.wanted)]
            # a value with several results gets a cotangent per result (zeros for those it has none)
            self.lengths = [len(ct) if isinstance(ct, list) else None for ct in results if ct is not None]
            flat = [part if part is not None else np.zeros(shape, dtype)
                    for ct, i in zip(results, stage.wanted) if ct is not None
                    for part, (shape, dtype) in (zip(ct, ir.components(forward.inputs[i].dtype))
                                                 if isinstance(ct, list) else [(ct, (None, None))])]
            graph = dce(builder.finish(flat, "eager_backward"))
        used = {id(v) for node in graph.nodes for v in node.inputs} | {id(v) for v in graph.outputs}
        count = len(every_value)
        self.value_positions = [i for i, v in enumerate(graph.inputs[:count]) if id(v) in used]
        self.seed_positions = [i for i, v in enumerate(graph.inputs[count:]) if id(v) in used]
        kept = [graph.inputs[i] for i in self.value_positions] + [graph.inputs[count + i] for i in self.seed_positions]
        self.graph = ir.Graph(kept, graph.nodes, graph.outputs, graph.name)
        self.calls = 0
        self.executable = None  # calls the lowered code (timed while it is quick: code_cache.timed)

    def run(self, operands):
        """Evaluate on arrays: op by op the first time (unless another path lowered its structure already), then
        with the lowered optimized graph."""
        self.calls += 1
        executable = self.lowered(only_cached=self.calls == 1)
        if executable is None:
            with code_cache.collection_paused():  # op by op once: many allocations, few cycles
                env = inline(self.graph, operands)
            return self._grouped([env[id(v)] for v in self.graph.outputs])
        return self._grouped(executable(*operands))

    def _grouped(self, flat) -> list:
        """The cotangents returned, those of a value with several results as a tuple again."""
        if not any(self.lengths):
            return list(flat)
        flat, grouped = iter(flat), []
        for length in self.lengths:
            grouped.append(next(flat) if length is None else tuple(next(flat) for _ in range(length)))
        return grouped

    def lowered(self, only_cached=False):
        """The optimized graph lowered by the default backend (once; shared through code_cache), or with
        `only_cached` None when the cache does not hold its code."""
        if self.executable is None:
            graph, split = _split_tuple_inputs(self.graph)
            code = code_cache.cached(graph) if only_cached else code_cache.lowered(graph, quick=True)
            if code is None:
                return None
            executable = code.executable
            call = (lambda *operands: executable(*_flat(operands))) if split else executable
            self.executable = code_cache.timed(executable, call, (self, "executable"))
        return self.executable

    def run_recorded(self, operands):
        """Evaluate on tensors, recording every op, so the result can be differentiated again."""
        graph, split = _split_tuple_inputs(self.graph)
        env = inline(graph, _flat(operands) if split else operands)
        return self._grouped([env[id(v)] for v in graph.outputs])


def _split_tuple_inputs(graph: ir.Graph):
    """graph with each input of a tuple type (the saved results of a factorization, eigh's or svd's)
    replaced by an input per component, read where its `result` nodes were, as backends take arrays;
    and whether there was one."""
    inputs, parts = [], {}
    for value in graph.inputs:
        if ir.is_tuple_dtype(value.dtype):
            parts[id(value)] = [ir.Value(shape, dtype) for shape, dtype in ir.components(value.dtype)]
            inputs.extend(parts[id(value)])
        else:
            inputs.append(value)
    if not parts:
        return graph, False
    renamed, nodes = {}, []
    for node in graph.nodes:
        if node.prim is result_p and id(node.inputs[0]) in parts:
            renamed[id(node.out)] = parts[id(node.inputs[0])][node.params["index"]]
        else:
            nodes.append(replace(node, inputs=tuple(renamed.get(id(v), v) for v in node.inputs)))
    return ir.Graph(inputs, nodes, [renamed.get(id(v), v) for v in graph.outputs], graph.name), True


def _flat(operands) -> list:
    """operands with a value of several results as its arrays (or its tensors' results, recorded) in turn."""
    flat = []
    for x in operands:
        if isinstance(x, tuple):
            flat.extend(x)
        elif isinstance(getattr(x, "_data", None), tuple):  # a tensor of several results
            flat.extend(results_of(x))
        else:
            flat.append(x)
    return flat


def lowered_graph(graph: ir.Graph, quick=False):
    """`graph` optimized and lowered by the default backend, through the shared cache of lowered code
    (code_cache): the one place eager code lowers a graph. `quick`: see code_cache.ran."""
    return code_cache.lowered(graph, quick=quick).executable


def reached_values(forward: ir.Graph, seeds) -> set:
    """ids of the values a seeded output depends on. A reached input whose cotangent the reverse
    pass dropped as zero (sign, floor, x * 0) gets zeros, as PyTorch materializes them."""
    reached = set(seeds)
    for node in reversed(forward.nodes):
        if id(node.out) in reached:
            reached.update(id(v) for v in node.inputs)
    return reached


def adjoint_for(stage: StageGraph) -> Adjoint:
    """The cached adjoint of the stage's structure (traced on first sight, and again for another structure whose
    digest is the same)."""
    key = stage.key()
    adjoint = _cache.used(key)
    if adjoint is None or adjoint.entries is not None and adjoint.entries != stage.entries():
        with code_cache.collection_paused():  # a first sight traces the adjoint (a compiler's work)
            adjoint = _cache.keep(key, Adjoint(stage))
    return adjoint


def run_stage(run, pending: dict, wanted, create_graph: bool, tensor_type) -> list:
    """Propagate the pending cotangents of `run`'s records to the parents outside it.

    Returns [(parent, cotangent)] for each wanted outside parent that receives one: an array, or
    with create_graph a tensor of `tensor_type` (the eager Tensor class) recorded for another backward.
    """
    seeded = {id(r) for r in run if id(r) in pending}
    if not seeded:
        return []
    stage = StageGraph(run, seeded, wanted)
    adjoint = adjoint_for(stage)
    sources = [stage.sources[i] for i in adjoint.value_positions]
    seeds = [pending.pop(id(run[i])) for i in stage.seeded]
    seeds = [seeds[i] for i in adjoint.seed_positions]
    if create_graph:
        operands = [s.tensor(tensor_type) for s in sources] + [
            s if isinstance(s, tensor_type) else tensor_type._wrap(s) for s in seeds]
        results = adjoint.run_recorded(operands)
    else:
        results = adjoint.run([s.array() for s in sources] + seeds)
    returned = iter(results)
    delivered = []
    for parent, present, zero, (shape, dtype) in zip(stage.wanted_parents, adjoint.returned, adjoint.zero,
                                                      stage.wanted_types):
        if present:
            delivered.append((parent, next(returned)))
        elif zero:
            wrap = tensor_type._wrap if create_graph else (lambda array: array)
            delivered.append((parent, tuple(wrap(np.zeros(*t)) for t in ir.components(dtype))
                              if ir.is_tuple_dtype(dtype) else wrap(np.zeros(shape, dtype))))
    return delivered
