"""lanes.py on loops that store or sum the loop index itself as a number: no vector form of the index is built, so
the loop must stay a loop; the rewrite referred to the removed loop's index (a crash printing the module)."""
from __future__ import annotations

import pytest

llvm = pytest.importorskip("llvmlite.binding")
from llvmlite import ir  # noqa: E402

from symgrad.codegen.llvm import lanes, loophints  # noqa: E402

I64 = ir.IntType(64)


def _loop(kind):
    """A module with one 8-step loop like KernelBuilder.for_range's; whether lanes.rewrite took it."""
    module = ir.Module("probe")
    function = ir.Function(module, ir.FunctionType(ir.VoidType(), [ir.PointerType(), ir.PointerType()]), "f")
    out, source = function.args
    b = ir.IRBuilder(function.append_basic_block("entry"))
    slot = b.alloca(I64)
    b.store(ir.Constant(I64, 0), slot)
    preheader, header, done = b.block, function.append_basic_block("loop"), function.append_basic_block("done")
    b.branch(header)
    b.position_at_end(header)
    i = b.phi(I64)
    i.add_incoming(ir.Constant(I64, 0), preheader)
    if kind == "store the index":
        b.store(i, b.gep(out, [i], source_etype=I64))
    elif kind == "store an affine of it":
        b.store(b.add(b.mul(i, ir.Constant(I64, 2)), ir.Constant(I64, 1)), b.gep(out, [i], source_etype=I64))
    else:  # sum the index beside a copy
        b.store(b.add(b.load(slot, typ=I64), i), slot)
        b.store(b.load(b.gep(source, [i], source_etype=I64), typ=I64), b.gep(out, [i], source_etype=I64))
    step = b.add(i, ir.Constant(I64, 1), flags=["nsw", "nuw"])
    i.add_incoming(step, header)
    b.cbranch(b.icmp_signed("<", step, ir.Constant(I64, 8)), header, done)
    assert loophints.vectorizable(header, i, 8)
    rewritten = lanes.rewrite(b, preheader, header, done, i, 0, 8)
    b.position_at_end(done)
    b.ret_void()
    return module, rewritten


@pytest.mark.parametrize("kind", ["store the index", "store an affine of it", "sum the index"])
def test_a_loop_reading_its_index_as_a_number_stays_a_loop(kind):
    module, rewritten = _loop(kind)
    assert not rewritten
    llvm.parse_assembly(str(module)).verify()
