"""Concurrent calls: one compiled (or loaded) function called from several Python threads at once gives
each call the result it gives alone (a workspace per call, the GIL released around large kernels)."""
import os
import shutil
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import symgrad as sg

pytest.importorskip("symgrad.codegen.llvm.backend")
from symgrad.codegen.llvm import blas, pool  # noqa: E402

THREADS = 8
HAS_LINKER = shutil.which(os.environ.get("CC", "cc").split()[0]) is not None
needs_linker = pytest.mark.skipif(not HAS_LINKER, reason="linking a shared library needs a C compiler")


def concurrently(function, inputs, repeats=3):
    """Each thread calls function(*inputs[t]) `repeats` times, all threads at once; their results."""
    with ThreadPoolExecutor(len(inputs)) as pool:
        return list(pool.map(lambda args: [function(*args) for _ in range(repeats)], inputs))


def assert_same_as_alone(function, inputs):
    """Concurrent calls give, bit for bit, what a call alone gives."""
    alone = [function(*args) for args in inputs]
    for expected, results in zip(alone, concurrently(function, inputs)):
        for result in results:
            for got, want in zip(leaves(result), leaves(expected)):
                np.testing.assert_array_equal(got, want)


def leaves(tree):
    return sg.pytree.flatten(tree)[0]


def chain(x):
    """An elementwise chain whose gradient stores intermediate arrays in the workspace."""
    y = sg.sin(x) * sg.exp(-x * x) + sg.tanh(x)
    z = y * y + sg.log1p(x * x)
    return sg.sum(z * sg.cos(y)) + sg.sum(z[::-1] * y)


def test_threads_calling_one_function_get_their_own_results():
    rng = np.random.default_rng(0)
    inputs = [(rng.normal(size=200_000),) for _ in range(THREADS)]
    f = sg.compile(sg.value_and_grad(chain))
    # a workspace this large is malloc'd for each call
    assert f.lower(*inputs[0]).executable.llvm_ir.count('call ptr @"malloc"') >= 1
    assert_same_as_alone(f, inputs)


def test_small_calls_from_threads_use_a_workspace_on_the_stack():
    rng = np.random.default_rng(1)
    inputs = [(rng.normal(size=10),) for _ in range(THREADS)]
    f = sg.compile(sg.value_and_grad(chain))
    text = f.lower(*inputs[0]).executable.llvm_ir
    assert '"malloc"' not in text and "workspace" not in _globals(text)
    assert_same_as_alone(f, inputs)


def _globals(text):
    return "\n".join(line for line in text.splitlines() if line.startswith("@"))


def test_large_kernels_release_the_gil_and_small_ones_keep_it():
    def releases(n):
        text = sg.compile(chain).lower(np.ones(n)).executable.llvm_ir
        return "PyEval_SaveThread" in text and "PyEval_RestoreThread" in text
    assert releases(100_000) and not releases(10)


@pytest.mark.parametrize("checkpoints", [None, 3])
def test_while_loop_tapes_in_concurrent_calls(checkpoints):
    def f(x, limit):
        c = sg.while_loop(lambda c: sg.sum(c ** 2) > limit, lambda c: c * 0.5 + 0.01 * sg.sin(c * x), x,
                          checkpoints=checkpoints)
        return sg.sum(c * x)
    rng = np.random.default_rng(2)
    # different data: different trip counts, so tapes of different lengths grow at the same time
    inputs = [(rng.normal(size=500) * (1 + t), 0.5) for t in range(THREADS)]
    assert_same_as_alone(sg.compile(sg.value_and_grad(f)), inputs)


def test_blas_products_in_concurrent_calls():
    if not blas.addresses():
        pytest.skip("no BLAS found next to NumPy")

    def mlp(w1, w2, x):
        return sg.sum(sg.tanh(sg.tanh(x @ w1) @ w2) ** 2)
    rng = np.random.default_rng(3)
    w1, w2 = rng.normal(size=(64, 128)) / 8, rng.normal(size=(128, 10)) / 11
    inputs = [(w1, w2, rng.normal(size=(256, 64))) for _ in range(THREADS)]
    assert_same_as_alone(sg.compile(sg.value_and_grad(mlp, argnums=(0, 1))), inputs)


