"""uint8, int8, int16, uint16 (images and labels) and uint32: NumPy's promotion and wrapping arithmetic, eagerly
and on both backends, at each dtype's edge values; PyTorch's tensor methods and errors; a uint8-image MLP step."""
import numpy as np
import pytest

import symgrad as sg

SMALL = [np.uint8, np.int8, np.int16, np.uint16, np.uint32]
RUNS = ["eager", "numpy", "llvm"]


def _edges(dtype):
    info = np.iinfo(dtype)
    return np.array([info.min, info.min + 1, 0, 1, 2, 7, info.max // 2, info.max - 1, info.max], dtype)


def _run(run, fn, *args):
    return fn(*args) if run == "eager" else sg.compile(fn, backend=run)(*args)


def _same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if got.dtype.kind == "f":  # x / 255 is x * (1/255) when compiled: within an ulp (see git log, 12cceb9)
        np.testing.assert_allclose(got, want, rtol=np.finfo(got.dtype).eps, atol=0)
    else:
        np.testing.assert_array_equal(got, want)


# (symgrad function, NumPy function): NumPy's answer is the reference, its dtype included
BINARY = {
    "add": (lambda x, y: x + y,) * 2,
    "subtract": (lambda x, y: x - y,) * 2,
    "multiply": (lambda x, y: x * y,) * 2,
    "floor_divide": (lambda x, y: x // y,) * 2,
    "mod": (lambda x, y: x % y,) * 2,
    "true_divide": (lambda x, y: x / y,) * 2,
    "less": (lambda x, y: x < y,) * 2,
    "greater_equal": (lambda x, y: x >= y,) * 2,
    "equal": (lambda x, y: x == y,) * 2,
    "not_equal": (lambda x, y: x != y,) * 2,
    "maximum": (sg.maximum, np.maximum),
    "minimum": (sg.minimum, np.minimum),
    "where": (lambda x, y: sg.where(x > y, x, y), lambda x, y: np.where(x > y, x, y)),
}

UNARY = {
    "negative": (lambda x: -x,) * 2,
    "abs": (sg.abs, np.abs),
    "sign": (sg.sign, np.sign),
    "square": (lambda x: x ** 2,) * 2,
    "plus_5": (lambda x: x + 5,) * 2,
    "5_minus": (lambda x: 5 - x,) * 2,
    "times_3": (lambda x: x * 3,) * 2,
    "floordiv_3": (lambda x: x // 3,) * 2,
    "half": (lambda x: x * 0.5,) * 2,
    "over_255": (lambda x: x / 255.0,) * 2,
    "clip": (lambda x: sg.clip(x, 1, 100), lambda x: np.clip(x, 1, 100)),
    "max": (sg.max, np.max),
    "min": (sg.min, np.min),
    "argmax": (sg.argmax, np.argmax),
    "sort": (sg.sort, np.sort),
    "sum_int64": (sg.sum, lambda x: np.sum(x, dtype=np.int64)),  # NumPy's uint64: symgrad has none (PyTorch: int64)
    "cumsum_int64": (sg.cumsum, lambda x: np.cumsum(x, dtype=np.int64)),
    "sum_wrapping": (lambda x: sg.sum(x, dtype=x.dtype), lambda x: np.sum(x, dtype=x.dtype)),  # (NumPy backend: int64)
    **{f"astype_{t.__name__}": (lambda x, t=t: x.astype(t),) * 2
       for t in (np.float32, np.float64, np.int64, np.int32, np.bool_, *SMALL)},
}


@pytest.mark.parametrize("run", RUNS)
@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("dtype", SMALL, ids=lambda d: d.__name__)
def test_binary_ops_follow_numpy_at_the_edges(dtype, name, run):
    x = _edges(dtype)
    y = np.roll(x, 3)
    y[y == 0] = 3
    ours, numpys = BINARY[name]
    with np.errstate(all="ignore"):
        _same(_run(run, ours, x, y), numpys(x, y))


@pytest.mark.parametrize("run", RUNS)
@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("dtype", SMALL, ids=lambda d: d.__name__)
def test_unary_ops_follow_numpy_at_the_edges(dtype, name, run):
    x = _edges(dtype)
    ours, numpys = UNARY[name]
    with np.errstate(all="ignore"):
        _same(_run(run, ours, x), numpys(x))


@pytest.mark.parametrize("run", RUNS)
def test_uint8_wraps_as_numpy(run):
    x = np.array([200, 255, 0], np.uint8)
    _same(_run(run, lambda a: a + 100, x), np.array([44, 99, 100], np.uint8))
    _same(_run(run, lambda a: a - 1, x), np.array([199, 254, 255], np.uint8))


@pytest.mark.parametrize("run", RUNS)
@pytest.mark.parametrize("dtype", SMALL, ids=lambda d: d.__name__)
def test_division_by_zero_is_zero_as_numpy(dtype, run):
    x, zero = _edges(dtype), np.zeros(9, dtype)
    with np.errstate(all="ignore"):
        for ours in (lambda a, b: a // b, lambda a, b: a % b):
            _same(_run(run, ours, x, zero), ours(x, zero))


OTHERS = [np.int32, np.int64, np.float32, np.float64, np.bool_]


@pytest.mark.parametrize("run", ["eager", "llvm"])
@pytest.mark.parametrize("a", SMALL + OTHERS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("b", SMALL, ids=lambda d: d.__name__)
def test_promotion_is_numpys(a, b, run):
    """NEP 50: uint8 + int8 is int16, uint16 + int16 int32, uint8 + float32 float32 ..."""
    x, y = np.array([1, 0], a), np.array([2, 3], b)
    _same(_run(run, lambda u, v: u + v, x, y), x + y)
    _same(_run(run, lambda u, v: u * v, y, x), y * x)


@pytest.mark.parametrize("run", RUNS)
def test_python_int_out_of_range_is_numpys_error(run):
    with pytest.raises(OverflowError, match="300 out of bounds for uint8"):
        _run(run, lambda a: a + 300, np.zeros(2, np.uint8))


@pytest.mark.parametrize("run", RUNS)
@pytest.mark.parametrize("dtype", SMALL, ids=lambda d: d.__name__)
def test_empty_and_0d(dtype, run):
    info = np.iinfo(dtype)
    _same(_run(run, lambda a: a * 2 + 1, np.zeros(0, dtype)), np.zeros(0, dtype))
    scalar = np.array(info.max, dtype)
    with np.errstate(all="ignore"):
        _same(_run(run, lambda a: a * 2 + 1, scalar), scalar * 2 + 1)
        _same(_run(run, lambda a: a.astype(np.float32) / 255, scalar), scalar.astype(np.float32) / 255)


@pytest.mark.parametrize("run", RUNS)
@pytest.mark.parametrize("dtype", SMALL, ids=lambda d: d.__name__)
def test_floats_convert_to_small_ints_wrapping_as_numpy(dtype, run):
    x = np.array([1.7, -1.0, -128.0, 255.0, 256.0, 32767.0, 65535.0] + [3e9, 4294967295.0] * (dtype == np.uint32))
    with np.errstate(all="ignore"):
        _same(_run(run, lambda a: a.astype(dtype), x), x.astype(dtype))


@pytest.mark.parametrize("run", RUNS)
@pytest.mark.parametrize("dtype", SMALL, ids=lambda d: d.__name__)
def test_indexing_by_small_int_labels(dtype, run):
    """Labels near the dtype's top index an axis as long as their range (index + size must not wrap)."""
    n = 256 if np.dtype(dtype).itemsize == 1 else 1000
    table = np.arange(n * 2, dtype=np.float64).reshape(n, 2)
    labels = np.array([n - 1, 0, n // 2, n - 2] if np.dtype(dtype).kind == "u" else [-1, 0, 3, n // 2 - 1], dtype)
    _same(_run(run, lambda t, lab: t[lab], table, labels), table[labels])
    _same(_run(run, lambda t, lab: sg.take(t, lab, axis=0), table, labels), np.take(table, labels, axis=0))
    grad = sg.grad(lambda t, lab: sg.sum(t[lab] ** 2))
    want = np.zeros_like(table)
    np.add.at(want, labels, 2 * table[labels])
    np.testing.assert_allclose(grad(table, labels) if run == "eager" else sg.compile(grad, backend=run)(table, labels),
                               want)


@pytest.mark.parametrize("dtype", [np.uint64, np.float16], ids=lambda d: d.__name__)
def test_other_dtypes_are_refused_naming_the_argument(dtype):
    with pytest.raises(TypeError, match=f"argument x: unsupported dtype {np.dtype(dtype).name}"):
        sg.compile(lambda x: x + 1)(np.zeros(2, dtype))
    with pytest.raises(TypeError, match=f"unsupported dtype {np.dtype(dtype).name}"):
        sg.tensor(np.zeros(2, dtype))


def test_small_ints_are_not_differentiable():
    with pytest.raises(TypeError, match="dtype uint8"):
        sg.grad(lambda x: sg.sum(x / 255.0))(np.zeros(3, np.uint8))
    with pytest.raises(RuntimeError, match="Only Tensors of floating point and complex dtype can require gradients"):
        sg.tensor(np.zeros(3, np.uint8), requires_grad=True)
    with pytest.raises(RuntimeError, match="only Tensors of floating point dtype"):
        sg.tensor([1, 2], dtype=sg.int16).requires_grad_()


@pytest.mark.parametrize("run", RUNS)
def test_gradient_through_a_uint8_input(run):
    w, image = np.linspace(-1, 1, 4), np.array([0, 1, 128, 255], np.uint8)
    grad = sg.grad(lambda w, x: sg.sum(sg.tanh(w * (x / 255.0))))
    got = grad(w, image) if run == "eager" else sg.compile(grad, backend=run)(w, image)
    scaled = image / 255.0
    np.testing.assert_allclose(got, scaled * (1 - np.tanh(w * scaled) ** 2), rtol=1e-12)


def test_tensor_names_and_methods():
    assert (sg.uint8, sg.int8, sg.int16, sg.uint16, sg.uint32) == tuple(map(np.dtype, SMALL))
    assert sg.short == np.int16
    t = sg.from_numpy(np.array([200, 3, 0, 255], np.uint8))
    assert t.dtype == np.uint8 and t.type() == "sg.ByteTensor"
    _same(t.char().numpy(), np.array([-56, 3, 0, -1], np.int8))
    assert t.char().type() == "sg.CharTensor" and t.short().type() == "sg.ShortTensor"
    _same(t.short().byte().numpy(), t.numpy())
    _same((t + 100).numpy(), np.array([44, 103, 100, 99], np.uint8))
    _same(t.to(sg.int16).numpy(), t.numpy().astype(np.int16))
    _same(sg.tensor([1.7, -1.0, 256.0]).to(sg.uint8).numpy(), np.array([1, 255, 0], np.uint8))
    assert repr(t) == "tensor([200,   3,   0, 255], dtype=uint8)"
    with pytest.raises(RuntimeError, match="cannot be converted to type uint8 without overflow"):
        sg.tensor([1, 300], dtype=sg.uint8)


@pytest.mark.parametrize("run", RUNS)
def test_a_bool_sum_in_bool_is_their_or_as_numpy(run):
    """sg.sum(b, dtype=bool) is NumPy's logical or: a bool reduce_sum added in one bit on LLVM (True + True was
    False) and counted on the NumPy backend (int64 2)."""
    b = np.array([[True, False], [True, False]])
    _same(_run(run, lambda b: sg.sum(b, 0, dtype=bool), b), np.sum(b, 0, dtype=bool))


@pytest.mark.parametrize("run", RUNS + ["uncompiled"])
def test_a_bool_power_is_int8_as_numpy_on_every_backend(run):
    """b ** c of booleans is NumPy's int8 (b where c, else 1): the LLVM backend refused it (an integer power of a
    varying exponent); Python bools on either side too."""
    b, c = np.array([True, False, True, False]), np.array([True, True, False, False])
    for x, y in ((b, c), (b, True), (b, False), (True, c), (False, c)):
        expected = np.asarray(x ** y)
        assert expected.dtype == np.int8
        _same(np.asarray(sg.power(x, y) if run == "uncompiled" else _run(run, lambda p, q: p ** q, *(
            sg.tensor(a) if run == "eager" and isinstance(a, np.ndarray) else a for a in (x, y)))), expected)


@pytest.mark.parametrize("run", RUNS)
@pytest.mark.parametrize("dtype", [int, np.uint8, np.float32, bool], ids=lambda d: d.__name__)
def test_prod_takes_numpy_dtype(run, dtype):
    """np.prod(shape, dtype=int) (HIPS/autograd's convnet example) was a TypeError: prod took no dtype, as sum does.
    The product is computed in the dtype (a uint8 product wraps as NumPy's); bool is NumPy's logical and."""
    x = np.array([[3.0, 0.0, 2.5], [100.0, 7.0, -1.0]])
    for axis in (None, 0, 1):
        _same(_run(run, lambda x: sg.prod(x, axis, dtype=dtype), x), np.prod(x.astype(dtype), axis, dtype=dtype))
    _same(_run(run, lambda x: sg.nanprod(x, 1, dtype=dtype), x), np.nanprod(x.astype(dtype), 1, dtype=dtype))
    _same(_run(run, lambda x: sg.prod(x[:0], dtype=dtype), x), np.prod(x[:0], dtype=dtype))


def test_prod_in_a_float_dtype_is_differentiable():
    x = np.array([1.5, -2.0, 3.0])
    np.testing.assert_allclose(sg.grad(lambda x: sg.prod(x, dtype=np.float64))(x), [-6.0, 4.5, -3.0])


@pytest.mark.parametrize("run", RUNS)
def test_a_bool_matrix_product_is_an_or_of_ands_as_numpy(run):
    """b @ b of bools: LLVM added the products in one bit (two Trues gave False)."""
    b, v = np.array([[True, False], [True, True]]), np.array([True, True])
    _same(_run(run, lambda b, v: b @ b, b, v), b @ b)
    _same(_run(run, lambda b, v: sg.dot(v, v), b, v), np.dot(v, v))


@pytest.mark.parametrize("run", RUNS)
@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.int32, np.bool_], ids=lambda d: d.__name__)
def test_einsum_sums_in_its_operands_dtype_as_numpy(dtype, run):
    """einsum's sums over one operand's axes keep its dtype, as NumPy's (uint8 wraps, bools or): they were int64."""
    a = np.array([[200, 100], [100, 100]]).astype(dtype)
    for subscripts in ("ij->j", "ii->", "ij,ij->i"):
        operands = (a,) * (subscripts.count(",") + 1)
        _same(_run(run, lambda *xs: sg.einsum(subscripts, *xs), *operands), np.einsum(subscripts, *operands))


def test_writing_a_python_int_out_of_range_is_an_error_as_in_pytorch_and_numpy():
    """t[0] = 300 and t.fill_(256) of a uint8 t raise (PyTorch's error, NumPy's OverflowError), as
    sg.tensor([300], dtype=sg.uint8) does: they wrote 44 and 0."""
    t = sg.tensor([200, 100], dtype=sg.uint8)
    for write in (lambda: t.__setitem__(0, 300), lambda: t.fill_(256), lambda: t.__setitem__(slice(None), -1)):
        with pytest.raises(RuntimeError, match="cannot be converted to type uint8 without overflow"):
            write()
    assert t.tolist() == [200, 100]
    t[0], t[1] = 255, 0
    assert t.fill_(7).tolist() == [7, 7] and t.dtype == np.uint8


@pytest.mark.parametrize("value", [300.0, 256.0, -0.5, -1.0, 255.5, float("nan"), float("inf"), -float("inf")])
def test_writing_a_python_float_out_of_range_is_an_error_as_in_pytorch(value):
    """t[0] = 300.0 of a uint8 t wrote 44, t.fill_(-1.0) 255, NaN 0: PyTorch raises for a number outside the dtype's
    range (NumPy truncates -0.5 and 255.5 first, PyTorch does not); inside it a float is truncated (2.7 -> 2)."""
    t = sg.tensor([200, 100], dtype=sg.uint8)
    for write in (lambda: t.__setitem__(0, value), lambda: t.fill_(value)):
        with pytest.raises(RuntimeError, match="cannot be converted to type uint8 without overflow"):
            write()
    assert t.tolist() == [200, 100]
    t[0] = 2.7
    assert t.fill_(254.9).tolist() == [254, 254] and t.dtype == np.uint8
    torch = pytest.importorskip("torch")
    theirs = torch.tensor([200, 100], dtype=torch.uint8)
    with pytest.raises(RuntimeError, match="without overflow"):
        theirs[0] = value


def test_tensor_ops_match_torch():
    torch = pytest.importorskip("torch")
    image = np.array([[0, 1, 127, 128], [200, 254, 255, 7]], np.uint8)
    ours, theirs = sg.from_numpy(image), torch.from_numpy(image)
    pairs = [(lambda t: t.sum(), None), (lambda t: t + t, None), (lambda t: t + t.char(), None),
             (lambda t: t.float() / 255, None), (lambda t: t == 200, None),
             (lambda t: t.short() * 300, None), (lambda t: t.max(), None), (lambda t: t.to(torch.float32) / 255,
                                                                             lambda t: t.to(sg.float) / 255)]
    for theirs_fn, ours_fn in pairs:
        want = theirs_fn(theirs).numpy()
        _same((ours_fn or theirs_fn)(ours).numpy(), want)
    _same((ours / 255).numpy(), image / 255)  # float64, as NumPy and an int64 tensor here (PyTorch: float32)


def test_uint8_image_mlp_step_matches_torch():
    """A training step as image-classification code writes it: uint8 pixels and labels, x.float() / 255."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, (8, 1, 4, 4), dtype=np.uint8)
    labels = rng.integers(0, 10, 8, dtype=np.uint8)
    w1, b1 = rng.normal(size=(16, 32)).astype(np.float32) * 0.3, np.zeros(32, np.float32)
    w2, b2 = rng.normal(size=(32, 10)).astype(np.float32) * 0.3, np.zeros(10, np.float32)

    def step(lib, tensor, params):
        x = tensor(images).float().reshape(8, 16) / 255
        hidden = lib.relu(x @ params[0] + params[1])
        loss = lib.nn.functional.cross_entropy(hidden @ params[2] + params[3], tensor(labels).long())
        loss.backward()
        return loss.item(), [p.grad.numpy() for p in params]

    ours = step(sg, sg.from_numpy, [sg.tensor(p, requires_grad=True) for p in (w1, b1, w2, b2)])
    theirs = step(torch, torch.from_numpy, [torch.tensor(p, requires_grad=True) for p in (w1, b1, w2, b2)])
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-5)
    for got, want in zip(ours[1], theirs[1]):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
def test_compiled_uint8_image_mlp_gradient(backend):
    rng = np.random.default_rng(1)
    images = rng.integers(0, 256, (6, 12), dtype=np.uint8)
    w = rng.normal(size=(12, 3))

    def loss(w, x):
        return sg.mean(sg.tanh((x / 255.0) @ w) ** 2)

    got = sg.compile(sg.grad(loss), backend=backend)(w, images)
    np.testing.assert_allclose(got, sg.grad(loss)(w, images.astype(np.float64)), rtol=1e-12)


@pytest.mark.parametrize("run", RUNS)
def test_loops_carry_small_ints(run):
    x = np.array([[200, 3], [0, 255]], np.uint8)

    def program(a):
        doubled = sg.fori_loop(0, 3, lambda i, c: c + c, a)
        total, seen = sg.scan(lambda c, row: (c + row, c), np.zeros(2, np.uint8), a)
        return doubled, total, seen

    doubled, total, seen = _run(run, program, x)
    _same(doubled, x * np.uint8(8))
    _same(total, x[0] + x[1])
    _same(seen, np.stack([np.zeros(2, np.uint8), x[0]]))


def test_vmap_over_uint8_rows():
    rows, w = np.array([[200, 3], [0, 255]], np.uint8), np.array([0.5, -1.0])
    got = sg.vmap(sg.grad(lambda w, x: sg.sum(sg.tanh(w * x / 255.0))), in_axes=(None, 0))(w, rows)
    np.testing.assert_allclose(got, rows / 255.0 * (1 - np.tanh(w * rows / 255.0) ** 2), rtol=1e-12)


def test_eager_bitwise_matches_torch():
    torch = pytest.importorskip("torch")
    image = np.array([200, 3, 0, 255, 128], np.uint8)
    for dtype in (np.uint8, np.int8, np.int16):  # PyTorch has few uint16 kernels
        ours, theirs = sg.from_numpy(image.astype(dtype)), torch.from_numpy(image.astype(dtype))
        _same(sg.bitwise_right_shift(ours, 1).numpy(), torch.bitwise_right_shift(theirs, 1).numpy())
        _same(sg.bitwise_left_shift(ours, 1).numpy(), torch.bitwise_left_shift(theirs, 1).numpy())
        _same((ours & 7).numpy(), (theirs & 7).numpy())
        _same(sg.bitwise_not(ours).numpy(), torch.bitwise_not(theirs).numpy())


@pytest.mark.parametrize("run", ["numpy", "llvm"])
@pytest.mark.parametrize("dtype", SMALL + [np.int32, np.int64], ids=lambda d: np.dtype(d).name)
def test_traced_shifts_by_a_python_int_are_numpys(dtype, run):
    x = _edges(dtype)
    for n in range(np.iinfo(dtype).bits):
        _same(_run(run, lambda a: a << n, x), x << n)
        _same(_run(run, lambda a: a >> n, x), x >> n)


def test_traced_shifts_out_of_range_are_numpys_and_of_floats_clear_errors():
    """A shift by the width or past it is NumPy's 0 (or the sign: -1 >> 8 is -1); floats are NumPy's TypeError."""
    for backend in ("llvm", "numpy"):
        np.testing.assert_array_equal(sg.compile(lambda a: a >> 8, backend=backend)(np.full(2, 200, np.uint8)), [0, 0])
        np.testing.assert_array_equal(sg.compile(lambda a: a >> 9, backend=backend)(np.array([-1, 5], np.int8)),
                                      [-1, 0])
    with pytest.raises(TypeError, match="integer or boolean"):
        sg.compile(lambda a: a << 1)(np.zeros(2))


def test_aot_takes_uint8_images(tmp_path):
    """`symgrad compile --arg x=u8[4,3]` and sg.aot.compile: a uint8 argument, declared uint8_t in the header."""
    from symgrad import cli

    assert cli.parse_arg_spec("x=u8[4,3]") == ("x", (4, 3), np.dtype(np.uint8))
    assert cli.parse_arg_spec("y=uint16[]") == ("y", (), np.dtype(np.uint16))

    def loss(w, x):
        return sg.sum(sg.tanh((x / 255.0) @ w))

    w, x = np.full((3, 2), 0.5), np.array([[0, 128, 255]] * 4, np.uint8)
    sg.aot.compile(loss, (w, x), grad="w", out=str(tmp_path / "m"))
    assert "const uint8_t *x" in (tmp_path / "m.h").read_text()
    np.testing.assert_allclose(sg.load(str(tmp_path / "m"))(w, x), loss(w, x), rtol=1e-12)
    with pytest.raises(TypeError, match="argument x must be uint8"):
        sg.load(str(tmp_path / "m"))(w, x.astype(np.int8))


@pytest.mark.parametrize("run", RUNS)
@pytest.mark.parametrize("dtype", SMALL + [np.int32], ids=lambda d: np.dtype(d).name)
def test_comparison_with_a_python_int_out_of_range_is_exact_as_numpy(dtype, run):
    """NumPy 2 compares exactly (uint8 > -1 is True; PyTorch wraps -1 to 255 and says False)."""
    x = _edges(dtype)

    def compare(a):
        return a > -1, a == -1, a < 2 ** 40, a != 2 ** 40, a >= -2 ** 40

    for got, want in zip(_run(run, compare, x), compare(x)):
        _same(got, want)
