"""sg.nn: Module registration, state dicts, layers, losses (vs NumPy formulas and PyTorch when installed)."""
import collections

import numpy as np
import pytest

import symgrad as sg
import symgrad.nn.functional as F

RNG = np.random.default_rng(3)


class TwoLayer(sg.nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = sg.nn.Linear(4, 8)
        self.out = sg.nn.Linear(8, 3, bias=False)
        self.scale = sg.nn.Parameter(sg.tensor(2.0))
        self.note = "not a parameter"

    def forward(self, x):
        return self.out(sg.relu(self.hidden(x))) * self.scale


def test_parameters_are_registered_by_attribute():
    model = TwoLayer()
    names = [name for name, _ in model.named_parameters()]
    assert names == ["scale", "hidden.weight", "hidden.bias", "out.weight"]
    assert all(p.requires_grad and p.is_leaf for p in model.parameters())
    assert model.out.bias is None and model.note == "not a parameter"
    assert model.hidden.weight.shape == (8, 4)
    bound = 1 / np.sqrt(4)
    assert np.all(np.abs(model.hidden.weight.detach().numpy()) <= bound)
    assert repr(model.hidden) == "Linear(in_features=4, out_features=8, bias=True)"
    assert repr(model.hidden.weight).startswith("Parameter containing:\ntensor(")


def test_replacing_a_parameter_keeps_its_place_and_a_plain_tensor_is_refused():
    """m.weight = Parameter(...) moved weight after bias in parameters() (an optimizer or a zip with PyTorch's
    list then paired the wrong tensors), and m.weight = m.weight * 2 silently turned the parameter into an
    attribute that no optimizer or state_dict saw; PyTorch keeps the place and raises TypeError."""
    model = sg.nn.Sequential(sg.nn.Linear(2, 3), sg.nn.Tanh(), sg.nn.Linear(3, 1))
    model[0].weight = sg.nn.Parameter(model[0].weight.detach() * 0.5)
    assert [name for name, _ in model.named_parameters()] == ["0.weight", "0.bias", "2.weight", "2.bias"]
    with pytest.raises(TypeError, match="cannot assign 'Tensor' as parameter 'weight'"):
        model[0].weight = model[0].weight * 2
    model[0].bias = None
    assert model[0].bias is None and [name for name, _ in model[0].named_parameters()] == ["weight"]
    torch = pytest.importorskip("torch")
    theirs = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.Tanh(), torch.nn.Linear(3, 1))
    theirs[0].weight = torch.nn.Parameter(theirs[0].weight.detach() * 0.5)
    theirs[0].bias = None
    assert [n for n, _ in theirs.named_parameters()] == [n for n, _ in model.named_parameters()]


def test_zero_grad_train_eval_and_state_dict_round_trip():
    model = TwoLayer()
    model(sg.tensor(RNG.standard_normal((5, 4)))).sum().backward()
    assert all(p.grad is not None for p in model.parameters())
    model.zero_grad(set_to_none=False)
    assert all(not np.any(p.grad.numpy()) for p in model.parameters())
    model.zero_grad()
    assert all(p.grad is None for p in model.parameters())
    assert not model.eval().training and not model.hidden.training and model.train().out.training
    state = model.state_dict()
    assert isinstance(state, collections.OrderedDict) and list(state) == [n for n, _ in model.named_parameters()]
    other = TwoLayer()
    other.load_state_dict(state)
    x = sg.tensor(RNG.standard_normal((2, 4)))
    np.testing.assert_array_equal(other(x).detach().numpy(), model(x).detach().numpy())
    with pytest.raises(RuntimeError, match="missing keys"):
        other.load_state_dict({"scale": state["scale"]})


def test_sequential_and_activation_modules():
    model = sg.nn.Sequential(sg.nn.Linear(3, 4), sg.nn.Tanh(), sg.nn.Linear(4, 2), sg.nn.Sigmoid(), sg.nn.ReLU())
    assert len(model) == 5 and isinstance(model[1], sg.nn.Tanh)
    assert repr(model).splitlines()[1] == "  (0): Linear(in_features=3, out_features=4, bias=True)"
    x = RNG.standard_normal((6, 3))
    out = model(sg.tensor(x))
    w1, b1, w2, b2 = (p.detach().numpy() for p in model.parameters())
    expected = 1 / (1 + np.exp(-(np.tanh(x @ w1.T + b1) @ w2.T + b2)))
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-12)


