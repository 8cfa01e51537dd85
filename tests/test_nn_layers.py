"""The layers, losses and initializers of issue 14 item 3 against PyTorch (given the same weights, float64, to
1e-10; skipped when PyTorch is absent) and against finite differences; buffers, containers, train/eval."""
import collections
import math

import numpy as np
import pytest

import symgrad as sg
from gradcheck import numeric_grad

F = sg.nn.functional
nn = sg.nn


def _torch():
    return pytest.importorskip("torch")


def _same_weights(ours, theirs):
    ours.load_state_dict({name: value.detach().numpy() for name, value in theirs.state_dict().items()})


def _compare(ours, theirs, inputs, steps=1, tol=1e-10, integer_input=False):
    """Forward and backward of both modules on the same inputs; outputs, input and parameter gradients and the
    state after `steps` steps must agree."""
    torch = _torch()
    for step in range(steps):
        x = inputs(step)
        ours.zero_grad()
        theirs.zero_grad()
        mine = sg.tensor(x, requires_grad=not integer_input)
        other = torch.tensor(x, requires_grad=not integer_input)
        out_mine, out_other = ours(mine), theirs(other)
        np.testing.assert_allclose(out_mine.detach().numpy(), out_other.detach().numpy(), rtol=tol, atol=tol)
        weights = np.linspace(-1, 1, out_mine.numel()).reshape(tuple(out_mine.shape))
        (out_mine * sg.tensor(weights)).sum().backward()
        (out_other * torch.tensor(weights)).sum().backward()
        if not integer_input:
            np.testing.assert_allclose(mine.grad.numpy(), other.grad.numpy(), rtol=tol, atol=tol)
        for (name, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
            np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=tol, atol=tol, err_msg=name)
    for (name, value), (other_name, other) in zip(ours.state_dict().items(), theirs.state_dict().items()):
        assert name == other_name
        np.testing.assert_allclose(value.numpy(), other.numpy(), rtol=tol, atol=tol, err_msg=name)


def _images(shape, seed=0):
    return lambda step: np.random.default_rng(seed + step).standard_normal(shape)


MODULES = [
    ("Conv1d", (3, 5, 3), {"stride": 2, "padding": 1}, (4, 3, 11)),
    ("Conv2d", (4, 6, 3), {"padding": "same", "groups": 2, "dilation": 2}, (2, 4, 7, 6)),
    ("Conv2d", (3, 2, (2, 3)), {"bias": False, "stride": (2, 1)}, (2, 3, 6, 6)),
    ("MaxPool2d", (3,), {"stride": 2, "padding": 1}, (2, 3, 7, 6)),
    ("AvgPool2d", (2,), {}, (2, 3, 7, 6)),
    ("AdaptiveAvgPool2d", ((2, 3),), {}, (2, 3, 7, 6)),
    ("BatchNorm1d", (5,), {}, (8, 5)),
    ("BatchNorm1d", (5,), {"momentum": None}, (8, 5, 3)),
    ("BatchNorm2d", (3,), {"momentum": 0.3}, (4, 3, 5, 5)),
    ("BatchNorm2d", (3,), {"affine": False}, (4, 3, 5, 5)),
    ("BatchNorm2d", (3,), {"track_running_stats": False}, (4, 3, 5, 5)),
    ("LayerNorm", ((4, 5),), {}, (3, 4, 5)),
    ("LayerNorm", (5,), {"elementwise_affine": False}, (3, 5)),
    ("GELU", (), {}, (4, 5)),
    ("GELU", (), {"approximate": "tanh"}, (4, 5)),
    ("LeakyReLU", (0.2,), {}, (4, 5)),
    ("ELU", (), {"alpha": 0.7}, (4, 5)),
    ("Conv3d", (2, 3, (2, 3, 2)), {"padding": (1, 0, 1), "stride": (1, 2, 1)}, (2, 2, 4, 5, 4)),
    ("MaxPool3d", (2,), {"stride": 1}, (2, 2, 4, 5, 4)),
    ("AvgPool3d", ((2, 3, 2),), {"padding": 1, "count_include_pad": False}, (2, 2, 4, 5, 4)),
    ("AdaptiveAvgPool3d", ((2, 3, 1),), {}, (2, 2, 4, 5, 4)),
    ("BatchNorm3d", (2,), {}, (3, 2, 2, 3, 2)),
    ("ConvTranspose1d", (3, 4, 3), {"stride": 2, "padding": 1, "output_padding": 1}, (2, 3, 6)),
    ("ConvTranspose2d", (4, 6, (3, 2)), {"stride": 2, "groups": 2, "dilation": (1, 2), "bias": False},
     (2, 4, 4, 5)),
    ("GroupNorm", (2, 6), {}, (3, 6, 4, 5)),
    ("InstanceNorm3d", (2,), {"affine": True}, (2, 2, 3, 4, 3)),
    ("ConvTranspose3d", (2, 4, 2), {"stride": 2}, (1, 2, 3, 2, 3)),
    ("GroupNorm", (3, 3), {"affine": False, "eps": 1e-3}, (2, 3, 7)),
    ("InstanceNorm1d", (3,), {}, (2, 3, 7)),
    ("InstanceNorm1d", (3,), {"affine": True}, (3, 7)),  # unbatched
    ("InstanceNorm2d", (3,), {"affine": True, "track_running_stats": True, "momentum": 0.3}, (2, 3, 4, 5)),
    ("Dropout", (0.5,), {}, (4, 5)),  # in eval mode only (the masks come from different generators)
]


