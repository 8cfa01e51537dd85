"""Fast repeated backward: the adjoint is cached by the recorded graph's structure and lowered once."""
import numpy as np
import pytest

import symgrad as sg
from symgrad import backends
from symgrad.eager import adjoint


def _step(w, x):
    loss = sg.mean(sg.tanh(x @ w) ** 2)
    loss.backward()
    return loss



def test_same_structure_reuses_one_lowered_adjoint(lowerings):
    """The first step runs op by op; the second lowers the step's adjoint; the others reuse it."""
    rng = np.random.default_rng(0)
    w = sg.tensor(rng.standard_normal((3, 2)), requires_grad=True)
    before = len(adjoint._cache)
    for _ in range(5):  # new data each step, same structure
        _step(w, sg.tensor(rng.standard_normal((4, 3))))
    assert len(adjoint._cache) == before + 1 and len(lowerings) == 1


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


def test_an_op_the_default_backend_lacks_falls_back_to_numpy(monkeypatch, lowerings):
    def never_called(graph, structure=None):
        raise AssertionError("a graph the default backend cannot lower reached it")

    monkeypatch.setitem(backends.RULE_CHECKS, backends.default_backend(), lambda prim: prim.name != "matmul")
    monkeypatch.setitem(backends.BACKENDS, backends.default_backend(), never_called)
    rng = np.random.default_rng(3)
    w_np, x_np = rng.standard_normal((3, 7)), rng.standard_normal((4, 3))  # a structure of its own
    grads = []
    for _ in range(2):
        w = sg.tensor(w_np, requires_grad=True)
        _step(w, sg.tensor(x_np))
        grads.append(w.grad.numpy())
    assert [type(e).__name__ for e in lowerings] == ["NumpyExecutable"]
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-13)


def _annealed_step(w, x, y, beta, lr):
    """One step of a loop whose loss weight and learning rate are Python floats that change every step."""
    loss = sg.sum((w * x - y) ** 2) * beta + 0.5 * sg.sum(w * w)
    loss.backward()
    with sg.no_grad():
        w -= lr * w.grad
    w.grad = None
    return loss


def test_a_python_number_that_changes_every_step_keeps_one_compiled_adjoint(lowerings):
    """Numbers are run-time inputs of the plans and of the recorded graph, not part of its structure:
    changing them re-derives nothing, and from the second step on the lowered adjoint runs."""
    from symgrad.eager import plans
    from symgrad.ops.ew import derivative
    rng = np.random.default_rng(4)
    x, y = rng.standard_normal((6, 5)), rng.standard_normal((6, 5))
    w_np = rng.standard_normal(5)
    w = sg.tensor(w_np, requires_grad=True)
    _annealed_step(w, sg.tensor(x), sg.tensor(y), 0.9, 0.01)  # first sight of the structure
    entries, plan_count, derivations = len(adjoint._cache), len(plans._plans), derivative.cache_info().misses
    w_np = w_np - 0.01 * (2 * 0.9 * np.sum((w_np * x - y) * x, axis=0) + w_np)
    for step in range(1, 8):
        beta, lr = 0.9 / (1 + 0.37 * step), 0.01 * 0.93 ** step
        loss = _annealed_step(w, sg.tensor(x), sg.tensor(y), beta, lr)
        assert loss.item() == pytest.approx(beta * np.sum((w_np * x - y) ** 2) + 0.5 * np.sum(w_np ** 2), rel=1e-12)
        w_np = w_np - lr * (2 * beta * np.sum((w_np * x - y) * x, axis=0) + w_np)
        np.testing.assert_allclose(w.detach().numpy(), w_np, rtol=1e-12)
    assert len(adjoint._cache) == entries and len(lowerings) == 1
    assert len(plans._plans) == plan_count and derivative.cache_info().misses == derivations


