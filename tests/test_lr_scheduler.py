"""sg.optim.lr_scheduler: the learning rates PyTorch's schedulers set, epoch by epoch (issue 14 item 4)."""
import math

import numpy as np
import pytest

import symgrad as sg
from symgrad.optim import lr_scheduler


def _optimizer(lib, lr=0.1):
    params = [lib.nn.Parameter(lib.tensor(np.ones(2))), lib.nn.Parameter(lib.tensor(np.ones(1)))]
    return lib.optim.SGD([{"params": params[:1]}, {"params": params[1:], "lr": lr / 2}], lr=lr, momentum=0.9)


SCHEDULES = [
    ("StepLR", dict(step_size=3, gamma=0.5)),
    ("ExponentialLR", dict(gamma=0.9)),
    ("CosineAnnealingLR", dict(T_max=7, eta_min=0.001)),
    ("CosineAnnealingLR", dict(T_max=4)),
    ("LambdaLR", dict(lr_lambda=lambda epoch: 0.95 ** epoch / (1 + epoch))),
    ("MultiStepLR", dict(milestones=[2, 5, 5, 11], gamma=0.3)),
    ("ConstantLR", dict(factor=0.25, total_iters=4)),
    ("LinearLR", dict(start_factor=0.2, end_factor=0.9, total_iters=7)),
    ("LinearLR", dict()),
    ("CosineAnnealingWarmRestarts", dict(T_0=3, T_mult=2, eta_min=0.002)),
    ("CosineAnnealingWarmRestarts", dict(T_0=4)),
    ("MultiplicativeLR", dict(lr_lambda=lambda epoch: 0.9 if epoch % 3 else 1.05)),
    ("PolynomialLR", dict(total_iters=9, power=2.0)),
    ("PolynomialLR", dict()),
    ("OneCycleLR", dict(max_lr=[1.0, 0.4], total_steps=25)),
    ("OneCycleLR", dict(max_lr=0.5, epochs=5, steps_per_epoch=6, pct_start=0.4, anneal_strategy="linear",
                        three_phase=True)),
]


def _lrs(lib, name, options, epochs=25, optimizer=None):
    """Each epoch's lrs (and momentums, which OneCycleLR cycles) of both groups."""
    opt = optimizer or _optimizer(lib)
    scheduler = getattr(lib.optim.lr_scheduler, name)(opt, **options)
    seen = [scheduler.get_last_lr() + [group["momentum"] for group in opt.param_groups]]
    for _ in range(epochs):
        opt.step()
        scheduler.step()
        seen.append(scheduler.get_last_lr() + [group["momentum"] for group in opt.param_groups])
    return np.array(seen), scheduler


@pytest.mark.parametrize("name, options", SCHEDULES)
def test_schedules_match_pytorch(name, options):
    ours, scheduler = _lrs(sg, name, options)
    assert scheduler.last_epoch == 25 and len(np.unique(ours[:, 0])) >= 2
    torch = pytest.importorskip("torch")
    theirs, _ = _lrs(torch, name, options)
    np.testing.assert_allclose(ours, theirs, rtol=1e-13, atol=1e-16)


