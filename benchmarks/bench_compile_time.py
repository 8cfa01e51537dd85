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
Each row ends with the growth exponent: the slope of log(time) against log(N) fitted over its sizes (1 is
linear; a loop's length should give about 0).

Then symgrad alone (LLVM), each family at sizes of its own (FAMILIES; `--families` picks some): "pytree", a
dict of N entries of two leaves each; "matrices", N straight-line steps on an 8x8 matrix (elementwise, axis
reductions, matrix products); "grad params", the gradient in a list of N 4x4 matrices (N outputs); "fori
length"/"scan length"/"while length", a loop of N steps of a 4x4 body; "scan nest", N scans nested (scan of
scan ...), 5 steps each; "fori body", 20 steps of a body of N "matrices" steps; "jacobian N"/"vmap N", a
function of N outputs under sg.jacobian / sg.vmap; "jacrev steps"/"vmap steps"/"hessian steps", the N
"matrices" steps under sg.jacrev (a row of the result) / sg.vmap (16 matrices) / sg.hessian; "eager LSTM",
PyTorch's time_sequence_prediction (two LSTMCells, tests/programs/) over N time steps, three forward-backward
passes (its first steps: the record, the adjoint and their compilation); "eager LSTMCell 1"/"eager LSTMCell 2",
one LSTMCell unrolled over N steps in a Python loop, one forward-backward pass (recorded and run) or two (the
second captures and compiles the step); "eager MLP", two steps of an MLP of N tanh layers 32 wide; "aot",
`symgrad compile` (aot.compile) of value and gradient of "matrices". A loop's length should cost nothing; every
other family at most linear time in N (docs/benchmarks.md, "compile36", for the figures and the profile).

Run: python benchmarks/bench_compile_time.py [--lengths 10,100,1000] [--timeout 600] [--families pytree,aot]
     [--cpu] [--full]   (--cpu: the process's CPU time instead of wall time, for a loaded machine;
     --full: SYMGRAD_QUICK_CODE=0, fully optimized code from the first call instead of quick code)
"""
import argparse
import importlib.util
import math
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
start, cpu_start = time.perf_counter(), time.process_time()
sg.compile({sg_transform}(loss), backend=backend)(x)
print(time.perf_counter() - start, time.process_time() - cpu_start)
"""

JAX = """
import sys, time
import numpy as np
import jax
jax.config.update("jax_enable_x64", True)
import jax.numpy as np_
{loss}
start, cpu_start = time.perf_counter(), time.process_time()
jax.block_until_ready(jax.jit({jax_transform}(loss))(x))
print(time.perf_counter() - start, time.process_time() - cpu_start)
"""


