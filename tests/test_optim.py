"""sg.optim: SGD and Adam follow PyTorch's update formulas (checked by hand and against PyTorch)."""
import numpy as np
import pytest

import symgrad as sg

RNG = np.random.default_rng(4)


def _quadratic_step(optimizer, p, target):
    optimizer.zero_grad()
    loss = ((p - sg.tensor(target)) ** 2).sum()
    loss.backward()
    optimizer.step()


def test_sgd_momentum_nesterov_weight_decay_by_hand():
    start, target = np.array([1.0, -2.0]), np.array([0.5, 0.5])
    p = sg.tensor(start, requires_grad=True)
    opt = sg.optim.SGD([p], lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)
    value, buffer = start.copy(), None
    for _ in range(3):
        _quadratic_step(opt, p, target)
        d = 2 * (value - target) + 0.01 * value
        buffer = d if buffer is None else 0.9 * buffer + d
        value = value - 0.1 * (d + 0.9 * buffer)
        np.testing.assert_allclose(p.detach().numpy(), value, rtol=1e-14)


def test_adam_by_hand_with_bias_correction():
    start, target = np.array([1.0, -2.0]), np.array([0.5, 0.5])
    p = sg.tensor(start, requires_grad=True)
    opt = sg.optim.Adam([p], lr=0.1)
    value, m, v = start.copy(), np.zeros(2), np.zeros(2)
    for t in range(1, 4):
        _quadratic_step(opt, p, target)
        g = 2 * (value - target)
        m, v = 0.9 * m + 0.1 * g, 0.999 * v + 0.001 * g * g
        value = value - 0.1 / (1 - 0.9 ** t) * m / (np.sqrt(v) / np.sqrt(1 - 0.999 ** t) + 1e-8)
        np.testing.assert_allclose(p.detach().numpy(), value, rtol=1e-12)


def test_zero_grad_and_parameters_without_grad():
    p, q = sg.tensor([1.0], requires_grad=True), sg.tensor([2.0], requires_grad=True)
    opt = sg.optim.SGD([{"params": [p]}, {"params": [q], "lr": 0.5}], lr=0.1)
    (p * 3).sum().backward()
    opt.step()  # q has no gradient: left alone
    assert p.item() == pytest.approx(0.7) and q.item() == 2.0
    opt.zero_grad(set_to_none=False)
    assert p.grad.item() == 0.0
    opt.zero_grad()
    assert p.grad is None
    with pytest.raises(ValueError, match="Nesterov"):
        sg.optim.SGD([p], lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="non-leaf"):
        sg.optim.SGD([p * 2], lr=0.1)


