"""sg.compile reads the arrays and eager tensors a function reads besides its arguments afresh at every
call (core.Reads): changing them in place, rebinding a model's layers or switching it to eval mode is
never answered from a stale trace."""
import numpy as np
import pytest

import symgrad as sg

BACKENDS = ["numpy", "llvm"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_array_changed_in_place_is_read_at_the_next_call(backend):
    weights = np.ones(3)
    f = sg.compile(lambda x: sg.sum(x * weights), backend=backend)
    assert f(np.ones(3)) == 3.0
    weights[0] = 5.0
    assert f(np.ones(3)) == 7.0
    weights -= 1.0  # an optimizer's in-place step
    assert f(np.ones(3)) == 4.0
    assert f.signature_count() == 1  # read, not re-traced


@pytest.mark.parametrize("backend", BACKENDS)
def test_views_of_a_read_array_and_gradients_see_the_change(backend):
    W = np.array([[1.0, 2.0], [3.0, 4.0]])
    g = sg.compile(sg.grad(lambda x: sg.sum(sg.sin(x) @ W.T)), backend=backend)
    x = np.zeros(2)
    np.testing.assert_allclose(g(x), W.sum(axis=0))
    W[1, 0] = -10.0
    np.testing.assert_allclose(g(x), W.sum(axis=0))


def test_an_array_read_in_a_loop_body_is_read_at_every_call():
    step = np.ones(3)
    f = sg.compile(lambda c: sg.fori_loop(0, 3, lambda i, c: c + step, c))
    np.testing.assert_allclose(f(np.zeros(3)), 3.0)
    step[:] = 2.0
    np.testing.assert_allclose(f(np.zeros(3)), 6.0)


def test_an_array_handed_to_numpy_during_the_trace_re_traces_when_it_changes():
    values = np.ones(3)
    f = sg.compile(lambda x: sg.sum(x * np.exp(values)))
    np.testing.assert_allclose(f(np.ones(3)), 3 * np.e)
    values[0] = 0.0
    np.testing.assert_allclose(f(np.ones(3)), 2 * np.e + 1)


def test_an_array_whose_shape_changes_re_traces():
    holder = {"w": np.ones(3)}
    w = holder["w"]
    f = sg.compile(lambda x: sg.sum(x) * sg.sum(w))
    assert f(np.ones(2)) == 6.0
    w.resize(4, refcheck=False)  # in place, a new shape
    w[:] = 1.0
    assert f(np.ones(2)) == 8.0


def test_an_attribute_of_an_object_changed_in_place():
    class Model:
        def __init__(self):
            self.W = np.ones((2, 2))

        def loss(self, x):
            return sg.sum((x @ self.W) ** 2)

    model = Model()
    loss = sg.compile(model.loss)
    x = np.array([1.0, 2.0])
    assert loss(x) == 18.0
    model.W *= 2.0
    assert loss(x) == 72.0


def test_an_empty_or_python_number_read_stays_a_constant():
    empty, scale = np.zeros(0), 2.0
    f = sg.compile(lambda x: sg.sum(x * scale) + sg.sum(empty))
    assert f(np.ones(2)) == 4.0


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_compiled_model_follows_its_parameters(backend):
    sg.manual_seed(0)
    model = sg.nn.Sequential(sg.nn.Linear(3, 4), sg.nn.Tanh(), sg.nn.Linear(4, 1)).double()
    f = sg.compile(lambda x: model(x), backend=backend)
    x = np.linspace(-1.0, 1.0, 6).reshape(2, 3)

    def eager():
        with sg.no_grad():
            return model(sg.tensor(x)).numpy()

    np.testing.assert_allclose(f(x), eager(), rtol=1e-12)
    optimizer = sg.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(3):  # optimizer steps change the parameters in place
        optimizer.zero_grad()
        model(sg.tensor(x)).sum().backward()
        optimizer.step()
        np.testing.assert_allclose(f(x), eager(), rtol=1e-12)
    with sg.no_grad():
        model[0].weight.data = sg.zeros(4, 3, dtype=sg.double)  # the tensor's array rebound
    np.testing.assert_allclose(f(x), eager(), rtol=1e-12)
    model[2].weight = sg.nn.Parameter(sg.ones(1, 4, dtype=sg.double))  # the parameter rebound
    np.testing.assert_allclose(f(x), eager(), rtol=1e-12)


def test_a_compiled_model_re_traces_on_eval_and_refuses_training_only_layers():
    sg.manual_seed(0)
    model = sg.nn.Sequential(sg.nn.Linear(3, 4), sg.nn.Dropout(0.5), sg.nn.BatchNorm1d(4)).double()
    f = sg.compile(lambda x: model(x))
    x = np.linspace(-1.0, 1.0, 6).reshape(2, 3)
    with pytest.raises(sg.UnsupportedOpError, match="dropout in training mode"):
        f(x)
    channels = sg.compile(lambda x: sg.nn.functional.dropout2d(x, 0.5))
    with pytest.raises(sg.UnsupportedOpError, match="dropout2d in training mode"):
        channels(np.ones((2, 3, 4, 4)))
    model[1].eval()
    with pytest.raises(sg.TracerError, match="running statistics"):
        f(x)
    model.eval()
    with sg.no_grad():
        expected = model(sg.tensor(x)).numpy()
    np.testing.assert_allclose(f(x), expected, rtol=1e-12)


def test_eager_tensors_in_uncompiled_transforms_are_constants():
    """Closing over tensors used to fail ('cannot close over traced values') after mixing them up."""
    t1, t2 = sg.tensor([1.0, 2.0, 3.0]).double(), sg.tensor([10.0, 20.0, 30.0]).double()
    x = np.ones(3)
    np.testing.assert_allclose(sg.grad(lambda x: sg.sum(x * t1 + t2 * x))(x), [11.0, 22.0, 33.0])
    value, grad = sg.value_and_grad(lambda x: sg.sum(x * t1 + t2))(x)
    assert value == 66.0
    np.testing.assert_allclose(grad, [1.0, 2.0, 3.0])
    t1.data = sg.tensor([0.0, 0.0, 1.0]).double()
    np.testing.assert_allclose(sg.grad(lambda x: sg.sum(x * t1 + t2 * x))(x), [10.0, 20.0, 31.0])


def test_reads_through_vmap_jacobian_and_custom_rules():
    W = np.array([1.0, 2.0, 3.0])
    x = np.ones((2, 3))

    @sg.custom_vjp
    def scaled(r):
        return r * W

    scaled.defvjp(lambda r: (r * W, None), lambda _, g: (g * W,))  # a rule bakes what it reads...
    batched = sg.compile(sg.vmap(lambda r: sg.sum(r * W)))
    jacobian = sg.compile(sg.jacobian(lambda r: r * W))
    custom = sg.compile(sg.grad(lambda r: sg.sum(scaled(r))))
    for _ in range(2):
        np.testing.assert_allclose(batched(x), [W.sum()] * 2)
        np.testing.assert_allclose(jacobian(x[0]), np.diag(W))
        np.testing.assert_allclose(custom(x[0]), W)  # ...and is re-traced when it changes
        W *= 2.0


def test_rows_of_a_table_read_in_a_python_loop_roll_and_re_trace_when_changed():
    table = np.linspace(0.5, 1.5, 12).reshape(4, 3)

    def f(x):
        for row in range(4):
            x = sg.sin(x * table[row]) + table[row]
        return sg.sum(x)

    def expected(x):
        for row in table:
            x = np.sin(x * row) + row
        return np.sum(x)

    compiled, x = sg.compile(f), np.array([0.1, 0.2, 0.3])
    np.testing.assert_allclose(compiled(x), expected(x), rtol=1e-12)
    table[2] *= -1.0
    np.testing.assert_allclose(compiled(x), expected(x), rtol=1e-12)


class Settings:
    scale = 2.0
    offset = np.array([1.0, 2.0])

    @classmethod
    def scaled(cls, x):
        return x * cls.scale

    def shifted(self, x):
        return self.scaled(x) + self.offset


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_class_attribute_rebound_between_calls_re_traces(backend):
    """A class's attributes were left unguarded: after Settings.scale = 3.0, sg.compile answered from the trace
    made with 2.0 (read as a global, through a classmethod's cls, or through an instance). A classmethod read
    is guarded by the class's entry, not by the fresh bound method each read makes (a trace at every call)."""
    x = np.array([1.0, -2.0])
    programs = [lambda x: x * Settings.scale + Settings.offset, lambda x: Settings.scaled(x), Settings().shifted]
    compiled = [sg.compile(f, backend=backend) for f in programs]
    grads = [sg.compile(sg.grad(lambda x, f=f: sg.sum(f(x) ** 2)), backend=backend) for f in programs]
    try:
        for step in range(3):
            for f, c, g in zip(programs, compiled, grads):
                np.testing.assert_array_equal(c(x), f(x))
                np.testing.assert_allclose(g(x), sg.grad(lambda x: sg.sum(f(x) ** 2))(x), rtol=1e-15)
            Settings.scale += 1.0
            Settings.offset = Settings.offset * 2
    finally:
        Settings.scale, Settings.offset = 2.0, np.array([1.0, 2.0])


def test_a_classmethod_read_does_not_re_trace_every_call(monkeypatch):
    from symgrad import compiler
    traces = []
    original = compiler.trace_flat
    monkeypatch.setattr(compiler, "trace_flat", lambda *a, **k: traces.append(1) or original(*a, **k))
    for program in (lambda x: Settings.scaled(x), Settings().shifted):
        traces.clear()
        f = sg.compile(program)
        for _ in range(3):
            np.testing.assert_array_equal(f(np.ones(2)), program(np.ones(2)))
        assert len(traces) == 1


class Slotted:
    __slots__ = ("scale", "w")

    def __init__(self):
        self.scale, self.w = 2.0, np.ones(2)

    def __call__(self, x):
        return x * self.scale + self.w


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_slots_of_an_object_are_guarded_and_read(backend):
    """An object with __slots__ was not walked (no __dict__): sg.compile kept the trace's scale and w after they
    were rebound or w was changed in place; uncompiled transforms traced it at every call."""
    layer, x = Slotted(), np.array([1.0, -2.0])
    steps = [lambda: None, lambda: setattr(layer, "scale", 5.0), lambda: layer.w.__setitem__(0, 4.0),
             lambda: setattr(layer, "w", np.zeros(2))]
    f, g = sg.compile(layer, backend=backend), sg.compile(sg.grad(lambda x: sg.sum(layer(x) ** 2)), backend=backend)
    for step in steps:
        step()
        np.testing.assert_array_equal(f(x), x * layer.scale + layer.w)
        np.testing.assert_allclose(g(x), 2 * (x * layer.scale + layer.w) * layer.scale, rtol=1e-15)