def test_lapack_factorizations_in_concurrent_calls():
    """Each call's LAPACK workspace (pivots, work arrays, the copies LAPACK overwrites) is its own."""
    from symgrad.codegen.llvm import lapack
    if not lapack.addresses():
        pytest.skip("no LAPACK found next to NumPy")

    def f(a):
        s = a + sg.swapaxes(a, -1, -2)
        w, v = sg.linalg.eigh(s)
        u, sv, vh = sg.linalg.svd(a)
        q, r = sg.linalg.qr(a)
        return sg.linalg.slogdet(a)[1], w, v * v, sv, sg.abs(r), sg.linalg.pinv(a), sg.linalg.det(a)
    rng = np.random.default_rng(4)
    inputs = [(rng.normal(size=(4, 40, 40)),) for _ in range(THREADS)]
    assert_same_as_alone(sg.compile(f), inputs)
    assert_same_as_alone(sg.compile(sg.grad(lambda a: sg.sum(f(a)[0]) + sg.sum(f(a)[3]) + sg.sum(f(a)[1]))), inputs)


def test_errors_raised_in_concurrent_calls_belong_to_their_call():
    def f(x, i):
        return sg.sum(sg.take(x, i) * x[:3])
    g = sg.compile(f)
    x = np.arange(100_000.0)
    good, bad = np.array([0, 1, 2]), np.array([0, 1, 100_000])

    def call(i):
        try:
            return g(x, i)
        except IndexError:
            return "IndexError"
    results = concurrently(call, [(good if t % 2 else bad,) for t in range(THREADS)])
    for t, rs in enumerate(results):
        assert rs == ([g(x, good)] * 3 if t % 2 else ["IndexError"] * 3)


@needs_linker
def test_threads_calling_a_loaded_artifact(tmp_path):
    rng = np.random.default_rng(4)
    inputs = [(rng.normal(size=50_000),) for _ in range(THREADS)]
    sg.aot.compile(chain, inputs[0], grad=("x",), value_and_grad=True, out=str(tmp_path / "chain"))
    loaded = sg.load(tmp_path / "chain")
    assert_same_as_alone(loaded.value_and_grad, inputs)
    assert_same_as_alone(loaded, inputs)
    expected = sg.compile(sg.value_and_grad(chain))(*inputs[0])
    np.testing.assert_allclose(loaded.value_and_grad(*inputs[0])[0], expected[0], rtol=1e-12)


# ----------------------------------------------------------------------------- parallel loops

def rosen(x):
    return sg.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def ew_chain(x):
    return sg.sum(sg.sin(x) * sg.exp(-x * x) + sg.log1p(x * x) + sg.tanh(x))


def stats(x, w):
    """A matrix's loops: row-wise elementwise work, a full sum, and a float32 mean widened to float64."""
    y = sg.tanh(x * w) + x
    return sg.sum(y * y), sg.mean(sg.exp(-y)), sg.max(y), y[::2, 1:] * 2.0


def mixed(x, w):
    """Reductions of several kinds and dtypes over large loops, next to loops that must not split (a
    cumulative sum, a reduction along the outer axis, a scatter)."""
    n = sg.astype(x > 0, np.int64)
    y = x * w
    return (sg.sum(n), sg.min(y), sg.prod(1.0 + 1e-6 * y), sg.any(x > 3.0), sg.all(x > -10.0),
            sg.argmax(y), sg.cumsum(y[:, 0]), sg.sum(y, axis=0), sg.sum(y, axis=1)[::-1] * 3.0,
            sg.sum(sg.tanh(y[1:, :] - y[:-1, :]) ** 2))


def loop_over_large_arrays(x, w):
    """A while loop whose body's loops are large: they run in chunks inside the body's function."""
    def body(c):
        return c[0] + 1, c[1] * 0.5 + 0.1 * sg.sin(c[1] * x) + sg.sum(c[1] * w) * 1e-9
    return sg.while_loop(lambda c: c[0] < 5, body, (np.int64(0), x))[1]


PROBLEMS = {
    "ew_chain": (ew_chain, lambda rng, dtype: (rng.normal(size=300_001).astype(dtype),)),
    "rosen": (rosen, lambda rng, dtype: (rng.normal(size=250_000).astype(dtype),)),
    "stats": (stats, lambda rng, dtype: (rng.normal(size=(700, 301)).astype(dtype),
                                         rng.normal(size=(301,)).astype(dtype))),
    "mixed": (mixed, lambda rng, dtype: (rng.normal(size=(1000, 131)).astype(dtype),
                                         rng.normal(size=(1000, 131)).astype(dtype))),
    "while": (loop_over_large_arrays, lambda rng, dtype: (rng.normal(size=200_000).astype(dtype),
                                                          rng.normal(size=200_000).astype(dtype))),
}
NOT_DIFFERENTIABLE = {"mixed"}


def _compiled(name, threads, grad):
    f = PROBLEMS[name][0]
    if grad:
        f = sg.value_and_grad(lambda *a: sg.sum(sg.stack([sg.sum(v) for v in leaves(PROBLEMS[name][0](*a))])),
                              argnums=tuple(range(len(PROBLEMS[name][1](np.random.default_rng(0), np.float64)))))
    return sg.compile(f, threads=threads)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name, grad", [(name, grad) for name in sorted(PROBLEMS) for grad in (False, True)
                                        if not (grad and name in NOT_DIFFERENTIABLE)])
