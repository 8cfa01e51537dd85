"""PyTorch's `inplace=True` activations and dropouts (nn.ReLU(inplace=True), F.relu_, ...): an eager tensor is
overwritten and returned, with PyTorch's errors for a leaf that requires grad and for a value a backward needs;
inside sg.compile the result is a new value. Checked against PyTorch where it is installed."""
import numpy as np
import pytest

import symgrad as sg
from symgrad.nn import functional as F

torch = pytest.importorskip("torch")
tF = torch.nn.functional

X = np.array([[-2.0, -0.5, 0.0, 0.3, 1.5, np.inf], [-np.inf, 3.0, -0.0, 7.0, -1e-300, 0.9]])
IN_PLACE = [  # (name, extra positional arguments)
    ("relu", ()), ("leaky_relu", (0.2,)), ("elu", (0.75,)), ("hardtanh", (-0.5, 0.5)), ("relu6", ()), ("selu", ()),
    ("celu", (1.25,)), ("silu", ()), ("mish", ()), ("hardsigmoid", ()), ("hardswish", ()), ("threshold", (0.2, -3.0)),
]


def run(lib, functional, name, args, inplace):
    """The input's values after the call, the result's, whether the call returned its input, and the leaf's
    gradient of sum(result * 2)."""
    x = lib.tensor(X, requires_grad=True)
    y = x * 1.5
    out = getattr(functional, name)(y, *args, inplace=inplace)
    (out * 2).sum().backward()
    return y.detach().numpy().copy(), out.detach().numpy().copy(), out is y, x.grad.numpy().copy()


@pytest.mark.parametrize("name, args", IN_PLACE)
def test_in_place_activation_matches_pytorch(name, args):
    """The same numbers as out of place, and as PyTorch's (which computes hardsigmoid's derivative with a float32
    1/6)."""
    written, values, returned_self, grad = run(sg, F, name, args, inplace=True)
    _, want_values, _, want_grad = run(torch, tF, name, args, inplace=False)
    np.testing.assert_allclose(values, want_values, rtol=1e-12, atol=1e-300)
    tolerance = 1e-7 if name == "hardsigmoid" else 1e-12
    np.testing.assert_allclose(grad, want_grad, rtol=tolerance, atol=1e-300)
    assert returned_self and run(torch, tF, name, args, inplace=True)[2]
    np.testing.assert_array_equal(written, values)
    untouched, *out_of_place = run(sg, F, name, args, inplace=False)
    np.testing.assert_array_equal(untouched, X * 1.5)
    np.testing.assert_array_equal(out_of_place[0], values)
    np.testing.assert_array_equal(out_of_place[2], grad)


@pytest.mark.parametrize("name", ["relu_", "leaky_relu_", "elu_", "hardtanh_", "selu_", "celu_"])
def test_underscore_forms_write_their_input(name):
    x = sg.tensor(X[:, :5].copy())
    version = x._version.value
    assert getattr(F, name)(x) is x
    np.testing.assert_allclose(x.numpy(), getattr(tF, name)(torch.tensor(X[:, :5])).numpy(), rtol=1e-12)
    assert x._version.value == version + 1
    assert F.threshold_(sg.tensor([1.0, -1.0]), 0.0, 5.0).tolist() == [1.0, 5.0]


def test_in_place_refusals_match_pytorch():
    leaf = sg.tensor(X, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        F.relu(leaf, inplace=True)
    x = sg.tensor(X[:, :5], requires_grad=True)
    y = x.sigmoid()  # sigmoid's backward reads its output
    F.relu_(y)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_in_place_through_a_view_reaches_its_base():
    x = sg.tensor(X[:, :5], requires_grad=True)
    y = x * 1
    F.elu(y[0], 1.0, True)
    (y * y).sum().backward()
    tx = torch.tensor(X[:, :5], requires_grad=True)
    ty = tx * 1
    tF.elu(ty[0], 1.0, True)
    (ty * ty).sum().backward()
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12)


def test_in_place_dropout_in_training_and_eval():
    sg.manual_seed(0)
    y = sg.tensor(np.ones((4, 3, 2, 2))) * 1
    assert F.dropout(y, 0.5, True, True) is y  # some zeros, the rest 2: written into y
    assert set(np.unique(y.numpy())) <= {0.0, 2.0}
    z = sg.tensor(np.ones((4, 3, 2, 2))) * 1
    assert F.dropout2d(z, 0.5, True, True) is z
    assert all(len(np.unique(plane)) == 1 for plane in z.numpy().reshape(12, 4))  # whole channels
    w = sg.tensor(np.ones(3))
    assert F.dropout(w, 0.5, False, True) is w and w.tolist() == [1.0, 1.0, 1.0]


