"""F.rrelu/nn.RReLU, F.alpha_dropout/nn.AlphaDropout, F.feature_alpha_dropout/nn.FeatureAlphaDropout,
F.local_response_norm/nn.LocalResponseNorm and F.interpolate(mode='nearest-exact'): PyTorch's values, gradients
against float64 finite differences, and PyTorch itself when installed."""
import math

import numpy as np
import pytest

import symgrad as sg
from gradcheck import numeric_grad

F = sg.nn.functional
X = np.random.default_rng(0).standard_normal((2, 5, 3, 4))


def _fd_check(fn, x, weights):
    t = sg.tensor(x, requires_grad=True)
    (fn(t) * sg.tensor(weights)).sum().backward()
    expected = numeric_grad(lambda a: sg.asarray(float((fn(sg.tensor(np.asarray(a))) * sg.tensor(weights)).sum())),
                            [x], 0)
    np.testing.assert_allclose(t.grad.numpy(), expected, rtol=1e-6, atol=1e-8)
    return t.grad.numpy()


@pytest.mark.parametrize("shape, args", [((2, 5, 3, 4), (3,)), ((2, 5, 3, 4), (2, 1e-2, 0.5, 2.0)),
                                         ((2, 4, 6), (5, 0.3, 0.75, 1.0)), ((1, 3, 2, 2, 2), (4, 0.1))])
