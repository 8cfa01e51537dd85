"""A training step holding nn.LSTM/GRU/RNN is captured whole (the layer's sequence is the fused_rnn primitive,
symgrad/nn/recurrence.py): from the third step its ops are deferred and forward and backward run as one native
call. Every step's values and gradients against PyTorch and against the general path (a hook on the output keeps
the step off the capture), in float64 to 1e-10; against finite differences; across sequence lengths that change
mid-loop; with an initial state given or not, one time step, one sequence, dropout between layers, retain_graph,
packed sequences."""
import sys

import numpy as np
import pytest

import symgrad as sg
from gradcheck import numeric_grad
from symgrad.eager import tape
from symgrad.eager.tensor import DeferredTensor

LAYOUTS = [("LSTM", dict(num_layers=2, bidirectional=True)), ("LSTM", dict(batch_first=True)),
           ("GRU", dict(batch_first=True, num_layers=2)), ("RNN", dict(nonlinearity="relu", bias=False))]
IDS = ["lstm_two_layers_bidirectional", "lstm_batch_first", "gru_two_layers", "rnn_relu_no_bias"]


def _pair(mode, kw, dtype="float64"):
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    theirs = getattr(torch.nn, mode)(3, 4, **kw).to(getattr(torch, dtype))
    ours = getattr(sg.nn, mode)(3, 4, dtype=dtype, **kw)
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    return ours, theirs


def _trio(mode, kw):
    """(the layer captured, the same layer for the general path, PyTorch's or None where torch is absent), float64,
    all three with symgrad's initialization of seed 0."""
    sg.manual_seed(0)
    ours, general = (getattr(sg.nn, mode)(3, 4, dtype="float64", **kw) for _ in range(2))
    state = {k: v.detach().numpy().copy() for k, v in ours.state_dict().items()}
    general.load_state_dict(state)
    try:
        import torch
    except ImportError:
        return ours, general, None
    theirs = getattr(torch.nn, mode)(3, 4, **kw).to(torch.float64)
    theirs.load_state_dict({k: torch.from_numpy(v) for k, v in state.items()})
    return ours, general, theirs


def _initial(lib, mode, module, batch, kind, dtype=np.float64):
    """hx: None, zeros, or a random state requiring grad (h0, or (h0, c0) for an LSTM)."""
    if kind is None:
        return None
    shape = (module.num_layers * (2 if module.bidirectional else 1), batch, module.hidden_size)
    rng = np.random.default_rng(5)
    parts = [lib.tensor(np.zeros(shape, dtype) if kind == "zeros" else rng.standard_normal(shape).astype(dtype),
                        requires_grad=kind == "random") for _ in range(2 if mode == "LSTM" else 1)]
    return tuple(parts) if mode == "LSTM" else parts[0]


def _train(lib, module, mode, inputs, hx_kind=None, hooked=False, seeds=None, deferred=None, shared=False):
    """SGD steps on a loss reading the output and the final states; per step: the loss, the output, the final
    states and every gradient (the input's, hx's, the parameters'); per step in `deferred`, whether the loss
    was deferred. `shared`: the input is from_numpy's (shared with NumPy, not requiring grad)."""
    optimizer = lib.optim.SGD(module.parameters(), lr=0.05)
    seen = []
    tape.start_over()  # (ops an earlier test recorded without a backward would shift the steps' positions)
    for step, array in enumerate(inputs):
        if seeds is not None:
            lib.manual_seed(seeds[step])
        optimizer.zero_grad()
        x = lib.from_numpy(array) if shared else lib.tensor(array, requires_grad=True)
        batch = x.shape[0] if getattr(module, "batch_first", False) else x.shape[1]
        hx = _initial(lib, mode, module, batch, hx_kind, array.dtype)
        output, final = module(x, hx)
        if hooked:
            output.register_hook(lambda g: g)  # Python sees a gradient mid-backward: the general path
        finals = list(final) if mode == "LSTM" else [final]
        ramp = np.linspace(-1, 1, int(np.prod(output.shape))).reshape(tuple(output.shape))
        loss = (output * lib.tensor(ramp.astype(array.dtype))).sum() + sum((f * f).sum() for f in finals)
        if lib is sg and not hooked and step >= 2 and inputs[step].shape == inputs[step - 1].shape == inputs[
                step - 2].shape:
            assert isinstance(loss, DeferredTensor)  # the step repeats the captured one: nothing computed yet
        if deferred is not None:
            deferred.append(isinstance(loss, DeferredTensor))
        loss.backward()
        optimizer.step()
        states = [] if hx_kind != "random" else (list(hx) if mode == "LSTM" else [hx])
        seen.append([loss.detach().numpy(), output.detach().numpy()] + [f.detach().numpy() for f in finals]
                    + ([] if shared else [x.grad.numpy()]) + [s.grad.numpy() for s in states]
                    + [p.grad.numpy().copy() for p in module.parameters()])
    return seen


