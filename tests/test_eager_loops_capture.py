"""Training loops of benchmarks/bench_eager_loops.py whose steps could not be deferred whole: each captured step,
deferred from the third, equals the general path (a hook keeps a step off the capture; runs without torch) and
PyTorch where it is installed, in float64 to 1e-10."""
import numpy as np
import pytest

import symgrad as sg
from symgrad.core import ShapeError
from symgrad.eager import tape
from symgrad.eager.tensor import DeferredTensor


def _torch():
    try:
        import torch
    except ImportError:
        return None
    return torch


def _train(lib, build, data, steps, hooked=False, deferred=None, after_backward=None):
    """Adam steps of build(lib) from symgrad's initialization (seed 0) on the arrays `data` (inputs, target
    indices); per step the loss, the output and every parameter's gradient and value."""
    sg.manual_seed(0)
    initial = [p.detach().numpy().copy() for p in build(sg).parameters()]
    model = build(lib)
    with lib.no_grad():
        for p, value in zip(model.parameters(), initial):
            p.copy_(lib.from_numpy(value.copy()))
    optimizer = lib.optim.Adam(model.parameters(), lr=0.01)
    seen = []
    tape.start_over()
    for step in range(steps):
        x, y = (lib.from_numpy(a.copy()) for a in data)
        optimizer.zero_grad()
        output = model(x)
        if hooked:
            output.register_hook(lambda g: g)  # Python sees a gradient mid-backward: the general path
        loss = lib.nn.functional.cross_entropy(output, y)
        if deferred is not None:
            deferred.append(isinstance(loss, DeferredTensor))
        loss.backward()
        if after_backward is not None:
            after_backward(lib, model)
        optimizer.step()
        seen.append([loss.detach().numpy(), output.detach().numpy()]
                    + [p.grad.numpy().copy() for p in model.parameters()]
                    + [p.detach().numpy().copy() for p in model.parameters()])
    return seen


def _check(build, data, steps=5, after_backward=None):
    """The captured steps (deferred from the third) against the general path and PyTorch where installed."""
    deferred = []
    captured = _train(sg, build, data, steps, deferred=deferred, after_backward=after_backward)
    assert not deferred[0] and all(deferred[2:])  # (the second step defers too when an earlier test captured it)
    references = [_train(sg, build, data, steps, hooked=True, after_backward=after_backward)]
    torch = _torch()
    if torch is not None:
        torch.set_default_dtype(torch.float64)
        try:
            references.append(_train(torch, build, data, steps, after_backward=after_backward))
        finally:
            torch.set_default_dtype(torch.float32)
    for reference in references:
        for step, (ours, theirs) in enumerate(zip(captured, reference)):
            for a, b in zip(ours, theirs):
                np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10, err_msg=f"step {step}")


def _cnn(lib):
    nn = lib.nn
    return nn.Sequential(nn.Conv2d(1, 3, 3, padding=1, dtype=lib.float64), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(3, 4, 3, dtype=lib.float64), nn.MaxPool2d(3, 2, padding=1), nn.Flatten(),
                         nn.Linear(4, 3, dtype=lib.float64))


def _images(seed=0, batch=5):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((batch, 1, 8, 8)), rng.integers(0, 3, batch)


def test_a_cnn_step_with_max_pooling_is_deferred_whole():
    """Max pooling is one primitive (first_max): its mask is no longer a comparison computed from values, which
    made every step compute its forward op by op before the captured call."""
    _check(_cnn, _images())


def test_max_pooling_ties_and_nan_in_a_captured_step():
    """Windows of equal values (ReLU's zeros, a constant image) give the gradient to the first maximum, as PyTorch;
    a NaN is the window's maximum."""
    x, y = _images(1)
    x[:, :, :4, :4] = 0.5
    _check(_cnn, (x, y))
    x[0, 0, 1, 1] = np.nan  # (the NaNs in the values and gradients where the references have them)
    _check(_cnn, (x, y), steps=4)


def test_a_steady_cnn_step_runs_no_op_by_op(computed_now):
    """In a deferred step no primitive runs op by op: the first convolution's patches of the batch (which needs no
    grad) are computed at once and its other steps deferred as one plan (Plan.split), and max pooling's plan, whose
    result viewed its own intermediate result when the step was captured, is deferred as one plan."""
    evaluated, counts = computed_now, []
    model, (x, y) = _pooling_cnn(sg, peek=False), (sg.from_numpy(a) for a in _images())
    tape.start_over()
    for _ in range(4):
        evaluated.clear()
        loss = sg.nn.functional.cross_entropy(model(x), y)
        counts.append((isinstance(loss, DeferredTensor), len(evaluated)))
        loss.backward()
    assert counts[2:] == [(True, 0), (True, 0)]


