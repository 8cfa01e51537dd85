"""Probes of compiled elementwise numerics at edge points (subnormals, extremes), both backends
against NumPy."""
import numpy as np
import pytest

import symgrad as sg

SUBNORMAL64 = np.array([5e-324, -5e-324, 1e-320, 1e-315, -1e-310, 2.2250738585072014e-308, 1e-300])
SUBNORMAL32 = np.array([1e-45, -1e-45, 1e-40, 1e-39, 1.1754944e-38], dtype=np.float32)


@pytest.mark.parametrize("backend", ["llvm", "numpy"])
@pytest.mark.parametrize("x", [SUBNORMAL64, SUBNORMAL32], ids=["float64", "float32"])
def test_cbrt_of_subnormals(backend, x):
    """LLVM's cbrt multiplied x by 1/3 before dividing in its Newton step, rounding a subnormal x/3:
    cbrt(5e-324) was 1.135e-108 (NumPy: 1.703e-108), cbrt(1e-320) off by 1.6e-4."""
    got = sg.compile(sg.cbrt, backend=backend)(x)
    np.testing.assert_allclose(got, np.cbrt(x), rtol=2 * np.finfo(x.dtype).eps, atol=0)



@pytest.mark.parametrize("backend", ["llvm", "numpy"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sigmoid_in_the_lower_tail(backend, dtype):
    """The NumPy backend's exp(-logaddexp(0, -x)) lost |x| ulp below 0 (28 ulp at x = -33, 1e-13 relative at
    -700); LLVM's 1/(1 + exp(-x)) did not: the backends differed."""
    special = pytest.importorskip("scipy.special")
    x = np.array([-745.0, -700.0, -33.3, -14.6, -1.0, 0.0, 2.5, 40.0, np.inf, -np.inf], dtype=dtype)
    got = sg.compile(sg.sigmoid, backend=backend)(x)
    want = special.expit(x.astype(np.float64)).astype(dtype)
    np.testing.assert_allclose(got, want, rtol=4 * np.finfo(dtype).eps, atol=1e-323)  # e**-745 rounds up to 5e-324
    assert np.isnan(sg.compile(sg.sigmoid, backend=backend)(np.array([np.nan], dtype)))[0]


@pytest.mark.parametrize("backend", ["llvm", "numpy"])
@pytest.mark.parametrize("dtype", [np.int64, np.int32])
def test_integer_fmod_at_the_most_negative_integer(backend, dtype):
    """fmod negated a negative a (and took |b|), which wraps at the most negative integer:
    fmod(-2**63, -7) was -6 and fmod(-7, -2**63) was 2**63 - 7 (NumPy and PyTorch: -1 and -7)."""
    low, high = np.iinfo(dtype).min, np.iinfo(dtype).max
    values = np.array([low, low + 1, -7, -3, -1, 0, 1, 3, 7, high], dtype)
    a, b = (x.ravel() for x in np.meshgrid(values, values[values != 0]))
    np.testing.assert_array_equal(sg.compile(sg.fmod, backend=backend)(a, b), np.fmod(a, b))


EDGES = np.array([0.0, -0.0, 1.0, -1.0, 2.5, np.inf, -np.inf, np.nan])
NUMBER_CASES = [("multiply", 0.0), ("multiply", 0), ("add", np.inf), ("subtract", -np.inf), ("arctan2", np.inf),
                ("arctan2", -np.inf), ("arctan2", -0.0), ("copysign", -0.0), ("copysign", 0.0), ("power", np.nan),
                ("maximum", np.inf), ("minimum", -np.inf), ("fmod", np.inf)]


@pytest.mark.parametrize("backend", ["eager", "llvm", "numpy"])
@pytest.mark.parametrize("name, number", NUMBER_CASES)
def test_zeros_infinities_and_nan_written_into_expressions(backend, name, number):
    """A Python 0, +-inf or NaN was written into the SymPy expression, which folded it: x * 0.0 -> 0 and
    x + inf -> inf (NumPy: NaN at x = inf or NaN), atan2(y, -inf) -> 0 at y = 0 (pi), copysign(x, -0.0) -> |x|
    (SymPy has no -0.0), nan ** x -> NaN (1 at x = 0); xlogy(x, nan) raised SymPy's 'Invalid NaN comparison'."""
    for f, want in [(lambda a: getattr(sg, name)(a, number), getattr(np, name)(EDGES, number)),
                    (lambda a: getattr(sg, name)(number, a), getattr(np, name)(number, EDGES))]:
        got = np.asarray(f(EDGES) if backend == "eager" else sg.compile(f, backend=backend)(EDGES))
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got[~np.isnan(want)]), np.signbit(want[~np.isnan(want)]))


