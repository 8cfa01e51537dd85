"""Python loops in a captured eager step: the step's forward is rolled into a scan before it is differentiated
(symgrad.eager.whole_backward._fused, passes.reroll), and its values and gradients stay those of the loop run op
by op, of PyTorch and of finite differences. Every test runs several steps: the first op by op, the second
captured, the later ones deferred against the capture.
"""

import numpy as np
import pytest

import symgrad as sg
from symgrad.eager import whole_backward

T, N, I, H = 20, 3, 4, 5


def _weights(seed=0, gates=1):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((I, gates * H)) / 2, rng.standard_normal((H, gates * H)) / 2,
            rng.standard_normal(gates * H) / 4], rng.standard_normal((T, N, I))


def _rolled_captures() -> int:
    """How many captured steps were lowered with a loop rolled."""
    return sum(capture.rows is not None for capture in whole_backward._cache.values()
               if isinstance(capture, whole_backward.Capture))


def _rnn(lib, x, wx, wh, b, steps=T, kept=None):
    h = lib.zeros(N, H, dtype=lib.float64)
    for t in range(steps):
        h = lib.tanh(x[t] @ wx + h @ wh + b)
        if kept is not None:
            kept.append(h)
    return h


def _lstm(lib, x, wx, wh, b, steps=T, kept=None):
    """A hand-written LSTM cell: gates by chunk, a Python number in the step."""
    h = c = lib.zeros(N, H, dtype=lib.float64)
    for t in range(steps):
        i, f, g, o = (x[t] @ wx + h @ wh + b).chunk(4, 1)
        c = lib.sigmoid(f) * c + lib.sigmoid(i) * lib.tanh(g) * 0.5
        h = lib.sigmoid(o) * lib.tanh(c)
        if kept is not None:
            kept.append(h)
    return h


def _train(lib, cell, weights, x, steps, lengths=None, loss_of=None):
    """Per step: (loss, the kept states' values, the gradients), then one SGD step."""
    params = [lib.tensor(w, requires_grad=True) for w in weights]
    optimizer = lib.optim.SGD(params, lr=0.05)
    x = lib.tensor(x)
    seen = []
    for step in range(steps):
        optimizer.zero_grad()
        kept = []
        h = cell(lib, x, *params, steps=lengths[step] if lengths else T, kept=kept)
        loss = loss_of(lib, h, kept) if loss_of else (h * h).mean()
        loss.backward()
        seen.append([loss.item(), *[k.detach().numpy().copy() for k in kept], *[p.grad.numpy().copy() for p in params]])
        optimizer.step()
    return seen


def _assert_same(ours, theirs):
    for step, (a, b) in enumerate(zip(ours, theirs)):
        assert len(a) == len(b)
        for u, v in zip(a, b):
            np.testing.assert_allclose(u, v, rtol=1e-10, atol=1e-12, err_msg=f"step {step}")


@pytest.mark.parametrize("cell, gates", [(_rnn, 1), (_lstm, 4)])
def test_a_recurrent_loop_is_captured_rolled_and_trains_as_pytorch(lowerings, cell, gates):
    torch = pytest.importorskip("torch")
    weights, x = _weights(gates=gates)
    ours = _train(sg, cell, weights, x, 5)
    assert _rolled_captures() == 1
    _assert_same(ours, _train(torch, cell, weights, x, 5))


def test_every_state_kept_and_stacked_matches_pytorch(lowerings):
    """Each h_t held by the user is a row of the scan's stacked values; a loss of their stack reads them all."""
    torch = pytest.importorskip("torch")
    weights, x = _weights(1)

    def loss_of(lib, h, kept):
        return (lib.stack(kept) ** 2).mean() + kept[3].sum() * 0.25

    ours = _train(sg, _rnn, weights, x, 5, loss_of=loss_of)
    assert _rolled_captures() == 1
    _assert_same(ours, _train(torch, _rnn, weights, x, 5, loss_of=loss_of))


def test_a_loop_whose_length_changes_between_steps(lowerings):
    torch = pytest.importorskip("torch")
    weights, x = _weights(2)
    lengths = [T, T - 3, T, T - 3, 17, T]
    ours = _train(sg, _rnn, weights, x, len(lengths), lengths)
    assert _rolled_captures() == 2  # T and T - 3 came twice each (17 only once: never captured)
    _assert_same(ours, _train(torch, _rnn, weights, x, len(lengths), lengths))