def test_closed_forms_by_hand():
    epochs = np.arange(26)
    ours, _ = _lrs(sg, "StepLR", dict(step_size=3, gamma=0.5))
    np.testing.assert_allclose(ours[:, 0], 0.1 * 0.5 ** (epochs // 3), rtol=1e-14)
    ours, _ = _lrs(sg, "ExponentialLR", dict(gamma=0.9))
    np.testing.assert_allclose(ours[:, 1], 0.05 * 0.9 ** epochs, rtol=1e-13)
    ours, _ = _lrs(sg, "CosineAnnealingLR", dict(T_max=7, eta_min=0.001))
    np.testing.assert_allclose(ours[:8, 0], 0.001 + (0.1 - 0.001) * (1 + np.cos(np.pi * epochs[:8] / 7)) / 2,
                               rtol=1e-12)
    ours, _ = _lrs(sg, "LambdaLR", dict(lr_lambda=[lambda e: 1 / (1 + e), lambda e: 2.0 ** -e]))
    np.testing.assert_allclose(ours[:, :2], np.stack([0.1 / (1 + epochs), 0.05 * 2.0 ** -epochs], 1), rtol=1e-14)


def test_polynomial_and_multiplicative_by_hand_and_errors():
    epochs = np.arange(26)
    ours, _ = _lrs(sg, "PolynomialLR", dict(total_iters=9, power=2.0))
    np.testing.assert_allclose(ours[:, 0], 0.1 * (1 - np.minimum(epochs, 9) / 9) ** 2, rtol=1e-12, atol=1e-17)
    ours, _ = _lrs(sg, "MultiplicativeLR", dict(lr_lambda=[lambda e: 0.5, lambda e: 2.0]))
    np.testing.assert_allclose(ours[:, :2], np.stack([0.1 * 0.5 ** epochs, 0.05 * 2.0 ** epochs], 1), rtol=1e-14)
    scheduler = lr_scheduler.PolynomialLR(_optimizer(sg), total_iters=4, power=0.5)
    scheduler.step(2)
    assert scheduler.get_last_lr()[0] == pytest.approx(0.1 * 0.5 ** 0.5)
    with pytest.raises(TypeError, match="lr_lambda should be a function"):
        lr_scheduler.MultiplicativeLR(_optimizer(sg), 0.5)


def test_explicit_epoch_uses_the_closed_form():
    opt = _optimizer(sg)
    scheduler = lr_scheduler.StepLR(opt, step_size=2, gamma=0.1)
    scheduler.step(5)
    assert scheduler.get_last_lr() == pytest.approx([0.1 * 0.01, 0.05 * 0.01]) and scheduler.last_epoch == 5
    cosine = lr_scheduler.CosineAnnealingLR(_optimizer(sg), T_max=10)
    cosine.step(5)
    assert cosine.get_last_lr()[0] == pytest.approx(0.05)


def test_lr_reaches_the_update_and_state_dict_round_trip():
    p = sg.tensor([1.0], requires_grad=True)
    opt = sg.optim.SGD([p], lr=1.0)
    scheduler = lr_scheduler.ExponentialLR(opt, gamma=0.5)
    for expected in (1.0 - 1.0, 0.0 - 0.5):
        (p * 1.0).sum().backward()
        opt.step()
        opt.zero_grad()
        scheduler.step()
        assert p.item() == pytest.approx(expected)
    state = scheduler.state_dict()
    assert "optimizer" not in state and state["last_epoch"] == 2
    other = lr_scheduler.ExponentialLR(sg.optim.SGD([sg.tensor([0.0], requires_grad=True)], lr=1.0), gamma=0.5)
    other.load_state_dict(state)
    assert other.last_epoch == 2 and other.get_last_lr() == [0.25] and other.base_lrs == [1.0]
    with pytest.raises(KeyError, match="initial_lr"):
        lr_scheduler.StepLR(sg.optim.SGD([sg.tensor([0.0], requires_grad=True)], lr=1.0), 2, last_epoch=3)


def test_lambda_state_dict_keeps_callable_objects_state():
    class Warmup:
        def __init__(self):
            self.length = 4

        def __call__(self, epoch):
            return min(1.0, (epoch + 1) / self.length)

    warmup = Warmup()
    scheduler = lr_scheduler.LambdaLR(_optimizer(sg), [warmup, lambda e: 1.0])
    state = scheduler.state_dict()
    assert state["lr_lambdas"] == [{"length": 4}, None]
    warmup.length = 10
    scheduler.load_state_dict(state)
    assert warmup.length == 4
    with pytest.raises(ValueError, match="Expected 2 lr_lambdas"):
        lr_scheduler.LambdaLR(_optimizer(sg), [warmup])


def _plateau(lib, metrics, **options):
    opt = _optimizer(lib)
    scheduler = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, **options)
    seen = []
    for metric in metrics:
        scheduler.step(metric)
        seen.append([group["lr"] for group in opt.param_groups])
    return np.array(seen)


PLATEAU = [
    (dict(patience=2, factor=0.5), [5, 4, 4, 4, 4, 4, 3.9999, 4, 4, 4, 4, 1, 1, 1, 1]),
    (dict(mode="max", patience=1, cooldown=2, threshold=0.1, threshold_mode="abs", min_lr=[0.02, 0.0]),
     [1, 1.05, 1.05, 1.05, 1.2, 1.2, 1.2, 1.2, 1.2, 1.2, 1.2, 1.2, 1.2]),
    (dict(patience=0, factor=0.1, eps=0.01), [1, 2, 3, 4, 5]),
]


@pytest.mark.parametrize("options, metrics", PLATEAU)
def test_reduce_on_plateau_matches_pytorch(options, metrics):
    ours = _plateau(sg, metrics, **options)
    assert ours[-1, 0] < 0.1
    torch = pytest.importorskip("torch")
    np.testing.assert_allclose(ours, _plateau(torch, metrics, **options), rtol=1e-15)


def test_reduce_on_plateau_by_hand_and_errors():
    lrs = _plateau(sg, [1.0, 1.0, 1.0, 1.0], patience=1, factor=0.5)
    assert lrs[:, 0].tolist() == [0.1, 0.1, 0.05, 0.05]
    with pytest.raises(ValueError, match="Factor"):
        lr_scheduler.ReduceLROnPlateau(_optimizer(sg), factor=1.0)
    with pytest.raises(ValueError, match="mode"):
        lr_scheduler.ReduceLROnPlateau(_optimizer(sg), mode="up")
    with pytest.raises(TypeError, match="not an Optimizer"):
        lr_scheduler.StepLR(object(), 2)
    assert math.isinf(lr_scheduler.ReduceLROnPlateau(_optimizer(sg)).state_dict()["best"])


def _sequential(lib):
    opt = _optimizer(lib)
    schedule = lib.optim.lr_scheduler
    warmup = schedule.LinearLR(opt, start_factor=0.1, total_iters=4)
    inner = schedule.SequentialLR(opt, [schedule.ConstantLR(opt, factor=0.5, total_iters=2),
                                        schedule.ExponentialLR(opt, gamma=0.8)], milestones=[3])
    scheduler = schedule.SequentialLR(opt, [inner, warmup, schedule.CosineAnnealingLR(opt, T_max=5)],
                                      milestones=[6, 12])  # a nested SequentialLR can only come first (PyTorch)
    seen = [scheduler.get_last_lr()]
    for _ in range(25):
        opt.step()
        scheduler.step()
        seen.append(scheduler.get_last_lr())
    return np.array(seen), scheduler


def test_sequential_lr_matches_pytorch_with_nested_schedules():
    ours, scheduler = _sequential(sg)
    assert scheduler.last_epoch == 25
    state = scheduler.state_dict()
    assert len(state["_schedulers"]) == 3 and "optimizer" not in state
    torch = pytest.importorskip("torch")
    theirs, _ = _sequential(torch)
    np.testing.assert_allclose(ours, theirs, rtol=1e-13, atol=1e-16)


@pytest.mark.parametrize("name, options", [("CosineAnnealingLR", dict(T_max=6, eta_min=0.01)),
                                           ("ExponentialLR", dict(gamma=0.7)), ("StepLR", dict(step_size=2)),
                                           ("LinearLR", dict(total_iters=9)), ("MultiStepLR", dict(milestones=[7, 9])),
                                           ("CosineAnnealingWarmRestarts", dict(T_0=3, T_mult=2))])
def test_resuming_with_last_epoch_matches_pytorch(name, options):
    """PyTorch 2.13's initial step keeps the optimizer's lr when resuming at last_epoch=k (CosineAnnealingLR used
    to jump to its closed form there)."""
    def run(lib):
        opt = _optimizer(lib)
        for group in opt.param_groups:
            group["initial_lr"], group["lr"] = group["lr"], group["lr"] * 0.37
        return _lrs(lib, name, dict(options, last_epoch=5), epochs=12, optimizer=opt)[0]
    ours = run(sg)
    torch = pytest.importorskip("torch")
    np.testing.assert_allclose(ours, run(torch), rtol=1e-13, atol=1e-16)


def test_warm_restarts_take_fractional_epochs_as_pytorch():
    def run(lib):
        opt = _optimizer(lib)
        scheduler = lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=3, eta_min=0.01)
        seen = []
        for epoch in np.arange(0, 12, 0.25):
            opt.step()
            scheduler.step(float(epoch))
            seen.append(scheduler.get_last_lr())
        return np.array(seen)
    ours = run(sg)
    assert ours[0, 0] == pytest.approx(0.1) and ours[4, 0] == pytest.approx(0.01 + 0.09 * (1 + np.cos(np.pi / 2)) / 2)
    torch = pytest.importorskip("torch")
    np.testing.assert_allclose(ours, run(torch), rtol=1e-13)


