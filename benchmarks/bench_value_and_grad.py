"""Value and gradient per call, side by side in one process: symgrad (LLVM and NumPy backends),
hand-written NumPy, JAX jit(value_and_grad), PyTorch eager and PyTensor, on the problems of
benchmarks/problems.py.

Run: python benchmarks/bench_value_and_grad.py [--quick] [--only rosen10,mlp]

Every column is checked against the hand-written gradient before it is timed. Times are medians
of per-call times over many samples (each sample a loop of at least a few ms; columns interleaved
so load from other processes hits them alike; repeat counts adapt to a per-problem time budget).
Every column runs on one thread: BLAS thread variables are set to 1 before NumPy is imported,
XLA runs single-threaded, torch.set_num_threads(1). "First call" is build + first evaluation:
for symgrad trace + derive + optimize + compile with the on-disk cache disabled (SYMGRAD_CACHE=0);
for LLVM also the first call in a fresh process, with the on-disk cache off and warm. Absent peers
are skipped. Column "numpy" is the hand-written gradient (for `tiny`, Python math on floats).
"""
import os
import sys

SINGLE_THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "VECLIB_MAXIMUM_THREADS",
                      "NUMEXPR_NUM_THREADS", "SYMGRAD_NUM_THREADS")
for _var in SINGLE_THREAD_VARS:
    os.environ[_var] = "1"
os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "")
                           + " --xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1").strip()
os.environ["JAX_PLATFORMS"] = "cpu"
os.environ.setdefault("PYTENSOR_FLAGS", "mode=CVM")  # PyTensor's C backend (its default, Numba, may be absent)
CHILD_FLAG = "--first-call-child"
if CHILD_FLAG not in sys.argv:
    os.environ["SYMGRAD_CACHE"] = "0"  # first calls in this process pay the whole compile

import argparse  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402
import types  # noqa: E402
import warnings  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from typing import Callable  # noqa: E402

import numpy as np  # noqa: E402

warnings.filterwarnings("ignore", message=".*BLAS.*")  # PyTensor without a BLAS link: stated in the header

import symgrad as sg  # noqa: E402
from symgrad.backends import BACKENDS  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from problems import BY_NAME, PROBLEMS  # noqa: E402


@dataclass
class Runner:
    """One implementation of one problem, built and called once."""

    call: Callable[[], object]       # one value-and-gradient evaluation: what is timed
    unpack: Callable[[object], tuple]  # call's output -> (value, tuple of gradients) as NumPy
    first_call: float                # seconds to build it and run it once


def _timed_first_call(build):
    """(call, seconds): build() returns the call; the seconds include building and one call."""
    start = time.perf_counter()
    call = build()
    call()
    return call, time.perf_counter() - start


# ----------------------------------------------------------------------------- implementations

def symgrad_runner(backend):
    """make(problem, args) -> Runner of sg.compile(sg.value_and_grad(loss), backend=backend)."""
    def make(problem, args):
        def loss(*a):
            return problem.loss(sg, *a)
        loss.__name__ = problem.name

        def build():
            step = sg.compile(sg.value_and_grad(loss, argnums=problem.argnums), backend=backend)
            return lambda: step(*args)
        call, first = _timed_first_call(build)
        return Runner(call, lambda out: (out[0], tuple(out[1])), first)
    return make


def hand_runner(problem, args):
    """The hand-written NumPy value and gradient."""
    call, first = _timed_first_call(lambda: lambda: problem.hand(*args))
    return Runner(call, lambda out: out, first)


def jax_runner(problem, args):
    """jax.jit(jax.value_and_grad(loss)) on device arrays, waiting for the results."""
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)
    ns = types.SimpleNamespace(sum=jnp.sum, mean=jnp.mean, sin=jnp.sin, cos=jnp.cos, exp=jnp.exp, tanh=jnp.tanh,
                               log1p=jnp.log1p, softplus=jax.nn.softplus, log_softmax=jax.nn.log_softmax)
    device_args = [jnp.asarray(a) for a in args]

    def build():
        step = jax.jit(jax.value_and_grad(lambda *a: problem.loss(ns, *a), argnums=problem.argnums))

        def call():
            return jax.block_until_ready(step(*device_args))
        return call
    call, first = _timed_first_call(build)
    return Runner(call, lambda out: (np.asarray(out[0]), tuple(np.asarray(g) for g in out[1])), first)