def test_a_loop_with_a_data_dependent_break(lowerings):
    """Reading a value in the loop computes the step op by op; the captured backward checks it and recomputes it."""
    torch = pytest.importorskip("torch")
    weights, x = _weights(3)
    x[T - 2:] *= 40  # the break comes late in the sequence

    def broken(lib, x, wx, wh, b, steps=T, kept=None):
        h = lib.zeros(N, H, dtype=lib.float64)
        for t in range(steps):
            h = lib.tanh(x[t] @ wx + h @ wh + b)
            if h.abs().max().item() > 0.9999:
                break
        return h

    ours = _train(sg, broken, weights, x, 4)
    assert _rolled_captures() == 1
    _assert_same(ours, _train(torch, broken, weights, x, 4))


def test_gradients_of_a_rolled_step_match_finite_differences(lowerings):
    weights, x = _weights(4)

    def loss(ws):
        h = np.zeros((N, H))
        for t in range(T):
            h = np.tanh(x[t] @ ws[0] + h @ ws[1] + ws[2])
        return float(np.mean(h * h))

    params = [sg.tensor(w, requires_grad=True) for w in weights]
    for _ in range(3):
        for p in params:
            p.grad = None
        h = _rnn(sg, sg.tensor(x), *params)
        (h * h).mean().backward()
    assert _rolled_captures() == 1
    eps = 1e-6
    for k, w in enumerate(weights):
        numeric = np.zeros_like(w)
        for index in np.ndindex(w.shape):
            plus, minus = [v.copy() for v in weights], [v.copy() for v in weights]
            plus[k][index] += eps
            minus[k][index] -= eps
            numeric[index] = (loss(plus) - loss(minus)) / (2 * eps)
        np.testing.assert_allclose(params[k].grad.numpy(), numeric, rtol=1e-6, atol=1e-9)


def test_zero_inputs_and_an_empty_batch(lowerings):
    """Edge values through the rolled step: an all-zero sequence (gradients of zeros where nothing reaches) and a
    batch of no rows."""
    torch = pytest.importorskip("torch")
    weights, _ = _weights(5)
    _assert_same(_train(sg, _rnn, weights, np.zeros((T, N, I)), 4),
                 _train(torch, _rnn, weights, np.zeros((T, N, I)), 4))

    def empty(lib, x, wx, wh, b, steps=T, kept=None):
        h = lib.zeros(0, H, dtype=lib.float64)
        for t in range(steps):
            h = lib.tanh(x[t] @ wx + h @ wh + b)
        return h

    def loss_of(lib, h, kept):
        return h.sum()

    x = np.zeros((T, 0, I))
    _assert_same(_train(sg, empty, weights, x, 4, loss_of=loss_of),
                 _train(torch, empty, weights, x, 4, loss_of=loss_of))


def test_a_long_loop_rolls_once(lowerings):
    """70 steps: the stack of the steps' x[t] before the loop is as many reshapes, which must not roll again."""
    torch = pytest.importorskip("torch")
    weights, _ = _weights(6)
    x = np.random.default_rng(6).standard_normal((70, N, I))
    ours = _train(sg, _rnn, weights, x, 3, [70] * 3)
    assert _rolled_captures() == 1
    _assert_same(ours, _train(torch, _rnn, weights, x, 3, [70] * 3))


def test_a_rolled_step_backward_twice_with_retain_graph(lowerings):
    """A capture made by a backward with retain_graph returns every value of the step (rows of the scan's stacks
    too), which a second backward through the same graph reads."""
    torch = pytest.importorskip("torch")
    weights, x = _weights(7)
    seen = {}
    for lib in (sg, torch):
        params = [lib.tensor(w, requires_grad=True) for w in weights]
        xs = lib.tensor(x)
        seen[lib] = []
        for _ in range(4):
            kept = []
            h = _rnn(lib, xs, *params, kept=kept)
            loss = (h * h).mean() + kept[2].sum()
            loss.backward(retain_graph=True)
            loss.backward()
            seen[lib].append([loss.item(), kept[7].detach().numpy().copy(), *[p.grad.numpy().copy() for p in params]])
            for p in params:
                p.grad = None
    assert _rolled_captures() == 1
    _assert_same(seen[sg], seen[torch])
