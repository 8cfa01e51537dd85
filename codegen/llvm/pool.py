"""A persistent pool of native threads, emitted in LLVM IR, that runs the chunks of a parallel loop.

`parallel_for(task, ctx, chunks, threads)` calls `task(ctx, c)` once for every c in [0, chunks):
the caller and up to threads-1 helper threads take chunks, and it returns once every chunk has run.
Why this design:
- No C compiler at run time (a fresh CI machine has none), and no Python in the loop: the pool is IR
  compiled once per process by the JIT and reached by kernels through one symbol, as BLAS is. It uses
  only libc by symbol (pthread_create, pthread mutexes and condition variables, getpid), so the same
  IR works on any glibc target. Python threads calling an outlined chunk function were the other
  choice; a region would cost a GIL hand-off per chunk and per thread, tens of microseconds.
- Persistent: threads are created once (on the first region that wants them) and sleep on a
  condition variable between regions, so a region costs a wake-up (microseconds), not thread creation.
- Waiting spins a little before it sleeps: a helper that finished a region, and a caller waiting for the
  helpers still in one, check for a change for SPINS rounds of `sched_yield` (about a tenth of a
  millisecond) before they sleep on a condition variable. A kernel called in a loop then finds its helpers
  awake (a futex wake-up costs tens of microseconds on a VM, as much as the work of a 1e6-element
  region), and yielding, not busy-waiting, leaves the core to whatever else wants it.
- The caller takes chunks from the front, helpers from the back, until they meet: called again, a kernel
  gives each thread about the same chunks as before, still in its caches (on this VM's two cores, rosen1m
  on two threads: 118 -> 97 us, 1.64x -> 1.95x one thread), while a late thread only means the others take more.
- A late helper costs nothing: the caller takes chunks too, closes the region when none is left, and
  then waits only for the helpers that joined before that (each is inside a chunk); one waking later
  finds the region closed and sleeps again. On a loaded machine a region is never slower than one thread
  by more than the chunks helpers had started.
- Deterministic results: the kernel fixes the chunks from the loop's shape alone, each chunk writes
  its own outputs (and its own partial result of a reduction, which the kernel then combines in chunk
  order), so which thread ran a chunk, and how many threads there were, changes nothing.
- One region at a time: a region started while another runs (another Python thread calling a kernel
  without the GIL) runs its chunks on its caller's thread; no deadlock, the same result.
- Fork: a child process has none of its parent's threads; the pool remembers the process id it
  started its threads in and starts afresh in another (the state is reset, mutexes included).
"""
from __future__ import annotations

import ctypes
import functools
import os

from llvmlite import ir

from symgrad.codegen import runtime

from . import jit
from .types import I8, I32, I64, PTR

SYMBOL = "symgrad_rt_parallel_for"
BLAS_THREADS = "symgrad_rt_blas_threads"  # blas_threads(n): BLAS runs on n threads from now on
BLAS_SETTER = "symgrad_rt_set_num_threads"  # NumPy's OpenBLAS's own (runtime.blas_addresses)
# Set by the user, these say how many threads OpenBLAS runs on, and kernels leave it so.
BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")
TASK = ir.FunctionType(ir.VoidType(), [PTR, I64])  # task(ctx, chunk)
# parallel_for(task, ctx, chunks, threads)
PARALLEL_FOR = ir.FunctionType(ir.VoidType(), [TASK.as_pointer(), PTR, I64, I32])
MAX_THREADS = 255  # a helper's number fits in the low byte of its start argument
SYNC_BYTES = 64  # room for a glibc pthread_mutex_t or pthread_cond_t (40 and 48 bytes on x86-64 and AArch64)

_LIBC = {
    "pthread_create": ir.FunctionType(I32, [PTR, PTR, PTR, PTR]),
    "pthread_mutex_lock": ir.FunctionType(I32, [PTR]),
    "pthread_mutex_unlock": ir.FunctionType(I32, [PTR]),
    "pthread_cond_wait": ir.FunctionType(I32, [PTR, PTR]),
    "pthread_cond_broadcast": ir.FunctionType(I32, [PTR]),
    "pthread_cond_signal": ir.FunctionType(I32, [PTR]),
    "getpid": ir.FunctionType(I32, []),
    "sched_yield": ir.FunctionType(I32, []),
}
SPINS = 256  # rounds of sched_yield (~0.4 us each) a waiting thread checks before it sleeps
# The pool's state: name -> type (zero-initialized globals of the module holding the pool).
_STATE = {
    "mutex": ir.ArrayType(I8, SYNC_BYTES), "wake": ir.ArrayType(I8, SYNC_BYTES), "done": ir.ArrayType(I8, SYNC_BYTES),
    "busy": I32,         # 1 while a region runs (taken with a compare-and-swap)
    "pid": I32,          # the process the helpers were started in
    "started": I32,      # helpers started
    "generation": I64,   # regions started so far: a helper wakes for each new one
    "task": PTR, "ctx": PTR,
    "span": I64,         # the chunks not taken yet: first << 32 | end
    "wanted": I32,       # helpers that may take part in this region (numbers below it)
    "open": I32,         # 1 while helpers may join the region
    "inside": I32,       # helpers that joined the region and have not left it
}
_ATOMIC = {"generation": 8, "inside": 4, "span": 8}  # read outside the mutex: stored atomically (alignment)


