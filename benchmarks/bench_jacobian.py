"""Jacobian of a 100 -> 100 function, per call and first call: symgrad's jacrev and jacfwd (one batched
pass, sg.vmap) beside JAX's jit(jacrev/jacfwd) and PyTorch's autograd.functional.jacobian(vectorize=True)
when they are installed. One thread everywhere.

Run: python benchmarks/bench_jacobian.py [--size 100]
"""
import argparse
import os
import time

for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "SYMGRAD_NUM_THREADS"):
    os.environ[variable] = "1"
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")

import numpy as np  # noqa: E402


def per_call(fn, *args, budget=1.0) -> float:
    """Median seconds of one call over repeated batches within about `budget` seconds."""
    fn(*args)
    samples, spent = [], 0.0
    while spent < budget or len(samples) < 5:
        start = time.perf_counter()
        fn(*args)
        samples.append(time.perf_counter() - start)
        spent += samples[-1]
    return float(np.median(samples))


def first_call(make, *args) -> float:
    start = time.perf_counter()
    make()(*args)
    return time.perf_counter() - start


def _time(seconds) -> str:
    return f"{seconds * 1e6:.1f} us" if seconds < 1e-3 else f"{seconds * 1e3:.2f} ms"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=100)
    n = parser.parse_args().size
    rng = np.random.default_rng(0)
    W, x = rng.normal(size=(n, n)) / np.sqrt(n), rng.normal(size=n)
    rows = {}

    os.environ["SYMGRAD_CACHE"] = "0"
    import symgrad as sg
    f = lambda x: sg.tanh(W @ x) * x  # noqa: E731
    for name, jac in (("jacrev", sg.jacrev), ("jacfwd", sg.jacfwd)):
        rows[f"symgrad {name}"] = (first_call(lambda: jac(f), x), per_call(jac(f), x))
    try:
        import jax
        import jax.numpy as jnp
        jax.config.update("jax_enable_x64", True)
        g = lambda x: jnp.tanh(W @ x) * x  # noqa: E731
        for name, jac in (("jacrev", jax.jacrev), ("jacfwd", jax.jacfwd)):
            rows[f"jax jit({name})"] = (first_call(lambda: jax.jit(jac(g)), x),
                                        per_call(jax.jit(jac(g)), x))
    except ImportError:
        pass
    try:
        import torch
        torch.set_num_threads(1)
        Wt, xt = torch.from_numpy(W), torch.from_numpy(x)
        h = lambda x: torch.tanh(Wt @ x) * x  # noqa: E731
        jacobian = lambda x: torch.autograd.functional.jacobian(h, x, vectorize=True)  # noqa: E731
        rows["torch jacobian(vectorize)"] = (first_call(lambda: jacobian, xt), per_call(jacobian, xt))
    except ImportError:
        pass
    print(f"Jacobian of tanh(W @ x) * x, {n} -> {n}, float64")
    print(f"{'':<28}{'first call':>12}{'per call':>12}")
    for name, (first, call) in rows.items():
        print(f"{name:<28}{_time(first):>12}{_time(call):>12}")


if __name__ == "__main__":
    main()