def test_functional_losses_against_formulas():
    logits = RNG.standard_normal((5, 3))
    target = np.array([0, 2, 1, 1, 0])
    log_probs = logits - np.log(np.exp(logits).sum(1, keepdims=True))
    t = sg.tensor(logits, requires_grad=True)
    per_sample = F.cross_entropy(t, target, reduction="none")
    np.testing.assert_allclose(per_sample.detach().numpy(), -log_probs[np.arange(5), target], rtol=1e-12)
    loss = sg.nn.CrossEntropyLoss()(t, sg.tensor(target))
    loss.backward()
    onehot = np.eye(3)[target]
    np.testing.assert_allclose(t.grad.numpy(), (np.exp(log_probs) - onehot) / 5, rtol=1e-10)
    assert F.cross_entropy(t, target, reduction="sum").item() == pytest.approx(-log_probs[np.arange(5), target].sum())
    probs = np.full((5, 3), 1 / 3)
    assert F.cross_entropy(t, probs).item() == pytest.approx(-(log_probs / 3).sum(1).mean())
    y = RNG.standard_normal((5, 3))
    assert sg.nn.MSELoss()(t, y).item() == pytest.approx(np.mean((logits - y) ** 2))
    assert F.mse_loss(t, y, reduction="sum").item() == pytest.approx(np.sum((logits - y) ** 2))
    np.testing.assert_allclose(F.softmax(t, dim=1).detach().numpy().sum(1), np.ones(5))
    with pytest.raises(IndexError, match="out of bounds"):
        F.cross_entropy(t, np.array([0, 3, 1, 1, 0]))
    with pytest.raises(ValueError, match="reduction"):
        F.mse_loss(t, y, reduction="avg")


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cross_entropy_with_classes_along_dim_1_of_a_k_dimensional_input(reduction, dtype):
    """(N, C, d) logits with (N, d) targets, as a sequence or segmentation model gives them."""
    logits = RNG.standard_normal((2, 4, 3)).astype(dtype)
    target = np.array([[0, 3, 1], [2, 2, 0]])
    log_probs = logits - np.log(np.exp(logits).sum(1, keepdims=True))
    n, d = np.meshgrid(np.arange(2), np.arange(3), indexing="ij")
    per_position = -log_probs[n, target, d]
    expected = {"mean": per_position.mean(), "sum": per_position.sum(), "none": per_position}[reduction]
    t = sg.tensor(logits, requires_grad=True)
    loss = F.cross_entropy(t, sg.tensor(target), reduction=reduction)
    np.testing.assert_allclose(loss.detach().numpy(), expected, rtol=1e-5 if dtype == np.float32 else 1e-12)
    loss.sum().backward()
    onehot = np.moveaxis(np.eye(4)[target], -1, 1)
    scale = 1 / 6 if reduction == "mean" else 1.0
    np.testing.assert_allclose(t.grad.numpy(), (np.exp(log_probs) - onehot) * scale,
                               rtol=1e-5 if dtype == np.float32 else 1e-10, atol=1e-7)
    assert t.grad.dtype == dtype


def test_class_targets_of_the_wrong_shape_are_an_error():
    """A target of another batch size used to pick the wrong elements of the flattened input silently."""
    with pytest.raises(ValueError, match=r"needs class targets of shape \(4,\), got \(2,\)"):
        F.cross_entropy(sg.tensor(np.ones((4, 3)), requires_grad=True), np.array([0, 1]))
    with pytest.raises(ValueError, match=r"needs class targets of shape \(4, 2\), got \(4,\)"):
        F.nll_loss(sg.tensor(np.ones((4, 3, 2)), requires_grad=True), np.array([0, 1, 0, 0]))


