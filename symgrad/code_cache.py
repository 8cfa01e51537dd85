"""The one cache of lowered code: a graph's optimized form and executable by (backend, the graph's structure, the
lowering's options), shared by sg.compile, the transforms, the eager adjoints and captures, the fused recurrent
layers and the optimizers' updates, so a structure is optimized and lowered once, whichever of them reaches it.

The key is `ir.Graph.structure_key()`, exact by construction (ops, attributes with their types and signed zeros,
baked constants' bytes, value types, wiring): two graphs with one key compute one function. The cache keeps the
`CODE_KEPT` most recently used (caches.Recent); an evicted executable is freed once its other holders (a compiled
function's signature, an eager capture) let it go too. What a call keeps for the next (an LLVM kernel's large
workspace) lives as long as a holder does: each holder gets its own copy of such an executable (`for_holder`).
"""
from __future__ import annotations

import contextlib
import gc
import os
import threading
import time
import weakref

from . import ir
from .backends import lower, thread_count
from .caches import Recent
from .passes import optimize

CODE_KEPT = 128
_cache = Recent(CODE_KEPT)  # key_of(graph, options) -> Code
_lock = threading.Lock()  # orders stores; hits take no lock (Recent.used tolerates a concurrent store)


class Code:
    """A graph optimized and lowered: `graph` (what `as_text` shows) and its `executable`."""

    __slots__ = ("graph", "executable")

    def __init__(self, graph: ir.Graph, executable):
        self.graph, self.executable = graph, executable


def key_of(graph: ir.Graph, backend=None, structure=None, python_floats=(), threads=None) -> tuple:
    """The cache key of `graph` lowered with these options (see backends.lower). The graph's name and its inputs'
    names are part of it: they are the generated code's and its error messages' (`.source`, `as_text()`)."""
    names = (graph.name, *(v.hint if isinstance(v.hint, str) else None for v in graph.inputs))
    return backend, graph.structure_key(), names, structure, tuple(python_floats), thread_count(threads)


def cached(graph: ir.Graph, **options):
    """The Code of `graph` when the cache holds it, else None (nothing lowered): the eager adjoint interprets its
    first call instead, unless another path lowered the structure already."""
    code = _cache.used(key_of(graph, **options))
    return None if code is None else _for_holder(code)


def _for_holder(code: Code) -> Code:
    """`code` for one more holder: with an executable that keeps memory from call to call (a large workspace),
    its holder's own copy, whose dropping frees that memory (the cache keeps code, not the memory of its calls)."""
    for_holder = getattr(code.executable, "for_holder", None)
    return code if for_holder is None else Code(code.graph, for_holder())


def lowered(graph: ir.Graph, backend=None, structure=None, python_floats=(), threads=None, quick=False) -> Code:
    """`graph` optimized and lowered (backends.lower's arguments), or the Code of the same structure cached (upgraded
    unless `quick`: see upgraded). Lowering runs outside the lock: two threads may lower one structure, and both get
    the first one stored. `SYMGRAD_QUICK_CODE=0`: never quick (fully optimized code from the first call on)."""
    key = key_of(graph, backend, structure, python_floats, threads)
    quick = quick and os.environ.get("SYMGRAD_QUICK_CODE") != "0"
    code = _cache.used(key)
    if code is None:
        with collection_paused():
            graph = optimize(graph)
            code = Code(graph, lower(graph, backend, structure, python_floats, threads, quick))
        with _lock:
            code = _cache.used(key) or _cache.keep(key, code)
    elif not quick:
        upgraded(code.executable)
    return _for_holder(code)


def upgraded(executable):
    """`executable` with its code fully optimized if it was compiled `quick` (code that may run only once or twice,
    e.g. an eager step's first capture): the same results, faster."""
    upgrade = getattr(executable, "upgrade", None)
    if upgrade is not None:
        upgrade()
    return executable


def ran(executable, seconds: float) -> bool:
    """Note that a call of `executable` took `seconds` (of its thread's CPU time, which a loaded machine does not
    stretch): quick code is upgraded once its calls have taken about as
    long as upgrading takes (then at most that long is lost to slower code, and a step that never repeats pays
    nothing for code it never runs again), or after a few dozen calls (a hot step's). Whether it is still quick
    code (whose calls are worth timing)."""
    ran_for = getattr(executable, "ran", None)
    return ran_for is not None and ran_for(seconds)


def timed(executable, call, *holders):
    """`call` (a function running `executable`'s code), its calls timed and told to `ran` while the code is quick;
    once upgraded, each of `holders` ((object, attribute) pairs) that holds the timed call gets `call` itself, which
    runs untimed. `call` itself for code that is not quick. (Weak references: no cycle keeps a dropped holder.)"""
    if not getattr(executable, "quick", False):
        return call
    holders = [(weakref.ref(owner), attribute) for owner, attribute in holders]

    def timed_call(*args):
        start = time.thread_time()
        result = call(*args)
        if not ran(executable, time.thread_time() - start):
            for owner, attribute in holders:
                owner = owner()
                if owner is not None and getattr(owner, attribute) is timed_call:
                    setattr(owner, attribute, call)
        return result
    return timed_call


@contextlib.contextmanager
def collection_paused():
    """Pause Python's cyclic garbage collector while a graph is traced, optimized and lowered: that allocates
    millions of objects that are not garbage (graphs, SymPy and llvmlite trees), and full collections walking them
    took 15% of the first call of a 10,000-node program, and 17% of an eager LSTM's first step of 80 cells."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
