"""Graph -> one native kernel `i32 kernel(ptr in..., ptr out...)`, reentrant and thread-safe.

Planning, in three steps, before any code is emitted:
1. Each node becomes an operand (operands.py): virtual when it can be computed inside
   its consumers' loops, or a buffer written by jobs (LLVM_RULES[prim]).
2. Loop jobs over the same iteration domain with no data dependency between them are
   grouped into one loop nest (`schedule`): value and gradient of an elementwise
   function read x once.
3. Workspace buffers get offsets in one block, reused by liveness over groups.
Then each group emits its loop nest. A nonzero return is an error number (`errors`).
The workspace is no static global: every function emitted takes its address as a trailing argument,
and the kernel (`public_kernel`) gets a block of its own for each call, on the stack when small, else
from malloc, or (`release` given) the block the last call left, which one call at a time takes; so
concurrent calls (several threads, no GIL) never share memory.
A loop's body or a branch (a sub-graph) is a function of the same module that a kernel
builder of its own plans and emits (`nested`, called by the rules of control.py); its workspace is a
region of its caller's.
A long program's groups are emitted into several functions the kernel calls in turn, each taking only the
arguments it uses, so the optimizer's cost (superlinear in a function's size) stays linear in the program's;
a kernel of many arguments takes them in an array (`array_kernel`).
A large loop nest whose jobs allow it runs in chunks on the thread pool (`emit_parallel`, parallel.py).
"""
from __future__ import annotations

import bisect
import math

import sympy
from llvmlite import ir

from symgrad import ir as sir

from . import heap, lanes, loophints, mathlib, parallel, pool
from .jobs import Group, LoopJob, fill_job
from .operands import ALIGNMENT, Buffer, Coord, Unslice, squeezed
from .rules import BUFFER_INPUTS, LLVM_RULES
from .types import I8, I32, I64, PTR