@pytest.mark.parametrize("backend", ["llvm", "numpy"])
def test_a_constant_array_of_a_special_value_is_not_folded_either(backend):
    """Constant folding writes a single-valued constant array into the expression reading it, the same way."""
    zero, minus_zero = np.zeros(()), np.array(-0.0)
    got = sg.compile(lambda a: (a * zero, sg.copysign(a, minus_zero)), backend=backend)(EDGES)
    np.testing.assert_array_equal(got[0], EDGES * 0.0)
    np.testing.assert_array_equal(got[1], np.copysign(EDGES, -0.0))


def test_xlogy_of_a_nan_number():
    special = pytest.importorskip("scipy.special")
    x = np.array([0.0, 1.0, 2.0])
    for backend in ("llvm", "numpy"):
        np.testing.assert_array_equal(sg.compile(lambda a: sg.scipy.special.xlogy(a, np.nan), backend=backend)(x),
                                      special.xlogy(x, np.nan))
        np.testing.assert_array_equal(sg.compile(lambda a: sg.scipy.special.xlogy(np.nan, a), backend=backend)(x),
                                      special.xlogy(np.nan, x))


@pytest.mark.parametrize("backend", ["llvm", "numpy"])
def test_a_clamp_written_as_minimum_of_maximum_compiles(backend):
    """Fusing maximum(x, -2.0) into minimum(., 2.0) wrote a Piecewise into the other's conditions, which SymPy
    folds into an ITE: a RecursionError for sg.minimum(sg.maximum(x, -2.0), 2.0) and F.hardtanh(x, -2.0, 2.0)."""
    torch = pytest.importorskip("torch")
    x = np.array([-3.0, -2.0, -0.5, 0.0, 1.5, 2.0, 7.0, np.inf, -np.inf, np.nan])
    got = sg.compile(lambda a: sg.minimum(sg.maximum(a, -2.0), 2.0), backend=backend)(x)
    np.testing.assert_array_equal(got, np.minimum(np.maximum(x, -2.0), 2.0))
    hardtanh = sg.compile(lambda a: sg.nn.functional.hardtanh(a, -2.0, 2.0), backend=backend)
    np.testing.assert_array_equal(hardtanh(x), torch.nn.functional.hardtanh(torch.tensor(x), -2.0, 2.0).numpy())
    grad = sg.compile(sg.grad(lambda a: sg.sum(sg.nn.functional.hardtanh(a, -2.0, 2.0))), backend=backend)(x[:7])
    t = torch.tensor(x[:7], requires_grad=True)
    torch.nn.functional.hardtanh(t, -2.0, 2.0).sum().backward()
    np.testing.assert_array_equal(grad, t.grad.numpy())


@pytest.mark.parametrize("backend", ["eager", "llvm", "numpy"])
@pytest.mark.parametrize("dtype", [np.int64, np.int32])
def test_clip_of_integers_by_an_integer_array_bound(backend, dtype):
    """The LLVM backend raised SymPy's 'Cannot convert nan to int': the NaN branch of a NaN bound was written
    in integers. Integers hold no NaN; their clip has no such branch."""
    x, lo = np.array([-3, 5, 1, 0], dtype), np.array([0, 1, -2, 2], dtype)
    programs = (lambda a, l: sg.clip(a, l, 2), lambda a, l: sg.clip(a, l, l + 3), lambda a, l: sg.clip(l, a, None))
    for f in programs:
        want = f(x, lo)
        got = f(sg.tensor(x), sg.tensor(lo)).numpy() if backend == "eager" else sg.compile(f, backend=backend)(x, lo)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("backend", ["eager", "llvm", "numpy"])