@pytest.mark.parametrize("name, args, kwargs, shape", MODULES, ids=[f"{m[0]}-{i}" for i, m in enumerate(MODULES)])
def test_modules_match_pytorch_in_train_and_eval_mode_given_the_same_weights(name, args, kwargs, shape):
    torch = _torch()
    torch_kwargs = dict(kwargs)
    ours = getattr(nn, name)(*args, **kwargs)
    theirs = getattr(torch.nn, name)(*args, **torch_kwargs).double()
    _same_weights(ours, theirs)
    if name != "Dropout":
        _compare(ours, theirs, _images(shape), steps=3)
    ours.eval()
    theirs.eval()
    _compare(ours, theirs, _images(shape, seed=10), steps=2)


def test_embedding_matches_pytorch_and_its_padding_row_gets_no_gradient():
    torch = _torch()
    ours, theirs = nn.Embedding(6, 3, padding_idx=2), torch.nn.Embedding(6, 3, padding_idx=2).double()
    assert np.all(ours.weight.detach().numpy()[2] == 0)
    _same_weights(ours, theirs)
    index = np.array([[0, 2, 5], [2, 2, 1]])
    _compare(ours, theirs, lambda step: index, integer_input=True)
    assert np.all(ours.weight.grad.numpy()[2] == 0)
    with pytest.raises(IndexError):
        ours(sg.tensor(np.array([6])))


LOSSES = [
    ("NLLLoss", {"weight": [0.2, 1.0, 3.0]}, "log_probs"),
    ("NLLLoss", {"ignore_index": 1}, "log_probs"),
    ("NLLLoss", {"weight": [0.2, 1.0, 3.0], "ignore_index": 0, "reduction": "sum"}, "log_probs"),
    ("CrossEntropyLoss", {"weight": [0.2, 1.0, 3.0], "ignore_index": 2}, "classes"),
    ("CrossEntropyLoss", {"reduction": "none", "ignore_index": 0}, "classes"),
    ("CrossEntropyLoss", {"label_smoothing": 0.2}, "classes"),
    ("CrossEntropyLoss", {"label_smoothing": 0.1, "weight": [0.2, 1.0, 3.0], "ignore_index": 2}, "classes"),
    ("CrossEntropyLoss", {"label_smoothing": 0.3, "ignore_index": 1, "reduction": "none"}, "classes"),
    ("CrossEntropyLoss", {"label_smoothing": 0.3, "weight": [0.2, 1.0, 3.0], "reduction": "sum"}, "classes"),
    ("CrossEntropyLoss", {"label_smoothing": 0.25, "weight": [0.2, 1.0, 3.0]}, "soft"),
    ("BCELoss", {"weight": [0.5, 2.0, 1.0]}, "probabilities"),
    ("BCEWithLogitsLoss", {"pos_weight": [0.5, 2.0, 3.0]}, "targets"),
    ("BCEWithLogitsLoss", {"weight": [0.5, 2.0, 1.0], "pos_weight": [2.0, 2.0, 2.0], "reduction": "sum"}, "targets"),
    ("L1Loss", {}, "values"),
    ("L1Loss", {"reduction": "none"}, "values"),
    ("SmoothL1Loss", {"beta": 0.5}, "values"),
    ("SmoothL1Loss", {"beta": 0.0, "reduction": "sum"}, "values"),
    ("HuberLoss", {"delta": 0.7}, "values"),
    ("KLDivLoss", {"reduction": "batchmean"}, "distributions"),
    ("KLDivLoss", {"reduction": "batchmean", "log_target": True}, "log_distributions"),
    ("KLDivLoss", {"reduction": "sum"}, "distributions"),
]


