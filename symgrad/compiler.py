"""`sg.compile`: trace once per argument signature, optimize, lower to a backend, cache.

The signature of a call is its pytree structure plus each leaf's shape and dtype. A new
signature retraces; so does a call after a global or closure binding the function read
was rebound (see guards.py). `cache_info()` lists the signatures held and
`SYMGRAD_EXPLAIN=1` logs each retrace with what changed, and each signature evicted: a function
keeps its `max_signatures` (or `SYMGRAD_MAX_SIGNATURES`, default 64) most recently used ones.

A compiled function pickles with the signatures it holds (their optimized IR and the backend's
code, which unpickles without a retrace) and its Python function as pickle sends it (pickling.py).
The carried signatures are the traces the pickling process made whose reads still hold there (a trace of a
global rebound since is dropped, not carried): in the new process they are not guarded by what the function
reads there.
"""
from __future__ import annotations

import functools
import logging
import operator
import os
import threading
from dataclasses import dataclass

import numpy as np

from . import dtypes, guards, ir, pickling, pytree
from . import code_cache
from .backends import check_backend, thread_count
from .caches import Recent
from .passes.lift import lift_constants
from .core import (ConcretizationError, Reads, TracerError, UnsupportedOpError, concrete_array, current_builder,
                   random_draws)
from .static_args import (STATIC_VALUES_KEPT, StaticArgs, bind_positions, has_static, hashable,
                          python_value_positions)
from .tracing import argument_names, as_input_array, check_arguments, function_name, is_python_number, trace_flat

log = logging.getLogger("symgrad")
WEAK = "weak"  # marks a Python number's type in a signature key

@dataclass
class Lowered:
    """One traced-and-lowered signature: the optimized IR and the backend's executable."""

    graph: ir.Graph
    executable: object
    out_tree: object
    fast: object = None  # entry(*flat array args) -> the finished result, or NotImplemented
    constants: tuple = ()  # arrays passed after the arguments (lifted constants of a fresh trace)
    reads: tuple = ()  # then what the trace reads afresh at every call (core.Reads: arrays, eager tensors)
    call: object = None  # calls executable (timed while its code is quick: Compiled._signature)

    def trailing(self) -> tuple:
        """The arrays passed after the arguments, as they are now."""
        return self.constants + tuple(concrete_array(source) for source in self.reads) if self.reads else self.constants

    def as_text(self) -> str:
        """The optimized IR, and for native code the LLVM IR."""
        text = str(self.graph)
        llvm_ir = getattr(self.executable, "llvm_ir", None)
        return text if llvm_ir is None else f"{text}\n\n; LLVM IR\n{llvm_ir}"

    @property
    def source(self) -> str:
        """The generated Python source (backend="numpy")."""
        source = getattr(self.executable, "source", None)
        if source is None:
            raise AttributeError("this function was compiled to native code, which has no Python source: its LLVM IR "
                                 "is .llvm_ir (and .as_text()); compile with backend='numpy' for readable Python")
        return source

    @property
    def llvm_ir(self) -> str:
        """The LLVM IR of native code (the default backend), as handed to LLVM's optimizer."""
        llvm_ir = getattr(self.executable, "llvm_ir", None)
        if llvm_ir is None:
            raise AttributeError("this function was compiled to Python source (.source), not LLVM IR")
        return llvm_ir


DEFAULT_MAX_SIGNATURES = 64
# Orders what concurrent calls do to a compiled function's caches (guard checks, stores, walks, the static values':
# one lock for all, a Compiled copies and pickles as itself). Tracing, lowering, cache hits and native calls run
# outside it.
_CACHE_LOCK = threading.RLock()


def signature_limit(requested=None) -> int:
    """How many signatures a compiled function keeps: `requested`, else `SYMGRAD_MAX_SIGNATURES`, else 64."""
    source, value = "max_signatures", requested
    if requested is None:
        source, value = "SYMGRAD_MAX_SIGNATURES", os.environ.get("SYMGRAD_MAX_SIGNATURES", "").strip()
    if value == "":
        return DEFAULT_MAX_SIGNATURES
    try:
        count = int(value) if isinstance(value, str) else operator.index(value)
    except (TypeError, ValueError):
        count = 0
    if isinstance(value, bool) or count < 1:
        raise ValueError(f"{source} must be a whole number of signatures, 1 or more, not {value!r}")
    return count


