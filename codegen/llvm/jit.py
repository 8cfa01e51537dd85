"""LLVM IR text -> native functions in this process: O3 for the host CPU, an MCJIT engine per module,
and an on-disk cache of object code so a new process does not pay for LLVM again.

Two tiers of code generation, from one optimized module: code that may run only once or twice (an eager step's
first captures) is emitted `quick`ly, without machine-code optimization (fast instruction selection and register
allocation: a sixth of the time), and `upgrade`d to fully optimized machine code from the same optimized IR once it
runs again, as JITs tier up hot code. The IR optimizations, which fix what is computed in which order, are the same
for both: the tiers return the same bits.

The cache key hashes the IR text, the host CPU and its features, and the versions of
symgrad and llvmlite; the disk cache's trust rules are in disk_cache.py. An object read from
it is checked (elf.py) before LLVM parses it, must define a constant holding its key, and is
recompiled (and the entry overwritten) otherwise. Each loaded object gets an engine of its own,
owned by a JitModule: its code and the arrays it points to live as long as that object, which
the native entry points made from it hold.
"""
from __future__ import annotations

import contextlib
import ctypes
import functools
import hashlib
import logging
import os
import sys
import threading
import weakref

import llvmlite
import llvmlite.binding as llvm
from llvmlite.binding import ffi

from symgrad import __version__ as symgrad_version

from . import disk_cache, elf, shards
from .mathlib import INLINED_AFTER_VECTORIZING

PLACEHOLDER = "SYMGRAD_"  # function names are written with this prefix, made unique per module at load
KEY_SYMBOL = "cache_key"  # PLACEHOLDER + this names the constant holding a module's cache key
QUICK = "-quick"  # a module's key + this: where its quick code is kept (in this process and on disk)
log = logging.getLogger("symgrad")
_lock = threading.RLock()  # one compile or load at a time (reentrant: load asks _reference_object)
_loaded: "weakref.WeakValueDictionary[str, JitModule]" = weakref.WeakValueDictionary()  # key -> live module
_offered: dict[str, bytes] = {}  # key -> object code a caller carries (an unpickled function), tried before disk


@functools.cache
def _initialized() -> bool:
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    # Instruction selection merges the token factors ordering a block's memory operations up to 2,048 operands (LLVM's
    # default), each merge walking all of them: a block of 1,600 loads after a few stores (the sum of 1,600 scalars
    # a gradient of 1,600 leaves ends with) took 1.5 s, quadratic. Past 256 it leaves them unmerged.
    llvm.set_option("symgrad", "-combiner-tokenfactor-inline-limit=256")
    return True


@functools.cache
def _host() -> tuple[str, str]:
    """The host CPU's name and features (asking LLVM costs most of a target machine's creation)."""
    _initialized()
    return llvm.get_host_cpu_name(), llvm.get_host_cpu_features().flatten()


def target_machine(reloc: str = "default", cpu: str | None = None):
    """A target machine at O3 for the host CPU with all its features, or for the named `cpu`
    (e.g. "generic", "x86-64-v3") with that CPU's features only."""
    _initialized()
    target = llvm.Target.from_default_triple()
    features = ""
    if cpu is None:
        cpu, features = _host()
    return target.create_target_machine(cpu=cpu, features=features, opt=3, reloc=reloc)


def host_target() -> tuple[str, str, str, str]:
    """What object code is compiled for, besides its IR: the host CPU, its features, symgrad's and
    llvmlite's versions (the parts of every cache key that are not the IR)."""
    return (*_host(), symgrad_version, llvmlite.__version__)


@functools.cache
def _emitter():
    return target_machine()


@functools.cache
def _quick_emitter():
    """The host's target machine without machine-code optimization (for code emitted `quick`ly)."""
    _initialized()
    cpu, features = _host()
    return llvm.Target.from_default_triple().create_target_machine(cpu=cpu, features=features, opt=0)