def torch_runner(problem, args):
    """PyTorch eager: forward, backward, gradients read from the leaves."""
    import torch
    torch.set_num_threads(1)
    ns = types.SimpleNamespace(
        sum=lambda x, axis=None: x.sum() if axis is None else x.sum(dim=axis),
        mean=lambda x, axis=None: x.mean() if axis is None else x.mean(dim=axis),
        sin=torch.sin, cos=torch.cos, exp=torch.exp, tanh=torch.tanh, log1p=torch.log1p,
        softplus=torch.nn.functional.softplus, log_softmax=lambda x, axis: torch.log_softmax(x, dim=axis))
    tensors = [torch.from_numpy(a) for a in args]
    leaves = [tensors[n].requires_grad_() for n in problem.argnums]

    def step():
        for leaf in leaves:
            leaf.grad = None
        value = problem.loss(ns, *tensors)
        value.backward()
        return value.detach(), [leaf.grad for leaf in leaves]
    call, first = _timed_first_call(lambda: step)
    return Runner(call, lambda out: (out[0].numpy(), tuple(g.numpy() for g in out[1])), first)


def pytensor_runner(problem, args):
    """A compiled PyTensor function returning the cost and pytensor.grad's gradients, trust_input on."""
    import pytensor
    import pytensor.tensor as pt
    from pytensor.tensor.special import log_softmax
    ns = types.SimpleNamespace(sum=pt.sum, mean=pt.mean, sin=pt.sin, cos=pt.cos, exp=pt.exp, tanh=pt.tanh,
                               log1p=pt.log1p, softplus=pt.softplus, log_softmax=log_softmax)

    def build():
        inputs = [pt.tensor(dtype=str(a.dtype), shape=a.shape, name=f"a{i}") for i, a in enumerate(args)]
        cost = problem.loss(ns, *inputs)
        grads = pytensor.grad(cost, [inputs[n] for n in problem.argnums])
        fn = pytensor.function(inputs, [cost, *grads])
        fn.trust_input = True
        return lambda: fn(*args)
    call, first = _timed_first_call(build)
    return Runner(call, lambda out: (out[0], tuple(out[1:])), first)


def columns():
    """(label, make(problem, args) -> Runner) for every available implementation, symgrad first."""
    found = []
    if "llvm" in BACKENDS:
        found.append(("sg-llvm", symgrad_runner("llvm")))
    found += [("sg-numpy", symgrad_runner("numpy")), ("numpy", hand_runner)]
    for label, module, make in (("jax", "jax", jax_runner), ("torch", "torch", torch_runner),
                                ("pytensor", "pytensor", pytensor_runner)):
        try:
            __import__(module)
        except ImportError:
            continue
        found.append((label, make))
    return found


def peer_versions():
    """{module: version or None if absent}, PyTensor with its mode and BLAS link."""
    versions = {}
    for module in ("jax", "torch", "pytensor"):
        try:
            versions[module] = __import__(module).__version__
        except ImportError:
            versions[module] = None
    if versions["pytensor"]:
        import pytensor
        versions["pytensor"] += (f" (mode {pytensor.config.mode}, "
                                 f"BLAS ldflags {pytensor.config.blas__ldflags or 'none: NumPy C-API'})")
    return versions


# ----------------------------------------------------------------------------- checking

def disagreement(problem, got, expected):
    """None if (value, grads) agree with the hand-written ones, else what differs."""
    (value, grads), (ref_value, ref_grads) = got, expected
    single = any(np.asarray(g).dtype == np.float32 for g in ref_grads)
    tol = 2e-4 if single else 1e-8
    if len(grads) != len(ref_grads):
        return f"{len(grads)} gradients, expected {len(ref_grads)}"
    if not np.isclose(float(value), float(ref_value), rtol=tol, atol=tol):
        return f"value {float(value)!r}, expected {float(ref_value)!r}"
    for n, g, r in zip(problem.argnums, grads, ref_grads):
        g, r = np.asarray(g, np.float64), np.asarray(r, np.float64)
        if g.shape != r.shape:
            return f"gradient of argument {n} has shape {g.shape}, expected {r.shape}"
        error = float(np.max(np.abs(g - r))) / max(1.0, float(np.max(np.abs(r))))
        if not error <= tol:
            return f"gradient of argument {n}: scaled error {error:.3g}"
    return None


# ----------------------------------------------------------------------------- timing

def loop_count(call, sample_seconds):
    """Calls per sample so that one sample lasts about sample_seconds (like timeit.autorange)."""
    number = 1
    while True:
        start = time.perf_counter()
        for _ in range(number):
            call()
        elapsed = time.perf_counter() - start
        if elapsed >= sample_seconds or number >= 1_000_000:
            return number
        number = max(number * 2, int(number * sample_seconds / max(elapsed, 1e-9) * 1.2))


