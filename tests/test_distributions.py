"""symgrad.distributions.Categorical: log_prob, entropy and their gradients as PyTorch's (probs with zeros, logits,
broadcast values), and samples drawn with the probabilities."""
import numpy as np
import pytest

import symgrad as sg
from symgrad.distributions import Categorical

PROBS = np.array([[0.2, 0.8], [0.5, 0.5], [1.0, 0.0]])


def _log_prob_and_entropy(lib, Distribution, probs=None, logits=None, value=None):
    """log_prob(value) and entropy, and the gradient of their sum with respect to the parameter."""
    param = lib.tensor(probs if probs is not None else logits, dtype=lib.float64, requires_grad=True)
    m = Distribution(probs=2 * param) if probs is not None else Distribution(logits=param)
    lp, e = m.log_prob(lib.tensor(value)), m.entropy()
    (lp.sum() + e.sum()).backward()
    return lp.detach().numpy(), e.detach().numpy(), param.grad.numpy()


@pytest.mark.parametrize("kind, param, value", [
    ("probs", PROBS, [1, 0, 1]),  # a zero probability: log_prob clamped to log(eps), as PyTorch's
    ("logits", [[0.3, -1.0, 2.0]], [[2], [0]]),  # values broadcast against the batch shape
    ("logits", [0.3, -1.0, 2.0], 1),  # no batch axes, a 0-d value
    ("probs", [[0.25, 0.75]], [[0, 1, 1]]),
])
def test_log_prob_entropy_and_gradients_are_pytorchs(kind, param, value):
    ours = _log_prob_and_entropy(sg, Categorical, **{kind: param, "value": value})
    torch = pytest.importorskip("torch")
    theirs = _log_prob_and_entropy(torch, torch.distributions.Categorical, **{kind: param, "value": value})
    for mine, other in zip(ours, theirs):
        assert mine.shape == other.shape
        np.testing.assert_allclose(mine, other, rtol=1e-12, atol=1e-12)


def test_samples_follow_the_probabilities_and_shapes():
    sg.manual_seed(0)
    m = Categorical(sg.tensor([[0.1, 0.9], [0.7, 0.3]], dtype=sg.float64))
    assert m.sample().shape == (2,) and m.batch_shape == (2,) and m.param_shape == (2, 2)
    draws = m.sample((4000,)).numpy()
    assert draws.shape == (4000, 2) and set(np.unique(draws)) <= {0, 1}
    np.testing.assert_allclose(draws.mean(0), [0.9, 0.3], atol=0.03)
    assert m.mode.tolist() == [1, 0]


def test_parameters_are_checked():
    with pytest.raises(ValueError, match="not both"):
        Categorical(sg.tensor([0.5, 0.5]), logits=sg.tensor([0.0, 0.0]))
    with pytest.raises(ValueError, match="one-dimensional"):
        Categorical(sg.tensor(1.0))


def test_arguments_are_validated_as_pytorch():
    """validate_args (PyTorch's default, on): a value outside 0..K-1 or not an integer is refused, not truncated or
    wrapped (1.5 gave log probs[1]); probabilities that are no simplex once normalized, and NaN logits, too."""
    m = Categorical(sg.tensor([0.2, 0.3, 0.5], dtype=sg.float64))
    for value in (1.5, -1.0, 3.0):
        with pytest.raises(ValueError, match="within the support"):
            m.log_prob(sg.tensor(value))
    assert m.log_prob(sg.tensor([2, 0])).tolist() == pytest.approx([np.log(0.5), np.log(0.2)])
    with pytest.raises(ValueError, match="constraint Simplex"):
        Categorical(sg.tensor([-0.2, 1.2]))
    with pytest.raises(ValueError, match="parameter logits"):
        Categorical(logits=sg.tensor([0.0, np.nan]))
    unchecked = Categorical(sg.tensor([0.2, 0.3, 0.5], dtype=sg.float64), validate_args=False)
    assert unchecked.log_prob(sg.tensor(1.5)).item() == pytest.approx(np.log(0.3))
    torch = pytest.importorskip("torch")
    with pytest.raises(ValueError, match="within the support"):
        torch.distributions.Categorical(torch.tensor([0.2, 0.3, 0.5])).log_prob(torch.tensor(1.5))


