"""Probes of transforms and compiled functions against JAX's behaviour: caching by static values."""
import pickle

import numpy as np
import pytest

import symgrad as sg


def by_type(x, s):
    """Reads its static argument's type, as code branching on an int count or a float scale does."""
    return x * 0 + sg.sum(x[:s]) if isinstance(s, int) else x * s


@pytest.mark.parametrize("backend", ["llvm", "numpy"])
def test_equal_static_values_of_different_types_get_their_own_trace(backend):
    """3, 3.0 and True == 1 are equal and hash alike: the cache handed 3.0 the code traced for 3 (JAX keys
    static values by type too)."""
    x = np.arange(1.0, 5.0)
    f = sg.compile(by_type, static_argnums=1, backend=backend)
    np.testing.assert_array_equal(f(x, 3), x * 0 + 6)
    np.testing.assert_array_equal(f(x, 3.0), x * 3.0)
    np.testing.assert_array_equal(f(x, 1), x * 0 + 1)
    np.testing.assert_array_equal(f(x, True), x * 0 + 1)  # bool is an int subclass: its own trace, same value
    np.testing.assert_array_equal(f(x, (2, 3.0)[1]), x * 3.0)
    nested = sg.compile(lambda x, t: x * len(t) if isinstance(t[0], int) else -x, static_argnums=1, backend=backend)
    np.testing.assert_array_equal(nested(x, (1, 2)), x * 2)
    np.testing.assert_array_equal(nested(x, (1.0, 2)), -x)
    restored = pickle.loads(pickle.dumps(f))
    np.testing.assert_array_equal(restored(x, 3.0), x * 3.0)
    np.testing.assert_array_equal(restored(x, 3), x * 0 + 6)


def test_grad_with_a_static_argument_keys_it_by_type():
    x = np.arange(1.0, 5.0)
    g = sg.grad(lambda x, s: sg.sum(by_type(x, s)), static_argnums=1)
    np.testing.assert_array_equal(g(x, 2), [4.0, 4.0, 0.0, 0.0])  # 4 * sum(x[:2])
    np.testing.assert_array_equal(g(x, 2.0), np.full(4, 2.0))


def test_python_values_a_trace_reads_are_cached_by_type_too():
    """A Python int the trace needs as a value is bound like a static argument: True was handed 1's code."""
    f = sg.compile(lambda x, n: x * 2 if isinstance(n, bool) else x[:n])
    x = np.arange(4.0)
    np.testing.assert_array_equal(f(x, 1), [0.0])
    np.testing.assert_array_equal(f(x, True), x * 2)
    restored = pickle.loads(pickle.dumps(f))
    np.testing.assert_array_equal(restored(x, True), x * 2)
    np.testing.assert_array_equal(restored(x, 1), [0.0])


generator = sg.Generator()


@pytest.mark.parametrize("draw", [lambda a: sg.randn(3), lambda a: sg.rand(3), lambda a: sg.randn_like(a),
                                  lambda a: sg.randint(0, 9, (3,)), lambda a: sg.randperm(3),
                                  lambda a: sg.randn(3, generator=generator),
                                  lambda a: sg.nn.Linear(3, 3)(sg.asarray(a))],
                         ids=["randn", "rand", "randn_like", "randint", "randperm", "generator", "layer_init"])
def test_a_random_draw_inside_compile_is_refused(draw):
    """sg.randn inside sg.compile was drawn once, when traced, and baked in: every call returned the same
    numbers (randn_like of a traced value was a TracerError). An uncompiled transform draws at every call: its
    cache reused the first trace of a function creating an nn.Linear (the same gradient at every call)."""
    x = np.arange(3.0)
    with pytest.raises(sg.UnsupportedOpError, match="random draw inside sg.compile"):
        sg.compile(lambda a: a + draw(a))(x)
    f = sg.grad(lambda a: sg.sum(a * draw(a)))
    first = f(x)
    assert any(not np.array_equal(first, f(x)) for _ in range(8))  # (randperm(3) repeats itself 1 time in 6)


def test_a_seeded_draw_in_an_uncompiled_transform_repeats():
    x = np.arange(3.0)
    f = sg.grad(lambda a: sg.sum(a * sg.randn(3, generator=sg.Generator().manual_seed(1))))
    np.testing.assert_array_equal(f(x), f(x))


@pytest.mark.parametrize("backend", ["llvm", "numpy"])
def test_an_array_past_the_content_budget_handed_to_numpy_is_not_baked_unchecked(backend):
    """An array the guards compare by content (handed to NumPy while traced, or read through a part of it) was
    left unguarded past CONTENT_GUARD_BYTES: big[0] = 11 was never seen (big.sum() and big[:3] stayed stale).
    Such a function is traced at every call; the LLVM backend's fast entry skipped that too."""
    x = np.arange(3.0)
    big = np.ones(300_000)  # 2.4 MB
    by_numpy = sg.compile(lambda a: a + big.sum(), backend=backend)
    by_part = sg.compile(lambda a: a + big[:3], backend=backend)
    by_numpy(x), by_part(x)
    big[:2] = 11.0
    np.testing.assert_array_equal(by_numpy(x), x + big.sum())
    np.testing.assert_array_equal(by_part(x), x + big[:3])
    big[:2] = 1.0
    np.testing.assert_array_equal(by_numpy(x), x + big.sum())
