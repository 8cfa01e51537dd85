"""sg.compile with the NumPy backend: signature cache, retracing, lower(), errors."""
import logging
import random

import numpy as np
import pytest

import symgrad as sg
from gradcheck import numeric_grad


def f(x, w):
    return sg.sum(sg.tanh(x @ w))


def f_np(x, w):
    return np.sum(np.tanh(x @ w))


@pytest.fixture
def xw():
    rng = np.random.default_rng(1)
    return rng.normal(size=(4, 3)), rng.normal(size=(3, 2))


def test_caches_per_signature(xw):
    x, w = xw
    cf = sg.compile(f, backend="numpy")
    assert cf.cache_info() == []
    assert np.isclose(cf(x, w), f_np(x, w))
    assert cf.cache_info() == ["f64[4,3], f64[3,2]"]
    cf(x + 1.0, w * 2.0)  # same signature, new values: no retrace
    assert len(cf.cache_info()) == 1


def test_retraces_on_new_shape_rank_and_dtype(xw):
    x, w = xw
    cf = sg.compile(f, backend="numpy")
    cf(x, w)
    x6 = np.ones((6, 3))
    assert np.isclose(cf(x6, w), f_np(x6, w))  # new shape
    assert len(cf.cache_info()) == 2
    x3 = np.ones((2, 4, 3))
    assert np.isclose(cf(x3, w), f_np(x3, w))  # new rank
    assert len(cf.cache_info()) == 3
    out32 = cf(x.astype(np.float32), w.astype(np.float32))  # new dtype
    assert np.asarray(out32).dtype == np.float32
    assert np.isclose(out32, f_np(x, w), rtol=1e-5)
    info = cf.cache_info()
    assert len(info) == 4
    assert "f64[6,3], f64[3,2]" in info and "f64[2,4,3], f64[3,2]" in info and "f32[4,3], f32[3,2]" in info
    cf(x6, w)
    assert len(cf.cache_info()) == 4


def test_new_shape_that_the_function_cannot_take_raises_shape_error(xw):
    x, w = xw
    cf = sg.compile(f, backend="numpy")
    cf(x, w)
    with pytest.raises(sg.ShapeError):
        cf(np.ones((4, 5)), w)


def test_lower_as_text_and_source(xw):
    x, w = xw
    cf = sg.compile(f, backend="numpy")
    lowered = cf.lower(x, w)
    text = lowered.as_text()
    assert text.startswith("def f(x: f64[4,3], w: f64[3,2]) -> f64[]:")
    # the lowered graph is the optimized one: passes may fuse or rename, but these stay
    assert "matmul x w" in text and "tanh" in text and "reduce_sum" in text
    source = lowered.source
    assert "def f(x, w):" in source and "tanh" in source and "import numpy as np" in source
    namespace = {}
    exec(source, namespace)  # the source is readable, self-contained Python
    assert np.isclose(np.asarray(namespace["f"](x, w)[0]), f_np(x, w))
    assert cf.cache_info() == ["f64[4,3], f64[3,2]"]  # lower() fills the cache too


def test_decorator_forms(xw):
    x, w = xw

    @sg.compile
    def g(x, w):
        return sg.sum(sg.tanh(x @ w))

    @sg.compile(backend="numpy")
    def h(x, w):
        return sg.sum(sg.tanh(x @ w))

    assert np.isclose(g(x, w), f_np(x, w))
    assert np.isclose(h(x, w), f_np(x, w))
    assert h.backend == "numpy" and h.__name__ == "h"
    assert np.isclose(sg.compile(backend="numpy")(f)(x, w), f_np(x, w))


def test_compiled_value_and_grad(xw):
    x, w = xw
    step = sg.compile(sg.value_and_grad(f, argnums=(0, 1)), backend="numpy")
    value, (gx, gw) = step(x, w)
    ref_value, (rgx, rgw) = sg.value_and_grad(f, argnums=(0, 1))(x, w)
    assert np.isclose(value, ref_value)
    np.testing.assert_allclose(gx, rgx, rtol=1e-12)
    np.testing.assert_allclose(gw, rgw, rtol=1e-12)
    assert "# backward" in step.lower(x, w).as_text() or "matmul" in step.lower(x, w).as_text()


def test_pytree_arguments_and_outputs():
    @sg.compile(backend="numpy")
    def g(params, x):
        return {"y": params["w"] * x, "s": sg.sum(params["b"])}

    out = g({"w": np.array([1.0, 2.0]), "b": np.ones(3)}, np.array([3.0, 4.0]))
    np.testing.assert_allclose(out["y"], [3.0, 8.0])
    assert np.isclose(out["s"], 3.0)


def test_explain_logs_retrace_cause(xw, caplog, monkeypatch):
    x, w = xw
    monkeypatch.setenv("SYMGRAD_EXPLAIN", "1")
    cf = sg.compile(f, backend="numpy")
    with caplog.at_level(logging.INFO, logger="symgrad"):
        cf(x, w)
        cf(x, w)
        cf(np.ones((7, 3)), w)
    messages = [r.getMessage() for r in caplog.records if r.name == "symgrad"]
    assert len(messages) == 2
    assert "first call" in messages[0]
    assert "x" in messages[1] and "f64[4,3]" in messages[1] and "f64[7,3]" in messages[1]