@pytest.mark.parametrize("name, options", [
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.1, weight_decay=1e-3)),
    ("SGD", dict(lr=0.05, momentum=0.8, nesterov=True)),
    ("Adam", dict(lr=0.01, betas=(0.8, 0.99), eps=1e-6, weight_decay=1e-2)),
    ("Adam", dict(lr=0.01, amsgrad=True)),
    ("AdamW", dict(lr=0.01, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1)),
    ("AdamW", dict(lr=0.02, amsgrad=True, maximize=True)),
    ("Adam", dict(lr=0.01, betas=(0.8, 0.99), weight_decay=0.1, decoupled_weight_decay=True)),
    ("Adam", dict(lr=0.02, weight_decay=0.05, amsgrad=True, maximize=True, decoupled_weight_decay=True)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, alpha=0.9, eps=1e-6, weight_decay=0.01, momentum=0.8, centered=True)),
    ("RMSprop", dict(lr=0.005, alpha=0.3, momentum=0.5, maximize=True)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.05, weight_decay=0.01, initial_accumulator_value=0.3, eps=1e-6)),
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.8, eps=1e-5, weight_decay=0.01, maximize=True)),
    ("Adamax", dict(lr=0.01)),
    ("Adamax", dict(lr=0.02, betas=(0.8, 0.9), eps=1e-6, weight_decay=0.01)),
    ("NAdam", dict(lr=0.01)),
    ("NAdam", dict(lr=0.01, betas=(0.8, 0.99), weight_decay=0.1, momentum_decay=0.01, decoupled_weight_decay=True)),
    ("NAdam", dict(lr=0.01, weight_decay=0.05)),
    ("RAdam", dict(lr=0.01)),  # rho_t passes 5 at the 6th step: both branches
    ("RAdam", dict(lr=0.01, betas=(0.9, 0.9), weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", dict(lr=0.01, weight_decay=0.05, maximize=True)),
])
def test_training_matches_pytorch(name, options):
    torch = pytest.importorskip("torch")
    x, y = RNG.standard_normal((16, 3)), RNG.integers(0, 2, 16)
    model = sg.nn.Sequential(sg.nn.Linear(3, 5), sg.nn.Tanh(), sg.nn.Linear(5, 2))
    tmodel = torch.nn.Sequential(torch.nn.Linear(3, 5), torch.nn.Tanh(), torch.nn.Linear(5, 2)).double()
    with torch.no_grad():
        for p, q in zip(model.parameters(), tmodel.parameters()):
            q.copy_(torch.tensor(p.detach().numpy()))
    opt = getattr(sg.optim, name)(model.parameters(), **options)
    topt = getattr(torch.optim, name)(tmodel.parameters(), **options)
    for _ in range(10):
        opt.zero_grad()
        sg.nn.CrossEntropyLoss()(model(sg.tensor(x)), y).backward()
        opt.step()
        topt.zero_grad()
        torch.nn.CrossEntropyLoss()(tmodel(torch.tensor(x)), torch.tensor(y)).backward()
        topt.step()
    for p, q in zip(model.parameters(), tmodel.parameters()):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-10, atol=1e-12)


def _decoupled_and_l2_groups(lib, model, **flags):
    """Adam over two groups, the first with AdamW's decoupled weight decay, the second with L2 weight decay."""
    params = list(model.parameters())
    return lib.optim.Adam([{"params": params[:2], "decoupled_weight_decay": True}, {"params": params[2:]}],
                          lr=0.01, weight_decay=0.1, **flags)


def test_adam_decoupled_weight_decay_per_group():
    """PyTorch 2's Adam takes decoupled_weight_decay (AdamW's update), per group: each group's formula, compiled
    from the second step, reads its own flag, and the flag is kept by state_dict() and load_state_dict()."""
    x, y = RNG.standard_normal((16, 3)), RNG.integers(0, 2, 16)
    build = lambda lib: lib.nn.Sequential(lib.nn.Linear(3, 5), lib.nn.Tanh(), lib.nn.Linear(5, 2))  # noqa: E731

    def train(lib, model, optimizers, steps):
        for _ in range(steps):
            for o in optimizers:
                o.zero_grad()
            lib.nn.CrossEntropyLoss()(model(lib.tensor(x)), lib.tensor(y)).backward()
            for o in optimizers:
                o.step()

    def flip(optimizer):  # each group's flag the other way, through the state dict
        saved = optimizer.state_dict()
        saved["param_groups"] = [{**g, "decoupled_weight_decay": not g["decoupled_weight_decay"]}
                                 for g in saved["param_groups"]]
        optimizer.load_state_dict(saved)

    model, alone = build(sg), build(sg)
    alone.load_state_dict(model.state_dict())
    start = [p.detach().numpy().copy() for p in model.parameters()]
    opt = _decoupled_and_l2_groups(sg, model)
    params = list(alone.parameters())
    train(sg, model, [opt], 6)
    train(sg, alone, [sg.optim.AdamW(params[:2], lr=0.01, weight_decay=0.1),
                      sg.optim.Adam(params[2:], lr=0.01, weight_decay=0.1)], 6)
    for a, b in zip(model.parameters(), alone.parameters()):  # (a group's kernel may round otherwise: 1 ulp)
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-14, atol=1e-16)
    assert [g["decoupled_weight_decay"] for g in opt.state_dict()["param_groups"]] == [True, False]
    flip(opt)
    assert [g["decoupled_weight_decay"] for g in opt.param_groups] == [False, True]
    train(sg, model, [opt], 4)
    torch = pytest.importorskip("torch")
    tmodel = build(torch).double()
    with torch.no_grad():
        for value, q in zip(start, tmodel.parameters()):
            q.copy_(torch.tensor(value))
    topt = _decoupled_and_l2_groups(torch, tmodel)
    train(torch, tmodel, [topt], 6)
    flip(topt)
    train(torch, tmodel, [topt], 4)
    for p, q in zip(model.parameters(), tmodel.parameters()):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-10, atol=1e-12)


