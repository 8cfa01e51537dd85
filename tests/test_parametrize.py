"""nn.utils.parametrize (register_parametrization, remove_parametrizations, is_parametrized) and
nn.utils.parametrizations.weight_norm: PyTorch's names, values and gradients (float64, finite differences)."""
import numpy as np
import pytest

import symgrad as sg
from gradcheck import numeric_grad

W = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5], [-2.0, 1.0, 0.75]])
X = np.linspace(-1, 1, 6).reshape(2, 3)


def _symmetric(lib):
    class Symmetric(lib.nn.Module):
        def forward(self, x):
            return x.triu() + x.triu(1).transpose(-1, -2)

        def right_inverse(self, a):
            return a.triu()
    return Symmetric()


def _linear(lib):
    layer = lib.nn.Linear(3, 3).double()
    with lib.no_grad():
        layer.weight.copy_(lib.tensor(W))
        layer.bias.zero_()
    return layer


def _run(lib, parametrization):
    layer = _linear(lib)
    parametrization(lib, layer)
    out = layer(lib.tensor(X))
    (out * lib.tensor(np.arange(6.0).reshape(2, 3))).sum().backward()
    grads = {name: p.grad.numpy().copy() for name, p in layer.named_parameters()}
    return layer, out.detach().numpy(), grads


PARAMETRIZATIONS = {
    "symmetric": lambda lib, m: lib.nn.utils.parametrize.register_parametrization(m, "weight", _symmetric(lib)),
    "weight_norm": lambda lib, m: lib.nn.utils.parametrizations.weight_norm(m),
    "weight_norm_dim1": lambda lib, m: lib.nn.utils.parametrizations.weight_norm(m, dim=1),
    # (PyTorch's: None and -1 both the norm of the whole weight, a 0-d g; -2 the first axis of a matrix)
    "weight_norm_whole": lambda lib, m: lib.nn.utils.parametrizations.weight_norm(m, dim=None),
    "weight_norm_dim-1": lambda lib, m: lib.nn.utils.parametrizations.weight_norm(m, dim=-1),
    "weight_norm_dim-2": lambda lib, m: lib.nn.utils.parametrizations.weight_norm(m, dim=-2),
}


@pytest.mark.parametrize("name", list(PARAMETRIZATIONS))
def test_parametrized_weight_values_names_and_gradients(name):
    layer, out, grads = _run(sg, PARAMETRIZATIONS[name])
    assert type(layer).__name__ == "ParametrizedLinear" and sg.nn.utils.parametrize.is_parametrized(layer, "weight")
    originals = [k for k in grads if k.startswith("parametrizations.weight.original")]
    assert originals == (["parametrizations.weight.original"] if name == "symmetric" else
                         ["parametrizations.weight.original0", "parametrizations.weight.original1"])
    assert list(layer.state_dict()) == list(grads)
    expected = W if name != "symmetric" else np.triu(W) + np.triu(W, 1).T
    np.testing.assert_allclose(layer.weight.detach().numpy(), expected, rtol=1e-14)
    key = originals[-1]  # the direction v (or the triangle) through finite differences
    rest = {k: v.detach().numpy().copy() for k, v in layer.state_dict().items()}

    def loss(value):
        fresh = _linear(sg)
        PARAMETRIZATIONS[name](sg, fresh)
        fresh.load_state_dict({**{k: sg.tensor(v) for k, v in rest.items()}, key: sg.tensor(np.asarray(value))})
        return sg.asarray(float((fresh(sg.tensor(X)) * sg.tensor(np.arange(6.0).reshape(2, 3))).sum()))
    np.testing.assert_allclose(grads[key], numeric_grad(loss, [rest[key]], 0), rtol=1e-6, atol=1e-8)
    torch = pytest.importorskip("torch")
    theirs, their_out, their_grads = _run(torch, PARAMETRIZATIONS[name])
    assert list(grads) == list(their_grads) and list(layer.state_dict()) == list(theirs.state_dict())
    np.testing.assert_allclose(out, their_out, rtol=1e-14)
    for k in grads:
        assert grads[k].shape == their_grads[k].shape, k
        np.testing.assert_allclose(grads[k], their_grads[k], rtol=1e-12, atol=1e-14)


def test_assigning_and_removing_a_parametrization():
    layer = _linear(sg)
    sg.nn.utils.parametrize.register_parametrization(layer, "weight", _symmetric(sg))
    target = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 5.0], [3.0, 5.0, 6.0]])
    layer.weight = sg.tensor(target)  # through right_inverse
    np.testing.assert_array_equal(layer.weight.detach().numpy(), target)
    sg.nn.utils.parametrize.remove_parametrizations(layer, "weight")
    assert type(layer).__name__ == "Linear" and not sg.nn.utils.parametrize.is_parametrized(layer)
    assert list(dict(layer.named_parameters())) == ["bias", "weight"]
    np.testing.assert_array_equal(layer.weight.detach().numpy(), target)
    with pytest.raises(ValueError, match="does not have a parametrization"):
        sg.nn.utils.parametrize.remove_parametrizations(layer, "weight")
