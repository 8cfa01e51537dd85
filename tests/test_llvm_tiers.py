"""Quick code and its upgrade (codegen/llvm/jit.py): code that may run once or twice (an eager step's first
capture) is emitted without machine-code optimization, then replaced, for every holder of its entry, by the fully
optimized code of the same optimized IR; both return the same bits."""
from __future__ import annotations

import pickle

import numpy as np
import pytest

import symgrad as sg
from symgrad.compiler import Compiled

llvm_backend = pytest.importorskip("symgrad.codegen.llvm.backend")
from symgrad.codegen.llvm import jit  # noqa: E402


@pytest.fixture(autouse=True)
def fresh_disk_cache(tmp_path, monkeypatch):
    """A disk cache without the code of an earlier run (which quick lowering would take as it is)."""
    monkeypatch.setenv("SYMGRAD_CACHE_DIR", str(tmp_path))


def _graph(fn, *args):
    return Compiled(fn, backend="numpy").lower(*args).graph


def _bits(results) -> list[bytes]:
    return [np.asarray(r).tobytes() for r in results]


def _loss(x, w):
    """Reductions (reassociable sums the vectorizer reorders), transcendentals and a product."""
    h = sg.tanh(x @ w) * sg.exp(-x[:, :1] ** 2)
    return sg.sum(sg.log1p(h * h)) + sg.mean(sg.sin(x) * sg.max(x, axis=1, keepdims=True))


@pytest.mark.parametrize("rows", [3, 40])  # 40 rows: a workspace too large for the stack, kept from call to call
def test_quick_code_returns_the_bits_of_its_upgrade_through_the_same_entry(rows):
    rng = np.random.default_rng(0)
    args = [rng.standard_normal((rows, 70)), rng.standard_normal((70, 70)) * 0.2]
    graph = _graph(sg.value_and_grad(_loss, argnums=(0, 1)), *args)
    quick = llvm_backend.lower(graph, quick=True)
    assert quick.native.quick
    held = quick.for_holder()
    entry, before = held.entry, _bits(held(*args))
    held.upgrade()
    assert not quick.native.quick and held.entry is entry and quick.natives is held.natives
    assert _bits(quick(*args)) == before == _bits(entry(*args))
    numpy_results = Compiled(sg.value_and_grad(_loss, argnums=(0, 1)), backend="numpy")(*args)
    for ours, theirs in zip(quick(*args), [numpy_results[0], *numpy_results[1]]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)
    assert jit.loaded_object(quick.llvm_ir) is not None  # a pickle carries the upgraded code
    assert _bits(pickle.loads(pickle.dumps(quick))(*args)) == before


def test_edge_values_give_the_same_bits_on_both_tiers():
    args = [np.array([[0.0, -0.0, np.inf, -np.inf, np.nan, 1e-310, 1e308]]), np.eye(7)]
    graph = _graph(sg.value_and_grad(_loss, argnums=(0, 1)), *args)
    quick = llvm_backend.lower(graph, quick=True)
    before = _bits(quick(*args))
    quick.upgrade()
    assert _bits(quick(*args)) == before


@pytest.mark.parametrize("budget, upgraded", [(0.0, True), (1.0, False)])
def test_an_eager_capture_runs_quick_code_until_its_calls_took_as_long_as_upgrading(lowerings, monkeypatch, budget,
                                                                                    upgraded):
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(llvm_backend, "UPGRADE_SECONDS_PER_BYTE", budget)  # 1 s a byte: never, in this test
    rng = np.random.default_rng(1)
    weights, inputs, targets = rng.standard_normal((3, 5)), rng.standard_normal((8, 5)), rng.standard_normal((8, 3))
    losses = {}
    for lib in (sg, torch):
        w = lib.tensor(weights.copy(), requires_grad=True)
        x, y = lib.tensor(inputs), lib.tensor(targets)
        losses[lib] = []
        for _ in range(6):
            loss = ((lib.tanh(x @ w.T) - y) ** 2).mean()
            loss.backward()
            with lib.no_grad():
                w -= 0.1 * w.grad
            w.grad = None
            losses[lib].append(float(loss))
    np.testing.assert_allclose(losses[sg], losses[torch], rtol=1e-12)
    tiers = [[native.quick for native in made.natives] for made in lowerings if hasattr(made, "natives")]
    assert ([True, False] if upgraded else [True]) in tiers  # the step's capture: quick code (then upgraded)


def test_quick_code_read_from_the_disk_cache_upgrades_too():
    args = [np.linspace(-1.0, 1.0, 70)[None, :], np.eye(70) * 0.5]
    graph = _graph(sg.value_and_grad(_loss, argnums=(0, 1)), *args)
    before = _bits(llvm_backend.lower(graph, quick=True)(*args))  # (dropped: its code stays on disk only)
    again = llvm_backend.lower(graph, quick=True)
    assert again.native.quick and again.native.optimized is None  # read from disk: no optimized IR kept
    again.upgrade()
    assert not again.native.quick and _bits(again(*args)) == before
    assert not llvm_backend.lower(graph, quick=True).native.quick  # the upgraded code, found first from now on