def _loss_data(kind, rng):
    logits = rng.standard_normal((6, 3))
    if kind == "soft":
        return logits, rng.dirichlet(np.ones(3), size=6)
    if kind in ("log_probs", "classes"):
        x = logits - np.log(np.exp(logits).sum(1, keepdims=True)) if kind == "log_probs" else logits
        return x, np.array([0, 1, 2, 2, 1, 0])
    if kind == "probabilities":
        return 1 / (1 + np.exp(-logits)), rng.uniform(size=(6, 3))
    if kind == "targets":
        return logits, (rng.uniform(size=(6, 3)) > 0.5).astype(np.float64)
    if kind == "values":
        target = logits + rng.choice([0.0, 0.1, 2.0], size=(6, 3))
        target[0, 0] = logits[0, 0]  # a zero difference
        return logits, target
    log_p = logits - np.log(np.exp(logits).sum(1, keepdims=True))
    target = rng.dirichlet(np.ones(3), size=6)
    target[0, 1] = 0.0  # a zero target probability
    return log_p, np.log(target + 1e-3) if kind == "log_distributions" else target


@pytest.mark.parametrize("name, kwargs, kind", LOSSES, ids=[f"{m[0]}-{i}" for i, m in enumerate(LOSSES)])
def test_losses_match_pytorch(name, kwargs, kind):
    torch = _torch()
    x, target = _loss_data(kind, np.random.default_rng(3))
    to_torch = {key: torch.tensor(value, dtype=torch.float64) if isinstance(value, list) else value
                for key, value in kwargs.items()}
    ours_kwargs = {key: np.array(value) if isinstance(value, list) else value for key, value in kwargs.items()}
    mine, other = sg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    loss_mine = getattr(nn, name)(**ours_kwargs)(mine, sg.tensor(target))
    loss_other = getattr(torch.nn, name)(**to_torch)(other, torch.tensor(target))
    np.testing.assert_allclose(loss_mine.detach().numpy(), loss_other.detach().numpy(), rtol=1e-10, atol=1e-12)
    loss_mine.sum().backward()
    loss_other.sum().backward()
    np.testing.assert_allclose(mine.grad.numpy(), other.grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("fn, kwargs", [
    (F.smooth_l1_loss, {"beta": 0.5}), (F.huber_loss, {"delta": 0.7}), (F.l1_loss, {}),
    (F.kl_div, {"reduction": "batchmean"}), (F.binary_cross_entropy_with_logits, {"pos_weight": np.array([2.0, 0.5])}),
])
@pytest.mark.parametrize("backend", ["numpy", "llvm"])
def test_functional_losses_on_arrays_match_finite_differences_on_both_backends(fn, kwargs, backend):
    rng = np.random.default_rng(4)
    x, target = rng.standard_normal((3, 2)), rng.uniform(size=(3, 2))
    grad = sg.compile(sg.grad(lambda x: fn(x, target, **kwargs)), backend=backend)(x)
    np.testing.assert_allclose(grad, numeric_grad(lambda x: fn(x, target, **kwargs), [x], 0), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("fn, args", [
    (F.gelu, ()), (F.gelu, ("tanh",)), (F.leaky_relu, (0.1,)), (F.elu, (0.5,)),
    (lambda x: F.layer_norm(x, (4,)), ()), (lambda x: F.batch_norm(x, None, None, training=True), ()),
    (lambda x: F.group_norm(x, 2, np.arange(1.0, 5.0), np.ones(4)), ()),
    (lambda x: sg.reshape(F.instance_norm(sg.reshape(x, (3, 2, 2))), (3, 4)), ()),
])
@pytest.mark.parametrize("backend", ["numpy", "llvm"])
def test_functional_layers_on_arrays_match_finite_differences_on_both_backends(fn, args, backend):
    x = np.random.default_rng(5).standard_normal((3, 4))
    ramp = np.linspace(-1, 1, 12).reshape(3, 4)

    def loss(x):
        return sg.sum(fn(x, *args) * ramp)
    grad = sg.compile(sg.grad(loss), backend=backend)(x)
    np.testing.assert_allclose(grad, numeric_grad(loss, [x], 0), rtol=1e-6, atol=1e-9)


def test_batch_norm_keeps_pytorch_running_statistics_and_state_dict():
    bn = nn.BatchNorm2d(2, momentum=0.5)
    assert list(bn.state_dict()) == ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]
    assert [name for name, _ in bn.named_parameters()] == ["weight", "bias"]
    x = np.random.default_rng(6).standard_normal((3, 2, 4, 4))
    bn(sg.tensor(x))
    mean, var = x.mean(axis=(0, 2, 3)), x.var(axis=(0, 2, 3), ddof=1)
    np.testing.assert_allclose(bn.running_mean.numpy(), 0.5 * mean, rtol=1e-12)
    np.testing.assert_allclose(bn.running_var.numpy(), 0.5 + 0.5 * var, rtol=1e-12)
    assert bn.num_batches_tracked.item() == 1
    bn.eval()
    out = bn(sg.tensor(x)).detach().numpy()
    np.testing.assert_allclose(out, (x - 0.5 * mean[:, None, None]) / np.sqrt(0.5 + 0.5 * var[:, None, None] + 1e-5))
    assert bn.num_batches_tracked.item() == 1
    with pytest.raises(ValueError, match="Expected more than 1 value per channel"):
        nn.BatchNorm1d(3)(sg.tensor(np.ones((1, 3))))
    with pytest.raises(ValueError, match="expected 4D input"):
        bn(sg.tensor(np.ones((2, 2))))


def _batch_norm_exact(x, w, b, g, eps=1e-5):
    """Output and gradients (x, weight, bias) of sum(g * batch_norm(x)) in float64, from the closed form."""
    mean, var = x.mean(axis=(0, 2, 3), keepdims=True), x.var(axis=(0, 2, 3), keepdims=True)
    invstd, shape = 1 / np.sqrt(var + eps), (1, -1, 1, 1)
    xhat = (x - mean) * invstd
    gx = g * w.reshape(shape)
    dx = invstd * (gx - gx.mean(axis=(0, 2, 3), keepdims=True) - xhat * (gx * xhat).mean(axis=(0, 2, 3), keepdims=True))
    return xhat * w.reshape(shape) + b.reshape(shape), dx, (g * xhat).sum(axis=(0, 2, 3)), g.sum(axis=(0, 2, 3))


def _batch_norm_float32_errors(lib, x, w, b, g):
    bn = lib.nn.BatchNorm2d(x.shape[1])
    with lib.no_grad():
        bn.weight.copy_(lib.tensor(w.astype(np.float32)))
        bn.bias.copy_(lib.tensor(b.astype(np.float32)))
    xt = lib.tensor(x.astype(np.float32), requires_grad=True)
    out = bn(xt)
    (out * lib.tensor(g.astype(np.float32))).sum().backward()
    got = [v.detach().numpy().astype(np.float64) for v in (out, xt.grad, bn.weight.grad, bn.bias.grad)]
    return [np.abs(a - e).max() / np.abs(e).max() for a, e in zip(got, _batch_norm_exact(x, w, b, g))]


def _offset_batch():
    """Channels whose mean is 10-20 times their spread, as after a conv without bias: a float32 batch norm's
    output and weight gradient then hinge on the rounding of the mean and of x - mean."""
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((8, 6, 6, 6)) * 0.5 + 10 * (1 + rng.random((1, 6, 1, 1)))).astype(np.float32)
    return x.astype(np.float64), np.linspace(0.5, 1.5, 6), np.linspace(-1, 1, 6), rng.standard_normal(x.shape)


