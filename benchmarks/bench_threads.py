"""Thread scaling, side by side in one run: symgrad's kernels on 1 and 2 (or --threads) threads, and
several Python threads calling one compiled function at once (calls release the GIL).

Run: python benchmarks/bench_threads.py [--quick] [--threads 2] [--callers 8]

Problems (benchmarks/problems.py): value and gradient of ew1m and rosen1m (1e6 float64), an MLP
training step (the `mlp` problem, and the same network on a batch of 16384), and rosen10 (a
microsecond call, which must stay single-threaded and as fast as ever). Columns: median time per call
on 1 and on N threads and their ratio; PyTorch eager (and JAX jit, when installed) at their default
thread counts, for scale. Then throughput of `--callers` Python threads calling one compiled
value-and-gradient of ew1m (each on inputs of its own) against one Python thread calling it as often.
Every symgrad result is checked against the 1-thread result before timing: bit for bit, but for the
MLP's matrix products, which OpenBLAS rounds differently on different thread counts (to 1e-5). Samples of the
columns are interleaved, so load from other processes hits them alike; the machine's load is printed.
"""
import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # PyTorch's idle OpenMP threads would spin in others' samples

import argparse  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
import types  # noqa: E402

import numpy as np  # noqa: E402

import symgrad as sg  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from problems import BY_NAME, mlp_args  # noqa: E402


def mlp_big_args(rng, small):
    """The mlp problem's network on a batch of 16384: loops over 2M hidden units."""
    w1, b1, w2, b2, _, _ = mlp_args(rng, small)
    batch = 16384
    x = rng.normal(size=(batch, w1.shape[0])).astype(np.float32)
    y = np.eye(w2.shape[1], dtype=np.float32)[rng.integers(0, w2.shape[1], size=batch)]
    return w1, b1, w2, b2, x, y


PROBLEMS = [("ew1m", BY_NAME["ew1m"].make_args), ("rosen1m", BY_NAME["rosen1m"].make_args),
            ("mlp", BY_NAME["mlp"].make_args), ("mlp16k", mlp_big_args), ("rosen10", BY_NAME["rosen10"].make_args)]
CALLS_BLAS = {"mlp", "mlp16k"}


def per_call(functions: dict, budget: float) -> dict:
    """name -> median seconds per call of each function(), samples interleaved across functions."""
    loops = {}
    for name, function in functions.items():
        function()
        count, start = 1, time.perf_counter()
        while True:
            for _ in range(count):
                function()
            elapsed = time.perf_counter() - start
            if elapsed > 0.02:
                break
            count, start = count * 2, time.perf_counter()
        loops[name] = count
    samples = {name: [] for name in functions}
    deadline = time.perf_counter() + budget
    while time.perf_counter() < deadline or min(len(s) for s in samples.values()) < 5:
        for name, function in functions.items():
            start = time.perf_counter()
            for _ in range(loops[name]):
                function()
            samples[name].append((time.perf_counter() - start) / loops[name])
    return {name: statistics.median(s) for name, s in samples.items()}


def torch_step(problem, args):
    """PyTorch eager value and gradient at its default thread count, or None without PyTorch."""
    try:
        import torch
    except ImportError:
        return None
    ns = types.SimpleNamespace(
        sum=lambda x, axis=None: x.sum() if axis is None else x.sum(dim=axis),
        mean=lambda x, axis=None: x.mean() if axis is None else x.mean(dim=axis),
        sin=torch.sin, cos=torch.cos, exp=torch.exp, tanh=torch.tanh, log1p=torch.log1p,
        softplus=torch.nn.functional.softplus, log_softmax=lambda x, axis: torch.log_softmax(x, dim=axis))
    tensors = [torch.from_numpy(a.copy()) for a in args]
    leaves = [tensors[n].requires_grad_() for n in problem.argnums]

    def step():
        for leaf in leaves:
            leaf.grad = None
        problem.loss(ns, *tensors).backward()
    return step


