"""Native METH_FASTCALL entry points (symgrad.codegen.llvm.pyentry + symgrad.codegen.runtime) on hand-built kernels.

Checks results, that every argument the entry cannot take gives NotImplemented, Python
floats for 0-d inputs, error statuses, nested result structures, and reference counts.
"""
import ctypes
import os
import subprocess
import sys
import tracemalloc
import weakref
from pathlib import Path

import llvmlite.binding as llvm
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from llvmlite import ir

from symgrad.codegen import runtime
from symgrad.codegen.llvm import jit, pyentry

I32, I64, PTR = ir.IntType(32), ir.IntType(64), ir.PointerType()
F64, F32 = ir.DoubleType(), ir.FloatType()
OK = ir.Constant(I32, 0)

def jit_entry(module: ir.Module, name: str):
    """Optimize (O3, as the backend does) and JIT `module`; wrap its entry `name` as a builtin."""
    engine = jit.standalone_engine(str(module), runtime.symbol_addresses())
    return runtime.make_builtin(engine.get_function_address(name), name, owner=engine)


def new_kernel(module, name, count):
    """An empty kernel `i32 name(ptr, ...)` taking `count` pointers, and a builder at its start."""
    kernel = ir.Function(module, ir.FunctionType(I32, [PTR] * count), name)
    return kernel, ir.IRBuilder(kernel.append_basic_block("entry"))


def for_range(builder, n, body):
    """Emit `for i in range(n): body(i)` at the builder's position."""
    start = builder.block
    loop = builder.append_basic_block("loop")
    done = builder.append_basic_block("done")
    builder.branch(loop)
    builder.position_at_end(loop)
    i = builder.phi(I64)
    i.add_incoming(ir.Constant(I64, 0), start)
    body(i)
    step = builder.add(i, ir.Constant(I64, 1))
    i.add_incoming(step, builder.block)
    builder.cbranch(builder.icmp_signed("<", step, ir.Constant(I64, n)), loop, done)
    builder.position_at_end(done)


def element(builder, ptr, i, typ):
    """Address of element i of a `typ` buffer."""
    return builder.gep(ptr, [i], source_etype=typ)


def build_entry(make_kernel, inputs, outputs, structure, errors=()):
    """Emit `make_kernel(module)`, its entry with the given interface, and JIT both."""
    module = ir.Module("test")
    kernel = make_kernel(module)
    pyentry.emit_entry(module, kernel, "entry", inputs, outputs, structure, list(errors))
    return jit_entry(module, "entry")


def add_kernel(n, typ):
    """out0 = in0 + in1 over n elements of `typ`."""
    def make(module):
        kernel, b = new_kernel(module, "add", 3)
        x, y, out = kernel.args
        for_range(b, n, lambda i: b.store(b.fadd(b.load(element(b, x, i, typ), typ=typ),
                                                  b.load(element(b, y, i, typ), typ=typ)), element(b, out, i, typ)))
        b.ret(OK)
        return kernel
    return make


def sum_and_double_kernel(n):
    """out0 = sum(in0) (0-d), out1 = 2 * in0, over n float64 elements."""
    def make(module):
        kernel, b = new_kernel(module, "sum_and_double", 3)
        x, total, doubled = kernel.args
        b.store(ir.Constant(F64, 0.0), total)

        def body(i):
            value = b.load(element(b, x, i, F64), typ=F64)
            b.store(b.fadd(b.load(total, typ=F64), value), total)
            b.store(b.fmul(value, ir.Constant(F64, 2.0)), element(b, doubled, i, F64))
        for_range(b, n, body)
        b.ret(OK)
        return kernel
    return make


def scale_f32_kernel(n):
    """out0 = in0 * in1 with in0 a float32 scalar and in1 a float32 n-vector."""
    def make(module):
        kernel, b = new_kernel(module, "scale", 3)
        scale, x, out = kernel.args
        factor = b.load(scale, typ=F32)
        for_range(b, n, lambda i: b.store(b.fmul(factor, b.load(element(b, x, i, F32), typ=F32)),
                                           element(b, out, i, F32)))
        b.ret(OK)
        return kernel
    return make


def status_kernel(module):
    """Returns its int64 0-d input as the status, after filling its f64[2] output with ones."""
    kernel, b = new_kernel(module, "status", 2)
    code, out = kernel.args
    for_range(b, 2, lambda i: b.store(ir.Constant(F64, 1.0), element(b, out, i, F64)))
    b.ret(b.trunc(b.load(code, typ=I64), I32))
    return kernel


