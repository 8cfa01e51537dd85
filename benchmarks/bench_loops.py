"""Loops: first call (trace + derive + compile, disk cache off) and time per value-and-gradient call,
symgrad beside JAX's jit and PyTorch (eager, a Python loop) when they are installed.

Problems (the issue-11 set): the 8-element ODE step `x = x + 0.01*(-k*x + sin(x))` as `fori_loop`
(1000 and 100,000 steps; and on 64 elements, whose reverse pass keeps a 51 MB tape) and as a plain
Python loop (100 and 1000 steps, which symgrad rerolls and JAX unrolls); an Elman RNN over 100 steps
with `scan`; and a while loop of 1e6 steps differentiated in reverse mode with 1000 checkpoints and
keeping every carry, with its peak memory (JAX cannot differentiate a while_loop in reverse mode).
Each measurement runs in a fresh process, one thread.

Run: python benchmarks/bench_loops.py [--quick] [--timeout 300]
"""
import argparse
import importlib.util
import json
import os
import subprocess
import sys
import textwrap

# Each program defines `loss` and `args` with `np_` (the library's namespace) and `loop` helpers.
PROGRAMS = {
    "ode fori_loop": """
        k = np.linspace(0.5, 1.5, 8)
        def loss(x):
            return np_.sum(fori_loop(0, N, lambda i, x: x + 0.01 * (-k * x + np_.sin(x)), x) ** 2)
        args = (np.linspace(-1.0, 1.0, 8),)
    """,
    "ode64 fori_loop": """
        k = np.linspace(0.5, 1.5, 64)
        def loss(x):
            return np_.sum(fori_loop(0, N, lambda i, x: x + 0.01 * (-k * x + np_.sin(x)), x) ** 2)
        args = (np.linspace(-1.0, 1.0, 64),)
    """,
    "ode python loop": """
        k = np.linspace(0.5, 1.5, 8)
        def loss(x):
            for _ in range(N):
                x = x + 0.01 * (-k * x + np_.sin(x))
            return np_.sum(x ** 2)
        args = (np.linspace(-1.0, 1.0, 8),)
    """,
    "rnn scan": """
        rng = np.random.default_rng(0)
        W, U = rng.normal(scale=0.2, size=(32, 32)), rng.normal(scale=0.5, size=(32, 4))
        xs = rng.normal(size=(N, 4, 16))
        def loss(W, U):
            def cell(h, x):
                h = np_.tanh(W @ h + U @ x)
                return h, np_.sum(h)
            h, ys = scan(cell, np.zeros((32, 16)), xs)
            return np_.sum(ys) + np_.sum(h ** 2)
        args = (W, U)
    """,
}
WHILE = """
        def loss(a):
            def cond(c):
                return c[1] < N
            def body(c):
                return (c[0] + 1e-6 * (np_.cos(c[0]) * a - c[0] * 1e-3), c[1] + 1)
            x, _ = while_loop(cond, body, (np.zeros(8), 0), checkpoints={checkpoints})
            return np_.sum(x ** 2)
        args = (np.linspace(0.5, 1.5, 8),)
"""
PROGRAMS["while reverse"] = WHILE.format(checkpoints=1000)
PROGRAMS["while reverse all"] = WHILE.format(checkpoints=None)  # every carry kept

SIZES = {"ode fori_loop": [1000, 100_000], "ode64 fori_loop": [100_000], "ode python loop": [100, 1000],
         "rnn scan": [100], "while reverse": [1_000_000], "while reverse all": [1_000_000]}

HARNESS = """
import json, os, resource, sys, time
N = int(sys.argv[1])
{setup}
{program}
start = time.perf_counter()
run = make(loss, args)
out = run()
first = time.perf_counter() - start
reps, start = 0, time.perf_counter()
while reps < 3 or (time.perf_counter() - start < 1.0 and reps < 10000):
    run()
    reps += 1
per_call = (time.perf_counter() - start) / reps
print(json.dumps({{"first": first, "per_call": per_call,
                  "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}}))
"""

SYMGRAD = """
os.environ["SYMGRAD_CACHE"] = "0"
import numpy as np
import symgrad as sg
np_, backend = sg, sys.argv[2]
fori_loop, scan, while_loop = sg.fori_loop, sg.scan, sg.while_loop
sg.value_and_grad, sg.compile  # the deferred imports, outside the timing (as `import jax` is), the backends' too
import symgrad.codegen.numpy_backend, symgrad.codegen.llvm.backend, symgrad.codegen.llvm.rules  # noqa: E401
def make(loss, args):
    f = sg.compile(sg.value_and_grad(loss, argnums=tuple(range(len(args)))), backend=backend)
    return lambda: f(*args)
"""