def jax_step(problem, args):
    """jax.jit(value_and_grad) at JAX's default threading, or None without JAX."""
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)
    ns = types.SimpleNamespace(sum=jnp.sum, mean=jnp.mean, sin=jnp.sin, cos=jnp.cos, exp=jnp.exp, tanh=jnp.tanh,
                               log1p=jnp.log1p, softplus=jax.nn.softplus, log_softmax=jax.nn.log_softmax)
    step = jax.jit(jax.value_and_grad(lambda *a: problem.loss(ns, *a), argnums=problem.argnums))
    device_args = [jnp.asarray(a) for a in args]
    return lambda: jax.block_until_ready(step(*device_args))


def scaling_table(threads: int, budget: float):
    rng = np.random.default_rng(0)
    print(f"value and gradient, median per call; symgrad on 1 and {threads} threads (one kernel, chunks on the pool)")
    print(f"{'problem':10s} {'1 thread':>12s} {f'{threads} threads':>12s} {'speed-up':>9s} {'torch':>12s} "
          f"{'jax':>12s}")
    for name, make_args in PROBLEMS:
        problem = BY_NAME[name.replace("16k", "")]
        args = make_args(rng, False)
        loss = lambda *a, problem=problem: problem.loss(sg, *a)  # noqa: E731
        compiled = {t: sg.compile(sg.value_and_grad(loss, argnums=problem.argnums), threads=t) for t in (1, threads)}
        one, many = compiled[1](*args), compiled[threads](*args)
        for got, want in zip(sg.pytree.flatten(many)[0], sg.pytree.flatten(one)[0]):
            if name in CALLS_BLAS:
                np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=name)
            else:
                assert np.array_equal(got, want), f"{name}: {threads} threads differ from 1"
        functions = {t: (lambda c=c: c(*args)) for t, c in compiled.items()}
        for peer, make in (("torch", torch_step), ("jax", jax_step)):
            step = make(problem, args)
            if step is not None:
                functions[peer] = step
        times = per_call(functions, budget)
        cells = [f"{times[t] * 1e6:10.1f}us" for t in (1, threads)]
        cells.append(f"{times[1] / times[threads]:8.2f}x")
        cells += [f"{times[p] * 1e6:10.1f}us" if p in times else f"{'-':>12s}" for p in ("torch", "jax")]
        print(f"{name:10s} " + " ".join(cells))


def callers_table(callers: int, budget: float):
    """Throughput of `callers` Python threads calling one compiled function against one thread."""
    problem = BY_NAME["ew1m"]
    rng = np.random.default_rng(1)
    inputs = [problem.make_args(rng, False) for _ in range(callers)]
    f = sg.compile(sg.value_and_grad(lambda x: problem.loss(sg, x)), threads=1)
    alone = [f(*args) for args in inputs]

    def run(thread_count, calls_each):
        results = [None] * thread_count

        def work(t):
            for _ in range(calls_each):
                results[t] = f(*inputs[t])
        workers = [threading.Thread(target=work, args=(t,)) for t in range(thread_count)]
        start = time.perf_counter()
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        elapsed = time.perf_counter() - start
        for t in range(thread_count):
            assert np.array_equal(results[t][1], alone[t][1])
        return thread_count * calls_each / elapsed
    calls_each = max(2, int(budget / 0.01 / callers))
    one, many = [], []
    for _ in range(3):  # interleaved rounds
        one.append(run(1, calls_each * callers))
        many.append(run(callers, calls_each))
    one, many = statistics.median(one), statistics.median(many)
    print(f"\n{callers} Python threads calling one compiled value_and_grad of ew1m (threads=1 kernels, each "
          f"thread its own 1e6 inputs)")
    print(f"  1 thread: {one:8.1f} calls/s   {callers} threads: {many:8.1f} calls/s   ratio {many / one:.2f}x")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short timing budgets")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--callers", type=int, default=8)
    options = parser.parse_args()
    budget = 0.5 if options.quick else 3.0
    print(f"{os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f} (other processes share them)\n")
    callers_table(options.callers, budget)  # first: once PyTorch and JAX are loaded, each 1e6-element output a
    # Python thread allocates page-faults (~80 faults a call), which measures them, not the calls
    scaling_table(options.threads, budget)


if __name__ == "__main__":
    main()
