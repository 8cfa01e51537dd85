"""LLVM IR text -> native functions in this process: O3 for the host CPU, one MCJIT engine,
and an on-disk cache of object code so a new process does not pay for LLVM again.

The cache key hashes the IR text, the host CPU and its features, and the versions of
symgrad and llvmlite. Entries are written to a temporary file and renamed into place
(atomic against concurrent writers) and carry a SHA-256 of their bytes, so a torn or
corrupt file is recompiled, never loaded. `SYMGRAD_CACHE=0` turns the disk cache off;
`SYMGRAD_CACHE_DIR` moves it (default: ~/.cache/symgrad).
"""
from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import tempfile
import threading

import llvmlite
import llvmlite.binding as llvm

from symgrad import __version__ as symgrad_version

PLACEHOLDER = "SYMGRAD_"  # function names are written with this prefix, made unique per module at load
_lock = threading.Lock()
_loaded: dict[str, dict[str, int]] = {}
_pinned: list = []  # arrays that loaded code points to


@functools.cache
def _initialized() -> bool:
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    return True


def target_machine(reloc: str = "default", cpu: str | None = None):
    """A target machine at O3 for the host CPU with all its features, or for the named `cpu`
    (e.g. "generic", "x86-64-v3") with that CPU's features only."""
    _initialized()
    target = llvm.Target.from_default_triple()
    features = ""
    if cpu is None:
        cpu, features = llvm.get_host_cpu_name(), llvm.get_host_cpu_features().flatten()
    return target.create_target_machine(cpu=cpu, features=features, opt=3, reloc=reloc)


@functools.cache
def _emitter():
    return target_machine()


@functools.cache
def _engine():
    return llvm.create_mcjit_compiler(llvm.parse_assembly(""), target_machine())


def configure(module) -> None:
    """Give an llvmlite.ir module the host's triple and data layout (the vectorizer needs them)."""
    machine = _emitter()
    module.triple = machine.triple
    module.data_layout = str(machine.target_data)


def optimize(module, machine) -> None:
    """The new pass builder's O3 pipeline, with loop and SLP vectorization, in place."""
    options = llvm.create_pipeline_tuning_options(speed_level=3)
    options.loop_vectorization = True
    options.slp_vectorization = True
    options.loop_unrolling = False
    builder = llvm.create_pass_builder(machine, options)
    builder.getModulePassManager().run(module, builder)


def object_code(ir_text: str, machine=None) -> bytes:
    """Parse, verify, optimize and compile IR text to an object file."""
    machine = machine or _emitter()
    module = llvm.parse_assembly(ir_text)
    module.verify()
    optimize(module, machine)
    return machine.emit_object(module)


def optimized_ir(ir_text: str) -> str:
    """The IR after the O3 pipeline, for inspection (`lower(...).llvm_ir`)."""
    module = llvm.parse_assembly(ir_text)
    optimize(module, _emitter())
    return str(module)


def standalone_engine(ir_text: str, symbols: dict[str, int]):
    """An engine of its own holding one module optimized at O3 (its names need not be unique):
    for tests and tools that build modules by hand. Keep the engine alive while its code runs."""
    for symbol, address in symbols.items():
        llvm.add_symbol(symbol, address)
    module = llvm.parse_assembly(ir_text)
    module.verify()
    machine = target_machine()
    optimize(module, machine)
    engine = llvm.create_mcjit_compiler(module, machine)
    engine.finalize_object()
    return engine


def cache_key(ir_text: str) -> str:
    _initialized()
    parts = [ir_text, llvm.get_host_cpu_name(), llvm.get_host_cpu_features().flatten(),
             symgrad_version, llvmlite.__version__]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def load(ir_text: str, names: list[str], symbols: dict[str, int], slots: dict | None = None) -> dict[str, int]:
    """Addresses of the functions `names` (written as PLACEHOLDER + name in ir_text), compiled or
    fetched from the caches. `symbols` are the external addresses the code links against;
    `slots` maps pointer globals (PLACEHOLDER + name) to the arrays they point to, which stay
    alive as long as the code (the process)."""
    key = cache_key(ir_text)
    with _lock:
        if key not in _loaded:
            for symbol, address in symbols.items():
                llvm.add_symbol(symbol, address)
            prefix = f"sg{key[:20]}_"
            text = ir_text.replace(PLACEHOLDER, prefix)
            code = _read_cache(key)
            if code is None:
                code = object_code(text)
                _write_cache(key, code)
            engine = _engine()
            engine.add_object_file(llvm.ObjectFileRef.from_data(code))
            engine.finalize_object()
            _loaded[key] = {name: engine.get_function_address(prefix + name) for name in names}
            for name, array in (slots or {}).items():
                ctypes.c_void_p.from_address(engine.get_global_value_address(prefix + name)).value = array.ctypes.data
                _pinned.append(array)
        return _loaded[key]


# ----------------------------------------------------------------------------- the disk cache

def _cache_dir() -> str | None:
    if os.environ.get("SYMGRAD_CACHE", "1") == "0":
        return None
    root = os.environ.get("SYMGRAD_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "symgrad")
    return os.path.join(root, "llvm")


def _read_cache(key: str) -> bytes | None:
    directory = _cache_dir()
    if directory is None:
        return None
    try:
        with open(os.path.join(directory, key + ".o"), "rb") as f:
            blob = f.read()
    except OSError:
        return None
    digest, code = blob[:32], blob[32:]
    return code if hashlib.sha256(code).digest() == digest else None


def _write_cache(key: str, code: bytes) -> None:
    directory = _cache_dir()
    if directory is None:
        return
    try:
        os.makedirs(directory, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=directory, suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(hashlib.sha256(code).digest() + code)
        os.replace(temporary, os.path.join(directory, key + ".o"))
    except OSError:  # a read-only or full disk only costs the next process a compile
        pass
