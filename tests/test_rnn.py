"""nn.RNN, LSTM, GRU and their cells (symgrad/nn/rnn.py): outputs, final states and gradients against PyTorch
with the same weights (float64, skipped when absent) and against finite differences; initial states, unbatched
and empty sequences, dropout between layers, errors."""
import math

import numpy as np
import pytest

import symgrad as sg
from gradcheck import numeric_grad

CASES = [
    ("RNN", dict(num_layers=2), (5, 3, 4)),
    ("RNN", dict(nonlinearity="relu", batch_first=True, bidirectional=True), (3, 5, 4)),
    ("LSTM", dict(num_layers=2, bidirectional=True), (5, 3, 4)),
    ("LSTM", dict(batch_first=True), (3, 5, 4)),
    ("LSTM", dict(), (5, 4)),  # unbatched
    ("GRU", dict(num_layers=2, bias=False), (5, 3, 4)),
    ("GRU", dict(bidirectional=True, batch_first=True), (3, 5, 4)),
]


def _flat(value):
    return [value] if not isinstance(value, (tuple, list)) else [leaf for part in value for leaf in _flat(part)]


def _same_weights(ours, theirs):
    ours.load_state_dict({name: value.detach().numpy() for name, value in theirs.state_dict().items()})


def _states(lib, name, kw, shape, rng):
    """An initial state as PyTorch takes it, for a batched or unbatched input."""
    layers = kw.get("num_layers", 1) * (2 if kw.get("bidirectional") else 1)
    batch = () if len(shape) == 2 else (shape[0] if kw.get("batch_first") else shape[1],)
    h = [lib.tensor(rng.standard_normal((layers, *batch, 6)), requires_grad=True) for _ in range(2)]
    return (h[0], h[1]) if name == "LSTM" else h[0]


