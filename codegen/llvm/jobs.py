"""The units of work a kernel is planned in: loop jobs, custom jobs, and groups of loop jobs
that share one loop nest (see kernel.KernelBuilder.schedule)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from llvmlite import ir

from .operands import Buffer, Coord
from .types import I64


@dataclass(eq=False)
class LoopJob:
    """Work done at every index of `domain`: body(k, idx); prologue/epilogue around the loop nest.
    `at_index`: the buffers (ids) body reads only at idx; `writes_at_index`: body writes target at idx
    only. A job reading at its index what an earlier job writes at its index may share that job's loop."""

    domain: tuple
    target: Buffer
    reads: frozenset
    body: object
    prologue: object = None
    epilogue: object = None
    at_index: frozenset = frozenset()
    writes_at_index: bool = False
    fold: object = None  # the Fold a full reduction runs (a parallel loop folds each chunk on its own)

    @property
    def writes(self) -> frozenset:
        """Ids of the buffers the job writes (their bases)."""
        return frozenset([id(self.target.base)])


class Fold:
    """A full reduction's running value: `init`, folded with combine(k, running, value) at each index;
    finish(k, total) stores the total. A parallel loop (kernel.emit_parallel) folds each chunk from `init`
    and then the chunks' values in chunk order, so the total does not depend on the number of threads."""

    def __init__(self, value_type, init, combine, finish):
        self.type, self.init, self.combine, self.finish = value_type, init, combine, finish
        self._slot = None

    def job(self, domain, target, reads, value, at_index) -> LoopJob:
        """The loop job folding value(k, idx) over `domain`, whose epilogue finishes."""
        def prologue(k):
            self._slot = k.alloca(self.type)
            k.b.store(self.init, self._slot)

        def body(k, idx):
            k.b.store(self.combine(k, self.running(k), value(k, idx)), self._slot)
        return LoopJob(domain, target, reads, body, prologue, lambda k: self.finish(k, self.running(k)),
                       at_index=at_index, fold=self)

    def running(self, k) -> ir.Value:
        """The value folded so far (in the function the prologue was emitted into)."""
        return k.b.load(self._slot, typ=self.type)


@dataclass(eq=False)
class CustomJob:
    """Work that is not one loop nest (a BLAS call, a loop calling a body function): emit(k),
    writing the buffers `targets`; `work`: about how many arithmetic operations (inf: not known
    before it runs, as a loop's)."""

    targets: tuple
    reads: frozenset
    emit: object
    work: float = math.inf

    @property
    def writes(self) -> frozenset:
        return frozenset(id(target.base) for target in self.targets)


@dataclass(eq=False)
class Group:
    jobs: list = field(default_factory=list)
    domain: tuple = None
    writes: set = field(default_factory=set)
    reads: set = field(default_factory=set)
    written_at_index: dict = field(default_factory=dict)  # id of a buffer written by one job at its index -> the domain


def fill_job(target: Buffer, value) -> LoopJob:
    """Store `value` at every index of `target`."""
    return LoopJob(target.shape, target, frozenset(), lambda k, idx: target.store(k, idx, value),
                   writes_at_index=True)


def scan_jobs(target: Buffer, source, axis: int, reverse: bool, combine) -> list:
    """Jobs writing the scan of `source` along `axis` into `target`, walked from the axis's end when
    `reverse`: the first position copies source, each next one is combine(k, the value carried from
    the position before, source's value there). The carried value is read back from `target`, so the
    loop nest runs the axis in order with the other axes independent (and vectorizable) inside it,
    and source is loaded once per element where it is computed (it may be virtual)."""
    n = target.shape[axis]
    if n == 0:
        return []

    def at(idx, coord):
        return idx[:axis] + [coord] + idx[axis + 1:]

    def start(k, idx):
        here = at(idx, Coord.constant(n - 1 if reverse else 0))
        target.store(k, here, source.load(k, here))

    def step(k, idx):  # loop index c along the axis: position c + 1 (n - 2 - c walking back) after c (n - 1 - c)
        c = idx[axis]
        if reverse:
            before = Coord(k.b.sub(ir.Constant(I64, n - 1), c.value), n - c.hi, n - c.lo)
            here = Coord(k.b.sub(before.value, ir.Constant(I64, 1)), before.lo - 1, before.hi - 1)
        else:
            before, here = c, Coord(k.b.add(c.value, ir.Constant(I64, 1)), c.lo + 1, c.hi + 1)
        here, before = at(idx, here), at(idx, before)
        target.store(k, here, combine(k, target.load(k, before), source.load(k, here)))

    shape = lambda extent: target.shape[:axis] + (extent,) + target.shape[axis + 1:]  # noqa: E731
    jobs = [LoopJob(shape(1), target, source.reads, start)]
    if n > 1:
        jobs.append(LoopJob(shape(n - 1), target, source.reads | target.reads, step))
    return jobs


def loop_nest(k, ranges, body, steps=()):
    """body(steps) inside loops over the given [lo, hi) ranges, outermost first."""
    if len(steps) == len(ranges):
        body(list(steps))
        return
    lo, hi = ranges[len(steps)]
    k.for_range(lo, hi, lambda i: loop_nest(k, ranges, body, (*steps, Coord(i, lo, hi))))