def _assert_close(got, expected, rtol=1e-10, atol=1e-12):
    assert len(got) == len(expected)
    for step, (ours, theirs) in enumerate(zip(got, expected)):
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=f"step {step}")


def _check(mode, kw, inputs, **options) -> list:
    """The steps `_train` records for a captured layer, checked against the general path (a hook keeps it off the
    capture, so this runs without torch, as in CI) and against PyTorch where it is installed; they are returned."""
    ours, general, theirs = _trio(mode, kw)
    captured = _train(sg, ours, mode, inputs, **options)
    _assert_close(captured, _train(sg, general, mode, inputs, hooked=True, **options))
    if theirs is not None:
        _assert_close(captured, _train(sys.modules["torch"], theirs, mode, inputs, **options))
    return captured


def _inputs(shapes, dtype=np.float64):
    return [np.random.default_rng(k).standard_normal(shape).astype(dtype) for k, shape in enumerate(shapes)]


@pytest.mark.parametrize("mode, kw", LAYOUTS, ids=IDS)
def test_captured_steps_match_pytorch_and_the_general_path(mode, kw):
    _check(mode, kw, _inputs([(5, 2, 3)] * 5))


@pytest.mark.parametrize("hx_kind", [None, "zeros", "random"])
@pytest.mark.parametrize("shape", [(1, 3, 3), (6, 1, 3), (1, 1, 3)], ids=["one_step", "one_sequence", "one_of_both"])
def test_edge_shapes_and_initial_states_match_pytorch(shape, hx_kind):
    _check("LSTM", dict(num_layers=2), _inputs([shape] * 4), hx_kind=hx_kind)


def test_sequence_lengths_that_change_mid_loop_are_captured_again():
    """Each length is a structure of its own: a new one runs op by op, then is captured; going back to an
    earlier one finds its capture again."""
    _check("GRU", dict(bidirectional=True), _inputs([(5, 2, 3)] * 3 + [(8, 2, 3)] * 3 + [(5, 2, 3)] * 3
                                                    + [(5, 3, 3)] * 3))


@pytest.mark.parametrize("shared", [False, True], ids=["input_requires_grad", "input_from_numpy"])
@pytest.mark.parametrize("mode, kw", LAYOUTS[1:3], ids=IDS[1:3])
def test_cycled_sequence_lengths_defer_from_their_third_cycle(mode, kw, shared):
    """Lengths cycled (buckets): each is captured at its second cycle and deferred from its third, the tape taking
    whichever steady capture its ops repeat (also when the capture could not run the step that made it: a step
    computed op by op that read a from_numpy batch takes the general path); every step against PyTorch and the
    general path (PyTorch where it is installed)."""
    lengths = [4, 6, 5] * 4
    deferred = []
    _check(mode, kw, _inputs([(2, t, 3) if kw.get("batch_first") else (t, 2, 3) for t in lengths]), shared=shared,
           deferred=deferred)
    assert deferred[:12] == [False] * 6 + [True] * 6  # (the captured run's; the general path's come after)


def test_float32_steps_match_pytorch():
    torch = pytest.importorskip("torch")
    ours, theirs = _pair("LSTM", dict(batch_first=True), dtype="float32")
    inputs = _inputs([(2, 6, 3)] * 4, np.float32)
    got = _train(sg, ours, "LSTM", inputs, "random")
    assert all(a.dtype == np.float32 for a in got[-1])
    _assert_close(got, _train(torch, theirs, "LSTM", inputs, "random"), rtol=1e-4, atol=1e-5)


def test_dropout_between_layers_equals_the_general_path():
    """In training, dropout between layers draws a mask per step (symgrad's generator, not PyTorch's): the captured
    steps use the masks the general path draws for the same seeds."""
    ours, general, _ = _trio("LSTM", dict(num_layers=3, dropout=0.4))
    inputs, seeds = _inputs([(4, 2, 3)] * 4), [3, 4, 5, 6]
    _assert_close(_train(sg, ours, "LSTM", inputs, seeds=seeds),
                  _train(sg, general, "LSTM", inputs, hooked=True, seeds=seeds))