class KernelBuilder:
    """Plans and emits one graph as one LLVM function."""

    def __init__(self, graph: sir.Graph, module: ir.Module, name: str, blas_calls: str = "linked",
                 embed_constants: bool = False, outlined_math: bool | None = None, public: bool = True,
                 threads: int = 1, release: str | None = None):
        """blas_calls: how matrix products reach BLAS: "linked" (the JIT links symgrad_rt_?gemm),
        "slots" (through exported pointers a shared library's loader fills; loops while empty),
        or "none" (loops only). embed_constants=True: large constants are compiled in rather
        than reached through `slots`. outlined_math: transcendentals are calls rather than inlined
        (mathlib.math_function); by default, in a long program. public=False: `build` returns the
        internal function taking the workspace (a sub-graph's), not a kernel `name` allocating it.
        threads: how many threads run a large loop nest's chunks (the chunks are the same for any).
        release: keep heap blocks from call to call (a malloc'd workspace, while loops' tapes: `kept_slot`),
        and name `release` the function freeing them (emitted when there are some: `kept`)."""
        self.graph, self.module, self.name, self.public, self.threads = graph, module, name, public, threads
        self.release_name = release
        self.kept: list = []  # the slots (globals) of the blocks kept from call to call
        self.blas_calls, self.embed_constants = blas_calls, embed_constants
        self.outlined_math = _long(graph) if outlined_math is None else outlined_math
        self.workspace_argument = len(graph.inputs) + len(graph.outputs)
        self._parameters: dict = {}  # name of an emitted function -> {kernel argument position: its parameter}
        self._argument_positions: dict = {}  # id of an argument's buffer -> its position among the kernel's
        # A kernel of many arguments has a body taking them in an array (see public_kernel), which its parts
        # load the pointers they use from; `array_kernel` then takes that array, as the Python entry passes it.
        self.array_arguments = public and self.workspace_argument > MANY_ARGUMENTS
        self.array_kernel = None
        self.kernel = self._new_function(name + ".body" if public else name, array=self.array_arguments)
        self._start(self.kernel)
        self._pointers: list = []  # (buffer, make(k) -> its pointer in the function being emitted)
        self._pointer_positions = None  # id(buffer) -> its position in _pointers (see _make_pointers)
        self.jobs: list = []
        self.buffers: list[Buffer] = []
        self.errors: list[str] = []
        self.slots: dict = {}  # pointer-slot name -> the large constant array it points to
        self._splits = None  # while probing a loop body: (its innermost coordinate, split points found)
        self._probes = 0
        self._unslices = False  # whether any operand is an Unslice, the one kind that splits loops
        self._readers = None  # id(value) -> the nodes reading it (see readers)
        self._nested = 0  # functions made for sub-graphs so far (they are named by number)
        self._children = {}  # name of a sub-graph's function -> [its workspace size, its offset in this one's]
        self._rows = None  # while emitting a chunk of a parallel loop nest: the rows [first, end) it runs
        self._chunked = 0  # parallel loop nests emitted so far (their functions are named by number)
        self.workspace_size = 0
        self._loaded, self._loaded_by, self._loaded_in = {}, {}, None  # see once
        self.shared: dict = {}  # what rules of this graph's nodes pass each other (control.py's shared tapes)
        self.emitting: frozenset = frozenset()  # ids of the jobs the function being emitted runs
        self._held: list = []  # (function, free(k)): heap memory an error return from function releases

    def _new_function(self, name, positions=None, extra=(), array=False) -> ir.Function:
        """A function taking the kernel's arguments (input and output pointers) at `positions` (None: all),
        or with `array` the address of an array of all of them, then the workspace's address and the `extra`
        types, returning a status. A part of a long kernel takes only the arguments it uses: LLVM pays for
        every parameter of every function, and a call passes the seventh and later on the stack (a kernel of
        1,600 outputs passed 1,600 pointers to each part)."""
        positions = range(self.workspace_argument) if positions is None else positions
        leading = 1 if array else len(positions)
        function = ir.Function(self.module, ir.FunctionType(I32, [PTR] * (leading + 1) + list(extra)), name)
        for arg in function.args[:leading + 1]:
            arg.add_attribute("noalias")
        # A loop body (a sub-graph's function) is called, not inlined: inlined into a loop whose carry buffers
        # trade places each step, its noalias arguments became alias scopes that llvmlite's LLVM takes to hold
        # across steps (an upstream bug, fixed after that LLVM), and a scan of scans of an even length read a
        # stale carry. The call a step costs nothing measurable (benchmarks/bench_loops.py).
        if not self.public:
            function.attributes.add("noinline")
        self._parameters[name] = None if array else {position: n for n, position in enumerate(positions)}
        return function

    def argument(self, position: int) -> ir.Value:
        """The kernel's argument `position` (an input or output pointer) in the function being emitted."""
        parameters = self._parameters[self.function.name]
        if parameters is None:  # loaded from the array of arguments
            address = self.b.gep(self.function.args[0], [ir.Constant(I64, position)], source_etype=PTR, inbounds=True)
            return self.b.load(address, typ=PTR)
        return self.function.args[parameters[position]]

    def _workspace(self) -> ir.Value:
        """The workspace's address in the function being emitted (the parameter after its arguments)."""
        parameters = self._parameters[self.function.name]
        return self.function.args[1 if parameters is None else len(parameters)]

    def _positions(self, used) -> list:
        """The positions of the kernel's arguments among the buffers `used` (their ids), in order."""
        return sorted(self._argument_positions[key] for key in used if key in self._argument_positions)

    def workspace_at(self, offset: int) -> ir.Value:
        """The address `offset` bytes into the workspace, in the function being emitted."""
        base = self._workspace()
        return self.b.gep(base, [ir.Constant(I64, offset)], source_etype=I8, inbounds=True) if offset else base

    def _start(self, function):
        """Emit into `function` from here on: its entry block (allocas, pointers), then its body."""
        self.function = function
        self.entry = function.append_basic_block("entry")
        self.b = ir.IRBuilder(function.append_basic_block("body"))

    def pointer(self, buffer: Buffer, make) -> Buffer:
        """Give `buffer` the pointer `make(k)` emits into the entry of each function using it (once per function
        for buffers given the same `make`)."""
        self._pointers.append((buffer, make))
        self._pointer_positions = None
        return buffer

    def _make_pointers(self, used=None):
        """Emit into the entry of the function being emitted the pointers of the buffers `used` (their ids;
        None: all), in the order they were given (so the IR text does not depend on ids). Found by id, not
        by a scan of all: a long kernel has thousands of buffers and a hundred functions."""
        if used is None:
            chosen = self._pointers
        else:
            if self._pointer_positions is None:
                self._pointer_positions = {id(buffer): n for n, (buffer, _) in enumerate(self._pointers)}
            positions = self._pointer_positions
            chosen = [self._pointers[n] for n in sorted(positions[key] for key in used if key in positions)]
        made = {}  # id of a maker -> its pointer in this function
        with self.b.goto_block(self.entry):
            for buffer, make in chosen:
                if id(make) not in made:
                    made[id(make)] = make(self)
                buffer.pointer = made[id(make)]

    def _argument(self, position, value, role) -> Buffer:
        buffer = Buffer(value.shape, value.dtype, role=role)
        self._argument_positions[id(buffer)] = position
        return self.pointer(buffer, lambda k: k.argument(position))

    # ------------------------------------------------------------------ planning
    def plan(self):
        graph = self.graph
        self.operands = {}
        for position, value in enumerate(graph.inputs):
            self.operands[id(value)] = self._argument(position, value, "input")
        uses = graph.consumers()
        wants_buffer = _read_from_memory(graph, self.blas_calls)
        self.output_buffers = {}
        for position, value in enumerate(graph.outputs):
            buffer = self._argument(len(graph.inputs) + position, value, "output")
            self.output_buffers.setdefault(id(value), []).append(buffer)
        self._claimed = set()
        for node in graph.nodes:
            rule = LLVM_RULES.get(node.prim)
            if rule is None:
                raise NotImplementedError(f"the LLVM backend has no rule for primitive {node.prim.name!r}")
            operand = rule(self, node, [self.operands[id(v)] for v in node.inputs])
            self._unslices |= isinstance(operand, Unslice)
            if not isinstance(operand, Buffer) and not operand.in_pieces:
                target = self._claim(node.out)
                shared = uses.get(id(node.out), 0) > 1 and (_worth_storing(operand, len(graph.nodes))
                                                             or id(node.out) in wants_buffer)
                if target is not None or shared:
                    operand = self.materialize(operand, target)
            self.operands[id(node.out)] = operand
        for position, value in enumerate(graph.outputs):  # outputs not written in place: copy
            target = self.output_buffers[id(value)][sum(v is value for v in graph.outputs[:position])]
            source = self.operands[id(value)]
            if not (isinstance(source, Buffer) and source.base is target):
                self.materialize(source, target)

    def _claim(self, value):
        """The output buffer `value` is computed into, if it is an output not yet claimed."""
        buffers = self.output_buffers.get(id(value))
        if buffers and id(value) not in self._claimed:
            self._claimed.add(id(value))
            return buffers[0]
        return None

    def result_buffer(self, node) -> Buffer:
        """Where a materializing rule writes `node`'s value: its output buffer, or the workspace."""
        return self.buffer_for(node.out)

    def buffer_for(self, value) -> Buffer:
        """Where `value` is written: its output buffer if it is a graph output not yet claimed, or the workspace."""
        return self._claim(value) or self.new_buffer(value.shape, value.dtype)

    def readers(self, value) -> list:
        """The nodes of the graph reading `value`, in order."""
        if self._readers is None:
            self._readers = {}
            for node in self.graph.nodes:
                for used in node.inputs:
                    self._readers.setdefault(id(used), []).append(node)
        return self._readers.get(id(value), [])

    def nested(self, graph: sir.Graph, role: str) -> ir.Function:
        """An internal function `i32 f(ptr in..., ptr out..., ptr workspace)` of this module computing the
        sub-graph `graph` (a loop's body, a branch), planned and emitted by a kernel builder of its own; its
        workspace is a region of this one's, which `call_checked` passes. It calls BLAS and embeds constants
        as this kernel does, and shares its error numbers and large-constant slots, so a status means the
        same message everywhere. Internal, and called from one place, LLVM inlines it where it is small."""
        self._nested += 1
        builder = KernelBuilder(graph, self.module, f"{self.name}.{role}{self._nested}", self.blas_calls,
                                self.embed_constants, self.outlined_math, public=False, threads=self.threads)
        builder.errors, builder.slots, builder.kept, builder.release_name = (self.errors, self.slots, self.kept,
                                                                            self.release_name)
        function = builder.build()
        function.linkage = "internal"
        self._children[function.name] = [builder.workspace_size, None]
        return function

    def call_checked(self, function: ir.Function, args, cleanup=None):
        """Call `function` (a status-returning kernel part or sub-graph: given its workspace region here);
        a nonzero status returns from the function being emitted at once, after cleanup(k) (e.g. freeing
        heap memory) when given."""
        child = self._children.get(function.name)
        if child is not None:
            args = list(args) + [self.workspace_at(child[1])]
        status = self.b.call(function, args)
        self._return_unless(self.b.icmp_unsigned("==", status, ir.Constant(I32, 0)), status, cleanup)

    def _return_unless(self, condition, status, cleanup=None):
        """Return `status` (after cleanup(k), and releasing what `hold` holds) from the function being
        emitted when `condition` is false."""
        function = self.b.block.parent
        ok, failed = function.append_basic_block("ok"), function.append_basic_block("failed")
        self.b.cbranch(condition, ok, failed)
        with self.b.goto_block(failed):
            if cleanup is not None:
                cleanup(self)
            for holder, free in self._held:
                if holder is function:
                    free(self)
            self.b.ret(status)
        self.b.position_at_end(ok)

    def hold(self, free):
        """From here on in the function being emitted, an error return runs free(k) (heap memory one job
        leaves for a later one), until `release(free)`."""
        self._held.append((self.b.block.parent, free))

    def release(self, free):
        self._held = [(holder, held) for holder, held in self._held if held != free]

    def new_buffer(self, shape, dtype, target=None) -> Buffer:
        if target is not None:
            return target
        buffer = Buffer(shape, dtype)
        self.buffers.append(buffer)
        return buffer

    def materialize(self, operand, target=None) -> Buffer:
        """A buffer holding `operand`, written by one loop job (into `target` if given)."""
        target = self.new_buffer(operand.shape, operand.dtype, target)
        self.jobs.append(LoopJob(operand.shape, target, operand.reads,
                                 lambda k, idx: target.store(k, idx, operand.load(k, idx)),
                                 at_index=operand.at_index, writes_at_index=True))
        return target

    def fill(self, target: Buffer, value):
        self.jobs.append(fill_job(target, value))

    def emit_job(self, job: LoopJob):
        """Emit one loop job's nest here and now (outside the schedule, e.g. in a branch)."""
        self.emit_loops(Group(jobs=[job], domain=squeezed(job.domain)))

    # ------------------------------------------------------------------ scheduling
    def schedule(self) -> list[Group]:
        """Loop jobs join the latest earlier group with a similar domain when nothing in between
        (or in it) writes what they read, except what the group writes at its loop index and the job
        reads at the same index (an elementwise chain stored on the way runs in one loop). The group
        loops over the union of its jobs' domains; a job runs only inside its own (e.g. a sum over
        x[1:] in the loop of x's gradient)."""
        groups: list[Group] = []
        for job in self.jobs:
            loop = isinstance(job, LoopJob)
            domain = squeezed(job.domain) if loop else None
            home = None
            for group in reversed(groups) if loop else ():
                similar = group.domain is not None and _similar(group.domain, domain)
                conflict = job.reads & group.writes
                if conflict:
                    if similar and conflict <= job.at_index and all(
                            group.written_at_index.get(key) == domain for key in conflict):
                        home = group
                    break
                if similar:
                    home = group
                    break
            if home is not None and len(home.jobs) >= JOBS_PER_NEST:
                home = None
            if home is None:
                home = Group(domain=domain)
                groups.append(home)
            elif loop:
                home.domain = tuple(max(a, b) for a, b in zip(home.domain, domain))
            for key in job.writes:
                home.written_at_index.pop(key, None)
            if loop and job.writes_at_index and domain == squeezed(job.target.shape) == squeezed(
                    job.target.base.shape) and id(job.target.base) not in home.writes:
                home.written_at_index[id(job.target.base)] = domain
            home.jobs.append(job)
            home.writes |= job.writes
            home.reads |= job.reads
        return groups

    def allocate(self, groups) -> int:
        """Workspace offsets by liveness over groups (first fit); returns the workspace size. The free
        ranges below the top are kept sorted, so a long program allocates in time about linear in it."""
        first, last = {}, {}
        for index, group in enumerate(groups):
            for key in group.writes | group.reads:
                first.setdefault(key, index)
                last[key] = index
        starting, ending = {}, {}  # group index -> the workspace buffers first (last) used there
        for buffer in self.buffers:
            if id(buffer) in first:
                starting.setdefault(first[id(buffer)], []).append(buffer)
                ending.setdefault(last[id(buffer)], []).append(buffer)
        gaps, top, size = [], 0, 0  # gaps: sorted free [start, end) ranges below top
        for index in range(len(groups)):
            for buffer in ending.get(index - 1, ()):
                top = _free(gaps, top, buffer.offset, buffer.offset + _round_up(max(buffer.nbytes, 1)))
            for buffer in starting.get(index, ()):
                need = _round_up(max(buffer.nbytes, 1))
                fitting = next((i for i, (start, end) in enumerate(gaps) if end - start >= need), None)
                if fitting is None:
                    buffer.offset, top = top, top + need
                else:
                    start, end = gaps[fitting]
                    buffer.offset = start
                    if end - start == need:
                        del gaps[fitting]
                    else:
                        gaps[fitting] = (start + need, end)
                size = max(size, top)
        return size

    # ------------------------------------------------------------------ emission
    def build(self) -> ir.Function:
        """Plan and emit; the kernel (see public_kernel), or with public=False the internal function."""
        self.plan()
        groups = self.schedule()
        size = self.allocate(groups)
        for child in self._children.values():  # each sub-graph's workspace after this one's own buffers
            child[1] = _round_up(size)
            size = child[1] + child[0]
        self.workspace_size = size
        self.work = sum(math.prod(group.domain) if group.domain is not None else sum(job.work for job in group.jobs)
                        for group in groups)
        makers = {}  # one maker per offset: buffers reusing a place share its address
        for buffer in self.buffers:
            if hasattr(buffer, "offset"):
                self.pointer(buffer, makers.setdefault(buffer.offset,
                                                       lambda k, offset=buffer.offset: k.workspace_at(offset)))
        parts = self._parts(groups)
        if len(parts) <= 1 and not self.array_arguments:  # (an array's pointers are not known apart: parts)
            self._emit(parts[0] if parts else [])
            return self.public_kernel() if self.public else self.kernel
        calls = []
        for index, part in enumerate(parts):
            used = set().union(*(group.reads | group.writes for group in part))
            positions = self._positions(used)
            function = self._new_function(f"{self.name}.part{index}", positions)
            function.linkage = "internal"
            function.attributes.add("noinline")  # inlined back, the kernel would be one huge function again
            self._start(function)
            self._emit(part, used)
            calls.append((function, positions))
        self.function, self.entry = self.kernel, self.kernel.blocks[0]
        self.b = ir.IRBuilder(self.kernel.blocks[1])
        for function, positions in calls:  # each part in turn; a nonzero status returns at once
            self.call_checked(function, [self.argument(position) for position in positions] + [self._workspace()])
        with self.b.goto_block(self.entry):
            self.b.branch(self.kernel.blocks[1])
        self.b.ret(ir.Constant(I32, 0))
        return self.public_kernel() if self.public else self.kernel

    def _parts(self, groups) -> list:
        """The groups in functions of about GROUPS_PER_FUNCTION loop nests each; in a long program, a nest of
        at most SHORT_NEST elements counts half: its short loops become straight vector code (lanes.py), which
        costs LLVM less than a loop (each function's entry and call cost the same whatever its size)."""
        parts, weight = [[]], 0.0
        for group in groups:
            short = self.outlined_math and group.domain is not None and math.prod(group.domain) <= SHORT_NEST
            size = max(0.5 if short else 1.0, len(group.jobs) / JOBS_PER_GROUP)
            weight += size
            if weight > GROUPS_PER_FUNCTION and len(parts[-1]):
                parts.append([])
                weight = size
            parts[-1].append(group)
        return parts if groups else []

    @property
    def releases_gil(self) -> bool:
        """Whether a Python entry should run the kernel without the GIL: when its work (about one
        operation per element of each loop nest, a product's multiply-adds, a loop's unknown) pays
        for releasing and taking it again (~0.1 us, more when other threads want it)."""
        return self.work >= GIL_FREE_WORK

    def public_kernel(self) -> ir.Function:
        """The kernel `i32 name(ptr in..., ptr out...)`: it calls the internal body with a workspace of
        this call's own, on the stack up to STACK_WORKSPACE bytes (calls stay as cheap as with a static
        block), else from malloc (a failure is the status of an "out of memory" error): with `release`,
        up to heap.KEPT_BYTES, the block the last call left if there is one (`_kept_workspace`). Then the
        function `release`, if any block is kept. A kernel of more than MANY_ARGUMENTS arguments does that in
        `array_kernel`, `i32 name.args(ptr arguments)`, which it calls with its arguments stored in an array."""
        body = self.kernel
        body.linkage = "internal"
        function = ir.Function(self.module, ir.FunctionType(I32, [PTR] * self.workspace_argument), self.name)
        for arg in function.args:
            arg.add_attribute("noalias")
        if self.array_arguments:
            self.array_kernel = ir.Function(self.module, ir.FunctionType(I32, [PTR]), self.name + ".args")
            self.array_kernel.linkage = "internal"
            b = ir.IRBuilder(function.append_basic_block("entry"))
            array = b.alloca(ir.ArrayType(PTR, self.workspace_argument))
            for position, arg in enumerate(function.args):
                b.store(arg, b.gep(array, [ir.Constant(I64, 0), ir.Constant(I64, position)]))
            b.ret(b.call(self.array_kernel, [array]))
        with_workspace = self.array_kernel or function
        self.function, self.b = with_workspace, ir.IRBuilder(with_workspace.append_basic_block("entry"))
        size = self.workspace_size
        if size <= STACK_WORKSPACE:
            workspace = ir.Constant(PTR, None)
            if size:
                workspace = self.b.alloca(ir.ArrayType(I8, size), name="workspace")
                workspace.align = ALIGNMENT
            self.b.ret(self.b.call(body, [*with_workspace.args, workspace]))
        elif self.release_name is not None and size <= heap.KEPT_BYTES:
            self._kept_workspace(with_workspace, body, size)
        else:
            workspace = self.b.call(heap.function(self.module, "malloc"), [ir.Constant(I64, size)], name="workspace")
            self._fail_without(workspace, size)
            status = self.b.call(body, [*with_workspace.args, workspace])
            self.b.call(heap.function(self.module, "free"), [workspace])
            self.b.ret(status)
        if self.kept:
            release = ir.Function(self.module, ir.FunctionType(ir.VoidType(), []), self.release_name)
            b = ir.IRBuilder(release.append_basic_block("entry"))
            for slot in self.kept:
                b.call(heap.function(self.module, "free"), [b.atomic_rmw("xchg", slot, ir.Constant(PTR, None),
                                                                         "acquire")])
            b.ret_void()
        return function

    def kept_slot(self) -> ir.GlobalVariable | None:
        """A new slot of the module for a heap block kept from call to call (`take_kept`, `put_back`),
        which the function `release` frees; None when the kernel keeps none (a shared library's)."""
        if self.release_name is None:
            return None
        slot = ir.GlobalVariable(self.module, PTR, self.module.get_unique_name(self.name + ".kept"))
        slot.linkage, slot.initializer, slot.align = "internal", ir.Constant(PTR, None), 8
        self.kept.append(slot)
        return slot

    def take_kept(self, slot) -> ir.Value:
        """Emit: the block in `slot`, taken out of it (null if another call has it, or none was kept)."""
        return self.b.atomic_rmw("xchg", slot, ir.Constant(PTR, None), "acquire")

    def put_back(self, slot, block, keep=None):
        """Emit: `block` back into `slot` if that is empty (and the i1 `keep`, when given, holds), else freed."""
        b, null = self.b, ir.Constant(PTR, None)
        offered = block if keep is None else b.select(keep, block, null)  # null: leaves the slot as it is
        kept = b.extract_value(b.cmpxchg(slot, null, offered, "release", "monotonic"), 1)
        with b.if_then(b.not_(kept if keep is None else b.and_(kept, keep))):
            b.call(heap.function(self.module, "free"), [block])

    def _kept_workspace(self, function, body, size):
        """Emit the rest of `function`: a workspace kept in a slot of the module from call to call, so a large
        one is not fresh pages (page faults, zeroed by the kernel) every call. A call takes the block out of
        the slot, or mallocs one if it is empty (another thread's call has it, or none ran yet), and puts it
        back if the slot is still empty, else frees it."""
        b, null = self.b, ir.Constant(PTR, None)
        slot = self.kept_slot()
        taken = self.take_kept(slot)
        entry, fresh, ready = b.block, function.append_basic_block("fresh"), function.append_basic_block("ready")
        b.cbranch(b.icmp_unsigned("==", taken, null), fresh, ready)
        b.position_at_end(fresh)
        allocated = b.call(heap.function(self.module, "malloc"), [ir.Constant(I64, size)])
        self._fail_without(allocated, size)
        allocated_in = b.block
        b.branch(ready)
        b.position_at_end(ready)
        workspace = b.phi(PTR, name="workspace")
        workspace.add_incoming(taken, entry)
        workspace.add_incoming(allocated, allocated_in)
        status = b.call(body, [*function.args, workspace])
        self.put_back(slot, workspace)
        b.ret(status)

    def _fail_without(self, workspace, size):
        self.fail_unless(self.b.icmp_unsigned("!=", workspace, ir.Constant(PTR, None)),
                         f"out of memory for the workspace of {self.graph.name} ({size} bytes)")

    def _emit(self, groups, used=None):
        """The groups' code into the current function, after its entry makes the pointers of the
        buffers they use (`used`: ids of the buffers; None: all)."""
        self._make_pointers(used)
        self.emitting = frozenset(id(job) for group in groups for job in group.jobs)
        for group in groups:
            if group.domain is None:
                for job in group.jobs:
                    job.emit(self)
            elif (plan := parallel.chunks(group)) is not None:
                self.emit_parallel(group, plan)
            else:
                self.emit_loops(group)
        with self.b.goto_block(self.entry):
            self.b.branch(self.function.blocks[1])
        self.b.ret(ir.Constant(I32, 0))

    def once(self, operand, idx, emit) -> ir.Value:
        """operand's value at idx: emit() the first time in this basic block, then that value again
        until a buffer it reads is stored (a value several jobs of a loop nest read is loaded or
        computed once: less code for LLVM to compile again)."""
        self._in_current_block()
        key = _once_key(operand, idx)
        known = self._loaded.get(key)
        if known is not None:
            return known[0]
        value = emit()
        self._in_current_block()  # emit() may have gone on in a new block (an index check)
        self._remember(key, value, operand)
        return value

    def _remember(self, key, value, operand) -> None:
        """Keep `value` as operand's at `key` for `once`, listed under each buffer operand reads: a store forgets
        the values listed under its buffer, not a scan of every value known (a long loop body stores thousands
        of times)."""
        self._loaded[key] = (value, operand)  # holding operand keeps its id from naming another
        for buffer in operand.reads:
            self._loaded_by.setdefault(buffer, []).append(key)

    def stored(self, buffer, view=None, idx=None, value=None):
        """`buffer` was written: forget the values read from it (see once). With `value`, what was just
        stored through `view` at idx: a load of it there in this block is that value (the next job of a
        loop nest reading what the one before wrote emits no load, nor its address)."""
        for key in self._loaded_by.pop(id(buffer), ()):  # (a key listed twice, or gone already, is no harm)
            self._loaded.pop(key, None)
        if value is not None:
            self._in_current_block()
            self._remember(_once_key(view, idx), value, view)

    def _in_current_block(self):
        """Start `once`'s memory afresh when code is emitted into another block than before."""
        if self.b.block is not self._loaded_in:
            self._loaded, self._loaded_by, self._loaded_in = {}, {}, self.b.block

    def alloca(self, ty):
        with self.b.goto_block(self.entry):
            return self.b.alloca(ty)

    def emit_loops(self, group: Group):
        for job in group.jobs:
            if job.prologue:
                job.prologue(self)
        domain = group.domain
        ranges = [(0, d) for d in domain]
        self._nest(group, ranges, 0, [])
        for job in group.jobs:
            if job.epilogue:
                job.epilogue(self)

    def emit_parallel(self, group, plan):
        """Emit `group`'s loop nest as a function running the rows of one chunk, called for every chunk
        through the thread pool; then, here, the first nonzero status of a chunk (in chunk order) returns,
        and each reduction folds its chunks' partial values in chunk order and stores the total."""
        self._chunked += 1
        name = f"{self.name}.chunk{self._chunked}"
        folds = [job.fold for job in group.jobs if job.fold is not None]
        positions = self._positions(group.reads | group.writes)
        chunk = self._new_function(name, positions, extra=(I64, I64, PTR))
        chunk.linkage = "internal"
        arguments = [self.argument(position) for position in positions] + [self._workspace()]
        outer = (self.function, self.entry, self.b, [(buffer, buffer.pointer) for buffer, _ in self._pointers])
        self._start(chunk)
        self._make_pointers(group.reads | group.writes)
        *_, first, end, partials = chunk.args
        for job in group.jobs:
            if job.prologue:
                job.prologue(self)
        self._rows = (first, end)
        self._nest(group, [(0, d) for d in group.domain], 0, [])
        self._rows = None
        for index, fold in enumerate(folds):
            self.b.store(fold.running(self), self.b.gep(partials, [ir.Constant(I64, index * parallel.PARTIAL_BYTES)],
                                                        source_etype=I8))
        with self.b.goto_block(self.entry):
            self.b.branch(chunk.blocks[1])
        self.b.ret(ir.Constant(I32, 0))
        self.function, self.entry, self.b, pointers = outer
        for buffer, pointer in pointers:
            buffer.pointer = pointer
        task = parallel.emit_task(self.module, name + ".task", chunk, plan, len(arguments), len(folds))

        b = self.b
        context = self.alloca(ir.ArrayType(PTR, len(arguments) + 2))
        statuses = self.alloca(ir.ArrayType(I32, plan.count))
        values = self.alloca(ir.ArrayType(I8, max(1, plan.count * len(folds) * parallel.PARTIAL_BYTES)))
        for index, value in enumerate([*arguments, values, statuses]):
            b.store(value, b.gep(context, [ir.Constant(I64, 0), ir.Constant(I64, index)]))
        b.call(pool.declare(self.module), [task, context, ir.Constant(I64, plan.count), ir.Constant(I32, self.threads)])

        def check(c):
            status = b.load(b.gep(statuses, [ir.Constant(I64, 0), c]), typ=I32)
            self._return_unless(b.icmp_unsigned("==", status, ir.Constant(I32, 0)), status)
        self.for_range(0, plan.count, check)
        stride = len(folds) * parallel.PARTIAL_BYTES
        for index, fold in enumerate(folds):
            def add(c, running, index=index, fold=fold):
                offset = b.add(b.mul(c, ir.Constant(I64, stride)), ir.Constant(I64, index * parallel.PARTIAL_BYTES))
                value = b.load(b.gep(values, [offset], source_etype=I8), typ=fold.type)
                return [fold.combine(self, running, value)]
            total = self._fold_loop(plan.count, fold.init, add)
            fold.finish(self, total)

    def _fold_loop(self, count, init, step):
        """The value carried through `count` steps from `init` (step(i, value) -> [next value])."""
        result = {}

        def body(i, value):
            following = step(i, value)
            result["phi"] = value
            return following
        self.for_range(0, count, body, carried=(init,))
        return result["phi"]

    def _nest(self, group, ranges, axis, idx):
        if axis == len(ranges):
            for job in group.jobs:
                self._guarded_body(job, idx)
            return
        lo, hi = ranges[axis]
        if hi - lo == 1:
            self._nest(group, ranges, axis + 1, idx + [Coord.constant(lo)])
            return
        pieces = [(lo, hi)]
        if axis == len(ranges) - 1:  # split the innermost loop where unslices change status
            pieces = self._pieces(group, idx, lo, hi)
        for piece_lo, piece_hi in pieces:
            start, stop = piece_lo, piece_hi
            if axis == 0 and self._rows is not None:  # a chunk: the rows of this piece in [first, end)
                b, (first, end) = self.b, self._rows
                start = b.select(b.icmp_signed(">", first, ir.Constant(I64, piece_lo)), first, ir.Constant(I64, start))
                stop = b.select(b.icmp_signed("<", end, ir.Constant(I64, piece_hi)), end, ir.Constant(I64, stop))
            self.for_range(start, stop,
                           lambda i: self._nest(group, ranges, axis + 1, idx + [Coord(i, piece_lo, piece_hi)]))

    def _pieces(self, group, idx, lo, hi):
        """The ranges to loop over separately: split where smaller jobs end, and where unslices change
        status (learned by emitting the body once into a scratch function, when there are unslices), unless
        that makes more than UNSLICE_PIECES pieces of a loop of at most SHORT_NEST steps: each piece is a copy
        of the body (the gradient of x[i % 8] over many i, a sum of many unslices, was 8 copies of one element
        each, scalar code), and in a short loop testing the index costs little."""
        points = {squeezed(job.domain)[-1] for job in group.jobs}
        if self._unslices:
            found = {p for p in self._probe_split_points(group, idx, lo, hi) if lo < p < hi}
            if len(found) < UNSLICE_PIECES or hi - lo > SHORT_NEST:
                points |= found
        cuts = sorted({lo, hi} | {p for p in points if lo < p < hi})
        return list(zip(cuts[:-1], cuts[1:]))

    def _probe_split_points(self, group, idx, lo, hi) -> set:
        """Where the group's unslices change status along its innermost loop (the body, emitted once)."""
        self._probes += 1
        scratch = ir.Function(self.module, ir.FunctionType(ir.VoidType(), [I64]),
                              f"{self.function.name}.probe{self._probes}")
        saved, self.b = self.b, ir.IRBuilder(scratch.append_basic_block())
        probe = Coord(scratch.args[0], lo, hi)
        self._splits = (probe, set())
        try:
            for job in group.jobs:
                job.body(self, _unsqueeze(job.domain, idx + [probe]))
        finally:
            points = self._splits[1]
            self._splits, self.b = None, saved
            del self.module.globals[scratch.name]
        return points

    def _guarded_body(self, job, idx):
        """job's body at idx, if idx lies in the job's domain (static where ranges tell, else tested)."""
        inside, narrowed = [], []
        for coord, extent in zip(idx, squeezed(job.domain)):
            if coord.lo >= extent:
                return
            if coord.hi > extent:
                inside.append(self.b.icmp_unsigned("<", coord.value, ir.Constant(I64, extent)))
                coord = Coord(coord.value, coord.lo, extent)
            narrowed.append(coord)
        if not inside:
            job.body(self, _unsqueeze(job.domain, narrowed))
            return
        condition = inside[0]
        for more in inside[1:]:
            condition = self.b.and_(condition, more)
        with self.b.if_then(condition):
            job.body(self, _unsqueeze(job.domain, narrowed))

    def note_split(self, coord, points):
        if self._splits is not None and coord is self._splits[0]:
            self._splits[1].update(points)

    def for_range(self, lo, hi, body, carried=()):
        """Loop i over [lo, hi) (each an int, or an i64 found at run time): body(i, *values) emits one step.
        With `carried` (the values entering the first step, e.g. pointers that swap), body returns the
        values entering the next one. A static range of at least one step without carried values is tested
        after each step: the rotated form LLVM's loop passes want, which they would otherwise make. In a long
        program, a short one that is plainly vectorizable (loophints.py) is rewritten as vector code (lanes.py),
        or where its accesses are not contiguous (and it sums no floats in order) gets its trip count as vector
        width hint."""
        b = self.b
        preheader = b.block
        function = preheader.parent
        test_first = bool(carried) or isinstance(lo, ir.Value) or isinstance(hi, ir.Value) or lo >= hi
        header = function.append_basic_block("loop")
        inside = function.append_basic_block("loop.body") if test_first else header
        done = function.append_basic_block("loop.end")
        b.branch(header)
        b.position_at_end(header)
        i = b.phi(I64)
        i.add_incoming(lo if isinstance(lo, ir.Value) else ir.Constant(I64, lo), preheader)
        values = [b.phi(value.type) for value in carried]
        for phi, value in zip(values, carried):
            phi.add_incoming(value, preheader)
        stop = hi if isinstance(hi, ir.Value) else ir.Constant(I64, hi)
        if test_first:
            b.cbranch(b.icmp_signed("<", i, stop), inside, done)
            b.position_at_end(inside)
        following = body(i, *values)
        for phi, value in zip(values, following if carried else ()):
            phi.add_incoming(value, b.block)
        step = b.add(i, ir.Constant(I64, 1), flags=["nsw", "nuw"])
        i.add_incoming(step, b.block)
        if test_first:
            b.branch(header)
        else:
            back = b.cbranch(b.icmp_signed("<", step, stop), header, done)
            if self.outlined_math and b.block is header and loophints.vectorizable(header, i, hi - lo, serial=True):
                if (not lanes.rewrite(b, preheader, header, done, i, lo, hi - lo)
                        and loophints.vectorizable(header, i, hi - lo)):
                    loophints.hint(self.module, back, hi - lo)
        b.position_at_end(done)

    def fail_unless(self, condition, message: str, cleanup=None):
        """Return error number for `message` from the kernel when `condition` is false (after
        cleanup(k) when given)."""
        if message not in self.errors:
            self.errors.append(message)
        self._return_unless(condition, ir.Constant(I32, self.errors.index(message) + 1), cleanup)


