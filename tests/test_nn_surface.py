"""F.lp_pool1d/2d and nn.LPPool1d/2d, F.multi_margin_loss and nn.MultiMarginLoss, nn.Embedding(max_norm=...):
values and gradients against PyTorch in float64 (skipped when absent), eager and compiled on both backends,
finite differences, edge values. (Bicubic and trilinear interpolation: tests/test_resize.py.)"""
import numpy as np
import pytest

import symgrad as sg
from gradcheck import numeric_grad

F = sg.nn.functional

LP_CASES = [  # (d, norm_type, kernel_size, stride, ceil_mode)
    (2, 2.0, 2, None, False), (2, 3, (3, 2), 2, True), (2, 1.0, 3, 1, False), (2, 1.5, 2, (2, 1), True),
    (1, 2.0, 3, None, False), (1, 4.0, 2, 3, True),
]


def _image(d, seed=0, positive=False):
    x = np.random.default_rng(seed).standard_normal((2, 3, 7, 6)[:2 + d])
    return np.abs(x) + 0.1 if positive else x


def _lp(d):
    return F.lp_pool2d if d == 2 else F.lp_pool1d


@pytest.mark.parametrize("d, p, kernel, stride, ceil", LP_CASES)
def test_lp_pool_matches_pytorch(d, p, kernel, stride, ceil):
    torch = pytest.importorskip("torch")
    x = _image(d, positive=p == 1.5)  # (a fractional power of a negative sum is NaN in both)
    ours, theirs = sg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out = _lp(d)(ours, p, kernel, stride, ceil)
    expected = getattr(torch.nn.functional, f"lp_pool{d}d")(theirs, p, kernel, stride, ceil)
    assert out.shape == tuple(expected.shape)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=1e-12, equal_nan=True)
    cotangent = np.random.default_rng(1).standard_normal(out.shape)
    out.backward(sg.tensor(cotangent))
    expected.backward(torch.tensor(cotangent))
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-10, atol=1e-12, equal_nan=True)
    module = getattr(sg.nn, f"LPPool{d}d")(p, kernel, stride, ceil)
    reference = getattr(torch.nn, f"LPPool{d}d")(p, kernel, stride, ceil)
    np.testing.assert_allclose(module(sg.tensor(x)).numpy(), reference(torch.tensor(x)).numpy(), rtol=1e-12,
                               equal_nan=True)
    assert repr(module) == repr(reference)


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
@pytest.mark.parametrize("d, p, kernel, stride, ceil", LP_CASES[::2])
def test_lp_pool_compiled_gradients_match_finite_differences(d, p, kernel, stride, ceil, backend):
    x = _image(d, seed=2, positive=True)
    loss = lambda x: sg.sum(sg.sin(_lp(d)(x, p, kernel, stride, ceil)))  # noqa: E731
    value, grad = sg.compile(sg.value_and_grad(loss), backend=backend)(x)
    assert float(value) == pytest.approx(float(loss(x)), rel=1e-12)
    np.testing.assert_allclose(grad, numeric_grad(loss, [x], 0), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("d", [1, 2])
def test_lp_pool_of_an_infinite_power_is_the_largest_or_smallest_magnitude(d):
    """p = inf is a max pooling of |x| and -inf the smallest |x|, as PyTorch's (it computed x**inf: windows of 1, 0)."""
    x = np.array([0.5, -2.0, 0.3, 1.5, -0.2, 0.1]).reshape((1, 1, 6) if d == 1 else (1, 1, 2, 3))
    kernel = 2 if d == 1 else (1, 3)
    largest, smallest = [2.0, 1.5, 0.2], [0.5, 0.3, 0.1]
    if d == 2:
        largest, smallest = [2.0, 1.5], [0.3, 0.1]
    for p, want in ((np.inf, largest), (-np.inf, smallest)):
        t = sg.tensor(x, requires_grad=True)
        out = _lp(d)(t, p, kernel)
        np.testing.assert_array_equal(out.detach().numpy().ravel(), want)
        out.sum().backward()
        picked = np.isin(np.abs(x), want)
        np.testing.assert_array_equal(t.grad.numpy(), np.where(picked, np.sign(x), 0.0))
    torch = pytest.importorskip("torch")
    for p in (np.inf, -np.inf):
        theirs = getattr(torch.nn.functional, f"lp_pool{d}d")(torch.tensor(x), p, kernel)
        np.testing.assert_array_equal(_lp(d)(sg.tensor(x), p, kernel).numpy(), theirs.numpy())


def test_lp_pool_of_zero_windows_is_zero_with_zero_gradient():
    """A window summing to 0: value 0 and gradient 0, as PyTorch's relu there (no infinite slope of the root)."""
    x = np.zeros((1, 1, 4, 4))
    x[0, 0, 0, 0] = 2.0
    grad = sg.grad(lambda x: sg.sum(F.lp_pool2d(x, 2.0, 2)))(x)
    assert np.isfinite(grad).all() and grad[0, 0, 0, 0] == 1.0 and not grad[0, 0, 2:, 2:].any()
    np.testing.assert_array_equal(F.lp_pool2d(x, 2.0, 2), [[[[2.0, 0.0], [0.0, 0.0]]]])
    with pytest.raises(TypeError, match="float"):
        F.lp_pool1d(np.ones((1, 1, 4), np.int64), 2, 2)


MARGIN_CASES = [(p, weighted, reduction, margin) for p in (1, 2) for weighted in (False, True)
                for reduction in ("mean", "sum", "none") for margin in (1.0, 0.3)]


@pytest.mark.parametrize("p, weighted, reduction, margin", MARGIN_CASES)
def test_multi_margin_loss_matches_pytorch(p, weighted, reduction, margin):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    x, y, w = rng.standard_normal((4, 5)), np.array([0, 3, 4, 1]), rng.uniform(0.5, 2.0, 5)
    ours, theirs = sg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out = F.multi_margin_loss(ours, sg.tensor(y), p=p, margin=margin, weight=sg.tensor(w) if weighted else None,
                              reduction=reduction)
    expected = torch.nn.functional.multi_margin_loss(theirs, torch.tensor(y), p=p, margin=margin,
                                                     weight=torch.tensor(w) if weighted else None, reduction=reduction)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=1e-12)
    cotangent = rng.standard_normal(tuple(expected.shape))
    out.backward(sg.tensor(cotangent))
    expected.backward(torch.tensor(cotangent))
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-12, atol=1e-15)
    module = sg.nn.MultiMarginLoss(p=p, margin=margin, weight=sg.tensor(w) if weighted else None, reduction=reduction)
    reference = torch.nn.MultiMarginLoss(p=p, margin=margin, weight=torch.tensor(w) if weighted else None,
                                         reduction=reduction)
    np.testing.assert_allclose(module(sg.tensor(x), sg.tensor(y)).numpy(),
                               reference(torch.tensor(x), torch.tensor(y)).numpy(), rtol=1e-12)


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
def test_multi_margin_loss_compiled_and_edges(backend):
    x, y = np.array([[0.2, -0.4, 1.1], [3.0, 0.0, -2.0]]), np.array([2, 0])
    loss = lambda x: F.multi_margin_loss(x, y, p=2, margin=0.7)  # noqa: E731
    value, grad = sg.compile(sg.value_and_grad(loss), backend=backend)(x)
    assert float(value) == pytest.approx(float(loss(x)), rel=1e-12)
    np.testing.assert_allclose(grad, numeric_grad(loss, [x], 0), rtol=1e-6, atol=1e-8)
    assert float(F.multi_margin_loss(np.array([5.0, 0.0, 0.0]), np.array(0))) == 0.0  # every margin met: 0, 1-d
    with pytest.raises(ValueError, match="p == 1 and p == 2"):
        F.multi_margin_loss(x, y, p=3)
    with pytest.raises(IndexError, match="out of range"):
        F.multi_margin_loss(x, np.array([0, 3]))
    with pytest.raises(ValueError, match="target"):
        F.multi_margin_loss(x, np.array([0, 1, 2]))


