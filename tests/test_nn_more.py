"""More nn names tutorials use: channel dropout, cosine similarity, pairwise distance, pixel (un)shuffle,
adaptive max pooling, Softmax2d, Unflatten, ParameterList/ParameterDict, Embedding.from_pretrained; against
PyTorch (float64, skipped when absent) and finite differences on both backends."""
import numpy as np
import pytest

import symgrad as sg
from gradcheck import numeric_grad

F = sg.nn.functional
RNG = np.random.default_rng(0)
X1, X2 = RNG.standard_normal((4, 5, 3)), RNG.standard_normal((4, 5, 3))
X2[0, :, 0] = 0.0  # a zero vector: its norm is clamped at eps
IMAGE, ODD = RNG.standard_normal((2, 8, 3, 4)), RNG.standard_normal((2, 3, 7, 5))

CASES = [  # (label, ours, PyTorch's name and arguments, inputs)
    ("cosine_similarity", lambda lib, a, b: lib.nn.functional.cosine_similarity(a, b), (X1, X2)),
    ("cosine_similarity-last", lambda lib, a, b: lib.nn.functional.cosine_similarity(a, b, dim=-1, eps=1e-3),
     (X1, X2)),
    ("pairwise_distance", lambda lib, a, b: lib.nn.functional.pairwise_distance(a, b), (X1, X2)),
    ("pairwise_distance-p1", lambda lib, a, b: lib.nn.functional.pairwise_distance(a, b, 1.0, keepdim=True),
     (X1, X2)),
    ("pixel_shuffle", lambda lib, a: lib.nn.functional.pixel_shuffle(a, 2), (IMAGE,)),
    ("pixel_unshuffle", lambda lib, a: lib.nn.functional.pixel_unshuffle(a, 2), (RNG.standard_normal((2, 3, 4, 6)),)),
    ("adaptive_max_pool2d", lambda lib, a: lib.nn.functional.adaptive_max_pool2d(a, (2, 3)), (ODD,)),
    ("adaptive_max_pool2d-divides", lambda lib, a: lib.nn.functional.adaptive_max_pool2d(a, (1, 5)), (ODD,)),
    ("adaptive_max_pool1d", lambda lib, a: lib.nn.functional.adaptive_max_pool1d(a, 3), (ODD[:, :, 0],)),
    ("Softmax2d", lambda lib, a: lib.nn.Softmax2d()(a), (IMAGE,)),
    ("Unflatten", lambda lib, a: lib.nn.Unflatten(1, (2, -1))(a), (IMAGE,)),
    ("AdaptiveMaxPool2d", lambda lib, a: lib.nn.AdaptiveMaxPool2d(2)(a), (ODD,)),
    ("AdaptiveMaxPool3d", lambda lib, a: lib.nn.AdaptiveMaxPool3d((2, 3, 1))(a), (ODD[:, :, :, :, None] * 1.0,)),
    ("CosineSimilarity", lambda lib, a, b: lib.nn.CosineSimilarity(dim=2)(a, b), (X1, X2)),
    ("PairwiseDistance", lambda lib, a, b: lib.nn.PairwiseDistance(p=3.0)(a, b), (X1, X2)),
    ("PixelShuffle", lambda lib, a: lib.nn.PixelShuffle(2)(a), (IMAGE,)),
]


