"""Uncompiled transforms never return a stale result: guards on what the function read, or a fresh run.

Each case changes something the function reads from outside its arguments between two calls
and checks the second result against what the function gives when evaluated afresh (the
NumPy twin), as autograd and JAX without jit would.
"""
import logging
import types

import numpy as np
import numpy.random as npr
import pytest

import symgrad as sg
from symgrad import guards

X = np.array([0.5, -1.0, 2.0])
W = np.ones(3)
SCALE = 2.0
PARAMS = {"w": np.ones(3), "b": 0.5}
CONFIG = types.SimpleNamespace(w=np.ones(3), power=2)
RS = npr.RandomState(0)


def weighted(x):
    return sg.sum(x * W)


def scaled(x):
    return sg.sum(x ** 2) * SCALE


def helper(x):
    return x * W


def through_helper(x):
    return sg.sum(sg.tanh(helper(x)))


def from_params(x):
    return sg.sum(x * PARAMS["w"]) + PARAMS["b"]


def from_config(x):
    return sg.sum((x * CONFIG.w) ** CONFIG.power)


def noisy(x):
    return sg.sum(x * RS.randn(3))


@pytest.fixture(autouse=True)
def restore_globals():
    saved = W, SCALE, {**PARAMS}, dict(vars(CONFIG))
    yield
    globals()["W"], globals()["SCALE"] = saved[0], saved[1]
    PARAMS.clear()
    PARAMS.update(saved[2])
    vars(CONFIG).update(saved[3])


def test_issue_example_rebinding_a_global_array():
    W0 = np.ones(3)
    h = lambda x: sg.sum(x * W0)  # noqa: E731
    np.testing.assert_array_equal(sg.grad(h)(np.ones(3)), [1, 1, 1])
    W0 = 2 * np.ones(3)  # noqa: F841 - the closure cell is rebound
    np.testing.assert_array_equal(sg.grad(h)(np.ones(3)), [2, 2, 2])


@pytest.mark.parametrize("transform", ["grad", "value_and_grad", "jvp", "vjp", "jacobian", "hessian"])
def test_every_transform_sees_a_rebound_global(transform):
    run = {
        "grad": lambda: sg.grad(weighted)(X),
        "value_and_grad": lambda: sg.value_and_grad(weighted)(X),
        "jvp": lambda: sg.jvp(weighted, (X,), (np.ones(3),)),
        "vjp": lambda: sg.vjp(lambda x: x * W, X)[1](np.ones(3)),
        "jacobian": lambda: sg.jacobian(lambda x: x * W)(X),
        "hessian": lambda: sg.hessian(lambda x: sg.sum(x ** 3 * W))(X),
    }[transform]
    first = run()
    globals()["W"] = np.array([3.0, -1.0, 0.5])
    second = run()
    globals()["W"] = np.ones(3)
    again = run()
    for a, b in zip(np.atleast_1d(np.asarray(first, dtype=object)), np.atleast_1d(np.asarray(again, dtype=object))):
        np.testing.assert_allclose(np.asarray(a, float), np.asarray(b, float))
    changed = {"grad": lambda: np.testing.assert_allclose(second, [3.0, -1.0, 0.5]),
               "value_and_grad": lambda: np.testing.assert_allclose(second[1], [3.0, -1.0, 0.5]),
               "jvp": lambda: np.testing.assert_allclose(second[1], 2.5),
               "vjp": lambda: np.testing.assert_allclose(second[0], [3.0, -1.0, 0.5]),
               "jacobian": lambda: np.testing.assert_allclose(second, np.diag([3.0, -1.0, 0.5])),
               "hessian": lambda: np.testing.assert_allclose(second, np.diag(6 * X * [3.0, -1.0, 0.5]))}
    changed[transform]()


def test_in_place_mutation_of_a_global_array_is_seen():
    g = sg.grad(weighted)
    np.testing.assert_allclose(g(X), W)
    W[1] = 7.0
    np.testing.assert_allclose(g(X), [1.0, 7.0, 1.0])
    W[1] = 1.0