def _i32(value):
    return ir.Constant(I32, value)


def _i64(value):
    return ir.Constant(I64, value)


class _Pool:
    """Emits the pool's functions and state into a module."""

    def __init__(self, module: ir.Module, name: str, linkage: str):
        self.module = module
        self.state = {}
        for field, typ in _STATE.items():
            var = ir.GlobalVariable(module, typ, f"{name}.{field}")
            var.linkage, var.initializer, var.align = "internal", ir.Constant(typ, None), 8
            self.state[field] = var
        self.libc = {fn: module.globals.get(fn) or ir.Function(module, typ, fn) for fn, typ in _LIBC.items()}
        self.run_front, self.run_back = (self._run_chunks(f"{name}.run_{end}", end == "back")
                                         for end in ("front", "back"))
        self.worker = self._worker(f"{name}.worker")
        self.parallel_for = self._parallel_for(name, linkage)

    def load(self, b, field):
        return b.load(self.state[field], typ=_STATE[field])

    def store(self, b, field, value):
        if field in _ATOMIC:
            b.store_atomic(value, self.state[field], "monotonic", _ATOMIC[field])
        else:
            b.store(value, self.state[field])

    def spin(self, b, function, field, unchanged, then):
        """While `unchanged(b, value of field)` holds, for at most SPINS rounds, yield; then branch to `then`
        (which checks again under the mutex: the spin is only a faster way to get there)."""
        before = b.block
        loop, body = function.append_basic_block("spin"), function.append_basic_block("spin_yield")
        b.branch(loop)
        b.position_at_end(loop)
        rounds = b.phi(I32)
        rounds.add_incoming(_i32(0), before)
        value = b.load_atomic(self.state[field], "monotonic", _ATOMIC[field], typ=_STATE[field])
        waiting = b.and_(unchanged(b, value), b.icmp_unsigned("<", rounds, _i32(SPINS)))
        b.cbranch(waiting, body, then)
        b.position_at_end(body)
        self.call(b, "sched_yield")
        rounds.add_incoming(b.add(rounds, _i32(1)), body)
        b.branch(loop)

    def call(self, b, fn, *args):
        return b.call(self.libc[fn], list(args))

    def _run_chunks(self, name, from_back) -> ir.Function:
        """`void run(task, ctx)`: take chunks, the first left (the last left: `from_back`), until none is left.
        The span left is one word, first << 32 | end, taken by compare-and-swap."""
        function = ir.Function(self.module, ir.FunctionType(ir.VoidType(), [TASK.as_pointer(), PTR]), name)
        function.linkage = "internal"
        task, ctx = function.args
        entry, loop, take, body, done = (function.append_basic_block(n)
                                         for n in ("entry", "loop", "take", "body", "done"))
        b = ir.IRBuilder(entry)
        b.branch(loop)
        b.position_at_end(loop)
        span = b.load_atomic(self.state["span"], "monotonic", 8, typ=I64)
        first, end = b.lshr(span, _i64(32)), b.and_(span, _i64(0xFFFFFFFF))
        b.cbranch(b.icmp_unsigned("<", first, end), take, done)
        b.position_at_end(take)
        taken, chunk = (b.sub(span, _i64(1)), b.sub(end, _i64(1))) if from_back else (b.add(span, _i64(1 << 32)), first)
        swapped = b.cmpxchg(self.state["span"], span, taken, "monotonic", "monotonic")
        b.cbranch(b.extract_value(swapped, 1), body, loop)
        b.position_at_end(body)
        b.call(task, [ctx, chunk])
        b.branch(loop)
        b.position_at_end(done)
        b.ret_void()
        return function

    def _worker(self, name) -> ir.Function:
        """`ptr worker(arg)`: helper number `arg & 255`, started when `arg >> 8` regions had run; forever
        waits for a new region, joins it while it is open if its number is below `wanted`, takes chunks,
        and leaves it (the last one out wakes the caller)."""
        function = ir.Function(self.module, ir.FunctionType(PTR, [PTR]), name)
        function.linkage = "internal"
        blocks = {n: function.append_basic_block(n) for n in ("entry", "wait", "sleep", "woken", "work", "report")}
        b = ir.IRBuilder(blocks["entry"])
        arg = b.ptrtoint(function.args[0], I64)
        number = b.trunc(b.and_(arg, _i64(MAX_THREADS)), I32)
        seen = b.alloca(I64)
        b.store(b.lshr(arg, _i64(8)), seen)
        mutex = self.state["mutex"]
        b.branch(blocks["wait"])
        b.position_at_end(blocks["wait"])
        locking = function.append_basic_block("lock")
        last = b.load(seen, typ=I64)
        self.spin(b, function, "generation", lambda b, generation: b.icmp_unsigned("==", generation, last), locking)
        b.position_at_end(locking)
        self.call(b, "pthread_mutex_lock", mutex)
        b.branch(blocks["sleep"])
        b.position_at_end(blocks["sleep"])  # under the mutex: sleep until a new region starts
        fresh = b.icmp_unsigned("!=", self.load(b, "generation"), b.load(seen, typ=I64))
        asleep = function.append_basic_block("asleep")
        b.cbranch(fresh, blocks["woken"], asleep)
        b.position_at_end(asleep)
        self.call(b, "pthread_cond_wait", self.state["wake"], mutex)
        b.branch(blocks["sleep"])
        b.position_at_end(blocks["woken"])
        b.store(self.load(b, "generation"), seen)
        task, ctx = (self.load(b, field) for field in ("task", "ctx"))
        task = b.inttoptr(b.ptrtoint(task, I64), TASK.as_pointer())  # typed, so it can be called
        joining = b.and_(b.icmp_unsigned("<", number, self.load(b, "wanted")),
                         b.icmp_unsigned("!=", self.load(b, "open"), _i32(0)))
        with b.if_then(joining):
            self.store(b, "inside", b.add(self.load(b, "inside"), _i32(1)))
        self.call(b, "pthread_mutex_unlock", mutex)
        b.cbranch(joining, blocks["work"], blocks["wait"])
        b.position_at_end(blocks["work"])
        b.call(self.run_back, [task, ctx])
        self.call(b, "pthread_mutex_lock", mutex)
        inside = b.sub(self.load(b, "inside"), _i32(1))
        self.store(b, "inside", inside)
        b.cbranch(b.icmp_unsigned("==", inside, _i32(0)), blocks["report"], function.append_basic_block("unlock"))
        unlock = function.blocks[-1]
        b.position_at_end(blocks["report"])
        self.call(b, "pthread_cond_signal", self.state["done"])
        b.branch(unlock)
        b.position_at_end(unlock)
        self.call(b, "pthread_mutex_unlock", mutex)
        b.branch(blocks["wait"])
        return function

    def _parallel_for(self, name, linkage) -> ir.Function:
        function = ir.Function(self.module, PARALLEL_FOR, name)
        function.linkage = linkage
        task, ctx, chunks, threads = function.args
        names = ("entry", "try", "claimed", "reset", "start", "create", "created", "region", "wait", "sleep",
                 "finished", "serial", "serial_loop", "serial_body", "done")
        blocks = {n: function.append_basic_block(n) for n in names}
        b = ir.IRBuilder(blocks["entry"])
        tid = b.alloca(I64)
        limit = b.select(b.icmp_signed("<", threads, _i32(MAX_THREADS + 1)), threads, _i32(MAX_THREADS + 1))
        wide_chunks = b.select(b.icmp_signed("<", chunks, _i64(MAX_THREADS + 1)), chunks, _i64(MAX_THREADS + 1))
        limit = b.select(b.icmp_signed("<", b.sext(limit, I64), wide_chunks), limit, b.trunc(wide_chunks, I32))
        helpers = b.sub(limit, _i32(1))  # at most one helper per chunk after the caller's
        countable = b.icmp_unsigned("<", chunks, _i64(1 << 32))  # the span packs chunk numbers in 32 bits
        b.cbranch(b.and_(b.icmp_signed(">", helpers, _i32(0)), countable), blocks["try"], blocks["serial"])

        b.position_at_end(blocks["try"])  # one region at a time: another caller runs its chunks alone
        claimed = b.cmpxchg(self.state["busy"], _i32(0), _i32(1), "acquire", "monotonic")
        b.cbranch(b.extract_value(claimed, 1), blocks["claimed"], blocks["serial"])

        b.position_at_end(blocks["claimed"])
        pid = self.call(b, "getpid")
        b.cbranch(b.icmp_signed("==", pid, self.load(b, "pid")), blocks["start"], blocks["reset"])
        b.position_at_end(blocks["reset"])  # first use, or a forked child: none of the helpers exists here
        for field in ("mutex", "wake", "done"):
            self.store(b, field, ir.Constant(_STATE[field], None))
        for field in ("started", "wanted", "open", "inside"):
            self.store(b, field, _i32(0))
        self.store(b, "generation", _i64(0))
        self.store(b, "pid", pid)
        b.branch(blocks["start"])

        b.position_at_end(blocks["start"])  # start the helpers this region wants that do not exist yet
        started = self.load(b, "started")
        b.cbranch(b.icmp_signed("<", started, helpers), blocks["create"], blocks["created"])
        b.position_at_end(blocks["create"])
        arg = b.or_(b.shl(self.load(b, "generation"), _i64(8)), b.zext(started, I64))
        failed = self.call(b, "pthread_create", tid, ir.Constant(PTR, None), self.worker, b.inttoptr(arg, PTR))
        made = function.append_basic_block("made")
        b.cbranch(b.icmp_signed("==", failed, _i32(0)), made, blocks["created"])  # failed: fewer helpers
        b.position_at_end(made)
        self.store(b, "started", b.add(started, _i32(1)))
        b.branch(blocks["start"])

        b.position_at_end(blocks["created"])  # as many helpers as exist, up to the wanted number
        started = self.load(b, "started")
        wanted = b.select(b.icmp_signed("<", started, helpers), started, helpers)
        alone = function.append_basic_block("alone")
        b.cbranch(b.icmp_signed(">", wanted, _i32(0)), blocks["region"], alone)
        b.position_at_end(alone)
        b.store_atomic(_i32(0), self.state["busy"], "release", 4)
        b.branch(blocks["serial"])

        b.position_at_end(blocks["region"])
        mutex = self.state["mutex"]
        self.call(b, "pthread_mutex_lock", mutex)
        for field, value in (("task", task), ("ctx", ctx), ("span", chunks),
                             ("wanted", wanted), ("open", _i32(1)), ("inside", _i32(0))):
            self.store(b, field, value)
        self.store(b, "generation", b.add(self.load(b, "generation"), _i64(1)))
        self.call(b, "pthread_cond_broadcast", self.state["wake"])
        self.call(b, "pthread_mutex_unlock", mutex)
        b.call(self.run_front, [task, ctx])
        self.call(b, "pthread_mutex_lock", mutex)  # no chunk left to start: close, wait for those inside
        self.store(b, "open", _i32(0))
        spinning, relock = function.append_basic_block("spinning"), function.append_basic_block("relock")
        b.cbranch(b.icmp_unsigned("==", self.load(b, "inside"), _i32(0)), blocks["finished"], spinning)
        b.position_at_end(spinning)  # helpers are inside, each in its last chunk: wait for them awake first
        self.call(b, "pthread_mutex_unlock", mutex)
        self.spin(b, function, "inside", lambda b, inside: b.icmp_unsigned("!=", inside, _i32(0)), relock)
        b.position_at_end(relock)
        self.call(b, "pthread_mutex_lock", mutex)
        b.branch(blocks["wait"])
        b.position_at_end(blocks["wait"])
        b.cbranch(b.icmp_unsigned("==", self.load(b, "inside"), _i32(0)), blocks["finished"], blocks["sleep"])
        b.position_at_end(blocks["sleep"])
        self.call(b, "pthread_cond_wait", self.state["done"], mutex)
        b.branch(blocks["wait"])
        b.position_at_end(blocks["finished"])
        self.call(b, "pthread_mutex_unlock", mutex)
        b.store_atomic(_i32(0), self.state["busy"], "release", 4)
        b.branch(blocks["done"])

        b.position_at_end(blocks["serial"])
        b.branch(blocks["serial_loop"])
        b.position_at_end(blocks["serial_loop"])
        chunk = b.phi(I64)
        chunk.add_incoming(_i64(0), blocks["serial"])
        b.cbranch(b.icmp_signed("<", chunk, chunks), blocks["serial_body"], blocks["done"])
        b.position_at_end(blocks["serial_body"])
        b.call(task, [ctx, chunk])
        chunk.add_incoming(b.add(chunk, _i64(1)), blocks["serial_body"])
        b.branch(blocks["serial_loop"])

        b.position_at_end(blocks["done"])
        b.ret_void()
        return function