def _pooling_cnn(lib, peek=True):
    """A convolution and max pooling (bench_eager_loops.py's CNN, one layer), its pooled values read before the
    backward when `peek` (computed op by op, then the captured call)."""
    class Peek(lib.nn.Module):
        def forward(self, x):
            float(x.sum())
            return x
    nn = lib.nn
    return nn.Sequential(nn.Conv2d(1, 3, 3, padding=1, dtype=lib.float64), nn.ReLU(), nn.MaxPool2d(2),
                         *[Peek()] * peek, nn.Flatten(), nn.Linear(48, 3, dtype=lib.float64))


def test_a_pooled_value_read_before_the_backward():
    _check(_pooling_cnn, _images(2))


def test_first_max_keeps_the_element_and_its_rules_match_finite_differences():
    from gradcheck import numeric_grad
    from symgrad.ops.reduce import first_max_p
    x = np.array([[-0.0, 1.0, 2.0, np.nan], [0.0, 1.0, 3.0, 1.0], [-1.0, 0.5, 3.0, 5.0]])
    out = sg.compile(lambda a: first_max_p(a))(x)
    assert np.signbit(first_max_p.impl(x)[0]) and np.isnan(out[3]) and np.array_equal(out[:3], [0.0, 1.0, 3.0])
    a = np.random.default_rng(3).standard_normal((4, 2, 3))
    f = lambda a: sg.sum(first_max_p(a) ** 2)  # noqa: E731
    np.testing.assert_allclose(sg.grad(f)(a), numeric_grad(f, [a], 0), rtol=1e-6, atol=1e-8)
    tangent = np.ones_like(a)
    _, jvp = sg.jvp(lambda a: first_max_p(a), (a,), (tangent,))
    np.testing.assert_allclose(jvp, np.ones((2, 3)))
    ties = np.zeros((3, 2))
    np.testing.assert_array_equal(sg.grad(lambda a: sg.sum(first_max_p(a)))(ties), [[1, 1], [0, 0], [0, 0]])
    with pytest.raises(ShapeError, match="at least one value"):
        first_max_p(np.zeros((0, 2)))