def per_call_medians(calls, budget, sample_seconds, min_samples, max_samples=400):
    """{label: (median seconds per call, samples)}, sampling all calls round-robin until the
    budget is spent (at least min_samples each)."""
    numbers = {label: loop_count(call, sample_seconds) for label, call in calls.items()}
    samples = {label: [] for label in calls}
    deadline = time.perf_counter() + budget
    rounds = 0
    while rounds < min_samples or (time.perf_counter() < deadline and rounds < max_samples):
        for label, call in calls.items():
            number = numbers[label]
            start = time.perf_counter()
            for _ in range(number):
                call()
            samples[label].append((time.perf_counter() - start) / number)
        rounds += 1
    return {label: (statistics.median(values), len(values)) for label, values in samples.items()}


def import_tracing_machinery():
    """Seconds to import what `import symgrad` defers to first use (the transforms, SymPy), so
    that first-call times do not include it."""
    start = time.perf_counter()
    sg.value_and_grad, sg.compile  # noqa: B018  (attribute access imports them)
    return time.perf_counter() - start


def fresh_process_first_calls(problem_name, backend):
    """(import seconds, cold first call, warm first call), each in a fresh process: with the
    on-disk cache off, then with it on after one run that fills it. None where a run failed."""
    command = [sys.executable, os.path.abspath(__file__), CHILD_FLAG, problem_name, backend]
    with_cache = {k: v for k, v in os.environ.items() if k != "SYMGRAD_CACHE"}
    runs = []
    for env in ({**with_cache, "SYMGRAD_CACHE": "0"}, with_cache, with_cache):
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
        runs.append([float(word) for word in done.stdout.split()[-2:]] if done.returncode == 0 else [None, None])
    return runs[0][0], runs[0][1], runs[2][1]


def child_first_call(problem_name, backend):
    """In a fresh process: print the import seconds and the first-call seconds."""
    problem = BY_NAME[problem_name]
    args = problem.make_args(np.random.default_rng(0), False)
    imports = import_tracing_machinery()
    print(imports, symgrad_runner(backend)(problem, args).first_call)


# ----------------------------------------------------------------------------- one problem

@dataclass
class Results:
    """Everything measured, keyed by (problem name, column label)."""

    times: dict
    firsts: dict
    notes: list
    sample_counts: list
    import_seconds: list  # in fresh processes, importing symgrad's deferred modules (SymPy)


def run_problem(problem, available, results, timing, fresh_process):
    """Build every column for `problem`, check it against the hand-written gradient, time the good ones."""
    args = problem.make_args(np.random.default_rng(0), False)
    expected = problem.hand(*args)
    calls = {}
    for label, make in available:
        key = problem.name, label
        try:
            runner = make(problem, args)
        except Exception as error:  # a peer or backend that cannot run this problem: report it, go on
            results.times[key] = results.firsts[key] = "fail"
            results.notes.append(f"{problem.name}/{label} failed: {type(error).__name__}: {str(error)[:200]}")
            continue
        results.firsts[key] = runner.first_call
        wrong = disagreement(problem, runner.unpack(runner.call()), expected)
        if wrong:
            results.times[key] = "wrong"
            results.notes.append(f"{problem.name}/{label} disagrees with the hand-written gradient: {wrong}")
            continue
        calls[label] = runner.call
    for label, (median, count) in per_call_medians(calls, *timing).items():
        results.times[problem.name, label] = median
        results.sample_counts.append(count)
    if fresh_process:
        imports, results.firsts[problem.name, "llvm fresh cold"], results.firsts[problem.name, "llvm fresh warm"] = \
            fresh_process_first_calls(problem.name, "llvm")
        results.import_seconds.append(imports)


# ----------------------------------------------------------------------------- report

def fmt_time(seconds):
    """A time in us/ms/s with 3 significant digits; strings (fail, wrong) and None (-) as they are."""
    if seconds is None:
        return "-"
    if isinstance(seconds, str):
        return seconds
    if seconds < 1e-3:
        return f"{seconds * 1e6:.3g} us"
    if seconds < 1:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds:.3g} s"


def print_table(title, header, rows):
    """A left-aligned first column and right-aligned others, under a dashed rule."""
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]
    print(f"\n{title}")
    for k, row in enumerate([header, *rows]):
        print("  ".join(str(cell).ljust(w) if i == 0 else str(cell).rjust(w) for i, (cell, w) in
                        enumerate(zip(row, widths))))
        if k == 0:
            print("  ".join("-" * w for w in widths))


