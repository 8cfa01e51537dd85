"""Adamax, NAdam, RAdam, ASGD and Rprop compiled per parameter group (symgrad.optim.optimizer.GroupUpdate), as
Adam's and the others' steps are: PyTorch's numbers to 1e-10 in float64 over 25 steps with two groups, a learning
rate schedule (compiled once: the hyper-parameters are run-time inputs), a parameter without a gradient and a 0-d
one; the same numbers as the per-parameter NumPy path; state_dict() with PyTorch's keys, resumed exactly."""
import contextlib
import copy

import numpy as np
import pytest

import symgrad as sg
from symgrad.optim.optimizer import GroupUpdate

RNG = np.random.default_rng(31)
STARTS = [RNG.standard_normal((4, 3)), RNG.standard_normal(4), RNG.standard_normal((2, 4)), np.array(0.3),
          RNG.standard_normal(2)]
X, Y = RNG.standard_normal((6, 3)), RNG.standard_normal((6, 2))

CASES = [
    ("Adamax", dict(lr=0.01), dict(weight_decay=0.02)),
    ("Adamax", dict(lr=0.02, betas=(0.8, 0.9), eps=1e-6, weight_decay=0.01, maximize=True), dict(lr=0.005)),
    ("NAdam", dict(lr=0.01), dict(momentum_decay=0.01)),
    ("NAdam", dict(lr=0.01, betas=(0.8, 0.99), weight_decay=0.1, decoupled_weight_decay=True), dict(weight_decay=0)),
    ("NAdam", dict(lr=0.01, weight_decay=0.05, maximize=True), dict(decoupled_weight_decay=True)),
    ("RAdam", dict(lr=0.01), dict(betas=(0.8, 0.9))),  # rho_t passes 5 at the 6th step: both branches
    ("RAdam", dict(lr=0.01, betas=(0.9, 0.9), weight_decay=0.1, decoupled_weight_decay=True), dict(lr=0.02)),
    ("RAdam", dict(lr=0.01, weight_decay=0.05, maximize=True), dict(eps=0.0)),
    ("ASGD", dict(lr=0.05, t0=5, lambd=1e-2), dict(alpha=0.5)),  # the average starts at step 6
    ("ASGD", dict(lr=0.05, t0=3, weight_decay=0.01, maximize=True), dict(lambd=0.1, t0=30)),
    ("Rprop", dict(lr=0.05), dict(etas=(0.3, 1.5), step_sizes=(1e-3, 0.02))),
    ("Rprop", dict(lr=0.01, maximize=True), dict(lr=0.02, step_sizes=(0.0, 1.0))),
]


def _train(lib, name, options, second, steps, subclass=None, optimizer=None, params=None):
    """`steps` steps of a small regression under StepLR; the second group holds a parameter no loss reads."""
    if params is None:
        params = [lib.tensor(v.copy(), requires_grad=True) for v in STARTS]
    if optimizer is None:
        optimizer = (subclass or getattr(lib.optim, name))(
            [{"params": params[:2]}, {"params": params[2:], **second}], **options)
    scheduler = lib.optim.lr_scheduler.StepLR(optimizer, step_size=4, gamma=0.7)
    w, b, v, s, _ = params
    x, y = lib.tensor(X), lib.tensor(Y)
    for _ in range(steps):
        optimizer.zero_grad()
        loss = (((x @ w.T + b).tanh() @ v.T * s - y) ** 2).mean()
        loss.backward()
        optimizer.step()
        scheduler.step()
    return params, optimizer


@contextlib.contextmanager
def _scalar_dtype(torch):
    """PyTorch keeps ASGD's eta and mu, and NAdam's product of the mu_t, in its default dtype: symgrad has none, and
    rounds them to float32, PyTorch's default."""
    default = torch.get_default_dtype()
    torch.set_default_dtype(torch.float32)
    try:
        yield
    finally:
        torch.set_default_dtype(default)


def _values(params):
    return [p.detach().numpy().copy() for p in params]


@pytest.mark.parametrize("name, options, second", CASES)
def test_compiled_once_and_matches_pytorch(lowerings, name, options, second):
    params, optimizer = _train(sg, name, options, second, 25)
    compiled = [u for u in optimizer._updates.values() if isinstance(u, GroupUpdate)]
    assert len(compiled) == 2 and len(optimizer._updates) == 2  # one per group, whatever the learning rate
    assert [sum(1 for e in lowerings if e is u.executable) for u in compiled] == [1, 1]
    assert params[4].grad is None and params[4] not in optimizer.state
    np.testing.assert_array_equal(params[4].detach().numpy(), STARTS[4])
    torch = pytest.importorskip("torch")
    with _scalar_dtype(torch):
        theirs, topt = _train(torch, name, options, second, 25)
    for ours, expected in zip(_values(params), _values(theirs)):
        np.testing.assert_allclose(ours, expected, rtol=1e-10, atol=1e-12)
    ours_state, their_state = optimizer.state_dict(), topt.state_dict()
    assert ours_state["param_groups"] == their_state["param_groups"]
    assert sorted(ours_state["state"]) == sorted(their_state["state"]) == [0, 1, 2, 3]
    for number, entry in their_state["state"].items():
        assert list(ours_state["state"][number]) == list(entry)  # PyTorch's keys in PyTorch's order
        for key, value in entry.items():
            np.testing.assert_allclose(np.asarray(ours_state["state"][number][key]), value.numpy(), rtol=1e-10,
                                       atol=1e-12)


