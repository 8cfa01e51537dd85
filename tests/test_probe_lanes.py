"""lanes.py on loops that store or sum the loop index itself as a number: no vector form of the index is built, so
the loop must stay a loop; the rewrite referred to the removed loop's index (a crash printing the module). A float
sum in memory at a fixed address is vector code, unless the loop reads that buffer elsewhere too."""
from __future__ import annotations

import pytest

llvm = pytest.importorskip("llvmlite.binding")
from llvmlite import ir  # noqa: E402

from symgrad.codegen.llvm import lanes, loophints  # noqa: E402

I64 = ir.IntType(64)
F64 = ir.DoubleType()


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
    elif kind.startswith("sum in memory"):  # out[5] += source[i] (* out[i])
        total = b.gep(out, [ir.Constant(I64, 5)], source_etype=F64)
        term = b.load(b.gep(source, [i], source_etype=F64), typ=F64)
        if kind.endswith("read at the index"):
            term = b.fmul(term, b.load(b.gep(out, [i], source_etype=F64), typ=F64))
        b.store(b.fadd(b.load(total, typ=F64), term), total)
    else:  # sum the index beside a copy
        b.store(b.add(b.load(slot, typ=I64), i), slot)
        b.store(b.load(b.gep(source, [i], source_etype=I64), typ=I64), b.gep(out, [i], source_etype=I64))
    step = b.add(i, ir.Constant(I64, 1), flags=["nsw", "nuw"])
    i.add_incoming(step, header)
    b.cbranch(b.icmp_signed("<", step, ir.Constant(I64, 8)), header, done)
    if not loophints.vectorizable(header, i, 8, serial=True):
        return None, False
    rewritten = lanes.rewrite(b, preheader, header, done, i, 0, 8)
    b.position_at_end(done)
    b.ret_void()
    return module, rewritten


@pytest.mark.parametrize("kind", ["store the index", "store an affine of it", "sum the index"])
def test_a_loop_reading_its_index_as_a_number_stays_a_loop(kind):
    module, rewritten = _loop(kind)
    assert module is not None and not rewritten  # vectorizable, yet left a loop
    llvm.parse_assembly(str(module)).verify()


def test_a_float_sum_in_memory_is_vector_code_added_in_order():
    module, rewritten = _loop("sum in memory")
    assert rewritten
    text = str(module)
    assert 'call double @"llvm.vector.reduce.fadd.v8f64"(double %' in text and "loop:" not in text
    llvm.parse_assembly(text).verify()


def test_a_sum_in_memory_whose_buffer_is_read_elsewhere_stays_a_loop():
    assert _loop("sum in memory, read at the index") == (None, False)