def copy_kernel(nbytes):
    """out0 = in0, byte by byte."""
    def make(module):
        kernel, b = new_kernel(module, "copy", 2)
        src, dst = kernel.args
        for_range(b, nbytes, lambda i: b.store(b.load(element(b, src, i, ir.IntType(8)), typ=ir.IntType(8)),
                                               element(b, dst, i, ir.IntType(8))))
        b.ret(OK)
        return kernel
    return make


F64_34 = ((3, 4), np.dtype(np.float64))
ERRORS = [("IndexError", "index out of bounds in take"), ("ValueError", "negative size")]


@pytest.fixture(scope="module")
def add():
    return build_entry(add_kernel(12, F64), [F64_34, F64_34], [F64_34], 0)


@pytest.fixture(scope="module")
def sum_and_double():
    return build_entry(sum_and_double_kernel(10), [((10,), np.float64)],
                       [((), np.float64), ((10,), np.float64)], (0, 1))


@pytest.fixture(scope="module")
def status():
    return build_entry(status_kernel, [((), np.int64)], [((2,), np.float64)], 0, ERRORS)


def test_object_layout_offsets_match_this_numpy_and_cpython():
    x = np.arange(12.0).reshape(3, 4)

    def read(obj, offset, ctype):
        return ctype.from_address(id(obj) + offset).value

    assert read(x, pyentry.OB_TYPE, ctypes.c_void_p) == id(np.ndarray)
    assert read(x, pyentry.ARRAY_DATA, ctypes.c_void_p) == x.ctypes.data
    assert read(x, pyentry.ARRAY_ND, ctypes.c_int) == 2
    dims = read(x, pyentry.ARRAY_DIMS, ctypes.c_void_p)
    assert list((ctypes.c_int64 * 2).from_address(dims)) == [3, 4]
    assert read(x, pyentry.ARRAY_DESCR, ctypes.c_void_p) == id(x.dtype)
    assert read(x, pyentry.ARRAY_FLAGS, ctypes.c_int) == x.flags.num
    assert read(x.dtype, pyentry.DESCR_TYPE_NUM, ctypes.c_int) == x.dtype.num
    assert read(x.dtype, pyentry.DESCR_BYTEORDER, ctypes.c_char) == x.dtype.byteorder.encode()
    assert read(2.5, pyentry.FLOAT_VALUE, ctypes.c_double) == 2.5


def test_symbol_addresses_cover_symbols_and_stay_out_of_the_ir():
    addresses = runtime.symbol_addresses()
    assert set(addresses) == set(pyentry.SYMBOLS)
    assert all(isinstance(address, int) and address for address in addresses.values())
    module = ir.Module("test")
    pyentry.emit_entry(module, status_kernel(module), "entry", [((), np.int64)], [((2,), np.float64)], (0, (0,)),
                       ERRORS)
    parsed = llvm.parse_assembly(str(module))
    externals = {g.name for g in list(parsed.functions) + list(parsed.global_variables) if g.is_declaration}
    assert externals and externals <= set(pyentry.SYMBOLS)
    text = str(module)
    assert not any(str(address) in text or hex(address)[2:] in text for address in addresses.values())


RELINK_AND_CALL = """
import sys
import llvmlite.binding as llvm
import numpy as np
from symgrad.codegen import runtime
llvm.initialize_native_target()
llvm.initialize_native_asmprinter()
for symbol, address in runtime.symbol_addresses().items():
    llvm.add_symbol(symbol, address)
engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), llvm.Target.from_default_triple().create_target_machine())
engine.add_object_file(llvm.ObjectFileRef.from_data(open(sys.argv[1], "rb").read()))
engine.finalize_object()
entry = runtime.make_builtin(engine.get_function_address("entry"), "entry", owner=engine)
total, doubled = entry(np.arange(3.0))
print(float(total), doubled.tolist(), entry([1.0]) is NotImplemented)
"""