def test_adamw_rmsprop_adagrad_by_hand():
    start, target = np.array([1.0, -2.0]), np.array([0.5, 0.5])
    p, q, r = (sg.tensor(start, requires_grad=True) for _ in range(3))
    adamw = sg.optim.AdamW([p], lr=0.1, weight_decay=0.5)
    rms = sg.optim.RMSprop([q], lr=0.01, alpha=0.9, momentum=0.5, centered=True, weight_decay=0.1)
    ada = sg.optim.Adagrad([r], lr=0.1, lr_decay=0.5, initial_accumulator_value=0.2)
    vp, m, v = start.copy(), np.zeros(2), np.zeros(2)
    vq, sq, ga, buf = start.copy(), np.zeros(2), np.zeros(2), np.zeros(2)
    vr, total = start.copy(), np.full(2, 0.2)
    for t in range(1, 12):
        for opt, x in ((adamw, p), (rms, q), (ada, r)):
            _quadratic_step(opt, x, target)
        g = 2 * (vp - target)
        vp = vp * (1 - 0.1 * 0.5)
        m, v = 0.9 * m + 0.1 * g, 0.999 * v + 0.001 * g * g
        vp = vp - 0.1 / (1 - 0.9 ** t) * m / (np.sqrt(v) / np.sqrt(1 - 0.999 ** t) + 1e-8)
        g = 2 * (vq - target) + 0.1 * vq
        sq, ga = 0.9 * sq + 0.1 * g * g, 0.9 * ga + 0.1 * g
        buf = 0.5 * buf + g / (np.sqrt(sq - ga * ga) + 1e-8)
        vq = vq - 0.01 * buf
        g = 2 * (vr - target)
        total = total + g * g
        vr = vr - 0.1 / (1 + (t - 1) * 0.5) * g / (np.sqrt(total) + 1e-10)
        for x, expected in ((p, vp), (q, vq), (r, vr)):
            np.testing.assert_allclose(x.detach().numpy(), expected, rtol=1e-12)


def test_adadelta_and_adamax_by_hand():
    start, target = np.array([1.0, -2.0]), np.array([0.5, 0.5])
    p, q = sg.tensor(start, requires_grad=True), sg.tensor(start, requires_grad=True)
    adadelta, adamax = sg.optim.Adadelta([p], lr=0.5, rho=0.8), sg.optim.Adamax([q], lr=0.1)
    vp, square, accumulated = start.copy(), np.zeros(2), np.zeros(2)
    vq, m, u = start.copy(), np.zeros(2), np.zeros(2)
    for t in range(1, 6):
        _quadratic_step(adadelta, p, target)
        _quadratic_step(adamax, q, target)
        g = 2 * (vp - target)
        square = 0.8 * square + 0.2 * g * g
        delta = np.sqrt(accumulated + 1e-6) / np.sqrt(square + 1e-6) * g
        accumulated = 0.8 * accumulated + 0.2 * delta * delta
        vp = vp - 0.5 * delta
        g = 2 * (vq - target)
        m, u = 0.9 * m + 0.1 * g, np.maximum(0.999 * u, np.abs(g) + 1e-8)
        vq = vq - 0.1 / (1 - 0.9 ** t) * m / u
        np.testing.assert_allclose(p.detach().numpy(), vp, rtol=1e-12)
        np.testing.assert_allclose(q.detach().numpy(), vq, rtol=1e-12)


