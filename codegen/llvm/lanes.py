"""A short loop emitted as vector code: a plainly vectorizable loop of 4 or 8 steps (loophints.vectorizable)
whose loads and stores are contiguous is rewritten, once emitted, as the one step of `<n x T>` operations
LLVM's loop vectorizer would make of it at that width, so the vectorizer has nothing left to do (in a long
program, a thousand such loops were most of its 1.1 s). Each lane computes what its step did: the same
operations, the math kernels' vector variants (the same bits), and a running sum or product reduced as the
vectorizer reduces it (the start value in the first lane, then `llvm.vector.reduce.*`), or, where the
loop adds floats in order (a row of a matrix-vector product summed in memory), reduced in that order.
"""
from __future__ import annotations

from llvmlite import ir

from .loophints import fixed_address, slot_key
from .types import I32

_AFFINE = frozenset({"add", "sub", "mul", "shl"})
_CASTS = frozenset({"sitofp", "uitofp", "fptosi", "fpext", "fptrunc", "zext", "sext", "trunc"})
_IDENTITY = {"fadd": -0.0, "fmul": 1.0, "add": 0, "mul": 1}
_INDEXED = frozenset({"icmp", "select"})  # what may read a growing index as a number (as a vector of indices)


class _Unsupported(Exception):
    """The loop has something this rewrite does not handle (it stays a loop)."""


def rewrite(builder: ir.IRBuilder, preheader, header, done, index, lo: int, lanes: int) -> bool:
    """Replace the single-block loop `header` (induction `index` from `lo`, `lanes` steps, entered from
    `preheader`, leaving to `done`) by straight-line vector code; False, and nothing changed, when it has a
    non-contiguous access or an operation this rewrite does not handle."""
    function = header.parent
    block = function.append_basic_block("lanes")
    try:
        _Lanes(block, header, index, lo, lanes).emit()
    except _Unsupported:
        function.blocks.remove(block)
        return False
    builder.position_at_end(block)
    builder.branch(done)
    preheader.terminator.operands[0] = block
    function.blocks.remove(header)
    for instruction in header.instructions:  # freed now rather than by the cyclic collector (backend._release)
        instruction.__dict__.clear()
    header.__dict__.clear()
    return True


def _name(instruction) -> str:
    return instruction.opname.split(" ", 1)[0]