def emit(module: ir.Module, name: str = SYMBOL, linkage: str = "external") -> ir.Function:
    """Add the pool (its state, helper and `parallel_for` named `name`) to `module`."""
    return _Pool(module, name, linkage).parallel_for


def emit_serial(module: ir.Module) -> ir.Function:
    """An internal `parallel_for` running every chunk on its caller's thread, for a module that should
    start no threads (a shared library: its C callers own their threads)."""
    function = ir.Function(module, PARALLEL_FOR, SYMBOL)
    function.linkage = "internal"
    task, ctx, chunks, _ = function.args
    entry, loop, body, done = (function.append_basic_block(n) for n in ("entry", "loop", "body", "done"))
    b = ir.IRBuilder(entry)
    b.branch(loop)
    b.position_at_end(loop)
    chunk = b.phi(I64)
    chunk.add_incoming(_i64(0), entry)
    b.cbranch(b.icmp_signed("<", chunk, chunks), body, done)
    b.position_at_end(body)
    b.call(task, [ctx, chunk])
    chunk.add_incoming(b.add(chunk, _i64(1)), body)
    b.branch(loop)
    b.position_at_end(done)
    b.ret_void()
    return function


def _emit_blas_threads(module: ir.Module, name: str, setter: bool) -> ir.Function:
    """`void blas_threads(i32 n)`: tell the BLAS (`setter`: through BLAS_SETTER, else nothing) to use n
    threads, when n differs from what it was last told: a kernel calls it before its products, and the
    BLAS is told once as long as every kernel asks for the same number."""
    function = ir.Function(module, ir.FunctionType(ir.VoidType(), [I32]), name)
    b = ir.IRBuilder(function.append_basic_block())
    if setter:
        told = ir.GlobalVariable(module, I32, name + ".told")
        told.linkage, told.initializer = "internal", _i32(0)
        (n,) = function.args
        with b.if_then(b.icmp_signed("!=", b.load_atomic(told, "monotonic", 4, typ=I32), n)):
            b.store_atomic(n, told, "monotonic", 4)
            b.call(ir.Function(module, ir.FunctionType(ir.VoidType(), [I32]), BLAS_SETTER), [n])
    b.ret_void()
    return function


