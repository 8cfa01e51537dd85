"""Lowering a graph: one native kernel plus a CPython entry point, JIT-compiled.

`lower(graph, structure)` plans and emits the kernel (kernel.py), wraps it in an entry
that checks arguments and allocates outputs natively (pyentry.py), and compiles both
at O3 for the host CPU, through the on-disk object cache (jit.py). An executable pickles
as its graph and the object code it runs (`restore`).
"""
from __future__ import annotations

import logging
import re
import threading
import weakref
from dataclasses import dataclass

import numpy as np
from llvmlite import ir

from symgrad.codegen import runtime
from symgrad import ir as sir

from . import blas, callbacks, heap, jit, lapack, mathlib, pool, pyentry
from .kernel import KernelBuilder

log = logging.getLogger("symgrad")
_upgrading = threading.Lock()
# What upgrading quick code costs per byte of its IR text (emitting it fully optimized: 0.33 s for 554 kB, 0.03 s
# for 50 kB on a 2-core x86-64 with AVX-512): the time its calls may take before it is upgraded (`ran`)...
UPGRADE_SECONDS_PER_BYTE = 6e-7
# ...and the most calls it serves (quick code is about 1.3x slower: a training loop's step of a few microseconds
# of native code would otherwise take thousands of steps to earn it)
UPGRADE_CALLS = 64


@dataclass(frozen=True)
class CarriedCode:
    """Object code a pickled executable carries: what it was compiled for (jit.host_target()), its
    cache key, and the object. It holds no address of the process that compiled it (runtime.py)."""

    target: tuple
    key: str
    code: bytes


class LlvmExecutable:
    """A graph compiled to native code.

    `entry(*arrays)` is the native builtin: it returns the outputs in `structure` (fresh
    arrays), or NotImplemented for arguments it does not take as they are (the caller
    converts them, or reports them). Calling the executable itself takes any arrays of the
    right shapes and dtypes and returns the flat list of outputs.
    """

    def __init__(self, graph: sir.Graph, llvm_ir: str, entry, structure, python_floats=(), threads=1, native=None,
                 slots=None):
        self.graph = graph
        # the loaded modules (jit.JitModule) whose code entry called, the last the one it calls (quick code, then
        # upgraded: see `upgrade`), shared by the holders' copies (`for_holder`)
        self.natives = [] if native is None else [native]
        self.slots = slots  # the kernel's pointer globals (jit.load's), which its upgraded code gets too
        self.quick_seconds, self.quick_calls = 0.0, 0  # how long the calls of quick code took, how many (`ran`)
        self.llvm_ir = llvm_ir
        self.entry = entry
        self.structure = structure
        self.python_floats = python_floats  # inputs the entry takes as Python floats
        self.threads = threads  # how many threads its large loops run on

    def for_holder(self) -> LlvmExecutable:
        """This executable for one more holder of its code (the code cache gives one code to every path lowering
        its graph): a copy whose dropping frees the blocks the code keeps from call to call, so that memory
        lives as long as what calls the code, not as long as the cache keeps it (the next call of another holder
        allocates them again)."""
        if self.native is None or "release" not in self.native.addresses:
            return self  # nothing kept: one executable serves all
        held = LlvmExecutable(self.graph, self.llvm_ir, self.entry, self.structure, self.python_floats, self.threads,
                              None, self.slots)
        held.natives = self.natives
        weakref.finalize(held, _release_kept, self.natives).atexit = False
        return held

    @property
    def native(self):
        """The loaded module (jit.JitModule) whose code the entry calls."""
        return self.natives[-1] if self.natives else None

    @property
    def quick(self) -> bool:
        """Whether the entry calls quick code (not yet `upgrade`d)."""
        native = self.native
        return native is not None and native.quick

    def ran(self, seconds: float) -> bool:
        """Note that a call took `seconds`; quick code whose calls took as long as upgrading it takes, or that made
        UPGRADE_CALLS calls, is upgraded. Whether the code is still quick."""
        if self.native is None or not self.native.quick:
            return False
        self.quick_seconds += seconds
        self.quick_calls += 1
        if self.quick_seconds >= len(self.llvm_ir) * UPGRADE_SECONDS_PER_BYTE or self.quick_calls >= UPGRADE_CALLS:
            self.upgrade()
        return self.native.quick

    def upgrade(self) -> None:
        """Replace quick code (`lower`'s) by the fully optimized code of the same IR, which returns the same bits
        faster, for every holder of the entry: for code that runs again."""
        with _upgrading:  # threads whose calls upgrade it at once: one upgrades, the others then find it done
            quick = self.native
            if quick is None or not quick.quick:
                return
            self._upgrade(quick)

    def _upgrade(self, quick) -> None:
        native = jit.upgraded(self.llvm_ir, [name for name in ("entry", "release") if name in quick.addresses],
                              self.slots, quick)
        # every module it called stays: a call may be running in quick's
        runtime.retarget(self.entry, native.addresses["entry"], (*self.natives, native))
        self.natives.append(native)
        quick.release_kept()

    def optimized_ir(self) -> str:
        return jit.optimized_ir(self.llvm_ir.replace(jit.PLACEHOLDER, "symgrad_"))

    def __call__(self, *arrays):
        contiguous = [np.asarray(a, dtype=v.dtype, order="C") for a, v in zip(arrays, self.graph.inputs)]
        result = self.entry(*self._entry_arguments(contiguous))
        if result is NotImplemented:  # e.g. misaligned data: fresh copies are aligned
            contiguous = [np.array(a, dtype=v.dtype, order="C") for a, v in zip(arrays, self.graph.inputs)]
            result = self.entry(*self._entry_arguments(contiguous))
        if result is NotImplemented:
            types = ", ".join(f"{a.dtype}{list(a.shape)}" for a in contiguous)
            expected = ", ".join(v.type_str() for v in self.graph.inputs)
            raise TypeError(f"{self.graph.name}: compiled for ({expected}), called with ({types})")
        flat = []
        _flatten(self.structure, result, flat)
        return flat

    def _entry_arguments(self, arrays) -> list:
        """`arrays` as the entry takes them: Python floats at `python_floats`."""
        if not self.python_floats:
            return arrays
        return [float(a) if i in self.python_floats else a for i, a in enumerate(arrays)]

    def __reduce__(self):
        self.upgrade()  # a pickle carries the fully optimized code (quick code is this process's stopgap)
        loaded = jit.loaded_object(self.llvm_ir)
        carried = None if loaded is None else CarriedCode(jit.host_target(), *loaded)
        return restore, (self.graph, self.structure, carried, self.python_floats, self.threads)


