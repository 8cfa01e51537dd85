"""nn.init's structured initializers (orthogonal_, trunc_normal_, eye_, dirac_, sparse_): the properties that
define them, PyTorch's results where they are deterministic, and PyTorch's errors."""
import math

import numpy as np
import pytest

import symgrad as sg
from symgrad import nn


def parameter(*shape):
    return nn.Parameter(sg.tensor(np.zeros(shape, np.float32)))


@pytest.mark.parametrize("shape", [(4, 7), (7, 4), (5, 5), (6, 2, 3)])
def test_orthogonal_rows_or_columns(shape):
    sg.manual_seed(0)
    w = parameter(*shape)
    assert nn.init.orthogonal_(w, gain=2.0) is w and w.dtype == sg.float32 and w.requires_grad
    m = w.detach().numpy().reshape(shape[0], -1).astype(np.float64) / 2.0
    small = m @ m.T if m.shape[0] <= m.shape[1] else m.T @ m
    np.testing.assert_allclose(small, np.eye(min(m.shape)), atol=1e-6)


def test_orthogonal_edges():
    assert nn.init.orthogonal_(parameter(0, 3)).shape == (0, 3)
    with pytest.raises(ValueError, match="2 or more dimensions"):
        nn.init.orthogonal_(parameter(3))


@pytest.mark.parametrize("mean, std, a, b", [(0.0, 1.0, -2.0, 2.0), (0.5, 2.0, -1.0, 3.0), (0.0, 1.0, 2.0, 3.0),
                                             (1.0, 0.1, -5.0, 0.9)])
def test_trunc_normal_is_the_truncated_distribution(mean, std, a, b):
    """Both of PyTorch's ways (normal draws redrawn outside [a, b]; uniform draws kept by the density, when [a, b]
    holds under 0.3 of the mass): every value in [a, b], mean and variance those of the truncated normal."""
    sg.manual_seed(1)
    w = nn.init.trunc_normal_(sg.tensor(np.zeros((200, 200))), mean, std, a, b)
    values = w.numpy()
    assert values.min() >= a and values.max() <= b
    alpha, beta = (a - mean) / std, (b - mean) / std
    density = [math.exp(-z * z / 2) / math.sqrt(2 * math.pi) for z in (alpha, beta)]
    mass = (math.erf(beta / math.sqrt(2)) - math.erf(alpha / math.sqrt(2))) / 2
    expected_mean = mean + std * (density[0] - density[1]) / mass
    expected_variance = std ** 2 * (1 + (alpha * density[0] - beta * density[1]) / mass -
                                    ((density[0] - density[1]) / mass) ** 2)
    standard_error = math.sqrt(expected_variance / values.size)
    assert abs(values.mean() - expected_mean) < 5 * standard_error
    assert values.var() == pytest.approx(expected_variance, rel=0.03)


def test_eye_and_dirac_match_pytorch():
    torch = pytest.importorskip("torch")
    for shape in [(3, 5), (5, 3), (0, 2)]:
        np.testing.assert_array_equal(nn.init.eye_(parameter(*shape)).detach().numpy(),
                                      torch.nn.init.eye_(torch.empty(shape)).numpy())
    for shape, groups in [((4, 2, 3), 1), ((6, 4, 3, 3), 2), ((4, 5, 2, 3, 4), 1), ((6, 2, 5, 5), 3)]:
        np.testing.assert_array_equal(nn.init.dirac_(parameter(*shape), groups).detach().numpy(),
                                      torch.nn.init.dirac_(torch.empty(shape), groups).numpy())
    with pytest.raises(ValueError, match="2 dimensions"):
        nn.init.eye_(parameter(2, 2, 2))
    with pytest.raises(ValueError, match="3, 4, or 5 dimensions"):
        nn.init.dirac_(parameter(2, 2))
    with pytest.raises(ValueError, match="divisible by groups"):
        nn.init.dirac_(parameter(5, 2, 3), groups=2)


def test_sparse_zeroes_that_many_entries_per_column():
    sg.manual_seed(2)
    w = nn.init.sparse_(parameter(10, 6), sparsity=0.25, std=0.5)
    values = w.detach().numpy()
    assert ((values == 0).sum(axis=0) == math.ceil(0.25 * 10)).all()
    assert 0.2 < values[values != 0].std() < 0.8
    with pytest.raises(ValueError, match="2 dimensions"):
        nn.init.sparse_(parameter(3), 0.5)