# symgrad's families at sizes of their own: each snippet defines first_call() for N = int(sys.argv[1]), timed by
# FAMILY in a fresh process (disk cache off, the backends imported outside the timing).
MATRICES = """
kinds, C = rng.integers(0, 7, N), rng.uniform(0.5, 1.5, (N, 8, 8))
W = rng.standard_normal((8, 8)) * 0.3
OPS = [lambda x, c: sg.sin(x) * c, lambda x, c: x + 0.01 * sg.tanh(x * c), lambda x, c: x @ (W * c) * 0.3 + x,
       lambda x, c: x - sg.mean(x, axis=0) * c, lambda x, c: sg.exp(-x * x) * c + x * 0.5,
       lambda x, c: x / (1.0 + sg.sum(x * x, axis=1, keepdims=True)) + c,
       lambda x, c: x - sg.max(x, axis=1, keepdims=True) * 0.1 * c]
def steps(x, count=N):
    for t in range(count):
        x = OPS[kinds[t]](x, C[t])
    return x
def loss(x):
    return sg.sum(steps(x) ** 2)
x = rng.standard_normal((8, 8)) * 0.5
"""
BODY = """
x = rng.standard_normal((4, 4)) * 0.3
def body(x):
    return sg.tanh(x @ x.T * 0.1 + x * 0.5) + 0.01
"""
# One LSTMCell unrolled over the N steps of a sequence in a Python loop, PASSES forward-backward passes.
EAGER_CELL = """
import symgrad.nn as nn
cell, xs = nn.LSTMCell(8, 16).double(), sg.from_numpy(rng.standard_normal((N, 4, 8)))
def first_call():
    for _ in range(PASSES):
        cell.zero_grad()
        h = c = sg.zeros((4, 16), dtype=sg.float64)
        for t in range(N):
            h, c = cell(xs[t], (h, c))
        (h * h).sum().backward()
"""
FAMILIES = {
    "pytree": ([100, 200, 400, 800], """
tree = {f"k{i}": (np.linspace(-1, 1, 5) + i, [np.full((2, 3), 0.1 * i)]) for i in range(N)}
def loss(t):
    return sum(sg.sum(sg.tanh(a) * (i + 1.0)) + sg.sum(b * b) for i, (a, [b]) in enumerate(t.values()))
def first_call():
    sg.compile(sg.value_and_grad(loss))(tree)
"""),
    "matrices": ([100, 200, 400, 800], MATRICES + """
def first_call():
    sg.compile(sg.value_and_grad(loss))(x)
"""),
    "grad params": ([32, 64, 128, 256], """
params = [rng.standard_normal((4, 4)) for _ in range(N)]
def loss(ps):
    h = np.eye(4) * 0.5
    for p in ps:
        h = sg.tanh(h @ p)
    return sg.sum(h * h)
def first_call():
    sg.compile(sg.grad(loss))(params)
"""),
    "fori length": ([10, 1000, 100000], BODY + """
def first_call():
    sg.compile(sg.value_and_grad(lambda x: sg.sum(sg.fori_loop(0, N, lambda i, x: body(x), x))))(x)
"""),
    "scan length": ([10, 1000, 100000], BODY + """
def loss(x):
    c, ys = sg.scan(lambda c, _: (body(c), sg.sum(c)), x, None, length=N)
    return sg.sum(c) + sg.sum(ys)
def first_call():
    sg.compile(sg.value_and_grad(loss))(x)
"""),
    "while length": ([10, 1000, 100000], BODY + """
def loss(x):
    return sg.sum(sg.while_loop(lambda c: c[0] < N, lambda c: (c[0] + 1, body(c[1])), (0, x))[1])
def first_call():
    sg.compile(sg.value_and_grad(loss))(x)
"""),
    "scan nest": ([1, 2, 3, 4], BODY + """
def nest(depth):
    def step(c, _):
        if depth == 1:
            return body(c), sg.sum(c)
        c, ys = sg.scan(nest(depth - 1), c, None, length=5)
        return c, sg.sum(ys)
    return step
def loss(x):
    c, ys = sg.scan(nest(N), x, None, length=5)
    return sg.sum(c) + sg.sum(ys)
def first_call():
    sg.compile(sg.value_and_grad(loss))(x)
"""),
    "fori body": ([50, 100, 200, 400], MATRICES + """
def first_call():
    sg.compile(sg.value_and_grad(lambda x: sg.sum(sg.fori_loop(0, 20, lambda i, x: sg.tanh(steps(x)), x))))(x)
"""),
    "jacobian N": ([50, 100, 200, 400], """
x = np.linspace(-1.0, 1.0, 8)
def first_call():
    sg.compile(sg.jacobian(lambda x: [sg.sin(x * (i + 1)) + x[i % 8] for i in range(N)]))(x)
"""),
    "vmap N": ([50, 100, 200, 400], """
x = rng.standard_normal((16, 8))
def first_call():
    sg.compile(sg.vmap(lambda x: [sg.sin(x * (i + 1)) + sg.sum(x) * i for i in range(N)]))(x)
"""),
    "jacrev steps": ([125, 250, 500, 1000], MATRICES + """
def first_call():
    sg.compile(sg.jacrev(lambda x: steps(x)[0]))(x)
"""),
    "vmap steps": ([125, 250, 500, 1000], MATRICES + """
def first_call():
    sg.compile(sg.vmap(loss))(rng.standard_normal((16, 8, 8)))
"""),
    "hessian steps": ([25, 50, 100, 200], MATRICES + """
def first_call():
    sg.compile(sg.hessian(loss))(x)
"""),
    "eager LSTM": ([10, 20, 40, 80], """
sys.path.insert(0, os.path.join(REPO, "tests", "programs"))
import pytorch_time_sequence_prediction as program
import symgrad.nn as nn
np.random.seed(2)
data = np.sin((np.arange(N + 1) + np.random.randint(-80, 80, 6).reshape(6, 1)) / 20.0)
inputs, target = sg.from_numpy(data[3:, :-1]), sg.from_numpy(data[3:, 1:])
seq, criterion = program.fixed(program.Sequence().double()), nn.MSELoss()
def first_call():
    for _ in range(3):  # as LBFGS' closure, evaluated again
        seq.zero_grad()
        criterion(seq(inputs), target).backward()
"""),
    "eager LSTMCell 1": ([25, 50, 100, 200], EAGER_CELL.replace("PASSES", "1")),
    "eager LSTMCell 2": ([25, 50, 100, 200], EAGER_CELL.replace("PASSES", "2")),
    "eager MLP": ([8, 16, 32, 64], """
import symgrad.nn as nn
net = nn.Sequential(*[layer for _ in range(N) for layer in (nn.Linear(32, 32), nn.Tanh())], nn.Linear(32, 1)).double()
batch = sg.from_numpy(rng.standard_normal((16, 32)))
def first_call():
    for _ in range(2):  # the first step recorded and run, the second captured and compiled
        net.zero_grad()
        (net(batch) ** 2).mean().backward()
"""),
    "aot": ([100, 200, 400, 800], MATRICES + """
import tempfile
out = tempfile.mkdtemp()
def first_call():
    sg.aot.compile(loss, (x,), value_and_grad=True, out=os.path.join(out, "matrices"))
"""),
}