@functools.cache
def _reference_object() -> bytes:
    """An object this process emits (of an empty module): the ELF class, byte order and machine to expect."""
    with _lock:
        return _emitter().emit_object(llvm.parse_assembly(""))


def configure(module) -> None:
    """Give an llvmlite.ir module the host's triple and data layout (the vectorizer needs them)."""
    machine = _emitter()
    module.triple = machine.triple
    module.data_layout = str(machine.target_data)


_INLINED_PREFIXES = tuple(f"symgrad.{name}." for name in INLINED_AFTER_VECTORIZING)


def optimize(module, machine, run=lambda manager, module, builder: manager.run(module, builder)) -> None:
    """The new pass builder's O3 pipeline, with loop and SLP vectorization, in place. `run(manager, module,
    builder)` runs a pass manager (see _run_unlocked)."""
    options = llvm.create_pipeline_tuning_options(speed_level=3)
    options.loop_vectorization = True
    options.slp_vectorization = True
    options.loop_unrolling = False
    builder = llvm.create_pass_builder(machine, options)
    run(builder.getModulePassManager(), module, builder)
    if any(f.name.startswith(_INLINED_PREFIXES) for f in module.functions):
        after = llvm.create_new_module_pass_manager()
        after.add_always_inliner_pass()
        after.add_simplify_cfg_pass()
        run(after, module, builder)


def _unlocked_pass_runner():
    """The C function running a module pass manager, without the wrapper that takes llvmlite's global lock
    (which serializes every call into LLVM): LLVM runs passes on modules of different contexts, with target
    machines of their own, in parallel, and the ctypes call releases the GIL. llvmlite has no public call for
    it; its library object stands in for a ctypes.CDLL, so ctypes finds the function in it, typed as
    llvmlite's wrapper types it (None when that fails: then no threads)."""
    name = "LLVMPY_RunNewModulePassManager"
    typed = getattr(ffi.lib, name)
    try:
        return ctypes.CFUNCTYPE(typed.restype, *typed.argtypes)((name, ffi.lib))
    except (AttributeError, TypeError, OSError):
        return None


_RUN_UNLOCKED = _unlocked_pass_runner()


def _run_unlocked(manager, module, builder) -> None:
    _RUN_UNLOCKED(manager, module, builder)


# Threads optimizing a long kernel's shards at once (object code does not depend on how many cores run them).
OPTIMIZER_THREADS = 2


@contextlib.contextmanager
def _parsed(ir_text: str):
    """The module of `ir_text`, in an LLVM context of its own: the types and constants it interns are
    freed with it instead of accumulating in the global context for the life of the process."""
    context = llvm.create_context()
    module = llvm.parse_assembly(ir_text, context)
    try:
        yield module
    finally:
        module.close()
        context.close()


def object_code(ir_text: str, machine=None, threads: int | None = None) -> bytes:
    """Parse, verify, optimize and compile IR text to an object file (see _optimized)."""
    machine = machine or _emitter()
    with _optimized(ir_text, machine, threads) as (module, long):
        return _emitted(module, machine, long)


def quick_object_code(ir_text: str, threads: int | None = None) -> tuple[bytes, tuple[bytes, bool]]:
    """The object of `ir_text` for the host, its IR optimized as object_code's but emitted without machine-code
    optimization, and (the optimized module's bitcode, whether it is a long kernel's): what
    `upgraded_object_code` emits fully optimized."""
    with _optimized(ir_text, _emitter(), threads) as (module, long):
        bitcode = module.as_bitcode()  # (before code generation, whose own IR passes change the module)
        return _emitted(module, _quick_emitter(), long), (bitcode, long)


def upgraded_object_code(optimized: tuple[bytes, bool]) -> bytes:
    """The object of an optimized module (quick_object_code's bitcode and length) emitted fully optimized."""
    bitcode, long = optimized
    context = llvm.create_context()
    module = llvm.parse_bitcode(bitcode, context)
    try:
        return _emitted(module, _emitter(), long)
    finally:
        module.close()
        context.close()