def test_clip_with_a_nan_bound_is_nan(backend):
    """np.clip, jnp.clip and torch.clamp give NaN where a bound is NaN; sg.clip gave x (a NaN bound compares
    false both ways). Its gradient there is 0, as torch.clamp's."""
    torch = pytest.importorskip("torch")
    x = np.array([-2.0, 0.5, 3.0, 0.2])
    lo, hi = np.array([0.0, np.nan, 0.0, 0.0]), np.array([1.0, 1.0, np.nan, 1.0])
    f = lambda a, l, h: sg.clip(a, l, h)  # noqa: E731
    got = f(x, lo, hi) if backend == "eager" else sg.compile(f, backend=backend)(x, lo, hi)
    np.testing.assert_array_equal(got, np.clip(x, lo, hi))
    numbers = (lambda a: sg.clip(a, np.nan, 1.0), lambda a: sg.clip(a, 0.0, np.nan))
    for g in numbers:
        assert np.isnan(g(x) if backend == "eager" else sg.compile(g, backend=backend)(x)).all()
    if backend != "eager":
        grads = sg.compile(sg.grad(lambda a, l, h: sg.sum(f(a, l, h)), argnums=(0, 1, 2)), backend=backend)(x, lo, hi)
        tensors = [torch.tensor(v, requires_grad=True) for v in (x, lo, hi)]
        torch.clamp(*tensors).sum().backward()
        for got_grad, t in zip(grads, tensors):
            np.testing.assert_array_equal(got_grad, t.grad.numpy())


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_cbrt_outside_llvm_is_numpys(dtype):
    """sg.cbrt on arrays (and the NumPy backend) is np.cbrt: it printed |x|**(1/3) refined by a Newton step, 1 ulp
    off np.cbrt for a third of all x."""
    x = (np.random.default_rng(3).normal(size=5000) * 50).astype(dtype)
    x = np.concatenate([x, np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, 8.0, -27.0], dtype)])
    np.testing.assert_array_equal(sg.cbrt(x), np.cbrt(x))
    np.testing.assert_array_equal(sg.compile(sg.cbrt, backend="numpy")(x), np.cbrt(x))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_power_minus_half_at_signed_zero_and_minus_infinity_is_numpys(dtype):
    """x ** -0.5 is NumPy's pow: inf at -0.0 and 0 at -inf (1/sqrt gave -inf and NaN, PyTorch's), on every path;
    1/sqrt(x) and Tensor.rsqrt stay the reciprocal of the root."""
    x = np.array([-0.0, -np.inf, 0.0, np.inf, 4.0, -4.0, np.nan, 5e-324, 2.0], dtype)
    with np.errstate(all="ignore"):
        want, reciprocal = x ** -0.5, 1 / np.sqrt(x)
    paths = [sg.power(x, -0.5), sg.compile(lambda x: x ** -0.5)(x), sg.compile(lambda x: x ** -0.5, backend="numpy")(x),
             (sg.tensor(x) ** -0.5).numpy(), sg.vmap(lambda x: x ** -0.5)(x)]
    for got in paths:
        assert got.dtype == dtype
        np.testing.assert_allclose(got, want, rtol=2e-7 if dtype == np.float32 else 1e-15)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    np.testing.assert_array_equal(sg.tensor(x).rsqrt().numpy(), reciprocal)
    np.testing.assert_array_equal(sg.reciprocal(sg.sqrt(x)), reciprocal)
    with np.errstate(all="ignore"):
        slope = -0.5 * x ** -1.5
    for grad in (sg.grad(lambda x: sg.sum(x ** -0.5)), sg.compile(sg.grad(lambda x: sg.sum(x ** -0.5)))):
        np.testing.assert_allclose(grad(x), slope, rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.bool_])