def test_a_captured_gradient_matches_finite_differences():
    sg.manual_seed(0)
    lstm = sg.nn.LSTM(3, 4)
    x = np.random.default_rng(1).standard_normal((4, 2, 3))
    h0 = sg.tensor(np.random.default_rng(2).standard_normal((1, 2, 4)), requires_grad=True)
    c0 = sg.tensor(np.random.default_rng(3).standard_normal((1, 2, 4)), requires_grad=True)
    weight = lstm.weight_hh_l0

    def loss_of(h0_array, w_array):
        with sg.no_grad():
            saved = weight.detach().numpy().copy()
            weight.copy_(np.asarray(w_array))
            output, (h, c) = lstm(sg.tensor(x), (sg.tensor(np.asarray(h0_array)), c0.detach()))
            weight.copy_(saved)
            return sg.asarray(float((output * output).sum() + (c * h).sum()))

    expected = [numeric_grad(loss_of, [h0.detach().numpy(), weight.detach().numpy()], i) for i in (0, 1)]
    tape.start_over()
    for step in range(4):
        h0.grad = weight.grad = None
        output, (h, c) = lstm(sg.tensor(x), (h0, c0))
        loss = (output * output).sum() + (c * h).sum()
        assert isinstance(loss, DeferredTensor) == (step >= 2)
        loss.backward()
        np.testing.assert_allclose(h0.grad.numpy(), expected[0], rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(weight.grad.numpy(), expected[1], rtol=1e-6, atol=1e-8)


def test_retain_graph_then_a_second_backward_on_a_captured_step():
    torch = pytest.importorskip("torch")
    ours, theirs = _pair("LSTM", dict())
    x = np.random.default_rng(0).standard_normal((5, 2, 3))
    grads = []
    for lib, module in ((sg, ours), (torch, theirs)):
        for _ in range(4):
            module.zero_grad()
            output, (h, c) = module(lib.tensor(x))
            loss = (output * output).sum() + (c * c).sum()
            loss.backward(retain_graph=True)
            loss.backward()
        grads.append([p.grad.numpy() for p in module.parameters()])
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_packed_sequences_in_captured_steps_match_pytorch():
    torch = pytest.importorskip("torch")
    ours, theirs = _pair("LSTM", dict(bidirectional=True))
    sequences = [np.random.default_rng(n).standard_normal((n, 3)) for n in (2, 5, 3)]
    seen = []
    for lib, module in ((sg, ours), (torch, theirs)):
        optimizer = lib.optim.SGD(module.parameters(), lr=0.05)
        seen.append([])
        tape.start_over()
        for step in range(4):
            optimizer.zero_grad()
            tensors = [lib.tensor(s, requires_grad=True) for s in sequences]
            out, (h, c) = module(lib.nn.utils.rnn.pack_sequence(tensors, enforce_sorted=False))
            padded, _ = lib.nn.utils.rnn.pad_packed_sequence(out)
            loss = (padded * padded).sum() + (h * c).sum()
            assert lib is torch or isinstance(loss, DeferredTensor) == (step >= 2)
            loss.backward()
            optimizer.step()
            seen[-1].append([loss.detach().numpy()] + [t.grad.numpy() for t in tensors]
                            + [p.grad.numpy().copy() for p in module.parameters()])
    _assert_close(*seen)


@pytest.mark.parametrize("mode", ["LSTM", "GRU", "RNN"])
def test_inference_calls_interpreted_then_lowered_match_pytorch(mode):
    """The first two calls of given types interpret the sequence's scan, later ones run it lowered: the same values."""
    torch = pytest.importorskip("torch")
    ours, theirs = _pair(mode, dict(bidirectional=True))
    x = np.random.default_rng(9).standard_normal((6, 2, 3))
    for _ in range(4):
        with sg.no_grad():
            output, final = ours(sg.tensor(x))
        with torch.no_grad():
            expected, expected_final = theirs(torch.tensor(x))
        finals = zip(final, expected_final) if mode == "LSTM" else [(final, expected_final)]
        for a, b in [(output, expected), *finals]:
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-14)


def test_a_double_backward_after_captured_steps_matches_pytorch():
    """create_graph on the step a capture expects: what is pending is computed and the general path replays the
    fused op's adjoint on tensors, so the input gradient's norm differentiates again."""
    torch = pytest.importorskip("torch")
    ours, theirs = _pair("GRU", dict())
    x = np.random.default_rng(0).standard_normal((4, 2, 3))
    results = []
    for lib, module in ((sg, ours), (torch, theirs)):
        for _ in range(2):
            module.zero_grad()
            (module(lib.tensor(x))[0] ** 2).sum().backward()
        module.zero_grad()
        t = lib.tensor(x, requires_grad=True)
        output, _ = module(t)
        (g,) = lib.autograd.grad((output * output).sum(), [t], create_graph=True)
        (g * g).sum().backward()
        results.append([g.detach().numpy()] + [p.grad.numpy() for p in module.parameters()])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_lowered_calls_before_one_backward_keep_their_own_values():
    """Past its interpreted calls the sequence runs lowered: each call's result is an array of its own (the native
    code's buffers are not handed out twice), with and without grad (the interpreted calls round otherwise, by
    an ulp)."""
    gru = sg.nn.GRU(3, 4)
    xs = [np.random.default_rng(i).standard_normal((5, 2, 3)) for i in range(6)]
    for grad in (True, False):
        with sg.set_grad_enabled(grad):
            outputs = [gru(sg.tensor(x))[0] for x in xs]
            kept = [gru(sg.tensor(x))[0].detach().numpy().copy() for x in xs]
        for output, expected in zip(outputs, kept):
            np.testing.assert_allclose(output.detach().numpy(), expected, rtol=1e-13, atol=1e-15)
