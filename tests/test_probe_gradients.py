"""Probes of gradients at points where PyTorch and JAX answer NaN or lose the value, on every path:
sg.grad, sg.compile on both backends, eager backward (first call op by op, later calls compiled),
forward mode and second order."""
import warnings

import numpy as np
import pytest

import symgrad as sg

POINTS = np.array([-1.0, 4.0, 0.0])

# f(a) and its derivative, where a <= 0 selects the branch whose derivative there is NaN or infinite
MASKED = {
    "where sqrt": (lambda a: sg.where(a > 0, sg.sqrt(a), 0.0), lambda a: np.where(a > 0, 0.5 / np.sqrt(abs(a)), 0)),
    "where log": (lambda a: sg.where(a > 0, sg.log(a), 0.0), lambda a: np.where(a > 0, 1 / a, 0)),
    "where 1/a": (lambda a: sg.where(a != 0, 1.0 / a, 0.0), lambda a: np.where(a != 0, -1 / a ** 2, 0)),
    "where a log a": (lambda a: sg.where(a > 0, a * sg.log(a), 0.0),
                      lambda a: np.where(a > 0, np.log(abs(a)) + 1, 0)),
    "where sqrt + a, else a": (lambda a: sg.where(a > 0, sg.sqrt(a) + a, a),
                               lambda a: np.where(a > 0, 0.5 / np.sqrt(abs(a)) + 1, 1)),
    "where arcsin": (lambda a: sg.where(sg.abs(a) < 1, sg.arcsin(a), 0.0),
                     lambda a: np.where(abs(a) < 1, 1 / np.sqrt(1 - np.minimum(a * a, 0.5)), 0)),
    "relu of -sqrt": (lambda a: sg.relu(-sg.sqrt(sg.abs(a))), lambda a: np.zeros_like(a)),
    "clip of 1/a": (lambda a: sg.clip(1.0 / a, -1.0, 1.0), lambda a: np.where(abs(a) >= 1, -1 / (a * a + (a == 0)), 0)),
}


def summed(f):
    return lambda a: sg.sum(f(a))


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the unselected branch is still evaluated
        yield


@pytest.mark.parametrize("name", MASKED)
def test_a_branch_where_did_not_choose_adds_zero_not_nan(name):
    """The gradient of sg.where(a > 0, sg.sqrt(a), 0) at a <= 0 was 0 * (1/(2*sqrt(a))) = NaN (PyTorch and
    JAX give NaN too); the mask now scales the next derivative as a select, on every path."""
    f, df = MASKED[name]
    want = df(POINTS)
    grad = sg.grad(summed(f))
    np.testing.assert_allclose(grad(POINTS), want, rtol=1e-14)
    np.testing.assert_allclose(sg.compile(grad)(POINTS), want, rtol=1e-14)
    np.testing.assert_allclose(sg.compile(grad, backend="numpy")(POINTS), want, rtol=1e-14)
    np.testing.assert_allclose(sg.jvp(summed(f), (POINTS,), (np.ones(3),))[1], want.sum(), rtol=1e-14)
    assert np.isfinite(sg.hessian(summed(f))(POINTS)).all()
    for _ in range(3):  # the first backward runs op by op, later ones the compiled adjoint
        a = sg.tensor(POINTS, requires_grad=True)
        f(a).sum().backward()
        np.testing.assert_allclose(a.grad.numpy(), want, rtol=1e-14)


def test_masked_second_derivative_matches_the_selected_branch():
    """d2/da2 of where(a > 0, sqrt(a), 0) is -1/(4 a^1.5) where a > 0 and 0 elsewhere (was NaN)."""
    f = summed(MASKED["where sqrt"][0])
    want = np.diag(np.where(POINTS > 0, -0.25 / np.abs(POINTS) ** 1.5, 0))
    np.testing.assert_allclose(sg.hessian(f)(POINTS), want, rtol=1e-14)
    np.testing.assert_allclose(sg.jacrev(sg.grad(f))(POINTS), want, rtol=1e-14)
    np.testing.assert_allclose(sg.compile(sg.hessian(f), backend="numpy")(POINTS), want, rtol=1e-14)


def test_an_unmasked_zero_times_infinity_stays_nan():
    """Only a mask's zeros are strong: sqrt(a)**2 at a = 0 has the indeterminate 0 * inf in its chain
    rule (one-sided derivative 1), which stays NaN rather than becoming a wrong 0."""
    grad = sg.grad(lambda a: sg.sum(sg.sqrt(a) ** 2))
    assert np.isnan(grad(np.array([0.0])))[0]


def test_a_masked_cotangent_read_twice_prints_both_factors():
    """The mask repeated into divide's derivative reads the quotient twice (as the mask's operand and as
    the output y); fused, that is x*x in an unevaluated product, which SymPy's cse printed with one x:
    d/dscale of norm.logpdf on the NumPy backend was ~50% off."""
    x, loc, scale = np.array([0.3, -1.0, 2.0]), np.array([0.1, 0.2, -0.5]), np.array([0.7, 1.5, 2.0])
    z = (x - loc) / scale
    want = z * z / scale - 1 / scale
    grad = sg.grad(lambda s: sg.sum(sg.scipy.stats.norm.logpdf(x, loc, s)))
    for backend in ("llvm", "numpy"):
        np.testing.assert_allclose(sg.compile(grad, backend=backend)(scale), want, rtol=1e-13)


@pytest.mark.parametrize("backend", ["llvm", "numpy"])
def test_std_of_a_constant_has_a_zero_gradient(backend):
    """The gradient of std at a constant slice was NaN (sqrt's inf times var's 0), in sg.std, sg.nanstd and
    eager t.std(); PyTorch's is 0, the subgradient sg.linalg.norm already gives at 0."""
    x = np.array([[1.0, 1.0, 1.0], [1.0, 2.0, 4.0]])
    for std in (lambda v: sg.std(v, axis=1), lambda v: sg.nanstd(v, axis=1, ddof=1)):
        grad = sg.compile(sg.grad(lambda v: sg.sum(std(v))), backend=backend)(x)
        np.testing.assert_array_equal(grad[0], 0.0)
        assert np.all(np.isfinite(grad[1])) and np.any(grad[1] != 0)
    t = sg.tensor(x, requires_grad=True)
    t.std(dim=1).sum().backward()
    np.testing.assert_array_equal(t.grad.numpy()[0], 0.0)
    try:
        import torch
    except ImportError:
        return
    expected = torch.tensor(x, requires_grad=True)
    expected.std(dim=1).sum().backward()
    np.testing.assert_allclose(t.grad.numpy(), expected.grad.numpy(), rtol=1e-12)


def test_a_function_returning_two_tensors():
    """An autograd.Function whose forward returns a tuple (once a symgrad error): backward gets both gradients."""
    class Pair(sg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, a, b):
            return 2 * a + 3 * b

    x = sg.tensor([1.0], requires_grad=True)
    a, b = Pair.apply(x)
    (a + 10 * b).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [32.0])
