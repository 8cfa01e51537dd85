"""nn.RNN, LSTM and GRU on eager tensors run each layer and direction as one compiled scan recorded as one op
(symgrad/nn/recurrence.py): every output and gradient (input, initial states, each weight) against PyTorch with
the same weights (float64 to 1e-10, float32) and finite differences, packed sequences, a sequence length that
changes between steps, a double backward, no_grad, in-place changes before backward, traces, training steps."""
import numpy as np
import pytest

import symgrad as sg
from gradcheck import numeric_grad

MODES = [("RNN", dict()), ("RNN", dict(nonlinearity="relu")), ("LSTM", dict()), ("GRU", dict())]
IDS = ["rnn_tanh", "rnn_relu", "lstm", "gru"]


def _pair(lib, mode, kw, dtype="float64"):
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    theirs = getattr(torch.nn, mode)(3, 5, **kw).to(getattr(torch, dtype))
    ours = getattr(sg.nn, mode)(3, 5, dtype=dtype, **kw)
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    return ours, theirs


def _states(lib, mode, layers, batch, dtype=np.float64):
    rng = np.random.default_rng(7)
    h = [lib.tensor(rng.standard_normal((layers, batch, 5)).astype(dtype), requires_grad=True) for _ in range(2)]
    return (h[0], h[1]) if mode == "LSTM" else h[0]


def _run(lib, module, x, hx, mode):
    """Outputs, final states and every gradient of a loss reading all of them."""
    x = lib.tensor(x, requires_grad=True)
    output, final = module(x, hx)
    finals = list(final) if mode == "LSTM" else [final]
    ramp = np.linspace(-1, 1, int(np.prod(output.shape))).reshape(tuple(output.shape)).astype(x.detach().numpy().dtype)
    loss = (output * lib.tensor(ramp)).sum() + sum((f * f).sum() for f in finals)
    loss.backward()
    states = list(hx) if mode == "LSTM" else [hx]
    return ([output.detach().numpy()] + [f.detach().numpy() for f in finals] + [x.grad.numpy()]
            + [s.grad.numpy() for s in states] + [p.grad.numpy() for p in module.parameters()])


@pytest.mark.parametrize("mode, kw", MODES, ids=IDS)
@pytest.mark.parametrize("layout", [dict(num_layers=2, bidirectional=True), dict(bias=False, batch_first=True)],
                         ids=["two_layers_bidirectional", "no_bias_batch_first"])
def test_every_output_and_gradient_matches_pytorch(mode, kw, layout):
    ours, theirs = _pair(None, mode, {**kw, **layout})
    layers = layout.get("num_layers", 1) * (2 if layout.get("bidirectional") else 1)
    x = np.random.default_rng(0).standard_normal((4, 6, 3))
    got = _run(sg, ours, x, _states(sg, mode, layers, 4 if layout.get("batch_first") else 6), mode)
    import torch
    expected = _run(torch, theirs, x, _states(torch, mode, layers, 4 if layout.get("batch_first") else 6), mode)
    assert len(got) == len(expected)
    for a, b in zip(got, expected):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_a_layer_direction_is_one_recorded_op():
    lstm = sg.nn.LSTM(3, 4)
    output, _ = lstm(sg.tensor(np.ones((5, 2, 3))))
    (fused, _), = output.grad_fn.next_functions
    assert fused.name() == "FusedRnnBackward0"
    with sg.no_grad():
        again, _ = lstm(sg.tensor(np.ones((5, 2, 3))))
    assert again.grad_fn is None and np.array_equal(again.numpy(), output.detach().numpy())


def _packed(lib, module, mode, sequences, hx):
    R = lib.nn.utils.rnn
    tensors = [lib.tensor(s, requires_grad=True) for s in sequences]
    out, final = module(R.pack_sequence(tensors, enforce_sorted=False), hx)
    padded, _ = R.pad_packed_sequence(out)
    finals = list(final) if mode == "LSTM" else [final]
    ramp = np.linspace(-1, 1, int(np.prod(padded.shape))).reshape(tuple(padded.shape))
    loss = (padded * lib.tensor(ramp)).sum() + sum((f * f).sum() for f in finals)
    loss.backward()
    states = list(hx) if mode == "LSTM" else [hx]
    return ([padded.detach().numpy()] + [f.detach().numpy() for f in finals] + [t.grad.numpy() for t in tensors]
            + [s.grad.numpy() for s in states] + [p.grad.numpy() for p in module.parameters()])


@pytest.mark.parametrize("mode, kw", MODES, ids=IDS)
def test_packed_sequences_match_pytorch_in_every_gradient(mode, kw):
    import_torch = pytest.importorskip("torch")
    ours, theirs = _pair(None, mode, {**kw, "num_layers": 2, "bidirectional": True})
    sequences = [np.random.default_rng(n).standard_normal((n, 3)) for n in (2, 5, 1, 3)]
    got = _packed(sg, ours, mode, sequences, _states(sg, mode, 4, 4))
    expected = _packed(import_torch, theirs, mode, sequences, _states(import_torch, mode, 4, 4))
    for a, b in zip(got, expected):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("mode", ["LSTM", "GRU"])
