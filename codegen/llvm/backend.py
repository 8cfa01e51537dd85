"""Lowering a graph: one native kernel plus a CPython entry point, JIT-compiled.

`lower(graph, structure)` plans and emits the kernel (kernel.py), wraps it in an entry
that checks arguments and allocates outputs natively (pyentry.py), and compiles both
at O3 for the host CPU, through the on-disk object cache (jit.py).
"""
from __future__ import annotations

import re

import numpy as np
from llvmlite import ir

from symgrad.codegen import runtime
from symgrad import ir as sir

from . import blas, callbacks, heap, jit, pool, pyentry
from .kernel import KernelBuilder


class LlvmExecutable:
    """A graph compiled to native code.

    `entry(*arrays)` is the native builtin: it returns the outputs in `structure` (fresh
    arrays), or NotImplemented for arguments it does not take as they are (the caller
    converts them, or reports them). Calling the executable itself takes any arrays of the
    right shapes and dtypes and returns the flat list of outputs.
    """

    def __init__(self, graph: sir.Graph, llvm_ir: str, entry, structure):
        self.graph = graph
        self.llvm_ir = llvm_ir
        self.entry = entry
        self.structure = structure

    def optimized_ir(self) -> str:
        return jit.optimized_ir(self.llvm_ir.replace(jit.PLACEHOLDER, "symgrad_"))

    def __call__(self, *arrays):
        contiguous = [np.asarray(a, dtype=v.dtype, order="C") for a, v in zip(arrays, self.graph.inputs)]
        result = self.entry(*contiguous)
        if result is NotImplemented:  # e.g. misaligned data: fresh copies are aligned
            contiguous = [np.array(a, dtype=v.dtype, order="C") for a, v in zip(arrays, self.graph.inputs)]
            result = self.entry(*contiguous)
        if result is NotImplemented:
            types = ", ".join(f"{a.dtype}{list(a.shape)}" for a in contiguous)
            expected = ", ".join(v.type_str() for v in self.graph.inputs)
            raise TypeError(f"{self.graph.name}: compiled for ({expected}), called with ({types})")
        flat = []
        _flatten(self.structure, result, flat)
        return flat


def _flatten(structure, result, flat):
    if isinstance(structure, int):
        flat.append(result)
        return
    for child, item in zip(structure, result):
        _flatten(child, item, flat)


def lower(graph: sir.Graph, structure=None, threads: int = 1) -> LlvmExecutable:
    """Compile `graph`. `structure` nests output indices in tuples as the entry should return
    them (an int returns one array); by default a flat tuple of all outputs. `threads`: how many
    threads run a large loop nest (the results are the same for any number)."""
    if structure is None:
        structure = tuple(range(len(graph.outputs)))
    module = ir.Module(name=re.sub(r"[^0-9A-Za-z_.]", "_", graph.name))  # printed unquoted in the IR text
    jit.configure(module)
    kernel = KernelBuilder(graph, module, jit.PLACEHOLDER + "kernel", threads=threads)
    function = kernel.build()
    pyentry.emit_entry(module, function, jit.PLACEHOLDER + "entry",
                       [(v.shape, v.dtype) for v in graph.inputs], [(v.shape, v.dtype) for v in graph.outputs],
                       structure, [(runtime.exception_name(message), message) for message in kernel.errors],
                       release_gil=kernel.releases_gil)
    text = str(module)
    symbols = {**runtime.symbol_addresses(), **blas.addresses(), **heap.addresses(), **callbacks.addresses(module),
               **(pool.addresses() if {pool.SYMBOL, pool.BLAS_THREADS} & set(module.globals) else {})}
    native = jit.load(text, ["entry"], symbols, kernel.slots)
    entry = runtime.make_builtin(native.addresses["entry"], graph.name, owner=native)  # the code lives as long as entry
    return LlvmExecutable(graph, text, entry, structure)