class _Lanes:
    """Emits the vector form of one loop block into `block`."""

    def __init__(self, block, header, index, lo, lanes):
        self.b = ir.IRBuilder(block)
        self.header, self.index, self.lo, self.lanes = header, index, lo, lanes
        self.module = header.parent.module
        self.values = {}  # id(old value) -> its vector value, or its scalar value where the same in all lanes
        self.first = {}  # id(old index value depending on the loop index) -> its value at the first step
        self.steps = {}  # id(old index value) -> how much it grows per step (0: the same in all steps)
        self.running = {}  # id(old load of a running value's slot) -> the slot's key (loophints.slot_key)
        self.reductions = {}  # id(old add or multiply of a running value) -> it

    def emit(self):
        instructions = self.header.instructions
        condition = instructions[-1].operands[0]
        control = {id(instructions[-1]), id(condition), id(condition.operands[0]), id(self.index)}
        self.slots = {self._slot(i.operands[1]) for i in instructions if i.opname == "store"} - {None}
        self.steps[id(self.index)] = 1
        self.first[id(self.index)] = ir.Constant(self.index.type, self.lo)
        for instruction in instructions:
            if id(instruction) not in control:
                self._instruction(instruction)

    def _instruction(self, old):
        opname = _name(old)
        if any(id(o) in self.running for o in old.operands):
            self.reductions[id(old)] = old  # the running value's next: emitted where it is stored
        elif opname in _AFFINE and any(id(o) in self.steps for o in old.operands):
            self._affine(old, opname)
        elif opname == "getelementptr":
            self._address(old)
        elif opname == "load":
            self._load(old)
        elif opname == "store":
            self._store(old)
        else:
            self._compute(old, opname)

    # ------------------------------------------------------------------ index arithmetic and addresses
    def _step(self, value) -> int:
        """How much an index value grows per step (0 for one defined outside the loop or constant)."""
        step = self.steps.get(id(value))
        if step is None:
            same = self.values.get(id(value))  # computed in the loop, the same in all steps
            if same is not None and not isinstance(same.type, ir.VectorType):
                return 0
            if isinstance(value, ir.Instruction) and value.parent is self.header:
                raise _Unsupported  # a value of the loop that is no affine index
            return 0
        return step

    def _at_first(self, value):
        return self.first.get(id(value), self.values.get(id(value), value))

    def _affine(self, old, opname):
        a, b = old.operands
        sa, sb = self._step(a), self._step(b)
        if opname == "add":
            step = sa + sb
        elif opname == "sub":
            step = sa - sb
        elif opname == "mul" and isinstance(b, ir.Constant) and not sb:
            step = sa * b.constant
        elif opname == "mul" and isinstance(a, ir.Constant) and not sa:
            step = sb * a.constant
        elif opname == "shl" and isinstance(b, ir.Constant) and not sb:
            step = sa << b.constant
        else:
            raise _Unsupported
        self.steps[id(old)] = step
        (self.first if step else self.values)[id(old)] = getattr(self.b, opname)(self._at_first(a), self._at_first(b))

    def _address(self, old):
        if len(old.indices) != 1 or (isinstance(old.pointer, ir.Instruction) and old.pointer.parent is self.header):
            raise _Unsupported
        step = self._step(old.indices[0])
        pointer, first = self.values.get(id(old.pointer), old.pointer), self._at_first(old.indices[0])
        if isinstance(first, ir.Constant) and first.constant == 0:
            gep = pointer  # the first element's address (no instruction for it)
        else:
            gep = self.b.gep(pointer, [first], inbounds=True, source_etype=getattr(old, "source_etype", None))
        self.steps[id(old)] = step
        (self.first if step else self.values)[id(old)] = gep

    # ------------------------------------------------------------------ memory
    def _slot(self, address):
        """The key of a running value's place at `address` (a stack slot or a fixed address), else None."""
        if isinstance(address, ir.AllocaInstr) or fixed_address(address, self.header):
            return slot_key(address)
        return None

    def _load(self, old):
        address = old.operands[0]
        slot = self._slot(address)
        if slot in self.slots:
            self.running[id(old)] = slot
            return
        step = self.steps.get(id(address), 0)
        if step == 0:
            self.values[id(old)] = self.b.load(self.values.get(id(address), address), typ=old.type)
        elif step == 1:
            self.values[id(old)] = self.b.load(self.first[id(address)], typ=self._vector(old.type),
                                               align=_size(old.type))
        else:
            raise _Unsupported  # strided: a gather

    def _store(self, old):
        value, address = old.operands
        slot = self._slot(address)
        if slot in self.slots:
            self._reduce(value, self.values.get(id(address), address), slot)
            return
        if self.steps.get(id(address)) != 1:
            raise _Unsupported
        self.b.store(self._lanes(value), self.first[id(address)], align=_size(value.type))

    def _reduce(self, old, address, slot):
        """The running value at `address` gets its start combined with every lane: in order where floats are
        added in order, else as the vectorizer does it."""
        opname = _name(old)
        loaded = next((o for o in old.operands if self.running.get(id(o)) == slot), None)
        if id(old) not in self.reductions or opname not in _IDENTITY or loaded is None:
            raise _Unsupported
        term = old.operands[1] if old.operands[0] is loaded else old.operands[0]
        flags = list(getattr(old, "flags", ()))
        start = self.b.load(address, typ=old.type)
        vector = self._vector(old.type)
        floats = opname.startswith("f")
        if floats and "reassoc" not in flags:
            reduce = self._function(f"llvm.vector.reduce.{opname}.{_suffix(vector)}",
                                    ir.FunctionType(old.type, [old.type, vector]))
            self.b.store(self.b.call(reduce, [start, self._lanes(term)], fastmath=flags), address)
            return
        identity = self._lanes(ir.Constant(old.type, _IDENTITY[opname]))
        combine = getattr(self.b, opname)
        started = combine(self._lanes(term), self.b.insert_element(identity, start, ir.Constant(I32, 0)),
                          **({"flags": flags} if floats else {}))
        name = f"llvm.vector.reduce.{opname}.{_suffix(vector)}"
        if floats:
            reduce = self._function(name, ir.FunctionType(old.type, [old.type, vector]))
            total = self.b.call(reduce, [ir.Constant(old.type, _IDENTITY[opname]), started], fastmath=flags)
        else:
            total = self.b.call(self._function(name, ir.FunctionType(old.type, [vector])), [started])
        self.b.store(total, address)

    # ------------------------------------------------------------------ arithmetic
    def _compute(self, old, opname):
        operands = old.operands[1:] if opname == "call" else old.operands
        if any(id(o) in self.running for o in operands):
            raise _Unsupported  # a running value read as a number
        if opname not in _INDEXED and any(self.steps.get(id(o)) for o in operands):
            raise _Unsupported  # an index read as a number (other than compared or chosen)
        mapped = [self._indices(o) if self.steps.get(id(o)) else self.values.get(id(o), o) for o in operands]
        if not any(isinstance(v.type, ir.VectorType) for v in mapped):
            vector = False
        else:
            vector = True
            mapped = [v if isinstance(v.type, ir.VectorType) else self._lanes_of(v) for v in mapped]
        b, flags = self.b, list(getattr(old, "flags", ()))
        if opname == "call":
            result = b.call(self._callee(old.callee, vector), mapped)
        elif opname in ("fadd", "fsub", "fmul", "fdiv", "add", "sub", "mul", "and", "or", "xor", "shl", "lshr",
                        "ashr"):
            result = getattr(b, {"and": "and_", "or": "or_"}.get(opname, opname))(
                *mapped, **({"flags": flags} if opname.startswith("f") or flags else {}))
        elif opname == "fneg":
            result = b.fneg(mapped[0], flags=flags)
        elif opname in ("fcmp", "icmp"):
            result = _compare(b, opname, old.op, mapped, flags)
        elif opname == "select":
            result = b.select(*mapped)
        elif opname in _CASTS:
            result = getattr(b, opname)(mapped[0], self._vector(old.type) if vector else old.type)
        else:
            raise _Unsupported
        self.values[id(old)] = result

    def _indices(self, old):
        """An index that grows in the loop as the vector of its value at each step (the first + step * lane):
        a gradient's unslice tests the loop index against where its slice lies."""
        value = self.values.get(id(old))
        if value is None:
            step, first = self.steps[id(old)], self._lanes_of(self.first[id(old)])
            value = self.b.add(first, ir.Constant(first.type, [step * lane for lane in range(self.lanes)]))
            self.values[id(old)] = value
        return value

    def _lanes_of(self, value):
        """A scalar in every lane."""
        vector = self._vector(value.type)
        if isinstance(value, ir.Constant):
            return _Splat(vector, value)
        one = self.b.insert_element(ir.Constant(vector, None), value, ir.Constant(I32, 0))
        return self.b.shuffle_vector(one, ir.Constant(vector, None),
                                     ir.Constant(ir.VectorType(I32, self.lanes), [0] * self.lanes))

    def _callee(self, callee, vector):
        if not vector:
            return callee
        name = callee.name
        if name.startswith("llvm."):
            element = callee.function_type.return_type
            head = name.rsplit(".", 1)[0]
            vtype = self._vector(element)
            return self._function(f"{head}.{_suffix(vtype)}", ir.FunctionType(vtype, [vtype] * len(callee.args)))
        variant = self.module.globals.get(f"{name}.v{self.lanes}")
        if variant is None:
            raise _Unsupported
        return variant

    def _function(self, name, type_):
        existing = self.module.globals.get(name)
        return existing if existing is not None else ir.Function(self.module, type_, name)

    def _vector(self, element):
        return ir.VectorType(element, self.lanes)

    def _lanes(self, old):
        """`old`'s value in every lane: its vector, or its one value splatted."""
        if self.steps.get(id(old)):
            raise _Unsupported  # the loop index (or an affine of it) stored or summed as a number
        value = self.values.get(id(old), old)
        if isinstance(value.type, ir.VectorType):
            return value
        return self._lanes_of(value)