def _cell_classifier(cell):
    """A classifier reading sequences (T, N, 3) one step at a time through nn.`cell`, as PyTorch's tutorials do."""

    def build(lib):
        class Classifier(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.cell = getattr(lib.nn, cell)(3, 5, dtype=lib.float64)
                self.head = lib.nn.Linear(5, 3, dtype=lib.float64)

            def forward(self, x):
                state = None
                for t in range(x.shape[0]):
                    state = self.cell(x[t], state)
                return self.head(state[0] if cell == "LSTMCell" else state)

        return Classifier()

    return build


@pytest.mark.parametrize("cell", ["RNNCell", "GRUCell", "LSTMCell"])
def test_a_python_loop_over_a_cell_is_captured(cell):
    """RNNCell and GRUCell are one cached plan per call (deferred at once), LSTMCell three (gates, c, h)."""
    rng = np.random.default_rng(4)
    _check(_cell_classifier(cell), (rng.standard_normal((6, 4, 3)), rng.integers(0, 3, 4)))


def test_cells_on_one_example_and_their_grad_fn_names():
    torch = _torch()
    x = np.random.default_rng(5).standard_normal(3)
    for cell, name in (("RNNCell", "TanhBackward0"), ("GRUCell", "AddBackward0")):
        ours = getattr(sg.nn, cell)(3, 4, dtype=sg.float64)
        out, batched = ours(sg.tensor(x, requires_grad=True)), ours(sg.tensor(x[None], requires_grad=True))
        assert out.shape == (4,) and batched.grad_fn.name() == name
        if torch is not None:
            theirs = getattr(torch.nn, cell)(3, 4).double()
            theirs.load_state_dict({k: torch.from_numpy(v.numpy().copy()) for k, v in ours.state_dict().items()})
            expected = theirs(torch.tensor(x[None]))
            assert expected.grad_fn.name() == name
            np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy()[0], rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_adamw_compiles_its_group_update_and_follows_a_schedule(dtype):
    """AdamW is Adam's formula of the decayed parameter (it updated one parameter at a time in NumPy): the update is
    compiled from the second step, the decay factor and lr are run-time inputs, and the values are PyTorch's
    algorithm written out here in NumPy (and PyTorch's own where installed)."""
    rng = np.random.default_rng(6)
    start = [rng.standard_normal((4, 3)).astype(dtype), rng.standard_normal(4).astype(dtype)]
    grads = [[rng.standard_normal(a.shape).astype(dtype) for a in start] for _ in range(6)]
    params = [sg.tensor(a.copy(), requires_grad=True) for a in start]
    optimizer = sg.optim.AdamW(params, lr=0.05, betas=(0.8, 0.9), weight_decay=0.3)
    schedule = sg.optim.lr_scheduler.StepLR(optimizer, 2, gamma=0.5)
    expected, m, v, lr = [a.copy() for a in start], [0 * a for a in start], [0 * a for a in start], 0.05
    for step, gs in enumerate(grads, 1):
        for p, g in zip(params, gs):
            p.grad = sg.tensor(g)
        optimizer.step()
        for k, g in enumerate(gs):
            expected[k] = expected[k] * dtype(1 - lr * 0.3)
            m[k] = m[k] + (g - m[k]) * dtype(1 - 0.8)
            v[k] = v[k] * dtype(0.9) + dtype(1 - 0.9) * g * g
            denom = np.sqrt(v[k]) / dtype(np.sqrt(1 - 0.9 ** step)) + dtype(1e-8)
            expected[k] = expected[k] - dtype(lr / (1 - 0.8 ** step)) * m[k] / denom
        schedule.step()
        lr = 0.05 * 0.5 ** (step // 2)
        for p, e in zip(params, expected):
            np.testing.assert_allclose(p.detach().numpy(), e, rtol=1e-10 if dtype == np.float64 else 1e-5)
    assert any(update is not None for update in optimizer._updates.values())


def _encoder(lib):
    nn, f64 = lib.nn, dict(dtype=lib.float64)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm = nn.LayerNorm(8, **f64)
            self.attention = nn.MultiheadAttention(8, 2, batch_first=True, **f64)
            self.feed_forward = nn.Sequential(nn.Linear(8, 16, **f64), nn.GELU(), nn.Linear(16, 8, **f64))
            self.head = nn.Linear(8, 3, **f64)

        def forward(self, x):
            y = self.norm(x)
            x = x + self.attention(y, y, y, need_weights=False)[0]
            a, b = (x + self.feed_forward(x)).chunk(2, dim=2)
            return self.head((a * b).repeat(1, 1, 2).mean(dim=1))

    return Block()


def test_an_encoder_block_with_chunks_is_captured():
    """MultiheadAttention's projections cut by chunk: the pieces' bounds are Python ints, so each piece replays a
    cached plan (NumPy ints went through the whole indexing front end every step)."""
    rng = np.random.default_rng(7)
    _check(_encoder, (rng.standard_normal((3, 5, 8)), rng.integers(0, 3, 3)))


def _causal_encoder(lib, padded=False):
    """Two causal TransformerEncoderLayers (the is_causal hint, the mask made every step; with `padded` a key
    padding mask too, so the mask is read), the mean over positions classified."""
    nn = lib.nn

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True, dtype=lib.float64)
            self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
            self.head = nn.Linear(8, 3, dtype=lib.float64)

        def forward(self, x):
            mask = nn.Transformer.generate_square_subsequent_mask(x.shape[1], dtype=lib.float64)
            padding = lib.tensor(np.arange(x.shape[1]) == x.shape[1] - 1).expand(x.shape[:2]) if padded else None
            out = self.encoder(x, mask=mask, src_key_padding_mask=padding, is_causal=True)
            return self.head(out.mean(dim=1))

    return Model()


@pytest.mark.parametrize("padded", [False, True])
def test_a_causal_encoder_step_is_deferred_whole(padded, computed_now, forced_now):
    """A causal encoder's step (its batch from from_numpy) is deferred whole: the causal attention is one plan (no
    op computed at once), and with a key padding mask (the general path) F.linear's check of a copy PyTorch would
    read no longer computes the pending ops to read a deferred weight's layout. Its values are the general path's
    and PyTorch's."""
    rng = np.random.default_rng(8)
    data = rng.standard_normal((3, 5, 8)), rng.integers(0, 3, 3)
    _check(lambda lib: _causal_encoder(lib, padded), data)
    model, counts = _causal_encoder(sg, padded), []
    tape.start_over()
    for _ in range(4):
        computed_now.clear()
        forced_now.clear()
        loss = sg.nn.functional.cross_entropy(model(sg.from_numpy(data[0])), sg.from_numpy(data[1]))
        deferred = isinstance(loss, DeferredTensor)
        loss.backward()
        counts.append((deferred, len(forced_now), padded or not computed_now))
    assert counts[2:] == [(True, 0, True)] * 2  # (with padding, ops on arrays that need no grad run at once)


def _plain_and_hooked(build, x, loss_of, forced_now, steps=4):
    """Train `build()` (float64, SGD) for `steps` steps on `x` with the loss `loss_of(step, out, model)`, plainly and
    with a hook on the output (the general path); assert both give the same losses and gradients, and return per
    plain step (whether its loss was deferred, how many pending ops were computed before its native call)."""
    seen, counts = [], []
    for hooked in (False, True):
        sg.manual_seed(0)
        model = build()
        optimizer = sg.optim.SGD(model.parameters(), lr=0.1)
        tape.start_over()
        for step in range(steps):
            forced_now.clear()
            optimizer.zero_grad()
            out = model(sg.from_numpy(x))
            if hooked:
                out.register_hook(lambda g: g)
            loss = loss_of(step, out, model)
            deferred = isinstance(loss, DeferredTensor)
            loss.backward()
            optimizer.step()
            counts.append((deferred, len(forced_now)))
            seen.append([loss.detach().numpy()] + [p.grad.numpy().copy() for p in model.parameters()])
    for ours, general in zip(seen[:steps], seen[steps:]):
        for a, b in zip(ours, general):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    return counts[:steps]


def _mlp(n_in, n_hidden, n_out, activation=sg.nn.Tanh):
    return sg.nn.Sequential(sg.nn.Linear(n_in, n_hidden, dtype=sg.float64), activation(),
                            sg.nn.Linear(n_hidden, n_out, dtype=sg.float64))


def test_a_loss_against_a_target_of_another_dtype_is_deferred_whole(forced_now):
    """mse_loss of a float64 output against a float32 target: its plan converts the target (no grad) at once and
    defers the rest; reading the deferred output there computed the whole step op by op. Same values as the general
    path."""
    rng = np.random.default_rng(9)
    x, target = rng.standard_normal((6, 4)), rng.standard_normal((6, 3)).astype(np.float32)
    counts = _plain_and_hooked(lambda: _mlp(4, 5, 3), x, lambda step, out, model: sg.nn.functional.mse_loss(
        out, sg.from_numpy(target)), forced_now)
    assert counts[2:4] == [(True, 0)] * 2


def test_a_step_that_is_the_start_of_another_capture_is_deferred_whole(forced_now):
    """A weight penalty added to the loss every other step: the plain step's ops are the first ops of the other
    step's capture, which the tape defers against, and its backward, at the plain step's loss, computed the step op
    by op before its own captured call; it now takes its own capture. Same values as the general path."""
    rng = np.random.default_rng(10)
    x, y = rng.standard_normal((16, 6)), rng.integers(0, 3, 16)

    def loss_of(step, out, model):
        loss = sg.nn.functional.cross_entropy(out, sg.from_numpy(y))
        return loss + 1e-2 * sum((p ** 2).sum() for p in model.parameters()) if step % 2 else loss

    counts = _plain_and_hooked(lambda: _mlp(6, 8, 3), x, loss_of, forced_now, steps=8)
    assert [forced for _, forced in counts[4:8]] == [0] * 4


@pytest.mark.parametrize("activation", ["ELU", "CELU", "SELU", "Softplus"])
def test_an_elu_step_is_deferred_whole_with_the_general_paths_values(activation, forced_now):
    """ELU, CELU, SELU and Softplus are one elementwise op: as where(x > 0, ...) their comparison ran at once, so
    every steady step computed its forward op by op at the activation. Same losses and gradients as the general path
    (hooked)."""
    x = np.random.default_rng(3).standard_normal((6, 4)) * 3  # (both branches)
    counts = _plain_and_hooked(lambda: _mlp(4, 5, 1, getattr(sg.nn, activation)), x,
                               lambda step, out, model: (out * out).mean(), forced_now)
    assert counts[2:4] == [(True, 0)] * 2
