"""Two loops of benchmarks/bench_eager_loops.py that never captured their step: a VAE (binary_cross_entropy was an
autograd.Function, which made every tape irregular) and a GAN (a second backward per step through ops recorded before
the first; LeakyReLU's comparison made every deferred step compute op by op). Each step equals the general path (a
hook keeps a step off the capture; runs without torch) and PyTorch where it is installed, in float64 to 1e-10."""
import numpy as np
import pytest

import symgrad as sg
from symgrad.eager import engine, tape
from symgrad.eager.tensor import DeferredTensor


def _torch():
    try:
        import torch
    except ImportError:
        return None
    return torch


def _initial(build):
    sg.manual_seed(0)
    return [p.detach().numpy().copy() for p in build(sg).parameters()]


def _model(lib, build, initial):
    model = build(lib)
    with lib.no_grad():
        for p, value in zip(model.parameters(), initial):
            p.copy_(lib.from_numpy(value.copy()))
    return model


def _vae(lib):
    nn, f64 = lib.nn, dict(dtype=lib.float64)

    class VAE(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1, self.mu, self.lv = nn.Linear(12, 8, **f64), nn.Linear(8, 3, **f64), nn.Linear(8, 3, **f64)
            self.fc3, self.fc4 = nn.Linear(3, 8, **f64), nn.Linear(8, 12, **f64)

        def forward(self, x, eps):
            h = lib.relu(self.fc1(x))
            mu, lv = self.mu(h), self.lv(h)
            z = mu + eps * lib.exp(0.5 * lv)
            return lib.sigmoid(self.fc4(lib.relu(self.fc3(z)))), mu, lv

    return VAE()


def _train_vae(lib, data, steps, hooked=False, deferred=None, counts=None):
    """Adam steps of the VAE (reconstruction by binary_cross_entropy, reduction='sum', plus the KL term); per step the
    loss, the reconstruction and every parameter's gradient and value."""
    model = _model(lib, _vae, _initial(_vae))
    optimizer = lib.optim.Adam(model.parameters(), lr=0.01)
    x, eps = (lib.from_numpy(a.copy()) for a in data)
    seen = []
    tape.start_over()
    for _ in range(steps):
        if counts is not None:
            counts.clear()
        optimizer.zero_grad()
        r, mu, lv = model(x, eps)
        if hooked:
            r.register_hook(lambda g: g)  # Python sees a gradient mid-backward: the general path
        loss = lib.nn.functional.binary_cross_entropy(r, x, reduction="sum") - 0.5 * lib.sum(
            1 + lv - mu.pow(2) - lv.exp())
        if deferred is not None:
            deferred.append((isinstance(loss, DeferredTensor), None if counts is None else len(counts)))
        loss.backward()
        optimizer.step()
        seen.append([loss.detach().numpy(), r.detach().numpy()] + [p.grad.numpy().copy() for p in model.parameters()]
                    + [p.detach().numpy().copy() for p in model.parameters()])
    return seen


def _compare(captured, references):
    for reference in references:
        for step, (ours, theirs) in enumerate(zip(captured, reference)):
            for a, b in zip(ours, theirs):
                np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10, err_msg=f"step {step}")


def _with_torch(train, references):
    torch = _torch()
    if torch is not None:
        torch.set_default_dtype(torch.float64)
        try:
            references.append(train(torch))
        finally:
            torch.set_default_dtype(torch.float32)
    return references


def test_a_vae_step_with_binary_cross_entropy_is_deferred_whole(computed_now):
    """binary_cross_entropy's terms are one custom_jvp call (PyTorch's derivative as its rule), recorded as one op
    with its `result`: the step is captured, and from the third no primitive runs op by op."""
    rng = np.random.default_rng(1)
    data = (rng.random((5, 12)), rng.standard_normal((5, 3)))
    deferred = []
    captured = _train_vae(sg, data, 5, deferred=deferred, counts=computed_now)
    assert deferred[2:] == [(True, 0)] * 3
    references = _with_torch(lambda lib: _train_vae(lib, data, 5), [_train_vae(sg, data, 5, hooked=True)])
    _compare(captured, references)