@pytest.mark.parametrize("label, call, inputs", CASES, ids=[c[0] for c in CASES])
def test_matches_pytorch(label, call, inputs):
    torch = pytest.importorskip("torch")
    ours = [sg.tensor(x, requires_grad=True) for x in inputs]
    theirs = [torch.tensor(x, requires_grad=True) for x in inputs]
    a, b = call(sg, *ours), call(torch, *theirs)
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-13, atol=1e-14)
    weights = np.linspace(-1, 2, b.numel()).reshape(tuple(b.shape))
    (a * sg.tensor(weights)).sum().backward()
    (b * torch.tensor(weights)).sum().backward()
    for x, y in zip(ours, theirs):
        np.testing.assert_allclose(x.grad.numpy(), y.grad.numpy(), rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
@pytest.mark.parametrize("label, call, inputs", CASES[:9:2], ids=[c[0] for c in CASES[:9:2]])
def test_functional_gradients_match_finite_differences_on_both_backends(label, call, inputs, backend):
    first, rest = inputs[0], inputs[1:]

    def loss(x):
        out = call(sg, x, *rest)
        return sg.sum(sg.sin(out) * np.linspace(-1, 2, int(np.prod(out.shape))).reshape(tuple(out.shape)))
    grad = sg.compile(sg.grad(loss), backend=backend)(first)
    np.testing.assert_allclose(grad, numeric_grad(loss, [first], 0), rtol=1e-6, atol=1e-8)


def test_channel_dropout_zeroes_whole_channels_and_is_the_identity_in_eval():
    sg.manual_seed(0)
    for module, shape in ((sg.nn.Dropout1d(0.5), (8, 6, 5)), (sg.nn.Dropout2d(0.5), (8, 6, 3, 3)),
                          (sg.nn.Dropout3d(0.25), (8, 6, 2, 2, 2))):
        out = module(sg.tensor(np.ones(shape))).numpy().reshape(8, 6, -1)
        assert (out.std(-1) == 0).all()  # each channel all kept or all zero
        assert set(np.unique(out)) == {0.0, 1 / (1 - module.p)}
        module.eval()
        assert np.array_equal(module(sg.tensor(np.ones(shape))).numpy(), np.ones(shape))
    with pytest.raises(ValueError, match="between 0 and 1"):
        sg.nn.Dropout2d(1.5)
    with pytest.raises(ValueError, match="5-d \\(batched\\)"):
        F.dropout3d(sg.tensor(np.ones((2, 3))))


def test_dropout2d_is_pytorchs_feature_dropout_at_every_rank():
    """F.dropout2d of an (N, C) input (pytorch/examples' mnist_rnn: Dropout2d after an LSTM) was a ValueError;
    PyTorch drops it elementwise, with a deprecation warning, and a 3-d input's channels are its (N, C) planes
    (they were its C planes, as if unbatched)."""
    sg.manual_seed(0)
    with pytest.warns(UserWarning, match="Received a 2-D input to dropout2d"):
        out = F.dropout2d(sg.tensor(np.ones((40, 30))), 0.5).numpy()
    assert set(np.unique(out)) == {0.0, 2.0} and (out.std(0) > 0).all() and (out.std(1) > 0).all()  # elementwise
    with pytest.warns(UserWarning):
        assert np.array_equal(sg.nn.Dropout2d(0.0)(sg.tensor(np.ones((4, 3)))).numpy(), np.ones((4, 3)))
    out = F.dropout2d(sg.tensor(np.ones((20, 6, 5))), 0.5).numpy()
    assert (out.std(-1) == 0).all() and (out[:, :, 0].std(0) > 0).all()  # (n, c) planes, not c planes
    with pytest.warns(UserWarning), pytest.raises(RuntimeError, match="at least 2 dimensions"):
        F.dropout2d(sg.tensor(np.ones(3)), 0.5)


def test_parameter_containers_register_their_parameters():
    model = sg.nn.Module()
    model.weights = sg.nn.ParameterList([sg.nn.Parameter(sg.tensor([1.0])), np.ones(2)])
    model.named = sg.nn.ParameterDict({"scale": np.ones(3)})
    model.weights.append(np.zeros(1))
    assert [name for name, _ in model.named_parameters()] == ["weights.0", "weights.1", "weights.2", "named.scale"]
    assert all(isinstance(p, sg.nn.Parameter) and p.requires_grad for p in model.parameters())
    assert len(model.weights) == 3 and "scale" in model.named and model.weights[1].shape == (2,)
    model.weights[0] = np.full(1, 5.0)
    assert model.weights[0].tolist() == [5.0]


def test_embedding_from_pretrained_shares_and_freezes():
    table = sg.tensor([[1.0, 2.0], [3.0, 4.0]])
    frozen = sg.nn.Embedding.from_pretrained(table)
    assert frozen(sg.tensor([1])).tolist() == [[3.0, 4.0]] and not frozen.weight.requires_grad
    trainable = sg.nn.Embedding.from_pretrained(table, freeze=False, padding_idx=0)
    assert trainable.weight.requires_grad and trainable.padding_idx == 0
    table.data[0, 0] = 9.0
    assert frozen.weight.tolist()[0][0] == 9.0  # the tensor's memory, as PyTorch's
    with pytest.raises(AssertionError, match="2-dimensional"):
        sg.nn.Embedding.from_pretrained(sg.tensor([1.0]))


def test_errors():
    with pytest.raises(RuntimeError, match="divisible by the square"):
        F.pixel_shuffle(sg.tensor(np.ones((1, 3, 2, 2))), 2)
    with pytest.raises(RuntimeError, match="divisible by downscale_factor"):
        F.pixel_unshuffle(sg.tensor(np.ones((1, 3, 3, 2))), 2)
    with pytest.raises(sg.UnsupportedOpError, match="return_indices"):
        F.adaptive_max_pool2d(sg.tensor(np.ones((1, 1, 3, 3))), 2, return_indices=True)
    with pytest.raises(ValueError, match="Softmax2d"):
        sg.nn.Softmax2d()(sg.tensor(np.ones((2, 3))))
