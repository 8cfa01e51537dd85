"""NumPy's names added in issue 13 item 4 (continued): elementwise ops' special cases (their edge points on
every path are test_numpy_names.py's), and array functions' values against NumPy (eager arrays, both
backends, eager tensors) with gradients checked by central finite differences and by PyTorch where it has
the function.

The elementwise ops are registered ops, so tests/test_ops.py generates their value and gradient tests too.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import symgrad as sg

from gradcheck import assert_grads_match_finite_differences, value_and_grad_everywhere, values_everywhere

EDGES = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 0.5, -0.5, 1.5, 2.5, -2.5, 1.0, -7.3, 0.9999, 1e-300, 3e38,
                  27.0, -8.0])


def _assert_same(got, expected, path, rtol=None):
    """Same shape, dtype and values: NaN where NaN, the sign of zeros too; float32 to a few ulp."""
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.shape == expected.shape and got.dtype == expected.dtype, (path, got.shape, expected.shape, got.dtype,
                                                                         expected.dtype)
    if got.dtype.kind != "f":
        np.testing.assert_array_equal(got, expected, err_msg=path)
        return
    if rtol is None:
        rtol = 2e-6 if got.dtype == np.float32 else 1e-15
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=0, err_msg=path)
    numbers = ~np.isnan(expected)
    np.testing.assert_array_equal(np.signbit(got[numbers]), np.signbit(expected[numbers]), err_msg=f"sign, {path}")


@pytest.mark.parametrize("dtype", [np.int64, np.int32])
def test_integer_fmod_fmax_fmin_follow_numpy(dtype):
    a = np.array([7, -7, 7, -7, 0, 5, 3], dtype)
    b = np.array([2, 2, -2, -2, 3, 0, 3], dtype)
    with np.errstate(all="ignore"):
        for name in ("fmod", "fmax", "fmin", "copysign", "positive", "signbit", "isposinf"):
            fn = getattr(sg, name)
            args = (a, b) if name in ("fmod", "fmax", "fmin", "copysign") else (a,)
            expected = getattr(np, name)(*args)
            for path, got in values_everywhere(fn, *args, tensors=name != "fmod").items():
                _assert_same(got, expected, path)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):  # (tensors: PyTorch's error, b has a 0)
        sg.fmod(sg.tensor(a), sg.tensor(b))
    _assert_same(sg.fmod(sg.tensor(a), sg.tensor(b + (b == 0))).numpy(), np.fmod(a, b + (b == 0)), "tensor")


def test_signbit_of_booleans_is_false():
    x = np.array([True, False])
    for path, got in values_everywhere(sg.signbit, x).items():
        _assert_same(got, np.signbit(x), path)


def test_fmax_and_fmin_ignore_nan_and_give_ties_to_the_first_operand():
    """A tie's gradient (and where both are NaN) goes to the first operand, as torch.fmax/fmin's (it was split
    evenly, as torch.maximum's); the value is NumPy's."""
    a = np.array([np.nan, 1.0, 2.0, 3.0, np.nan, np.inf, -np.inf])
    b = np.array([4.0, np.nan, 2.0, 1.0, np.nan, np.inf, -np.inf])
    torch = pytest.importorskip("torch")
    for name in ("fmax", "fmin"):
        ta, tb = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
        getattr(torch, name)(ta, tb).sum().backward()
        for path, (value, (ga, gb)) in value_and_grad_everywhere(lambda x, y: sg.sum(getattr(sg, name)(x, y)),
                                                                 (a, b), (0, 1)).items():
            np.testing.assert_array_equal(ga, ta.grad.numpy(), err_msg=f"{name} {path}")
            np.testing.assert_array_equal(gb, tb.grad.numpy(), err_msg=f"{name} {path}")
        for path, got in values_everywhere(getattr(sg, name), a, b).items():
            _assert_same(got, getattr(np, name)(a, b), f"{name} {path}")


def test_fmod_is_exact_and_takes_the_dividends_sign():
    a = np.array([1e-20 - 1.0, -5.5, 5.5, 1e300, -0.0, 7.0])
    b = np.array([1.0, 2.0, -2.0, 3.0, 2.0, 0.0])
    with np.errstate(all="ignore"):
        for path, got in values_everywhere(sg.fmod, a, b).items():
            _assert_same(got, np.fmod(a, b), path)


def test_fmod_gradient_in_the_divisor_at_an_infinite_dividend_is_torchs():
    """d fmod(a, b) / d b is -trunc(a / b): -inf at (inf, 2), inf at (-inf, 2) (NumPy's inf // 2 gave NaN); NaN at
    (inf, inf), -0 at (1, inf), finite ones exact."""
    a = np.array([np.inf, -np.inf, np.inf, 1.0, 7.0, -7.5])
    b = np.array([2.0, 2.0, np.inf, np.inf, 2.0, 2.0])
    expected = np.array([-np.inf, np.inf, np.nan, -0.0, -3.0, 3.0])
    with np.errstate(all="ignore"):
        for path, (_, (grad,)) in value_and_grad_everywhere(lambda x, y: sg.sum(sg.fmod(x, y)), (a, b), 1).items():
            np.testing.assert_array_equal(grad, expected, err_msg=path)
            assert np.signbit(grad[3]), path
    torch = pytest.importorskip("torch")
    ta, tb = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    torch.fmod(ta, tb).sum().backward()
    np.testing.assert_array_equal(tb.grad.numpy(), expected)

def test_float_power_computes_in_float64():
    x = np.array([1.5, 2.0, 0.5], np.float32)
    for path, got in values_everywhere(lambda a: sg.float_power(a, 3), x).items():
        _assert_same(got, np.float_power(x, 3), path)
    with np.errstate(all="ignore"):
        for dtype in (np.float32, np.float64):
            a, b = EDGES.astype(dtype), EDGES[::-1].astype(dtype)
            for path, got in values_everywhere(sg.float_power, a, b).items():
                _assert_same(got, np.float_power(a, b), path)
    assert sg.float_power(2, 3) == 8.0 and np.asarray(sg.float_power(2, 3)).dtype == np.float64


TORCH_BINARY = {"copysign": "copysign", "fmax": "fmax", "fmin": "fmin", "fmod": "fmod", "logaddexp2": "logaddexp2",
                "float_power": "float_power"}


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", sorted(TORCH_BINARY))
def test_binary_values_and_gradients_match_torch(name, dtype):
    torch = pytest.importorskip("torch")
    a = np.array([5.3, -2.2, 7.1, 0.5, -4.4, 1.25], dtype)
    b = np.array([2.0, 1.5, -3.0, 0.3, -0.7, -1.0], dtype)
    if name == "float_power":
        a = np.abs(a)
    ta, tb = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    out = getattr(torch, TORCH_BINARY[name])(ta, tb)
    fn = getattr(sg, name)
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    for path, got in values_everywhere(fn, a, b).items():
        np.testing.assert_allclose(got, out.detach().numpy(), rtol=rtol, err_msg=path)
    out.sum().backward()
    for path, (_, (ga, gb)) in value_and_grad_everywhere(lambda x, y: sg.sum(fn(x, y)), (a, b), (0, 1)).items():
        np.testing.assert_allclose(ga, ta.grad.numpy(), rtol=rtol, atol=1e-6, err_msg=path)
        np.testing.assert_allclose(gb, tb.grad.numpy(), rtol=rtol, atol=1e-6, err_msg=path)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_cbrt_and_heaviside_match_torch(dtype):
    torch = pytest.importorskip("torch")
    x = np.array([-8.0, -0.3, 0.7, 27.0, 2.5], dtype)
    t = torch.tensor(x, requires_grad=True)
    out = torch.sign(t) * torch.abs(t) ** (1 / 3)
    out.sum().backward()
    for path, (value, (g,)) in value_and_grad_everywhere(lambda a: sg.sum(sg.cbrt(a)), (x,)).items():
        np.testing.assert_allclose(value, out.sum().item(), rtol=1e-5, err_msg=path)
        np.testing.assert_allclose(g, t.grad.numpy(), rtol=1e-5, err_msg=path)
    h = np.array([-1.0, 0.0, 2.0], dtype)  # NaN: NumPy's and sg's NaN, torch's 0
    expected = torch.heaviside(torch.tensor(h), torch.tensor(np.array(0.25, dtype))).numpy()
    for path, got in values_everywhere(lambda a: sg.heaviside(a, 0.25), h).items():
        _assert_same(got, expected, path)


# ----------------------------------------------------------------------------- array functions

RNG = np.random.default_rng(13)
M = RNG.normal(size=(3, 4))
V3, W3 = RNG.normal(size=(5, 3)), RNG.normal(size=(5, 3))
WITH_NAN = np.array([[1.5, np.nan, -2.0, 0.5], [np.nan, np.nan, np.nan, np.nan], [3.0, -1.0, np.inf, 2.0]])
STAT = np.array([[0.3, -1.2, 2.0, 0.7, 5.0], [1.0, 1.1, -3.0, 4.0, 4.5]])

# (id, program taking a namespace (np or sg) and arrays, the arrays). One text runs on NumPy and on symgrad.
ARRAY_CASES = [
    ("nan_to_num", lambda m, x: m.nan_to_num(x), (WITH_NAN,)),
    ("nan_to_num_values", lambda m, x: m.nan_to_num(x, nan=-1.0, posinf=9.0, neginf=-9.0), (EDGES,)),
    ("diff", lambda m, x: m.diff(x), (M,)),
    ("diff_n2_axis0", lambda m, x: m.diff(x, 2, axis=0), (M,)),
    ("diff_prepend_append", lambda m, x: m.diff(x, axis=1, prepend=0.5, append=x[:, :2]), (M,)),
    ("diff_bool", lambda m, x: m.diff(x > 0), (M,)),
    ("ediff1d", lambda m, x: m.ediff1d(x, to_end=[7.0, 8.0], to_begin=-1.0), (M,)),
    ("cross3", lambda m, a, b: m.cross(a, b), (V3, W3)),
    ("cross_axes", lambda m, a, b: m.cross(a.T, b, axisa=0), (V3, W3)),
    ("cross_axisc", lambda m, a, b: m.cross(a, b, axisc=0), (V3, W3)),
    ("cross_3x2", lambda m, a, b: m.cross(a, b[:, :2]), (V3, W3)),
    ("cross_2x3", lambda m, a, b: m.cross(a[:, :2], b), (V3, W3)),
    ("kron", lambda m, a, b: m.kron(a, b), (M[:2, :3], V3[:2])),
    ("kron_1d_2d", lambda m, a, b: m.kron(a[0], b), (M, V3[:2])),
    ("rot90", lambda m, x: m.rot90(x), (M,)),
    ("rot90_k3_axes", lambda m, x: m.rot90(x.reshape(3, 2, 2), 3, axes=(2, 0)), (M,)),
    ("rot90_k2", lambda m, x: m.rot90(x, -2), (M,)),
    ("rollaxis", lambda m, x: m.rollaxis(x.reshape(3, 2, 2), 2), (M,)),
    ("rollaxis_start", lambda m, x: m.rollaxis(x.reshape(3, 2, 2), 0, 3), (M,)),
    ("hsplit", lambda m, x: m.hsplit(x, 2), (M,)),
    ("vsplit", lambda m, x: m.vsplit(x, [1]), (M,)),
    ("dsplit", lambda m, x: m.dsplit(x.reshape(3, 1, 4), [1, 3]), (M,)),
    ("hsplit_1d", lambda m, x: m.hsplit(x[0], 2), (M,)),
    ("average", lambda m, x: m.average(x), (M,)),
    ("average_weights", lambda m, x, w: m.average(x, axis=1, weights=w[0, :4]), (M, np.abs(V3.T) + 0.1)),
    ("average_returned", lambda m, x, w: m.average(x, 0, weights=np.abs(w[:, :4]), returned=True, keepdims=True),
     (M, M[::-1])),
    ("ptp", lambda m, x: m.ptp(x, axis=1), (M,)),
    ("median", lambda m, x: m.median(x), (STAT,)),
    ("median_axis", lambda m, x: m.median(x, axis=1, keepdims=True), (STAT,)),
    ("median_even", lambda m, x: m.median(x, axis=0), (STAT,)),
    ("median_nan", lambda m, x: m.median(x, axis=1), (WITH_NAN,)),
    ("quantile", lambda m, x: m.quantile(x, 0.3), (STAT,)),
    ("quantile_axis", lambda m, x: m.quantile(x, [0.0, 0.25, 0.5, 0.9, 1.0], axis=1), (STAT,)),
    ("quantile_keepdims", lambda m, x: m.quantile(x, np.array([[0.1], [0.7]]), axis=0, keepdims=True), (STAT,)),
    ("quantile_nan", lambda m, x: m.quantile(x, 0.5, axis=1), (WITH_NAN,)),
    ("percentile", lambda m, x: m.percentile(x, [10, 50, 95], axis=(0, 1)), (STAT,)),
    ("percentile_scalar", lambda m, x: m.percentile(x, 37.5, axis=1), (STAT,)),
    ("nansum", lambda m, x: m.nansum(x, axis=1), (WITH_NAN,)),
    ("nanmean", lambda m, x: m.nanmean(x, axis=1), (WITH_NAN,)),
    ("nanmax", lambda m, x: m.nanmax(x, axis=1), (WITH_NAN,)),
    ("nanmin", lambda m, x: m.nanmin(x, axis=0), (WITH_NAN,)),
    ("nanprod", lambda m, x: m.nanprod(x, axis=1, keepdims=True), (WITH_NAN,)),
    ("nanvar", lambda m, x: m.nanvar(x, axis=1), (WITH_NAN,)),
    ("nanstd", lambda m, x: m.nanstd(x, axis=0, ddof=1), (WITH_NAN,)),
    ("nanstd_rows", lambda m, x: m.nanstd(x, axis=1, ddof=1), (WITH_NAN,)),
    ("nancumsum", lambda m, x: m.nancumsum(x, axis=1), (WITH_NAN,)),
    ("nancumprod", lambda m, x: m.nancumprod(x), (WITH_NAN,)),
    ("nanargmax", lambda m, x: m.nanargmax(x[[0, 2]], axis=1), (WITH_NAN,)),
    ("nanargmin", lambda m, x: m.nanargmin(x), (WITH_NAN,)),
    ("nan_reductions_plain", lambda m, x: m.nanmean(x) + m.nanstd(x) + m.nanmax(x) + m.nansum(x), (M,)),
    ("cov", lambda m, x: m.cov(x), (M,)),
    ("cov_rowvar_bias", lambda m, x, y: m.cov(x, y, rowvar=False, bias=True), (M, M[::-1] * 2)),
    ("cov_ddof_1d", lambda m, x: m.cov(x[0], ddof=0), (M,)),
    ("corrcoef", lambda m, x: m.corrcoef(x), (M,)),
    ("corrcoef_xy", lambda m, x, y: m.corrcoef(x[0], y[1]), (M, M * M)),
    ("meshgrid_xy", lambda m, a, b: m.meshgrid(a[0], b[:, 0]), (M, V3)),
    ("meshgrid_ij", lambda m, a, b: m.meshgrid(a[0], b[:, 0], a[1, :2], indexing="ij"), (M, V3)),
    ("meshgrid_sparse", lambda m, a, b: m.meshgrid(a[0], b[:, 0], sparse=True), (M, V3)),
    ("broadcast_arrays", lambda m, a, b: m.broadcast_arrays(a[:, :1], b[0, :]), (M, M)),
    ("trapezoid", lambda m, y: m.trapezoid(y), (M,)),
    ("trapezoid_x", lambda m, y, x: m.trapezoid(y, np.cumsum(np.abs(x[0])), axis=1), (M, M)),
    ("trapezoid_dx_axis", lambda m, y: m.trapezoid(y, dx=0.5, axis=0), (M,)),
    ("polyval", lambda m, p, x: m.polyval(p[0], x), (M, V3)),
    ("vander", lambda m, x: m.vander(x[0]), (M,)),
    ("vander_n_increasing", lambda m, x: m.vander(x[0], 6, increasing=True), (M,)),
    ("count_nonzero", lambda m, x: m.count_nonzero(x, axis=0), (np.array([[0.0, 1.0, np.nan], [-0.0, 0.0, 2.0]]),)),
    ("select", lambda m, x: m.select([x < -0.5, x > 0.5], [x * 2, x - 1], default=0.25), (M,)),
    ("unstack", lambda m, x: m.unstack(x, axis=1), (M,)),
    ("matrix_transpose", lambda m, x: m.matrix_transpose(x.reshape(2, 3, 2)), (M,)),
    ("permute_dims", lambda m, x: m.permute_dims(x.reshape(2, 3, 2), (2, 0, 1)), (M,)),
    ("concat", lambda m, x: m.concat([x, x[:1]]), (M,)),
    ("amax_amin", lambda m, x: m.amax(x) - m.amin(x), (M,)),  # with an axis, eager tensors answer as torch.max
    ("vecdot", lambda m, a, b: m.vecdot(a, b), (V3, W3)),
    ("matvec", lambda m, a, b: m.matvec(a, b), (M[:, :3], V3)),
    ("vecmat", lambda m, a, b: m.vecmat(a[:, None, :], b.T[None]), (V3, M[:, :3].T @ M[:, :3])),
    ("cumulative_sum", lambda m, x: m.cumulative_sum(x, axis=1, include_initial=True), (M,)),
    ("cumulative_prod", lambda m, x: m.cumulative_prod(x[0]), (M,)),
    ("cumulative_prod_initial", lambda m, x: m.cumulative_prod(x, axis=0, include_initial=True), (M,)),
    ("real_imag_conj", lambda m, x: (m.real(x), m.imag(x), m.conj(x), m.conjugate(x)), (M,)),
    ("shape_size_ndim", lambda m, x: x * (m.ndim(x) + m.size(x) + m.size(x, 1) + sum(m.shape(x))), (M,)),
    ("index_helpers", lambda m, x: (x[m.tril_indices(3, 1, 4)], x[m.triu_indices(3)], x[m.diag_indices(3)],
                                    m.tri(3, 4, -1) * x, m.indices((3, 4))[1] * x), (M,)),
    ("logspace_geomspace", lambda m, x: (m.logspace(0.0, 2.0, 5) * x[0, 0], m.geomspace(1.0, 1000.0, 4) * x[0, 0]),
     (M,)),
]

EMPTY_AND_0D = [
    ("diff_empty", lambda m, x: m.diff(x), (np.zeros((2, 0)),)),
    ("nansum_empty", lambda m, x: m.nansum(x, axis=0), (np.zeros((0, 3)),)),
    ("median_0d", lambda m, x: m.median(x), (np.float64(2.5),)),
    ("quantile_0d", lambda m, x: m.quantile(x, [0.2, 0.8]), (np.float64(2.5),)),
    ("nanmax_0d", lambda m, x: m.nanmax(x), (np.float64(-1.5),)),
    ("kron_0d", lambda m, a, b: m.kron(a, b), (np.float64(2.0), M)),
    ("count_nonzero_empty", lambda m, x: m.count_nonzero(x), (np.zeros((0,)),)),
    ("average_0d", lambda m, x: m.average(x), (np.float64(3.5),)),
    ("cumulative_sum_empty", lambda m, x: m.cumulative_sum(x, include_initial=True), (np.zeros((0,)),)),
]


def _flat(result) -> list:
    return [np.asarray(r) for r in result] if isinstance(result, (tuple, list)) else [np.asarray(result)]


def _all_paths(program, args) -> dict:
    """{path: list of output arrays} of program on eager arrays, both backends and eager tensors."""
    fn = lambda *a: program(sg, *a)  # noqa: E731
    tensors = program(sg, *map(sg.tensor, args))
    return {"eager": _flat(fn(*args)), "numpy": _flat(sg.compile(fn, backend="numpy")(*args)),
            "llvm": _flat(sg.compile(fn)(*args)),
            "tensor": [t.numpy() for t in (tensors if isinstance(tensors, (tuple, list)) else [tensors])]}


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name,program,args", ARRAY_CASES + EMPTY_AND_0D, ids=[c[0] for c in ARRAY_CASES + EMPTY_AND_0D])
def test_array_function_values_match_numpy(name, program, args, dtype):
    args = tuple(np.asarray(a, dtype) for a in args)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NumPy's all-NaN and empty-slice warnings
        expected = _flat(program(np, *args))
        for path, got in _all_paths(program, args).items():
            assert len(got) == len(expected), path
            for g, e in zip(got, expected):
                _assert_same(g, e, f"{name} {path}", rtol=1e-5 if dtype == np.float32 else 1e-12)


NAN_FREE = {id(WITH_NAN): np.array([[1.5, np.nan, -2.0, 0.5], [0.3, np.nan, 1.2, -0.7], [3.0, -1.0, 0.25, 2.0]]),
            id(EDGES): np.linspace(-3.0, 3.0, 17)}
# no gradient, or a NaN value (a slice holding NaN, an all-NaN column): the weighted sum is NaN
NO_GRADIENT = {"diff_bool", "count_nonzero", "nanargmax", "nanargmin", "index_helpers", "logspace_geomspace",
               "median_nan", "quantile_nan", "nanstd"}
GRAD_CASES = [case for case in ARRAY_CASES if case[0] not in NO_GRADIENT]


@pytest.mark.parametrize("name,program,args", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_array_function_gradients_match_finite_differences(name, program, args):
    """Gradients (of a weighted sum of the float outputs) against central differences, and every path
    (the transform, both backends, eager tensors' backward) agreeing."""
    args = tuple(NAN_FREE.get(id(a), a) for a in args)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        outputs = _flat(program(np, *args))
    weights = [np.random.default_rng(len(name)).normal(size=o.shape) if o.dtype.kind == "f" else None
               for o in outputs]

    def weighted(*a):
        result = program(sg, *a)
        result = result if isinstance(result, (tuple, list)) else [result]
        return sum(sg.sum(o * w) for o, w in zip(result, weights) if w is not None)

    grads = assert_grads_match_finite_differences(weighted, args, 0, rtol=1e-6, atol=1e-8)
    for path, (_, (g,)) in value_and_grad_everywhere(weighted, args, 0).items():
        np.testing.assert_allclose(g, grads, rtol=1e-10, atol=1e-12, err_msg=f"{name} {path}")


def test_numpy_ufuncs_on_traced_values_route_to_the_new_ops():
    x, y = np.array([-8.0, 0.5, 3.0]), np.array([2.0, -0.0, np.nan])
    program = lambda a, b: (np.cbrt(a), np.fmod(a, b), np.fmax(a, b), np.copysign(a, b), np.heaviside(a, 0.5),  # noqa
                            np.signbit(b), np.logaddexp2(a, b), np.fabs(a), np.positive(a), np.float_power(a, 2))
    with np.errstate(all="ignore"):
        for backend in ("numpy", "llvm"):
            for got, want in zip(sg.compile(program, backend=backend)(x, y), program(x, y)):
                _assert_same(got, want, backend)


ERRORS = [
    (lambda a: sg.quantile(a, sg.sum(a) * 0 + 0.5), TypeError, "q must be known when tracing"),
    (lambda a: sg.quantile(a, 1.5), ValueError, r"range \[0, 1\]"),
    (lambda a: sg.quantile(a, 0.5, method="nearest"), sg.UnsupportedOpError, "method='linear'"),
    (lambda a: sg.quantile(a, 0.5, weights=a), sg.UnsupportedOpError, "method='linear' without weights"),
    (lambda a: sg.cross(a, a[:, :1]), ValueError, "dimension must be 2 or 3"),
    (lambda a: sg.diff(a, -1), ValueError, "order must be non-negative"),
    (lambda a: sg.diff(a[0, 0]), ValueError, "at least one dimensional"),
    (lambda a: sg.cumulative_sum(a), ValueError, "axis must be specified"),
    (lambda a: sg.cov(a, fweights=[1, 2, 3, 4]), sg.UnsupportedOpError, "fweights and aweights"),
    (lambda a: sg.select([a], [a]), TypeError, "should be boolean"),
    (lambda a: sg.vsplit(a[0], 2), ValueError, "vsplit only works on arrays of 2 or more dimensions"),
    (lambda a: sg.hsplit(a, 3), ValueError, "equal division"),
    (lambda a: sg.rot90(a, axes=(1, 1)), ValueError, "Axes must be different"),
    (lambda a: sg.meshgrid(a[0], indexing="xx"), ValueError, "indexing"),
    (lambda a: sg.tril_indices(sg.sum(a)), TypeError, "tril_indices: the length of its result"),
]


TRACED_ONLY = ("q must be known", "tril_indices: the length")  # errors about traced arguments


@pytest.mark.parametrize("program,error,message", ERRORS)
def test_unsupported_uses_raise_clear_errors(program, error, message):
    for run in (sg.compile(program),) + (() if message.startswith(TRACED_ONLY) else (program,)):
        with pytest.raises(error, match=message):
            run(M)


def test_nanargmax_of_an_all_nan_slice():
    """NumPy raises for an all-NaN slice; on concrete arrays so does sg, traced values give -1 there."""
    with pytest.raises(ValueError, match="All-NaN slice"):
        sg.nanargmax(WITH_NAN, axis=1)
    np.testing.assert_array_equal(sg.compile(lambda a: sg.nanargmax(a, axis=1))(WITH_NAN), [0, -1, 2])


def test_complex_values_are_refused():
    with pytest.raises(TypeError, match="complex values are not supported"):
        sg.real(np.array([1 + 2j]))


def test_traced_end_points_of_logspace_and_geomspace_are_differentiable():
    for name in ("logspace", "geomspace"):
        program = lambda a, b: sg.sum(getattr(sg, name)(a, b, 6) * np.arange(1.0, 7.0))  # noqa: E731
        a, b = (np.float64(0.5), np.float64(1.5)) if name == "logspace" else (np.float64(2.0), np.float64(50.0))
        expected = getattr(np, name)(a, b, 6)
        for path, got in values_everywhere(lambda x, y: getattr(sg, name)(x, y, 6), a, b).items():
            np.testing.assert_allclose(got, expected, rtol=1e-13, err_msg=f"{name} {path}")
        assert_grads_match_finite_differences(program, (a, b), (0, 1), rtol=1e-6)


TORCH_PROGRAMS = [
    ("cross", lambda a: sg.cross(a[:, :3], a[:, 3:6]), lambda t: torch_module().linalg.cross(t[:, :3], t[:, 3:6])),
    ("kron", lambda a: sg.kron(a[:2, :2], a[2:, 3:]), lambda t: torch_module().kron(t[:2, :2], t[2:, 3:])),
    ("diff", lambda a: sg.diff(a, 2, axis=0), lambda t: torch_module().diff(t, 2, dim=0)),
    ("rot90", lambda a: sg.rot90(a, 3), lambda t: torch_module().rot90(t, 3)),
    ("quantile", lambda a: sg.quantile(a, np.array([0.1, 0.5, 0.8]), axis=1),
     lambda t: torch_module().quantile(t, torch_module().tensor([0.1, 0.5, 0.8], dtype=t.dtype), dim=1)),
    ("nanmean", lambda a: sg.nanmean(sg.where(a > 1, np.nan, a), axis=0),
     lambda t: torch_module().nanmean(torch_module().where(t > 1, float("nan"), t), dim=0)),
    ("nansum", lambda a: sg.nansum(sg.where(a > 1, np.nan, a), axis=1),
     lambda t: torch_module().nansum(torch_module().where(t > 1, float("nan"), t), dim=1)),
    ("cov", lambda a: sg.cov(a), lambda t: torch_module().cov(t)),
    ("corrcoef", lambda a: sg.corrcoef(a), lambda t: torch_module().corrcoef(t)),
    ("trapezoid", lambda a: sg.trapezoid(a, dx=0.5), lambda t: torch_module().trapezoid(t, dx=0.5)),
    ("vander", lambda a: sg.vander(a[0], 4, increasing=True), lambda t: torch_module().linalg.vander(t[0], N=4)),
    ("nan_to_num", lambda a: sg.nan_to_num(sg.log(a)), lambda t: torch_module().nan_to_num(torch_module().log(t))),
    ("cumulative_sum", lambda a: sg.cumulative_sum(a, axis=1), lambda t: torch_module().cumsum(t, 1)),
]


def torch_module():
    return pytest.importorskip("torch")


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name,ours,theirs", TORCH_PROGRAMS, ids=[p[0] for p in TORCH_PROGRAMS])
def test_array_functions_match_torch(name, ours, theirs, dtype):
    torch = torch_module()
    x = np.random.default_rng(3).normal(size=(4, 6)).astype(dtype) + 0.5
    t = torch.tensor(x, requires_grad=True)
    out = theirs(t)
    weights = np.random.default_rng(4).normal(size=tuple(out.shape)).astype(dtype)
    (out * torch.tensor(weights)).sum().backward()
    rtol = 1e-4 if dtype == np.float32 else 1e-10
    with np.errstate(all="ignore"):
        for path, got in values_everywhere(ours, x).items():
            np.testing.assert_allclose(got, out.detach().numpy(), rtol=rtol, atol=rtol, err_msg=path)
        for path, (_, (g,)) in value_and_grad_everywhere(lambda a: sg.sum(ours(a) * weights), (x,)).items():
            np.testing.assert_allclose(g, t.grad.numpy(), rtol=rtol, atol=rtol, err_msg=path)


def test_heaviside_of_a_python_int_zero_is_its_second_argument():
    """heaviside(0, x) and heaviside(False, x) were NaN on every path (SymPy's Piecewise dropped the branch of an
    unevaluated Eq(0, 0)); they are x, with gradient 1, as heaviside(0.0, x)."""
    x = np.array([-1.5, 0.0, 2.0, 0.25])
    for zero in (0, False):
        for path, (value, (g,)) in value_and_grad_everywhere(lambda a: sg.sum(sg.heaviside(zero, a) * x), (x,)).items():
            np.testing.assert_allclose(value, np.sum(np.heaviside(zero, x) * x), rtol=1e-15, err_msg=path)
            np.testing.assert_allclose(g, x, rtol=1e-15, err_msg=path)
    assert_grads_match_finite_differences(lambda a: sg.sum(sg.heaviside(0, a) * x), (x,))


def test_python_numbers_in_the_new_ops_follow_numpy():
    x = np.array([0.0, -0.0, -1.5, 2.0, np.nan, np.inf, -np.inf])
    programs = [lambda m, a: m.copysign(a, -1.0), lambda m, a: m.copysign(2.0, a), lambda m, a: m.fmod(a, 0.0),
                lambda m, a: m.fmod(7.5, a), lambda m, a: m.fmax(a, np.nan), lambda m, a: m.fmin(a, 1.0),
                lambda m, a: m.heaviside(a, np.nan), lambda m, a: m.heaviside(0.0, a),
                lambda m, a: m.signbit(-a[:4]),  # -NaN: its sign bit is not visible to comparisons
                lambda m, a: m.heaviside(0, a), lambda m, a: m.heaviside(False, a), lambda m, a: m.heaviside(True, a)]
    with np.errstate(all="ignore"):
        for program in programs:
            for path, got in values_everywhere(lambda a: program(sg, a), x).items():
                _assert_same(got, program(np, x), path)