def test_float32_batch_norm_is_accurate_where_the_mean_dwarfs_the_spread():
    """Output, input, weight and bias gradients within a few float32 ulps of the float64 closed form, relative to
    their largest magnitude (PyTorch's: 1.9e-7, 1.2e-7, 6.2e-7, 7.6e-8; x * scale + shift with float32 sums had
    3.8e-7 and 2.2e-6 for the output and weight)."""
    errors = _batch_norm_float32_errors(sg, *_offset_batch())
    assert errors[0] < 3e-7 and max(errors) < 8e-7, errors


def test_float32_batch_norm_is_as_accurate_as_pytorchs():
    torch = _torch()
    ours, theirs = (_batch_norm_float32_errors(lib, *_offset_batch()) for lib in (sg, torch))
    assert all(a <= 1.5 * t for a, t in zip(ours, theirs)), (ours, theirs)


def test_dropout_zeroes_with_probability_p_scales_the_rest_and_is_the_identity_in_eval():
    sg.manual_seed(0)
    drop = nn.Dropout(0.25)
    x = sg.tensor(np.ones((200, 50)), requires_grad=True)
    out = drop(x)
    values = out.detach().numpy()
    assert set(np.unique(values)) == {0.0, 1 / 0.75}
    assert abs((values == 0).mean() - 0.25) < 0.02
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), values)  # the gradient is the mask times the scale
    sg.manual_seed(0)
    np.testing.assert_array_equal(nn.Dropout(0.25)(x).detach().numpy(), values)  # the seed decides the mask
    drop.eval()
    assert drop(x) is x
    assert np.all(F.dropout(x, 1.0).detach().numpy() == 0)
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.Dropout(1.5)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):  # as PyTorch
        nn.Dropout(0.5, inplace=True)(x)