class Compiled(pickling.CopiedAsItself):
    """A function compiled per argument signature. Call it like the original function.

    With `check_values` (the uncompiled transforms), what the function read is guarded by
    value, not only by binding, and a function whose reads cannot be guarded re-runs on
    every call. Its traces keep the values they read (arrays, Python numbers) out of the
    structure, as inputs, so a re-trace after a change, or a fresh one, reuses compiled code.
    """

    def __init__(self, fn, backend=None, name=None, *, check_values=False, max_signatures=None, threads=None):
        self.fn = self.__wrapped__ = fn
        self._threads = threads if threads is None else thread_count(threads)  # None: decided at each compile
        self.backend = check_backend(backend)
        self._requested_backend = backend  # None: the default, which may hand a graph to NumPy (backends.lower)
        self.__name__ = function_name(fn, name)
        self.__doc__ = getattr(fn, "__doc__", None)
        self._max_signatures = signature_limit(max_signatures)
        self._cache = Recent(self._max_signatures)  # signature key -> Lowered, oldest first
        self._fast = None  # the native entry of the last signature called with flat arrays
        self._clears = 0  # how many times a changed read emptied the cache
        self._check_values = check_values
        self._guard = None  # what the cached traces read (guards.Guard), when it read anything
        self._holds = None  # self._guard.holds, looked up once: it runs on every call
        self._changed = None  # the guard that failed and emptied the cache, for SYMGRAD_EXPLAIN
        self._fresh = False  # True once the function must re-run on every call (reads it cannot guard)
        self._python_ints = False  # True once a trace needed a Python int argument's value
        self._with_values = Recent(STATIC_VALUES_KEPT)  # ((position, type, Python value), ...) -> Compiled of the rest
        self._with_keywords = None  # StaticArgs binding keyword arguments, made on the first call passing some

    def _key(self, args):
        """(validated arrays, signature key). Plain arrays of supported dtypes take the fast path;
        argument names are looked up only to explain a rejected leaf."""
        if all(type(a) is np.ndarray for a in args):  # the common case, without a tree walk
            leaves, tree = args, _flat_tree(len(args))
        else:
            leaves, tree = pytree.flatten(list(args))
        arrays, weak = [], []
        for position, leaf in enumerate(leaves):
            if type(leaf) is not np.ndarray or leaf.dtype not in dtypes.SHORT_NAMES:
                if is_python_number(leaf):
                    weak.append(position)
                leaf = as_input_array(leaf, self._leaf_names(args)[position])
            arrays.append(leaf)
        types = tuple((a.shape, a.dtype) for a in arrays)
        if weak:  # a Python number traces weakly typed: its signature is not a 0-d array's
            types = tuple(t + (WEAK,) if i in weak else t for i, t in enumerate(types))
        return arrays, (tree, types)

    def _leaf_names(self, args) -> list[str]:
        return pytree.leaf_names(list(args), argument_names(self.fn, len(args)))

    def lower(self, *args) -> Lowered:
        """Trace (or reuse) the specialization for these arguments; inspect `.as_text()`, `.source`."""
        self._check_guard()
        _, key = self._key(args)
        return self._lowered(key, args)

    def _check_guard(self):
        """Empty the cache when something the cached traces read has changed since."""
        with _CACHE_LOCK:
            if self._guard is not None and not self._holds():
                self._changed = self._guard  # which read changed is worked out only to explain it
                self._cache.clear()
                self._clears += 1
                self._fast = self._guard = self._holds = None

    def _cached(self, key):
        """The Lowered of signature `key`, now the most recently used (None when it is not cached)."""
        return None if self._fresh else self._cache.used(key)

    def _held(self) -> list:
        """The cache's (key, Lowered) pairs, copied in the order they were first stored. A cache hit on another
        thread moves its signature in the recency order (without the lock: it costs a hash of the key), and a walk
        in that order hashes each key (Python code for a pytree's structure, where the other thread may run): it
        missed signatures moved meanwhile (11 of 40 in test_threads). The dict's own table does not move, and
        copying it runs no Python code."""
        return list(dict.items(self._cache))

    def _install(self, key, lowered, guard) -> None:
        """Cache `lowered`, traced under `guard`, unless what it read has changed since (another thread rebound a
        global during the trace): every cached trace read what the guard in place checks."""
        with _CACHE_LOCK:
            self._check_guard()
            if guard is not None:
                if not guard.holds():
                    return  # this call's result is what its trace read; the next call traces again
                self._guard = guard if len(guard) else None
                self._holds = guard.holds if len(guard) else None
            self._store(key, lowered)

    def _store(self, key, lowered) -> None:
        """Cache `lowered`, evicting the least recently used signatures beyond the limit."""
        self._cache.keep(key, lowered, self._evicted)

    def _evicted(self, key, lowered) -> None:
        """Forget the native entry of an evicted signature, and say so under SYMGRAD_EXPLAIN."""
        if self._fast is not None and self._fast is lowered.fast:
            self._fast = None
        if os.environ.get("SYMGRAD_EXPLAIN") == "1":
            log.warning("symgrad: %s evicted its least recently used signature (%s): it keeps %d "
                        "(max_signatures, SYMGRAD_MAX_SIGNATURES)", self.__name__, _signature_text(key[1]),
                        self._max_signatures)

    def _lowered(self, key, args) -> Lowered:
        lowered = self._cached(key)
        if lowered is None:
            with code_cache.collection_paused():
                lowered = self._traced_and_lowered(key, args)
        return lowered

    def _traced_and_lowered(self, key, args) -> Lowered:
        """Trace, optimize and lower signature `key` (cached unless the function must re-run each call)."""
        if not self._fresh and os.environ.get("SYMGRAD_EXPLAIN") == "1":
            log.warning("symgrad: tracing %s for %s", self.__name__, self._explain(key, self._leaf_names(args)))
        self._changed = None
        check_arguments(self.fn, args)
        # what the trace will read, as it is before the trace: a trace that changes it fails the guard
        guard = None if self._fresh else guards.snapshot(self.fn, values=self._check_values)
        reads = None if self._check_values or guard is None else Reads(guard.arrays)
        draws, states = random_draws(), guards.random_states(guard) if reads is not None else None
        graph, out_tree, captures = trace_flat(self.fn, args, name=self.__name__,
                                               numbers_as_operands=self._check_values, reads=reads)
        if random_draws() != draws:  # (sg.compile refuses a draw: see eager's refuse_draws)
            self._fresh = True
        if states is not None and guards.random_states(guard) != states:
            self._refuse_random_draws(graph, args, guard)
        if captures:
            raise TracerError(f"{self.__name__}: a compiled function cannot close over traced values of an "
                              "enclosing trace; pass them as arguments")
        if reads is not None and (reads.sources or guard.arrays):
            guard = guards.with_reads(guard, reads.sources, reads.sliced)
        if guard is not None and not guard.pure:
            self._go_fresh(guard)
        flat_args = key[0] == _flat_tree(len(key[1]))
        if self._check_values:  # its constants lifted to inputs: a fresh trace reuses the code of its structure
            graph, constants = lift_constants(graph)
            lowered = self._lower(graph, out_tree, flat_args, key, constants=tuple(constants))
        else:
            lowered = self._lower(graph, out_tree, flat_args, key, reads=tuple(reads.sources) if reads else ())
        if not self._fresh:
            self._install(key, lowered, guard)
        return lowered

    def _refuse_random_draws(self, graph, args, guard):
        """A trace that moved a random generator (np.random.normal, random.random, a global Generator) baked in
        its draws, and every call would return them: an error, as for sg.randn (eager's refuse_draws), unless a
        second trace gives the same graph (the function seeds its generator, or another thread drew)."""
        again, _, _ = trace_flat(self.fn, args, name=self.__name__, reads=Reads(guard.arrays))
        if ir.format_graph(again) != ir.format_graph(graph):
            code = getattr(self.fn, "__code__", None)
            users = code is not None and not code.co_filename.startswith(os.path.dirname(__file__))
            where = f" ({code.co_filename}, line {code.co_firstlineno})" if users else ""  # (not static_args' wrapper)
            raise UnsupportedOpError(
                f"{self.__name__}{where} draws random numbers (NumPy's or Python's generators) while sg.compile "
                "traces it: they would be drawn once, when traced, and every call would reuse them; draw outside "
                "the compiled function and pass the values as an argument")

    def _go_fresh(self, guard):
        """Trace at every call: `guard` is impure (check_values mode), the function's reads cannot be guarded."""
        self._fresh = True
        if os.environ.get("SYMGRAD_EXPLAIN") == "1":
            log.warning("symgrad: %s re-runs on every call, because %s", self.__name__, guard.impure_reason)

    def _lower(self, graph, out_tree, flat_args, key, constants=(), reads=()) -> Lowered:
        """Lower the traced graph of signature `key` (its trailing inputs are `constants`, then what `reads` reads),
        or take the code of its structure from the shared cache (code_cache). Its native entry, when it has one,
        takes Python floats where the signature has them (and only there); a signature with a Python int has none."""
        python_floats = tuple(i for i, t in enumerate(key[1]) if t[2:] == (WEAK,) and t[1] == dtypes.FLOAT64)
        code = code_cache.lowered(ir.verify(graph), self._requested_backend, output_structure(out_tree),
                                  python_floats, self._threads, quick=True)
        usable = flat_args and not _takes_python_ints(key)
        return self._signature(code.graph, code.executable, out_tree, usable, constants, reads)

    def _signature(self, graph, executable, out_tree, usable, constants=(), reads=()) -> Lowered:
        """The Lowered of one signature. Its code may be quick (a first call's: emitted fast, code_cache.timed):
        until upgraded, its calls are timed, then `fast` and `call` call the code directly."""
        lowered = Lowered(graph, executable, out_tree, constants=constants, reads=reads)
        fast = fast_entry(executable, out_tree, usable, constants, reads)
        lowered.fast = None if fast is None else code_cache.timed(executable, fast, (lowered, "fast"), (self, "_fast"))
        lowered.call = code_cache.timed(executable, executable, (lowered, "call"))
        return lowered

    def _explain(self, key, names) -> str:
        if self._changed is not None:
            return f"a changed read: {self._changed.failure() or 'a read'} is not what the last trace read"
        if not self._cache:
            return "its first call"
        tree, types = key
        for (old_tree, old_types), _ in self._held():
            if old_tree == tree and len(old_types) == len(types):
                changes = [f"{name} {_type_text(a)} -> {_type_text(b)}"
                           for name, a, b in zip(names, old_types, types) if a != b]
                return "a new signature: " + ", ".join(changes)
        return "a new argument structure"

    def __call__(self, *args, **kwargs):
        holds = self._holds
        if holds is not None and not holds():
            self._check_guard()
        fast = self._fast
        if fast is not None and not kwargs:  # native argument checks, no Python work: about a microsecond
            result = fast(*args)
            if result is not NotImplemented:
                return result
        if kwargs:
            return self._keywords()(*args, **kwargs)
        if current_builder() is not None:  # inside an enclosing trace (sg.jvp(sg.compile(f))): inline, as jax.jit does
            return self.fn(*args)
        positions = python_value_positions(args, self._python_ints)
        if positions:
            return self._call_with_values(args, positions)
        arrays, key = self._key(args)
        clears, lowered = self._clears, self._cached(key)
        if lowered is None:
            try:
                lowered = self._lowered(key, args)
            except ConcretizationError:
                if self._python_ints or not python_value_positions(args, ints=True):
                    raise
                self._python_ints = True  # the trace needs the value of a Python int argument: pass ints as values
                return self._call_with_values(args, python_value_positions(args, ints=True))
            clears = None  # a new trace, the fast path only if it was cached (not when its reads changed meanwhile)
        if lowered.fast is not None and not self._fresh:  # (a function traced at every call has no fast entry)
            self._fast = lowered.fast
            # set first, then checked (no lock on this path): not a trace another thread's guard check dropped since
            dropped = self._cache.get(key) is not lowered if clears is None else self._clears != clears
            if dropped:
                self._fast = None
        return pytree.unflatten(lowered.out_tree, lowered.call(*arrays, *lowered.trailing()))

    def _call_with_values(self, args, positions):
        """Call with the arguments at `positions` as Python values in the trace: compiled once per distinct
        values (the STATIC_VALUES_KEPT most recent kept), as static_argnums would."""
        values = tuple((i, args[i]) for i in positions)
        key = tuple((i, type(value), value) for i, value in values)  # True == 1, but a trace can tell them apart
        try:
            with _CACHE_LOCK:
                compiled = self._with_values.pop(key, None)
        except TypeError:
            i = next(i for i, value in values if not hashable(value))
            name = argument_names(self.fn, len(args))[i]  # (positions of arguments, not of their leaves)
            raise TypeError(f"{self.__name__}: argument {name} is a Python value the trace reads as it is, so it "
                            f"must be hashable; got {type(args[i]).__name__}") from None
        fresh = compiled is None
        if fresh:
            compiled = self._bound_to(values)
        with _CACHE_LOCK:
            self._with_values.keep(key, compiled)
        rest = (a for i, a in enumerate(args) if i not in positions)
        if not fresh:
            return compiled(*rest)
        try:
            return compiled(*rest)
        except TypeError as err:  # say which Python values the failing trace was given
            if isinstance(err, TracerError) or type(err) is not TypeError:
                raise
            names = argument_names(self.fn, len(args))  # (positions of arguments, not of their leaves)
            given = ", ".join(f"argument {names[i]} = {value!r} (a {type(value).__name__})"
                              for i, value in values if type(value) not in (int, bool))
            if not given:
                raise
            raise TypeError(f"{err} [{self.__name__} was traced with {given} as a Python value]") from None

    def _bound_to(self, values) -> "Compiled":
        """The function of the other arguments, the (position, value) pairs `values` put in place."""
        return Compiled(bind_positions(self.fn, values), self._requested_backend, self.__name__,
                        check_values=self._check_values, max_signatures=self._max_signatures, threads=self._threads)

    def _keywords(self) -> StaticArgs:
        """The function taking keyword arguments too: they are bound to fn's parameters by name."""
        if self._with_keywords is None:
            self._with_keywords = StaticArgs(self.fn, lambda inner, _: Compiled(
                inner, self._requested_backend, self.__name__, check_values=self._check_values,
                max_signatures=self._max_signatures, threads=self._threads))
        return self._with_keywords

    def cache_info(self) -> list[str]:
        """The signatures compiled so far, as readable strings."""
        return [_signature_text(types) for (_, types), _ in self._held()]

    def __reduce__(self):
        state = pickling.function_state(self.fn)
        carried = self.carried()
        pickling.check_carries_something(state, self.signature_count(), "the compiled function")
        options = {"backend": self._requested_backend, "name": self.__name__, "check_values": self._check_values,
                   "max_signatures": self._max_signatures, "threads": self._threads}
        return _restore, (state, options, carried)

    def signature_count(self) -> int:
        """The signatures compiled so far, those of the functions compiled per Python values included."""
        with _CACHE_LOCK:
            return len(self._cache) + sum(compiled.signature_count() for compiled in self._with_values.values())

    def carried(self) -> tuple:
        """What a pickle carries of the code compiled so far: each cached signature's (key, graph, executable,
        out_tree, constants), whether Python ints are passed as values, and per such values (that pickle),
        the carried() of the function compiled for them. Traces of a read changed since are dropped first."""
        with _CACHE_LOCK:
            self._check_guard()
            signatures = [(key, lowered.graph, lowered.executable, lowered.out_tree, lowered.trailing())
                          for key, lowered in self._held()]  # what it reads travels as it is now
            with_values = [(key, compiled.carried()) for key, compiled in self._with_values.items()
                           if pickling.picklable(key)]
        return signatures, self._python_ints, with_values

    def carry(self, carried: tuple) -> None:
        """Hold what `carried()` holds (from an unpickled function), without tracing it again."""
        signatures, python_ints, with_values = carried
        for key, graph, executable, out_tree, constants in signatures:
            usable = key[0] == _flat_tree(len(key[1])) and not _takes_python_ints(key)
            self._store(key, self._signature(graph, executable, out_tree, usable, constants))
        self._python_ints |= python_ints
        for key, inner in with_values:
            values = tuple((i, value) for i, _, value in key)
            compiled = self._with_values.setdefault(key, self._bound_to(values))
            compiled.carry(inner)


