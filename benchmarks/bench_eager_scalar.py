"""Per-step time of an eager loop whose loss weight and learning rate are Python floats:
constant, or changing every step (an annealing schedule). With numbers as run-time inputs of
the recorded graph, both reuse one cached, compiled adjoint and run at the same speed.

Run: python benchmarks/bench_eager_scalar.py [--steps 300] [--repeats 5]
"""
import argparse
import os
import statistics
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("SYMGRAD_NUM_THREADS", "1")  # symgrad sets the BLAS to its own thread count
import numpy as np  # noqa: E402

import symgrad as sg  # noqa: E402


def loop(changing: bool, steps: int, first_step: int, n=8, batch=32) -> float:
    """Median seconds per step after a 20-step warm-up: forward, backward, SGD update. A changing
    schedule starts at `first_step`, so no repeat sees numbers an earlier one saw."""
    rng = np.random.default_rng(0)
    x, y = sg.tensor(rng.standard_normal((batch, n))), sg.tensor(rng.standard_normal((batch, n)))
    w = sg.tensor(np.zeros(n), requires_grad=True)
    times = []
    for step in range(first_step, first_step + steps):
        beta = 1.0 / (1.0 + 0.01 * step) if changing else 0.5
        lr = 0.01 * 0.999 ** step if changing else 0.01
        start = time.perf_counter()
        loss = sg.sum((w * x - y) ** 2) * beta
        loss.backward()
        with sg.no_grad():
            w -= lr * w.grad
        w.grad = None
        times.append(time.perf_counter() - start)
    return statistics.median(times[20:])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    results = {False: [], True: []}
    for repeat in range(args.repeats):  # interleaved, so both see the same machine load
        for changing in results:
            results[changing].append(loop(changing, args.steps, repeat * args.steps))
    constant, changing = (statistics.median(results[k]) for k in (False, True))
    print(f"constant beta and lr: {constant * 1e6:8.1f} us/step")
    print(f"changing beta and lr: {changing * 1e6:8.1f} us/step   ratio {changing / constant:.2f}")


if __name__ == "__main__":
    main()