@pytest.mark.parametrize("name, options, second", CASES)
def test_compiled_matches_the_per_parameter_numpy_path(name, options, second):
    base = getattr(sg.optim, name)
    by_parameter = type(f"PerParameter{name}", (base,), {"update": lambda self, *args: base.update(self, *args)})
    compiled, _ = _train(sg, name, options, second, 25)
    expected, _ = _train(sg, name, options, second, 25, subclass=by_parameter)
    for ours, theirs in zip(_values(compiled), _values(expected)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("name, options, second", CASES[::2])
def test_state_dict_resumes_training(name, options, second):
    params, optimizer = _train(sg, name, options, second, 9)
    saved_params = _values(params)
    saved = copy.deepcopy(optimizer.state_dict())  # (its tensors are the state's, which later steps update)
    _train(sg, name, options, second, 7, optimizer=optimizer, params=params)
    resumed = [sg.tensor(v, requires_grad=True) for v in saved_params]
    again = getattr(sg.optim, name)([{"params": resumed[:2]}, {"params": resumed[2:], **second}], **options)
    again.load_state_dict(saved)
    _train(sg, name, options, second, 7, optimizer=again, params=resumed)
    for ours, theirs in zip(_values(resumed), _values(params)):  # (NumPy's first step, then compiled: an ulp)
        np.testing.assert_allclose(ours, theirs, rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("name", ["Adamax", "NAdam", "RAdam", "ASGD", "Rprop"])
def test_float32_stays_float32_with_zero_and_infinite_gradients(name):
    """Zero, infinite and NaN gradients, in float32, against PyTorch (NaN where PyTorch's is; Rprop's sign of NaN is
    0, as PyTorch's)."""
    torch = pytest.importorskip("torch")
    start = np.array([1.0, -2.0, 0.5, 3.0], np.float32)
    grads = [np.array([0.5, 0.0, -1.0, 2.0], np.float32), np.array([-0.5, 0.0, 1.0, 2.0], np.float32),
             np.array([0.25, 0.0, np.inf, -1.0], np.float32), np.array([np.nan, 1.0, 2.0, -1.0], np.float32)]
    results = {}
    for lib in (sg, torch):
        p = lib.tensor(start.copy(), requires_grad=True)
        optimizer = getattr(lib.optim, name)([p], lr=0.1)
        for step in range(8):
            p.grad = lib.tensor(grads[step % 4].copy())
            optimizer.step()
        results[lib.__name__] = p.detach().numpy()
    assert results["symgrad"].dtype == np.float32
    np.testing.assert_allclose(results["symgrad"], results["torch"], rtol=2e-6, atol=1e-7)


def test_options_refused_or_kept():
    p = sg.nn.Parameter(sg.zeros(2, dtype=sg.float64))
    with pytest.raises(NotImplementedError, match="differentiable=True"):
        sg.optim.NAdam([p], differentiable=True)
    with pytest.raises(TypeError, match="unexpected keyword argument 'fused'"):
        sg.optim.Rprop([p], fused=True)
    with pytest.raises(TypeError, match="unexpected keyword argument 'decoupled_weight_decay'"):
        sg.optim.Adamax([p], decoupled_weight_decay=True)  # (PyTorch's Adamax has no such option either)
    with pytest.raises(ValueError, match="Invalid Rprop"):
        sg.optim.Rprop([p], etas=(1.5, 1.2))
    assert sg.optim.ASGD([p], foreach=True, capturable=False).param_groups[0]["foreach"] is True


@pytest.mark.parametrize("name", ["Adamax", "NAdam", "RAdam", "ASGD", "Rprop"])
def test_empty_and_0d_parameters_in_one_group(name):
    """An empty parameter beside a 0-d one, compiled from the second step: the 0-d one as PyTorch's."""
    torch = pytest.importorskip("torch")
    results = {}
    for lib in (sg, torch):
        empty = lib.zeros(0, dtype=lib.float64, requires_grad=True)
        scalar = lib.tensor(0.8, dtype=lib.float64, requires_grad=True)
        optimizer = getattr(lib.optim, name)([empty, scalar], lr=0.1)
        with _scalar_dtype(torch):
            for _ in range(4):
                optimizer.zero_grad()
                ((scalar - 0.3) ** 2 + empty.sum()).backward()
                optimizer.step()
        results[lib.__name__] = (empty.detach().numpy().shape, float(scalar.detach()))
        if lib is sg:
            assert any(isinstance(u, GroupUpdate) for u in optimizer._updates.values())
    assert results["symgrad"][0] == (0,)
    np.testing.assert_allclose(results["symgrad"][1], results["torch"][1], rtol=1e-10)