def _emitted(module, machine, long: bool) -> bytes:
    """The object code of an optimized module; a long kernel's without loop strength reduction."""
    with _without_loop_strength_reduction() if long else contextlib.nullcontext():
        return machine.emit_object(module)


@contextlib.contextmanager
def _optimized(ir_text: str, machine, threads: int | None):
    """The module of `ir_text`, verified and optimized, and whether it is a long kernel's. A long kernel for the
    host (`machine` the emitter) is optimized in shards on OPTIMIZER_THREADS threads at once, or `threads` if fewer
    (see shards.py), and compiled without loop strength reduction however many threads optimize it."""
    long = machine is _emitter() and shards.is_long(ir_text)
    count = min(threads or OPTIMIZER_THREADS, OPTIMIZER_THREADS)
    texts = shards.split(ir_text, count) if long and count > 1 and _RUN_UNLOCKED is not None else None
    if texts is not None:
        with _sharded(texts, machine) as module:
            yield module, long
        return
    with _parsed(ir_text) as module:
        module.verify()
        optimize(module, machine)
        yield module, long


@contextlib.contextmanager
def _sharded(texts: list[str], machine):
    """The module the shard `texts` make: each optimized on a thread of its own (a context and a target machine
    of its own), then linked into the first for one code generation."""
    with _lock, contextlib.ExitStack() as stack:  # _lock: os.fork() waits for the unlocked passes too
        contexts, modules = [], []
        for text in texts:
            contexts.append(llvm.create_context())
            stack.callback(contexts[-1].close)
            modules.append(llvm.parse_assembly(text, contexts[-1]))
            stack.callback(modules[-1].close)  # closed before its context
            modules[-1].verify()
        machines = [machine] + [target_machine() for _ in modules[1:]]
        failures = []

        def work(module, machine):
            try:
                optimize(module, machine, _run_unlocked)
            except BaseException as error:  # re-raised on the calling thread
                failures.append(error)
        threads = [threading.Thread(target=work, args=pair, daemon=True) for pair in zip(modules[1:], machines[1:])]
        for thread in threads:
            thread.start()
        try:
            work(modules[0], machine)
        finally:  # the modules are closed only once no thread is optimizing them
            for thread in threads:
                thread.join()
        if failures:
            raise failures[0]
        linked = modules[0]
        for module in modules[1:]:
            linked.link_in(llvm.parse_bitcode(module.as_bitcode(), contexts[0]))
        yield linked


@contextlib.contextmanager
def _without_loop_strength_reduction():
    """Code generation without LLVM's loop strength reduction: a long kernel's thousands of short loops made
    it a third of code generation (0.45 of 1.45 s on 10,000 nodes), for 0-2% of its time per call."""
    llvm.set_option("symgrad", "-disable-lsr")
    try:
        yield
    finally:
        llvm.set_option("symgrad", "-disable-lsr=false")


def optimized_ir(ir_text: str) -> str:
    """The IR after the O3 pipeline, for inspection (`lower(...).llvm_ir`)."""
    with _parsed(ir_text) as module:
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
    parts = [ir_text, *host_target()]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


_VOID_FUNCTION = ctypes.CFUNCTYPE(None)


