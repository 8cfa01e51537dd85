"""The units of work a kernel is planned in: loop jobs, custom jobs, and groups of loop jobs
that share one loop nest (see kernel.KernelBuilder.schedule)."""
from __future__ import annotations

from dataclasses import dataclass, field

from .operands import Buffer


@dataclass(eq=False)
class LoopJob:
    """Work done at every index of `domain`: body(k, idx); prologue/epilogue around the loop nest."""

    domain: tuple
    target: Buffer
    reads: frozenset
    body: object
    prologue: object = None
    epilogue: object = None


@dataclass(eq=False)
class CustomJob:
    """Work that is not one loop nest (a BLAS call): emit(k)."""

    target: Buffer
    reads: frozenset
    emit: object


@dataclass(eq=False)
class Group:
    jobs: list = field(default_factory=list)
    domain: tuple = None
    writes: set = field(default_factory=set)
    reads: set = field(default_factory=set)


def fill_job(target: Buffer, value) -> LoopJob:
    """Store `value` at every index of `target`."""
    return LoopJob(target.shape, target, frozenset(), lambda k, idx: target.store(k, idx, value))
