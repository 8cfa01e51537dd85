"""Probes of sg.linalg at singular and degenerate inputs against NumPy, on every path."""
import numpy as np
import pytest

import symgrad as sg


@pytest.mark.parametrize("p", [None, 2, -2])
def test_cond_of_a_zero_matrix_is_inf(p):
    """The ratio of the extreme singular values is 0/0 for a zero matrix: NumPy says inf, sg said NaN."""
    m = np.zeros((3, 2, 2))
    m[1] = np.eye(2)
    want = np.linalg.cond(m, p)
    f = lambda a: sg.linalg.cond(a, p)  # noqa: E731
    for got in (f(m), sg.compile(f)(m), sg.compile(f, backend="numpy")(m)):
        np.testing.assert_array_equal(got, want)


def _spd_and_not_symmetric():
    a = np.random.default_rng(1).normal(size=(4, 4))
    spd = a @ a.T + 4 * np.eye(4)
    return spd, spd + np.triu(np.ones((4, 4)), 1)


@pytest.mark.parametrize("backend", ["llvm", "numpy"])
def test_scipy_linalg_takes_scipys_defaults(backend):
    """sg.scipy.linalg's cholesky, qr and eigh were sg.linalg's, with NumPy's signatures: scipy.linalg.cholesky(a)
    gave the lower factor where SciPy gives the upper one, qr(a) the reduced factors of a (4, 2) a where SciPy's
    'full' mode gives a (4, 4) q, and cholesky(a, lower=True), eigh(a, eigvals_only=True) were TypeErrors."""
    scipy_linalg = pytest.importorskip("scipy.linalg")
    spd, _ = _spd_and_not_symmetric()
    tall = spd[:, :2]
    c = lambda f: sg.compile(f, backend=backend)
    np.testing.assert_allclose(c(sg.scipy.linalg.cholesky)(spd), scipy_linalg.cholesky(spd), rtol=1e-12)
    np.testing.assert_allclose(c(lambda a: sg.scipy.linalg.cholesky(a, lower=True))(spd),
                               scipy_linalg.cholesky(spd, lower=True), rtol=1e-12)
    for mode in ("full", "economic", "r"):
        got, want = c(lambda a: sg.scipy.linalg.qr(a, mode=mode))(tall), scipy_linalg.qr(tall, mode=mode)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_allclose(np.abs(g), np.abs(w), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(c(lambda a: sg.scipy.linalg.eigh(a, eigvals_only=True))(spd),
                               scipy_linalg.eigh(spd, eigvals_only=True), rtol=1e-12)
    with pytest.raises(sg.UnsupportedOpError, match="generalized"):
        sg.scipy.linalg.eigh(spd, spd)
    # the gradient of SciPy's upper factor, against PyTorch's
    torch = pytest.importorskip("torch")
    weights = np.arange(16.0).reshape(4, 4)
    got = c(sg.grad(lambda a: sg.sum(sg.scipy.linalg.cholesky(a) * weights)))(spd)
    t = torch.tensor(spd, requires_grad=True)
    (torch.linalg.cholesky(t, upper=True) * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(got, t.grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("backend", ["eager", "llvm", "numpy"])
def test_upper_cholesky_reads_the_upper_triangle(backend):
    """cholesky(a, upper=True) factored a's lower triangle and transposed the factor; NumPy, PyTorch (and
    scipy.linalg.cholesky, cho_factor) read the upper one: a matrix whose triangles differ gave another U."""
    _, unsymmetric = _spd_and_not_symmetric()
    f = lambda a: sg.linalg.cholesky(a, upper=True)
    got = np.asarray(f(unsymmetric) if backend == "eager" else sg.compile(f, backend=backend)(unsymmetric))
    np.testing.assert_allclose(got, np.linalg.cholesky(unsymmetric, upper=True), rtol=1e-12)


@pytest.mark.parametrize("backend", ["eager", "llvm", "numpy"])
def test_scipy_solve_takes_scipys_keywords(backend):
    """sg.scipy.linalg.solve was NumPy's solve(a, b): assume_a, lower and transposed (SciPy's and JAX's keywords)
    were TypeErrors. A symmetric a is read from one triangle, a positive definite one factored, as SciPy does."""
    scipy_linalg = pytest.importorskip("scipy.linalg")
    spd, unsymmetric = _spd_and_not_symmetric()
    b = np.arange(8.0).reshape(4, 2)
    for a in (spd, unsymmetric):
        for assume in (None, "gen", "sym", "pos", "upper triangular", "lower triangular"):
            for lower in (False, True):
                for transposed in (False, True):
                    def f(a, b):
                        return sg.scipy.linalg.solve(a, b, assume_a=assume, lower=lower, transposed=transposed)
                    got = f(a, b) if backend == "eager" else sg.compile(f, backend=backend)(a, b)
                    want = scipy_linalg.solve(a, b, assume_a=assume, lower=lower, transposed=transposed)
                    np.testing.assert_allclose(got, want, rtol=1e-10, err_msg=f"{assume} {lower} {transposed}")
    with pytest.raises(sg.UnsupportedOpError, match="banded"):
        sg.scipy.linalg.solve(spd, b, assume_a="banded")


def test_matrix_power_zero_of_a_tensor_is_a_tensor():
    """matrix_power(t, 0) of an eager tensor returned a NumPy identity, so sum(matrix_power(t, 0)).backward() was an
    AttributeError (PyTorch's is a tensor, its gradient zero)."""
    t = sg.tensor(np.ones((2, 3, 3)), requires_grad=True)
    out = sg.sum(sg.linalg.matrix_power(t, 0) * 2.0 + t)
    assert isinstance(out, sg.Tensor)
    out.backward()
    np.testing.assert_array_equal(t.grad.numpy(), np.ones((2, 3, 3)))
    np.testing.assert_array_equal(sg.linalg.matrix_power(np.full((3, 3), np.nan), 0), np.eye(3))
