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
