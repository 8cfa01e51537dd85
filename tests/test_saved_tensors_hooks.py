"""sg.autograd.graph.saved_tensors_hooks: pack_hook at the forward for each tensor an op saves, unpack_hook at the
backward, as many calls as PyTorch's for the common ops; identity, NumPy round trips and counting keep the gradients;
a hook changing the values saved is a clear error."""
import numpy as np
import pytest

import symgrad as sg

F = sg.nn.functional
X = np.linspace(-1, 1, 5)


def _programs(lib):
    """(name, f(x, w, c)) of ops whose saved tensors differ in number (PyTorch's counts are in COUNTS)."""
    return [("pow", lambda x, w, c: x.pow(2).sum()), ("x*x", lambda x, w, c: (x * x).sum()),
            ("x*c", lambda x, w, c: (x * c).sum()), ("x*2", lambda x, w, c: (x * 2.0).sum()),
            ("exp", lambda x, w, c: x.exp().sum()), ("mv", lambda x, w, c: (w @ x).sum()),
            ("x/c", lambda x, w, c: (x / (c + 1)).sum()), ("c/x", lambda x, w, c: (c / x).sum()),
            ("add", lambda x, w, c: (x + c).sum()),
            ("mlp", lambda x, w, c: lib.nn.functional.linear(lib.relu(lib.nn.functional.linear(x, w)), w[:2, :3])
             .pow(2).sum())]


COUNTS = {"pow": 1, "x*x": 2, "x*c": 1, "x*2": 0, "exp": 1, "mv": 2, "x/c": 1, "c/x": 2, "add": 0, "mlp": 6}


def _run(lib, name, f):
    calls = []
    x = lib.tensor(X, requires_grad=True)
    w = lib.tensor(np.linspace(0.5, 1.5, 15).reshape(3, 5), requires_grad=True)
    c = lib.tensor(np.arange(5.0) + 0.5)

    def pack(t):
        calls.append("pack")
        assert isinstance(t, lib.Tensor)
        return t

    def unpack(t):
        calls.append("unpack")
        return t

    with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = f(x, w, c)
    packed = len(calls)
    y.backward()
    return packed, len(calls) - packed, x.grad.numpy()


@pytest.mark.parametrize("name", list(COUNTS))
def test_pack_and_unpack_are_called_once_per_saved_tensor_as_pytorch(name):
    f = dict(_programs(sg))[name]
    packed, unpacked, grad = _run(sg, name, f)
    assert packed == unpacked == COUNTS[name]
    x = sg.tensor(X, requires_grad=True)
    f(x, sg.tensor(np.linspace(0.5, 1.5, 15).reshape(3, 5), requires_grad=True), sg.tensor(np.arange(5.0) + 0.5)) \
        .backward()
    np.testing.assert_allclose(grad, x.grad.numpy(), rtol=1e-14)  # the hooks change no gradient (the general path)
    torch = pytest.importorskip("torch")
    theirs = _run(torch, name, dict(_programs(torch))[name])
    assert theirs[:2] == (COUNTS[name], COUNTS[name])
    np.testing.assert_allclose(grad, theirs[2], rtol=1e-14)


def test_a_numpy_round_trip_and_nesting():
    x = sg.tensor(X, requires_grad=True)
    outer = []
    with sg.autograd.graph.saved_tensors_hooks(lambda t: outer.append(1) or t, lambda t: t):
        with sg.autograd.graph.saved_tensors_hooks(lambda t: t.detach().numpy().copy(), sg.from_numpy):
            y = (x.sin() * x).sum()  # innermost hooks: to NumPy and back
        z = x.cos().sum()
    (y + z).backward()
    assert outer == [1]  # cos only
    np.testing.assert_allclose(x.grad.numpy(), np.cos(X) * X + np.sin(X) - np.sin(X), rtol=1e-15)
    with sg.autograd.graph.save_on_cpu():
        w = sg.tensor(X, requires_grad=True)
        (w * w).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), 2 * X)


def test_hooks_in_a_training_loop_count_every_step():
    sg.manual_seed(0)
    model = sg.nn.Sequential(sg.nn.Linear(4, 3), sg.nn.Tanh(), sg.nn.Linear(3, 1))
    optimizer = sg.optim.SGD(model.parameters(), lr=0.1)
    data = sg.tensor(np.linspace(-1, 1, 8).reshape(2, 4))
    counts = []
    for _ in range(3):
        calls = []
        with sg.autograd.graph.saved_tensors_hooks(lambda t: calls.append("p") or t, lambda t: calls.append("u") or t):
            loss = model(data).pow(2).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        counts.append((calls.count("p"), calls.count("u")))
    assert counts[0] == counts[1] == counts[2] and counts[0][0] == counts[0][1] > 0
    calls = []
    loss = model(data).pow(2).sum()  # outside the context: no call
    loss.backward()
    assert calls == []


def test_unpack_must_give_back_the_values_packed():
    x = sg.tensor(X, requires_grad=True)
    with sg.autograd.graph.saved_tensors_hooks(lambda t: t.detach().numpy(), lambda a: sg.tensor(a * 2)):
        y = x.sin().sum()
    with pytest.raises(RuntimeError, match="other values than were packed"):
        y.backward()
    with sg.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t.detach().numpy()):
        y = x.sin().sum()
    with pytest.raises(TypeError, match="must return a Tensor"):
        y.backward()


def test_retain_graph_unpacks_again():
    calls = []
    x = sg.tensor(X, requires_grad=True)
    with sg.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: calls.append(1) or t):
        y = x.sin().sum()
    y.backward(retain_graph=True)
    y.backward()
    assert len(calls) == 2
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.cos(X), rtol=1e-15)