def test_object_code_relinks_in_another_process(tmp_path):
    module = ir.Module("test")
    pyentry.emit_entry(module, sum_and_double_kernel(3)(module), "entry", [((3,), np.float64)],
                       [((), np.float64), ((3,), np.float64)], (0, 1), [])
    (tmp_path / "entry.o").write_bytes(jit.object_code(str(module), jit.target_machine()))
    root = Path(__file__).resolve().parents[1]
    done = subprocess.run([sys.executable, "-c", RELINK_AND_CALL, str(tmp_path / "entry.o")], cwd=root,
                          env={**os.environ, "PYTHONPATH": str(root)}, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["3.0", "[0.0,", "2.0,", "4.0]", "True"]


def test_add_matches_numpy_and_returns_fresh_arrays(add):
    x, y = np.arange(12.0).reshape(3, 4), np.linspace(-1, 1, 12).reshape(3, 4)
    first, second = add(x, y), add(x, y)
    np.testing.assert_array_equal(first, x + y)
    assert first is not second and type(first) is np.ndarray
    assert first.dtype == np.float64 and first.shape == (3, 4)
    assert first.flags.c_contiguous and first.flags.writeable and first.flags.owndata


def test_zero_dim_output_and_tuple_result(sum_and_double):
    x = np.linspace(0, 1, 10)
    total, doubled = sum_and_double(x)
    assert type(total) is np.ndarray and total.shape == ()
    assert total == pytest.approx(x.sum())
    np.testing.assert_array_equal(doubled, 2 * x)


def test_float32_kernel_takes_arrays_and_leaves_python_floats_to_the_slow_path():
    # a Python float traces as float64, so a float32 signature must not take one natively
    scale = build_entry(scale_f32_kernel(4), [((), np.float32), ((4,), np.float32)], [((4,), np.float32)], 0)
    x = np.array([1.0, -2.0, 3.5, 1e-3], dtype=np.float32)
    result = scale(np.array(0.1, np.float32), x)
    assert result.dtype == np.float32
    np.testing.assert_array_equal(result, np.float32(0.1) * x)
    assert scale(0.1, x) is NotImplemented
    assert scale(0.1, x.astype(np.float64)) is NotImplemented


def test_python_float_accepted_for_zero_dim_float64_input():
    entry = build_entry(sum_and_double_kernel(1), [((), np.float64)], [((), np.float64), ((), np.float64)], (1, 0))
    doubled, total = entry(1.25)
    assert doubled == 2.5 and total == 1.25 and doubled.shape == ()
    assert entry(np.array(1.25)) [0] == 2.5
    for other in (np.float64(1.25), 1, True, "1.25", None, [1.25], np.array([1.25])):
        assert entry(other) is NotImplemented, other


class Subclass(np.ndarray):
    pass


def _unaligned_f64_34():
    raw = np.zeros(12 * 8 + 1, dtype=np.uint8)
    array = raw[1:].view(np.float64).reshape(3, 4)
    assert not array.flags.aligned
    return array


@pytest.mark.parametrize("args", [
    pytest.param((), id="no-args"),
    pytest.param((np.zeros((3, 4)),), id="too-few"),
    pytest.param((np.zeros((3, 4)),) * 3, id="too-many"),
    pytest.param((np.zeros((3, 4), np.float32), np.zeros((3, 4))), id="dtype-f32"),
    pytest.param((np.zeros((3, 4)), np.zeros((3, 4), np.int64)), id="dtype-i64"),
    pytest.param((np.zeros((4, 3)), np.zeros((3, 4))), id="shape"),
    pytest.param((np.zeros((3, 4)), np.zeros((3, 5))), id="shape-last-axis"),
    pytest.param((np.zeros(12), np.zeros((3, 4))), id="ndim-lower"),
    pytest.param((np.zeros((3, 4)), np.zeros((1, 3, 4))), id="ndim-higher"),
    pytest.param((np.zeros((3, 8))[:, ::2], np.zeros((3, 4))), id="non-contiguous"),
    pytest.param((np.zeros((4, 3)).T, np.zeros((3, 4))), id="fortran-order"),
    pytest.param((np.zeros((3, 4), ">f8"), np.zeros((3, 4))), id="byte-swapped"),
    pytest.param((_unaligned_f64_34(), np.zeros((3, 4))), id="unaligned"),
    pytest.param((np.zeros((3, 4)).view(Subclass), np.zeros((3, 4))), id="subclass"),
    pytest.param((np.zeros((3, 4)), np.zeros((3, 4)).tolist()), id="list"),
    pytest.param((np.zeros((3, 4)), 1), id="int"),
    pytest.param((1.0, np.zeros((3, 4))), id="float-for-array"),
    pytest.param((np.zeros((3, 4)), None), id="none"),
])
def test_unusable_arguments_return_not_implemented(add, args):
    assert add(*args) is NotImplemented


SHAPES = [(), (3,), (1, 4), (2, 3), (3, 2), (2, 3, 1)]
_copy_entries = {}


def copy_entry(shape, dtype):
    """A JIT-compiled identity entry for one (shape, dtype), built once per test session."""
    key = (shape, dtype)
    if key not in _copy_entries:
        nbytes = int(np.prod(shape, dtype=int)) * dtype.itemsize
        _copy_entries[key] = build_entry(copy_kernel(nbytes), [(shape, dtype)], [(shape, dtype)], 0)
    return _copy_entries[key]


OTHER_DTYPES = [np.dtype(code) for code in (">f8", ">i4", "f2", "u1", "c16")]


@st.composite
def candidate_arrays(draw, shape, dtype):
    """Arrays of the given shape and dtype half the time, else others; in C, Fortran, strided,
    unaligned or subclass layouts."""
    if draw(st.booleans()):
        shape = draw(st.sampled_from(SHAPES))
    if draw(st.booleans()):
        dtype = draw(st.sampled_from(sorted(runtime.DESCR_SYMBOLS, key=str) + OTHER_DTYPES))
    array = (np.arange(int(np.prod(shape, dtype=int))) % 3).astype(dtype).reshape(shape)
    layout = draw(st.sampled_from(["c", "c", "fortran", "strided", "unaligned", "subclass"]))
    if layout == "fortran":
        array = np.asfortranarray(array)
    elif layout == "strided" and shape:
        array = np.repeat(array[..., None], 2, axis=-1)[..., 0]
    elif layout == "unaligned" and dtype.itemsize > 1:
        raw = np.zeros(array.nbytes + 1, np.uint8)
        array = raw[1:].view(dtype).reshape(shape)
        array[...] = 1
    elif layout == "subclass":
        array = array.view(Subclass)
    return array


@settings(max_examples=200, deadline=None, derandomize=True)
@given(data=st.data(), shape=st.sampled_from(SHAPES), dtype=st.sampled_from(sorted(runtime.DESCR_SYMBOLS, key=str)))
def test_entry_accepts_exactly_what_numpy_attributes_say_it_can_take(data, shape, dtype):
    array = data.draw(candidate_arrays(shape, dtype))
    result = copy_entry(shape, dtype)(array)
    usable = (type(array) is np.ndarray and array.shape == shape and array.dtype == dtype
              and array.flags.c_contiguous and array.flags.aligned)
    if usable:
        assert type(result) is np.ndarray and result.dtype == dtype
        np.testing.assert_array_equal(result, array)
    else:
        assert result is NotImplemented


def test_keyword_arguments_are_refused_by_cpython(add):
    with pytest.raises(TypeError, match="keyword"):
        add(np.zeros((3, 4)), y=np.zeros((3, 4)))


@pytest.mark.parametrize("dtype", sorted(runtime.DESCR_SYMBOLS, key=str))
def test_every_supported_dtype_round_trips_and_others_fall_back(dtype):
    copy = build_entry(copy_kernel(3 * dtype.itemsize), [((3,), dtype)], [((3,), dtype)], 0)
    x = np.array([1, 0, 1]).astype(dtype)
    result = copy(x)
    assert result.dtype == dtype
    np.testing.assert_array_equal(result, x)
    for other in runtime.DESCR_SYMBOLS:
        if other != dtype:
            assert copy(x.astype(other)) is NotImplemented, other


def test_int64_accepted_as_long_and_as_longlong(status):
    for code in ("l", "q"):
        np.testing.assert_array_equal(status(np.array(0, dtype=code)), [1.0, 1.0])


def test_error_status_raises_the_named_exception(status):
    with pytest.raises(IndexError, match="^index out of bounds in take$"):
        status(np.array(1))
    with pytest.raises(ValueError, match="^negative size$"):
        status(np.array(2))
    for unknown in (3, -1):
        with pytest.raises(RuntimeError, match="unknown error status"):
            status(np.array(unknown))


@pytest.mark.parametrize("structure", [1, (), (0,), (1, 0), (0, (1, 0)), ((1,), ((0, 1), 1)), (0, 0, 0)])
def test_nested_structures(structure):
    entry = build_entry(sum_and_double_kernel(10), [((10,), np.float64)],
                        [((), np.float64), ((10,), np.float64)], structure)
    x = np.arange(10.0)
    expected = (np.array(x.sum()), 2 * x)

    def check(got, node):
        if isinstance(node, tuple):
            assert type(got) is tuple and len(got) == len(node)
            for item, sub in zip(got, node):
                check(item, sub)
        else:
            np.testing.assert_array_equal(got, expected[node])
    check(entry(x), structure)


def test_repeated_output_is_one_array_owned_by_the_tuples():
    entry = build_entry(sum_and_double_kernel(3), [((3,), np.float64)], [((), np.float64), ((3,), np.float64)],
                        (1, (1, 0)))
    result = entry(np.ones(3))
    assert result[0] is result[1][0]
    counts = sys.getrefcount(result[0]), sys.getrefcount(result[1][1])  # outside assert: pytest holds temporaries
    assert counts == (3, 2)  # the two tuples or the inner one, and getrefcount's argument
    arrays = [weakref.ref(result[0]), weakref.ref(result[1][1])]
    del result
    assert [ref() for ref in arrays] == [None, None]


def test_failed_allocation_raises_and_releases_earlier_outputs():
    def noop_kernel(module):
        kernel, b = new_kernel(module, "noop", 3)
        b.ret(OK)
        return kernel
    huge = (2**40, 2**30)  # 2**70 elements: NumPy refuses before allocating
    entry = build_entry(noop_kernel, [((2,), np.float32)], [((4,), np.float32), (huge, np.float32)], (0, 1))
    x = np.ones(2, np.float32)
    before = sys.getrefcount(x.dtype)
    for _ in range(1000):
        with pytest.raises((ValueError, MemoryError)):
            entry(x)
    after = sys.getrefcount(x.dtype)
    assert after == before  # each released float32 output held a reference to it


def test_many_outputs_make_an_entry_linear_in_their_number_and_a_failure_releases_them_all():
    """A captured eager step can return hundreds of outputs: each failure point jumps into one chain of
    releases (the entry once released every earlier output at every point: quadratic code, seconds of LLVM)."""
    count = 300
    def noop_kernel(module):
        kernel, b = new_kernel(module, "noop", 1 + count)
        b.ret(OK)
        return kernel
    outputs = [((3,), np.float32)] * (count - 1) + [((2**40, 2**30), np.float32)]
    module = ir.Module("test")
    pyentry.emit_entry(module, noop_kernel(module), "entry", [((2,), np.float32)], outputs, tuple(range(count)), [])
    assert str(module).count("Py_DecRef") <= count + 5
    entry = jit_entry(module, "entry")
    x = np.ones(2, np.float32)
    counts = []
    for _ in range(20):
        with pytest.raises((ValueError, MemoryError)):
            entry(x)
        counts.append(sys.getrefcount(x.dtype))
    assert counts[1:] == counts[:-1]  # each call released its 299 float32 outputs (each holds the dtype)


def test_rejects_interfaces_it_cannot_honour():
    module = ir.Module("test")
    kernel = status_kernel(module)
    inputs, outputs = [((), np.int64)], [((2,), np.float64)]
    with pytest.raises(ValueError, match="structure refers to output 1"):
        pyentry.emit_entry(module, kernel, "e1", inputs, outputs, (0, 1), [])
    with pytest.raises(ValueError, match="takes 2 pointers"):
        pyentry.emit_entry(module, kernel, "e2", inputs, outputs * 2, 0, [])
    with pytest.raises(TypeError, match="complex128"):
        pyentry.emit_entry(module, kernel, "e3", [((), np.complex128)], outputs, 0, [])
    with pytest.raises(ValueError, match="KeyError"):
        pyentry.emit_entry(module, kernel, "e4", inputs, outputs, 0, [("KeyError", "no")])
    with pytest.raises(TypeError, match="structure"):
        pyentry.emit_entry(module, kernel, "e5", inputs, outputs, [0], [])


def test_builtin_keeps_its_owner_and_name(add):
    assert add.__name__ == "entry"
    assert add.__self__.owner is not None


def test_no_reference_or_memory_leaks(add, sum_and_double, status):
    scale = build_entry(scale_f32_kernel(4), [((), np.float32), ((4,), np.float32)], [((4,), np.float32)], 0)
    x, y, v, w = np.ones((3, 4)), np.ones((3, 4)), np.ones(10), np.ones(4, np.float32)
    code, bad, factor = np.array(1), np.ones((3, 4), np.float32), 0.5
    watched = [x, y, v, w, code, bad, factor, x.dtype, bad.dtype, code.dtype, NotImplemented, IndexError]

    def run(times):
        for _ in range(times):
            add(x, y)
            sum_and_double(v)
            scale(factor, w)
            add(x, bad)
            add(x)
            try:
                status(code)
            except IndexError:
                pass

    run(100)
    before = [sys.getrefcount(obj) for obj in watched]
    tracemalloc.start()
    run(1000)
    start, _ = tracemalloc.get_traced_memory()
    run(10000)
    end, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert [sys.getrefcount(obj) for obj in watched] == before
    assert end - start < 10_000  # 10000 calls leaking even one 8-byte object each would show


def _weighted_firsts_kernel(kinds):
    """out0 = sum over inputs k of (k + 1) * in_k[0] as float64 (an empty input is not read)."""
    def make(module):
        kernel, b = new_kernel(module, "firsts", len(kinds) + 1)
        total = ir.Constant(F64, 0.0)
        for k, (argument, kind) in enumerate(zip(kernel.args, kinds)):
            if kind == "empty":
                continue
            typ = {"f64": F64, "f32": F32, "i64": I64}[kind]
            value = b.load(argument, typ=typ)
            value = {"f64": lambda v: v, "f32": lambda v: b.fpext(v, F64),
                     "i64": lambda v: b.sitofp(v, F64)}[kind](value)
            total = b.fadd(total, b.fmul(value, ir.Constant(F64, k + 1.0)))
        b.store(total, kernel.args[-1])
        b.ret(OK)
        return kernel
    return make


@pytest.mark.parametrize("count", [pyentry.CHECKED_IN_A_LOOP + 1, 70])
def test_many_inputs_are_checked_in_a_loop_each_as_one_is(count):
    """Past CHECKED_IN_A_LOOP inputs, the array inputs are checked in one loop over tables (the unrolled checks of
    1,000 inputs were two thirds of a program's IR): each still takes only an exact, aligned, C-contiguous ndarray
    of its rank, shape and dtype (else NotImplemented), and the kernel reads each input's own data; a 0-d float64
    input, which also takes a Python float, is checked apart."""
    kinds = [["f64", "f32", "empty", "i64", "scalar"][k % 5] for k in range(count)]
    layouts = {"f64": ((3, 4), np.float64), "f32": ((5,), np.float32), "empty": ((0,), np.float64),
               "i64": ((), np.int64), "scalar": ((), np.float64)}
    inputs = [layouts[kind] for kind in kinds]
    module = ir.Module("test")
    kernel = _weighted_firsts_kernel([{"scalar": "f64"}.get(kind, kind) for kind in kinds])(module)
    pyentry.emit_entry(module, kernel, "entry", inputs, [((), np.float64)], 0, [])
    assert "arg_layout_ok" in str(module) and "arg0_layout_ok" not in str(module) and "arg4_not_array" in str(module)
    entry = jit_entry(module, "entry")
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(shape).astype(dtype) if dtype != np.int64 else np.array(-3 - k)
            for k, (shape, dtype) in enumerate(inputs)]
    args[4] = 0.25  # a Python float for a 0-d float64 input
    want = sum((k + 1) * float(np.asarray(a).reshape(-1)[0]) for k, a in enumerate(args) if np.size(a))
    assert entry(*args) == pytest.approx(want, rel=1e-6)
    wrong = {"rank": lambda a: a[None], "dtype": lambda a: a.astype(np.float16),
             "shape": lambda a: np.zeros(np.size(a) + 1, a.dtype), "strides": lambda a: np.repeat(a, 2)[::2],
             "byte order": lambda a: a.astype(a.dtype.newbyteorder()), "list": lambda a: a.tolist()}
    for k in (0, 1, 2, 3, count - 1):
        for what, make in wrong.items():
            changed = make(np.asarray(args[k]))
            if isinstance(changed, float) or what == "strides" and changed.flags.c_contiguous:
                continue  # a 0-d float64 input takes a Python float; a 0-d or empty array's copy is contiguous
            assert entry(*args[:k], changed, *args[k + 1:]) is NotImplemented, (k, what)
    assert entry(*args[:-1]) is NotImplemented
