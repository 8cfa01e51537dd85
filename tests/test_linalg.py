"""sg.linalg: values against NumPy, reverse and forward derivatives against central finite differences
(float64), both backends, vmap and stacked (batched) inputs, float32, edge points, errors, and torch.linalg
as a skipped-if-absent oracle.

Each case is a scalar function of one or two matrices that reads every result of its sg.linalg function
in a way that does not depend on a factorization's sign choices (eigenvectors enter squared, singular
vectors as u diag(c) vh), and NumPy's version of the same function (the finite-difference reference).
Symmetric inputs (eigh, cholesky) are symmetrized inside the function, as the brief says.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import symgrad as sg
from symgrad.finite_differences import numerical_jvp
from symgrad.ops import lapack
from gradcheck import assert_grads_match_finite_differences, value_and_grad_everywhere

RNG = np.random.default_rng(7)
N = 4
C4 = RNG.normal(size=(N, N))
C43 = RNG.normal(size=(N, 3))
C34 = RNG.normal(size=(3, N))
W4 = np.linspace(0.5, 2.0, N)


def _spd(a, xp):
    """A symmetric positive definite matrix made from a (differentiable)."""
    return xp.matmul(a, xp.swapaxes(a, -1, -2)) + N * np.eye(a.shape[-1])


def _sym(a, xp):
    return (a + xp.swapaxes(a, -1, -2)) / 2


class _NP:
    """NumPy under the names the cases use, so one case body serves symgrad and the reference."""
    linalg = np.linalg
    matmul, swapaxes, sum, abs = staticmethod(np.matmul), staticmethod(np.swapaxes), staticmethod(np.sum), \
        staticmethod(np.abs)

    @staticmethod
    def solve_triangular(a, b, **kw):
        t = np.tril(a) if kw.get("lower") else np.triu(a)
        if kw.get("unit_diagonal"):
            t = t - np.diag(np.diag(t)) + np.eye(t.shape[-1])
        if kw.get("trans", 0) in (1, "T"):
            t = t.T
        return np.linalg.solve(t, b)


class _SG:
    linalg = sg.linalg
    matmul, swapaxes, sum, abs = staticmethod(sg.matmul), staticmethod(sg.swapaxes), staticmethod(sg.sum), \
        staticmethod(sg.abs)
    solve_triangular = staticmethod(sg.linalg.solve_triangular)


def _eigh(a, xp):
    w, v = xp.linalg.eigh(_sym(a, xp) + np.diag(3.0 * W4))
    return xp.sum(w * W4) + xp.sum(v * v * C4)


def _svd(a, xp):
    u, s, vh = xp.linalg.svd(a, full_matrices=False)
    return xp.sum(s * s) + xp.sum(xp.matmul(u * W4[:min(a.shape)], vh) * C4[:a.shape[0], :a.shape[1]])


def _qr(a, xp):
    q, r = xp.linalg.qr(a)
    return xp.sum(q * C4[:q.shape[0], :q.shape[1]]) + xp.sum(r * C4[:r.shape[0], :r.shape[1]])


def _lstsq(a, b, xp):
    x, residuals, rank, s = xp.linalg.lstsq(a, b, rcond=None)
    return xp.sum(x * x) + xp.sum(residuals) + xp.sum(s)


# name -> (function(arrays..., xp), argument shapes)
CASES = {
    "solve": (lambda a, b, xp: xp.sum(xp.linalg.solve(a + N * np.eye(N), b) * C43), [(N, N), (N, 3)]),
    "solve_vector": (lambda a, b, xp: xp.sum(xp.linalg.solve(a + N * np.eye(N), b) * W4), [(N, N), (N,)]),
    "inv": (lambda a, xp: xp.sum(xp.linalg.inv(a + N * np.eye(N)) * C4), [(N, N)]),
    "det": (lambda a, xp: xp.linalg.det(a + 2 * np.eye(N)), [(N, N)]),
    "slogdet": (lambda a, xp: xp.linalg.slogdet(a + N * np.eye(N))[1], [(N, N)]),
    "cholesky": (lambda a, xp: xp.sum(xp.linalg.cholesky(_spd(a, xp)) * C4), [(N, N)]),
    "cholesky_upper": (lambda a, xp: xp.sum(xp.linalg.cholesky(_spd(a, xp), upper=True) * C4), [(N, N)]),
    "solve_triangular_lower": (lambda a, b, xp: xp.sum(xp.solve_triangular(a + N * np.eye(N), b, lower=True) * C43),
                               [(N, N), (N, 3)]),
    "solve_triangular_upper_t": (lambda a, b, xp: xp.sum(xp.solve_triangular(a + N * np.eye(N), b, trans=1) * C43),
                                 [(N, N), (N, 3)]),
    "solve_triangular_unit": (lambda a, b, xp: xp.sum(xp.solve_triangular(a, b, lower=True, unit_diagonal=True)
                                                      * C43), [(N, N), (N, 3)]),
    "eigh": (_eigh, [(N, N)]),
    "eigvalsh": (lambda a, xp: xp.sum(xp.linalg.eigvalsh(_sym(a, xp)) * W4), [(N, N)]),
    "svd_square": (_svd, [(N, N)]),
    "svd_tall": (_svd, [(N, 3)]),
    "svd_wide": (_svd, [(3, N)]),
    "svd_values": (lambda a, xp: xp.sum(xp.linalg.svd(a, compute_uv=False) * W4[:3]), [(N, 3)]),
    "qr_square": (_qr, [(N, N)]),
    "qr_tall": (_qr, [(N, 3)]),
    "qr_wide": (_qr, [(3, N)]),
    "qr_r": (lambda a, xp: xp.sum(xp.linalg.qr(a, mode="r") * C43[:3].T), [(N, 3)]),
    "pinv_tall": (lambda a, xp: xp.sum(xp.linalg.pinv(a) * C34), [(N, 3)]),
    "pinv_wide": (lambda a, xp: xp.sum(xp.linalg.pinv(a) * C43), [(3, N)]),
    "lstsq": (_lstsq, [(N, 3), (N,)]),
    "lstsq_matrix": (_lstsq, [(N, 3), (N, 2)]),
    "matrix_power_3": (lambda a, xp: xp.sum(xp.linalg.matrix_power(a, 3) * C4), [(N, N)]),
    "matrix_power_-2": (lambda a, xp: xp.sum(xp.linalg.matrix_power(a + N * np.eye(N), -2) * C4), [(N, N)]),
    "trace": (lambda a, xp: xp.linalg.trace(a * C4), [(N, N)]),
    "norm_vector": (lambda a, xp: xp.linalg.norm(a[0]), [(N, N)]),
    "norm_vector_3": (lambda a, xp: xp.linalg.norm(a[0], ord=3), [(N, N)]),
    "norm_vector_1_axis": (lambda a, xp: xp.sum(xp.linalg.norm(a, ord=1, axis=0) * W4), [(N, N)]),
    "norm_vector_inf": (lambda a, xp: xp.linalg.norm(a[0], ord=np.inf), [(N, N)]),
    "norm_fro": (lambda a, xp: xp.linalg.norm(a, "fro"), [(N, N)]),
    "norm_nuc": (lambda a, xp: xp.linalg.norm(a, "nuc"), [(N, 3)]),
    "norm_2": (lambda a, xp: xp.linalg.norm(a, 2), [(N, 3)]),
    "norm_-2": (lambda a, xp: xp.linalg.norm(a, -2), [(N, 3)]),
    "norm_1": (lambda a, xp: xp.linalg.norm(a, 1), [(N, 3)]),
    "norm_inf": (lambda a, xp: xp.linalg.norm(a, np.inf), [(N, 3)]),
    "norm_axes_keepdims": (lambda a, xp: xp.sum(xp.linalg.norm(a, axis=(1, 0), keepdims=True) * 2.0), [(N, 3)]),
    "cond": (lambda a, xp: xp.linalg.cond(a), [(N, 3)]),
    "cond_fro": (lambda a, xp: xp.linalg.cond(a + N * np.eye(N), "fro"), [(N, N)]),
    "multi_dot": (lambda a, b, xp: xp.sum(xp.linalg.multi_dot([b[:, 0], a, a, b]) * W4[:3]), [(N, N), (N, 3)]),
    "vector_norm": (lambda a, xp: xp.sum(xp.linalg.vector_norm(a, axis=(0,), ord=3) * W4), [(N, N)]),
    "matrix_norm": (lambda a, xp: xp.linalg.matrix_norm(a, ord="nuc"), [(N, 3)]),
    "cross": (lambda a, b, xp: xp.sum(xp.linalg.cross(a, b) * C43), [(N, 3), (N, 3)]),
}


def _args(shapes, dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=shape).astype(dtype) for shape in shapes]


def _symgrad(name):
    fn = CASES[name][0]
    return lambda *args: fn(*args, _SG)


def _numpy(name):
    fn = CASES[name][0]
    return lambda *args: fn(*args, _NP)


def test_the_cases_exercise_every_lapack_primitive_both_ways():
    """tests/test_ops.py leaves the primitives of ops/lapack.py to these cases."""
    seen = set()
    for fn, shapes in CASES.values():
        args = _args(shapes)
        f = lambda *a, fn=fn: fn(*a, _SG)  # noqa: E731
        for graph in (sg.trace(sg.value_and_grad(f, argnums=tuple(range(len(args)))), *args),
                      sg.trace(lambda *a, f=f: sg.jvp(f, a, a), *args)):
            seen.update(node.prim for node in graph.nodes)
    assert set(lapack.PRIMITIVES) - seen == set()


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_match_numpy_everywhere(name):
    args = _args(CASES[name][1])
    expected = _numpy(name)(*args)
    f = _symgrad(name)
    for path, value in {"eager": f(*args), "numpy": sg.compile(f, backend="numpy")(*args),
                        "default": sg.compile(f)(*args)}.items():
        np.testing.assert_allclose(value, expected, rtol=1e-10, atol=1e-12, err_msg=path)


@pytest.mark.parametrize("name", sorted(CASES))
def test_reverse_gradients_match_finite_differences(name):
    args = _args(CASES[name][1])
    argnums = tuple(range(len(args)))
    grads = assert_grads_match_finite_differences(_symgrad(name), args, argnums=argnums, rtol=1e-5, atol=1e-7,
                                                  reference=_numpy(name))
    for backend, (_, compiled) in _llvm_agrees_with_numpy(name, args).items():
        for got, want in zip(compiled, grads):
            np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12, err_msg=backend)


@pytest.mark.parametrize("name", sorted(CASES))
def test_forward_derivatives_match_finite_differences(name):
    args = _args(CASES[name][1])
    tangents = _args(CASES[name][1], seed=1)
    _, tangent = sg.jvp(_symgrad(name), tuple(args), tuple(tangents))
    expected = numerical_jvp(_numpy(name), args, tangents, 1e-6)
    np.testing.assert_allclose(tangent, expected, rtol=1e-5, atol=1e-7)
    compiled = sg.compile(lambda *a: sg.jvp(_symgrad(name), tuple(a[:len(args)]), tuple(a[len(args):]))[1],
                          backend="numpy")(*args, *tangents)
    np.testing.assert_allclose(compiled, tangent, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", sorted(CASES))
def test_float32_values_and_gradients(name):
    args = _args(CASES[name][1], np.float32)
    value, grads = sg.value_and_grad(_symgrad(name), argnums=tuple(range(len(args))))(*args)
    np.testing.assert_allclose(value, _numpy(name)(*[a.astype(np.float64) for a in args]), rtol=2e-4, atol=2e-4)
    grads64 = sg.grad(_symgrad(name), argnums=tuple(range(len(args))))(*[a.astype(np.float64) for a in args])
    for g, g64, a in zip(grads, grads64, args):
        assert g.dtype == np.float32 and g.shape == a.shape
        np.testing.assert_allclose(g, g64, rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("name", sorted(CASES))
def test_vmap_is_a_leading_axis(name):
    """vmap of a case and of its gradient: NumPy's value (and the gradient) of each example."""
    stacks = _args([(3, *shape) for shape in CASES[name][1]], seed=3)
    f, g = _symgrad(name), sg.grad(_symgrad(name))
    values, grads = sg.vmap(f)(*stacks), sg.vmap(g)(*stacks)
    for k in range(3):
        example = [s[k] for s in stacks]
        np.testing.assert_allclose(values[k], _numpy(name)(*example), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(grads[k], g(*example), rtol=1e-9, atol=1e-12)


# ----------------------------------------------------------------------------- stacked (batched) inputs

STACKED = {
    "solve": (lambda a, b: np.linalg.solve(a, b), [(2, 3, N, N), (2, 3, N, 2)]),
    "solve_broadcast": (lambda a, b: np.linalg.solve(a, b), [(2, 1, N, N), (3, N, 2)]),
    "inv": (lambda a: np.linalg.inv(a), [(2, 3, N, N)]),
    "det": (lambda a: np.linalg.det(a), [(2, 3, N, N)]),
    "slogdet": (lambda a: np.linalg.slogdet(a), [(2, N, N)]),
    "eigh": (lambda a: np.linalg.eigh(a), [(2, N, N)]),
    "svd": (lambda a: np.linalg.svd(a), [(2, N, 3)]),
    "qr": (lambda a: np.linalg.qr(a), [(2, 3, N)]),
    "pinv": (lambda a: np.linalg.pinv(a), [(2, N, 3)]),
    "matrix_power": (lambda a: np.linalg.matrix_power(a, 5), [(2, 3, N, N)]),
    "norm": (lambda a: np.linalg.norm(a, axis=(-2, -1)), [(2, 3, N, N)]),
}


@pytest.mark.parametrize("name", sorted(STACKED))
def test_stacked_matrices_match_numpy(name):
    reference, shapes = STACKED[name]
    args = _args(shapes, seed=5)
    if name in ("eigh",):
        args = [a + np.swapaxes(a, -1, -2) for a in args]
    function = {"matrix_power": lambda a: sg.linalg.matrix_power(a, 5),
                "norm": lambda a: sg.linalg.norm(a, axis=(-2, -1))}.get(name, getattr(sg.linalg, name.removesuffix("_broadcast")))
    expected = reference(*args)
    for path, got in {"eager": function(*args), "numpy": sg.compile(function, backend="numpy")(*args),
                      "default": sg.compile(function)(*args)}.items():
        for g, e in zip(got if isinstance(expected, tuple) else [got], expected if isinstance(expected, tuple)
                        else [expected]):
            np.testing.assert_allclose(g, e, rtol=1e-9, atol=1e-10, err_msg=path)


def test_stacked_gradient_is_the_gradient_of_each_matrix():
    a = _args([(3, N, N)], seed=6)[0] + N * np.eye(N)
    grads = sg.grad(lambda a: sg.sum(sg.linalg.slogdet(a)[1] * np.arange(1.0, 4.0)))(a)
    for k in range(3):
        np.testing.assert_allclose(grads[k], (k + 1) * np.linalg.inv(a[k]).T, rtol=1e-10)


# ----------------------------------------------------------------------------- edge points

@pytest.mark.parametrize("shape", [(0, 0), (2, 0, 0), (0, 3, 3), (1, 1)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_empty_and_one_by_one_matrices(shape, dtype):
    a = (np.ones(shape) * 2.0 + (np.eye(shape[-1]) if shape[-1] else 0)).astype(dtype)
    checks = {"inv": np.linalg.inv, "det": np.linalg.det, "cholesky": np.linalg.cholesky, "pinv": np.linalg.pinv,
              "eigvalsh": np.linalg.eigvalsh, "svdvals": np.linalg.svdvals,
              "slogdet": lambda x: np.linalg.slogdet(x)[1]}
    for name, reference in checks.items():
        function = (lambda x: sg.linalg.slogdet(x)[1]) if name == "slogdet" else getattr(sg.linalg, name)
        expected = reference(a)
        for path, got in {"eager": function(a), "numpy": sg.compile(function, backend="numpy")(a),
                          "default": sg.compile(function)(a)}.items():
            assert np.shape(got) == np.shape(expected), (name, path)
            assert np.asarray(got).dtype == dtype, (name, path)
            np.testing.assert_allclose(got, expected, rtol=1e-5, err_msg=f"{name} {path}")
        if a.size:
            grad = sg.grad(lambda x: sg.sum(function(x)))(a)
            assert grad.shape == a.shape and grad.dtype == dtype and np.all(np.isfinite(grad))


def test_one_by_one_gradients():
    a = np.array([[3.0]])
    np.testing.assert_allclose(sg.grad(lambda a: sg.linalg.det(a))(a), [[1.0]])
    np.testing.assert_allclose(sg.grad(lambda a: sg.sum(sg.linalg.inv(a)))(a), [[-1 / 9]])
    np.testing.assert_allclose(sg.grad(lambda a: sg.sum(sg.linalg.cholesky(a)))(a), [[0.5 / np.sqrt(3.0)]])
    np.testing.assert_allclose(sg.grad(lambda a: sg.sum(sg.linalg.svd(a)[1]))(a), [[1.0]])


@pytest.mark.parametrize("backend", ["eager", "numpy", None])
def test_singular_matrices_raise_as_numpy_does(backend):
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    run = (lambda f: f) if backend == "eager" else (lambda f: sg.compile(f, backend=backend))
    for f in (sg.linalg.inv, lambda a: sg.linalg.solve(a, np.ones(2)), sg.linalg.cholesky,
              lambda a: sg.linalg.solve_triangular(a - np.diag([1.0, 4.0]), np.ones(2))):
        with pytest.raises(np.linalg.LinAlgError):
            run(f)(singular)
    # NumPy's det and slogdet of a singular matrix are 0 and (0, -inf), not errors; log|det|'s gradient
    # (a^-T) is one, det's (the cofactors) is not
    np.testing.assert_allclose(run(sg.linalg.det)(singular), 0.0)
    sign, logabsdet = run(sg.linalg.slogdet)(singular)
    assert sign == 0 and logabsdet == -np.inf
    with pytest.raises(np.linalg.LinAlgError):
        run(sg.grad(lambda a: sg.linalg.slogdet(a)[1]))(singular)
    np.testing.assert_allclose(run(sg.grad(sg.linalg.det))(singular), [[4.0, -2.0], [-2.0, 1.0]], atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_det_gradient_at_singular_matrices_is_the_cofactor_matrix(dtype):
    """det's derivative exists everywhere: at a singular matrix of rank n-1 it is the (nonzero) cofactor
    matrix, of lower rank zero; reverse and forward, every path, against central finite differences (torch
    2.13 gives zeros at an exactly singular matrix, which finite differences contradict)."""
    rng = np.random.default_rng(26)
    low = rng.normal(size=(4, 2)) @ rng.normal(size=(2, 4))
    cases = [np.array([[1.0, 2.0], [2.0, 4.0]]), np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]]),
             low, np.stack([low, rng.normal(size=(4, 4))]), np.zeros((3, 3)), np.array([[0.0]])]
    f = lambda a: sg.sum(sg.linalg.det(a))  # noqa: E731
    tol = 1e-7 if dtype == np.float64 else 1e-4
    for a in cases:
        expected = np.zeros_like(a)
        for index in np.ndindex(a.shape):
            unit = np.zeros_like(a)
            unit[index] = 1.0
            expected[index] = numerical_jvp(lambda x: np.sum(np.linalg.det(x)), [a], [unit], 1e-6)
        for path, (_, (grad,)) in value_and_grad_everywhere(f, (a.astype(dtype),)).items():
            assert grad.dtype == dtype
            np.testing.assert_allclose(grad, expected, rtol=tol, atol=tol, err_msg=f"{path} {a.shape}")
        direction = rng.normal(size=a.shape)
        _, tangent = sg.jvp(f, (a,), (direction,))
        np.testing.assert_allclose(tangent, np.sum(expected * direction), rtol=1e-7, atol=1e-7)


def test_singular_values_of_a_rank_deficient_matrix_and_its_pseudo_inverse():
    a = np.outer([1.0, 2.0, 3.0], [1.0, -1.0])  # rank 1
    np.testing.assert_allclose(sg.linalg.pinv(a), np.linalg.pinv(a), atol=1e-12)
    x, residuals, rank, s = sg.compile(lambda a, b: sg.linalg.lstsq(a, b))(a, np.ones(3))
    ex, _, erank, es = np.linalg.lstsq(a, np.ones(3))
    np.testing.assert_allclose(x, ex, atol=1e-12)
    assert rank == erank == 1
    np.testing.assert_allclose(s, es, atol=1e-12)


def test_matrix_rank_and_the_other_numpy_2_names_match_numpy():
    rng = np.random.default_rng(28)
    a, low = rng.normal(size=(2, N, 3)), np.outer([1.0, 2.0, 3.0], [1.0, 0.0, 1.0])
    v, w = rng.normal(size=(5, 3)), rng.normal(size=(5, 3))
    for name, got, expected in [
            ("matrix_rank", lambda: sg.linalg.matrix_rank(a), lambda: np.linalg.matrix_rank(a)),
            ("matrix_rank low", lambda: sg.linalg.matrix_rank(low), lambda: np.linalg.matrix_rank(low)),
            ("matrix_rank tol", lambda: sg.linalg.matrix_rank(low, tol=0.5), lambda: np.linalg.matrix_rank(low, tol=0.5)),
            ("matrix_rank vector", lambda: sg.linalg.matrix_rank(np.ones(3)), lambda: np.linalg.matrix_rank(np.ones(3))),
            ("cond singular", lambda: sg.linalg.cond(low), lambda: np.linalg.cond(low)),
            ("cond -2", lambda: sg.linalg.cond(a, -2), lambda: np.linalg.cond(a, -2)),
            ("vector_norm", lambda: sg.linalg.vector_norm(a, axis=(0, 2), keepdims=True, ord=1),
             lambda: np.linalg.vector_norm(a, axis=(0, 2), keepdims=True, ord=1)),
            ("vector_norm all", lambda: sg.linalg.vector_norm(a), lambda: np.linalg.vector_norm(a)),
            ("matrix_norm", lambda: sg.linalg.matrix_norm(a, keepdims=True), lambda: np.linalg.matrix_norm(a, keepdims=True)),
            ("matrix_transpose", lambda: sg.linalg.matrix_transpose(a), lambda: np.linalg.matrix_transpose(a)),
            ("diagonal", lambda: sg.linalg.diagonal(a, offset=1), lambda: np.linalg.diagonal(a, offset=1)),
            ("outer", lambda: sg.linalg.outer(v[0], w[1]), lambda: np.linalg.outer(v[0], w[1])),
            ("vecdot", lambda: sg.linalg.vecdot(v, w), lambda: np.linalg.vecdot(v, w)),
            ("cross axis 0", lambda: sg.linalg.cross(v.T, w.T, axis=0), lambda: np.cross(v.T, w.T, axis=0)),
            ("matmul", lambda: sg.linalg.matmul(a, v.T), lambda: np.linalg.matmul(a, v.T))]:
        with np.errstate(divide="ignore"):
            g, e = got(), expected()
        assert np.shape(g) == np.shape(e), name
        np.testing.assert_allclose(g, e, rtol=1e-10, err_msg=name)
    assert sg.compile(sg.linalg.matrix_rank)(low) == 1


def test_lstsq_residuals_are_empty_where_numpy_s_are():
    """Residuals exist for a tall full-rank a only: empty for a rank-deficient or a wide one (NumPy arrays and
    eager tensors); under a trace, the squared norms whenever m > n (its shapes cannot depend on the rank)."""
    rng = np.random.default_rng(27)
    deficient = np.outer([1.0, 2.0, 3.0, 4.0], [1.0, -1.0, 0.5])
    for a in (rng.normal(size=(4, 3)), deficient, rng.normal(size=(3, 4)), rng.normal(size=(3, 3))):
        for b in (rng.normal(size=a.shape[0]), rng.normal(size=(a.shape[0], 2))):
            expected = np.linalg.lstsq(a, b)
            for path, got in {"arrays": sg.linalg.lstsq(a, b),
                              "tensors": [np.asarray(r.detach().numpy() if isinstance(r, sg.Tensor) else r)
                                          for r in sg.linalg.lstsq(sg.tensor(a), sg.tensor(b))]}.items():
                for g, e in zip(got, expected):
                    assert np.shape(g) == np.shape(e), (path, a.shape, b.shape, np.shape(g), np.shape(e))
                    np.testing.assert_allclose(g, e, rtol=1e-9, atol=1e-12, err_msg=path)
    traced = sg.compile(lambda a, b: sg.linalg.lstsq(a, b)[1])(deficient, np.ones(4))
    np.testing.assert_allclose(traced, [np.sum((np.ones(4) - deficient @ np.linalg.pinv(deficient) @ np.ones(4)) ** 2)])


@pytest.mark.parametrize("value", [np.nan, np.inf])
def test_nan_and_inf_inputs_behave_as_numpy(value):
    a = np.array([[2.0, value], [1.0, 3.0]])
    for name in ("inv", "det", "solve", "pinv"):
        f = (lambda x: sg.linalg.solve(x, np.ones(2))) if name == "solve" else getattr(sg.linalg, name)
        g = (lambda x: np.linalg.solve(x, np.ones(2))) if name == "solve" else getattr(np.linalg, name)
        try:
            expected = g(a)
        except np.linalg.LinAlgError:
            with pytest.raises(np.linalg.LinAlgError):
                sg.compile(f, backend="numpy")(a)
            continue
        with np.errstate(all="ignore"):
            np.testing.assert_array_equal(np.isnan(sg.compile(f, backend="numpy")(a)), np.isnan(expected))


def test_repeated_eigenvalues_give_finite_eigenvalue_gradients():
    """As in PyTorch: the eigenvalues' gradient exists at a repeated eigenvalue (the eigenvectors' does not)."""
    a = np.eye(3)
    np.testing.assert_allclose(sg.grad(lambda a: sg.sum(sg.linalg.eigvalsh(a) * np.array([1.0, 2.0, 3.0])))(a)
                               .trace(), 6.0)
    np.testing.assert_allclose(sg.grad(lambda a: sg.linalg.norm(a, "nuc"))(a), np.eye(3), atol=1e-12)


def test_norm_of_zero_has_a_zero_gradient():
    for f in (sg.linalg.norm, lambda x: sg.linalg.norm(x, "fro")):
        np.testing.assert_array_equal(sg.grad(f)(np.zeros((2, 2))), np.zeros((2, 2)))


@pytest.mark.parametrize("ord", [3, 1.5, 0.5, -1, -2])
def test_a_p_norm_at_zero_entries_has_pytorch_s_zero_gradient(ord):
    """Only the 2-norm had it: |x|**p's infinite derivative at 0 (p < 1) and the root's at a zero sum (p > 1) met
    a 0 derivative and gave NaN, where torch.linalg.vector_norm gives 0 (a 2-norm's subgradient, as sg's)."""
    torch = pytest.importorskip("torch")
    for x in (np.zeros(4), np.array([0.0, -0.0, 3.0, -1.5]), np.array([0.5, -1.5, 2.0, 0.25])):
        t = torch.tensor(x, requires_grad=True)
        expected = torch.linalg.vector_norm(t, ord)
        expected.backward()
        for path, (value, (g,)) in value_and_grad_everywhere(lambda a: sg.linalg.norm(a, ord), (x,)).items():
            np.testing.assert_allclose(value, np.linalg.norm(x, ord), rtol=1e-14, err_msg=path)
            np.testing.assert_allclose(g, t.grad.numpy(), rtol=1e-13, atol=0, err_msg=f"{path} {x}")
    assert_grads_match_finite_differences(lambda a: sg.linalg.norm(a, ord), (np.array([0.5, -1.5, 2.0, 0.25]),))


@pytest.mark.parametrize("shape, axis", [((0, 3), 1), ((0, 3), 0), ((2, 0, 3), (0, 2)), ((0, 3), (0, 1))])
def test_vector_norm_of_empty_arrays_matches_numpy(shape, axis):
    """vector_norm merged the reduced axes with reshape(..., -1), ambiguous where the kept axes hold no element: a
    (0, 3) array's norm over axis 1 was a ShapeError where NumPy (and torch.linalg.vector_norm: random_programs_torch
    seed 9137) give an empty result; its gradient is an empty array of x's shape."""
    x = np.zeros(shape)
    for ord in (2, 3, 1):
        got = sg.linalg.vector_norm(x, ord=ord, axis=axis)
        expected = np.linalg.vector_norm(x, ord=ord, axis=axis)
        assert np.shape(got) == expected.shape
        np.testing.assert_array_equal(got, expected)
        assert sg.grad(lambda a: sg.sum(sg.linalg.vector_norm(a, ord=ord, axis=axis)))(x).shape == shape


def test_norm_matches_numpy_for_every_order():
    x = RNG.normal(size=(3, 4, 5))
    for ord in (None, 1, 2, -1, -2, np.inf, -np.inf, 0, 3, 0.5):
        np.testing.assert_allclose(sg.linalg.norm(x, ord, axis=1), np.linalg.norm(x, ord, axis=1), rtol=1e-12)
    for ord in (None, "fro", "nuc", 1, 2, -1, -2, np.inf, -np.inf):
        for axis in ((0, 2), (2, 0), (-1, -2)):
            np.testing.assert_allclose(sg.linalg.norm(x, ord, axis=axis), np.linalg.norm(x, ord, axis=axis),
                                       rtol=1e-12, err_msg=f"{ord} {axis}")
            np.testing.assert_allclose(sg.linalg.norm(x, ord, axis=axis, keepdims=True),
                                       np.linalg.norm(x, ord, axis=axis, keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(sg.linalg.norm(x, keepdims=True), np.linalg.norm(x, keepdims=True))


# ----------------------------------------------------------------------------- errors

def test_wrong_shapes_are_clear_errors_naming_the_function_and_shapes():
    with pytest.raises(np.linalg.LinAlgError, match=r"inv.*\(3, 4\).*square"):
        sg.linalg.inv(np.ones((3, 4)))
    with pytest.raises(sg.ShapeError, match=r"det.*1-dimensional.*\(3,\)"):
        sg.linalg.det(np.ones(3))
    with pytest.raises(sg.ShapeError, match=r"solve.*\(3, 3\).*\(4,\)"):
        sg.linalg.solve(np.eye(3), np.ones(4))
    with pytest.raises(sg.ShapeError, match=r"solve.*\(2, 3, 3\).*\(4, 3, 1\)"):
        sg.linalg.solve(np.ones((2, 3, 3)), np.ones((4, 3, 1)))
    with pytest.raises(sg.ShapeError, match=r"cholesky.*\(2, 3\)"):
        sg.grad(lambda a: sg.sum(sg.linalg.cholesky(a)))(np.ones((2, 3)))
    with pytest.raises(TypeError, match="integer"):
        sg.linalg.matrix_power(np.eye(2), 1.5)


def test_undefined_derivatives_are_clear_errors():
    with pytest.raises(sg.UnsupportedOpError, match="qr.*complete"):
        sg.grad(lambda a: sg.sum(sg.linalg.qr(a, mode="complete")[0]))(np.ones((4, 2)) + np.eye(4, 2))
    with pytest.raises(sg.UnsupportedOpError, match="full_matrices"):
        sg.jvp(lambda a: sg.linalg.svd(a)[0], (np.eye(4, 2),), (np.ones((4, 2)),))


def test_full_matrices_gradient_ignores_the_extra_columns_as_pytorch():
    a = _args([(N, 2)], seed=9)[0]
    full = sg.grad(lambda a: sg.sum(sg.linalg.svd(a)[0][:, :2] * C4[:, :2]))(a)
    reduced = sg.grad(lambda a: sg.sum(sg.linalg.svd(a, full_matrices=False)[0] * C4[:, :2]))(a)
    np.testing.assert_allclose(full, reduced, rtol=1e-12)


def test_numpy_functions_on_traced_values_point_to_sg_linalg():
    with pytest.raises(sg.TracerError, match=r"sg\.linalg\.det"):
        sg.grad(lambda a: np.linalg.det(a))(np.eye(2))


@pytest.mark.parametrize("name", sorted(CASES))
def test_eager_tensors_record_every_case_and_backward_matches_sg_grad(name):
    """Every sg.linalg function on tensors requiring grad, the factorizations with several results (slogdet,
    eigh, svd, qr, lstsq) included: NumPy's value, and backward's gradients those of sg.grad to 1e-10."""
    args = _args(CASES[name][1], seed=20)
    tensors = [sg.tensor(a, requires_grad=True) for a in args]
    out = _symgrad(name)(*tensors)
    np.testing.assert_allclose(out.detach().numpy(), _numpy(name)(*args), rtol=1e-10, atol=1e-12)
    out.backward()
    expected = sg.grad(_symgrad(name), argnums=tuple(range(len(args))))(*args)
    for t, e in zip(tensors, expected if isinstance(expected, tuple) else (expected,)):
        np.testing.assert_allclose(t.grad.numpy(), e, rtol=1e-10, atol=1e-12)


def test_eager_factorization_results_are_tensors_and_a_second_backward_is_refused():
    a = _args([(N, N)], seed=21)[0]
    t = sg.tensor(a + a.T, requires_grad=True)
    w, v = sg.linalg.eigh(t)
    assert isinstance(w, sg.Tensor) and isinstance(v, sg.Tensor) and w.requires_grad and v.requires_grad
    np.testing.assert_allclose(w.detach().numpy(), np.linalg.eigh(a + a.T)[0], rtol=1e-12)
    loss = sg.sum(w * W4)
    loss.backward()
    with pytest.raises(RuntimeError):
        loss.backward()
    with sg.no_grad():
        assert not sg.linalg.svd(t)[1].requires_grad


def test_repeated_eager_steps_through_factorizations_run_the_compiled_backward():
    """The same structure backward again and again: op by op the first time, then the lowered adjoint (whose
    saved factorization results are passed one array each), and the whole-step path; the same gradients."""
    def loss(a):
        s = a + sg.swapaxes(a, -1, -2)
        w, v = sg.linalg.eigh(s)
        u, sv, vh = sg.linalg.svd(a, full_matrices=False)
        q, r = sg.linalg.qr(a)
        return (sg.linalg.slogdet(a + 2 * N * np.eye(N))[1] + sg.sum(w * W4) + sg.sum(v * v * C4) + sg.sum(sv)
                + sg.sum(r * C4) + sg.linalg.det(a))
    a = _args([(N, N)], seed=22)[0]
    expected = sg.grad(loss)(a)
    for step in range(4):
        t = sg.tensor(a, requires_grad=True)
        loss(t).backward()
        np.testing.assert_allclose(t.grad.numpy(), expected, rtol=1e-10, atol=1e-12, err_msg=f"step {step}")


def test_eager_second_derivative_through_eigh():
    a = _args([(N, N)], seed=23)[0]
    f = lambda m: sg.sum(sg.linalg.eigh(m + sg.swapaxes(m, -1, -2))[0] ** 3 * W4)  # noqa: E731
    direction = _args([(N, N)], seed=24)[0]
    t = sg.tensor(a, requires_grad=True)
    (g,) = sg.autograd.grad(f(t), [t], create_graph=True)
    sg.sum(g * direction).backward()
    _, expected = sg.jvp(sg.grad(f), (a,), (direction,))
    np.testing.assert_allclose(t.grad.numpy(), expected, rtol=1e-9, atol=1e-10)


def test_eager_results_with_hooks_and_retained_grads_split_the_backward_between_them():
    """A hook or retain_grad on one result of a factorization stops a run of records there: the other
    results' cotangents reach the factorization from another run (a cotangent per result, zeros for none)."""
    a = _args([(N, 3)], seed=25)[0]
    f = lambda u, s, vh: sg.sum(u * W4[:3] @ vh * C43) + sg.sum(s * s)  # noqa: E731
    expected = sg.grad(lambda m: f(*sg.linalg.svd(m, full_matrices=False)))(a)
    for mark in ("hook", "retain_u", "retain_s", "only_s"):
        t = sg.tensor(a, requires_grad=True)
        u, s, vh = sg.linalg.svd(t, full_matrices=False)
        seen = []
        if mark == "hook":
            s.register_hook(lambda g: seen.append(g.numpy().copy()))
        elif mark == "retain_u":
            u.retain_grad()
        elif mark == "retain_s":
            s.retain_grad()
        if mark == "only_s":
            sg.sum(s * s).backward()
            np.testing.assert_allclose(t.grad.numpy(), sg.grad(lambda m: sg.sum(sg.linalg.svdvals(m) ** 2))(a),
                                       rtol=1e-10, atol=1e-12)
            continue
        f(u, s, vh).backward()
        np.testing.assert_allclose(t.grad.numpy(), expected, rtol=1e-10, atol=1e-12, err_msg=mark)
        if mark == "hook":
            np.testing.assert_allclose(seen[0], 2 * np.linalg.svd(a, compute_uv=False), rtol=1e-12)
        if mark == "retain_s":
            np.testing.assert_allclose(s.grad.numpy(), 2 * np.linalg.svd(a, compute_uv=False), rtol=1e-12)


def test_eager_tensors_run_the_single_result_functions():
    a = _args([(N, N)], seed=4)[0] + N * np.eye(N)
    t = sg.tensor(a, requires_grad=True)
    loss = sg.sum(sg.linalg.inv(t) * C4) + sg.linalg.norm(t) + sg.sum(sg.linalg.cholesky(_spd(t, sg)))
    loss.backward()
    expected = sg.grad(lambda a: sg.sum(sg.linalg.inv(a) * C4) + sg.linalg.norm(a) +
                       sg.sum(sg.linalg.cholesky(_spd(a, sg))))(a)
    np.testing.assert_allclose(t.grad.numpy(), expected, rtol=1e-10)


def test_scipy_names():
    a = _spd(_args([(N, N)], seed=2)[0], np)
    b = _args([(N, 2)], seed=3)[0]
    for lower in (False, True):
        np.testing.assert_allclose(sg.scipy.linalg.cho_solve(sg.scipy.linalg.cho_factor(a, lower=lower), b),
                                   np.linalg.solve(a, b), rtol=1e-10)
    scipy_linalg = pytest.importorskip("scipy.linalg")
    for trans in (0, 1, "T"):
        for unit in (False, True):
            np.testing.assert_allclose(
                sg.scipy.linalg.solve_triangular(a, b, trans=trans, lower=True, unit_diagonal=unit),
                scipy_linalg.solve_triangular(a, b, trans=trans, lower=True, unit_diagonal=unit), rtol=1e-10)


# ----------------------------------------------------------------------------- torch as an oracle

class _TorchNS:
    """torch under the names the oracle cases use; `c` makes a NumPy constant a tensor of the data's dtype."""

    def __init__(self, torch, dtype):
        self.t, self.dtype = torch, dtype

    def c(self, value):
        return self.t.tensor(np.asarray(value), dtype=self.dtype)

    def sum(self, x):
        return x.sum()

    def mT(self, x):
        return x.mT

    def solve_triangular(self, a, b, lower, trans):
        a = a.mT if trans else a
        return self.t.linalg.solve_triangular(a, b, upper=not lower if not trans else lower)

    def __getattr__(self, name):
        return getattr(self.t.linalg, name)


class _SgNS:
    def __init__(self, dtype):
        self.dtype = dtype

    def c(self, value):
        return np.asarray(value, self.dtype)

    def sum(self, x):
        return sg.sum(x)

    def mT(self, x):
        return sg.swapaxes(x, -1, -2)

    def solve_triangular(self, a, b, lower, trans):
        return sg.linalg.solve_triangular(a, b, lower=lower, trans=trans)

    def __getattr__(self, name):
        return getattr(sg.linalg, name)


# name -> (function(namespace, arrays...), shapes): torch.linalg and sg.linalg compute the same value
TORCH = {
    "solve": (lambda L, a, b: L.sum(L.solve(a + L.c(N * np.eye(N)), b) * L.c(C43)), [(N, N), (N, 3)]),
    "inv": (lambda L, a: L.sum(L.inv(a + L.c(N * np.eye(N))) * L.c(C4)), [(N, N)]),
    "det": (lambda L, a: L.det(a + L.c(2 * np.eye(N))), [(N, N)]),
    "slogdet": (lambda L, a: L.slogdet(a + L.c(N * np.eye(N)))[1], [(N, N)]),
    "cholesky": (lambda L, a: L.sum(L.cholesky(a @ L.mT(a) + L.c(N * np.eye(N))) * L.c(C4)), [(N, N)]),
    "solve_triangular": (lambda L, a, b: L.sum(L.solve_triangular(a + L.c(N * np.eye(N)), b, True, False) *
                                               L.c(C43)), [(N, N), (N, 3)]),
    "solve_triangular_t": (lambda L, a, b: L.sum(L.solve_triangular(a + L.c(N * np.eye(N)), b, False, True) *
                                                 L.c(C43)), [(N, N), (N, 3)]),
    "eigh": (lambda L, a: L.sum(L.eigh(a + L.mT(a) + L.c(np.diag(6 * W4)))[0] * L.c(W4)) +
             L.sum(L.eigh(a + L.mT(a) + L.c(np.diag(6 * W4)))[1] ** 2 * L.c(C4)), [(N, N)]),
    "svd": (lambda L, a: L.sum(L.svd(a, full_matrices=False)[1] * L.c(W4[:3])) +
            L.sum((L.svd(a, full_matrices=False)[0] * L.c(W4[:3])) @ L.svd(a, full_matrices=False)[2] * L.c(C43)),
            [(N, 3)]),
    "qr": (lambda L, a: L.sum(L.qr(a)[0] * L.c(C43)) + L.sum(L.qr(a)[1] * L.c(C4[:3, :3])), [(N, 3)]),
    "pinv": (lambda L, a: L.sum(L.pinv(a) * L.c(C43)), [(3, N)]),
    "matrix_power": (lambda L, a: L.sum(L.matrix_power(a, 3) * L.c(C4)), [(N, N)]),
    "norm_nuc": (lambda L, a: L.norm(a, "nuc"), [(N, 3)]),
    "norm_2": (lambda L, a: L.norm(a, 2), [(N, 3)]),
    "norm_vector_3": (lambda L, a: L.norm(a[0], 3), [(N, N)]),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(TORCH))
def test_against_torch(name, dtype):
    torch = pytest.importorskip("torch")
    fn, shapes = TORCH[name]
    args = _args(shapes, dtype, seed=11)
    tensors = [torch.tensor(a, requires_grad=True) for a in args]
    out = fn(_TorchNS(torch, tensors[0].dtype), *tensors)
    out.backward()
    tol = 2e-4 if dtype == np.float32 else 1e-10
    ours = lambda *a: fn(_SgNS(dtype), *a)  # noqa: E731
    for backend in ("numpy", None):
        value, grads = sg.compile(sg.value_and_grad(ours, argnums=tuple(range(len(args)))), backend=backend)(*args)
        np.testing.assert_allclose(value, out.detach().numpy(), rtol=tol, atol=tol)
        for g, t in zip(grads, tensors):
            assert g.dtype == dtype
            np.testing.assert_allclose(g, t.grad.numpy(), rtol=10 * tol, atol=10 * tol)
    eager = [sg.tensor(a, requires_grad=True) for a in args]
    ours(*eager).backward()
    for e, t in zip(eager, tensors):
        assert e.grad.dtype == dtype
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=10 * tol, atol=10 * tol)
    tangents = _args(shapes, dtype, seed=12)
    _, tangent = sg.jvp(ours, tuple(args), tuple(tangents))
    _, expected = torch.func.jvp(lambda *a: fn(_TorchNS(torch, tensors[0].dtype), *a),
                                 tuple(torch.tensor(a) for a in args), tuple(torch.tensor(t) for t in tangents))
    np.testing.assert_allclose(tangent, expected.numpy(), rtol=10 * tol, atol=10 * tol)


# ----------------------------------------------------------------------------- LLVM (LAPACK calls)

# Every case: the LLVM backend calls NumPy's LAPACK for each primitive (codegen/llvm/lapack.py; pinv through
# svd), so no graph of sg.linalg falls back to the NumPy backend.
LLVM_CASES = list(CASES)


def _llvm_agrees_with_numpy(name, args):
    """value_and_grad of case `name` compiled on the LLVM and the NumPy backend agree (to 1e-11 in float64);
    {backend: (value, gradients)}."""
    step = sg.value_and_grad(_symgrad(name), argnums=tuple(range(len(args))))
    results = {backend: sg.compile(step, backend=backend)(*args) for backend in ("llvm", "numpy")}
    (value, grads), (expected_value, expected_grads) = results["llvm"], results["numpy"]
    tol = 1e-11 if args[0].dtype == np.float64 else 2e-5
    np.testing.assert_allclose(value, expected_value, rtol=tol, atol=tol)
    for g, e in zip(grads, expected_grads):
        assert g.dtype == args[0].dtype
        np.testing.assert_allclose(g, e, rtol=tol, atol=tol)
    return results


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", LLVM_CASES)
def test_llvm_backend_calls_lapack_and_agrees_with_numpy(name, dtype):
    """(In float64 the value and gradients are compared in test_reverse_gradients_match_finite_differences, which
    compiles the same function.)"""
    args = _args(CASES[name][1], dtype, seed=16)
    tol = 1e-11 if dtype == np.float64 else 2e-5
    if dtype == np.float32:
        _llvm_agrees_with_numpy(name, args)
    _, tangent = sg.compile(lambda *a: sg.jvp(_symgrad(name), tuple(a), tuple(a)), backend="llvm")(*args)
    np.testing.assert_allclose(tangent, sg.jvp(_symgrad(name), tuple(args), tuple(args))[1], rtol=tol * 10, atol=tol)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_llvm_lapack_on_stacks_and_empty_matrices(dtype):
    rng = np.random.default_rng(17)
    for shape, columns in [((2, 3, N, N), 2), ((0, 3, 3), 2), ((2, 0, 0), 1), ((0, 0), 3), ((N, N), 0), ((1, 1), 1)]:
        a = (rng.normal(size=shape) + N * np.eye(shape[-1])).astype(dtype)
        b = rng.normal(size=shape[:-1] + (columns,)).astype(dtype)
        spd = a @ np.swapaxes(a, -1, -2)
        for name, f, reference, args in [
                ("solve", lambda a, b: sg.linalg.solve(a, b), np.linalg.solve, (a, b)),
                ("inv", sg.linalg.inv, np.linalg.inv, (a,)),
                ("cholesky", sg.linalg.cholesky, np.linalg.cholesky, (spd,)),
                ("solve_triangular", lambda a, b: sg.linalg.solve_triangular(a, b, lower=True),
                 lambda a, b: np.linalg.solve(np.tril(a), b), (a, b))]:
            got, expected = sg.compile(f, backend="llvm")(*args), reference(*args)
            assert got.shape == expected.shape and got.dtype == dtype, (name, shape)
            np.testing.assert_allclose(got, expected, rtol=1e-4 if dtype == np.float32 else 1e-10,
                                       atol=1e-4 if dtype == np.float32 else 1e-10, err_msg=f"{name} {shape}")


def test_no_linalg_graph_leaves_the_llvm_backend():
    """Every case's value-and-gradient and jvp graphs lower on the LLVM backend itself (pinv through svd)."""
    from symgrad import backends
    for name in CASES:
        args = _args(CASES[name][1])
        for f in (sg.value_and_grad(_symgrad(name), argnums=tuple(range(len(args)))),
                  lambda *a: sg.jvp(_symgrad(name), tuple(a), tuple(a))):
            graph = backends.for_backend(sg.trace(f, *args), "llvm")
            assert backends.missing_rules(graph, "llvm") == [], name


def _matrices(shape, dtype, rng):
    """A random stack of matrices, and (square ones) its symmetric part."""
    a = rng.normal(size=shape).astype(dtype)
    return a, (a + np.swapaxes(a, -1, -2)).astype(dtype) if shape[-1] == shape[-2] else None


FACTORIZATIONS = {  # name -> (sg function, numpy function, whether it takes the symmetric matrix)
    "slogdet": (sg.linalg.slogdet, np.linalg.slogdet, False),
    "det": (sg.linalg.det, np.linalg.det, False),
    "eigh": (sg.linalg.eigh, np.linalg.eigh, True),
    "eigh_upper": (lambda a: sg.linalg.eigh(a, UPLO="U"), lambda a: np.linalg.eigh(a, UPLO="U"), True),
    "eigvalsh": (sg.linalg.eigvalsh, np.linalg.eigvalsh, True),
    "svd_full": (sg.linalg.svd, np.linalg.svd, False),
    "svd_reduced": (lambda a: sg.linalg.svd(a, full_matrices=False), lambda a: np.linalg.svd(a, full_matrices=False),
                    False),
    "svdvals": (sg.linalg.svdvals, np.linalg.svdvals, False),
    "qr_reduced": (sg.linalg.qr, np.linalg.qr, False),
    "qr_complete": (lambda a: sg.linalg.qr(a, mode="complete"), lambda a: np.linalg.qr(a, mode="complete"), False),
    "qr_r": (lambda a: sg.linalg.qr(a, mode="r"), lambda a: np.linalg.qr(a, mode="r"), False),
    "pinv": (sg.linalg.pinv, np.linalg.pinv, False),
    "pinv_hermitian": (lambda a: sg.linalg.pinv(a, hermitian=True), lambda a: np.linalg.pinv(a, hermitian=True),
                       True),
}
SQUARE_ONLY = {"slogdet", "det", "eigh", "eigh_upper", "eigvalsh", "pinv_hermitian"}


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", sorted(FACTORIZATIONS))
def test_llvm_factorizations_match_numpy_on_stacks_empty_and_one_by_one_matrices(name, dtype):
    """The LLVM backend calls the LAPACK routines numpy.linalg calls, the same way: the same numbers (the
    same signs of singular vectors and eigenvectors), the same shapes, including empty matrices."""
    function, reference, symmetric = FACTORIZATIONS[name]
    compiled = sg.compile(function, backend="llvm")
    rng = np.random.default_rng(18)
    shapes = [(N, N), (2, 3, N, N), (1, 1), (0, 0), (2, 0, 0), (0, 3, 3)]
    if name not in SQUARE_ONLY:
        shapes += [(N, 3), (3, N), (2, 5, 2), (0, 3), (3, 0), (2, 3, 0)]
    tol = 1e-10 if dtype == np.float64 else 1e-4
    for shape in shapes:
        a, s = _matrices(shape, dtype, rng)
        x = s if symmetric else a
        got, expected = compiled(x), reference(x)
        got, expected = (got, expected) if isinstance(expected, tuple) else ((got,), (expected,))
        for g, e in zip(got, expected):
            assert g.shape == e.shape and g.dtype == dtype, (name, shape, g.shape, e.shape)
        if dtype == np.float32:  # float32 LAPACK may pick other signs (or bases) of vectors: compare what is unique
            got, expected = _invariants(name, got), _invariants(name, expected)
        for g, e in zip(got, expected):
            np.testing.assert_allclose(g, e, rtol=tol, atol=tol, err_msg=f"{name} {shape}")


def _invariants(name, parts):
    """What a factorization determines whatever signs (or bases of a complement) its vectors take."""
    swap = lambda x: np.swapaxes(x, -1, -2)  # noqa: E731
    if name.startswith("svd_"):
        u, s, vh = parts
        k = s.shape[-1]
        return s, (u[..., :k] * s[..., None, :]) @ vh[..., :k, :], swap(u) @ u, vh @ swap(vh)
    if name.startswith("eigh"):
        w, v = parts
        return w, (v * w[..., None, :]) @ swap(v), swap(v) @ v
    if name.startswith("qr_") and len(parts) == 2:
        q, r = parts
        return q @ r, swap(q) @ q, np.abs(r)
    if name == "qr_r":
        return (np.abs(parts[0]),)
    return parts


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", ["det", "slogdet", "eigh", "svd_tall", "svd_wide", "qr_tall", "pinv_wide", "lstsq"])
def test_llvm_gradients_of_stacked_factorizations_match_finite_differences(name, dtype):
    """vmap over a stack of 3 (one more leading axis) of a case's gradient, compiled for the LLVM backend:
    central finite differences of NumPy's function per matrix (float64), the float64 gradient (float32)."""
    shapes = CASES[name][1]
    stacks = _args([(3, *shape) for shape in shapes], np.float64, seed=19)
    gradient = sg.compile(sg.vmap(sg.grad(_symgrad(name), argnums=tuple(range(len(shapes))))), backend="llvm")
    grads = gradient(*[s.astype(dtype) for s in stacks])
    grads = grads if isinstance(grads, tuple) else (grads,)
    for k in range(3):
        example = [s[k] for s in stacks]
        for position, g in enumerate(grads):
            assert g.dtype == dtype
            unit = np.zeros_like(example[position])
            expected = np.empty_like(unit)
            for index in np.ndindex(unit.shape):
                unit[index] = 1.0
                tangents = [unit if i == position else np.zeros_like(e) for i, e in enumerate(example)]
                expected[index] = numerical_jvp(_numpy(name), example, tangents, 1e-6)
                unit[index] = 0.0
            tol = 1e-6 if dtype == np.float64 else 5e-3
            np.testing.assert_allclose(g[k], expected, rtol=tol, atol=tol, err_msg=f"{name} {k}")


def test_llvm_lapack_failures_raise_numpy_s_errors():
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    for f in (sg.linalg.inv, lambda a: sg.linalg.solve(a, np.ones(2)), sg.linalg.cholesky,
              lambda a: sg.linalg.solve_triangular(a - np.diag([1.0, 4.0]), np.ones(2)),
              lambda a: sg.linalg.solve_triangular(a - np.diag([1.0, 0.0]), np.ones(2), lower=True, trans=1)):
        compiled = sg.compile(f, backend="llvm")
        with pytest.raises(np.linalg.LinAlgError):
            compiled(singular if f is not sg.linalg.cholesky else -singular)
        with pytest.raises(np.linalg.LinAlgError):
            compiled(singular if f is not sg.linalg.cholesky else -singular)  # the kernel still runs after a failure
    with pytest.raises(np.linalg.LinAlgError, match="not positive definite"):
        sg.compile(lambda a: sg.scipy.stats.multivariate_normal.logpdf(np.zeros(2), np.zeros(2), a),
                   backend="llvm")(singular)
    sign, logabsdet = sg.compile(sg.linalg.slogdet, backend="llvm")(singular)
    assert sign == 0 and logabsdet == -np.inf
    with pytest.raises(np.linalg.LinAlgError, match="SVD did not converge"):
        sg.compile(sg.linalg.svd, backend="llvm")(np.array([[np.nan, 1.0], [1.0, 1.0]]))
    nan = np.array([[2.0, np.nan], [1.0, 3.0]])
    for f, reference in ((sg.linalg.slogdet, np.linalg.slogdet), (sg.linalg.eigh, np.linalg.eigh),
                         (sg.linalg.qr, np.linalg.qr)):
        with np.errstate(all="ignore"):
            for got, expected in zip(sg.compile(f, backend="llvm")(nan), reference(nan)):
                np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
    for f, reference in ((sg.linalg.inv, np.linalg.inv), (lambda a: sg.linalg.solve(a, np.ones(2)),
                                                         lambda a: np.linalg.solve(a, np.ones(2)))):
        with np.errstate(all="ignore"):
            np.testing.assert_array_equal(np.isnan(sg.compile(f, backend="llvm")(nan)), np.isnan(reference(nan)))


# ----------------------------------------------------------------------------- ahead of time

def _gaussian_loss(a, b):
    """Every LAPACK primitive, differentiated: what an AOT artifact of sg.linalg must call."""
    spd = sg.matmul(a, sg.swapaxes(a, -1, -2)) + N * np.eye(N)
    u, s, vh = sg.linalg.svd(a[:, :3], full_matrices=False)
    q, r = sg.linalg.qr(a[:, :3])
    return (sg.sum(sg.linalg.solve(a + N * np.eye(N), b)) + sg.linalg.slogdet(a + N * np.eye(N))[1]
            + sg.sum(sg.linalg.eigh(spd)[0] * W4) + sg.sum(sg.linalg.cholesky(spd) * C4) + sg.sum(s * s)
            + sg.sum(r * C43[:3]) + sg.sum(sg.linalg.pinv(a) * C4)
            + sg.sum(sg.linalg.solve_triangular(spd, b, lower=True)) + sg.linalg.det(a))


@pytest.mark.parametrize("backend", ["llvm", "numpy"])
def test_aot_artifacts_call_lapack(tmp_path, backend):
    """Both kinds of artifact run sg.linalg: the shared library through LAPACK pointers its loader sets to
    NumPy's LAPACK, in a process without sympy or llvmlite; the same values and gradients as the JIT."""
    import shutil
    import subprocess
    import sys
    from symgrad import aot
    if backend == "llvm" and shutil.which("cc") is None:
        pytest.skip("linking a shared library needs a C compiler")
    a, b = _args([(N, N), (N,)], seed=12)
    out = str(tmp_path / "loss")
    artifact = aot.compile(_gaussian_loss, (a, b), grad="a", out=out, backend=backend)
    if backend == "llvm":
        assert set(artifact.metadata["lapack_slots"]) >= {"dgetrf", "dpotrf", "dsyevd", "dgesdd", "dgeqrf", "dorgqr"}
    code = ("import sys\nsys.modules['sympy'] = sys.modules['llvmlite'] = None\nimport numpy as np, symgrad as sg\n"
            f"f = sg.load({out!r})\na, b = np.load(sys.argv[1]), np.load(sys.argv[2])\n"
            "np.save(sys.argv[3], f(a, b)); np.save(sys.argv[4], f.grad(a, b))\n")
    paths = [str(tmp_path / name) for name in ("a.npy", "b.npy", "value.npy", "grad.npy")]
    np.save(paths[0], a)
    np.save(paths[1], b)
    subprocess.run([sys.executable, "-c", code, *paths], check=True, timeout=120)
    np.testing.assert_allclose(np.load(paths[2]), _gaussian_loss(a, b), rtol=1e-12)
    np.testing.assert_allclose(np.load(paths[3]), sg.grad(_gaussian_loss)(a, b), rtol=1e-10, atol=1e-12)


def test_an_artifact_whose_lapack_pointers_are_unset_raises_a_clear_error(tmp_path, monkeypatch):
    import shutil
    from symgrad import aot, loader
    if shutil.which("cc") is None:
        pytest.skip("linking a shared library needs a C compiler")
    a = _args([(N, N)], seed=13)[0]
    aot.compile(lambda a: sg.linalg.slogdet(a)[1], (a,), out=str(tmp_path / "f"))
    # as in a process whose NumPy ships no LAPACK
    monkeypatch.setattr(loader._NativeLibrary, "_connect_lapack", lambda self, slots: None)
    f = sg.load(str(tmp_path / "f"))
    for _ in range(2):
        with pytest.raises(RuntimeError, match="no LAPACK to call"):
            f(a)


# ----------------------------------------------------------------------------- higher order

def test_hessian_of_a_gaussian_process_likelihood_matches_finite_differences_of_its_gradient():
    """Forward over reverse through cholesky and the triangular solves (the rules differentiate again)."""
    points, y = np.linspace(0.0, 1.0, 5), np.sin(np.arange(5.0))

    def nll(params):
        scale, noise = sg.exp(params[0]), sg.exp(params[1])
        kernel = sg.exp(-(points[:, None] - points[None, :]) ** 2 / scale) + noise * np.eye(5)
        factor = sg.linalg.cholesky(kernel)
        alpha = sg.scipy.linalg.cho_solve((factor, True), y)
        return 0.5 * sg.sum(y * alpha) + sg.sum(sg.log(sg.diagonal(factor)))

    params = np.array([-0.5, -1.0])
    gradient = sg.grad(nll)
    expected = np.stack([numerical_jvp(gradient, [params], [np.eye(2)[i]], 1e-5) for i in range(2)], axis=-1)
    np.testing.assert_allclose(sg.hessian(nll)(params), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(sg.compile(sg.hessian(nll))(params), expected, rtol=1e-6, atol=1e-8)


def test_second_derivatives_of_the_factorizations():
    for name in ("eigh", "svd_square", "qr_square", "slogdet", "pinv_tall"):
        f, shapes = CASES[name]
        x, direction = _args(shapes, seed=14)[0], _args(shapes, seed=15)[0]
        gradient = sg.grad(lambda m: f(m, _SG))
        expected = numerical_jvp(gradient, [x], [direction], 1e-5)
        _, tangent = sg.jvp(gradient, (x,), (direction,))
        np.testing.assert_allclose(tangent, expected, rtol=1e-5, atol=1e-7, err_msg=name)


def test_matrix_rank_and_cond_of_empty_matrices_are_numpys():
    """matrix_rank of a 0x0 matrix is 0 (a ShapeError before); cond of one is NumPy's LinAlgError (an IndexError)."""
    for path in (lambda f: f, lambda f: sg.compile(f, backend="numpy"), sg.compile):
        rank = path(lambda a: sg.linalg.matrix_rank(a))
        np.testing.assert_array_equal(rank(np.zeros((2, 0, 3))), np.linalg.matrix_rank(np.zeros((2, 0, 3))))
    with pytest.raises(np.linalg.LinAlgError, match="empty"):
        sg.linalg.cond(np.zeros((0, 0)))


def _torch_named_linear_algebra(lib):
    """PyTorch's old linear-algebra names, as functions and as methods, and the gradient of their weighted sum."""
    a = lib.tensor([[2.0, 1.0], [3.0, -4.0]], dtype=lib.float64, requires_grad=True)  # det < 0: logdet is NaN
    b = lib.tensor([[2.0, 1.0], [1.0, 4.0]], dtype=lib.float64, requires_grad=True)
    s = lib.slogdet(a)
    outs = [lib.inverse(a), a.inverse(), lib.det(a), a.det(), lib.logdet(b), a.logdet(), s.sign, s.logabsdet,
            a.slogdet()[1], a.pinverse(), lib.pinverse(a), a.matrix_power(3), lib.matrix_power(a, -2), b.cholesky(),
            b.cholesky(upper=True)]
    total = sum((o * (i + 1)).sum() for i, o in enumerate(outs) if o.requires_grad and not o.isnan().any())
    return [o.detach().numpy() for o in outs] + [g.numpy() for g in lib.autograd.grad(total, [a, b])]


def test_torch_linear_algebra_names_on_tensors():
    """torch.inverse/det/logdet/slogdet/pinverse/matrix_power and Tensor.cholesky (tonyduan/normalizing-flows'
    Invertible 1x1 convolution calls torch.inverse): sg.linalg's values and gradients, PyTorch's when installed."""
    ours = _torch_named_linear_algebra(sg)
    np.testing.assert_allclose(ours[0] @ np.array([[2.0, 1.0], [3.0, -4.0]]), np.eye(2), atol=1e-15)
    assert ours[2] == pytest.approx(-11.0) and np.isnan(ours[5]) and ours[6] == -1.0
    torch = pytest.importorskip("torch")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.cholesky's deprecation
        theirs = _torch_named_linear_algebra(torch)
    for mine, other in zip(ours, theirs):
        np.testing.assert_allclose(mine, other, rtol=1e-12, atol=1e-12)