def test_local_response_norm_matches_pytorch_and_finite_differences(shape, args):
    x = np.random.default_rng(1).standard_normal(shape)
    weights = np.random.default_rng(2).standard_normal(shape)
    out = F.local_response_norm(sg.tensor(x, requires_grad=True), *args)
    assert type(out.grad_fn).__name__ == "DivBackward0"
    grad = _fd_check(lambda t: F.local_response_norm(t, *args), x, weights)
    module = sg.nn.LocalResponseNorm(*args)
    np.testing.assert_array_equal(module(sg.tensor(x)).numpy(), out.detach().numpy())
    traced = sg.grad(lambda a: sg.sum(F.local_response_norm(a, *args) * weights))(x)  # a traced value too
    np.testing.assert_allclose(np.asarray(traced), grad, rtol=1e-12, atol=1e-14)
    torch = pytest.importorskip("torch")
    t = torch.tensor(x, requires_grad=True)
    theirs = torch.nn.functional.local_response_norm(t, *args)
    (theirs * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(out.detach().numpy(), theirs.detach().numpy(), rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(grad, t.grad.numpy(), rtol=1e-12, atol=1e-14)
    assert repr(module) == repr(torch.nn.LocalResponseNorm(*args))


def test_local_response_norm_refuses_fewer_than_three_dimensions():
    with pytest.raises(ValueError, match="3D or higher"):
        F.local_response_norm(sg.tensor(np.ones((2, 3))), 2)


def _nearest_exact(x, size):
    """PyTorch's nearest-exact index along each spatial axis: floor((i + 0.5) in / out), clamped."""
    for axis, n_out in enumerate(size):
        n_in = x.shape[2 + axis]
        x = np.take(x, np.minimum(np.floor((np.arange(n_out) + 0.5) * n_in / n_out).astype(int), n_in - 1),
                    axis=2 + axis)
    return x


@pytest.mark.parametrize("shape, size", [((2, 5, 3, 4), (7, 5)), ((2, 3, 5), (3,)), ((1, 2, 3, 4), (2, 9)),
                                         ((1, 1, 2, 3, 4), (3, 5, 2))])
def test_interpolate_nearest_exact(shape, size):
    x = np.random.default_rng(3).standard_normal(shape)
    out = F.interpolate(sg.tensor(x, requires_grad=True), size=size, mode="nearest-exact")
    np.testing.assert_array_equal(out.detach().numpy(), _nearest_exact(x, size))
    assert type(out.grad_fn).__name__ == f"UpsampleNearestExact{len(size)}DBackward0"
    np.testing.assert_array_equal(sg.nn.Upsample(size=size, mode="nearest-exact")(sg.tensor(x)).numpy(),
                                  out.detach().numpy())
    _fd_check(lambda t: F.interpolate(t, size=size, mode="nearest-exact"), x,
              np.random.default_rng(4).standard_normal(tuple(out.shape)))
    torch = pytest.importorskip("torch")
    for kwargs in ({"size": size}, {"scale_factor": 1.7}, {"scale_factor": 0.6}):
        theirs = torch.nn.functional.interpolate(torch.tensor(x), mode="nearest-exact", **kwargs)
        np.testing.assert_array_equal(F.interpolate(sg.tensor(x), mode="nearest-exact", **kwargs).numpy(),
                                      theirs.numpy())
    assert repr(sg.nn.Upsample(scale_factor=2, mode="nearest-exact")) == \
        repr(torch.nn.Upsample(scale_factor=2, mode="nearest-exact"))


def test_rrelu_eval_is_leaky_relu_with_the_mean_slope():
    x = np.array([-2.0, -0.5, 0.0, 0.5, 3.0])
    t = sg.tensor(x, requires_grad=True)
    out = F.rrelu(t, 0.1, 0.3)
    out.sum().backward()
    np.testing.assert_allclose(out.detach().numpy(), np.where(x > 0, x, 0.2 * x), rtol=1e-15)
    np.testing.assert_allclose(t.grad.numpy(), np.where(x > 0, 1.0, 0.2), rtol=1e-15)  # 0 takes the slope
    assert type(out.grad_fn).__name__ == "RreluWithNoiseBackward0"
    module = sg.nn.RReLU(0.1, 0.3).eval()
    np.testing.assert_array_equal(module(sg.tensor(x)).numpy(), out.detach().numpy())
    with pytest.raises(RuntimeError, match="Lower bound"):
        F.rrelu(t, 0.4, 0.3)
    torch = pytest.importorskip("torch")
    tt = torch.tensor(x, requires_grad=True)
    theirs = torch.nn.functional.rrelu(tt, 0.1, 0.3)
    theirs.sum().backward()
    np.testing.assert_allclose(out.detach().numpy(), theirs.detach().numpy(), rtol=1e-15)
    np.testing.assert_allclose(t.grad.numpy(), tt.grad.numpy(), rtol=1e-15)
    assert repr(sg.nn.RReLU()) == repr(torch.nn.RReLU())


def test_rrelu_training_draws_slopes_from_sgs_generator():
    x = np.random.default_rng(5).standard_normal(2000)
    sg.manual_seed(7)
    t = sg.tensor(x, requires_grad=True)
    out = sg.nn.RReLU(0.1, 0.3)(t)  # a module trains by default
    out.sum().backward()
    slopes = out.detach().numpy() / x
    negative = x < 0
    assert np.all(slopes[~negative] == 1) and np.all((slopes[negative] >= 0.1) & (slopes[negative] <= 0.3))
    assert abs(slopes[negative].mean() - 0.2) < 0.01 and slopes[negative].std() > 0.05  # uniform, not fixed
    np.testing.assert_allclose(t.grad.numpy(), slopes, rtol=1e-12)  # the gradient is the slope drawn
    sg.manual_seed(7)
    np.testing.assert_array_equal(F.rrelu(sg.tensor(x), 0.1, 0.3, training=True).numpy(), out.detach().numpy())
    y = sg.tensor(x.copy())
    assert F.rrelu(y, 0.1, 0.3, training=True, inplace=True) is y and np.all(y.numpy()[~negative] == x[~negative])
    with pytest.raises(sg.UnsupportedOpError, match="rrelu in training mode"):
        sg.compile(lambda a: F.rrelu(a, training=True))(x)


def _alpha_constants(p):
    a = 1 / math.sqrt((1.7580993408473766 ** 2 * p + 1) * (1 - p))
    return a, 1.7580993408473766 * a * p, -1.7580993408473766 * a * (1 - p)


@pytest.mark.parametrize("feature", [False, True])
def test_alpha_dropout_keeps_mean_and_variance(feature):
    p = 0.3
    a, kept_shift, dropped = _alpha_constants(p)
    fn = F.feature_alpha_dropout if feature else F.alpha_dropout
    x = np.random.default_rng(6).standard_normal((400, 50, 10) if feature else (200000,))
    sg.manual_seed(3)
    t = sg.tensor(x, requires_grad=True)
    out = fn(t, p, True)
    out.sum().backward()
    y = out.detach().numpy()
    kept = np.isclose(y, x * a + kept_shift, rtol=1e-12, atol=1e-12)
    assert np.all(kept | np.isclose(y, dropped, rtol=1e-14, atol=0))
    np.testing.assert_array_equal(t.grad.numpy(), np.where(kept, a, 0.0))  # d/dx of x a + b where kept, else 0
    if feature:
        assert np.all(kept == kept[:, :, :1])  # whole (n, c) planes
    assert abs(kept.mean() - (1 - p)) < 0.01 and abs(y.mean()) < 0.02 and abs(y.std() - 1) < 0.02
    assert type(out.grad_fn).__name__ == "AddBackward0"
    assert fn(t, p, False) is t and fn(t, 0.0, True) is t
    assert not fn(sg.tensor(x), 1.0, True).numpy().any()
    module = (sg.nn.FeatureAlphaDropout if feature else sg.nn.AlphaDropout)(p)
    sg.manual_seed(3)
    np.testing.assert_array_equal(module(sg.tensor(x)).numpy(), y)
    assert module.eval()(t) is t
    with pytest.raises(ValueError, match="between 0 and 1"):
        fn(t, 1.5, True)
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    theirs = (torch.nn.functional.feature_alpha_dropout if feature else torch.nn.functional.alpha_dropout)(
        torch.tensor(x), p, True).numpy()
    assert np.all(np.isclose(theirs, x * a + kept_shift, rtol=1e-12, atol=1e-12) |
                  np.isclose(theirs, dropped, rtol=1e-14, atol=0))
    assert repr(module) == repr((torch.nn.FeatureAlphaDropout if feature else torch.nn.AlphaDropout)(p))


def test_feature_alpha_dropout_needs_two_dimensions():
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        F.feature_alpha_dropout(sg.tensor(np.ones(3)), 0.5, True)
