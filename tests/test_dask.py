"""Data-parallel gradients on dask.distributed (issue 16, item 4): examples/dask_fit.py on a LocalCluster of
two worker processes, whose compiled functions arrive by pickle and run without a trace or LLVM there."""
import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("dask.distributed", reason='Dask is not installed (pip install -e ".[distributed]")')
pytest.importorskip("scipy", reason="the example steps scipy.optimize.minimize")
from dask.distributed import Client, LocalCluster  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "examples"))
import dask_fit  # noqa: E402  (examples/dask_fit.py)

ROWS, SEEDS = 3000, [0, 1, 2, 3]


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    """One cluster for the module (starting one is slow), its workers and this process on a private cache."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SYMGRAD_CACHE_DIR", str(tmp_path_factory.mktemp("dask-cache")))
        with LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=":0") as cluster, \
                Client(cluster) as client:
            client.run(_count_traces_and_compiles)  # cloudpickle sends it by value: it is a test function
            yield client


def _count_traces_and_compiles():
    """On a worker: count what symgrad traces and compiles from now on (read back with _counts)."""
    import symgrad.compiler
    from symgrad.codegen.llvm import jit
    counts = jit.counts_for_tests = {"traces": 0, "compiles": 0}
    trace_flat, object_code = symgrad.compiler.trace_flat, jit.object_code

    def counted_trace(*args, **kwargs):
        counts["traces"] += 1
        return trace_flat(*args, **kwargs)

    def counted_compile(text, *args, **kwargs):
        if 'ModuleID = "symgrad_pool"' not in text:  # the thread pool: runtime code, compiled once per machine
            counts["compiles"] += 1
        return object_code(text, *args, **kwargs)

    symgrad.compiler.trace_flat, jit.object_code = counted_trace, counted_compile


def _counts():
    from symgrad.codegen.llvm import jit
    return dict(jit.counts_for_tests)


def test_the_fit_on_two_workers_is_the_single_process_fit(client):
    assert len(client.scheduler_info()["workers"]) == 2
    partitions = client.map(dask_fit.make_partition, SEEDS, rows=ROWS)
    distributed = dask_fit.fit(client, partitions, ROWS)
    local = dask_fit.fit_local(SEEDS, ROWS)
    assert distributed.success and distributed.nit > 3
    np.testing.assert_allclose(distributed.x, local.x, rtol=0, atol=1e-10)
    assert abs(distributed.fun - local.fun) <= 1e-10
    # the workers ran the code the pickle carried: no trace, no LLVM
    assert list(client.run(_counts).values()) == [{"traces": 0, "compiles": 0}] * 2


def test_every_partition_is_evaluated_where_it_lives(client):
    partitions = client.map(dask_fit.make_partition, SEEDS, rows=ROWS)
    [step] = client.scatter([dask_fit.compiled_step(ROWS)], broadcast=True)
    w = np.linspace(-1, 1, dask_fit.FEATURES)
    futures = client.map(dask_fit.evaluate, [step] * len(SEEDS), [w] * len(SEEDS), partitions, pure=False)
    holders = {worker for workers in client.who_has(partitions).values() for worker in workers}
    assert len(holders) == 2  # the data is spread over both workers
    local = dask_fit.compiled_step(ROWS)
    for (value, gradient), seed in zip(client.gather(futures), SEEDS):
        x, y = dask_fit.make_partition(seed, ROWS)
        expected_value, expected_gradient = local(w, x, y)
        assert value == expected_value
        np.testing.assert_array_equal(gradient, expected_gradient)


def test_the_example_runs_as_a_script(tmp_path):
    """As a script its functions live in __main__, which the workers cannot import: the signature the
    pickle carries is all they need (one worker process shows it: each costs an interpreter, symgrad and Dask)."""
    env = {**os.environ, "SYMGRAD_CACHE_DIR": str(tmp_path / "cache")}
    script = pathlib.Path(dask_fit.__file__)
    result = subprocess.run([sys.executable, str(script), "--rows", "2000", "--workers", "1"], capture_output=True,
                            text=True, env=env, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    difference = re.search(r"max \|w_distributed - w_single_process\| = (\S+)", result.stdout)
    assert difference and float(difference[1]) <= 1e-10