def test_scalar_global_reads_through_called_functions_dicts_and_objects():
    g_scaled, g_helper = sg.grad(scaled), sg.grad(through_helper)
    g_params, g_config = sg.value_and_grad(from_params), sg.grad(from_config)
    np.testing.assert_allclose(g_scaled(X), 4 * X)
    globals()["SCALE"] = 3.0
    np.testing.assert_allclose(g_scaled(X), 6 * X)
    np.testing.assert_allclose(g_helper(X), 1 - np.tanh(X) ** 2)
    globals()["W"] = 2 * np.ones(3)
    np.testing.assert_allclose(g_helper(X), 2 * (1 - np.tanh(2 * X) ** 2))
    value, _ = g_params(X)
    np.testing.assert_allclose(value, X.sum() + 0.5)
    PARAMS["b"] = -4.0
    PARAMS["w"] = np.full(3, 2.0)
    value, grad = g_params(X)
    np.testing.assert_allclose(value, 2 * X.sum() - 4.0)
    np.testing.assert_allclose(grad, [2.0, 2.0, 2.0])
    np.testing.assert_allclose(g_config(X), 2 * X)
    CONFIG.power = 3
    np.testing.assert_allclose(g_config(X), 3 * X ** 2)
    CONFIG.w[0] = 2.0
    np.testing.assert_allclose(g_config(X)[0], 3 * 8 * X[0] ** 2)


def test_closure_cells_and_default_arguments():
    def make(scale):
        def f(x, shift=1.0):
            return sg.sum((x + shift) ** 2) * scale
        return f

    f = make(2.0)
    g = sg.grad(f)
    np.testing.assert_allclose(g(X), 4 * (X + 1))
    f.__defaults__ = (0.0,)
    np.testing.assert_allclose(g(X), 4 * X)


def test_arguments_bound_by_functools_partial_are_guarded():
    """grad(partial(loss, data=D)) with D changed in place used to return the gradient for the old D."""
    import functools

    def loss(x, data, config):
        return sg.sum(x * data) * config["scale"]

    data, config = np.ones(3), {"scale": 1.0}
    g = sg.grad(functools.partial(loss, data=data, config=config))
    np.testing.assert_allclose(g(X), [1.0, 1.0, 1.0])
    data[1], config["scale"] = 5.0, 3.0
    np.testing.assert_allclose(g(X), [3.0, 15.0, 3.0])

    point = X.copy()
    bound = functools.partial(loss, point)  # a positional argument, reached through a closure
    g = sg.grad(lambda d: bound(d, {"scale": 1.0}))
    np.testing.assert_allclose(g(np.ones(3)), X)
    point[0] = 4.0
    np.testing.assert_allclose(g(np.ones(3)), [4.0, X[1], X[2]])


def test_sets_and_deques_are_guarded_by_content():
    """A global set or deque changed in place used to leave the first trace's result."""
    import collections
    chosen, history = {0, 2}, collections.deque([np.ones(3)])
    g_set = sg.grad(lambda x: sum(x[i] for i in range(3) if i in chosen))
    g_deque = sg.grad(lambda x: sg.sum(x * history[-1]))
    np.testing.assert_allclose(g_set(X), [1.0, 0.0, 1.0])
    np.testing.assert_allclose(g_deque(X), [1.0, 1.0, 1.0])
    chosen.add(1)
    history.append(np.full(3, 2.0))
    np.testing.assert_allclose(g_set(X), [1.0, 1.0, 1.0])
    np.testing.assert_allclose(g_deque(X), [2.0, 2.0, 2.0])
    history[-1][0] = 5.0
    np.testing.assert_allclose(g_deque(X), [5.0, 2.0, 2.0])
    frozen = sg.grad(lambda x: sum(x[i] for i in range(3) if i in frozenset({1})))
    np.testing.assert_allclose(frozen(X), [0.0, 1.0, 0.0])
    assert len(guards.snapshot(lambda x: x * len(chosen), values=True)) > 1  # the set's items, not only its binding


def test_random_draws_are_fresh_on_every_call_and_compile_once(lowerings):
    g = sg.grad(noisy)
    RS.seed(1)
    first, second = g(X), g(X)
    RS.seed(1)
    expected_first, expected_second = RS.randn(3), RS.randn(3)
    np.testing.assert_allclose(first, expected_first)
    np.testing.assert_allclose(second, expected_second)
    assert not guards.snapshot(noisy, values=True).pure
    assert len(lowerings) == 1  # small draws are inputs of the compiled code too