def test_one_or_several_threads_give_the_same_bits(name, dtype, grad):
    args = PROBLEMS[name][1](np.random.default_rng(5), dtype)
    results = {threads: _compiled(name, threads, grad)(*args) for threads in (1, 2, 3)}
    for threads in (2, 3):
        for got, want in zip(leaves(results[threads]), leaves(results[1])):
            np.testing.assert_array_equal(got, want)
    numpy = sg.compile(_compiled(name, 1, grad).fn, backend="numpy")(*args)
    tolerance = {"rtol": 1e-11, "atol": 1e-9} if dtype == np.float64 else {"rtol": 2e-4, "atol": 1e-2}
    for got, want in zip(leaves(results[2]), leaves(numpy)):
        np.testing.assert_allclose(got, want, **tolerance)


def test_large_loops_run_in_chunks_on_the_pool_and_small_ones_do_not():
    def chunked(n):
        return "chunk1.task" in sg.compile(sg.value_and_grad(rosen), threads=2).lower(np.ones(n)).executable.llvm_ir
    assert chunked(200_000) and not chunked(1000)


def test_a_bad_index_in_any_chunk_raises():
    def f(x, i):
        return sg.sum(sg.take(i, sg.astype(x > 0, np.int64) * 5) * x)
    g = sg.compile(f, threads=2)
    x = -np.ones(300_000)
    x[-1] = 1.0  # index 5 in the last chunk only
    assert g(x, np.arange(6)) == 5.0
    with pytest.raises(IndexError):
        g(x, np.arange(5))


def test_calls_from_threads_while_the_pool_is_busy():
    """Eight Python threads calling a parallel kernel: one region at a time uses the pool, the others
    run their chunks on their own threads; every result is the one a call alone gives."""
    rng = np.random.default_rng(6)
    inputs = [(rng.normal(size=300_000),) for _ in range(THREADS)]
    assert_same_as_alone(sg.compile(sg.value_and_grad(ew_chain), threads=2), inputs)


def test_thread_count_from_the_argument_the_environment_or_the_cores(monkeypatch):
    from symgrad.backends import thread_count
    monkeypatch.delenv("SYMGRAD_NUM_THREADS", raising=False)
    assert thread_count() == len(os.sched_getaffinity(0)) and thread_count(3) == 3
    monkeypatch.setenv("SYMGRAD_NUM_THREADS", "5")
    assert thread_count() == 5 and thread_count(2) == 2
    monkeypatch.setenv("SYMGRAD_NUM_THREADS", "many")
    with pytest.raises(ValueError, match="SYMGRAD_NUM_THREADS must be a positive whole number of threads, not 'many'"):
        thread_count()
    for bad in (0, -1, 2.0, True, "2"):
        with pytest.raises(ValueError, match="threads must be a positive whole number"):
            sg.compile(rosen, threads=bad)


def test_the_pool_starts_afresh_in_a_forked_child():
    import subprocess
    import sys
    code = """
import os, numpy as np, symgrad as sg
f = sg.compile(lambda x: sg.sum(sg.sin(x) * x), threads=2)
x = np.linspace(0, 1, 400_000)
expected = f(x)
pid = os.fork()
if pid == 0:
    os._exit(0 if f(x) == expected else 1)
_, status = os.waitpid(pid, 0)
print(os.waitstatus_to_exitcode(status))
"""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert result.stdout.strip() == "0", result.stderr


def test_a_large_product_runs_on_the_kernels_thread_count():
    import ctypes
    paths = _openblas_paths()
    if any(os.environ.get(name) for name in pool.BLAS_THREAD_VARIABLES):
        pytest.skip("the environment sets OpenBLAS's thread count, which kernels then leave alone")
    threads_now = ctypes.CDLL(paths[0]).scipy_openblas_get_num_threads64_
    large, small = np.ones((200, 200)), np.ones((40, 40))  # 8e6 and 6.4e4 multiply-adds
    for threads in (1, 2, 1):
        assert sg.compile(lambda a, b: sg.sum(a @ b), threads=threads)(large, large) == 200 ** 3
        assert threads_now() == threads
    # a small product runs on one BLAS thread whatever the kernel's count: BLAS's threads would cost more
    assert sg.compile(lambda a, b: sg.sum(a @ b), threads=2)(small, small) == 40 ** 3
    assert threads_now() == 1