def _release_kept(natives) -> None:
    """Free the blocks the loaded modules `natives` keep from call to call (see jit.JitModule.release_kept)."""
    for native in natives:
        native.release_kept()


def restore(graph: sir.Graph, structure, carried: CarriedCode | None, python_floats=(), threads=1) -> LlvmExecutable:
    """An unpickled executable: `graph` lowered again (the kernel's IR is rebuilt in Python, which is
    cheap), linked to the carried object code when it was compiled for this CPU and these versions and
    is the code of that IR; compiled by LLVM from the graph otherwise."""
    if carried is None or carried.target != jit.host_target():
        if carried is not None:
            log.info("symgrad: %s was pickled with code for %s; compiling it for %s", graph.name, carried.target,
                     jit.host_target())
        return lower(graph, structure, python_floats, threads)
    with jit.offering(carried.key, carried.code):
        return lower(graph, structure, python_floats, threads)


def _flatten(structure, result, flat):
    if isinstance(structure, int):
        flat.append(result)
        return
    for child, item in zip(structure, result):
        _flatten(child, item, flat)


def _release(module: ir.Module) -> None:
    """Take apart an llvmlite module once its text is made, so reference counting frees it now: its
    instructions, blocks, functions and the module refer to each other, and left to the cyclic collector
    (paused while a trace is compiled) a 10,000-node kernel's were 0.35 s of its first call."""
    for function in module.functions:
        for block in function.blocks:
            for instruction in block.instructions:
                instruction.__dict__.clear()
            block.__dict__.clear()
        for argument in function.args:
            argument.__dict__.clear()
        function.__dict__.clear()
    module.globals.clear()


def lower(graph: sir.Graph, structure=None, python_floats=(), threads: int = 1, quick: bool = False) -> LlvmExecutable:
    """Compile `graph`. `structure` nests output indices in tuples as the entry should return
    them (an int returns one array); by default a flat tuple of all outputs. The entry takes a
    Python float, and only that, at the input positions `python_floats` (weakly typed scalars).
    `threads`: how many threads run a large loop nest (the results are the same for any number), and the most
    LLVM's optimizer uses. `quick`: code that may run only once or twice, its machine code emitted quickly
    (jit.py) until `upgrade`."""
    if structure is None:
        structure = tuple(range(len(graph.outputs)))
    module = ir.Module(name=re.sub(r"[^0-9A-Za-z_.]", "_", graph.name))  # printed unquoted in the IR text
    jit.configure(module)
    kernel = KernelBuilder(graph, module, jit.PLACEHOLDER + "kernel", threads=threads,
                           release=jit.PLACEHOLDER + "release")
    function = kernel.build()
    if kernel.array_kernel is not None:  # the entry calls that instead: unused, the C kernel of 2N pointers is dropped
        function.linkage = "internal"
    pyentry.emit_entry(module, function, jit.PLACEHOLDER + "entry",
                       [(v.shape, v.dtype) for v in graph.inputs], [(v.shape, v.dtype) for v in graph.outputs],
                       structure, [(runtime.exception_name(message), message) for message in kernel.errors],
                       python_floats=python_floats, release_gil=kernel.releases_gil, array_kernel=kernel.array_kernel)
    text = str(module)
    symbols = {**runtime.symbol_addresses(), **blas.addresses(), **lapack.addresses(), **heap.addresses(),
               **callbacks.addresses(module), **mathlib.libm_addresses(module),
               **(pool.addresses() if {pool.SYMBOL, pool.BLAS_THREADS} & set(module.globals) else {})}
    _release(module)
    native = jit.load(text, ["entry"] + ["release"] * bool(kernel.kept), symbols, kernel.slots, threads, quick)
    entry = runtime.make_builtin(native.addresses["entry"], graph.name, owner=native)  # the code lives as long as entry
    return LlvmExecutable(graph, text, entry, structure, python_floats, threads, native, kernel.slots)