@pytest.mark.parametrize("name, options", [("AdamW", dict(lr=-1.0)), ("RMSprop", dict(alpha=-0.1)),
                                           ("RMSprop", dict(momentum=-1)), ("Adagrad", dict(lr_decay=-1)),
                                           ("Adagrad", dict(initial_accumulator_value=-1.0)),
                                           ("Adadelta", dict(rho=1.5)), ("Adamax", dict(betas=(0.9, 1.0))),
                                           ("NAdam", dict(eps=-1.0)), ("RAdam", dict(weight_decay=-0.1))])
def test_invalid_hyperparameters(name, options):
    with pytest.raises(ValueError, match="Invalid"):
        getattr(sg.optim, name)([sg.tensor([1.0], requires_grad=True)], **options)


def test_lr_changed_through_param_groups_takes_effect():
    p = sg.tensor([1.0], requires_grad=True)
    opt = sg.optim.SGD([p], lr=0.1)
    (p * 1.0).sum().backward()
    opt.param_groups[0]["lr"] = 0.5
    opt.step()
    assert p.item() == pytest.approx(0.5)
    q = sg.tensor([2.0], requires_grad=True)
    opt.add_param_group({"params": [q], "lr": 0.25})
    (q * 2.0).sum().backward()
    opt.step()
    assert q.item() == pytest.approx(1.5) and opt.param_groups[1]["momentum"] == 0
    with pytest.raises(ValueError, match="more than one"):
        opt.add_param_group({"params": [p]})


@pytest.mark.parametrize("name, options", [("SGD", dict(lr=0.05, momentum=0.9)), ("Adam", dict(lr=0.01, amsgrad=True)),
                                           ("AdamW", dict(lr=0.01)), ("RMSprop", dict(momentum=0.5, centered=True)),
                                           ("Adagrad", dict(lr=0.1, lr_decay=0.01))])
def test_state_dict_resumes_training_exactly(name, options):
    x, y = RNG.standard_normal((16, 3)), RNG.integers(0, 2, 16)

    def train(model, opt, steps):
        for _ in range(steps):
            opt.zero_grad()
            sg.nn.CrossEntropyLoss()(model(sg.tensor(x)), y).backward()
            opt.step()

    model = sg.nn.Sequential(sg.nn.Linear(3, 4), sg.nn.Tanh(), sg.nn.Linear(4, 2))
    fresh = sg.nn.Sequential(sg.nn.Linear(3, 4), sg.nn.Tanh(), sg.nn.Linear(4, 2))
    fresh.load_state_dict(model.state_dict())
    opt = getattr(sg.optim, name)(model.parameters(), **options)
    train(model, opt, 4)
    saved_model, saved_opt = model.state_dict(), opt.state_dict()
    assert sorted(saved_opt) == ["param_groups", "state"] and saved_opt["param_groups"][0]["params"] == [0, 1, 2, 3]
    resumed = sg.nn.Sequential(sg.nn.Linear(3, 4), sg.nn.Tanh(), sg.nn.Linear(4, 2))
    resumed.load_state_dict({k: v.detach().numpy().copy() for k, v in saved_model.items()})
    resumed_opt = getattr(sg.optim, name)(resumed.parameters(), lr=123.0)
    resumed_opt.load_state_dict(saved_opt)
    assert resumed_opt.param_groups[0]["lr"] == opt.param_groups[0]["lr"]
    train(model, opt, 5)
    train(resumed, resumed_opt, 5)
    for a, b in zip(model.parameters(), resumed.parameters()):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    with pytest.raises(ValueError, match="number of parameter groups"):
        resumed_opt.load_state_dict({"state": {}, "param_groups": []})
    with pytest.raises(ValueError, match="doesn't match the size"):
        resumed_opt.load_state_dict({"state": {}, "param_groups": [{"params": [0]}]})