class _Splat(ir.Constant):
    """A constant vector of one value, written `splat (double 0.5)` (llvmlite writes out every lane)."""

    def __init__(self, vector, scalar):
        super().__init__(scalar.type, scalar.constant)
        self.type, self.text = vector, f"splat ({scalar.type} {scalar.get_reference()})"

    def _to_string(self):
        return self.text

    def _get_reference(self):
        return self.text


_RELATIONS = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}


def _compare(b, opname, op, operands, flags):
    """The builder's comparison for an LLVM predicate (`olt`, `une`, `slt`, `eq`, ...)."""
    if opname == "icmp":
        relation = _RELATIONS.get(op) or _RELATIONS[op[1:]]
        return (b.icmp_unsigned if op.startswith("u") else b.icmp_signed)(relation, *operands)
    if op in ("ord", "uno"):
        return (b.fcmp_ordered if op == "ord" else b.fcmp_unordered)(op, *operands, flags=flags)
    if op[:1] not in ("o", "u"):
        raise _Unsupported
    return (b.fcmp_ordered if op[0] == "o" else b.fcmp_unordered)(_RELATIONS[op[1:]], *operands, flags=flags)


def _size(element) -> int:
    """Alignment of one element: a vector access is aligned only as its first element."""
    return {"double": 8, "float": 4, "i64": 8, "i32": 4, "i8": 1, "i1": 1}[str(element)]


def _suffix(vector) -> str:
    element = {"double": "f64", "float": "f32"}.get(str(vector.element), str(vector.element))
    return f"v{vector.count}{element}"
