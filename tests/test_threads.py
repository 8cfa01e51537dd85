"""Concurrent calls: one compiled (or loaded) function called from several Python threads at once gives
each call the result it gives alone (a workspace per call, the GIL released around large kernels)."""
import os
import shutil
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import symgrad as sg

pytest.importorskip("symgrad.codegen.llvm.backend")
from symgrad.codegen.llvm import blas  # noqa: E402

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
