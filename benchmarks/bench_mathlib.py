"""Time symgrad's vectorized LLVM math kernels on 1e6-element loops against NumPy, and print
each kernel's max ulp error (the test suite's measurement) beside its speedup.

Run: python benchmarks/bench_mathlib.py [name ...]   (one thread; the best of repeated runs,
which on a shared machine tracks the uncontended time better than the median)
"""
import os
import platform
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
from test_llvm_mathlib import ARITY, NUMPY_REFERENCE, compiled_loop, max_ulp  # noqa: E402
from symgrad.codegen.llvm import mathlib  # noqa: E402

N = 1_000_000
REPEATS = 15
# input ranges where each function is defined and does work (not only special values)
DOMAIN = {"log": (1e-3, 1e3), "log1p": (-0.9, 1e3), "asin": (-1, 1), "acos": (-1, 1),
          "atanh": (-0.99, 0.99), "acosh": (1, 1e3), "pow": (0.1, 10)}
NUMPY = dict(NUMPY_REFERENCE)
try:  # NumPy has no erf; SciPy's is the vectorized peer when present
    from scipy.special import erf as scipy_erf
    NUMPY["erf"] = scipy_erf
except ImportError:
    del NUMPY["erf"]


def best_seconds(fn):
    best = float("inf")
    for _ in range(REPEATS):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def inputs(name, dtype, rng):
    lo, hi = DOMAIN.get(name, (-10, 10))
    args = [rng.uniform(lo, hi, N).astype(dtype)]
    if ARITY.get(name, 1) == 2:
        args.append(rng.uniform(-5, 5, N).astype(dtype))
    return args


def main(names):
    rng = np.random.default_rng(0)
    print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {platform.machine()}, "
          f"N={N}, best of {REPEATS}")
    print(f"{'function':10} {'dtype':8} {'symgrad ms':>10} {'numpy ms':>9} {'speedup':>8} "
          f"{'max ulp':>8}")
    for name in names:
        for dtype in (np.float64, np.float32):
            run, _ = compiled_loop(name, dtype)
            args = inputs(name, dtype, rng)
            out = np.empty_like(args[0])
            ours = best_seconds(lambda: run(*args, out))
            ref_fn = NUMPY.get(name)
            if ref_fn is not None:
                theirs = best_seconds(lambda: ref_fn(*args))
                peer = f"{theirs * 1e3:9.2f} {theirs / ours:7.1f}x"
            else:
                peer = f"{'-':>9} {'-':>8}"
            ulp = max_ulp(name, dtype)
            print(f"{name:10} {np.dtype(dtype).name:8} {ours * 1e3:10.2f} {peer} {ulp:8.2f}",
                  flush=True)


if __name__ == "__main__":
    main(sys.argv[1:] or mathlib.NAMES)