def test_binary_cross_entropy_values_read_mid_step_and_saturated_probabilities():
    """A deferred step whose terms are read before the backward (computed op by op: the custom_jvp call's several
    results), retain_graph, and p exactly 0 or 1, where PyTorch's gradient is finite (the clamped logs' own is NaN)."""
    torch = _torch()
    rng = np.random.default_rng(2)
    x_np, w_np = rng.random((4, 3)), rng.standard_normal((3, 3))
    x_np[0, 0], x_np[1, 1] = 0.0, 1.0

    def run(lib):
        x, w = lib.from_numpy(x_np.copy()), lib.tensor(w_np.copy(), requires_grad=True)
        seen = []
        for step in range(5):
            p = lib.sigmoid(x @ w * 40.0)  # (saturates: some p are exactly 0 or 1)
            terms = lib.nn.functional.binary_cross_entropy(p, x, reduction="none")
            if step == 3:
                seen.append(terms.detach().numpy().copy())
            loss = terms.sum() + (p * p).mean()
            loss.backward(retain_graph=step == 4)
            if step == 4:
                loss.backward()
            seen += [loss.detach().numpy(), w.grad.numpy().copy()]
            assert np.isfinite(w.grad.numpy()).all()
            with lib.no_grad():
                w -= 0.01 * w.grad
            w.grad = None
        return seen

    tape.start_over()
    ours = run(sg)
    if torch is not None:
        torch.set_default_dtype(torch.float64)
        try:
            theirs = run(torch)
        finally:
            torch.set_default_dtype(torch.float32)
        for a, b in zip(ours, theirs):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("kind", ["jvp", "vjp"])
def test_a_custom_rule_is_the_backward_of_eager_tensors(kind):
    """sg.custom_jvp / custom_vjp called on eager tensors is one recorded op whose backward is its rule, as under
    sg.grad (it ran the function, whose own derivative the tensors took), in a captured step too."""
    if kind == "jvp":
        f = sg.custom_jvp(lambda x: sg.sin(x))
        f.defjvp(lambda primals, tangents: (f(primals[0]), 2.0 * primals[0] * tangents[0]))
    else:
        f = sg.custom_vjp(lambda x: sg.sin(x))
        f.defvjp(lambda x: (f(x), x), lambda x, g: (2.0 * x * g,))
    x_np = np.array([0.5, 1.0, -2.0])
    expected = sg.grad(lambda v: sg.sum(f(v) * v))(x_np)
    np.testing.assert_allclose(expected, 2.0 * x_np ** 2 + np.sin(x_np))
    x = sg.tensor(x_np, requires_grad=True)
    tape.start_over()
    for _ in range(4):
        (f(x) * x).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-15)
        x.grad = None


def test_leaky_relu_is_one_op_with_pytorch_values_and_gradients():
    """Its value at -0.0, NaN and infinities, its gradient (slope at 0 and for NaN), against finite differences
    away from 0 and PyTorch where installed."""
    from gradcheck import numeric_grad
    a = np.array([-2.0, -0.0, 0.0, 1.5, np.nan, np.inf, -np.inf])
    x = sg.tensor(a, requires_grad=True)
    y = sg.nn.functional.leaky_relu(x, 0.2)
    y.sum().backward()
    np.testing.assert_array_equal(y.detach().numpy(), [-0.4, -0.0, 0.0, 1.5, np.nan, np.inf, -np.inf])
    assert list(np.signbit(y.detach().numpy())) == [True, True, False, False, False, False, True]
    np.testing.assert_array_equal(x.grad.numpy(), [0.2, 0.2, 0.2, 1.0, 0.2, 1.0, 0.2])
    assert y.grad_fn.name() == "LeakyReluBackward0" and y.dtype == sg.float64
    assert sg.nn.functional.leaky_relu(sg.ones(2, dtype=sg.float32), 0.1).dtype == sg.float32
    smooth = np.array([-1.5, -0.3, 0.4, 2.0])
    f = lambda v: sg.sum(sg.nn.functional.leaky_relu(v, 0.3) ** 2)  # noqa: E731
    np.testing.assert_allclose(sg.grad(f)(smooth), numeric_grad(f, [smooth], 0), rtol=1e-7)
    torch = _torch()
    if torch is not None:
        t = torch.tensor(a, requires_grad=True)
        torch.nn.functional.leaky_relu(t, 0.2).sum().backward()
        np.testing.assert_array_equal(t.grad.numpy(), x.grad.numpy())


