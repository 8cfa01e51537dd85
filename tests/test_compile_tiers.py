"""Quick code behind sg.compile and the transforms (code_cache.timed, Compiled._signature): a first call runs machine
code emitted quickly, upgraded to the fully optimized code of the same optimized IR once its calls took about as
long as upgrading or after UPGRADE_CALLS calls; both tiers, and code compiled fully from the start, return the same
bits."""
from __future__ import annotations

import gc
import pickle
import threading

import numpy as np
import pytest

import symgrad as sg

llvm_backend = pytest.importorskip("symgrad.codegen.llvm.backend")


@pytest.fixture(autouse=True)
def fresh_disk_cache(tmp_path, monkeypatch):
    """A disk cache without the code of an earlier run, upgrades by call count only (UPGRADE_CALLS)."""
    monkeypatch.setenv("SYMGRAD_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(llvm_backend, "UPGRADE_SECONDS_PER_BYTE", 1.0)


def _bits(results) -> list[bytes]:
    return [np.asarray(r).tobytes() for r in (results if isinstance(results, (tuple, list)) else [results])]


def _mlp_loss(w, x):
    return sg.mean((sg.tanh(x @ w) - 0.5) ** 2) + sg.max(sg.abs(w)) * 1e-3


def _reductions(x):
    return sg.sum(sg.log1p(x * x) * sg.exp(-x)) + sg.mean(sg.sin(x), axis=0)[0] + sg.prod(sg.cos(x[:3]))


def _cases(dtype):
    rng = np.random.default_rng(3)
    edge = np.array([0.0, -0.0, 1e-300, -1e-300, 1e30, -1e30, np.inf, np.nan, 3.5, -2.25], dtype=dtype)
    matrix = rng.standard_normal((7, 5)).astype(dtype)
    return [
        (lambda: sg.grad(lambda x: sg.sum(sg.sin(x) * x)), (rng.standard_normal(37).astype(dtype),)),
        (lambda: sg.grad(lambda x: sg.sum(sg.tanh(x) * sg.sqrt(sg.abs(x)))), (edge,)),
        (lambda: sg.value_and_grad(_reductions), (matrix,)),
        (lambda: sg.value_and_grad(_mlp_loss), (rng.standard_normal((5, 3)).astype(dtype), matrix)),
        (lambda: sg.compile(lambda x: (sg.cumsum(x, axis=1), sg.softmax(x, axis=0))), (matrix,)),
    ]


def _executable(fn, args):
    compiled = getattr(fn, "compiled", fn)
    return compiled.lower(*args).executable


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_first_calls_run_quick_code_whose_upgrade_returns_the_same_bits(dtype):
    for make, args in _cases(dtype):
        fn = make()
        first = _bits(fn(*args))
        executable = _executable(fn, args)
        assert executable.quick
        for _ in range(llvm_backend.UPGRADE_CALLS - 2):
            assert _bits(fn(*args)) == first
        assert executable.quick
        assert _bits(fn(*args)) == first  # the call that upgrades
        assert not executable.quick and _bits(fn(*args)) == first
        numpy_results = sg.compile(make(), backend="numpy")(*args)
        for ours, theirs in zip(_bits(fn(*args)), _bits(numpy_results)):
            ours, theirs = np.frombuffer(ours, dtype), np.frombuffer(theirs, dtype)
            np.testing.assert_allclose(ours, theirs, rtol=1e-4 if dtype == np.float32 else 1e-10, atol=1e-6)


def test_the_python_path_of_a_pytree_output_upgrades_too():
    fn = sg.compile(lambda x: {"s": sg.sum(sg.exp(x)), "d": sg.sin(x) * 2.0})
    x = np.linspace(-1.0, 1.0, 9)
    first = fn(x)
    executable = fn.lower(x).executable
    for _ in range(llvm_backend.UPGRADE_CALLS):
        again = fn(x)
        assert _bits([again["s"], again["d"]]) == _bits([first["s"], first["d"]])
    assert not executable.quick


def test_threads_calling_while_the_code_upgrades_get_the_same_bits():
    fn = sg.value_and_grad(_mlp_loss)
    rng = np.random.default_rng(4)
    args = (rng.standard_normal((5, 3)), rng.standard_normal((60, 5)))
    expected = _bits(fn(*args))
    failures = []

    def work():
        for _ in range(3 * llvm_backend.UPGRADE_CALLS):
            if _bits(fn(*args)) != expected:
                failures.append("differs")
    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures and not _executable(fn, args).quick


def test_a_pickle_of_quick_code_carries_the_full_code():
    jit = pytest.importorskip("symgrad.codegen.llvm.jit")
    fn = sg.compile(lambda x: sg.sum(sg.tanh(x) ** 2))
    x = np.linspace(-2.0, 2.0, 11)
    first = _bits(fn(x))
    executable = fn.lower(x).executable
    assert executable.quick
    restored = pickle.loads(pickle.dumps(fn))
    assert not executable.quick and jit.loaded_object(executable.llvm_ir) is not None
    assert _bits(restored(x)) == first and not restored.lower(x).executable.quick


def test_full_code_in_the_disk_cache_is_used_as_it_is_and_quick_code_only_as_quick(monkeypatch):
    """A first call whose code this process no longer holds takes full code from the disk cache (nothing to
    upgrade); with only quick code there, that (upgraded later). All return the same bits."""
    code_cache = pytest.importorskip("symgrad.code_cache")
    x = np.linspace(-2.0, 2.0, 13)

    def first_call():
        code_cache._cache.clear()  # (and the function dropped: its code is freed, only the disk cache has it)
        gc.collect()
        fn = sg.grad(lambda x: sg.sum(sg.sin(x) * sg.exp(x)))
        return _executable(fn, (x,)).quick, _bits(fn(x))
    quick, bits = first_call()
    assert quick and first_call() == (True, bits)  # its quick code from the disk cache
    with monkeypatch.context() as patch:
        patch.setenv("SYMGRAD_QUICK_CODE", "0")
        assert first_call() == (False, bits)
    assert first_call() == (False, bits)  # the full code now stored is taken as it is


def test_upgraded_code_is_the_object_code_compiled_fully_from_the_start():
    """Not only the same bits out: the upgrade (the quick tier's optimized module emitted fully optimized) is the very
    object a full compile of the IR emits."""
    jit = pytest.importorskip("symgrad.codegen.llvm.jit")
    for make, args in _cases(np.float64)[2:4]:
        fn = make()
        fn(*args)
        executable = _executable(fn, args)
        executable.upgrade()
        key, upgraded = jit.loaded_object(executable.llvm_ir)
        assert upgraded == jit.object_code(jit.keyed_text(key, executable.llvm_ir))
