"""Emits, in LLVM IR, the CPython entry point of a native kernel: a METH_FASTCALL function.

The entry checks its arguments by reading the ndarray structs directly (exact type, rank,
shape, dtype, C-contiguous and aligned), allocates fresh outputs with NumPy's C API, calls
the kernel (without the GIL when its work is worth releasing it: the kernel is reentrant and
touches no Python object), and returns the outputs in the requested (nested tuple) structure. An argument
it cannot take makes it return NotImplemented, so the Python caller takes its slow path.
CPython and NumPy are reached only through `symgrad_rt_*` symbols (see codegen.runtime), so
the object code holds no process-specific address and can be cached and re-linked.
"""
from __future__ import annotations

import collections
import sys

import numpy as np
from llvmlite import ir

from symgrad.codegen import runtime

SYMBOLS = runtime.SYMBOL_NAMES

# Object layouts read by the entry (CPython 3.10+ on 64-bit, NumPy 1.x and 2.x).
OB_TYPE = 8
ARRAY_DATA, ARRAY_ND, ARRAY_DIMS, ARRAY_DESCR, ARRAY_FLAGS = 16, 24, 32, 56, 64
DESCR_BYTEORDER, DESCR_TYPE_NUM = 26, 28
FLOAT_VALUE = 16
NPY_ARRAY_C_CONTIGUOUS, NPY_ARRAY_ALIGNED = 0x1, 0x100
NON_NATIVE_BYTEORDER = ord(">" if sys.byteorder == "little" else "<")

UNKNOWN_STATUS = ("RuntimeError", "native kernel returned an unknown error status")

PTR = ir.PointerType()
I8, I32, I64 = ir.IntType(8), ir.IntType(32), ir.IntType(64)
NULL = ir.Constant(PTR, None)
ENTRY_TYPE = ir.FunctionType(PTR, [PTR, PTR, I64])

_C_API = {
    "Py_IncRef": ir.FunctionType(ir.VoidType(), [PTR]),
    "Py_DecRef": ir.FunctionType(ir.VoidType(), [PTR]),
    "PyTuple_New": ir.FunctionType(PTR, [I64]),
    "PyTuple_SetItem": ir.FunctionType(I32, [PTR, I64, PTR]),
    "PyErr_SetString": ir.FunctionType(ir.VoidType(), [PTR, PTR]),
    "PyArray_NewFromDescr": ir.FunctionType(PTR, [PTR, PTR, I32, PTR, PTR, PTR, I32, PTR]),
    "PyEval_SaveThread": ir.FunctionType(PTR, []),
    "PyEval_RestoreThread": ir.FunctionType(ir.VoidType(), [PTR]),
}


