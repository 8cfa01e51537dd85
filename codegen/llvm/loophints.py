"""Which of a long kernel's short loops are plainly vectorizable: those lanes.py rewrites as vector code, or,
where an access is not contiguous, hinted with `llvm.loop.vectorize.width` = the trip count, so LLVM's loop
vectorizer skips its search over widths and interleavings (the hints alone took 0.4 of its 1.1 s on the
10,000-node program, with the same object code).

A hinted loop LLVM then cannot vectorize makes it print a remark to stderr (llvmlite installs no diagnostic
handler to silence it), so a loop gets a hint only when it is plainly vectorizable: one basic block; loads at
affine indices and stores at the loop index, all of one type; no buffer read elsewhere than where the loop
writes it; running values in registers only by reassociable adds and multiplies; calls only of math kernels
with a vector variant of that width, or of LLVM's elementwise intrinsics. lanes.py takes more (`serial=True`):
a running sum in memory at an address fixed in the loop (a row of a matrix-vector product), added in the loop's
order, and indices offset by values from outside the loop.
"""
from __future__ import annotations

from llvmlite import ir

from .types import I32

# Trip counts hinted: the widths the cost model picks for them anyway on AVX-512 and AVX2 hosts.
LANES = (4, 8)

_ARITHMETIC = frozenset({
    "fadd", "fsub", "fmul", "fdiv", "fneg", "add", "sub", "mul", "and", "or", "xor", "shl", "lshr", "ashr",
    "icmp", "fcmp", "select", "getelementptr", "sitofp", "uitofp", "fptosi", "fpext", "fptrunc", "zext",
    "sext", "trunc"})
_INTRINSICS = ("llvm.sqrt.", "llvm.fabs.", "llvm.floor.", "llvm.ceil.", "llvm.copysign.", "llvm.rint.",
               "llvm.fma.", "llvm.fmuladd.")
_REDUCING = frozenset({"fadd", "fmul", "add", "mul"})
_AFFINE = frozenset({"add", "sub", "mul", "shl"})


def hint(module: ir.Module, branch, lanes: int) -> None:
    """Give the loop whose back edge is `branch` the width hint `lanes` (one distinct loop node per width)."""
    branch.set_metadata("llvm.loop", _loop_node(module, lanes))


def vectorizable(block, index, lanes: int, serial: bool = False) -> bool:
    """Whether the single-block loop `block` over `index` (its induction phi), `lanes` steps, is plainly
    vectorizable at that width (see the module's docstring); conservative: False when unsure. `serial`: as
    lanes.py can emit it, running sums in the loop's order and in memory included."""
    if lanes not in LANES:
        return False
    stored, loaded, slots, types = {}, [], {}, set()
    fixed = {slot_key(i.operands[1]) for i in block.instructions if serial and i.opname == "store"
             and fixed_address(i.operands[1], block)}  # where running sums in memory are
    for instruction in block.instructions:
        opname = instruction.opname.split(" ", 1)[0]
        if opname in _ARITHMETIC or opname == "br":
            continue
        if opname == "phi":
            if instruction is not index:
                return False
        elif opname == "load":
            address = instruction.operands[0]
            if isinstance(address, ir.AllocaInstr) or fixed and _in(address, fixed, block):
                slots.setdefault(slot_key(address), [address, [], []])[1].append(instruction)
            elif isinstance(address, ir.GEPInstr) and not all(_affine(i, index, block if serial else None)
                                                               for i in address.indices):
                return False  # a gather: its pointer checks need a scalar epilogue, which a short loop has not
            else:
                loaded.append(address)
                types.add(str(instruction.type))
        elif opname == "store":
            value, address = instruction.operands
            if isinstance(address, ir.AllocaInstr) or fixed and _in(address, fixed, block):
                slots.setdefault(slot_key(address), [address, [], []])[2].append(value)
                if not isinstance(address, ir.AllocaInstr):
                    types.add(str(value.type))
            elif not (isinstance(address, ir.GEPInstr) and address.indices[-1] is index and len(address.indices) == 1):
                return False  # only at the loop index: a store at an address of its own is a dependence
            else:
                stored[id(address.pointer)] = address
                types.add(str(value.type))
        elif opname == "call":
            if not _vector_callee(instruction.callee, lanes):
                return False
        else:
            return False
    if len(types) > 1:
        return False  # accesses of two sizes (a bool stored beside floats): LLVM would check pointers at run time
    for address, _, _ in slots.values():
        if not isinstance(address, ir.AllocaInstr):
            if id(address.pointer) in stored:
                return False  # the buffer of a running sum written elsewhere too
            stored[id(address.pointer)] = address  # and read only there (below)
    for address in loaded:
        base = address.pointer if isinstance(address, ir.GEPInstr) else address
        written = stored.get(id(base))
        if written is not None and not (isinstance(address, ir.GEPInstr) and address.indices == written.indices):
            return False  # read elsewhere than where it is written: a dependence between steps (a scan)
    if not slots:
        return True
    uses = {}
    for instruction in block.instructions:
        for operand in instruction.operands:
            uses[id(operand)] = uses.get(id(operand), 0) + 1
    return all(_register_reduction(*slot, uses, serial) for slot in slots.values())