def _once_key(operand, idx) -> tuple:
    """What names operand's value at idx in `once`'s memory: the operand and each coordinate (its constant,
    or the LLVM value's identity, and its range)."""
    return (id(operand), *((c.value.constant if isinstance(c.value, ir.Constant) else id(c.value), c.lo, c.hi)
                           for c in idx))


def _similar(a, b) -> bool:
    """Domains worth one loop nest: same rank, each extent within a factor of 2 of the other."""
    return len(a) == len(b) and all(2 * min(x, y) >= max(x, y) for x, y in zip(a, b))


def _unsqueeze(domain, idx) -> list:
    """The index of a job over `domain` from the index of its squeezed loop."""
    coords = iter(idx)
    return [Coord.constant(0) if d == 1 else next(coords) for d in domain]


def _free(gaps: list, top: int, start: int, end: int) -> int:
    """Return [start, end) to the sorted free ranges `gaps`, merged with its neighbours; the new top."""
    position = bisect.bisect(gaps, (start, end))
    if position < len(gaps) and gaps[position][0] == end:
        end = gaps.pop(position)[1]
    if position and gaps[position - 1][1] == start:
        start = gaps.pop(position - 1)[0]
        position -= 1
    if end == top:
        return start
    gaps.insert(position, (start, end))
    return top