def print_header(opts, labels):
    """Date, machine, versions, thread settings and columns."""
    cpu = platform.processor()
    if os.path.exists("/proc/cpuinfo"):
        cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
                   cpu)
    peers = ", ".join(f"{k} {v}" if v else f"{k} absent" for k, v in peer_versions().items())
    print(f"symgrad value_and_grad benchmark, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
          f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, NumPy {np.__version__}")
    print(f"symgrad {sg.__version__}, backends {sorted(BACKENDS)}; {peers}")
    print(f"one thread everywhere: {'/'.join(SINGLE_THREAD_VARS)}=1, XLA_FLAGS={os.environ['XLA_FLAGS']}, "
          "torch.set_num_threads(1)")
    print(f"columns: {', '.join(labels)}{'  (--quick: short budgets)' if opts.quick else ''}")


def ratio_table(chosen, labels, times):
    """(header, rows): each symgrad column over hand-written NumPy and over the fastest non-symgrad column."""
    mine = [label for label in labels if label.startswith("sg-")]
    peers = [label for label in labels if not label.startswith("sg-")]
    header = ["problem", "best peer"] + [f"{label}/{other}" for label in mine for other in ("numpy", "best")]
    rows = []
    for p in chosen:
        measured = {label: times.get((p.name, label)) for label in labels}
        measured = {k: v for k, v in measured.items() if isinstance(v, float)}
        best = min((label for label in peers if label in measured), key=measured.get, default=None)
        row = [p.name, best or "-"]
        for label in mine:
            for other in ("numpy", best):
                ok = label in measured and other in measured
                row.append(f"{measured[label] / measured[other]:.2f}" if ok else "-")
        rows.append(row)
    return header, rows


def print_report(chosen, labels, results):
    """The three tables (per call, ratios, first call) and the notes."""
    counts = results.sample_counts
    print_table(f"value and gradient, per call (median of {min(counts, default=0)}-{max(counts, default=0)} samples)",
                ["problem", *labels, "target"],
                [[p.name] + [fmt_time(results.times.get((p.name, label))) for label in labels] + [fmt_time(p.target)]
                 for p in chosen])
    print_table("ratios, symgrad time / other time (lower is better)", *ratio_table(chosen, labels, results.times))
    fresh = ["llvm fresh cold", "llvm fresh warm"] if any(k[1] == "llvm fresh warm" for k in results.firsts) else []
    first_labels = labels[:1] + fresh + labels[1:]
    imports = [t for t in results.import_seconds if t is not None]
    print_table("first call: build + first evaluation (symgrad: trace + derive + compile, SYMGRAD_CACHE=0, in this "
                "process; 'llvm fresh': in a new process, disk cache off / warm; all after importing symgrad's "
                f"deferred modules, {fmt_time(min(imports))}-{fmt_time(max(imports))})", ["problem", *first_labels],
                [[p.name] + [fmt_time(results.firsts.get((p.name, label))) for label in first_labels] for p in chosen])
    print("\nnumpy: hand-written NumPy gradients (tiny: Python math on floats); target: issue 3's per-call target "
          "for symgrad (first call target: <= 0.3 s).")
    for note in results.notes:
        print("note:", note)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a fast smoke run: short timing budgets")
    parser.add_argument("--only", default="", help="comma-separated problem names, e.g. rosen10,mlp")
    opts = parser.parse_args()
    names = [name for name in opts.only.split(",") if name]
    unknown = set(names) - set(BY_NAME)
    if unknown:
        raise SystemExit(f"unknown problems {sorted(unknown)}; choose from {', '.join(BY_NAME)}")
    chosen = [p for p in PROBLEMS if not names or p.name in names]
    # (seconds per problem, seconds per sample, minimum samples)
    timing = (1.0, 0.002, 3) if opts.quick else (12.0, 0.005, 7)

    available = columns()
    labels = [label for label, _ in available]
    print_header(opts, labels)
    results = Results({}, {}, [], [], [import_tracing_machinery()])
    for problem in chosen:
        run_problem(problem, available, results, timing, fresh_process="llvm" in BACKENDS and not opts.quick)
        print(f"  {problem.name} done", file=sys.stderr)
    print_report(chosen, labels, results)


if __name__ == "__main__":
    if CHILD_FLAG in sys.argv:
        child_first_call(*sys.argv[sys.argv.index(CHILD_FLAG) + 1:][:2])
    else:
        main()