def test_no_explain_logs_by_default(xw, caplog, monkeypatch):
    x, w = xw
    monkeypatch.delenv("SYMGRAD_EXPLAIN", raising=False)
    cf = sg.compile(f, backend="numpy")
    with caplog.at_level(logging.DEBUG, logger="symgrad"):
        cf(x, w)
    assert not [r for r in caplog.records if r.name == "symgrad" and "tracing" in r.getMessage()]


def test_wrong_argument_count_raises_type_error(xw):
    x, w = xw
    cf = sg.compile(f, backend="numpy")
    with pytest.raises(TypeError, match="w"):
        cf(x)
    with pytest.raises(TypeError, match="positional"):
        cf(x, w, w)


@pytest.mark.parametrize("bad, what", [
    ("hello", "str"),
    (np.ones((3, 2), dtype=complex), "complex"),
    (1 + 2j, "complex"),
    (np.array([object(), object()]), "object"),
])
def test_non_numeric_input_raises_type_error_naming_the_argument(xw, bad, what):
    x, _ = xw
    cf = sg.compile(f, backend="numpy")
    with pytest.raises(TypeError, match="argument w") as info:
        cf(x, bad)
    assert what in str(info.value)


def test_unknown_backend_raises():
    with pytest.raises(ValueError, match="backend"):
        sg.compile(f, backend="no-such-backend")


SHIFT = np.array([1.0, 2.0])


def shifted(x):
    return sg.sum((x + SHIFT) ** 2)


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
def test_retraces_when_a_global_binding_it_read_is_rebound(backend, monkeypatch, caplog):
    """The purity contract: arguments are inputs; globals and closure cells are guarded by binding."""
    x = np.array([0.5, -1.0])
    cf = sg.compile(shifted, backend=backend)
    np.testing.assert_allclose(cf(x), np.sum((x + SHIFT) ** 2))
    monkeypatch.setenv("SYMGRAD_EXPLAIN", "1")
    with caplog.at_level(logging.INFO, logger="symgrad"):
        monkeypatch.setitem(globals(), "SHIFT", np.array([-3.0, 0.0]))
        np.testing.assert_allclose(cf(x), np.sum((x - [3.0, 0.0]) ** 2))
    messages = [r.getMessage() for r in caplog.records if r.name == "symgrad"]
    assert messages == ["symgrad: tracing shifted for a changed read: global 'SHIFT' of shifted is not what the "
                        "last trace read"]
    assert len(cf.cache_info()) == 1


def test_retraces_when_a_closure_cell_or_scalar_is_rebound():
    offset = 1.0

    @sg.compile
    def f(x):
        return x * offset

    assert f(np.array(2.0)) == 2.0
    offset = 3.0  # noqa: F841 - rebinds the cell f reads
    assert f(np.array(2.0)) == 6.0


_GLOBAL_RNG = np.random.default_rng(0)


@pytest.mark.parametrize("draw", [lambda: np.random.normal(size=2), lambda: np.random.rand(), lambda: random.random(),
                                  lambda: _GLOBAL_RNG.normal(size=2)],
                         ids=["np.random.normal", "np.random.rand", "random.random", "a global Generator"])
def test_a_random_draw_of_numpy_or_python_inside_compile_is_refused(draw):
    """It was drawn once, when traced, and every call returned the same numbers (as sg.randn was)."""
    f = sg.compile(lambda x: sg.sum(x * draw()))
    with pytest.raises(sg.UnsupportedOpError, match="draws random numbers"):
        f(np.ones(2))


_SYSTEM_RANDOM = random.SystemRandom()


def test_a_function_reading_a_system_random_compiles():
    """random.SystemRandom has no state (its getstate raises NotImplementedError): reading one is no error."""
    f = sg.compile(lambda x: x * 2.0 if _SYSTEM_RANDOM is not None else x)
    np.testing.assert_array_equal(f(np.ones(2)), 2.0)