def _restore(state, options, carried) -> Compiled:
    """An unpickled compiled function: its function as pickle restores it, holding the carried signatures."""
    compiled = Compiled(pickling.restored_function(state), **options)
    compiled.carry(carried)
    return compiled


def fast_entry(executable, out_tree, usable, constants=(), reads=()):
    """The backend's native entry, returning the finished result, when it is `usable` for the signature's
    arguments as they come (flat, no Python int); None when it is not, when the output has lists, dicts or
    None, or when the backend has none. `constants` and then `reads` (see Lowered) follow the arguments."""
    entry = getattr(executable, "entry", None) if usable and output_structure(out_tree) is not None else None
    if all(isinstance(source, np.ndarray) for source in reads):
        constants = (*constants, *reads)  # arrays are read where they are: nothing to fetch per call
    elif entry is not None:
        return lambda *args: entry(*args, *constants, *(concrete_array(source) for source in reads))
    if entry is None or not constants:
        return entry
    return lambda *args: entry(*args, *constants)


def _takes_python_ints(key) -> bool:
    """Whether signature `key` has a Python int argument, which the native entry does not take."""
    return any(t[2:] == (WEAK,) and t[1] != dtypes.FLOAT64 for t in key[1])


def output_structure(tree: pytree.TreeDef):
    """Output indices nested in tuples like `tree` (an int for a single array), or None when
    the tree has lists, dicts or None, which only Python rebuilds."""
    counter = iter(range(tree.num_leaves))

    def walk(node):
        if node.kind == "leaf":
            return next(counter)
        if node.kind != "tuple":
            raise ValueError
        return tuple(walk(child) for child in node.children)
    try:
        return walk(tree)
    except ValueError:
        return None


