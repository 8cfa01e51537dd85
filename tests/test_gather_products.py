"""Products of gathered rows computed as gathers of the table's product (passes/gather_products.py): the rewrite
itself (which graphs it changes, the same values), and training steps of an embedding into nn.LSTM/nn.Linear,
captured whole (where the rewrite applies), against PyTorch and the general path in float64 and float32, and
against finite differences (LSTM, GRU, RNN; bidirectional, two layers, batch_first or not, one time step)."""
import numpy as np
import pytest

import symgrad as sg
from gradcheck import numeric_grad
from symgrad.eager import tape, whole_backward
from symgrad.eager.tensor import DeferredTensor
from symgrad.ops.control import evaluate
from symgrad.passes.gather_products import gather_products


def _rewritten(fn, *args):
    """(graph of fn, the rewritten graph, their values on args)."""
    graph = sg.trace(fn, *args)
    new = gather_products(graph)
    return graph, new, evaluate(graph, list(args)), evaluate(new, list(args))


def _products_of_gathers(graph) -> int:
    producers = graph.producers()
    count = 0
    for node in graph.nodes:
        if node.prim.name == "matmul":
            source = node.inputs[0]
            while producers.get(id(source)) is not None and producers[id(source)].prim.name in ("reshape", "transpose"):
                source = producers[id(source)].inputs[0]
            count += producers.get(id(source)) is not None and producers[id(source)].prim.name == "take"
    return count


RNG = np.random.default_rng(0)
TABLE, W = RNG.standard_normal((5, 3)), RNG.standard_normal((3, 4))


@pytest.mark.parametrize("fn, idx", [
    (lambda e, i, w: sg.take(e, i, axis=0) @ w, np.array([0, 4, 4, 1, 2, 0, 3, 3, 1, 2])),
    (lambda e, i, w: sg.take(e, i, axis=0) @ w, np.array([-1, 0, -5, 2, 2, 1, -2, 3, 4, 0])),  # negative indices
    # embedding (2, 6) -> batch_first swap -> rows: an LSTM's input projection
    (lambda e, i, w: sg.reshape(sg.swapaxes(sg.take(e, i, axis=0), 0, 1), (12, 3)) @ w,
     np.arange(12).reshape(2, 6) % 5),
    (lambda e, i, w: sg.take(e, i, axis=0) @ w, np.arange(24).reshape(2, 3, 4) % 5),  # a batch of row blocks
])
def test_gathered_rows_times_a_matrix_become_a_gather_of_the_tables_product(fn, idx):
    graph, new, before, after = _rewritten(fn, TABLE, idx, W)
    assert _products_of_gathers(graph) == 1 and _products_of_gathers(new) == 0
    np.testing.assert_allclose(after[0], before[0], rtol=1e-14)


@pytest.mark.parametrize("fn, idx", [
    (lambda e, i, w: sg.take(e, i, axis=0) @ w, np.array([0, 1, 2, 3, 4, 0, 1, 2, 3])),  # fewer than twice the table's
    (lambda e, i, w: sg.take(e, i, axis=0) @ w, np.zeros(0, np.int64)),  # none
    (lambda e, i, w: sg.take(e.T, i, axis=1).T @ w, np.array([0, 1, 1, 2, 3, 4, 0])),  # columns, not rows
    (lambda e, i, w: sg.reshape(sg.take(e, i, axis=0), (7, 3)) @ w, np.arange(7) % 5),  # (same shape: kept)
    (lambda e, i, w: sg.reshape(sg.take(e, i, axis=0), (6, 7)) @ np.ones((7, 2)), np.arange(14) % 5),  # across rows
    (lambda e, i, w: sg.swapaxes(sg.take(e, i, axis=0), 0, 1) @ np.ones((7, 2)), np.arange(7) % 5),  # columns
])
def test_other_products_are_left_as_they_are(fn, idx):
    graph, new, before, after = _rewritten(fn, TABLE, idx, W)
    changed = new is not graph
    assert changed == (_products_of_gathers(graph) > _products_of_gathers(new))
    for a, b in zip(after, before):
        np.testing.assert_allclose(a, b, rtol=1e-14)