@pytest.mark.parametrize("max_norm, norm_type, padding_idx", [(1.0, 2.0, None), (3.0, 1.0, 2), (0.5, 3.0, None),
                                                              (2.5, float("inf"), None), (100.0, 2.0, None)])
def test_embedding_max_norm_renormalizes_the_table_as_pytorch(max_norm, norm_type, padding_idx):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    table, index = rng.standard_normal((6, 4)) * 2, np.array([[0, 2, 2], [5, 1, 0]])
    ours = sg.nn.Embedding.from_pretrained(sg.tensor(table), freeze=False, max_norm=max_norm, norm_type=norm_type,
                                           padding_idx=padding_idx)
    theirs = torch.nn.Embedding.from_pretrained(torch.tensor(table), freeze=False, max_norm=max_norm,
                                                norm_type=norm_type, padding_idx=padding_idx)
    out, expected = ours(sg.tensor(index)), theirs(torch.tensor(index))
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(ours.weight.detach().numpy(), theirs.weight.detach().numpy(), rtol=1e-12)
    np.testing.assert_array_equal(ours.weight.detach().numpy()[3:5], table[3:5])  # rows not looked up: untouched
    cotangent = rng.standard_normal(tuple(expected.shape))
    (out * sg.tensor(cotangent)).sum().backward()
    (expected * torch.tensor(cotangent)).sum().backward()
    np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(), rtol=1e-12)
    assert repr(ours) == repr(theirs)