def test_k_dimensional_cross_entropy_matches_pytorch():
    torch = pytest.importorskip("torch")
    logits, target = RNG.standard_normal((3, 5, 2, 4)), RNG.integers(0, 5, (3, 2, 4))
    results = []
    for lib, fn in ((sg, F), (torch, torch.nn.functional)):
        t = lib.tensor(logits, requires_grad=True)
        losses = [fn.cross_entropy(t, lib.tensor(target), reduction=r) for r in ("mean", "sum", "none")]
        (losses[0] + 2 * losses[1] + (losses[2] * lib.tensor(target * 0.1)).sum()).backward()
        results.append([loss.detach().numpy() for loss in losses] + [t.grad.numpy()])
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_binary_cross_entropy_gradient_is_finite_at_saturated_probabilities(dtype):
    """A sigmoid saturates to exactly 0 or 1 (float32 logits beyond about 17, as a GAN's discriminator
    gives): PyTorch's gradient is (p - y) / max(p (1 - p), 1e-12), where the derivative of the clamped
    logs was 0 * inf = NaN."""
    p = sg.tensor(np.array([0.0, 1.0, 1.0, 0.0, 0.25], dtype), requires_grad=True)
    y = sg.tensor(np.array([1.0, 0.0, 1.0, 0.0, 1.0], dtype), requires_grad=True)
    loss = F.binary_cross_entropy(p, y, reduction="none")
    np.testing.assert_allclose(loss.detach().numpy(), [100.0, 100.0, 0.0, 0.0, np.log(4)], rtol=1e-6)
    loss.sum().backward()
    np.testing.assert_allclose(p.grad.numpy(), [-1e12, 1e12, 0.0, 0.0, -4.0], rtol=1e-6)
    np.testing.assert_allclose(y.grad.numpy(), [np.inf, -np.inf, -np.inf, np.inf, np.log(0.75 / 0.25)], rtol=1e-6)
    assert p.grad.dtype == dtype and y.grad.dtype == dtype
    q = sg.tensor(np.array([0.2, 0.7]), requires_grad=True)  # second derivative: (p^2 - 2py + y) / (p(1-p))^2
    g, = sg.autograd.grad(F.binary_cross_entropy(q, np.array([1.0, 0.0]), reduction="sum"), q, create_graph=True)
    h, = sg.autograd.grad(g.sum(), q)
    qs, ys = np.array([0.2, 0.7]), np.array([1.0, 0.0])
    np.testing.assert_allclose(h.numpy(), (qs ** 2 - 2 * qs * ys + ys) / (qs * (1 - qs)) ** 2, rtol=1e-12)


def test_binary_cross_entropy_at_saturation_matches_torch():
    torch = pytest.importorskip("torch")
    logits = np.array([-30.0, -20.0, 0.0, 20.0, 100.0, 3.0], np.float32)  # p == 1 exactly from 17 on
    target = np.array([1.0, 0.0, 1.0, 0.0, 1.0, 0.3], np.float32)
    results = []
    for lib, fn in ((sg, F), (torch, torch.nn.functional)):
        z = lib.tensor(logits, requires_grad=True)
        p = lib.sigmoid(z * 1.0)
        p.retain_grad()
        y = lib.tensor(target, requires_grad=True)
        fn.binary_cross_entropy(p, y, reduction="sum").backward()
        results.append((p.grad.numpy(), y.grad.numpy(), z.grad.numpy()))  # z's: sigmoid' is s (1 - s) in both
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-5)


def test_linear_and_cross_entropy_match_pytorch():
    torch = pytest.importorskip("torch")
    x, target = RNG.standard_normal((7, 4)), RNG.integers(0, 3, 7)
    layer = sg.nn.Linear(4, 3)
    tlayer = torch.nn.Linear(4, 3).double()
    with torch.no_grad():
        tlayer.weight.copy_(torch.tensor(layer.weight.detach().numpy()))
        tlayer.bias.copy_(torch.tensor(layer.bias.detach().numpy()))
    loss = sg.nn.CrossEntropyLoss()(layer(sg.tensor(x)), target)
    tloss = torch.nn.CrossEntropyLoss()(tlayer(torch.tensor(x)), torch.tensor(target))
    loss.backward()
    tloss.backward()
    assert loss.item() == pytest.approx(tloss.item(), rel=1e-12)
    np.testing.assert_allclose(layer.weight.grad.numpy(), tlayer.weight.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(layer.bias.grad.numpy(), tlayer.bias.grad.numpy(), rtol=1e-10)


def test_binary_losses_and_small_modules_match_pytorch():
    torch = pytest.importorskip("torch")
    logits, target = RNG.standard_normal((6, 2)), RNG.integers(0, 2, (6, 2)).astype(float)
    probs = 1 / (1 + np.exp(-logits))
    pairs = [(sg.nn.BCEWithLogitsLoss(), torch.nn.BCEWithLogitsLoss(), logits),
             (sg.nn.BCELoss(reduction="sum"), torch.nn.BCELoss(reduction="sum"), probs)]
    for ours, theirs, data in pairs:
        t = sg.tensor(data, requires_grad=True)
        tt = torch.tensor(data, requires_grad=True)
        loss, tloss = ours(t, sg.tensor(target)), theirs(tt, torch.tensor(target))
        loss.backward()
        tloss.backward()
        assert loss.item() == pytest.approx(tloss.item(), rel=1e-12)
        np.testing.assert_allclose(t.grad.numpy(), tt.grad.numpy(), rtol=1e-10)
    x = RNG.standard_normal((2, 3, 4))
    flat = sg.nn.Sequential(sg.nn.Flatten(), sg.nn.Identity(), sg.nn.LogSoftmax(dim=1))(sg.tensor(x))
    expected = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.LogSoftmax(dim=1))(torch.tensor(x))
    np.testing.assert_allclose(flat.numpy(), expected.numpy(), rtol=1e-12)
    nll = sg.nn.NLLLoss()(flat, np.array([3, 5]))
    assert nll.item() == pytest.approx(torch.nn.NLLLoss()(expected, torch.tensor([3, 5])).item())