def test_a_changing_number_or_array_is_retraced_without_recompiling(lowerings):
    """A schedule (a global float changed every step) or a Python-float draw is run-time data."""
    g = sg.grad(scaled)
    for step in range(4):
        globals()["SCALE"] = 1.0 + step
        np.testing.assert_allclose(g(X), 2 * (1.0 + step) * X)
    h = sg.grad(lambda x: sg.sum(x * W) * RS.uniform())
    for _ in range(3):
        state = RS.get_state()
        result = h(X)
        RS.set_state(state)
        np.testing.assert_allclose(result, W * RS.uniform())
    assert len(lowerings) == 2  # one structure each


def test_large_random_draws_are_lifted_so_the_structure_compiles_once(lowerings):
    rs = npr.RandomState(3)

    def elbo(mean):
        eps = rs.randn(1000)
        return sg.sum(sg.sin(mean + eps))

    g = sg.grad(elbo)
    x = np.zeros(1000)
    for _ in range(4):
        state = rs.get_state()
        result = g(x)
        rs.set_state(state)
        eps = rs.randn(1000)  # the draw the call made
        np.testing.assert_allclose(result, np.cos(x + eps), rtol=1e-12)
    assert g.compiled._fresh and len(lowerings) == 1


def test_np_random_and_print_make_the_function_run_every_call(capsys):
    def with_np_random(x):
        return sg.sum(x * np.random.uniform(size=3))

    def with_print(x):
        print("called")
        return sg.sum(x)

    g = sg.grad(with_np_random)
    assert not np.allclose(g(X), g(X))
    h = sg.grad(with_print)
    h(X)
    h(X)
    assert capsys.readouterr().out.count("called") == 2


def test_pure_function_reuses_its_trace():
    g = sg.grad(weighted)
    g(X)
    compiled = g.compiled
    g(X + 1)
    assert not compiled._fresh and len(compiled.cache_info()) == 1


def test_explain_names_the_read_that_changed(caplog, monkeypatch):
    monkeypatch.setenv("SYMGRAD_EXPLAIN", "1")
    g = sg.grad(scaled)
    with caplog.at_level(logging.INFO, logger="symgrad"):
        g(X)
        globals()["SCALE"] = 5.0
        g(X)
        sg.grad(lambda x: noisy(x) * 2)(X)
    messages = [r.getMessage() for r in caplog.records if r.name == "symgrad"]
    assert any("global 'SCALE' of scaled" in m for m in messages), messages
    assert any("re-runs on every call" in m and "RandomState" in m for m in messages), messages


# ----------------------------------------------------------------------------- the walk itself

def test_snapshot_lists_globals_cells_and_called_functions():
    descriptions = [d for d, _ in guards.snapshot(through_helper, values=True).checks]
    assert "global 'helper' of through_helper" in descriptions
    assert "global 'W' of helper" in descriptions
    assert guards.snapshot(through_helper, values=True).holds()


def test_library_functions_are_trusted_but_random_generators_are_not():
    assert guards.snapshot(lambda x: sg.sum(np.tanh(x)) + np.pi, values=True).pure
    for impure in [lambda x: x * np.random.rand(), lambda x: x * npr.default_rng(0).normal(),
                   lambda x: x + sg.randn(3), lambda x: x * open]:
        assert not guards.snapshot(impure, values=True).pure