def _gaussian_log_probs(lib, D):
    """Normal's and MultivariateNormal's (by each of its three matrices) log_prob and entropy at batched values,
    their moments, and the gradient of their sum with respect to loc and the matrix."""
    loc = lib.tensor([0.5, -1.0], dtype=lib.float64, requires_grad=True)
    a = lib.tensor([[2.0, 0.5], [0.5, 1.0]], dtype=lib.float64, requires_grad=True)
    x = lib.tensor([[1.0, 2.0], [0.5, -1.0], [0.0, 3.0]], dtype=lib.float64)
    outs, total = [], 0
    for kind in ("covariance_matrix", "precision_matrix", "scale_tril"):
        m = D.MultivariateNormal(loc, **{kind: lib.tril(a) if kind == "scale_tril" else a})
        assert m.batch_shape == () and m.event_shape == (2,)
        lp, e = m.log_prob(x), m.entropy()
        outs += [lp, e, m.variance, m.covariance_matrix, m.precision_matrix, m.scale_tril]
        total = total + lp.sum() + e
    n = D.Normal(loc, 2.0)
    lp = n.log_prob(x)
    assert n.batch_shape == (2,) and lp.shape == (3, 2)
    outs += [lp, n.entropy(), n.variance, n.stddev, n.mean]
    grads = lib.autograd.grad(total + lp.sum(), [loc, a])
    return [o.detach().numpy() for o in outs] + [g.numpy() for g in grads]


def test_normal_and_multivariate_normal_are_pytorchs():
    """Normal and MultivariateNormal (tonyduan/normalizing-flows' prior): log_prob against SciPy's, and with its
    gradients as PyTorch's when installed."""
    from scipy import stats
    from symgrad import distributions
    ours = _gaussian_log_probs(sg, distributions)
    x, cov = np.array([[1.0, 2.0], [0.5, -1.0], [0.0, 3.0]]), np.array([[2.0, 0.5], [0.5, 1.0]])
    np.testing.assert_allclose(ours[0], stats.multivariate_normal([0.5, -1.0], cov).logpdf(x), rtol=1e-13)
    np.testing.assert_allclose(ours[6], stats.multivariate_normal([0.5, -1.0], np.linalg.inv(cov)).logpdf(x),
                               rtol=1e-13)
    np.testing.assert_allclose(ours[18], stats.norm([0.5, -1.0], 2.0).logpdf(x), rtol=1e-13)
    torch = pytest.importorskip("torch")
    for mine, other in zip(ours, _gaussian_log_probs(torch, torch.distributions)):
        np.testing.assert_allclose(mine, other, rtol=1e-12, atol=1e-12)


def test_gaussian_samples_and_checked_parameters():
    """rsample is differentiable in the parameters, sample is not; the samples' moments are the distribution's;
    a scale <= 0 or a covariance that is not positive definite is refused as PyTorch refuses it."""
    from symgrad.distributions import MultivariateNormal, Normal
    sg.manual_seed(0)
    loc = sg.tensor([1.0, -2.0], dtype=sg.float64, requires_grad=True)
    cov = sg.tensor([[1.0, 0.6], [0.6, 2.0]], dtype=sg.float64)
    m = MultivariateNormal(loc, cov)
    draws = m.rsample((20000,))
    assert draws.shape == (20000, 2) and draws.requires_grad and not m.sample().requires_grad
    np.testing.assert_allclose(draws.detach().numpy().mean(0), [1.0, -2.0], atol=0.05)
    np.testing.assert_allclose(np.cov(draws.detach().numpy().T), cov.numpy(), atol=0.08)
    draws.sum().backward()
    assert loc.grad.tolist() == [20000.0, 20000.0]
    assert Normal(loc, 3.0).sample((5,)).shape == (5, 2)
    with pytest.raises(ValueError, match="GreaterThan"):
        Normal(0.0, sg.tensor([1.0, 0.0]))
    with pytest.raises(ValueError, match="PositiveDefinite"):
        MultivariateNormal(loc, sg.tensor([[1.0, 2.0], [2.0, 1.0]], dtype=sg.float64))
    with pytest.raises(ValueError, match="Exactly one"):
        MultivariateNormal(loc)