def test_numbers_as_operands_keep_numpy_promotion_and_the_structural_exponent():
    x32 = sg.tensor(np.array([1.0, 2.0], np.float32), requires_grad=True)
    assert (x32 * 0.1).dtype == np.float32 and (0.1 - x32).dtype == np.float32 and (x32 > 0.5).dtype == bool
    assert (sg.tensor([1, 2]) * 0.5).dtype == np.float64 and (sg.tensor([1, 2]) + 1).dtype == np.int64
    np.testing.assert_array_equal((x32 * 0.1).detach().numpy(), np.array([1.0, 2.0], np.float32) * np.float32(0.1))
    with sg.no_grad():  # comparisons and masks keep working with numbers
        assert sg.where(x32 > 1.5, x32, 0.0).tolist() == [0.0, 2.0]
    x = sg.tensor([0.0, 3.0], requires_grad=True)
    (x ** 2).sum().backward()  # the exponent stays in the expression: the adjoint is 2*x
    assert x.grad.tolist() == [0.0, 6.0]
    record = (x * 2.5).grad_fn
    assert record.name() == "MulBackward0" and len(record.parents) == 2 and record.parents[1] is None
    with pytest.raises(sg.ShapeError, match=r"shapes \(3,\) and \(2,\)\n"):  # the number is not in the message
        sg.where(sg.tensor([True, False, True]), x, 0.0)


def test_a_functions_plan_tells_a_negative_zero_argument_from_zero():
    """A namespace function's plan is keyed by its plain arguments, where -0.0 == 0.0: the second call was given the
    first's plan (its zeros unsigned), as NumPy's are not."""
    x, t = sg.tensor([0.5, -0.5]), sg.tensor([np.nan, 1.0])
    for zero in (0.0, -0.0):
        want = np.pad(x.numpy(), 1, constant_values=zero)
        for padded in (sg.pad(x, 1, constant_values=zero), sg.pad(x, 1, "constant", zero)):
            np.testing.assert_array_equal(np.signbit(padded.numpy()), np.signbit(want))
        np.testing.assert_array_equal(np.signbit(sg.nan_to_num(t, nan=zero).numpy()), [np.signbit(zero), False])
    for step in range(4):  # in a training step that defers, through a call's shortcut
        w = sg.tensor([1.0, -1.0], requires_grad=True)
        zero = -0.0 if step % 2 else 0.0
        padded = sg.pad(w * 2.0, 1, constant_values=zero)
        padded.sum().backward()
        assert np.signbit(padded.detach().numpy()[0]) == (step % 2 == 1) and w.grad.tolist() == [2.0, 2.0]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_eager_with_numbers_matches_the_functional_gradient(dtype):
    """The functional transform bakes numbers into the expression; eager passes them at run time."""
    def f(v):
        return sg.sum(sg.clip(v * 0.7 - 0.2, -1.0, 1.0) / 3.0 + sg.maximum(v, 0.25) * 2) + sg.sum(1.5 / (v + 4))

    v = np.array([-2.0, -0.3, 0.0, 0.25, 0.9, 3.0], dtype)
    expected = sg.grad(f)(v)
    for _ in range(3):  # first (op by op) and lowered adjoint
        t = sg.tensor(v, requires_grad=True)
        f(t).backward()
        assert t.grad.dtype == dtype
        np.testing.assert_allclose(t.grad.numpy(), expected, rtol=1e-6 if dtype == np.float32 else 1e-14)


def _backward_twice_through_saved_number(lib):
    """A number operand is saved like a tensor (PyTorch saves it as a wrapped tensor): after one
    backward it is freed, and a second backward through it raises; a graph that saved nothing
    (the derivative of x - 1 reads nothing) can be run backward again."""
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = (x - 1.0).sum()
    y.backward()
    y.backward()
    assert x.grad.tolist() == [2.0, 2.0]
    z = (x * 2.5).sum()
    z.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        z.backward()
    z = (x * 2.5).sum()
    z.backward(retain_graph=True)
    z.backward()
    assert x.grad.tolist() == [9.5, 9.5]  # 2 + 2.5 + 2 * 2.5: the failed backward added nothing


def test_a_number_operand_is_saved_and_freed_as_in_pytorch():
    _backward_twice_through_saved_number(sg)


def test_torch_frees_a_number_operand_too():
    _backward_twice_through_saved_number(pytest.importorskip("torch"))