def test_large_arrays_are_not_checked_by_content():
    big = np.zeros(guards.CONTENT_GUARD_BYTES // 8 + 1)
    assert not guards.snapshot(lambda x: x + big[0], values=True).pure
    assert guards.snapshot(lambda x: x + big[0], values=False).pure  # sg.compile guards bindings only


def test_functions_that_mutate_state_run_every_call():
    log = []

    def f(x):
        log.append(1)
        return sg.sum(x)

    g = sg.grad(f)
    g(X)
    g(X)
    assert len(log) == 2


def test_concrete_vjp_sees_fresh_draws_and_compiles_once_per_structure(lowerings):
    rs = npr.RandomState(5)

    def f(x):
        return sg.tanh(x * rs.randn(64)) * rs.uniform()  # an array and a Python float drawn afresh

    x = np.linspace(-1, 1, 64)
    for _ in range(3):
        state = rs.get_state()
        out, pullback = sg.vjp(f, x)
        rs.set_state(state)
        noise, scale = rs.randn(64), rs.uniform()
        np.testing.assert_allclose(out, np.tanh(x * noise) * scale, rtol=1e-12)
        np.testing.assert_allclose(pullback(np.ones(64))[0], (1 - np.tanh(x * noise) ** 2) * noise * scale,
                                   rtol=1e-12)
    assert len(lowerings) == 2  # its forward and its backward, once


def test_content_guards_are_bounded_in_total():
    a, b, c, d, e = (np.zeros(guards.CONTENT_GUARD_BYTES // 8 // 4) for _ in range(5))
    assert guards.snapshot(lambda x: x + a[0] + b[0] + c[0], values=True).pure
    assert not guards.snapshot(lambda x: x + a[0] + b[0] + c[0] + d[0] + e[0], values=True).pure


def test_a_structure_too_deep_to_walk_makes_the_function_run_every_call():
    deep = [1.0]
    for _ in range(5000):
        deep = [deep]
    holder = types.SimpleNamespace(deep=deep)

    def f(x):
        return sg.sum(x) * len(holder.deep)

    guard = guards.snapshot(f, values=True)
    assert not guard.pure and "could not be walked" in guard.impure_reason
    assert guards.snapshot(f, values=False).pure


LOG = []


def test_filling_containers_the_function_builds_keeps_it_pure_but_mutating_outside_state_does_not():
    def unrolled(x, k):
        hiddens, named = [], {}
        h = x
        for step in range(3):
            h = sg.tanh(h * W + step)
            hiddens.append(h)
            named["last"] = h
        return sg.sum(sg.stack(hiddens)) + sg.sum(named["last"]) * k

    def appends_to_a_global(x):
        LOG.append(1)
        return sg.sum(x)

    def appends_through_an_alias(x):
        alias = LOG
        alias.append(1)
        return sg.sum(x)

    def stores_into_an_argument(x, out):
        out[0] = 1.0
        return sg.sum(x)

    def appends_to_a_global_or_its_own(x, c):
        chosen = LOG if c else []
        chosen.append(1)
        return sg.sum(x)

    assert guards.snapshot(unrolled, values=True).pure
    for impure in (appends_to_a_global, appends_through_an_alias, stores_into_an_argument,
                   appends_to_a_global_or_its_own):
        assert not guards.snapshot(impure, values=True).pure, impure.__name__
    g = sg.grad(unrolled)
    np.testing.assert_allclose(g(X, 2.0), sg.grad(unrolled)(X, 2.0))
    assert not g.compiled._fresh and len(g.compiled.cache_info()) == 1


COUNTER = np.zeros(1)


def test_a_trace_that_changes_what_it_read_runs_again_on_the_next_call():
    def counts(x):
        np.add(COUNTER, 1.0, out=COUNTER)  # a side effect no bytecode pattern shows
        return sg.sum(x) * COUNTER[0]

    g = sg.grad(counts)
    COUNTER[0] = 0.0
    results = [g(X)[0] for _ in range(3)]
    assert results == [1.0, 2.0, 3.0]


KEYED_PARAMS = {"w": 2.0}


def _reads_a_dict_and_keyword_defaults(x, *, scale=1.0):
    return sg.sum(x * scale * KEYED_PARAMS["w"])


def test_reads_of_a_dict_and_of_keyword_defaults_are_guarded_by_value_not_retraced_each_call(monkeypatch):
    from symgrad import compiler
    traces = []
    original = compiler.trace_flat
    monkeypatch.setattr(compiler, "trace_flat", lambda *a, **k: traces.append(1) or original(*a, **k))
    grad = sg.grad(_reads_a_dict_and_keyword_defaults)
    for _ in range(3):  # a dict's keys were compared by identity of a fresh tuple: a retrace every call
        np.testing.assert_array_equal(grad(np.ones(3)), [2.0, 2.0, 2.0])
    assert len(traces) == 1
    monkeypatch.setitem(KEYED_PARAMS, "w", 5.0)
    np.testing.assert_array_equal(grad(np.ones(3)), [5.0, 5.0, 5.0])  # a changed read still retraces
    assert len(traces) == 2


def test_a_plain_object_without_its_own_call_is_guarded_by_what_it_holds():
    """type's __call__ is a fresh method-wrapper at each lookup: guarding it by identity failed at once, and
    sg.grad of a function reading a plain object re-traced on every call."""
    class Settings:
        pass
    settings = Settings()
    settings.scale = 2.0
    guard = guards.snapshot(lambda x: x * settings.scale, values=True)
    assert guard.pure and guard.holds()
    settings.scale = 3.0
    assert not guard.holds()


class _Late:
    pass


def _reads_a_late_class_attribute(x):
    return x * getattr(_Late, "scale", 1.0)


def test_a_class_attribute_added_after_the_trace_retraces(monkeypatch):
    """A class attribute the trace found missing (getattr with a default, an instance falling back to its class)
    and added later gave the old result: the class's attribute names are guarded, and a name read through
    getattr's string is guarded by value as any attribute."""
    compiled = sg.compile(_reads_a_late_class_attribute)
    x = np.ones(2)
    np.testing.assert_array_equal(compiled(x), [1.0, 1.0])
    monkeypatch.setattr(_Late, "scale", 3.0, raising=False)
    np.testing.assert_array_equal(compiled(x), [3.0, 3.0])
    monkeypatch.setattr(_Late, "scale", 5.0)
    np.testing.assert_array_equal(compiled(x), [5.0, 5.0])
    monkeypatch.delattr(_Late, "scale")
    np.testing.assert_array_equal(compiled(x), [1.0, 1.0])
    assert len(compiled.cache_info()) >= 1


def test_an_instance_falling_back_to_a_class_attribute_added_later_retraces():
    class Config:
        pass
    config = Config()
    compiled = sg.compile(lambda x: x * (config.gain if hasattr(config, "gain") else 1.0))
    np.testing.assert_array_equal(compiled(np.ones(2)), [1.0, 1.0])
    Config.gain = 4.0
    np.testing.assert_array_equal(compiled(np.ones(2)), [4.0, 4.0])
    config.gain = 7.0
    np.testing.assert_array_equal(compiled(np.ones(2)), [7.0, 7.0])
    for _ in range(3):  # unchanged reads still hold: no retrace on every call
        compiled(np.ones(2))


_LATE_MODULE = types.ModuleType("symgrad_test_late_settings")


def _reads_a_late_module_attribute(x):
    return x * getattr(_LATE_MODULE, "scale", 1.0)


def test_a_module_attribute_added_after_the_trace_retraces(monkeypatch):
    """As a class's: a user module's attribute found missing, then added (its missing names are guarded)."""
    compiled = sg.compile(_reads_a_late_module_attribute)
    np.testing.assert_array_equal(compiled(np.ones(2)), [1.0, 1.0])
    monkeypatch.setattr(_LATE_MODULE, "scale", 3.0, raising=False)
    np.testing.assert_array_equal(compiled(np.ones(2)), [3.0, 3.0])
    monkeypatch.setattr(_LATE_MODULE, "scale", 4.0)
    np.testing.assert_array_equal(compiled(np.ones(2)), [4.0, 4.0])


_SWAPPED_MODULE = types.ModuleType("symgrad_test_swapped_settings")
_SWAPPED_MODULE.unused = 1


def _reads_a_swapped_module_attribute(x):
    return x * getattr(_SWAPPED_MODULE, "scale", 1.0)


def test_a_module_attribute_added_as_another_is_deleted_retraces():
    """The module's names were counted: deleting one and adding the missing one read kept the count, and the
    trace gave the old result."""
    compiled = sg.compile(_reads_a_swapped_module_attribute)
    np.testing.assert_array_equal(compiled(np.ones(2)), [1.0, 1.0])
    del _SWAPPED_MODULE.unused
    _SWAPPED_MODULE.scale = 3.0
    np.testing.assert_array_equal(compiled(np.ones(2)), [3.0, 3.0])
    _SWAPPED_MODULE.other = 5  # a name the function does not read: no retrace needed, none wrong
    np.testing.assert_array_equal(compiled(np.ones(2)), [3.0, 3.0])


def test_an_attribute_a_property_reads_is_guarded():
    """p.v where v is a property returning self._v: the names the object's class code uses included its methods'
    but not its properties' accessors', so rebinding p._v kept the old trace."""
    class P:
        @property
        def v(self):
            return self._v

    p = P()
    p._v = 1.0
    f = sg.compile(lambda x: x * p.v)
    x = np.array([1.0, 2.0])
    np.testing.assert_array_equal(f(x), x)
    p._v = 9.0
    np.testing.assert_array_equal(f(x), 9.0 * x)
    np.testing.assert_array_equal(sg.grad(lambda x: sg.sum(x * p.v))(x), [9.0, 9.0])