def emit_entry(module: ir.Module, kernel: ir.Function, name: str, inputs, outputs, structure,
               errors, table: ir.GlobalVariable | None = None, python_floats=None,
               release_gil: bool = False, array_kernel: ir.Function | None = None) -> ir.Function:
    """Add to `module` the entry `PyObject* name(self, args, nargs)` calling `kernel`.

    `inputs`/`outputs` are (shape, dtype) per kernel argument; `structure` is an output
    index or a nested tuple of them (the Python return value); `errors[k-1]` is the
    (exception name, message) raised when the kernel returns status k. With `table` (see
    `runtime_table`), CPython and NumPy are reached through its pointers, which a loader fills,
    instead of through linked symbols: a shared library has no symbols to link them to.
    `python_floats`: the input positions that take a Python float and nothing else, all other inputs
    arrays only (a compiled function's weakly typed scalars); None (a shared library): a 0-d float64
    input takes either.
    With `release_gil`, the kernel runs with the GIL released (PyEval_SaveThread/RestoreThread):
    arguments are checked and outputs allocated before it, the result built after it, with the GIL.
    `array_kernel` (a kernel of many arguments, see kernel.MANY_ARGUMENTS): the function taking the kernel's
    arguments in an array, which the entry calls instead, filling the array in a loop.
    """
    inputs = [(tuple(int(size) for size in shape), np.dtype(dtype)) for shape, dtype in inputs]
    outputs = [(tuple(int(size) for size in shape), np.dtype(dtype)) for shape, dtype in outputs]
    _check_interface(kernel, inputs, outputs, structure, errors)
    entry = _Entry(module, name, table)
    entry.check_nargs(len(inputs))
    accepts = [_accepts(i, shape, dtype, python_floats) for i, (shape, dtype) in enumerate(inputs)]
    looped = [i for i, taken in enumerate(accepts) if taken == ARRAY] if len(inputs) > CHECKED_IN_A_LOOP else []
    pointers = None  # the kernel's arguments in an array: an array kernel's, and where a loop stores the inputs'
    if looped or array_kernel is not None:
        pointers = entry.allocas.alloca(ir.ArrayType(PTR, len(inputs) + len(outputs)), name="arguments")
    entry.checked_arrays(looped, [inputs[i] for i in looped], pointers)
    stored = set(looped)
    data = [None if i in stored else entry.input_data(i, shape, dtype, accepts[i])
            for i, (shape, dtype) in enumerate(inputs)]
    arrays = entry.allocate_outputs(outputs)
    if array_kernel is None:
        data = [entry.element(pointers, i) if pointer is None else pointer for i, pointer in enumerate(data)]
        call = (kernel, data + [entry.field(arrays[i], ARRAY_DATA, PTR) for i in range(len(outputs))])
    else:
        call = (array_kernel, [entry.argument_array(data, arrays, pointers)])
    thread_state = entry.call("PyEval_SaveThread") if release_gil else None
    status = entry.builder.call(*call)
    if release_gil:
        entry.call("PyEval_RestoreThread", thread_state)
    entry.raise_on_status(status, errors)
    entry.builder.ret(entry.build_result(structure, arrays))
    return entry.function


ARRAY, PYTHON_FLOAT, ARRAY_OR_FLOAT = "array", "Python float", "array or Python float"

# An entry of more inputs checks its array inputs in a loop over tables of their ranks, shapes and dtypes: unrolled,
# the checks of 1,000 inputs were two thirds of a program's IR and their LLVM time grew faster than their number.
CHECKED_IN_A_LOOP = 16


def _accepts(index: int, shape, dtype, python_floats) -> str:
    """What input `index` takes: a Python float at `python_floats`, else an array; a 0-d float64 either
    when python_floats is None (a shared library, whose callers are not compiled functions)."""
    if python_floats is not None:
        return PYTHON_FLOAT if index in python_floats else ARRAY
    return ARRAY_OR_FLOAT if shape == () and dtype == np.float64 else ARRAY


def runtime_table(module: ir.Module, name: str) -> ir.GlobalVariable:
    """An exported array of one pointer per name in SYMBOLS (null until a loader fills it from
    runtime.symbol_addresses()), for entries emitted with `table=`."""
    typ = ir.ArrayType(PTR, len(SYMBOLS))
    table = ir.GlobalVariable(module, typ, name)
    table.initializer = ir.Constant(typ, None)
    return table


def _check_interface(kernel, inputs, outputs, structure, errors) -> None:
    """Reject, at emit time, a kernel/structure/errors combination the entry could not honour."""
    if len(kernel.function_type.args) != len(inputs) + len(outputs):
        raise ValueError(f"kernel {kernel.name} takes {len(kernel.function_type.args)} pointers, "
                         f"but {len(inputs)} inputs and {len(outputs)} outputs were given")
    for _, dtype in inputs + outputs:
        if dtype not in runtime.DESCR_SYMBOLS:
            raise TypeError(f"native entry points do not support dtype {dtype}")
    for index in _output_indices(structure):
        if not 0 <= index < len(outputs):
            raise ValueError(f"structure refers to output {index}, but there are {len(outputs)} outputs")
    for exception, _ in errors:
        if exception not in runtime.EXCEPTION_SYMBOLS:
            raise ValueError(f"unsupported exception {exception!r}; use one of {sorted(runtime.EXCEPTION_SYMBOLS)}")


def _output_indices(structure):
    """The output indices in `structure`, in order, with repeats."""
    if isinstance(structure, tuple):
        return [index for item in structure for index in _output_indices(item)]
    if isinstance(structure, (int, np.integer)) and not isinstance(structure, bool):
        return [int(structure)]
    raise TypeError(f"structure must be an output index or a tuple of structures, not {structure!r}")