FAMILY = """
import os, sys, time
os.environ["SYMGRAD_CACHE"] = "0"
import numpy as np
import symgrad as sg
import symgrad.aot  # noqa: F401
import symgrad.codegen.numpy_backend, symgrad.codegen.llvm.backend, symgrad.codegen.llvm.rules  # noqa: E401
REPO, N, rng = sys.argv[2], int(sys.argv[1]), np.random.default_rng(0)
{program}
start, cpu_start = time.perf_counter(), time.process_time()
first_call()
print(time.perf_counter() - start, time.process_time() - cpu_start)
"""

ENV = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "SYMGRAD_NUM_THREADS": "1",
       "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"}


def timed(code: str, length: int, timeout: float, *args) -> tuple | None:
    """(wall, CPU) seconds `code` prints for size `length` in a fresh process on one thread, None past the
    timeout."""
    try:
        done = subprocess.run([sys.executable, "-c", code, str(length), *args], capture_output=True, text=True,
                              timeout=timeout, env={**os.environ, **ENV})
    except subprocess.TimeoutExpired:
        return None
    if done.returncode != 0:
        raise RuntimeError(done.stderr)
    return tuple(float(t) for t in done.stdout.split())


def program_code(template: str, step: str, outputs=False) -> str:
    """The program of value and gradient of the loop `step`, or with `outputs`, of the OUTPUTS program itself
    (step None), of value and gradient of its sum (step "summed") or of the INPUTS program (step "inputs")."""
    if outputs:
        program = {None: OUTPUTS, "summed": OUTPUTS + "loss = summed\n", "inputs": INPUTS}[step]
        sg_transform, jax_transform = ("", "") if step is None else ("sg.value_and_grad", "jax.value_and_grad")
    else:
        program, (sg_transform, jax_transform) = LOSS.replace("{step}", step), ("sg.value_and_grad",
                                                                                 "jax.value_and_grad")
    return textwrap.dedent(template).replace("{loss}", program).replace("{sg_transform}", sg_transform) \
        .replace("{jax_transform}", jax_transform)


def growth(lengths, times) -> str:
    """The slope of log(time) against log(N), least squares over the sizes measured."""
    points = [(math.log(n), math.log(t)) for n, t in zip(lengths, times) if t is not None and t > 0]
    if len(points) < 2:
        return "-"
    mx, my = sum(p[0] for p in points) / len(points), sum(p[1] for p in points) / len(points)
    slope = sum((x - mx) * (y - my) for x, y in points) / sum((x - mx) ** 2 for x, _ in points)
    return f"{slope:.2f}"


def cell(seconds) -> str:
    return "> timeout" if seconds is None else f"{seconds:.2f} s"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lengths", default="10,100,1000", help="the first table's sizes, or '' (no first table)")
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--families", default=",".join(FAMILIES), help="the families of the second table, or none")
    parser.add_argument("--cpu", action="store_true", help="CPU time of the process instead of wall time")
    parser.add_argument("--full", action="store_true", help="fully optimized code from the first call (no quick code)")
    options = parser.parse_args()
    if options.full:
        ENV["SYMGRAD_QUICK_CODE"] = "0"
    pick = (lambda t: t and t[1]) if options.cpu else (lambda t: t and t[0])  # (wall, CPU) or None
    lengths = [int(n) for n in options.lengths.split(",") if n]
    columns = ["sg llvm", "sg numpy"] + (["jax jit"] if importlib.util.find_spec("jax") else [])
    clock = ("CPU" if options.cpu else "wall") + (" time, full code" if options.full else " time, quick code")
    if lengths:
        print(f"first call of value and gradient, unrolled loop of N steps (fresh process, disk cache off, {clock};"
              " last columns: growth exponents)")
        print(f"{'program':<10} {'N':>6}  " + "  ".join(f"{c:>9}" for c in columns))
    programs = [*PROGRAMS.items(), ("N outputs", None), ("sum of N", "summed"), ("N inputs", "inputs")]
    for name, step in programs if lengths else []:
        outputs = step in (None, "summed", "inputs")
        codes = [(program_code(SYMGRAD, step, outputs), ("llvm",)), (program_code(SYMGRAD, step, outputs), ("numpy",))]
        if "jax jit" in columns:
            codes.append((program_code(JAX, step, outputs), ()))
        rows = []
        for length in lengths:
            rows.append([pick(timed(code, length, options.timeout, *args)) for code, args in codes])
            print(f"{name:<10} {length:>6}  " + "  ".join(f"{cell(t):>9}" for t in rows[-1]), flush=True)
        print(f"{name:<10} {'growth':>6}  " + "  ".join(f"{growth(lengths, col):>9}" for col in zip(*rows)))
    families = [f for f in options.families.split(",") if f in FAMILIES]
    if families:
        print(f"\nsymgrad's families, first call ({clock}, LLVM backend, fresh process, disk cache off)")
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for name in families:
        sizes, program = FAMILIES[name]
        code = textwrap.dedent(FAMILY).replace("{program}", program)
        times = [pick(timed(code, n, options.timeout, repo)) for n in sizes]
        print(f"{name:<16} " + "  ".join(f"N={n}: {cell(t)}" for n, t in zip(sizes, times))
              + f"  growth {growth(sizes, times)}", flush=True)


if __name__ == "__main__":
    main()
