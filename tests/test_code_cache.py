"""The one cache of lowered code (symgrad.code_cache): shared by sg.compile, the transforms and the eager API,
freeing what it evicts, and never handing one graph the code of another that computes something else."""
import gc
import os
import types
import weakref

import numpy as np
import pytest

import symgrad as sg
from symgrad import code_cache, ir
from symgrad.caches import Recent

X = np.linspace(-1.0, 1.0, 7)


def _loss(x, c):
    return sg.sum(sg.tanh(x * c) ** 2)


def test_sg_grad_of_one_function_from_two_closures_lowers_once(lowerings):
    first = sg.grad(lambda x: _loss(x, 2.5))(X)
    second = sg.grad(lambda x: _loss(x, -1.5))(X)  # a number is an input of the transforms' code, not baked in
    assert len(lowerings) == 1
    for c, got in ((2.5, first), (-1.5, second)):
        np.testing.assert_allclose(got, 2 * np.tanh(X * c) * (1 - np.tanh(X * c) ** 2) * c, rtol=1e-12)


def test_a_function_compiled_twice_lowers_once_even_after_the_first_is_gone(lowerings):
    def f(x):
        return sg.exp(x) * 3.0

    assert sg.compile(f)(X)[3] == pytest.approx(3.0)
    gc.collect()
    np.testing.assert_allclose(sg.compile(f)(X), np.exp(X) * 3.0, rtol=1e-13)
    assert len(lowerings) == 1


def _train(rng):
    model = sg.nn.Linear(3, 2)
    optimizer = sg.optim.Adam(model.parameters(), lr=0.01)
    for _ in range(3):
        optimizer.zero_grad()
        sg.mean(model(sg.tensor(rng.standard_normal((4, 3)))) ** 2).backward()
        optimizer.step()


def test_a_second_model_of_one_architecture_lowers_nothing_new(lowerings):
    rng = np.random.default_rng(0)
    _train(rng)
    lowered = len(lowerings)
    assert lowered >= 2  # the step's capture, Adam's update
    _train(rng)  # another model and optimizer: every structure's code is cached already
    assert len(lowerings) == lowered


def test_numbers_baked_into_compiled_code_are_part_of_its_key(lowerings):
    def scaled(c):
        return sg.compile(lambda x: sg.exp(x) * c)

    results = [scaled(c)(X) for c in (2.0, 3.0, 2.0)]
    assert len(lowerings) == 2  # 2.0 and 3.0, then 2.0 again from the cache
    for c, got in zip((2.0, 3.0, 2.0), results):
        np.testing.assert_allclose(got, np.exp(X) * c, rtol=1e-13)


def test_constant_arrays_baked_into_compiled_code_are_part_of_its_key(lowerings):
    def with_constant(values):
        a = np.array(values)
        return sg.compile(lambda x: x * -a)  # -a: a constant the trace makes

    for values in ([1.0, 2.0, 3.0], [1.0, 2.0, 4.0], [1.0, 2.0, 3.0]):
        np.testing.assert_array_equal(with_constant(values)(np.ones(3)), -np.array(values))
    assert len(lowerings) == 2


def test_dtypes_are_part_of_the_key(lowerings):
    f32, f64 = X.astype(np.float32), X
    for x in (f32, f64, f32):
        got = sg.compile(lambda x: sg.exp(x) * 3.0)(x)
        assert got.dtype == x.dtype
        np.testing.assert_allclose(got, np.exp(x) * 3.0, rtol=1e-6 if x.dtype == np.float32 else 1e-13)
    assert len(lowerings) == 2


def _graph(attrs=(), dtype=np.float64, shape=(3,)) -> ir.Graph:
    """A graph of one node of a primitive only its name stands for (keys are made, nothing is lowered)."""
    x = ir.Value(shape, dtype)
    node = ir.Node(types.SimpleNamespace(name="p"), (x,), attrs, ir.Value(shape, dtype))
    return ir.Graph([x], [node], [node.out])


@pytest.mark.parametrize("a, b", [(0.0, -0.0), (1, 1.0), (1, True), (0.5, np.float32(0.5)), ((0.0,), (-0.0,)),
                                  (complex(0, 0), complex(0, -0.0))])
def test_attributes_equal_in_python_but_not_alike_are_different_keys(a, b):
    assert a == b
    assert _graph((("value", a),)).structure_key() != _graph((("value", b),)).structure_key()
    assert _graph((("value", a),)).structure_key() == _graph((("value", a),)).structure_key()


def test_tuple_types_of_one_size_are_different_keys():
    pair, vector = ir.tuple_dtype([((), np.float64), ((), np.float64)]), ir.tuple_dtype([((2,), np.float64)])
    assert pair.str == vector.str  # what the key held before: only the size
    assert _graph(dtype=pair, shape=()).structure_key() != _graph(dtype=vector, shape=()).structure_key()


def test_options_and_names_are_part_of_the_key():
    graph = _graph()
    assert code_cache.key_of(graph) != code_cache.key_of(graph, backend="numpy")
    assert code_cache.key_of(graph) != code_cache.key_of(graph, threads=1) or code_cache.key_of(graph)[-1] == 1
    renamed = ir.Graph(graph.inputs, graph.nodes, graph.outputs, "g")
    assert code_cache.key_of(graph) != code_cache.key_of(renamed)  # (names are in the code and its messages)