def slot_key(address) -> tuple:
    """What names a running value's place: its stack slot, or a buffer and the indices (fixed in the loop)."""
    if isinstance(address, ir.AllocaInstr):
        return (id(address),)
    return (id(address.pointer), *(id(i) for i in address.indices))


def _in(address, fixed, block) -> bool:
    """Whether `address` is one of the running sums' fixed addresses `fixed` (their slot keys)."""
    return fixed_address(address, block) and slot_key(address) in fixed


def fixed_address(address, block) -> bool:
    """An element's address computed from values computed outside the loop."""
    return (isinstance(address, ir.GEPInstr) and len(address.indices) == 1
            and not any(_inside(v, block) for v in (address.pointer, *address.indices)))


def _inside(value, block) -> bool:
    return isinstance(value, ir.Instruction) and value.parent is block


def _affine(value, index, block=None, depth=4) -> bool:
    """Whether an address index is a constant, the loop index, or sums and products of those (and of values
    from outside the loop `block` when given)."""
    if value is index or isinstance(value, ir.Constant) or (block is not None and not _inside(value, block)):
        return True
    return (depth > 0 and isinstance(value, ir.Instruction) and value.opname.split(" ", 1)[0] in _AFFINE
            and all(_affine(operand, index, block, depth - 1) for operand in value.operands))


def _register_reduction(slot, loads, values, uses, serial) -> bool:
    """Whether a stack slot (or a fixed address) is a running value: its one store an add or multiply of its one
    load, each used by nothing else in the loop; a float one reassociable unless `serial`."""
    if len(loads) != 1 or len(values) != 1:
        return False
    value = values[0]
    if not isinstance(value, ir.Instruction) or value.opname.split(" ", 1)[0] not in _REDUCING:
        return False
    if value.opname.startswith("f") and "reassoc" not in getattr(value, "flags", ()) and not serial:
        return False
    return loads[0] in value.operands and uses.get(id(loads[0])) == 1 and uses.get(id(value)) == 1


def _vector_callee(callee, lanes: int) -> bool:
    """A math kernel with a vector variant of `lanes` lanes, or an elementwise LLVM intrinsic."""
    name = getattr(callee, "name", "")
    if name.startswith(_INTRINSICS):
        return True
    attributes = getattr(callee, "attributes", ())
    return any(isinstance(a, str) and a.startswith('"vector-function-abi-variant"') and f"_ZGV_LLVM_N{lanes}v" in a
               for a in attributes)


def _loop_node(module, lanes):
    """The module's distinct loop metadata node hinting width `lanes`, made on first use."""
    for node in module.metadata:
        if isinstance(node, _LoopNode) and node.lanes == lanes:
            return node
    width = module.add_metadata([ir.MetaDataString(module, "llvm.loop.vectorize.width"), ir.Constant(I32, lanes)])
    return _LoopNode(module, width, lanes)


class _LoopNode(ir.values.MDValue):
    """`!N = distinct !{!N, !width}`: a loop ID refers to itself (llvmlite's metadata cannot)."""

    def __init__(self, module, width, lanes):
        super().__init__(module, [width], name=str(len(module.metadata)))
        self.lanes = lanes

    def descr(self, buf):
        buf += (f"distinct !{{ {self.get_reference()}, {self.operands[0].get_reference()} }}", "\n")