def test_conv_modules_initialize_as_pytorch_and_check_padding_modes():
    sg.manual_seed(1)
    conv = nn.Conv2d(4, 8, 3, groups=2)
    bound = 1 / math.sqrt(2 * 9)  # fan_in = in_channels / groups * kernel
    weights, bias = conv.weight.detach().numpy(), conv.bias.detach().numpy()
    assert weights.shape == (8, 2, 3, 3) and weights.dtype == np.float64
    assert np.abs(weights).max() <= bound and np.abs(weights).max() > 0.8 * bound
    assert np.abs(bias).max() <= bound
    assert conv.weight.is_leaf and conv.weight.requires_grad
    assert nn.Conv1d(2, 3, 2, dtype=sg.float32).weight.dtype == np.float32
    with pytest.raises(ValueError, match="padding_mode must be one of"):
        nn.Conv2d(1, 1, 3, padding_mode="reflection")
    with pytest.raises(ValueError, match="Only \"zeros\" padding mode"):  # as PyTorch
        nn.ConvTranspose2d(1, 1, 3, padding_mode="reflect")
    with pytest.raises(ValueError, match="divisible by groups"):
        nn.Conv2d(3, 4, 3, groups=2)


def test_init_functions_use_pytorch_gains_and_fans_under_no_grad():
    torch = pytest.importorskip("torch")
    for name, param in [("linear", None), ("tanh", None), ("relu", None), ("leaky_relu", None), ("leaky_relu", 0.2),
                        ("selu", None), ("conv2d", None), ("sigmoid", None)]:
        assert nn.init.calculate_gain(name, param) == pytest.approx(torch.nn.init.calculate_gain(name, param))
    sg.manual_seed(2)
    w = nn.Parameter(np.zeros((300, 40, 3, 3)))
    fan_in, fan_out = 40 * 9, 300 * 9
    assert nn.init._calculate_fan_in_and_fan_out(w) == (fan_in, fan_out)
    checks = [
        (nn.init.kaiming_uniform_, {}, math.sqrt(2) / math.sqrt(fan_in), "uniform"),  # a=0: gain sqrt(2)
        (nn.init.kaiming_uniform_, {"mode": "fan_out", "nonlinearity": "relu"}, math.sqrt(2 / fan_out), "uniform"),
        (nn.init.kaiming_normal_, {"nonlinearity": "relu"}, math.sqrt(2 / fan_in), "normal"),
        (nn.init.xavier_uniform_, {"gain": 2.0}, 2.0 * math.sqrt(2 / (fan_in + fan_out)), "uniform"),
        (nn.init.xavier_normal_, {}, math.sqrt(2 / (fan_in + fan_out)), "normal"),
        (nn.init.normal_, {"std": 0.3}, 0.3, "normal"),
        (nn.init.uniform_, {"a": -0.5, "b": 0.5}, 1 / math.sqrt(12), "uniform"),
    ]
    for fn, kwargs, std, kind in checks:
        assert fn(w, **kwargs) is w
        values = w.detach().numpy()
        assert values.std() == pytest.approx(std, rel=0.02), fn.__name__
        if kind == "uniform":
            assert np.abs(values).max() <= math.sqrt(3) * std * (1 + 1e-12)
        assert w.is_leaf and w.grad_fn is None
    for fn, value in [(nn.init.zeros_, 0.0), (nn.init.ones_, 1.0), (lambda t: nn.init.constant_(t, 0.25), 0.25)]:
        fn(w)
        assert np.all(w.detach().numpy() == value)
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        nn.init.xavier_uniform_(nn.Parameter(np.zeros(3)))