def test_deepcopy_and_pickle_keep_parameters():
    import copy
    import pickle
    model = TwoLayer()
    clone = copy.deepcopy(model)
    restored = pickle.loads(pickle.dumps(model))
    x = sg.tensor(RNG.standard_normal((2, 4)))
    for other in (clone, restored):
        assert isinstance(other.hidden.weight, sg.nn.Parameter) and other.hidden.weight.requires_grad
        assert other.hidden.weight is not model.hidden.weight
        np.testing.assert_array_equal(other(x).detach().numpy(), model(x).detach().numpy())


def test_mean_losses_of_an_empty_batch_are_nan_as_in_pytorch():
    logits = sg.tensor(np.ones((0, 4)), requires_grad=True)
    with np.errstate(all="ignore"):  # 0 / 0, and 1 / 0 in the (empty) gradient
        loss = F.cross_entropy(logits, np.zeros(0, dtype=np.int64))
        loss.backward()
        assert np.isnan(loss.item()) and logits.grad.shape == (0, 4)
        assert np.isnan(F.mse_loss(sg.tensor(np.ones(0)), sg.tensor(np.ones(0))).item())
        assert F.mse_loss(sg.tensor(np.ones(0)), sg.tensor(np.ones(0)), reduction="sum").item() == 0.0


def test_loss_grad_fn_chain_and_printed_parameter_are_pytorchs():
    """The neural-networks tutorial prints loss.grad_fn, its next_functions[0][0] and the next one's, and
    print(param): they were MseLossBackward0, SumBackward0, PowBackward0 (the loss's own primitives), and the
    bare tensor without 'Parameter containing:'."""
    torch = pytest.importorskip("torch")
    def names(functions):
        return [f and f.name().replace("torch::autograd::", "") for f, _ in functions]
    chains = []
    for lib in (sg, torch):
        layer = lib.nn.Linear(3, 2, dtype=lib.float64)
        x, zeros = lib.tensor(np.ones((4, 3))), lib.tensor(np.zeros((4, 2)))
        functional = lib.nn.functional
        losses = [functional.mse_loss(layer(x), zeros), functional.binary_cross_entropy_with_logits(layer(x), zeros),
                  functional.smooth_l1_loss(layer(x), zeros), functional.binary_cross_entropy(layer(x).sigmoid(), zeros)]
        chains.append([(loss.grad_fn.name(), names(loss.grad_fn.next_functions),
                        names(loss.grad_fn.next_functions[0][0].next_functions)[:2]) for loss in losses]
                      + [str(layer.bias).splitlines()[0]])
    assert chains[0] == chains[1]


def test_linear_takes_device_before_dtype_as_pytorchs():
    """nn.Linear(in, out, bias, device, dtype): mnist_forward_forward's Layer(nn.Linear) passes them positionally."""
    class Layer(sg.nn.Linear):
        def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
            super().__init__(in_features, out_features, bias, device, dtype)

    assert Layer(3, 2).weight.dtype == sg.float64 and Layer(3, 2, True, "cpu", sg.float32).bias.dtype == sg.float32
    assert sg.nn.Linear(3, 2, False, sg.device("cpu"), sg.float32).weight.dtype == sg.float32
    with pytest.raises(RuntimeError, match="cuda"):
        sg.nn.Linear(3, 2, True, "cuda")
