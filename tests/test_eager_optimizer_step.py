"""The optimizer's update compiled per group (symgrad.optim.optimizer.GroupUpdate): the same numbers
as its NumPy formula and as PyTorch, hyper-parameters as run-time inputs (a schedule never compiles
again), and the NumPy path wherever the compiled one does not apply."""
import numpy as np
import pytest

import symgrad as sg
from symgrad.optim.optimizer import GroupUpdate

RNG = np.random.default_rng(11)


def _quadratic(params, targets):
    return sum(((p - sg.tensor(t)) ** 2 * (i + 1.0)).sum() for i, (p, t) in enumerate(zip(params, targets)))


def _numpy_adam(values, grads_of, lrs, betas, eps=1e-8, weight_decay=0.0, maximize=False):
    """PyTorch's Adam written out in NumPy, for a schedule of learning rates."""
    m = [np.zeros_like(v) for v in values]
    s = [np.zeros_like(v) for v in values]
    for step, lr in enumerate(lrs, 1):
        grads = grads_of(values)
        for i, g in enumerate(grads):
            g = -g if maximize else g
            g = g + weight_decay * values[i]
            m[i] = m[i] + (g - m[i]) * (1 - betas[0])
            s[i] = s[i] * betas[1] + (1 - betas[1]) * g * g
            denom = np.sqrt(s[i]) / np.sqrt(1 - betas[1] ** step) + eps
            values[i] = values[i] - lr / (1 - betas[0] ** step) * m[i] / denom
    return values


@pytest.mark.parametrize("maximize, weight_decay", [(False, 0.0), (True, 0.01)])
def test_a_learning_rate_schedule_is_compiled_once_and_matches_numpy(lowerings, maximize, weight_decay):
    starts = [RNG.standard_normal((3, 2)), RNG.standard_normal(4)]
    targets = [RNG.standard_normal((3, 2)), RNG.standard_normal(4)]
    params = [sg.tensor(v, requires_grad=True) for v in starts]
    optimizer = sg.optim.Adam(params, lr=0.1, betas=(0.8, 0.95), weight_decay=weight_decay, maximize=maximize)
    lrs = [0.1 * 0.9 ** step for step in range(8)]
    for lr in lrs:
        optimizer.param_groups[0]["lr"] = lr
        optimizer.zero_grad()
        _quadratic(params, targets).backward()
        optimizer.step()
    expected = _numpy_adam([v.copy() for v in starts],
                           lambda vs: [2 * (i + 1.0) * (v - t) for i, (v, t) in enumerate(zip(vs, targets))],
                           lrs, (0.8, 0.95), weight_decay=weight_decay, maximize=maximize)
    for p, e in zip(params, expected):
        np.testing.assert_allclose(p.detach().numpy(), e, rtol=1e-12, atol=1e-14)
    compiled = [u for u in optimizer._updates.values() if isinstance(u, GroupUpdate)]
    assert len(compiled) == 1  # from the second step on, whatever the learning rate
    assert sum(1 for e in lowerings if e is compiled[0].executable) == 1


@pytest.mark.parametrize("name, options", [("Adam", dict(lr=0.05)), ("SGD", dict(lr=0.1, momentum=0.9)),
                                           ("Adadelta", dict(lr=1.0)), ("RMSprop", dict(lr=0.01, momentum=0.5)),
                                           ("Adagrad", dict(lr=0.1))])
def test_float32_parameters_stay_float32_and_match_pytorch(name, options):
    torch = pytest.importorskip("torch")
    starts = [RNG.standard_normal((4, 3)).astype(np.float32), RNG.standard_normal(3).astype(np.float32)]
    targets = [RNG.standard_normal((4, 3)).astype(np.float32), RNG.standard_normal(3).astype(np.float32)]
    results = {}
    for lib in (sg, torch):
        params = [lib.tensor(v, requires_grad=True) for v in starts]
        optimizer = getattr(lib.optim, name)(params, **options)
        for _ in range(6):
            optimizer.zero_grad()
            sum(((p - lib.tensor(t)) ** 2).sum() for p, t in zip(params, targets)).backward()
            optimizer.step()
        results[lib.__name__] = [p.detach().numpy() for p in params]
    for ours, theirs in zip(results["symgrad"], results["torch"]):
        assert ours.dtype == np.float32
        np.testing.assert_allclose(ours, theirs, rtol=2e-6, atol=1e-7)