@pytest.mark.parametrize("name, kw, shape", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
@pytest.mark.parametrize("initial", [False, True])
def test_matches_pytorch_given_the_same_weights(name, kw, shape, initial):
    torch = pytest.importorskip("torch")
    ours, theirs = getattr(sg.nn, name)(4, 6, **kw), getattr(torch.nn, name)(4, 6, **kw).double()
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    _same_weights(ours, theirs)
    x = np.random.default_rng(0).standard_normal(shape)
    a, b = sg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    h_ours = _states(sg, name, kw, shape, np.random.default_rng(1)) if initial else None
    h_theirs = _states(torch, name, kw, shape, np.random.default_rng(1)) if initial else None
    mine, other = _flat(ours(a, h_ours)), _flat(theirs(b, h_theirs))
    assert [tuple(m.shape) for m in mine] == [tuple(o.shape) for o in other]
    weights = [np.random.default_rng(2 + i).standard_normal(tuple(o.shape)) for i, o in enumerate(other)]
    sum((m * sg.tensor(w)).sum() for m, w in zip(mine, weights)).backward()
    sum((o * torch.tensor(w)).sum() for o, w in zip(other, weights)).backward()
    for m, o in zip(mine, other):
        np.testing.assert_allclose(m.detach().numpy(), o.detach().numpy(), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-11, atol=1e-13)
    for (label, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-11, atol=1e-13, err_msg=label)
    if initial:
        for h, g in zip(_flat(h_ours), _flat(h_theirs)):
            np.testing.assert_allclose(h.grad.numpy(), g.grad.numpy(), rtol=1e-11, atol=1e-13)


@pytest.mark.parametrize("name", ["RNNCell", "LSTMCell", "GRUCell"])
def test_cells_match_pytorch(name):
    torch = pytest.importorskip("torch")
    ours, theirs = getattr(sg.nn, name)(4, 6), getattr(torch.nn, name)(4, 6).double()
    _same_weights(ours, theirs)
    x = np.random.default_rng(3).standard_normal((3, 4))
    for inputs in (x, x[0]):  # batched and unbatched
        a, b = sg.tensor(inputs, requires_grad=True), torch.tensor(inputs, requires_grad=True)
        mine, other = _flat(ours(a)), _flat(theirs(b))
        sum(m.sum() for m in mine).backward()
        sum(o.sum() for o in other).backward()
        for m, o in zip(mine, other):
            np.testing.assert_allclose(m.detach().numpy(), o.detach().numpy(), rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-11, atol=1e-13)


def test_a_gru_cell_without_its_input_bias_keeps_the_hidden_bias_in_place():
    """GRUCell with bias_ih set to None: the hidden bias b_hn is inside r * (W_hn h + b_hn), not an input bias (the
    cell's plan took its operands with the Nones dropped, so b_hh became b_ih)."""
    cell = sg.nn.GRUCell(3, 2)
    cell.bias_ih = None
    rng = np.random.default_rng(4)
    x, h = rng.standard_normal((2, 3)), rng.standard_normal((2, 2))
    w_ih, w_hh, b_hh = (p.detach().numpy() for p in (cell.weight_ih, cell.weight_hh, cell.bias_hh))
    xi, hh = np.split(x @ w_ih.T, 3, axis=1), np.split(h @ w_hh.T + b_hh, 3, axis=1)
    sigmoid = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
    r, z = sigmoid(xi[0] + hh[0]), sigmoid(xi[1] + hh[1])
    want = (1 - z) * np.tanh(xi[2] + r * hh[2]) + z * h
    np.testing.assert_allclose(cell(sg.tensor(x), sg.tensor(h)).detach().numpy(), want, rtol=1e-12)


@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU"])
def test_gradients_match_finite_differences(name):
    sg.manual_seed(0)
    model = getattr(sg.nn, name)(3, 4, num_layers=2, bidirectional=True)
    x = np.random.default_rng(4).standard_normal((4, 2, 3))
    ramp = np.linspace(-1, 1, 4 * 2 * 8).reshape(4, 2, 8)

    def loss(array):
        return float((model(sg.tensor(array))[0] * sg.tensor(ramp)).sum())

    t = sg.tensor(x, requires_grad=True)
    (model(t)[0] * sg.tensor(ramp)).sum().backward()
    np.testing.assert_allclose(t.grad.numpy(), numeric_grad(lambda a: sg.asarray(loss(np.asarray(a))), [x], 0),
                               rtol=1e-6, atol=1e-8)
    weight = model.weight_hh_l1_reverse
    original = weight.detach().numpy().copy()

    def loss_of_weight(w):
        with sg.no_grad():
            weight.copy_(np.asarray(w))
        return sg.asarray(loss(x))
    expected = numeric_grad(loss_of_weight, [original], 0)
    with sg.no_grad():
        weight.copy_(original)
    np.testing.assert_allclose(weight.grad.numpy(), expected, rtol=1e-6, atol=1e-8)


def test_initialization_dropout_and_errors():
    sg.manual_seed(5)
    lstm = sg.nn.LSTM(3, 8, num_layers=2, dropout=0.5)
    bound = 1 / math.sqrt(8)
    assert all(np.abs(p.detach().numpy()).max() <= bound for p in lstm.parameters())
    assert lstm.weight_ih_l0.shape == (32, 3) and lstm.weight_ih_l1.shape == (32, 8)
    x = sg.tensor(np.random.default_rng(6).standard_normal((5, 2, 3)))
    lstm.eval()
    # no dropout in eval (to rounding: the two layers' recurrences share one graph, lowered from its third call)
    np.testing.assert_allclose(lstm(x)[0].detach().numpy(), lstm(x)[0].detach().numpy(), rtol=1e-13, atol=1e-15)
    lstm.train()
    assert not np.array_equal(lstm(x)[0].detach().numpy(), lstm(x)[0].detach().numpy())  # dropout between layers
    assert repr(sg.nn.GRU(3, 4, batch_first=True)) == "GRU(3, 4, batch_first=True)"
    with pytest.raises(ValueError, match="input_size"):
        sg.nn.GRU(3, 4)(sg.tensor(np.ones((2, 1, 5))))
    with pytest.raises(RuntimeError, match="Expected hidden size"):
        sg.nn.RNN(3, 4)(sg.tensor(np.ones((2, 1, 3))), sg.tensor(np.zeros((2, 1, 4))))
    with pytest.raises(ValueError, match="nonlinearity"):
        sg.nn.RNN(3, 4, nonlinearity="sigmoid")
    with pytest.raises(sg.UnsupportedOpError, match="proj_size"):
        sg.nn.LSTM(3, 4, proj_size=2)
    for layer, proj_size, message in ((sg.nn.GRU, 2, "only supported for LSTM"), (sg.nn.RNN, 2, "only supported"),
                                      (sg.nn.LSTM, 4, "smaller than hidden_size"), (sg.nn.LSTM, -1, "positive")):
        with pytest.raises(ValueError, match=message):  # PyTorch's refusals
            layer(3, 4, proj_size=proj_size)
    with pytest.raises(RuntimeError, match="sequence length to be larger than 0"):
        sg.nn.GRU(3, 4)(sg.tensor(np.ones((0, 2, 3))))
    with pytest.raises(ValueError, match="2D or 3D"):
        sg.nn.LSTM(3, 4)(sg.tensor(np.ones(3)))


def test_flatten_parameters_is_pytorchs_no_op_on_the_cpu():
    """pytorch/examples' word_language_model calls model.rnn.flatten_parameters() after loading: an AttributeError."""
    for cls in (sg.nn.RNN, sg.nn.LSTM, sg.nn.GRU):
        rnn = cls(3, 4, 2)
        before = {name: p.detach().numpy().copy() for name, p in rnn.named_parameters()}
        assert rnn.flatten_parameters() is None
        for name, p in rnn.named_parameters():
            np.testing.assert_array_equal(p.detach().numpy(), before[name])


@pytest.mark.parametrize("kwargs", [{"num_layers": 2}, {"bidirectional": True, "bias": False}])
def test_flat_weights_names_and_all_weights_are_pytorchs(kwargs):
    """d2l's init_seq2seq walks nn.GRU's _flat_weights_names and reads _parameters[name] (an AttributeError); the
    names, the tensors they name and all_weights' grouping by layer and direction, against PyTorch's."""
    rnn = sg.nn.GRU(3, 4, **kwargs)
    assert all(rnn._flat_weights[i] is rnn._parameters[name] for i, name in enumerate(rnn._flat_weights_names))
    groups = [[name for name in rnn._flat_weights_names if name.endswith(suffix)]
              for suffix in [f"_l{layer}{direction}" for layer in range(rnn.num_layers)
                             for direction in ("", "_reverse")[:1 + rnn.bidirectional]]]
    assert [[id(w) for w in group] for group in rnn.all_weights] == [
        [id(rnn._parameters[name]) for name in group] for group in groups]
    torch = pytest.importorskip("torch")
    theirs = torch.nn.GRU(3, 4, **kwargs)
    assert rnn._flat_weights_names == theirs._flat_weights_names
    assert [[tuple(w.shape) for w in group] for group in rnn.all_weights] == [
        [tuple(w.shape) for w in group] for group in theirs.all_weights]
