"""Per-call cost of entering a native kernel from Python: symgrad's builtin entry vs ctypes.

Run: python benchmarks/bench_call_overhead.py [--repeats 7]

The kernel takes a float64[10] and returns (sum, 2*x): a 0-d and a 10-vector. Columns:
the METH_FASTCALL builtin emitted by symgrad.codegen.llvm.pyentry (argument checks, two output
allocations, kernel, result tuple); ctypes with ready integer addresses and preallocated
outputs (no checks, no allocation: the floor for ctypes); ctypes as a wrapper would use it
(np.empty for each output, `.ctypes.data` per argument, a tuple). Medians of repeats.
"""
import argparse
import ctypes
import statistics
import timeit

import numpy as np
from llvmlite import ir

from symgrad.codegen import runtime
from symgrad.codegen.llvm import jit, pyentry

N = 10
F64, I32, I64, PTR = ir.DoubleType(), ir.IntType(32), ir.IntType(64), ir.PointerType()


def sum_and_double_module() -> ir.Module:
    """Kernel `sum_and_double(x, total, doubled)` over N float64, unrolled, and its entry `entry`."""
    module = ir.Module("bench")
    kernel = ir.Function(module, ir.FunctionType(I32, [PTR, PTR, PTR]), "sum_and_double")
    x, total, doubled = kernel.args
    b = ir.IRBuilder(kernel.append_basic_block())
    acc = ir.Constant(F64, 0.0)
    for i in range(N):
        index = [ir.Constant(I64, i)]
        value = b.load(b.gep(x, index, source_etype=F64), typ=F64)
        acc = b.fadd(acc, value)
        b.store(b.fmul(value, ir.Constant(F64, 2.0)), b.gep(doubled, index, source_etype=F64))
    b.store(acc, total)
    b.ret(ir.Constant(I32, 0))
    pyentry.emit_entry(module, kernel, "entry", [((N,), np.float64)], [((), np.float64), ((N,), np.float64)],
                       (0, 1), [])
    return module


def per_call_us(call, repeats: int, number: int = 200_000) -> float:
    """Median over `repeats` of the per-call time of `call()`, in microseconds."""
    return statistics.median(t / number * 1e6 for t in timeit.repeat(call, number=number, repeat=repeats))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    repeats = parser.parse_args().repeats

    engine = jit.standalone_engine(str(sum_and_double_module()), runtime.symbol_addresses())
    entry = runtime.make_builtin(engine.get_function_address("entry"), "entry", owner=engine)
    kernel = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)(
        engine.get_function_address("sum_and_double"))

    x = np.linspace(-1.0, 1.0, N)
    x32 = x.astype(np.float32)
    total, doubled = entry(x)
    assert np.isclose(total, x.sum()) and np.array_equal(doubled, 2 * x)

    ready_total, ready_doubled = np.empty(()), np.empty(N)
    x_ptr, total_ptr, doubled_ptr = x.ctypes.data, ready_total.ctypes.data, ready_doubled.ctypes.data

    def ctypes_wrapper(x):
        total, doubled = np.empty(()), np.empty(N)
        kernel(x.ctypes.data, total.ctypes.data, doubled.ctypes.data)
        return total, doubled

    rows = [
        ("symgrad builtin entry (checks + 2 allocations)", lambda: entry(x)),
        ("symgrad builtin entry, unusable arg -> NotImplemented", lambda: entry(x32)),
        ("ctypes, ready ints, preallocated outputs", lambda: kernel(x_ptr, total_ptr, doubled_ptr)),
        ("ctypes wrapper (np.empty x2, .ctypes.data x3)", lambda: ctypes_wrapper(x)),
        ("for scale: np.empty(10) from Python", lambda: np.empty(N)),
        ("for scale: empty Python lambda", lambda: None),
    ]
    print(f"per-call time, f64[{N}] -> (f64[], f64[{N}]), median of {repeats} repeats")
    times = [(label, per_call_us(call, repeats)) for label, call in rows]
    builtin = times[0][1]
    for label, us in times:
        print(f"  {label:<54} {us:7.3f} us   {us / builtin:5.2f}x builtin")
    print("  (each figure includes the ~same lambda-call overhead of the timing loop, last row)")


if __name__ == "__main__":
    main()