@pytest.mark.parametrize("name, options", [
    ("Adadelta", dict(lr=1.0)), ("Adadelta", dict(lr=0.5, rho=0.8, eps=1e-5, weight_decay=0.01, maximize=True)),
    ("RMSprop", dict(lr=0.01)), ("RMSprop", dict(lr=0.01, alpha=0.9, weight_decay=0.01, momentum=0.8, centered=True)),
    ("RMSprop", dict(lr=0.01, momentum=0.5, maximize=True)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.05, weight_decay=0.01, initial_accumulator_value=0.3)),
])
def test_adaptive_steps_under_step_lr_are_compiled_once_and_match_pytorch(lowerings, name, options):
    """Adadelta (pytorch/examples' mnist steps it under StepLR), RMSprop and Adagrad: one compiled group update
    whatever the learning rate, with a 0-d parameter and one whose gradient is zero (without weight decay it stays,
    as PyTorch's)."""
    torch = pytest.importorskip("torch")
    starts = [RNG.standard_normal((3, 2)), np.array(0.7), RNG.standard_normal(2)]
    targets = [RNG.standard_normal((3, 2)), np.array(-0.2)]
    results = {}
    for lib in (sg, torch):
        params = [lib.tensor(v, requires_grad=True) for v in starts]
        optimizer = getattr(lib.optim, name)(params, **options)
        scheduler = lib.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.7)
        for _ in range(8):
            optimizer.zero_grad()
            loss = sum(((p - lib.tensor(t)) ** 2).sum() for p, t in zip(params, targets)) + 0.0 * params[2].sum()
            loss.backward()
            optimizer.step()
            scheduler.step()
        results[lib.__name__] = [p.detach().numpy() for p in params]
        if lib is sg:
            compiled = [u for u in optimizer._updates.values() if isinstance(u, GroupUpdate)]
            assert len(compiled) == 1 and sum(1 for e in lowerings if e is compiled[0].executable) == 1
    for ours, theirs in zip(results["symgrad"], results["torch"]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-14)
    if not options.get("weight_decay"):
        np.testing.assert_array_equal(results["symgrad"][2], starts[2])


def test_parameters_at_different_step_counts_take_the_numpy_path():
    """A parameter that joins later has its own bias correction: the group's step is not one update."""
    p, q = sg.tensor(np.array([1.0, 2.0]), requires_grad=True), sg.tensor(np.array([-1.0]), requires_grad=True)
    optimizer = sg.optim.Adam([p, q], lr=0.1)
    for step in range(5):
        optimizer.zero_grad()
        loss = (p * p).sum() + ((q * q).sum() if step >= 2 else 0.0)
        loss.backward()
        optimizer.step()
    assert optimizer.state[id(p)]["step"] == 5 and optimizer.state[id(q)]["step"] == 3
    expected_q = _numpy_adam([np.array([-1.0])], lambda vs: [2 * vs[0]], [0.1] * 3, (0.9, 0.999))[0]
    np.testing.assert_allclose(q.detach().numpy(), expected_q, rtol=1e-12)


def test_an_optimizer_written_with_update_only_still_steps():
    class HalfStep(sg.optim.Optimizer):
        def __init__(self, params, lr):
            super().__init__(params, dict(lr=lr))

        def update(self, param, grad, state, group):
            state["calls"] = state.get("calls", 0) + 1
            return param - 0.5 * group["lr"] * grad

    p = sg.tensor(np.array([2.0, -4.0]), requires_grad=True)
    optimizer = HalfStep([p], lr=1.0)
    for _ in range(3):
        optimizer.zero_grad()
        (p * p).sum().backward()
        optimizer.step()
    np.testing.assert_allclose(p.detach().numpy(), [0.0, 0.0])  # p - p = 0 at each step
    assert optimizer.state[id(p)]["calls"] == 3 and p._version.value == 3


def test_a_subclass_that_overrides_update_is_stepped_through_it():
    """AdamW-style: decoupled decay, then Adam's own update through super().update."""
    class DecoupledAdam(sg.optim.Adam):
        def update(self, param, grad, state, group):
            decayed = param * (1 - group["lr"] * group["weight_decay"])
            return super().update(decayed, grad, state, {**group, "weight_decay": 0})

    start = np.array([1.0, -2.0])
    p = sg.tensor(start, requires_grad=True)
    optimizer = DecoupledAdam([p], lr=0.1, weight_decay=0.5)
    value, m, v = start.copy(), np.zeros(2), np.zeros(2)
    for t in range(1, 5):
        optimizer.zero_grad()
        (p * p).sum().backward()
        optimizer.step()
        g = 2 * value
        value = value * (1 - 0.1 * 0.5)
        m, v = m + (g - m) * 0.1, v * 0.999 + 0.001 * g * g
        value = value - 0.1 / (1 - 0.9 ** t) * m / (np.sqrt(v) / np.sqrt(1 - 0.999 ** t) + 1e-8)
        np.testing.assert_allclose(p.detach().numpy(), value, rtol=1e-12)
