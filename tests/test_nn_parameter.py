"""nn.Parameter(t) of a tensor shares t's memory and version counter, as PyTorch's."""
import numpy as np
import pytest

import symgrad as sg
from symgrad import nn


@pytest.mark.parametrize("requires_grad", [True, False])
@pytest.mark.parametrize("source", ["tensor", "from_numpy", "empty"])
def test_a_parameter_shares_the_memory_and_version_of_its_tensor(source, requires_grad):
    """Writes to the parameter reach the tensor and the other way (a from_numpy tensor's array too); it copied."""
    torch = pytest.importorskip("torch")

    def run(lib):
        array = np.zeros(0 if source == "empty" else 3, np.float32)
        t = lib.from_numpy(array) if source == "from_numpy" else lib.tensor(array)
        p = lib.nn.Parameter(t, requires_grad=requires_grad)
        assert p.is_leaf and p.requires_grad == requires_grad and p._base is None
        with lib.no_grad():
            p.add_(1.0)
            t.mul_(3.0)
        if source == "from_numpy":
            array += 0.5
        p.data[:1] = 7.0
        return p.detach().numpy().copy(), t.numpy().copy(), p._version, t._version
    ours, theirs = run(sg), run(torch)
    np.testing.assert_array_equal(ours[0], theirs[0])
    np.testing.assert_array_equal(ours[1], theirs[1])
    assert ours[2] is ours[3]  # one counter (PyTorch's numbers: theirs[2] == theirs[3])
    assert theirs[2] == theirs[3]


def test_a_parameter_of_a_non_leaf_is_a_leaf_sharing_its_memory():
    y = sg.tensor(np.ones(2), requires_grad=True) * 2.0
    p = nn.Parameter(y)
    assert p.is_leaf and p.grad_fn is None and p.requires_grad
    with sg.no_grad():
        p.add_(1.0)
    np.testing.assert_array_equal(y.detach().numpy(), [3.0, 3.0])
    (p * p).sum().backward()
    np.testing.assert_array_equal(p.grad.numpy(), [6.0, 6.0])
    with pytest.raises(RuntimeError, match="floating point"):
        nn.Parameter(sg.tensor([1, 2]))


@pytest.mark.parametrize("make", ["from_pretrained", "Embedding", "EmbeddingBag"])
def test_an_embedding_of_a_tensor_trains_that_tensor(make):
    """Embedding.from_pretrained(t), Embedding(_weight=t) and EmbeddingBag(_weight=t) hold t's memory as their weight,
    as PyTorch's Parameter(t) does: training writes t (they held a copy, and t kept its first values)."""
    def train(lib):
        table = lib.tensor(np.arange(12.0).reshape(4, 3) / 10)
        layer = (lib.nn.Embedding.from_pretrained(table, freeze=False) if make == "from_pretrained"
                 else getattr(lib.nn, make)(4, 3, _weight=table))
        optimizer = lib.optim.SGD(layer.parameters(), lr=1.0)
        for _ in range(2):
            optimizer.zero_grad()
            out = layer(lib.tensor([[1, 2]])) if make == "EmbeddingBag" else layer(lib.tensor([1, 2, 1]))
            (out ** 2).sum().backward()
            optimizer.step()
        return table.numpy().copy(), layer.weight.detach().numpy().copy()
    table, weight = train(sg)
    np.testing.assert_array_equal(table, weight)
    assert not np.array_equal(table, np.arange(12.0).reshape(4, 3) / 10)
    torch = pytest.importorskip("torch")
    for ours, theirs in zip((table, weight), train(torch)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)