def test_an_openblas_thread_count_set_by_the_user_is_left_alone():
    import subprocess
    import sys
    paths = _openblas_paths()
    code = f"""
import ctypes, numpy as np, symgrad as sg
sg.compile(lambda a, b: sg.sum(a @ b), threads=2)(np.ones((40, 40)), np.ones((40, 40)))
print(ctypes.CDLL({paths[0]!r}).scipy_openblas_get_num_threads64_())
"""
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert result.stdout.strip() == "1", result.stderr


def _openblas_paths():
    """The OpenBLAS NumPy ships, where symgrad can set its thread count (else the test skips)."""
    import glob

    from symgrad.codegen import runtime
    root = os.path.dirname(os.path.dirname(np.__file__))
    paths = sorted(glob.glob(os.path.join(root, "numpy.libs", "libscipy_openblas64_*.so*")))
    if "set_num_threads" not in runtime.blas_addresses() or not paths:
        pytest.skip("NumPy's BLAS does not export its thread count")
    return paths


SCALE = 1.0  # rebound by the test below while traces of `scaled` are under way
GATES = {n: (threading.Event(), threading.Event()) for n in (2, 3)}  # size -> (trace reached, may go on)


def pause_trace(n):
    """Hold the trace of a size-n argument between its read of SCALE and its end, until the test lets it go."""
    reached, go_on = GATES[n]
    reached.set()
    go_on.wait(10)


def scaled(x):
    scale = SCALE
    pause_trace(x.shape[0])
    return sg.sum(x * scale)


def test_a_trace_that_read_a_global_rebound_meanwhile_is_not_cached_under_a_later_guard():
    f = sg.compile(scaled)
    global SCALE
    SCALE = 1.0
    two, three = np.ones(2), np.ones(3)
    first = threading.Thread(target=f, args=(two,))
    first.start()
    GATES[2][0].wait(10)  # the f64[2] trace read SCALE = 1
    SCALE = 2.0
    second = threading.Thread(target=f, args=(three,))
    second.start()
    GATES[3][0].wait(10)  # the f64[3] trace read SCALE = 2
    GATES[2][1].set()
    first.join(10)
    GATES[3][1].set()
    second.join(10)
    # the f64[2] trace finished first, then the f64[3] one put in place a guard SCALE == 2 that holds
    assert float(f(two)) == 4.0 and float(f(three)) == 6.0


def test_new_signatures_traced_in_threads_at_once_while_a_global_is_rebound():
    global SCALE
    SCALE = 1.0
    f = sg.compile(sg.value_and_grad(lambda x, y: sg.sum(sg.sin(x) * y * SCALE + x ** 2), argnums=(0, 1)))
    rng = np.random.default_rng(2)
    inputs = [(rng.normal(size=shape).astype(dtype), rng.normal(size=shape).astype(dtype))
              for shape in [(1,), (4,), (2, 3), (0,), (5,), (1, 1)] for dtype in (np.float32, np.float64)]

    def check(case):
        x, y = inputs[case % len(inputs)]
        scale = SCALE
        value, (dx, dy) = f(x, y)
        if scale == SCALE:  # (not rebound during the call)
            np.testing.assert_allclose(dy, np.sin(x) * scale, rtol=1e-5)
            assert value.dtype == dx.dtype == x.dtype
        return scale

    with ThreadPoolExecutor(THREADS) as pool:
        calls = [pool.submit(check, case) for case in range(200)]
        for scale in (2.0, 3.0, 4.0):
            SCALE = scale
        for call in calls:
            call.result(timeout=60)
    for x, y in inputs:  # after the threads, every signature reads the global as it is
        np.testing.assert_allclose(f(x, y)[1][1], np.sin(x) * 4.0, rtol=1e-5)


def test_cache_info_and_pickling_while_other_threads_hit_the_cache():
    import pickle
    f = sg.compile(sg.grad(lambda x: sg.sum(sg.sin(x) * x)))
    arrays = [np.linspace(0.0, 1.0, n) for n in range(1, 41)]
    for x in arrays:
        f(x)
    whole = pickle.dumps(f)  # every signature, in the order first stored (a hit moves none in the pickle)
    stop = threading.Event()

    def hit():  # each cache hit moves its signature to the end of the cache
        while not stop.is_set():
            for x in arrays:
                f(x)

    with ThreadPoolExecutor(2) as pool:
        hitters = [pool.submit(hit) for _ in range(2)]
        try:
            for _ in range(2000):
                assert len(f.cache_info()) == len(arrays)
            for _ in range(10):  # (loading is the costly half, and no other thread sees what it loads)
                assert pickle.dumps(f) == whole
        finally:
            stop.set()
        for hitter in hitters:
            hitter.result(timeout=60)
    loaded = pickle.loads(whole)
    assert len(loaded.cache_info()) == len(arrays)
    np.testing.assert_array_equal(loaded(arrays[5]), f(arrays[5]))
