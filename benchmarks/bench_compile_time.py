"""First-call time (trace + derive + compile, disk cache off) of value and gradient as an unrolled
Python loop grows: compile time should grow linearly with the program, not faster.

Each measurement runs in a fresh process (nothing cached in memory either), on one thread
(SYMGRAD_NUM_THREADS=1 holds LLVM's optimizer to one thread too; XLA single-threaded). Programs: an 8-element
ODE step `x = x + 0.01*(-k*x + sin(x))` and the chain `x = sin(x)*0.999 + 0.001`, unrolled N times
(symgrad rolls them back into a loop), and a program that does not repeat: each step one of six
operations drawn at random (elementwise with a constant of its own, a matrix product, a mean), which
stays N steps of straight-line code (about 6.3 optimized nodes a step with its gradient), and a
recurrence reading row t of a table computed from the input (an RNN over its sequence); on both
backends, and with JAX's jit beside them when JAX is installed. Last, "N outputs": the first call of a
function returning N arrays (no gradient), each an elementwise expression of the input, "sum of N": value
and gradient of the sum of those N arrays, and "N inputs": value and gradient of a function of N arrays.

Run: python benchmarks/bench_compile_time.py [--lengths 10,100,1000] [--timeout 600]
"""
import argparse
import importlib.util
import os
import subprocess
import sys
import textwrap

PROGRAMS = {
    "ode": "x = x + 0.01 * (-k * x + np_.sin(x))",
    "sin chain": "x = np_.sin(x) * 0.999 + 0.001",
    "no repeats": "x = MIXED[kinds[t]](x, C[t])",
    "rnn rows": "x = np_.tanh(A @ x * 0.5 + rows[t])",
}

# The program, the same for every library: `np_` is its NumPy-like namespace, N the loop length.
LOSS = """
N = int(sys.argv[1])
k = np.linspace(0.5, 1.5, 8)
rng = np.random.default_rng(0)
kinds, C, A = rng.integers(0, 6, N), rng.uniform(0.5, 1.5, (N, 8)), rng.standard_normal((8, 8)) * 0.3
MIXED = [lambda x, c: np_.sin(x) * c, lambda x, c: x + 0.01 * np_.tanh(x * c), lambda x, c: x / (1.0 + x * x) + c,
         lambda x, c: A @ x * 0.1 + x, lambda x, c: x - np_.mean(x) * c, lambda x, c: np_.exp(-x * x) * c + x * 0.5]
def loss(x):
    rows = np_.outer(np_.linspace(0.0, 1.0, N), x)  # a traced table whose row t step t of "rnn rows" reads
    for t in range(N):
        {step}
    return np_.sum(x ** 2)
x = np.linspace(-1.0, 1.0, 8)
"""

# A program with N outputs (no loop to roll back): each output an elementwise expression of the input; and the
# sum of those outputs (`summed`), whose value and gradient "sum of N" times.
OUTPUTS = """
N = int(sys.argv[1])
def outputs(x):
    return [np_.sin(x * (i + 1)) + x[i % 8] for i in range(N)]
def summed(x):
    total = 0.0
    for output in outputs(x):
        total = total + np_.sum(output)
    return total
loss = outputs
x = np.linspace(-1.0, 1.0, 8)
"""

# A program of N inputs (a list of N vectors, each an argument of the compiled function): value and gradient of
# a weighted sum of their tanh ("N inputs"): the entry checks N arrays and the kernel takes N + N + 1 pointers.
INPUTS = """
N = int(sys.argv[1])
def loss(xs):
    total = 0.0
    for i, x in enumerate(xs):
        total = total + np_.sum(np_.tanh(x) * (i + 1.0))
    return total
x = [np.linspace(-1.0, 1.0, 8) + 0.01 * i for i in range(N)]
"""

SYMGRAD = """
import os, sys, time
os.environ["SYMGRAD_CACHE"] = "0"
import numpy as np
import symgrad as sg
np_, backend = sg, sys.argv[2]
{loss}
sg.value_and_grad, sg.compile  # the deferred imports, outside the timing (as `import jax` is), the backends' too
import symgrad.codegen.numpy_backend, symgrad.codegen.llvm.backend, symgrad.codegen.llvm.rules  # noqa: E401
start = time.perf_counter()
sg.compile({sg_transform}(loss), backend=backend)(x)
print(time.perf_counter() - start)
"""

JAX = """
import sys, time
import numpy as np
import jax
jax.config.update("jax_enable_x64", True)
import jax.numpy as np_
{loss}
start = time.perf_counter()
jax.block_until_ready(jax.jit({jax_transform}(loss))(x))
print(time.perf_counter() - start)
"""


def first_call(template: str, step: str, length: int, timeout: float, *args, outputs=False) -> str:
    """Seconds of the first call in a fresh process, as text ('-' past the timeout): of value and gradient of
    the loop `step`, or with `outputs`, of the OUTPUTS program itself (step None), of value and gradient of
    its sum (step "summed") or of the INPUTS program (step "inputs")."""
    if outputs:
        program = {None: OUTPUTS, "summed": OUTPUTS + "loss = summed\n", "inputs": INPUTS}[step]
        sg_transform, jax_transform = ("", "") if step is None else ("sg.value_and_grad", "jax.value_and_grad")
    else:
        program, (sg_transform, jax_transform) = LOSS.replace("{step}", step), ("sg.value_and_grad",
                                                                                 "jax.value_and_grad")
    code = textwrap.dedent(template).replace("{loss}", program).replace("{sg_transform}", sg_transform) \
        .replace("{jax_transform}", jax_transform)
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "SYMGRAD_NUM_THREADS": "1",
           "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"}
    try:
        done = subprocess.run([sys.executable, "-c", code, str(length), *args], capture_output=True, text=True,
                              timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return f"> {timeout:.0f} s"
    if done.returncode != 0:
        raise RuntimeError(done.stderr)
    return f"{float(done.stdout.strip()):.2f} s"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lengths", default="10,100,1000")
    parser.add_argument("--timeout", type=float, default=600)
    options = parser.parse_args()
    lengths = [int(n) for n in options.lengths.split(",")]
    columns = ["sg llvm", "sg numpy"] + (["jax jit"] if importlib.util.find_spec("jax") else [])
    print("first call of value and gradient, unrolled loop of N steps (fresh process, disk cache off)")
    print(f"{'program':<10} {'N':>6}  " + "  ".join(f"{c:>9}" for c in columns))
    for name, step in [*PROGRAMS.items(), ("N outputs", None), ("sum of N", "summed"), ("N inputs", "inputs")]:
        for length in lengths:
            outputs = step in (None, "summed", "inputs")
            cells = [first_call(SYMGRAD, step, length, options.timeout, "llvm", outputs=outputs),
                     first_call(SYMGRAD, step, length, options.timeout, "numpy", outputs=outputs)]
            if "jax jit" in columns:
                cells.append(first_call(JAX, step, length, options.timeout, outputs=outputs))
            print(f"{name:<10} {length:>6}  " + "  ".join(f"{c:>9}" for c in cells), flush=True)


if __name__ == "__main__":
    main()