def _round_up(n: int) -> int:
    return (n + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT


# A kernel's workspace up to this many bytes is on the caller's stack (threads have at least 64 KiB
# of it everywhere symgrad runs); a larger one is malloc'd for the call.
STACK_WORKSPACE = 1 << 14

# Work (see releases_gil) from which a call releases the GIL: ~10 us or more.
GIL_FREE_WORK = 1 << 14

# Arguments (inputs and outputs) from which a kernel's body takes them in an array: a call passes the seventh
# and later on the stack, and LLVM's code generation of a call of 1,600 arguments cost more than its loops.
MANY_ARGUMENTS = 64

# Loop groups per emitted function: LLVM's O3 time grows faster than a function's size, so a
# long program is split into functions of about this many loop nests, a nest of JOBS_PER_GROUP jobs counting
# as one (a nest of more counts as that many more). A loop nest takes at most JOBS_PER_NEST jobs: a function
# returning 1,600 arrays of one shape was one loop of 1,600 jobs, a body LLVM's passes took superlinear time on.
GROUPS_PER_FUNCTION = 16
# A loop of at most SHORT_NEST steps is split where unslices change status into at most this many pieces.
UNSLICE_PIECES = 4
JOBS_PER_GROUP = 4
JOBS_PER_NEST = 16
SHORT_NEST = 64

# Multi-use values costing more than this per element are stored; cheaper ones are recomputed
# by each consumer (memory traffic costs more than a few operations, and LLVM merges the
# recomputations that land in one loop).
STORE_COST = 24
# In a long program (more than LONG_PROGRAM nodes, or more than INLINED_MATH transcendentals: inlined, each was
# 5-8 ms of LLVM, and 100 outputs of a sine compiled in 0.8 s, 200 in 0.4), transcendentals are calls of
# functions compiled once (inlined, each call site is code LLVM optimizes again), and a value of at most
# CACHED_SIZE elements, which stays in cache, is stored once it costs more than SMALL_STORE_COST (about a
# transcendental): its uses then land in many loop nests, and each recomputation is code LLVM compiles again
# (most of the compile time of a long program of small arrays); a load from cache costs less. In a short program
# the uses share loops, where LLVM merges the recomputations.
LONG_PROGRAM = 200
INLINED_MATH = 16
CACHED_SIZE = 1 << 14
SMALL_STORE_COST = 8


def _long(graph) -> bool:
    """Whether `graph` is a long program: more than LONG_PROGRAM nodes, or more than INLINED_MATH transcendentals
    (in its sub-graphs too), each of which, inlined, is a copy of its math kernel that LLVM compiles again."""
    if len(graph.nodes) > LONG_PROGRAM:
        return True
    calls = 0
    for node in sir.all_nodes(graph):
        expr = node.params.get("expr") if node.prim.name == "ew" else None
        if expr is not None:
            calls += sum(type(e).__name__ in mathlib.NAMES for e in sympy.preorder_traversal(expr))
            if calls > INLINED_MATH:
                return True
    return False


def _worth_storing(operand, program_nodes: int) -> bool:
    size = 1
    for extent in operand.shape:
        size *= extent
    small = program_nodes > LONG_PROGRAM and size <= CACHED_SIZE
    return operand.cost > (SMALL_STORE_COST if small else STORE_COST)


def _read_from_memory(graph, blas_calls) -> set:
    """Ids of values some consumer reads as a buffer (BUFFER_INPUTS): computing those once,
    into memory, serves every consumer."""
    wanted = set()
    for node in graph.nodes:
        reads = BUFFER_INPUTS.get(node.prim)
        if reads is not None:
            wanted.update(id(v) for v in reads(node, blas_calls))
    return wanted