def model_of(lib):
    layers = lib.nn
    torch_like = lib is torch
    (torch.manual_seed if torch_like else sg.manual_seed)(0)
    model = layers.Sequential(layers.Linear(6, 8), layers.ReLU(inplace=True), layers.Linear(8, 8),
                              layers.LeakyReLU(0.2, inplace=True), layers.Dropout(0.3, inplace=True),
                              layers.Linear(8, 8), layers.Hardtanh(-2, 2, True), layers.Linear(8, 8),
                              layers.ELU(inplace=True), layers.Linear(8, 1))
    return model.double()


def test_model_with_in_place_layers_eager_compiled_and_pytorch():
    model, reference = model_of(sg), model_of(torch)
    reference.load_state_dict({k: torch.tensor(v.detach().numpy()) for k, v in model.state_dict().items()})
    model.eval()
    reference.eval()
    data = np.random.default_rng(1).normal(size=(5, 6))
    loss = model(sg.tensor(data)).square().sum()
    loss.backward()
    want = reference(torch.tensor(data)).square().sum()
    want.backward()
    np.testing.assert_allclose(loss.item(), want.item(), rtol=1e-12)
    for (name, p), q in zip(model.named_parameters(), reference.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-10, err_msg=name)
    compiled = sg.compile(lambda x: sg.sum(model(x) ** 2))
    np.testing.assert_allclose(compiled(data), want.item(), rtol=1e-12)
    assert "inplace=True" in repr(model[1]) and repr(model[3]) == "LeakyReLU(negative_slope=0.2, inplace=True)"


def test_traced_value_gets_a_new_value():
    """A traced value cannot change: F.relu_(x) returns the result, which x = F.relu_(x) binds as PyTorch does."""
    def f(x):
        x = F.relu_(x * 1)
        return sg.sum(F.leaky_relu(x - 1, 0.5, inplace=True))
    data = np.array([-1.0, 0.0, 2.0, 3.0])
    np.testing.assert_allclose(sg.compile(f)(data), f(sg.tensor(data)).item())
    np.testing.assert_allclose(sg.grad(f)(data), [0.0, 0.0, 1.0, 1.0])


POOLED = np.array([[[[1.0, 1.0, -np.inf, 0.0], [-0.0, 2.0, -np.inf, -0.0], [np.nan, 3.0, -1.0, -2.0],
                     [4.0, np.nan, -3.0, -1.0]]]])
POOLS = [  # (name, a function of (functional, x))
    ("max_pool1d", lambda functional, x: functional.max_pool1d(x[0], 2)),
    ("max_pool2d", lambda functional, x: functional.max_pool2d(x, 2)),
    ("max_pool2d stride 1", lambda functional, x: functional.max_pool2d(x, 2, stride=1, padding=1)),
    ("max_pool3d", lambda functional, x: functional.max_pool3d(x.reshape(1, 1, 2, 2, 4), 2)),
    ("adaptive_max_pool2d", lambda functional, x: functional.adaptive_max_pool2d(x, 3)),
    ("empty batch", lambda functional, x: functional.max_pool2d(x[:0], 2)),
]


@pytest.mark.parametrize("name, pool", POOLS, ids=[name for name, _ in POOLS])
def test_in_place_activation_after_max_pooling_matches_pytorch(name, pool):
    """The spatial transformer tutorial's `nn.MaxPool2d(2, stride=2), nn.ReLU(True)`: the backward refused
    ('modified by an inplace operation ... the output of FirstMaxBackward0'), as max pooling's gradient read its
    output; PyTorch's reads the input (through saved indices). Ties, -0.0, -inf and NaN windows included: a window
    with two NaNs gave its gradient to the first, PyTorch (and symgrad's return_indices) to the last."""
    results = []
    for lib, functional in ((sg, F), (torch, tF)):
        x = lib.tensor(POOLED, requires_grad=True)
        out = functional.relu(pool(functional, x * 1.0), inplace=True)
        (out * lib.tensor(np.arange(1.0, 1.0 + out.numel()).reshape(tuple(out.shape)))).sum().backward()
        results.append((out.detach().numpy(), x.grad.numpy()))
    (ours, our_grad), (theirs, their_grad) = results
    np.testing.assert_array_equal(ours, theirs)
    np.testing.assert_array_equal(our_grad, their_grad)