def test_rounding_integers_keeps_numpys_dtypes(dtype):
    """NumPy 2: floor, ceil, trunc (fix) and round keep integers' (and booleans') dtype, round(x, -1) too; rint
    gives floats, and round of booleans (float64 here, float16/float32 in NumPy for the smallest, as symgrad's
    transcendentals)."""
    x = np.array([1, 2, 3, 15, 25, 0, 7]).astype(dtype)
    cases = [("floor", {}), ("ceil", {}), ("trunc", {}), ("fix", {}), ("round", {}), ("rint", {})]
    if dtype is not np.bool_:
        cases.append(("round", {"decimals": -1}))
    for name, keywords in cases:
        want = getattr(np, name)(x, **keywords)
        for fn in (lambda a: getattr(sg, name)(a, **keywords), sg.compile(lambda a: getattr(sg, name)(a, **keywords)),
                   sg.compile(lambda a: getattr(sg, name)(a, **keywords), backend="numpy")):
            got = fn(x)
            assert got.dtype == (np.float64 if want.dtype.kind == "f" else want.dtype), (name, keywords)
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("backend", ["llvm", "numpy"])
def test_numbers_multiplying_beyond_the_range_are_not_written_as_inf(backend):
    """SymPy folds a product's numbers exactly and the printers put them first: the gradient of x**2 * 1e308 has the
    coefficient 2e308, written as inf ([nan, inf, inf] at [0, 1e-300, 1]; NumPy, JAX, PyTorch and the uncompiled
    transform [0, 2e8, inf]); x * 1e300 * 1e300 merged its repeat into 1e300**2 (inf, and an OverflowError in the
    NumPy backend's Python). Such a product is ldexp(the others * m, e) now, in float32 at float32's range."""
    x = np.array([0.0, 1e-300, 1.0, -1e-300])
    grad = sg.compile(sg.grad(lambda x: sg.sum(x ** 2 * 1e308)), backend=backend)(x)
    np.testing.assert_array_equal(grad, [0.0, 2e8, np.inf, -2e8])
    with np.errstate(over="ignore", under="ignore"):
        for c in (1e300, 1e-300):
            y = np.array([0.0, 1 / c, -1 / c, 1.0])
            np.testing.assert_allclose(sg.compile(lambda x, c=c: x * c * c, backend=backend)(y), y * c * c, rtol=1e-15)
    x32 = np.array([0.0, 1e-30, 1.0], np.float32)
    grad32 = sg.compile(sg.grad(lambda x: sg.sum(x ** 2 * np.float32(3e38))), backend=backend)(x32)
    assert grad32.dtype == np.float32
    np.testing.assert_allclose(grad32, np.array([0.0, 6e8, np.inf], np.float32), rtol=1e-6)


@pytest.mark.parametrize("backend", ["llvm", "numpy", None])
@pytest.mark.parametrize("c", [1e39, -1e39, 1e-50])
def test_a_float_float32_cannot_hold_is_its_inf_or_zero_there(backend, c):
    """A float32 x * 1e39 is x * inf in NumPy, PyTorch and JAX (the weak scalar takes float32's value): NaN at 0.
    Kept exact in the expression, the product printer (functions.scaled_product) made it a finite x * 1e39."""
    x = np.array([0.0, 1e-30, -1.0, np.inf], np.float32)
    f = (lambda x: sg.multiply(x, c)) if backend is None else sg.compile(lambda x: x * c, backend=backend)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        want = x * c
        got = f(x)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("backend", ["llvm", "numpy", None])