def _tuples_preorder(structure):
    """The tuple nodes of `structure`, parents before children."""
    if not isinstance(structure, tuple):
        return []
    return [structure] + [node for item in structure for node in _tuples_preorder(item)]


def _accepted_type_nums(dtype: np.dtype) -> list[int]:
    """NumPy type numbers that mean `dtype` here (int64 is both NPY_LONG and NPY_LONGLONG on Linux)."""
    return sorted({np.dtype(code).num for code in np.typecodes["All"] if np.dtype(code) == dtype})


class _Entry:
    """The entry function being emitted, its builder, and the shared fallback block."""

    def __init__(self, module: ir.Module, name: str, table=None):
        self.module, self.table = module, table
        self.function = ir.Function(module, ENTRY_TYPE, name)
        _, self.args, self.nargs = self.function.args
        entry = self.function.append_basic_block("entry")
        start = self.function.append_basic_block("start")
        self.fallback = self.function.append_basic_block("not_implemented")
        self.releases = [self.function.append_basic_block("return_null")]  # see _own
        ir.IRBuilder(self.releases[0]).ret(NULL)
        self.builder = ir.IRBuilder(entry)
        self.builder.branch(start)
        self.allocas = ir.IRBuilder(entry)
        self.allocas.position_at_start(entry)
        self.builder.position_at_end(self.fallback)
        not_implemented = self.symbol(_rt("Py_NotImplemented"))
        self.call("Py_IncRef", not_implemented)
        self.builder.ret(not_implemented)
        self.builder.position_at_end(start)

    # -- externals and small helpers --------------------------------------------------------
    def symbol(self, name: str):
        """The object runtime symbol `name` stands for: the address of an external global (declared
        once per module), or the pointer in the runtime table."""
        if self.table is not None:
            return self._from_table(name, PTR)
        if name not in self.module.globals:
            ir.GlobalVariable(self.module, I8, name)
        return self.module.globals[name]

    def call(self, name: str, *args):
        """Call C-API function `name` through its `symgrad_rt_` symbol (or the runtime table)."""
        return self.builder.call(self._callee(name, self.builder), list(args))

    def _callee(self, name: str, builder: ir.IRBuilder):
        """C-API function `name`, as a value `builder` can call."""
        if self.table is not None:  # typed, so it can be called
            return self._from_table(_rt(name), _C_API[name].as_pointer(), builder)
        return self.module.globals.get(_rt(name)) or ir.Function(self.module, _C_API[name], _rt(name))

    def _from_table(self, name: str, typ, builder: ir.IRBuilder | None = None):
        builder = builder or self.builder
        slot = builder.gep(self.table, [ir.Constant(I64, 0), ir.Constant(I64, SYMBOLS.index(name))])
        return builder.load(slot, typ=typ)

    def field(self, obj, offset: int, typ):
        """Load the `typ` field at byte `offset` of object `obj`."""
        address = self.builder.gep(obj, [ir.Constant(I64, offset)], source_etype=I8)
        return self.builder.load(address, typ=typ)

    def string(self, text: str, label: str) -> ir.GlobalVariable:
        """A private NUL-terminated UTF-8 constant."""
        data = bytearray(text.encode() + b"\0")
        typ = ir.ArrayType(I8, len(data))
        var = ir.GlobalVariable(self.module, typ, self.module.get_unique_name(f"{self.function.name}.{label}"))
        var.linkage, var.global_constant, var.unnamed_addr = "private", True, True
        var.initializer = ir.Constant(typ, data)
        return var

    def check(self, condition, label: str) -> None:
        """Continue if `condition` holds, else return NotImplemented."""
        passed = self.function.append_basic_block(label)
        self.builder.cbranch(condition, passed, self.fallback)
        self.builder.position_at_end(passed)

    # -- inputs ------------------------------------------------------------------------------
    def check_nargs(self, count: int) -> None:
        """Continue only if the call passed exactly `count` positional arguments."""
        self.check(self.builder.icmp_signed("==", self.nargs, ir.Constant(I64, count)), "nargs_ok")

    def input_data(self, index: int, shape, dtype: np.dtype, accepts=ARRAY):
        """Data pointer of argument `index`, after checking it is what `accepts` says (ARRAY, PYTHON_FLOAT
        or ARRAY_OR_FLOAT)."""
        b = self.builder
        arg = b.load(b.gep(self.args, [ir.Constant(I64, index)], source_etype=PTR), typ=PTR)
        obj_type = self.field(arg, OB_TYPE, PTR)
        if accepts == PYTHON_FLOAT:
            return self._float_data(arg, obj_type, index)
        is_array = b.icmp_unsigned("==", obj_type, self.symbol(_rt("PyArray_Type")))
        if accepts == ARRAY_OR_FLOAT:
            return self._scalar_or_array_data(arg, obj_type, is_array, index, dtype)
        self.check(is_array, f"arg{index}_is_array")
        return self._checked_array_data(arg, index, shape, dtype)

    def _float_data(self, arg, obj_type, index: int):
        """Pointer to the value of an exact Python float argument (checked), copied to the stack."""
        b = self.builder
        self.check(b.icmp_unsigned("==", obj_type, self.symbol(_rt("PyFloat_Type"))), f"arg{index}_is_float")
        slot = self.allocas.alloca(ir.DoubleType(), name=f"arg{index}_value")
        b.store(self.field(arg, FLOAT_VALUE, ir.DoubleType()), slot)
        return slot

    def _scalar_or_array_data(self, arg, obj_type, is_array, index: int, dtype: np.dtype):
        """Data pointer of a 0-d float64 argument that may be an ndarray or an exact Python float."""
        b = self.builder
        array_block = self.function.append_basic_block(f"arg{index}_array")
        other_block = self.function.append_basic_block(f"arg{index}_not_array")
        b.cbranch(is_array, array_block, other_block)
        b.position_at_end(other_block)
        slot = self._float_data(arg, obj_type, index)
        float_end = b.block
        b.position_at_end(array_block)
        array_data = self._checked_array_data(arg, index, (), dtype)
        array_end = b.block
        joined = self.function.append_basic_block(f"arg{index}_ok")
        b.branch(joined)
        b.position_at_end(float_end)
        b.branch(joined)
        b.position_at_end(joined)
        data = b.phi(PTR, name=f"arg{index}_data")
        data.add_incoming(array_data, array_end)
        data.add_incoming(slot, float_end)
        return data

    def _checked_array_data(self, array, index: int, shape, dtype: np.dtype):
        """Check an exact ndarray's rank, dtype, byte order, flags and shape; return its data."""
        b = self.builder
        type_nums = [ir.Constant(I32, num) for num in _accepted_type_nums(dtype)]
        self.check(self._layout_ok(array, ir.Constant(I32, len(shape)), type_nums), f"arg{index}_layout_ok")
        if shape:
            dims = self.field(array, ARRAY_DIMS, PTR)
            same = [b.icmp_signed("==", b.load(b.gep(dims, [ir.Constant(I64, axis)], source_etype=I64), typ=I64),
                                  ir.Constant(I64, size)) for axis, size in enumerate(shape)]
            self.check(_all(b, same), f"arg{index}_shape_ok")
        return self.field(array, ARRAY_DATA, PTR)

    def _layout_ok(self, array, rank, type_nums):
        """Whether an ndarray has rank `rank`, one of the `type_nums`, native byte order and C-contiguous,
        aligned data (i32 values)."""
        b = self.builder
        descr = self.field(array, ARRAY_DESCR, PTR)
        type_num = self.field(descr, DESCR_TYPE_NUM, I32)
        byteorder = self.field(descr, DESCR_BYTEORDER, I8)
        flags = self.field(array, ARRAY_FLAGS, I32)
        wanted_flags = ir.Constant(I32, NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED)
        conditions = [
            b.icmp_signed("==", self.field(array, ARRAY_ND, I32), rank),
            b.icmp_unsigned("!=", byteorder, ir.Constant(I8, NON_NATIVE_BYTEORDER)),
            b.icmp_unsigned("==", b.and_(flags, wanted_flags), wanted_flags),
        ]
        conditions.append(_any(b, [b.icmp_signed("==", type_num, num) for num in type_nums]))
        return _all(b, conditions)

    def checked_arrays(self, positions, inputs, pointers) -> None:
        """Store into `pointers` (an array of pointers), at each of `positions`, the data pointer of the array
        argument there, of its (shape, dtype) in `inputs`, checked as input_data checks one: in one loop over tables
        of their positions, ranks, shapes and type numbers (code of one size for any number of them)."""
        b, count = self.builder, len(positions)
        if not count:
            return
        shapes, nums = {}, [_accepted_type_nums(dtype) for _, dtype in inputs]
        for shape, _ in inputs:
            if shape and shape not in shapes:
                shapes[shape] = self._constant(ir.ArrayType(I64, len(shape)), list(shape),
                                               f"arg_shape{len(shapes)}").bitcast(PTR)
        tables = [self._constant(ir.ArrayType(I32, count), values, label) for values, label in [
            (positions, "arg_positions"), ([len(shape) for shape, _ in inputs], "arg_ranks"),
            ([n[0] for n in nums], "arg_types"), ([n[-1] for n in nums], "arg_types_too")]]
        dims = self._constant(ir.ArrayType(PTR, count), [shapes.get(shape, NULL) for shape, _ in inputs], "arg_dims")

        def column(table, i, typ=I32):
            return b.load(b.gep(table, [ir.Constant(I64, 0), i]), typ=typ)

        def check(i):
            position, rank, first, second = (column(table, i) for table in tables)
            arg = b.load(b.gep(self.args, [b.zext(position, I64)], source_etype=PTR), typ=PTR)
            self.check(b.icmp_unsigned("==", self.field(arg, OB_TYPE, PTR), self.symbol(_rt("PyArray_Type"))),
                       "arg_is_array")
            self.check(self._layout_ok(arg, rank, [first, second]), "arg_layout_ok")
            sizes, wanted = self.field(arg, ARRAY_DIMS, PTR), column(dims, i, PTR)
            self._loop(ir.Constant(I64, 0), b.zext(rank, I64), lambda axis: self.check(b.icmp_signed(
                "==", b.load(b.gep(sizes, [axis], source_etype=I64), typ=I64),
                b.load(b.gep(wanted, [axis], source_etype=I64), typ=I64)), "arg_shape_ok"))
            b.store(self.field(arg, ARRAY_DATA, PTR), b.gep(pointers, [ir.Constant(I64, 0), b.zext(position, I64)]))
        self._loop(ir.Constant(I64, 0), ir.Constant(I64, count), check)

    def element(self, pointers, k: int):
        """Pointer `k` of the array of pointers `pointers`."""
        return self.builder.load(self.builder.gep(pointers, [ir.Constant(I64, 0), ir.Constant(I64, k)]), typ=PTR)

    # -- outputs -----------------------------------------------------------------------------
    def allocate_outputs(self, outputs) -> "_Outputs":
        """Fresh C-contiguous arrays for the outputs, made by one loop over a table of their ranks, shapes and
        dtypes, so the entry's code does not grow with their number (unrolled, the allocations and failure
        branches of 1,600 outputs were 2 s of LLVM's code generation); on failure release them and return NULL."""
        b, count = self.builder, len(outputs)
        arrays = _Outputs(self, self.allocas.alloca(ir.ArrayType(PTR, max(count, 1)), name="outputs"), count)
        if not count:
            return arrays
        dtypes = list(dict.fromkeys(dtype for _, dtype in outputs))
        descrs = self.allocas.alloca(ir.ArrayType(PTR, len(dtypes)), name="descrs")
        for k, dtype in enumerate(dtypes):
            b.store(b.bitcast(self.symbol(runtime.DESCR_SYMBOLS[dtype]), PTR),
                    b.gep(descrs, [ir.Constant(I64, 0), ir.Constant(I64, k)]))
        shapes = {}
        for shape, _ in outputs:
            if shape and shape not in shapes:
                shapes[shape] = self._constant(ir.ArrayType(I64, len(shape)), list(shape),
                                               f"shape{len(shapes)}").bitcast(PTR)
        ranks = self._constant(ir.ArrayType(I32, count), [len(shape) for shape, _ in outputs], "ranks")
        dims = self._constant(ir.ArrayType(PTR, count), [shapes.get(shape, NULL) for shape, _ in outputs], "dims")
        kinds = self._constant(ir.ArrayType(I32, count), [dtypes.index(dtype) for _, dtype in outputs], "dtypes")
        release_all = self.function.append_basic_block("outputs_release")
        failed = self.function.append_basic_block("output_failed")
        cleanup = self.function.append_basic_block("outputs_cleanup")

        def allocate(i):
            kind = b.load(b.gep(kinds, [ir.Constant(I64, 0), i]), typ=I32)
            descr = b.load(b.gep(descrs, [ir.Constant(I64, 0), b.zext(kind, I64)]), typ=PTR)
            self.call("Py_IncRef", descr)  # PyArray_NewFromDescr steals it
            array = self.call("PyArray_NewFromDescr", self.symbol(_rt("PyArray_Type")), descr,
                              b.load(b.gep(ranks, [ir.Constant(I64, 0), i]), typ=I32),
                              b.load(b.gep(dims, [ir.Constant(I64, 0), i]), typ=PTR), NULL, NULL, ir.Constant(I32, 0),
                              NULL)
            made = self.function.append_basic_block("output_made")
            failures.append((i, b.block))
            b.cbranch(b.icmp_unsigned("==", array, NULL), failed, made)
            b.position_at_end(made)
            b.store(array, arrays.slot(i))
        failures = []
        self._loop(ir.Constant(I64, 0), ir.Constant(I64, count), allocate)
        after = b.block
        b.position_at_end(failed)
        made_count = b.phi(I64)
        for i, block in failures:
            made_count.add_incoming(i, block)
        b.branch(cleanup)
        b.position_at_end(release_all)
        b.branch(cleanup)
        b.position_at_end(cleanup)
        to_release = b.phi(I64)
        to_release.add_incoming(made_count, failed)
        to_release.add_incoming(ir.Constant(I64, count), release_all)
        self._loop(ir.Constant(I64, 0), to_release, lambda j: self.call("Py_DecRef", b.load(arrays.slot(j), typ=PTR)))
        b.branch(self.releases[-1])
        self.releases.append(release_all)
        b.position_at_end(after)
        return arrays

    def argument_array(self, data, arrays: "_Outputs", array):
        """`array` holding the kernel's arguments: the inputs' `data` pointers (None: stored already, see
        checked_arrays), then the outputs' (in a loop)."""
        b = self.builder
        for position, pointer in enumerate(data):
            if pointer is not None:
                b.store(pointer, b.gep(array, [ir.Constant(I64, 0), ir.Constant(I64, position)]))

        def store(i):
            slot = b.gep(array, [ir.Constant(I64, 0), b.add(i, ir.Constant(I64, len(data)))])
            b.store(self.field(b.load(arrays.slot(i), typ=PTR), ARRAY_DATA, PTR), slot)
        self._loop(ir.Constant(I64, 0), ir.Constant(I64, len(arrays)), store)
        return array

    def _loop(self, lo, hi, body):
        """Emit `for i in [lo, hi): body(i)` (i64 values; the range may be empty) at the builder's position,
        continuing after the loop."""
        b = self.builder
        before = b.block
        test, inside, done = (self.function.append_basic_block(label) for label in ("loop", "loop_body", "loop_end"))
        b.branch(test)
        b.position_at_end(test)
        i = b.phi(I64)
        i.add_incoming(lo, before)
        b.cbranch(b.icmp_signed("<", i, hi), inside, done)
        b.position_at_end(inside)
        body(i)
        i.add_incoming(b.add(i, ir.Constant(I64, 1)), b.block)
        b.branch(test)
        b.position_at_end(done)

    def _constant(self, typ, values, label: str) -> ir.GlobalVariable:
        """A private constant of type `typ` holding `values`."""
        var = ir.GlobalVariable(self.module, typ, self.module.get_unique_name(f"{self.function.name}.{label}"))
        var.linkage, var.global_constant, var.unnamed_addr = "private", True, True
        var.initializer = ir.Constant(typ, values)
        return var

    def _own(self, obj, label: str) -> None:
        """Add `obj` to the references a failure releases: a block that releases it and then those owned
        before it, so each failure point jumps into one chain (code linear in the number of outputs)."""
        release = self.function.append_basic_block(f"{label}_release")
        builder = ir.IRBuilder(release)
        builder.call(self._callee("Py_DecRef", builder), [obj])
        builder.branch(self.releases[-1])
        self.releases.append(release)

    def _return_null_if_null(self, obj, label: str) -> None:
        """If `obj` is NULL (Python error set), release what is owned and return NULL; else own `obj`."""
        b = self.builder
        ok = self.function.append_basic_block(f"{label}_ok")
        b.cbranch(b.icmp_unsigned("==", obj, NULL), self.releases[-1], ok)
        b.position_at_end(ok)
        self._own(obj, label)

    def raise_on_status(self, status, errors) -> None:
        """Status k > 0: raise errors[k-1] (or RuntimeError), release what is owned and return NULL."""
        b = self.builder
        failed = self.function.append_basic_block("kernel_failed")
        ok = self.function.append_basic_block("kernel_ok")
        b.cbranch(b.icmp_signed("==", status, ir.Constant(status.type, 0)), ok, failed)
        b.position_at_end(failed)
        unknown = self.function.append_basic_block("status_unknown")
        switch = b.switch(status, unknown)
        for code, (exception, message) in [(k, err) for k, err in enumerate(errors, 1)] + [(None, UNKNOWN_STATUS)]:
            block = unknown if code is None else self.function.append_basic_block(f"status_{code}")
            if code is not None:
                switch.add_case(ir.Constant(status.type, code), block)
            b.position_at_end(block)
            self.call("PyErr_SetString", self.symbol(runtime.EXCEPTION_SYMBOLS[exception]),
                      self.string(message, f"error{code or 0}"))
            b.branch(self.releases[-1])
        b.position_at_end(ok)

    def build_result(self, structure, arrays):
        """The Python return value: output arrays arranged as `structure` (new reference)."""
        made = []
        for number, node in enumerate(_tuples_preorder(structure)):
            made.append(self.call("PyTuple_New", ir.Constant(I64, len(node))))
            self._return_null_if_null(made[-1], f"tuple{number}")
        uses = _output_indices(structure)
        counts = collections.Counter(uses)
        for index in range(len(arrays)):
            for _ in range(counts[index] - 1):
                self.call("Py_IncRef", arrays[index])
            if not counts[index]:
                self.call("Py_DecRef", arrays[index])
        return self._fill(structure, iter(made), arrays)

    def _fill(self, node, tuples, arrays):
        """Put the items of `node` into its tuple (taken from `tuples` in preorder), which steals them: a tuple
        of outputs only in a loop over a table of their indices (code of one size for any number)."""
        if not isinstance(node, tuple):
            return arrays[int(node)]
        obj = next(tuples)
        if len(node) > 1 and not any(isinstance(item, tuple) for item in node):
            b = self.builder
            table = self._constant(ir.ArrayType(I32, len(node)), [int(item) for item in node], "items")

            def put(i):
                index = b.zext(b.load(b.gep(table, [ir.Constant(I64, 0), i]), typ=I32), I64)
                self.call("PyTuple_SetItem", obj, i, b.load(arrays.slot(index), typ=PTR))
            self._loop(ir.Constant(I64, 0), ir.Constant(I64, len(node)), put)
            return obj
        for position, item in enumerate(node):
            self.call("PyTuple_SetItem", obj, ir.Constant(I64, position), self._fill(item, tuples, arrays))
        return obj


class _Outputs:
    """The output arrays, kept in a stack array: `outputs[i]` loads array i where the builder is (values
    kept in registers from their allocation to the result would be spilled, one by one)."""

    def __init__(self, entry: _Entry, slots, count: int):
        self.entry, self.slots, self.count = entry, slots, count

    def __len__(self):
        return self.count

    def slot(self, i):
        index = i if isinstance(i, ir.Value) else ir.Constant(I64, i)
        return self.entry.builder.gep(self.slots, [ir.Constant(I64, 0), index])

    def __getitem__(self, i):
        return self.entry.builder.load(self.slot(i), typ=PTR)


def _rt(name: str) -> str:
    """The runtime symbol naming CPython/NumPy object or function `name`."""
    return runtime.PREFIX + name


def _all(builder, conditions):
    """The conjunction of i1 values (no short circuit: every operand is safe to compute)."""
    result = conditions[0]
    for condition in conditions[1:]:
        result = builder.and_(result, condition)
    return result


def _any(builder, conditions):
    """The disjunction of i1 values."""
    result = conditions[0]
    for condition in conditions[1:]:
        result = builder.or_(result, condition)
    return result