class JitModule:
    """One object file linked into this process by an MCJIT engine of its own: the addresses of its
    functions, the arrays its pointer globals point to, and the object itself (`code`, which a pickle
    carries). Dropping the last reference frees the workspace its kernel keeps (its function `release`, if
    any), the code (the engine) and releases the arrays; whatever calls the code holds this object."""

    __slots__ = ("engine", "addresses", "pinned", "code", "quick", "optimized", "__weakref__")

    def __init__(self, code: bytes, prefix: str, names: list[str], slots: dict):
        self.code = code
        self.quick = False  # whether the code was emitted quickly (`load`), to be `upgraded`
        self.optimized = None  # quick code's optimized module (quick_object_code), until it is upgraded
        engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), target_machine())
        engine.add_object_file(llvm.ObjectFileRef.from_data(code))
        engine.finalize_object()
        self.engine = engine
        self.addresses = {name: engine.get_function_address(prefix + name) for name in names}
        for name, array in slots.items():
            ctypes.c_void_p.from_address(engine.get_global_value_address(prefix + name)).value = array.ctypes.data
        self.pinned = list(slots.values())

    def __del__(self, finalizing=sys.is_finalizing):
        if not finalizing():  # at exit the process returns the memory anyway
            self.release_kept()

    def release_kept(self):
        """Free the heap blocks the kernel keeps from call to call, if any: safe while other threads call it
        (a running call holds its block outside the slot and keeps or frees it when it returns)."""
        release = getattr(self, "addresses", {}).get("release")
        if release:
            _VOID_FUNCTION(release)()

    def holds_key(self, prefix: str, key: str) -> bool:
        """Whether the loaded code is the code `key` names (its embedded key constant says so)."""
        address = self.engine.get_global_value_address(prefix + KEY_SYMBOL)
        return bool(address) and ctypes.string_at(address, len(key)) == key.encode()


def load(ir_text: str, names: list[str], symbols: dict[str, int], slots: dict | None = None,
         threads: int | None = None, quick: bool = False) -> JitModule:
    """The loaded module of `ir_text`, whose functions `names` are written as PLACEHOLDER + name, compiled
    or fetched from the caches (in this process: while some holder keeps it alive; on disk). `symbols`
    are the external addresses the code links against; `slots` maps pointer globals (PLACEHOLDER +
    name) to the arrays they point to, which the module keeps alive; `threads`: how many threads LLVM's
    optimizer may use (see object_code). `quick`: code emitted quickly (or the full code, when loaded already),
    which `upgraded` replaces."""
    key = cache_key(ir_text)
    slots = slots or {}
    with _lock:
        module = _loaded.get(key) or (_loaded.get(key + QUICK) if quick else None)
        if module is None:
            for symbol, address in symbols.items():
                llvm.add_symbol(symbol, address)
            module = _from_offer(key, names, slots) or _from_disk(key, names, slots, key)
            if module is None and quick:
                module = _loaded[key + QUICK] = (_from_disk(key, names, slots, key + QUICK)
                                                 or _compile(key, ir_text, names, slots, threads, quick=True))
                module.quick = True
            else:
                module = _loaded[key] = module or _compile(key, ir_text, names, slots, threads)
        return module


def upgraded(ir_text: str, names: list[str], slots: dict, quick: JitModule) -> JitModule:
    """The fully optimized module of `ir_text` (load's), which `quick` (a quick module of it) was: emitted from
    `quick`'s optimized IR, or fetched from the caches, or compiled (a quick module read from the disk cache
    kept no IR)."""
    key = cache_key(ir_text)
    with _lock:
        module = _loaded.get(key) or _from_disk(key, names, slots, key)
        if module is None and quick.optimized is not None:
            module = _checked(key, _prefix(key), upgraded_object_code(quick.optimized), names, slots)
            disk_cache.write(key, module.code)
        module = module or _compile(key, ir_text, names, slots, None, False)
        quick.optimized = None
        _loaded[key] = module
        return module


@contextlib.contextmanager
def offering(key: str, code: bytes):
    """Within the block, `load` of the IR whose cache key is `key` links `code` (checked as a disk-cache
    entry is) instead of compiling: how an unpickled function uses the object code it carries."""
    with _lock:
        _offered[key] = code
    try:
        yield
    finally:
        with _lock:
            _offered.pop(key, None)


def loaded_object(ir_text: str) -> tuple[str, bytes] | None:
    """(cache key, object code) of the module of `ir_text` loaded in this process (None when it is not)."""
    key = cache_key(ir_text)
    module = _loaded.get(key)
    return None if module is None else (key, module.code)