def test_embedding_max_norm_through_training_steps_and_its_limits():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    table = rng.standard_normal((6, 4)) * 2
    ours = sg.nn.Embedding.from_pretrained(sg.tensor(table), freeze=False, max_norm=1.0)
    theirs = torch.nn.Embedding.from_pretrained(torch.tensor(table), freeze=False, max_norm=1.0)
    optimizers = sg.optim.SGD(ours.parameters(), lr=0.5), torch.optim.SGD(theirs.parameters(), lr=0.5)
    for _ in range(6):
        index = rng.integers(0, 6, size=(3,))
        for optimizer in optimizers:
            optimizer.zero_grad()
        (ours(sg.tensor(index)) ** 2).sum().backward()
        (theirs(torch.tensor(index)) ** 2).sum().backward()
        for optimizer in optimizers:
            optimizer.step()
    np.testing.assert_allclose(ours.weight.detach().numpy(), theirs.weight.detach().numpy(), rtol=1e-12)
    with pytest.raises(sg.UnsupportedOpError, match="max_norm.*eager tensor"):
        F.embedding(np.array([0]), table, max_norm=1.0)
    for rows in ([0, 1], [5]):  # the table cannot change inside a compiled function, whether or not a row is long
        with pytest.raises(sg.UnsupportedOpError, match="max_norm.*in a trace"):
            sg.compile(lambda w: (ours(sg.tensor(np.array(rows))) * w).sum())(np.ones(4))


def test_embedding_bag_max_norm_renormalizes_as_pytorch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(6)
    table, index, offsets = rng.standard_normal((7, 3)) * 2, np.array([0, 2, 2, 6, 1]), np.array([0, 2])
    ours = sg.nn.EmbeddingBag(7, 3, max_norm=1.5, norm_type=1.0, mode="sum", _weight=table)
    theirs = torch.nn.EmbeddingBag.from_pretrained(torch.tensor(table), freeze=False, max_norm=1.5, norm_type=1.0,
                                                   mode="sum")
    out = ours(sg.tensor(index), sg.tensor(offsets))
    expected = theirs(torch.tensor(index), torch.tensor(offsets))
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(ours.weight.detach().numpy(), theirs.weight.detach().numpy(), rtol=1e-12)
    out.sum().backward()
    expected.sum().backward()
    np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(), rtol=1e-12)