def test_evicted_code_is_freed_once_no_other_cache_holds_it(monkeypatch):
    monkeypatch.setattr(code_cache, "_cache", Recent(1))
    f = sg.compile(lambda x: sg.sin(x) * 1.25)
    f(X)
    code = weakref.ref(f.lower(X).executable)
    del f
    gc.collect()
    assert code() is not None  # the code cache holds it
    g = sg.compile(lambda x: sg.cos(x) * 1.25)
    g(X)  # evicts it
    gc.collect()
    assert code() is None


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="reads the resident size from /proc")
def test_memory_a_call_keeps_lives_as_long_as_a_holder_of_the_shared_code(lowerings):
    def resident() -> int:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

    def f(x):  # a cumulative sum's 64 MB buffer: a workspace the kernel keeps from call to call
        return sg.sum(sg.cumsum(sg.sin(x)) * sg.cos(x))

    x = np.linspace(-3.0, 3.0, 8_000_000)
    expected = np.sum(np.cumsum(np.sin(x)) * np.cos(x))
    first, second = sg.compile(f, backend="llvm"), sg.compile(f, backend="llvm")
    np.testing.assert_allclose([first(x), second(x)], expected, rtol=1e-9)
    assert len(lowerings) == 1 and first.lower(x).executable is not second.lower(x).executable  # a copy each
    before = resident()
    del first
    gc.collect()
    assert resident() < before - 32 * 2 ** 20  # the block the calls kept is freed when a holder goes
    np.testing.assert_allclose(second(x), expected, rtol=1e-9)  # the other allocates it again
    del second
    gc.collect()
    third = sg.compile(f, backend="llvm")
    for _ in range(2):
        np.testing.assert_allclose(third(x), expected, rtol=1e-9)
    assert len(lowerings) == 1


def test_a_code_cache_hit_gives_the_same_executable(monkeypatch):
    monkeypatch.setattr(code_cache, "_cache", Recent(4))
    graph = sg.compile(lambda x: sg.exp(x)).lower(X).graph
    assert code_cache.cached(graph, backend="numpy") is None
    first, second = code_cache.lowered(graph, backend="numpy"), code_cache.lowered(graph, backend="numpy")
    assert first is second and code_cache.cached(graph, backend="numpy") is first
    np.testing.assert_allclose(first.executable(X)[0], np.exp(X), rtol=1e-13)


def test_edge_values_through_shared_code(lowerings):
    def f(x):
        return sg.sum(sg.exp(x) * 0.5)

    empty, zero_d = np.zeros(0), np.array(0.0)
    for x in (empty, zero_d, np.array([0.0, np.inf, -np.inf])):
        np.testing.assert_allclose(sg.compile(f)(x), np.sum(np.exp(x) * 0.5))
        np.testing.assert_allclose(sg.grad(f)(x), np.exp(x) * 0.5)


def test_threads_lowering_one_structure_at_once_share_the_first_code_stored(lowerings):
    import threading
    results, barrier = {}, threading.Barrier(4)

    def work(index):
        barrier.wait()
        results[index] = (sg.compile(lambda x: sg.sum(sg.tanh(x) * 1.75)).lower(X).executable,
                          sg.grad(lambda x: _loss(x, 0.5 + index))(X))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({id(executable) for executable, _ in results.values()}) == 1
    for index, (_, got) in results.items():
        c = 0.5 + index
        np.testing.assert_allclose(got, 2 * np.tanh(X * c) * (1 - np.tanh(X * c) ** 2) * c, rtol=1e-12)
    assert len(code_cache._cache) == 2  # (each thread may have lowered them: the cache holds one of each)


@pytest.mark.parametrize("enabled", [True, False])
def test_the_collector_is_paused_while_lowering_and_left_as_it_was(monkeypatch, lowerings, enabled):
    """Python's cyclic collector is off while a graph is optimized and lowered, in sg.compile and in the eager API's
    first backward (full collections walking the compiler's objects were 15-17% of a first call), and afterwards
    as it was before."""
    during = []
    recording = code_cache.lower
    monkeypatch.setattr(code_cache, "lower", lambda *a, **k: (during.append(gc.isenabled()), recording(*a, **k))[1])
    was = gc.isenabled()
    (gc.enable if enabled else gc.disable)()
    try:
        np.testing.assert_allclose(sg.compile(lambda x: sg.sin(x) * 2.0)(X), np.sin(X) * 2.0, rtol=1e-13)
        assert gc.isenabled() is enabled
        w = sg.tensor(X.copy(), requires_grad=True)
        for _ in range(2):  # the first backward runs op by op, the second lowers
            w.grad = None
            sg.sum(sg.tanh(w * 3.0)).backward()
            assert gc.isenabled() is enabled
        np.testing.assert_allclose(w.grad.numpy(), 3.0 * (1 - np.tanh(X * 3.0) ** 2), rtol=1e-12)
    finally:
        (gc.enable if was else gc.disable)()
    assert during and not any(during)