def test_state_dict_layout_matches_pytorch():
    torch = pytest.importorskip("torch")
    model = sg.nn.Linear(3, 2)
    tmodel = torch.nn.Linear(3, 2).double()
    opt, topt = sg.optim.Adam(model.parameters(), lr=0.01), torch.optim.Adam(tmodel.parameters(), lr=0.01)
    for o, m, lib in ((opt, model, sg), (topt, tmodel, torch)):
        m(lib.tensor(np.ones((1, 3)))).sum().backward()
        o.step()
    ours, theirs = opt.state_dict(), topt.state_dict()
    assert ours["state"].keys() == theirs["state"].keys()
    assert set(ours["state"][0]) == set(theirs["state"][0])
    assert set(ours["param_groups"][0]) <= set(theirs["param_groups"][0])


@pytest.mark.parametrize("name", ["AdamW", "RMSprop", "Adagrad"])
@pytest.mark.parametrize("shape", [(), (0,), (0, 3)])
def test_new_optimizers_on_0d_and_empty_parameters(name, shape):
    p = sg.full(shape, 1.5, requires_grad=True)
    opt = getattr(sg.optim, name)([p], lr=0.1)
    for _ in range(3):
        opt.zero_grad()
        ((p * p * 3).sum() + p.sum()).backward()
        opt.step()
    assert p.shape == shape and p.dtype == np.float64
    torch = pytest.importorskip("torch")
    q = torch.full(shape, 1.5, dtype=torch.float64, requires_grad=True)
    topt = getattr(torch.optim, name)([q], lr=0.1)
    for _ in range(3):
        topt.zero_grad()
        ((q * q * 3).sum() + q.sum()).backward()
        topt.step()
    np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-12)


@pytest.mark.parametrize("name", ["AdamW", "RMSprop", "Adagrad"])
def test_new_optimizers_keep_float32(name):
    p = sg.tensor([1.0, -1.0], dtype=sg.float, requires_grad=True)
    opt = getattr(sg.optim, name)([p], lr=0.1, **({"momentum": 0.5, "centered": True} if name == "RMSprop" else {}))
    for _ in range(2):
        opt.zero_grad()
        (p * p).sum().backward()
        opt.step()
    assert p.dtype == np.float32
    assert all(v.dtype == np.float32 for v in opt.state_dict()["state"][0].values() if isinstance(v, sg.Tensor))


@pytest.mark.parametrize("shape, dtype, maximize", [((300, 200), np.float32, False), ((300, 200), np.float64, True),
                                                    ((40,), np.float32, False), ((), np.float64, True),
                                                    ((0, 3), np.float32, False)])
def test_plain_sgd_updates_in_place_as_pytorch(shape, dtype, maximize):
    """Plain SGD writes each parameter in place (a large one by BLAS's axpy, which rounds p - lr * g once, as
    PyTorch's add_(grad, alpha=-lr), mostly): the same array before and after, the version bumped, the values
    within one rounding of the sum (and of the product) of the exact update and of PyTorch's."""
    start, grad = RNG.standard_normal(shape).astype(dtype), RNG.standard_normal(shape).astype(dtype)
    p = sg.tensor(start, requires_grad=True)
    p.grad = sg.tensor(grad)
    array, version = p._data, p._version.value
    sg.optim.SGD([p], lr=0.1, maximize=maximize).step()
    assert p._data is array and p._version.value == version + 1 and p.dtype == dtype
    step = dtype(0.1) * grad
    bound = np.finfo(dtype).eps * (np.abs(start) + np.abs(step))  # one rounding of the sum, or of the product too
    assert np.all(np.abs(p.detach().numpy() - (start + step if maximize else start - step)) <= bound)
    torch = pytest.importorskip("torch")
    q = torch.nn.Parameter(torch.from_numpy(start.copy()))
    q.grad = torch.from_numpy(grad.copy())
    torch.optim.SGD([q], lr=0.1, maximize=maximize).step()
    assert np.all(np.abs(p.detach().numpy() - q.detach().numpy()) <= bound)