def test_module_list_and_dict_register_their_modules_as_pytorch_names_them():
    torch = _torch()
    ours = nn.ModuleList([nn.Linear(2, 3), nn.ReLU()])
    ours.append(nn.Linear(3, 1))
    layers = nn.ModuleDict({"first": nn.Linear(1, 2)})
    layers["second"] = nn.BatchNorm1d(2)
    theirs = torch.nn.ModuleList([torch.nn.Linear(2, 3), torch.nn.ReLU()])
    theirs.append(torch.nn.Linear(3, 1))
    their_layers = torch.nn.ModuleDict({"first": torch.nn.Linear(1, 2)})
    their_layers["second"] = torch.nn.BatchNorm1d(2)
    for mine, other in ((ours, theirs), (layers, their_layers)):
        assert list(mine.state_dict()) == list(other.state_dict())
    assert len(ours) == 3 and isinstance(ours[-1], nn.Linear) and len(ours[1:]) == 2
    assert list(layers) == ["first", "second"] and "second" in layers
    del ours[0]
    assert [name for name, _ in ours.named_parameters()] == ["1.weight", "1.bias"]


def test_a_slice_of_a_sequential_keeps_the_names_as_pytorchs():
    """Sequential[a:b] keeps its modules' names (the neural-style tutorial names them conv_1, style_loss_1 ... and
    prints model[:i + 1]; they were renumbered 0, 1, ...), a ModuleList's slice renumbers them, as PyTorch's."""
    named = nn.Sequential(collections.OrderedDict([("a", nn.ReLU()), ("b", nn.Linear(2, 2)), ("c", nn.Tanh())]))
    assert [name for name, _ in named[1:].named_children()] == ["b", "c"] and named[1:][0] is named.b
    assert [name for name, _ in nn.Sequential(nn.ReLU(), nn.Tanh(), nn.ReLU())[1:].named_children()] == ["1", "2"]
    assert list(named[1:].state_dict()) == ["b.weight", "b.bias"]
    assert [name for name, _ in nn.ModuleList([nn.ReLU(), nn.Tanh(), nn.ReLU()])[1:].named_children()] == ["0", "1"]
    torch = _torch()
    theirs = torch.nn.Sequential(collections.OrderedDict([("a", torch.nn.ReLU()), ("b", torch.nn.Linear(2, 2)),
                                                          ("c", torch.nn.Tanh())]))
    assert repr(named[1:]) == repr(theirs[1:])


def test_module_float_and_double_convert_floating_buffers_too():
    """model.float() converted parameters only: BatchNorm's float64 running statistics then promoted every
    float32 forward in eval mode to float64, as PyTorch's .float() does not."""
    model = sg.nn.Sequential(sg.nn.Conv2d(1, 2, 3), sg.nn.BatchNorm2d(2)).float()
    assert {name: str(b.dtype) for name, b in model.named_buffers()} == {
        "1.running_mean": "float32", "1.running_var": "float32", "1.num_batches_tracked": "int64"}
    x = sg.tensor(np.random.default_rng(0).normal(size=(2, 1, 5, 5)).astype(np.float32))
    model(x)
    model.eval()
    assert model(x).dtype == np.float32 and model[1].running_mean.dtype == np.float32
    model.double()
    assert model[1].running_var.dtype == np.float64 and model[1].num_batches_tracked.dtype == np.int64


def test_cross_entropy_with_every_target_ignored_is_nan_with_a_zero_gradient():
    """0/0 is NaN as in PyTorch, but its gradient was NaN too: one padding-only batch made every parameter NaN."""
    logits = sg.tensor(np.random.default_rng(0).normal(size=(5, 4)), requires_grad=True)
    loss = sg.nn.functional.cross_entropy(logits, sg.tensor(np.full(5, -100)))
    loss.backward()
    assert np.isnan(loss.item()) and np.array_equal(logits.grad.numpy(), np.zeros((5, 4)))