def test_a_seeded_or_unused_draw_inside_compile_is_traced_once():
    """A trace that moved a generator is traced a second time: the same graph (the function seeds its generator;
    a draw it does not use, or another thread's) is no error, and the function is not traced again."""
    traces = []

    def seeded(x):
        traces.append(1)
        np.random.seed(5)
        return x * np.random.normal(size=2)

    f = sg.compile(seeded)
    np.random.seed(5)
    want = np.ones(2) * np.random.normal(size=2)
    np.random.normal()  # (the generator's state differs from what the function leaves)
    np.testing.assert_array_equal(f(np.ones(2)), want)
    np.testing.assert_array_equal(f(np.ones(2)), want)
    assert len(traces) == 2
    unused = sg.compile(lambda x: (np.random.normal(), x + 1.0)[1])
    assert unused(np.ones(2))[0] == unused(np.ones(2))[0] == 2.0


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
def test_transforms_of_a_compiled_function_trace_through_it(backend):
    """sg.jvp(sg.compile(sg.grad(f))) is a Hessian-vector product (scipy's Newton-CG `hessp`), as jax.jit
    composes with jax.jvp; a compiled function inside a trace is inlined, not handed the traced values."""
    f = lambda x: sg.sum(sg.sin(x) ** 3 * x)
    compiled_grad = sg.compile(sg.grad(f), backend=backend)
    x, v = np.linspace(-1.0, 1.0, 5), np.arange(1.0, 6.0)
    hessian = numeric_grad(lambda y: compiled_grad(y) @ v, (x,), 0)  # symmetric, so this is H v
    np.testing.assert_allclose(sg.jvp(compiled_grad, (x,), (v,))[1], hessian, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(sg.grad(lambda y: compiled_grad(y) @ v)(x), hessian, rtol=1e-6, atol=1e-8)
    scale = np.array(2.0)
    assert sg.grad(lambda a: sg.compile(lambda b: a * b, backend=backend)(scale))(3.0) == 2.0


def test_source_is_python_and_llvm_ir_has_its_own_name(xw):
    x, w = xw
    native, python = sg.compile(f).lower(x, w), sg.compile(f, backend="numpy").lower(x, w)
    assert "define" in native.llvm_ir and "def f(x, w):" in python.source
    with pytest.raises(AttributeError, match="llvm_ir"):
        native.source
    with pytest.raises(AttributeError, match="source"):
        python.llvm_ir


def test_the_default_backend_hands_a_graph_it_cannot_lower_to_numpy_and_a_named_one_says_so(monkeypatch):
    """The backend is chosen before lowering (backends.lower): sg.compile with the default backend runs a
    graph holding a primitive that backend cannot lower on NumPy; a backend named explicitly raises."""
    from symgrad import backends
    if backends.default_backend() == "numpy":
        pytest.skip("the NumPy backend is the default: no fallback to show")
    monkeypatch.setitem(backends.RULE_CHECKS, "llvm", lambda prim: prim.name != "matmul")
    x, w = np.ones((2, 3)), np.ones((3, 4))
    lowered = sg.compile(lambda x, w: sg.tanh(x @ w)).lower(x, w)
    assert type(lowered.executable).__name__ == "NumpyExecutable"
    with pytest.raises(sg.UnsupportedOpError, match=r"llvm backend cannot lower the primitive\(s\) matmul"):
        sg.compile(lambda x, w: sg.tanh(x @ w), backend="llvm")(x, w)


def test_the_garbage_collector_is_paused_only_while_compiling():
    import gc
    seen = []
    traced = sg.compile(lambda x: seen.append(gc.isenabled()) or x * 2)
    assert gc.isenabled()
    traced(np.ones(2))
    assert seen == [False] and gc.isenabled()
    with pytest.raises(sg.ShapeError):  # restored when the trace fails too
        sg.compile(lambda x: x + np.ones(3))(np.ones(2))
    assert gc.isenabled()
    gc.disable()
    try:
        sg.compile(lambda x: x * 3)(np.ones(2))
        assert not gc.isenabled()  # a user's choice is kept
    finally:
        gc.enable()


class _Model:
    def __init__(self):
        self.weights, self.bias, self.table = np.ones(2), 0.5, {"scale": 2.0}

    def loss(self, x):
        return sg.sum(x * self.weights) * self.table["scale"] + self.bias


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
def test_retraces_when_an_attribute_or_an_item_it_read_is_rebound(backend):
    """sg.compile(model.loss) read self.weights, self.bias and self.table["scale"]: rebinding any of them
    gave the first trace's result (the object's attributes were not guarded at all)."""
    model, x = _Model(), np.array([1.0, 2.0])
    loss = sg.compile(model.loss, backend=backend)
    assert loss(x) == 6.5
    model.weights = np.array([2.0, 0.0])
    assert loss(x) == 4.5
    model.bias = -1.0
    assert loss(x) == 3.0
    model.table["scale"] = 1.0
    assert loss(x) == 1.0
    settings = {"shift": 1.0}
    shifted = sg.compile(lambda v: v + settings["shift"], backend=backend)
    assert shifted(np.array(1.0)) == 2.0
    settings["shift"] = 5.0
    assert shifted(np.array(1.0)) == 6.0


def test_a_function_that_stores_into_what_it_reads_is_not_retraced_on_every_call():
    """A trace counter (`log.append`) changes the list the function reads: guarding its items would fail
    after each trace; what the function reads from containers then stays as traced, as under jax.jit."""
    log = []
    counted = sg.compile(lambda x: log.append(1) or x * 2.0)
    for _ in range(3):
        counted(np.ones(2))
    assert log == [1]


def test_a_method_that_stores_into_its_object_is_not_retraced_on_every_call():
    """self.calls += 1 in a compiled method: guarding the object's attributes, its own store failed the guard
    after every trace (a trace and an LLVM compile per call)."""
    class Counting:
        def __init__(self):
            self.weights, self.calls = np.ones(3), 0

        def loss(self, x):
            self.calls += 1
            return sg.sum(self.weights * x)
    model = Counting()
    loss = sg.compile(model.loss)
    for _ in range(5):
        assert loss(np.arange(3.0)) == 3.0
    assert model.calls == 1