JAX = """
import numpy as np
import jax
jax.config.update("jax_enable_x64", True)
import jax.numpy as np_
fori_loop, scan, while_loop = jax.lax.fori_loop, jax.lax.scan, jax.lax.while_loop
def make(loss, args):
    f = jax.jit(jax.value_and_grad(loss, argnums=tuple(range(len(args)))))
    return lambda: jax.block_until_ready(f(*args))
"""

TORCH = """
import numpy as np
import torch
torch.set_num_threads(1)
np_ = torch
def fori_loop(lower, upper, body, x):
    for i in range(lower, upper):
        x = body(i, x)
    return x
def scan(f, carry, xs):
    carry, ys = torch.as_tensor(carry), []
    for x in xs:
        carry, y = f(carry, x)
        ys.append(y)
    return carry, torch.stack(ys)
def while_loop(cond, body, carry, checkpoints):  # autograd keeps every step's values
    while cond(carry):
        carry = body(carry)
    return carry
def make(loss, args):
    for name, value in list(loss.__globals__.items()):  # the program's constants, as tensors
        if isinstance(value, np.ndarray) and name != "args":
            loss.__globals__[name] = torch.from_numpy(value)

    def run():
        leaves = [torch.tensor(a, requires_grad=True) for a in args]
        value = loss(*leaves)
        value.backward()
        return value.item(), [leaf.grad for leaf in leaves]
    return run
"""

LIBRARIES = {"sg llvm": (SYMGRAD, "llvm"), "sg numpy": (SYMGRAD, "numpy"), "jax jit": (JAX, None),
             "torch eager": (TORCH, None)}
WHILE_PROBLEMS = ("while reverse", "while reverse all")
SKIP = {**{("jax jit", problem): "no reverse mode" for problem in WHILE_PROBLEMS},  # jax's is forward-mode only
        **{(library, problem): "slow" for library in ("sg numpy", "torch eager") for problem in WHILE_PROBLEMS},
        ("torch eager", "ode fori_loop", 100_000): "slow",
        ("torch eager", "ode64 fori_loop", 100_000): "slow"}


def measure(library, problem, size, timeout):
    setup, backend = LIBRARIES[library]
    source = HARNESS.format(setup=textwrap.dedent(setup), program=textwrap.dedent(PROGRAMS[problem]))
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "SYMGRAD_NUM_THREADS": "1",
           "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"}
    command = [sys.executable, "-c", source, str(size)] + ([backend] if backend else [])
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return None, f"> {timeout:.0f} s"
    if done.returncode != 0:
        return None, "error: " + done.stderr.strip().splitlines()[-1].split(":")[0][-24:]
    return json.loads(done.stdout.strip().splitlines()[-1]), None


def _time(seconds) -> str:
    return f"{seconds * 1e6:.1f} us" if seconds < 1e-3 else f"{seconds * 1e3:.2f} ms" if seconds < 1 else \
        f"{seconds:.2f} s"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="the smallest size of each problem only")
    parser.add_argument("--timeout", type=float, default=300)
    options = parser.parse_args()
    modules = {"jax jit": "jax", "torch eager": "torch"}
    available = [name for name in LIBRARIES if name not in modules or importlib.util.find_spec(modules[name])]
    print(f"{'problem':<26}" + "".join(f"{name:>26}" for name in available) + "   sg llvm / jax (per call)")
    for problem, sizes in SIZES.items():
        for size in sizes[:1] if options.quick else sizes:
            row, figures = f"{problem + ' ' + format(size, ','):<26}", {}
            for library in available:
                reason = SKIP.get((library, problem)) or SKIP.get((library, problem, size))
                result, failure = (None, reason) if reason else measure(library, problem, size, options.timeout)
                figures[library] = result
                cell = failure or f"{_time(result['first'])} / {_time(result['per_call'])}"
                if result and problem in WHILE_PROBLEMS:
                    cell += f" / {result['peak_mib']:.0f} MiB"
                row += f"{cell:>26}"
            if figures.get("sg llvm") and figures.get("jax jit"):
                row += f"   {figures['sg llvm']['per_call'] / figures['jax jit']['per_call']:.2f}"
            print(row, flush=True)
    print("cells: first call / per call (while reverse: / peak resident memory of the process; all: every carry "
          "kept, else at most 1000)")


if __name__ == "__main__":
    main()