@pytest.mark.parametrize("dtype, k", [(np.float64, 10 ** 20), (np.float32, 10 ** 20), (np.float32, -10 ** 39)])
def test_a_python_int_beyond_int64_multiplies_as_numpys(backend, dtype, k):
    """A Python int beyond int64 with float data: NumPy's product (inf where float32 cannot hold it). It raised
    TypeError from np.isfinite (no int64 holds it), and float32 would have kept 10**39 exact."""
    x = np.array([0.0, 1e-30, -2.0], dtype)
    f = (lambda x: sg.multiply(x, k)) if backend is None else sg.compile(lambda x: x * k, backend=backend)
    with np.errstate(over="ignore", invalid="ignore"):
        want = x * k
        got = f(x)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, want)


SIGNED_ZEROS = {
    "x + 0.0": (lambda x: x + 0.0, lambda x: x + 0.0),
    "0 + x": (lambda x: 0 + x, lambda x: 0 + x),
    "0.0 - x": (lambda x: 0.0 - x, lambda x: 0.0 - x),
    "1 / (x + 0.0)": (lambda x: 1 / (x + 0.0), lambda x: 1 / (x + 0.0)),
    "x - 0.0": (lambda x: x - 0.0, lambda x: x - 0.0),
    "x + -0.0": (lambda x: x + -0.0, lambda x: x + -0.0),
    "x * 1.0": (lambda x: x * 1.0, lambda x: x * 1.0),
    "(x + 0.0) * 2": (lambda x: (x + 0.0) * 2, lambda x: (x + 0.0) * 2),
    "maximum(x, 0.0)": (lambda x: sg.maximum(x, 0.0), lambda x: np.maximum(x, 0.0)),
    "maximum(0.0, x)": (lambda x: sg.maximum(0.0, x), lambda x: np.maximum(0.0, x)),
    "minimum(x, -0.0)": (lambda x: sg.minimum(x, -0.0), lambda x: np.minimum(x, -0.0)),
    "minimum(-0.0, x)": (lambda x: sg.minimum(-0.0, x), lambda x: np.minimum(-0.0, x)),
    "maximum(x, -x)": (lambda x: sg.maximum(x, -x), lambda x: np.maximum(x, -x)),
}


@pytest.mark.parametrize("backend", ["llvm", "numpy", None])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", sorted(SIGNED_ZEROS))
def test_signed_zeros_as_numpys(backend, dtype, name):
    """SymPy folded x + 0 -> x and 0 - x -> -x when a zero was written into an expression: compiled, x + 0.0 at
    -0.0 was -0.0 (NumPy's 0.0, so 1 / (x + 0.0) was -inf), 0.0 - x at 0.0 -0.0; maximum/minimum's ties were
    (a + b) / 2 (maximum(0.0, -0.0) 0.0, NumPy's and torch.maximum's -0.0: the second argument). Subtracting a
    zero still folds, exactly."""
    f, reference = SIGNED_ZEROS[name]
    x = np.array([-0.0, 0.0, 1.5, -2.0, np.inf, -np.inf], dtype)
    got = np.asarray(f(x) if backend is None else sg.compile(f, backend=backend)(x))
    with np.errstate(divide="ignore"):
        want = reference(x)
    np.testing.assert_array_equal(got, want)
    assert got.dtype == want.dtype and np.array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("backend", ["llvm", "numpy"])
def test_maximum_tie_gradient_splits_evenly(backend):
    torch = pytest.importorskip("torch")
    x, y = np.array([1.0, -0.0, 0.0, 2.0]), np.array([1.0, 0.0, -0.0, 3.0])
    grads = sg.compile(sg.grad(lambda a, b: sg.sum(sg.maximum(a, b) * 3.0), argnums=(0, 1)), backend=backend)(x, y)
    tx, ty = (torch.tensor(v, requires_grad=True) for v in (x, y))
    (torch.maximum(tx, ty) * 3.0).sum().backward()
    np.testing.assert_array_equal(grads[0], tx.grad.numpy())
    np.testing.assert_array_equal(grads[1], ty.grad.numpy())