def _compile(key: str, ir_text: str, names: list[str], slots: dict, threads: int | None,
             quick: bool = False) -> JitModule:
    """Compile (on at most `threads` threads; `quick`ly: see quick_object_code), load and store in the disk cache
    the module of `ir_text`, with its key embedded."""
    prefix, text = _prefix(key), keyed_text(key, ir_text)
    if quick:
        code, optimized = quick_object_code(text, threads)
    else:
        code, optimized = object_code(text, threads=threads), None
    module = _checked(key, prefix, code, names, slots)
    module.optimized = optimized
    disk_cache.write(key + QUICK if quick else key, code)
    return module


def keyed_text(key: str, ir_text: str) -> str:
    """The IR text compiled for cache key `key`: its names made unique (_prefix), the key embedded."""
    prefix = _prefix(key)
    return ir_text.replace(PLACEHOLDER, prefix) + f'\n@"{prefix}{KEY_SYMBOL}" = constant [{len(key)} x i8] c"{key}"\n'


def _checked(key: str, prefix: str, code: bytes, names: list[str], slots: dict) -> JitModule:
    """Freshly compiled `code` of the module of `key`, loaded (an error if it lacks its key)."""
    module = JitModule(code, prefix, names, slots)
    if not module.holds_key(prefix, key):
        raise RuntimeError(f"symgrad: freshly compiled code lacks its key {key}")
    return module


def _from_offer(key: str, names: list[str], slots: dict) -> JitModule | None:
    """The module of the object code offered for `key` (see `offering`), if it is what the key names."""
    code = _offered.get(key)
    return None if code is None else _linked(key, code, names, slots, "offered object code")


def _from_disk(key: str, names: list[str], slots: dict, stored: str) -> JitModule | None:
    """The module stored as `stored` (`key`, or key + QUICK for its quick code) in the disk cache, if there is one
    that is what the key names."""
    code = disk_cache.read(stored)
    module = None if code is None else _linked(key, code, names, slots, "disk-cache entry")
    if module is not None:
        disk_cache.touch(stored)
    return module


def _linked(key: str, code: bytes, names: list[str], slots: dict, origin: str) -> JitModule | None:
    """`code` linked into this process once it is checked to be an intact object of this machine defining
    what the module of `key` defines, with the key embedded (None, and a log line, otherwise)."""
    prefix = _prefix(key)
    required = {prefix + name: None for name in [*names, *slots]}
    required[prefix + KEY_SYMBOL] = key.encode()
    try:
        elf.check(code, _reference_object(), required, lambda name: bool(llvm.address_of_symbol(name)))
    except elf.InvalidObject as error:
        log.info("symgrad: recompiling the damaged %s %s: %s", origin, key, error)
        return None
    module = JitModule(code, prefix, names, slots)
    if not module.holds_key(prefix, key) or not all(module.addresses.values()):
        log.info("symgrad: recompiling the %s %s, which holds other code", origin, key)
        return None
    return module


def _prefix(key: str) -> str:
    """What PLACEHOLDER becomes in the module of `key`: names unique to it."""
    return f"sg{key[:20]}_"


# ----------------------------------------------------------------------------- fork safety

def _llvm_locks() -> list:
    """The locks held around LLVM: ours (a whole compile or load) and llvmlite's (each call into LLVM)."""
    llvmlite_lock = getattr(getattr(ffi.lib, "_lock", None), "_lock", None)
    return [_lock] + ([llvmlite_lock] if llvmlite_lock is not None else [])


def _hold_llvm_locks() -> None:
    for lock in _llvm_locks():
        lock.acquire()


def _release_llvm_locks() -> None:
    for lock in reversed(_llvm_locks()):
        lock.release()


# os.fork() waits until no thread is inside LLVM, so the child never inherits a lock held by a thread
# that does not exist there (it would deadlock on its first compile).
os.register_at_fork(before=_hold_llvm_locks, after_in_parent=_release_llvm_locks,
                    after_in_child=_release_llvm_locks)