def test_one_cycle_cycles_adams_beta1_and_refuses_bad_arguments():
    def run(lib):
        params = [lib.nn.Parameter(lib.tensor(np.ones(2)))]
        opt = lib.optim.Adam(params, lr=0.01, betas=(0.9, 0.99))
        scheduler = lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.3, total_steps=10)
        seen = []
        for _ in range(10):
            opt.step()
            scheduler.step()
            seen.append([*scheduler.get_last_lr(), *opt.param_groups[0]["betas"]])
        return np.array(seen), scheduler
    ours, scheduler = run(sg)
    assert ours[:, 1].min() == pytest.approx(0.85) and (ours[:, 2] == 0.99).all()
    with pytest.raises(ValueError, match="Tried to step 11 times"):
        scheduler.step()
    opt = _optimizer(sg)
    with pytest.raises(ValueError, match="total_steps OR"):
        lr_scheduler.OneCycleLR(opt, max_lr=1.0)
    with pytest.raises(ValueError, match="pct_start"):
        lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=5, pct_start=1)
    with pytest.raises(ValueError, match="momentum or beta1"):
        lr_scheduler.OneCycleLR(sg.optim.Adagrad([sg.nn.Parameter(sg.tensor([1.0]))]), max_lr=1.0, total_steps=5)
    with pytest.raises(ValueError, match="one more than the number of milestone"):
        lr_scheduler.SequentialLR(opt, [lr_scheduler.ExponentialLR(opt, 0.5)], milestones=[2])
    nested = lr_scheduler.SequentialLR(opt, [lr_scheduler.ExponentialLR(opt, 0.5), lr_scheduler.SequentialLR(
        opt, [lr_scheduler.ExponentialLR(opt, 0.5)], milestones=[])], milestones=[1])
    with pytest.raises(TypeError, match="can only come first"):
        nested.step()
    with pytest.raises(ValueError, match="positive integer T_0"):
        lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=0)
    torch = pytest.importorskip("torch")
    np.testing.assert_allclose(ours, run(torch)[0], rtol=1e-13)