def _gan(lib):
    nn, f64 = lib.nn, dict(dtype=lib.float64)

    class GAN(nn.Module):
        def __init__(self):
            super().__init__()
            self.g = nn.Sequential(nn.Linear(4, 8, **f64), nn.LeakyReLU(0.2), nn.Linear(8, 2, **f64))
            self.d = nn.Sequential(nn.Linear(2, 8, **f64), nn.LeakyReLU(0.2), nn.Linear(8, 1, **f64))

    return GAN()


def _train_gan(lib, data, steps, hooked=False, general=None):
    """The usual GAN step: the discriminator's loss on real and detached fake samples, its backward and Adam step,
    then the generator's loss through the same fake samples, its backward and Adam step; `general` (a list), per
    step the backward's calls of the general path are counted into it."""
    F = lib.nn.functional
    model = _model(lib, _gan, _initial(_gan))
    od = lib.optim.Adam(model.d.parameters(), lr=1e-2, betas=(0.5, 0.999))
    og = lib.optim.Adam(model.g.parameters(), lr=1e-2, betas=(0.5, 0.999))
    real, noise = (lib.from_numpy(a.copy()) for a in data)
    ones, zeros = lib.ones(6, 1, dtype=lib.float64), lib.zeros(6, 1, dtype=lib.float64)
    seen = []
    tape.start_over()
    for _ in range(steps):
        if general is not None:
            general.append(0)
        fake = model.g(noise)
        od.zero_grad()
        judged = model.d(real)
        if hooked:
            judged.register_hook(lambda g: g)
        dl = F.binary_cross_entropy_with_logits(judged, ones) + F.binary_cross_entropy_with_logits(
            model.d(fake.detach()), zeros)
        dl.backward()
        od.step()
        og.zero_grad()
        gl = F.binary_cross_entropy_with_logits(model.d(fake), ones)
        gl.backward()
        og.step()
        seen.append([dl.detach().numpy(), gl.detach().numpy(), fake.detach().numpy().copy()]
                    + [p.grad.numpy().copy() for p in model.parameters()]
                    + [p.detach().numpy().copy() for p in model.parameters()])
    return seen


def test_a_gan_step_captures_its_first_backward(monkeypatch):
    """The generator's backward reads ops recorded before the discriminator's backward (an irregular tape, on the
    general path); the next step's tape still expects the discriminator's captured step, so that backward runs
    captured rather than op by op: one general backward per steady step."""
    general, hooked = [], []
    counts, execute = [general], engine._Backward.execute  # (the list of the run under way)

    def counted(self, *args, **kwargs):
        counts[0][-1] += 1
        return execute(self, *args, **kwargs)

    monkeypatch.setattr(engine._Backward, "execute", counted)
    rng = np.random.default_rng(3)
    data = (rng.standard_normal((6, 2)), rng.standard_normal((6, 4)))
    captured = _train_gan(sg, data, 5, general=general)
    counts[0] = hooked
    references = [_train_gan(sg, data, 5, True, hooked)]
    monkeypatch.undo()
    references = _with_torch(lambda lib: _train_gan(lib, data, 5), references)
    assert general[2:] == [1, 1, 1] and hooked == [2] * 5
    _compare(captured, references)