def _models(lib, dtype, mode="LSTM", **kw):
    """An embedding (vocabulary 7) into a recurrent layer (batch_first unless told) and a Linear head at every
    position."""
    dt = getattr(lib, dtype)
    kw = {"batch_first": True, **kw}
    width = 4 * (2 if kw.get("bidirectional") else 1)

    class Model(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = lib.nn.Embedding(7, 3, dtype=dt)
            self.rnn = getattr(lib.nn, mode)(3, 4, dtype=dt, **kw)
            self.head = lib.nn.Linear(width, 7, dtype=dt)

        def forward(self, text):
            output, _ = self.rnn(self.embed(text if kw["batch_first"] else text.T))
            output = output if kw["batch_first"] else output.transpose(0, 1)
            return self.head(output.reshape(-1, width))

    return Model()


def _train(lib, model, batches, hooked=False, steps_deferred=True):
    optimizer = lib.optim.Adam(model.parameters(), lr=0.01)
    seen = []
    tape.start_over()
    for step, text in enumerate(batches):
        optimizer.zero_grad()
        logits = model(lib.from_numpy(text[:, :-1]))
        if hooked:
            logits.register_hook(lambda g: g)  # the general path
        loss = lib.nn.functional.cross_entropy(logits, lib.from_numpy(text[:, 1:].reshape(-1)))
        if lib is sg and not hooked and steps_deferred and step >= 2:
            assert isinstance(loss, DeferredTensor)
        loss.backward()
        seen.append([loss.detach().numpy().copy()] + [p.grad.numpy().copy() for p in model.parameters()])
        optimizer.step()
    seen.append([p.detach().numpy().copy() for p in model.parameters()])
    return seen


LAYERS = [("LSTM", {}, 9, "float64"), ("LSTM", {}, 9, "float32"),
          ("GRU", dict(bidirectional=True, num_layers=2, batch_first=False), 9, "float64"),
          ("RNN", dict(nonlinearity="relu"), 2, "float64"),  # T = 1: 16 rows of one step
          ("LSTM", dict(num_layers=2), 2, "float32")]


@pytest.mark.parametrize("mode, kw, length, dtype", LAYERS, ids=["lstm", "lstm_f32", "gru_bidirectional_two_layers",
                                                                 "rnn_relu_one_step", "lstm_two_layers_one_step_f32"])
def test_an_embedding_into_a_recurrent_layer_trains_as_pytorch_and_the_general_path(mode, kw, length, dtype,
                                                                                    monkeypatch):
    rewrites = []

    def spied(graph):
        rewritten = gather_products(graph)
        rewrites.append(rewritten is not graph)
        return rewritten

    monkeypatch.setattr(whole_backward, "gather_products", spied)
    rtol = 1e-10 if dtype == "float64" else 2e-4
    batches = [np.random.default_rng(s).integers(0, 7, (16 if length == 2 else 5, length)) for s in range(5)]
    sg.manual_seed(0)
    ours, general = _models(sg, dtype, mode, **kw), _models(sg, dtype, mode, **kw)
    state = {k: v.detach().numpy().copy() for k, v in ours.state_dict().items()}
    general.load_state_dict(state)
    runs = [_train(sg, ours, batches), _train(sg, general, batches, hooked=True)]
    assert rewrites == [True]  # the one capture, rewritten
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        theirs = _models(torch, dtype, mode, **kw)
        theirs.load_state_dict({k: torch.from_numpy(v) for k, v in state.items()})
        runs.append(_train(torch, theirs, batches))
    for other in runs[1:]:
        for a, b in zip(runs[0], other):
            for x, y in zip(a, b):
                np.testing.assert_allclose(x, np.asarray(y), rtol=rtol, atol=rtol)


def test_a_captured_embedding_gradient_matches_finite_differences():
    text = np.random.default_rng(1).integers(0, 7, (3, 6))
    sg.manual_seed(0)
    model = _models(sg, "float64")
    weight = model.embed.weight

    def loss_of(table):
        with sg.no_grad():
            saved = weight.detach().numpy().copy()
            weight.copy_(np.asarray(table))
            value = float((model(sg.from_numpy(text)) ** 2).sum())
            weight.copy_(saved)
            return sg.asarray(value)

    expected = numeric_grad(loss_of, [weight.detach().numpy()], 0)
    tape.start_over()
    for step in range(4):
        model.zero_grad()
        loss = (model(sg.from_numpy(text)) ** 2).sum()
        assert isinstance(loss, DeferredTensor) == (step >= 2)
        loss.backward()
        np.testing.assert_allclose(weight.grad.numpy(), expected, rtol=1e-6, atol=1e-8)
