"""Fast repeated backward: the adjoint is cached by the recorded graph's structure and lowered once."""
import importlib

import numpy as np

import symgrad as sg
from symgrad.autograd import adjoint


def _step(w, x):
    loss = sg.mean(sg.tanh(x @ w) ** 2)
    loss.backward()
    return loss


def test_same_structure_reuses_one_lowered_adjoint():
    rng = np.random.default_rng(0)
    w = sg.tensor(rng.standard_normal((3, 2)), requires_grad=True)
    before = len(adjoint._cache)
    for _ in range(5):  # new data each step, same structure
        _step(w, sg.tensor(rng.standard_normal((4, 3))))
    assert len(adjoint._cache) == before + 1
    entry = next(reversed(adjoint._cache.values()))
    assert entry.calls == 5 and entry.executable is not None


def test_new_shape_or_requires_grad_pattern_is_a_new_structure():
    rng = np.random.default_rng(1)
    w = sg.tensor(rng.standard_normal((3, 2)), requires_grad=True)
    before = len(adjoint._cache)
    _step(w, sg.tensor(rng.standard_normal((5, 3))))
    _step(w, sg.tensor(rng.standard_normal((5, 3)), requires_grad=True))
    assert len(adjoint._cache) == before + 2


def test_lowered_adjoint_matches_first_eager_evaluation():
    rng = np.random.default_rng(2)
    w_np, x_np = rng.standard_normal((3, 2)), rng.standard_normal((4, 3))
    grads = []
    for _ in range(3):
        w = sg.tensor(w_np, requires_grad=True)
        _step(w, sg.tensor(x_np))
        grads.append(w.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-13)
    np.testing.assert_allclose(grads[2], grads[0], rtol=1e-13)


def test_an_op_the_default_backend_lacks_falls_back_to_numpy(monkeypatch):
    compile_module = importlib.import_module("symgrad.compile")  # the module (sg.compile is the function)

    def lacks_everything(graph):
        raise NotImplementedError("no rule")

    monkeypatch.setitem(compile_module.BACKENDS, compile_module.default_backend(), lacks_everything)
    monkeypatch.setitem(compile_module.BACKENDS, "numpy", compile_module._numpy_lower)
    rng = np.random.default_rng(3)
    w_np, x_np = rng.standard_normal((3, 7)), rng.standard_normal((4, 3))  # a structure of its own
    grads = []
    for _ in range(2):
        w = sg.tensor(w_np, requires_grad=True)
        _step(w, sg.tensor(x_np))
        grads.append(w.grad.numpy())
    entry = next(reversed(adjoint._cache.values()))
    assert type(entry.executable).__name__ == "NumpyExecutable"
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-13)
