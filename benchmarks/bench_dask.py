"""Throughput of examples/dask_fit.py's gradient on a Dask LocalCluster: 1 worker against 2, in one run.

Run: python benchmarks/bench_dask.py [--rows 10000000] [--partitions 8] [--evaluations 10] [--repeats 3]

The data set (`--rows` in all, float64, examples/dask_fit.FEATURES columns) is made on the workers
in `--partitions` equal partitions. One gradient evaluation is what the fit's driver does per
step: send w, every partition's value and gradient by the compiled function (shipped once, by
pickle), gather and sum. Both clusters run at once and are timed in turn (`--repeats` rounds of
`--evaluations` evaluations each, after a warm-up); reported: the median evaluations per second of
each, and the ratio. Each worker is one process with one thread (and one BLAS and symgrad
thread), so the ratio measures processes, not threads; the partitions are spread evenly and work
stealing is off, so each is evaluated where it lives. On a
shared machine the ratio is bounded by the CPU other programs leave: the last line also says how
much CPU two busy processes got together, relative to one, while it ran.
"""
import argparse
import concurrent.futures
import contextlib
import os
import pathlib
import statistics
import sys
import time

for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "SYMGRAD_NUM_THREADS"):
    os.environ[variable] = "1"  # inherited by the workers: one core each
import dask  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "examples"))
import dask_fit  # noqa: E402


@contextlib.contextmanager
def cluster_evaluation(workers: int, rows: int, partitions: int):
    """evaluate() -> the objective and gradient over the whole data set, on a cluster of `workers` processes."""
    from dask.distributed import Client, LocalCluster, wait
    per_partition = rows // partitions
    with LocalCluster(n_workers=workers, processes=True, threads_per_worker=1, dashboard_address=":0",
                      memory_limit=None) as cluster, Client(cluster) as client:
        addresses = sorted(client.scheduler_info()["workers"])
        data = [client.submit(dask_fit.make_partition, seed, rows=per_partition, workers=[addresses[seed % workers]])
                for seed in range(partitions)]  # spread evenly: each worker evaluates the partitions it holds
        wait(data)
        [step] = client.scatter([dask_fit.compiled_step(per_partition)], broadcast=True)
        w = np.linspace(-1.0, 1.0, dask_fit.FEATURES)

        def evaluate():
            futures = client.map(dask_fit.evaluate, [step] * partitions, [w] * partitions, data, pure=False)
            return dask_fit.objective(client.gather(futures), per_partition * partitions, w)

        evaluate()  # warm-up: the workers unpickle the function
        yield evaluate


def _spin(seconds: float) -> int:
    """Loops of pure Python work done in `seconds`: a measure of the CPU time a process gets."""
    end, loops = time.perf_counter() + seconds, 0
    while time.perf_counter() < end:
        sum(range(1000))
        loops += 1
    return loops


def cpu_parallelism(seconds: float = 2.0) -> float:
    """How many cores two busy processes get together, relative to one (2.0 on an idle 2-core machine):
    what a loaded machine leaves for 2 workers, printed beside their ratio."""
    with concurrent.futures.ProcessPoolExecutor(2) as pool:
        list(pool.map(_spin, [0.1, 0.1]))  # both processes started
        alone = pool.submit(_spin, seconds).result()
        together = sum(pool.map(_spin, [seconds, seconds]))
    return together / alone


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--evaluations", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    options = parser.parse_args()
    print(f"{options.rows:.0e} rows x {dask_fit.FEATURES} float64 features in {options.partitions} partitions; "
          f"{os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f}")
    dask.config.set({"distributed.scheduler.work-stealing": False})  # a partition is evaluated where it lives
    with contextlib.ExitStack() as stack:
        clusters = {workers: stack.enter_context(cluster_evaluation(workers, options.rows, options.partitions))
                    for workers in (1, 2)}
        results = {workers: evaluate() for workers, evaluate in clusters.items()}
        assert np.array_equal(results[1][1], results[2][1]), "1 and 2 workers disagree"
        timings = {workers: [] for workers in clusters}
        for _ in range(options.repeats):  # interleaved, so a change in the machine's load hits both
            for workers, evaluate in clusters.items():
                start = time.perf_counter()
                for _ in range(options.evaluations):
                    evaluate()
                timings[workers].append(time.perf_counter() - start)
    rates = {workers: options.evaluations / statistics.median(times) for workers, times in timings.items()}
    for workers, rate in rates.items():
        print(f"{workers} worker(s): {rate:7.2f} gradient evaluations/s ({rate * options.rows / 1e6:.0f} M rows/s)")
    print(f"2 workers / 1 worker: {rates[2] / rates[1]:.2f}x (target >= 1.6x); two busy processes got "
          f"{cpu_parallelism():.2f}x the CPU of one on this machine now")


if __name__ == "__main__":
    main()
