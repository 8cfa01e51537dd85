"""Kernels -> a position-independent shared library, for ahead-of-time artifacts (symgrad.aot).

A `SharedLibrary` collects kernels (C entry points `i32 name(ptr in..., ptr out...)`), and
for Python their native CPython entries, in one module compiled for a named CPU, embeds
strings, and links the object code with the system C compiler. Matrix products go through exported gemm pointer slots that a loader
may fill (runtime.blas_addresses), sg.linalg's factorizations through LAPACK pointer slots it must fill
(runtime.lapack_addresses), and large constants are compiled in, so the library
needs only libc and libm; a kernel that would call SciPy (callbacks.py) is refused.
"""
from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import tempfile

import llvmlite.binding as llvm
from llvmlite import ir

from symgrad.codegen import runtime
from symgrad.ops import special

from . import callbacks, jit, lapack, pool, pyentry
from .kernel import KernelBuilder

# The /proc/cpuinfo flags code for each named CPU relies on (host: from LLVM's feature list).
CPU_FLAGS = {
    "generic": [],
    "x86-64-v3": ["abm", "avx", "avx2", "bmi1", "bmi2", "cx16", "f16c", "fma", "movbe", "pni", "popcnt", "sse4_1",
                  "sse4_2", "ssse3"],
}
# LLVM features that change generated code, and the /proc/cpuinfo flag showing each.
CPUINFO_FLAGS = {
    "sse3": "pni", "ssse3": "ssse3", "sse4.1": "sse4_1", "sse4.2": "sse4_2", "popcnt": "popcnt", "avx": "avx",
    "avx2": "avx2", "fma": "fma", "f16c": "f16c", "bmi": "bmi1", "bmi2": "bmi2", "lzcnt": "abm", "movbe": "movbe",
    "avx512f": "avx512f", "avx512dq": "avx512dq", "avx512bw": "avx512bw", "avx512vl": "avx512vl",
    "avx512cd": "avx512cd", "avx512vbmi": "avx512vbmi", "avx512ifma": "avx512ifma",
}


class SharedLibrary:
    """One module of C entry points for `cpu` ("generic", "x86-64-v3" or "host")."""

    def __init__(self, name: str, cpu: str):
        self.cpu = cpu
        self.machine = jit.target_machine(reloc="pic", cpu=None if cpu == "host" else cpu)
        self.module = ir.Module(name=name)
        self.module.triple, self.module.data_layout = self.machine.triple, str(self.machine.target_data)
        self.errors: list[str] = []  # shared by the kernels: an error number means the same in each
        pool.emit_serial(self.module)  # a library starts no threads: chunks of large loops run on the caller's
        self.runtime_table = None
        self._gil_free = set()  # names of the kernels whose Python entries release the GIL
        self._array_kernels = {}  # name of a kernel of many arguments -> its function taking them in an array

    def add_kernel(self, graph, symbol: str) -> ir.Function:
        kernel = KernelBuilder(graph, self.module, symbol, blas_calls="slots", embed_constants=True)
        kernel.errors = self.errors
        function = kernel.build()
        if kernel.releases_gil:
            self._gil_free.add(function.name)
        if kernel.array_kernel is not None:
            self._array_kernels[function.name] = kernel.array_kernel
        if callbacks.used(self.module):  # SciPy's code lives in this process only
            raise special.not_standalone(callbacks.used(self.module))
        return function

    def add_python_entry(self, kernel: ir.Function, graph, symbol: str, structure) -> None:
        """A CPython entry point for `kernel` (the JIT's native argument checks, see pyentry),
        reaching CPython and NumPy through `runtime_table`, which the Python loader fills; a kernel of many
        arguments it calls with them in an array, as the JIT's entry does.
        Add it after every kernel, so it knows every error number."""
        if self.runtime_table is None:
            self.runtime_table = pyentry.runtime_table(self.module, f"{self.module.name}_python_runtime")
        pyentry.emit_entry(self.module, kernel, symbol, [(v.shape, v.dtype) for v in graph.inputs],
                           [(v.shape, v.dtype) for v in graph.outputs], structure,
                           [(runtime.exception_name(message), message) for message in self.errors],
                           table=self.runtime_table, release_gil=kernel.name in self._gil_free,
                           array_kernel=self._array_kernels.get(kernel.name))

    @property
    def runtime_symbols(self) -> tuple:
        """The names whose addresses the runtime table holds, in order."""
        return pyentry.SYMBOLS

    def blas_slots(self) -> dict:
        """gemm name -> the exported pointer symbol a loader may set."""
        prefix = self.module.name + "_blas_"
        return {name[len(prefix):]: name for name in self.module.globals if name.startswith(prefix)}

    def lapack_slots(self) -> dict:
        """LAPACK routine name -> the exported pointer symbol a loader sets (null: the call is an error)."""
        return lapack.slots(self.module)

    def target(self) -> dict:
        """The triple, CPU name and the /proc/cpuinfo flags the code relies on."""
        if self.cpu == "host":
            features = llvm.get_host_cpu_features()
            cpu = llvm.get_host_cpu_name()
            requires = sorted(flag for feature, flag in CPUINFO_FLAGS.items() if features.get(feature))
        else:
            cpu, requires = self.cpu, CPU_FLAGS[self.cpu]
        return {"triple": self.machine.triple, "cpu": cpu, "requires": requires}

    def embed_string(self, name: str, text: str) -> None:
        """An exported, NUL-terminated constant char array `name` holding `text`."""
        data = bytearray(text.encode()) + b"\0"
        array = ir.ArrayType(ir.IntType(8), len(data))
        variable = ir.GlobalVariable(self.module, array, name)
        variable.global_constant = True
        variable.initializer = ir.Constant(array, data)

    def link(self, soname: str) -> bytes:
        """The shared library named `soname`, compiled (O3) and linked with the system C compiler ($CC,
        default cc); the caller writes it."""
        code = jit.object_code(str(self.module), self.machine)
        compiler = shlex.split(os.environ.get("CC", "cc"))
        if shutil.which(compiler[0]) is None:
            raise RuntimeError(f"symgrad compile --backend llvm needs a C compiler to link the shared library "
                               f"({compiler[0]!r} not found; set CC), or use --backend numpy")
        with tempfile.TemporaryDirectory() as scratch:
            obj, linked = os.path.join(scratch, "code.o"), os.path.join(scratch, "lib.so")
            with open(obj, "wb") as f:
                f.write(code)
            command = [*compiler, "-shared", "-o", linked, obj, "-lm", "-Wl,-z,noexecstack",
                       "-Wl,-soname," + soname]  # found by name (rpath), not by build path
            result = subprocess.run(command, capture_output=True, text=True)
            if result.returncode != 0:
                raise RuntimeError(f"linking failed: {' '.join(command)}\n{result.stderr}")
            with open(linked, "rb") as f:
                return f.read()
