"""Fit a logistic regression whose data lives in partitions on Dask workers, with symgrad gradients.

Each worker holds some partitions of the data (made there: the driver never sees the rows) and
computes the value and gradient of the negative log-likelihood of a partition with a compiled
symgrad function. The driver sums them and steps SciPy's L-BFGS-B (minimize(jac=True)). The
compiled function travels to the workers by pickle, carrying the native code of the signature
it was traced for on the driver: the workers neither trace nor run LLVM. Dask does the
scheduling (client.map, client.scatter); symgrad only computes.

The fit is then repeated in this process, partition by partition in the same order: the result
is the same to 1e-10 (in fact bit for bit: the same code sums the same numbers).

Run: pip install -e ".[distributed]" scipy; python examples/dask_fit.py [--rows 200000] [--partitions 4]
"""
import argparse
import importlib.util
import sys

import numpy as np

import symgrad as sg

FEATURES = 8
L2 = 1e-3  # the ridge penalty, applied once on the driver (the partitions' sums carry none)


def partition_loss(w, x, y):
    """The negative log-likelihood of one partition's rows: a sum, so the partitions' values add up."""
    z = x @ w
    return sg.sum(sg.softplus(z) - y * z)


def make_partition(seed, rows, features=FEATURES):
    """One partition of a synthetic data set (labels drawn from a known logistic model), made where it lives."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((rows, features))
    true_w = np.linspace(-2.0, 2.0, features)
    y = (rng.random(rows) < 1.0 / (1.0 + np.exp(-x @ true_w))).astype(np.float64)
    return x, y


def compiled_step(rows, features=FEATURES):
    """value_and_grad of partition_loss, traced and compiled here for partitions of `rows` rows: the
    pickle sent to the workers carries that code."""
    step = sg.compile(sg.value_and_grad(partition_loss))
    step.lower(np.zeros(features), np.zeros((rows, features)), np.zeros(rows))
    return step


def evaluate(step, w, partition):
    """(value, gradient) of one partition: what a worker runs."""
    x, y = partition
    return step(w, x, y)


def objective(results, total_rows, w):
    """The mean negative log-likelihood plus the ridge penalty, and its gradient, from the partitions' sums."""
    value = sum(v for v, _ in results) / total_rows + 0.5 * L2 * (w @ w)
    gradient = sum(g for _, g in results) / total_rows + L2 * w
    return float(value), gradient


def fit(client, partitions, rows, features=FEATURES):
    """Minimize over the partitions (futures of (x, y) on the workers, `rows` rows each)."""
    from scipy.optimize import minimize
    [step] = client.scatter([compiled_step(rows, features)], broadcast=True)  # one copy per worker

    def fun(w):
        futures = client.map(evaluate, [step] * len(partitions), [w] * len(partitions), partitions, pure=False)
        return objective(client.gather(futures), rows * len(partitions), w)

    return minimize(fun, np.zeros(features), jac=True, method="L-BFGS-B", options={"gtol": 1e-9})


def fit_local(seeds, rows, features=FEATURES):
    """The same fit in this process, for comparison."""
    from scipy.optimize import minimize
    step = compiled_step(rows, features)
    partitions = [make_partition(seed, rows, features) for seed in seeds]

    def fun(w):
        return objective([evaluate(step, w, partition) for partition in partitions], rows * len(partitions), w)

    return minimize(fun, np.zeros(features), jac=True, method="L-BFGS-B", options={"gtol": 1e-9})


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000, help="rows per partition")
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--workers", type=int, default=2)
    options = parser.parse_args()
    if importlib.util.find_spec("distributed") is None or importlib.util.find_spec("scipy") is None:
        print('Dask or SciPy is not installed; `pip install -e ".[distributed]" scipy` to run this example.')
        sys.exit(0)
    from dask.distributed import Client, LocalCluster
    seeds = list(range(options.partitions))
    with LocalCluster(n_workers=options.workers, processes=True, threads_per_worker=1,
                      dashboard_address=":0") as cluster, Client(cluster) as client:
        partitions = client.map(make_partition, seeds, rows=options.rows)  # the data is made on the workers
        distributed = fit(client, partitions, options.rows)
    local = fit_local(seeds, options.rows)
    print(f"{options.partitions} partitions of {options.rows} rows on {options.workers} workers")
    print(f"distributed: {distributed.message} after {distributed.nit} iterations, loss {distributed.fun:.12f}")
    print(f"w = {np.array2string(distributed.x, precision=4)}")
    difference = float(np.max(np.abs(distributed.x - local.x)))
    print(f"max |w_distributed - w_single_process| = {difference:.3e}")
    assert distributed.success and difference <= 1e-10


if __name__ == "__main__":
    main()