def test_chained_scheduler():
    """ChainedScheduler (it did not exist: an AttributeError) steps each scheduler in turn, each from the lr the one
    before set: a warmup chained with a decay, and one inside a SequentialLR; lrs epoch by epoch and state_dict
    against PyTorch, and a ReduceLROnPlateau is PyTorch's error."""
    def run(lib):
        opt = _optimizer(lib)
        schedule = lib.optim.lr_scheduler
        chained = schedule.ChainedScheduler([schedule.LinearLR(opt, start_factor=0.1, total_iters=4),
                                             schedule.ExponentialLR(opt, gamma=0.9)])
        lrs = [chained.get_last_lr()]
        for _ in range(10):
            opt.step()
            chained.step()
            lrs.append(chained.get_last_lr())
        assert [group["lr"] for group in opt.param_groups] == lrs[-1]
        state = chained.state_dict()
        assert len(state["_schedulers"]) == 2 and state["_schedulers"][1]["last_epoch"] == 10
        return lrs
    mine = run(sg)
    np.testing.assert_allclose(mine[4], [0.1 * 0.9 ** 4, 0.05 * 0.9 ** 4], rtol=1e-12)  # the warmup is over
    opt = _optimizer(sg)
    with pytest.raises(ValueError, match="ReduceLROnPlateau"):
        lr_scheduler.ChainedScheduler([lr_scheduler.ReduceLROnPlateau(opt)], optimizer=opt)
    try:
        import torch
    except ImportError:
        return
    np.testing.assert_allclose(mine, run(torch), rtol=1e-12)


@pytest.mark.parametrize("options", [dict(mode="triangular"), dict(mode="triangular2", step_size_down=2),
                                     dict(mode="exp_range", gamma=0.9), dict(scale_fn=lambda x: 0.5 ** x)])
@pytest.mark.parametrize("optimizer", ["SGD", "Adam"])
def test_cyclic_lr(options, optimizer):
    """CyclicLR (it did not exist: an AttributeError): lrs between base_lr and max_lr, the height scaled per cycle or
    step, and the momentum (SGD's, or Adam's beta1) cycled the other way, per group, as PyTorch's over 20 steps."""
    def run(lib):
        params = [lib.nn.Parameter(lib.tensor(np.ones(2))), lib.nn.Parameter(lib.tensor(np.ones(1)))]
        groups = [{"params": params[:1]}, {"params": params[1:]}]
        opt = lib.optim.SGD(groups, lr=0.1, momentum=0.9) if optimizer == "SGD" else lib.optim.Adam(groups, lr=0.1)
        scheduler = lib.optim.lr_scheduler.CyclicLR(opt, base_lr=[0.01, 0.02], max_lr=0.1, step_size_up=3, **options)
        seen = [list(scheduler.get_last_lr())]
        for _ in range(20):
            opt.step()
            scheduler.step()
            seen.append([*scheduler.get_last_lr(), *(group.get("momentum", group.get("betas", (0,))[0])
                                                     for group in opt.param_groups)])
        return seen
    mine = run(sg)
    assert mine[0] == [0.01, 0.02] and max(row[0] for row in mine) <= 0.1 + 1e-15
    try:
        import torch
    except ImportError:
        return
    np.testing.assert_allclose(mine[1:], run(torch)[1:], rtol=1e-12)