def test_plain_sgd_on_a_non_contiguous_parameter_and_an_aliasing_gradient():
    """A parameter that is a transposed view, and a gradient sharing its memory, take NumPy's path: same values."""
    base = RNG.standard_normal((256, 200)).astype(np.float32)
    p = sg.tensor(base, requires_grad=True)
    p._data = p._data.T
    p.grad = sg.tensor(base.T * 2)
    sg.optim.SGD([p], lr=0.5).step()
    np.testing.assert_allclose(p.detach().numpy(), base.T - np.float32(0.5) * (base.T * 2), rtol=1e-6)
    q = sg.tensor(base.reshape(-1).copy(), requires_grad=True)
    q.grad = sg.Tensor._wrap(q._data)  # .grad the parameter's own memory
    sg.optim.SGD([q], lr=0.25).step()
    np.testing.assert_array_equal(q.detach().numpy(), base.reshape(-1) - np.float32(0.25) * base.reshape(-1))


def test_plain_sgd_with_lr_zero_and_an_infinite_gradient_gives_nan_as_pytorch():
    """p - 0 * inf is NaN (PyTorch's add_(g, alpha=-0.0) too); BLAS's axpy would return without a write."""
    grad = np.zeros((300, 200), np.float32)
    grad[3, 4] = np.inf
    p = sg.tensor(np.ones((300, 200), np.float32), requires_grad=True)
    p.grad = sg.tensor(grad)
    sg.optim.SGD([p], lr=0.0).step()
    assert np.isnan(p.detach().numpy()[3, 4]) and np.all(np.delete(p.detach().numpy().ravel(), 3 * 200 + 4) == 1)
    torch = pytest.importorskip("torch")
    q = torch.nn.Parameter(torch.ones(300, 200))
    q.grad = torch.from_numpy(grad)
    torch.optim.SGD([q], lr=0.0).step()
    np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())


def _adagrad_two_groups(lib, starts):
    """Adagrad over two groups, the second setting its own initial_accumulator_value; three steps of sum(p^3)."""
    params = [lib.tensor(v, requires_grad=True) for v in starts]
    optimizer = lib.optim.Adagrad([{"params": params[:1]}, {"params": params[1:], "initial_accumulator_value": 3.0}],
                                  lr=0.1, initial_accumulator_value=0.5)
    for _ in range(3):
        optimizer.zero_grad()
        sum((p ** 3).sum() for p in params).backward()
        optimizer.step()
    assert optimizer.param_groups[1]["initial_accumulator_value"] == 3.0
    return [p.detach().numpy() for p in params]


def test_adagrad_starts_every_sum_at_the_constructors_initial_value():
    """PyTorch fills each parameter's sum with Adagrad(initial_accumulator_value=) whatever its group says (the
    group keeps its own value, unread): the group's value gave other numbers silently."""
    starts = [np.array([1.0, -2.0]), np.array([0.5, 3.0])]
    ours = _adagrad_two_groups(sg, starts)
    expected, total = starts[1].copy(), np.full(2, 0.5)
    for _ in range(3):
        g = 3 * expected ** 2
        total = total + g * g
        expected = expected - 0.1 * g / (np.sqrt(total) + 1e-10)
    np.testing.assert_allclose(ours[1], expected, rtol=1e-14)
    torch = pytest.importorskip("torch")
    for mine, theirs in zip(ours, _adagrad_two_groups(torch, starts)):
        np.testing.assert_allclose(mine, theirs, rtol=1e-14)