def _signature_text(types) -> str:
    return ", ".join(_type_text(t) for t in types)


def _type_text(signature_type) -> str:
    shape, dtype = signature_type[:2]
    weak = " (a Python number)" if signature_type[2:] == (WEAK,) else ""
    return f"{dtypes.short_name(dtype)}[{','.join(map(str, shape))}]{weak}"


@functools.lru_cache(maxsize=64)
def _flat_tree(count: int) -> pytree.TreeDef:
    """The treedef of a list of `count` array arguments (what pytree.flatten would build)."""
    return pytree.flatten([0] * count)[1]


def compile(fn=None, *, backend=None, name=None, max_signatures=None, static_argnums=(), static_argnames=(),
            threads=None):
    """Decorator/function: compile `fn` per (shape, dtype) signature with the chosen backend, keeping the
    `max_signatures` most recently used (default: `SYMGRAD_MAX_SIGNATURES`, or 64). Arguments in
    `static_argnums`/`static_argnames` are Python values in the trace, compiled for once per value.
    `threads`: how many threads large loops run on (default: `SYMGRAD_NUM_THREADS`, or the cores), and the
    most LLVM's optimizer uses on a long program; results are the same, bit for bit, for any number (but for
    matrix products, which are OpenBLAS's on as many threads)."""
    if fn is None:
        return lambda f: compile(f, backend=backend, name=name, max_signatures=max_signatures,
                                 static_argnums=static_argnums, static_argnames=static_argnames, threads=threads)
    if has_static(static_argnums, static_argnames):
        options = {"backend": backend, "name": name, "max_signatures": max_signatures,
                   "static_argnums": static_argnums, "static_argnames": static_argnames, "threads": threads}
        return StaticArgs(fn, lambda inner, _: Compiled(inner, backend, name, max_signatures=max_signatures,
                                                        threads=threads),
                          static_argnums, static_argnames, recipe=(compile, options))
    return Compiled(fn, backend, name, max_signatures=max_signatures, threads=threads)