def test_elu_gradient_at_infinities_and_zero_is_pytorchs():
    """At +inf the unselected branch's expm1 derivative (inf) times 0 was NaN; PyTorch: 1 (and alpha at 0)."""
    x = sg.tensor([np.inf, -np.inf, 0.0, -1.0, 2.0], requires_grad=True)
    sg.nn.functional.elu(x, 1.5).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0, 0.0, 1.5, 1.5 * np.exp(-1.0), 1.0], rtol=1e-15)


def test_conv_module_checks_its_sizes_when_built():
    """Conv2d(4, 6, kernel_size=(3,)) was accepted and failed later on the weight's shape."""
    with pytest.raises(ValueError, match="kernel_size must be an int or 2 ints"):
        sg.nn.Conv2d(4, 6, kernel_size=(3,))


def test_conv_transpose_modules_initialize_as_pytorch_and_reach_an_output_size():
    sg.manual_seed(2)
    conv = nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, groups=2)
    bound = 1 / math.sqrt(3 * 9)  # PyTorch's fan_in of the (in, out / groups, *kernel) weight
    weights = conv.weight.detach().numpy()
    assert weights.shape == (4, 3, 3, 3) and np.abs(weights).max() <= bound < 1.25 * np.abs(weights).max()
    assert np.abs(conv.bias.detach().numpy()).max() <= bound
    x = sg.tensor(np.random.default_rng(0).standard_normal((1, 4, 5, 5)))
    assert conv(x).shape == (1, 6, 9, 9) and conv(x, output_size=(1, 6, 10, 9)).shape == (1, 6, 10, 9)
    with pytest.raises(ValueError, match="valid sizes range from"):
        conv(x, output_size=(11, 9))
    torch = _torch()
    theirs = torch.nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, groups=2).double()
    _same_weights(conv, theirs)
    np.testing.assert_allclose(conv(x, output_size=(10, 10)).detach().numpy(),
                               theirs(torch.tensor(x.numpy()), output_size=(10, 10)).detach().numpy(), atol=1e-12)


def test_conv_transpose_refuses_bad_arguments_clearly():
    x, w = np.ones((1, 4, 3, 3)), np.ones((4, 2, 3, 3))
    with pytest.raises(ValueError, match="output padding must be smaller"):
        F.conv_transpose2d(x, w, stride=2, output_padding=2)
    with pytest.raises(ValueError, match="expected input.*4 channels"):
        F.conv_transpose2d(np.ones((1, 3, 3, 3)), w)
    with pytest.raises(ValueError, match="non-positive output size"):
        F.conv_transpose2d(np.ones((1, 4, 1, 1)), w, padding=2)
    with pytest.raises(TypeError, match="float"):
        F.conv_transpose2d(np.ones((1, 4, 3, 3), dtype=np.int64), w)
    with pytest.raises(ValueError, match="transposed convolutions take int padding"):
        nn.ConvTranspose2d(4, 2, 3, padding="same")
    empty = F.conv_transpose2d(np.ones((0, 4, 3, 3)), w)  # an empty batch
    assert empty.shape == (0, 2, 5, 5)


def test_group_and_instance_norm_edge_cases():
    with pytest.raises(ValueError, match="divisible by num_groups"):
        F.group_norm(np.ones((2, 3, 4)), 2)
    with pytest.raises(ValueError, match="num_channels must be divisible"):
        nn.GroupNorm(2, 3)
    with pytest.raises(ValueError, match="expected 2D or 3D input"):
        nn.InstanceNorm1d(3)(sg.tensor(np.ones((2, 3, 4, 5))))
    with pytest.raises(ValueError, match="more than 1 spatial element"):
        nn.InstanceNorm1d(3, track_running_stats=True)(sg.tensor(np.ones((2, 3, 1))))
    constant = F.group_norm(sg.tensor(np.full((2, 4, 3), 5.0)), 2)  # zero variance: 0, as PyTorch
    np.testing.assert_array_equal(constant.numpy(), np.zeros((2, 4, 3)))
    assert F.group_norm(np.ones((0, 4, 3)), 2).shape == (0, 4, 3)
    with_inf = F.group_norm(np.array([[[1.0, np.inf], [0.0, 2.0]]]), 1)
    assert np.isnan(np.asarray(with_inf)).all()  # as PyTorch: inf - inf in the centered values