def declare_blas_threads(module: ir.Module) -> ir.Function:
    """The process's blas_threads, for a JIT kernel calling BLAS."""
    existing = module.globals.get(BLAS_THREADS)
    return existing if existing is not None else ir.Function(module, ir.FunctionType(ir.VoidType(), [I32]),
                                                             BLAS_THREADS)


def declare(module: ir.Module) -> ir.Function:
    """The `parallel_for` a kernel of `module` calls: the process's pool (JIT, linked by SYMBOL) or, in a
    module that holds its own (a shared library, see shared_library.py), that one."""
    existing = module.globals.get(SYMBOL)
    return existing if existing is not None else ir.Function(module, PARALLEL_FOR, SYMBOL)


def libc_addresses() -> dict[str, int]:
    """The libc functions the pool calls, at their addresses in this process."""
    libc = ctypes.CDLL(None)
    return {name: ctypes.cast(getattr(libc, name), ctypes.c_void_p).value for name in _LIBC}


@functools.cache
def addresses() -> dict[str, int]:
    """The JIT's link table entries for the process's one pool and blas_threads (compiled on first use,
    kept for good). blas_threads does nothing when the environment sets OpenBLAS's thread count."""
    module = ir.Module(name="symgrad_pool")
    jit.configure(module)
    emit(module, jit.PLACEHOLDER + "parallel_for")
    setter = runtime.blas_addresses().get("set_num_threads")
    if any(os.environ.get(name, "").strip() for name in BLAS_THREAD_VARIABLES):
        setter = None
    _emit_blas_threads(module, jit.PLACEHOLDER + "blas_threads", setter is not None)
    symbols = {**libc_addresses(), **({BLAS_SETTER: setter} if setter else {})}
    native = jit.load(str(module), ["parallel_for", "blas_threads"], symbols)
    # never freed, not even at interpreter exit: the helper threads sleep inside this code
    ctypes.pythonapi.Py_IncRef(ctypes.py_object(native))
    return {SYMBOL: native.addresses["parallel_for"], BLAS_THREADS: native.addresses["blas_threads"]}