def test_packed_gradients_match_finite_differences(mode):
    sg.manual_seed(0)
    model = getattr(sg.nn, mode)(3, 5, bidirectional=True)
    sequences = [np.random.default_rng(n).standard_normal((n, 3)) for n in (3, 1, 2)]
    hx = _states(sg, mode, 2, 3)
    h0 = hx[0] if mode == "LSTM" else hx
    weight = model.weight_hh_l0_reverse

    def loss(h0_array, w_array):
        with sg.no_grad():
            h0.copy_(np.asarray(h0_array))
            weight.copy_(np.asarray(w_array))
            out, _ = model(sg.nn.utils.rnn.pack_sequence([sg.tensor(s) for s in sequences], enforce_sorted=False),
                           hx)
            return sg.asarray(float((out.data * out.data).sum()))

    h0_value, w_value = h0.detach().numpy().copy(), weight.detach().numpy().copy()
    expected = [numeric_grad(loss, [h0_value, w_value], i) for i in (0, 1)]
    with sg.no_grad():
        h0.copy_(h0_value)
        weight.copy_(w_value)
    out, _ = model(sg.nn.utils.rnn.pack_sequence([sg.tensor(s) for s in sequences], enforce_sorted=False), hx)
    (out.data * out.data).sum().backward()
    np.testing.assert_allclose(h0.grad.numpy(), expected[0], rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(weight.grad.numpy(), expected[1], rtol=1e-6, atol=1e-8)


def test_a_sequence_length_that_changes_between_steps_matches_pytorch():
    torch = pytest.importorskip("torch")
    ours, theirs = _pair(None, "LSTM", dict(num_layers=2))
    for steps, batch in [(5, 2), (3, 2), (5, 2), (7, 3), (1, 1)]:
        ours.zero_grad()
        theirs.zero_grad()
        x = np.random.default_rng(steps).standard_normal((steps, batch, 3))
        got = _run(sg, ours, x, _states(sg, "LSTM", 2, batch), "LSTM")
        expected = _run(torch, theirs, x, _states(torch, "LSTM", 2, batch), "LSTM")
        for a, b in zip(got, expected):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("mode", ["LSTM", "GRU"])
def test_float32_matches_pytorch(mode):
    torch = pytest.importorskip("torch")
    ours, theirs = _pair(None, mode, dict(bidirectional=True), dtype="float32")
    x = np.random.default_rng(0).standard_normal((6, 4, 3)).astype(np.float32)
    got = _run(sg, ours, x, _states(sg, mode, 2, 4, np.float32), mode)
    expected = _run(torch, theirs, x, _states(torch, mode, 2, 4, np.float32), mode)
    for a, b in zip(got, expected):
        assert a.dtype == np.float32
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("mode", ["LSTM", "GRU"])
def test_a_double_backward_matches_pytorch(mode):
    """create_graph=True: the input gradient's norm differentiated again with respect to the weights."""
    torch = pytest.importorskip("torch")
    ours, theirs = _pair(None, mode, dict())
    x = np.random.default_rng(0).standard_normal((4, 2, 3))
    results = []
    for lib, module in ((sg, ours), (torch, theirs)):
        t = lib.tensor(x, requires_grad=True)
        output, _ = module(t)
        (g,) = lib.autograd.grad((output * output).sum(), [t], create_graph=True)
        (g * g).sum().backward()
        results.append([g.detach().numpy()] + [p.grad.numpy() for p in module.parameters()])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_two_calls_before_one_backward_keep_their_own_values():
    """Each call's output and saved residuals are its own (the native code's buffers are not reused)."""
    torch = pytest.importorskip("torch")
    ours, theirs = _pair(None, "GRU", dict())
    xs = [np.random.default_rng(i).standard_normal((5, 2, 3)) for i in (1, 2)]
    first, _ = ours(sg.tensor(xs[0]))
    kept = first.detach().numpy().copy()
    second, _ = ours(sg.tensor(xs[1]))
    np.testing.assert_array_equal(first.detach().numpy(), kept)
    ((first * first).sum() + 2 * (second * second).sum()).backward()
    a, _ = theirs(torch.tensor(xs[0]))
    b, _ = theirs(torch.tensor(xs[1]))
    ((a * a).sum() + 2 * (b * b).sum()).backward()
    for p, q in zip(ours.parameters(), theirs.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-10, atol=1e-13)


def test_hooks_and_retain_grad_match_pytorch():
    """A tensor hook on the output, retain_grad on the final state and a module forward hook."""
    torch = pytest.importorskip("torch")
    ours, theirs = _pair(None, "GRU", dict(num_layers=2))
    results = []
    for lib, module in ((sg, ours), (torch, theirs)):
        calls = []
        module.register_forward_hook(lambda mod, args, out: calls.append(len(args)))
        x = lib.tensor(np.random.default_rng(0).standard_normal((4, 2, 3)), requires_grad=True)
        output, final = module(x)
        output.register_hook(lambda g: g * 2)
        final.retain_grad()
        (output.sum() + (final * final).sum()).backward()
        assert calls == [1]
        results.append([x.grad.numpy(), final.grad.numpy()] + [p.grad.numpy() for p in module.parameters()])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_a_weight_changed_in_place_before_backward_is_an_error():
    gru = sg.nn.GRU(3, 4)
    output, _ = gru(sg.tensor(np.ones((3, 2, 3))))
    with sg.no_grad():
        gru.weight_hh_l0.mul_(2.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        output.sum().backward()


def test_traced_calls_match_eager():
    sg.manual_seed(0)
    gru = sg.nn.GRU(3, 4, num_layers=2, bidirectional=True)
    x = np.random.default_rng(1).standard_normal((5, 2, 3))
    compiled = sg.compile(lambda a: gru(a)[0].sum())
    gradient = sg.grad(lambda a: (gru(a)[0] ** 2).sum())(x)
    t = sg.tensor(x, requires_grad=True)
    output, _ = gru(t)
    (output ** 2).sum().backward()
    np.testing.assert_allclose(compiled(x), float(output.sum()), rtol=1e-12)
    np.testing.assert_allclose(gradient, t.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_a_trace_holds_one_scan_per_layer_and_direction():
    """In sg.compile the sequence is one scan node, so the traced graph does not grow with the length."""
    gru = sg.nn.GRU(3, 4, bidirectional=True)
    compiled = sg.compile(lambda a: gru(a)[0].sum())
    short, long = (compiled.lower(np.ones((steps, 2, 3))).graph for steps in (3, 30))
    assert len(short.nodes) == len(long.nodes)
    assert str(long).count(" = scan[") == 2


def test_training_steps_and_zero_inputs_match_pytorch():
    """Three SGD steps with dropout off, from a zero input and zero initial state (hx=None)."""
    torch = pytest.importorskip("torch")
    ours, theirs = _pair(None, "LSTM", dict(num_layers=2, dropout=0.5))
    ours.eval(), theirs.eval()
    data = [np.zeros((4, 2, 3))] + [np.random.default_rng(i).standard_normal((4, 2, 3)) for i in (1, 2)]
    losses = []
    for lib, module in ((sg, ours), (torch, theirs)):
        optimizer = lib.optim.SGD(module.parameters(), lr=0.1)
        losses.append([])
        for x in data:
            optimizer.zero_grad()
            output, _ = module(lib.tensor(x))
            loss = (output * output).sum()
            loss.backward()
            optimizer.step()
            losses[-1].append(float(loss))
    np.testing.assert_allclose(losses[0], losses[1], rtol=1e-10, atol=1e-13)
    for (name, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-10, atol=1e-13, err_msg=name)


def test_a_packed_call_after_a_padded_one_of_the_same_shapes_matches_pytorch():
    """The compiled code of a packed sequence takes the running mask, a padded one does not: they are kept
    apart although every operand's shape is the same (the packed call had failed with a wrong signature)."""
    torch = pytest.importorskip("torch")
    ours, theirs = _pair(None, "LSTM", {})
    x = np.random.default_rng(1).standard_normal((5, 2, 3))
    ours(sg.tensor(x))[0].sum().backward()
    got = ours(sg.nn.utils.rnn.pack_padded_sequence(sg.tensor(x), [5, 3]))[1]
    expected = theirs(torch.nn.utils.rnn.pack_padded_sequence(torch.tensor(x), [5, 3]))[1]
    for a, b in zip(got, expected):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12)


@pytest.mark.parametrize("mode", ["RNN", "LSTM", "GRU"])
def test_numpy_write_between_forward_and_backward_reaches_the_input_projection(mode):
    """The input shared with NumPy (from_numpy) written after the forward, before backward: PyTorch's weight_ih
    gradient reads it as written (its projection saved the input), while the recurrence keeps the forward's states.
    The fused op recomputed the whole sequence from the written input (weight_ih_l0.grad off by 1.2 in the first
    step: random_programs_eager.py seed 12); the projection is now an op of its own, over op-by-op and captured
    steps alike."""
    torch = pytest.importorskip("torch")
    grads = {}
    for lib in (sg, torch):
        layer = getattr(lib.nn, mode)(2, 3, bidirectional=True, dtype=lib.float64)
        with lib.no_grad():
            for i, p in enumerate(layer.parameters()):
                p.copy_(lib.from_numpy(np.random.default_rng(i).standard_normal(tuple(p.shape)) * 0.5))
        x_np = np.random.default_rng(9).standard_normal((4, 3, 2))  # (time, batch, features)
        x = lib.from_numpy(x_np)
        seen = []
        for step in range(5):
            out, _ = layer(x[1:])
            loss = (out[-1] ** 2).sum() + out.sum()
            x_np[1 + step % 3, 1] = [0.5 - step, np.inf if step == 4 else 0.0]  # (inf: a NaN gradient in both)
            loss.backward()
            seen.append([loss.item()] + [p.grad.numpy().copy() for p in layer.parameters()])
            layer.zero_grad()
        grads[lib.__name__] = seen
    for ours, theirs in zip(grads["symgrad"], grads["torch"]):
        for a, b in zip(ours, theirs):
            np.testing.assert_allclose(a, b, rtol=1e-11, atol=1e-13)
