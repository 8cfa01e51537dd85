"""nn.utils.prune's unstructured basics against PyTorch: l1_unstructured (a fraction or a count, again among the
entries left), random_unstructured, remove, is_pruned; names, masks and gradients."""
import numpy as np
import pytest

import symgrad as sg

W = np.random.default_rng(0).standard_normal((3, 4))  # no ties in |W|
X = np.linspace(-1, 1, 8).reshape(2, 4)


def _pruned(lib, steps):
    layer = lib.nn.Linear(4, 3).double()
    with lib.no_grad():
        layer.weight.copy_(lib.tensor(W))
        layer.bias.zero_()
    for amount in steps:
        lib.nn.utils.prune.l1_unstructured(layer, "weight", amount=amount)
    out = layer(lib.tensor(X))
    (out * lib.tensor(np.arange(6.0).reshape(2, 3))).sum().backward()
    return layer, out.detach().numpy()


@pytest.mark.parametrize("steps", [(0.5,), (3,), (0.25, 2), (0.0,), (1.0,)])
def test_l1_unstructured_masks_and_gradients(steps):
    layer, out = _pruned(sg, steps)
    mask = layer.weight_mask.numpy()
    pruned = sum(round(a * 12) if isinstance(a, float) else a for a in steps[:1])
    if len(steps) == 2:
        pruned += steps[1]
    assert int((mask == 0).sum()) == pruned
    assert np.all(np.abs(W[mask == 0]).max(initial=0) <= np.abs(W[mask == 1]).min(initial=np.inf))  # smallest ones
    np.testing.assert_array_equal(layer.weight.detach().numpy(), W * mask)
    weights = np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(layer.weight_orig.grad.numpy(), (weights.T @ X) * mask, rtol=1e-14)  # masked
    assert list(layer.state_dict()) == ["bias", "weight_orig", "weight_mask"]
    assert sg.nn.utils.prune.is_pruned(layer)
    torch = pytest.importorskip("torch")
    pytest.importorskip("torch.nn.utils.prune")
    theirs, their_out = _pruned(torch, steps)
    np.testing.assert_array_equal(mask, theirs.weight_mask.numpy())
    np.testing.assert_allclose(out, their_out, rtol=1e-14)
    np.testing.assert_allclose(layer.weight_orig.grad.numpy(), theirs.weight_orig.grad.numpy(), rtol=1e-14)
    assert list(layer.state_dict()) == list(theirs.state_dict())


def test_random_unstructured_and_remove():
    sg.manual_seed(3)
    layer = sg.nn.Linear(10, 10)
    sg.nn.utils.prune.random_unstructured(layer, "weight", amount=0.3)
    mask = layer.weight_mask.numpy().copy()
    assert int((mask == 0).sum()) == 30
    sg.manual_seed(3)
    again = sg.nn.Linear(10, 10)
    sg.nn.utils.prune.random_unstructured(again, "weight", amount=0.3)
    np.testing.assert_array_equal(again.weight_mask.numpy(), mask)  # sg.manual_seed's generator
    layer.weight_orig.data = layer.weight_orig.data + 1.0
    out = layer(sg.ones(1, 10))  # the pre-hook recomputes weight from the changed original
    np.testing.assert_allclose(layer.weight.detach().numpy(), layer.weight_orig.detach().numpy() * mask)
    assert out.shape == (1, 10)
    sg.nn.utils.prune.remove(layer, "weight")
    assert list(dict(layer.named_parameters())) == ["bias", "weight"] and not sg.nn.utils.prune.is_pruned(layer)
    assert isinstance(layer.weight, sg.nn.Parameter) and int((layer.weight.detach().numpy() == 0).sum()) >= 30
    with pytest.raises(ValueError, match="has to be pruned"):
        sg.nn.utils.prune.remove(layer, "weight")
    with pytest.raises(ValueError, match="amount"):
        sg.nn.utils.prune.l1_unstructured(layer, "weight", amount=1.5)
    with pytest.raises(TypeError, match="bool"):  # (it pruned every entry, as amount=1.0; PyTorch's a TypeError)
        sg.nn.utils.prune.l1_unstructured(layer, "weight", amount=True)
