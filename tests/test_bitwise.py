"""NumPy's bitwise ops (sg.bitwise_and/or/xor, invert, left_shift, right_shift, logical_xor, divmod) and the
operators `& | ^ ~ << >>` on every path: arrays, traces compiled by both backends, vmap, eager tensors (against
PyTorch), with NumPy's dtypes and edge values. Integers have no gradient; a float operand is NumPy's TypeError."""
import numpy as np
import pytest

import symgrad as sg

INTEGERS = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64]
BINARY = {"bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or, "bitwise_xor": np.bitwise_xor}
SHIFTS = {"left_shift": np.left_shift, "right_shift": np.right_shift}
OPERATORS = [lambda a, b: a & b, lambda a, b: a | b, lambda a, b: a ^ b, lambda a, b: a << b, lambda a, b: a >> b,
             lambda a, b: ~a, lambda a, b: a & 5, lambda a, b: 6 | b, lambda a, b: 3 ^ a, lambda a, b: 1 << b]


def _values(dtype, shape=(9,)):
    info = np.iinfo(dtype)
    edges = np.array([0, 1, -1, info.min, info.max, 5, 6, -7, 100], dtype=np.int64)
    return np.resize(edges.astype(dtype), shape)  # (wrapping casts: -1 as uint8 is 255)


def _counts(dtype, shape=(9,)):
    """Shift counts at the edges: 0, 1, width - 1, width, past it, and negative ones for signed dtypes."""
    width = np.dtype(dtype).itemsize * 8
    counts = [0, 1, width - 1, width, width + 3, 2, 3, 7, -1 if np.dtype(dtype).kind == "i" else 4]
    return np.resize(np.array(counts, dtype=np.int64).astype(dtype), shape)


def _paths(fn):
    return {"plain": fn, "llvm": sg.compile(fn), "numpy": sg.compile(fn, backend="numpy")}


@pytest.mark.parametrize("dtype", INTEGERS)
@pytest.mark.parametrize("name", [*BINARY, *SHIFTS])
def test_binary_ops_equal_numpys_on_every_path(dtype, name):
    a, b = _values(dtype), (_counts(dtype) if name in SHIFTS else _values(dtype)[::-1].copy())
    want = {**BINARY, **SHIFTS}[name](a, b)
    op = getattr(sg, name)
    for path, fn in _paths(lambda x, y: op(x, y)).items():
        got = fn(a, b)
        assert got.dtype == want.dtype, path
        np.testing.assert_array_equal(got, want, err_msg=path)
    np.testing.assert_array_equal(sg.vmap(op)(a.reshape(3, 3), b.reshape(3, 3)), want.reshape(3, 3))


@pytest.mark.parametrize("dtype", INTEGERS + [np.bool_])
def test_operators_in_traces_equal_numpys(dtype):
    if dtype is np.bool_:
        a, b = np.array([True, False, True, False]), np.array([True, True, False, False])
    else:
        a, b = _values(dtype, (2, 4)), _counts(dtype, (4,)) % 5
    for operator in OPERATORS:
        if dtype is np.bool_ and operator(1, 1) != operator(True, True):
            continue  # shifts of booleans: below
        want = operator(a, b)
        for path, fn in _paths(operator).items():
            got = fn(a, b)
            assert got.dtype == want.dtype, (path, got.dtype, want.dtype)
            np.testing.assert_array_equal(got, want, err_msg=path)


def test_booleans_are_logical_and_shift_as_int8():
    a, b = np.array([True, False, True]), np.array([True, True, False])
    for path, fn in _paths(lambda x, y: (x & y, x | y, x ^ y, ~x, sg.invert(y), x << y, x >> y, sg.logical_xor(x, y),
                                         sg.logical_xor(x, 1))).items():
        got = fn(a, b)
        want = (a & b, a | b, a ^ b, ~a, ~b, a << b, a >> b, np.logical_xor(a, b), np.logical_xor(a, 1))
        for g, w in zip(got, want):
            assert g.dtype == w.dtype, path
            np.testing.assert_array_equal(g, w, err_msg=path)


def test_mixed_dtypes_promote_as_numpy_and_python_ints_stay_weak():
    a8, b32 = np.array([-3, 7], np.int8), np.array([5, 9], np.int32)
    u8 = np.array([200, 3], np.uint8)
    for path, fn in _paths(lambda a, b, u: (a & b, a | u, u ^ 0xF0, u >> 1, a << 2, a & True)).items():
        got = fn(a8, b32, u8)
        want = (a8 & b32, a8 | u8, u8 ^ 0xF0, u8 >> 1, a8 << 2, a8 & True)
        for g, w in zip(got, want):
            assert g.dtype == w.dtype, path
            np.testing.assert_array_equal(g, w, err_msg=path)


@pytest.mark.parametrize("shape", [(), (0,), (2, 0)])
def test_empty_and_zero_dimensional(shape):
    a = np.full(shape, 6, np.int32)
    for path, fn in _paths(lambda x: (x & 3, ~x, x << 1, x >> 1, sg.bitwise_xor(x, x))).items():
        for g, w in zip(fn(a), (a & 3, ~a, a << 1, a >> 1, a ^ a)):
            assert g.shape == shape and g.dtype == w.dtype
            np.testing.assert_array_equal(g, w, err_msg=path)


@pytest.mark.parametrize("call", [lambda x: x & 1, lambda x: ~x, lambda x: sg.left_shift(x, 1), lambda x: x ^ x,
                                  lambda x: sg.bitwise_or(1, x)])
def test_floats_are_refused_as_by_numpy(call):
    with pytest.raises(TypeError, match="integer or boolean|not supported for the input types"):  # (NumPy's own)
        call(np.array([1.0, 2.0]))
    with pytest.raises(TypeError, match="integer or boolean"):
        sg.compile(call)(np.array([1.0, 2.0]))


def test_a_mask_of_bits_in_a_differentiated_function():
    """Bits pick which terms count; the gradient flows through the float values only (finite differences)."""
    def f(w, flags):
        kept = ((flags >> 1) & 1) ^ (flags & 1)
        return sg.sum(sg.where(kept == 1, w ** 2, sg.sin(w)))
    w, flags = np.array([0.3, -1.2, 2.0, 0.7]), np.array([0, 1, 2, 3])
    kept = ((flags >> 1) & 1) ^ (flags & 1)
    want = np.where(kept == 1, 2 * w, np.cos(w))
    np.testing.assert_allclose(sg.grad(f)(w, flags), want)
    np.testing.assert_allclose(sg.compile(sg.grad(f))(w, flags), want)
    np.testing.assert_allclose(sg.compile(sg.grad(f), backend="numpy")(w, flags), want)
    sg.check_grads(lambda w: f(w, flags), (w,), order=1)
    with pytest.raises(Exception, match="(?i)integer|differentiable|float"):
        sg.grad(f, argnums=1)(w, flags)


def test_divmod_is_numpys():
    a, b = np.array([7, -7, 7, -7, 0], np.int64), np.array([2, 2, -2, -2, 3], np.int64)
    x, y = np.array([7.5, -7.5, 0.0, np.inf, 1.0]), np.array([2.0, 2.0, -3.0, 2.0, 0.0])
    for path, fn in _paths(lambda a, b: sg.divmod(a, b)).items():
        for p, q in ((a, b), (x, y)):
            with np.errstate(all="ignore"):
                want = np.divmod(p, q)
            for g, w in zip(fn(p, q), want):
                np.testing.assert_array_equal(g, w, err_msg=path)
    np.testing.assert_allclose(sg.grad(lambda x: sg.sum(sg.divmod(x, 2.0)[1]))(np.array([0.5, 3.5])), [1.0, 1.0])


def test_eager_tensors_match_pytorch():
    torch = pytest.importorskip("torch")
    for dtype, torch_dtype in ((np.int64, torch.int64), (np.int32, torch.int32), (np.int16, torch.int16),
                               (np.uint8, torch.uint8), (np.int8, torch.int8)):
        a, b = _values(dtype), _counts(dtype) % 5
        ta, tb = sg.tensor(a), sg.tensor(b)
        pa, pb = torch.tensor(a, dtype=torch_dtype), torch.tensor(b, dtype=torch_dtype)
        for operator in OPERATORS + [lambda a, b: a.bitwise_and(b), lambda a, b: a.bitwise_not(),
                                     lambda a, b: a.bitwise_left_shift(b), lambda a, b: a.bitwise_right_shift(b),
                                     lambda a, b: a.bitwise_xor(3)]:
            got, want = operator(ta, tb), operator(pa, pb)
            assert got.dtype == want.numpy().dtype
            np.testing.assert_array_equal(got.numpy(), want.numpy())
    ta, tb = sg.tensor([True, False, True]), sg.tensor([True, True, False])
    pa, pb = torch.tensor([True, False, True]), torch.tensor([True, True, False])
    for operator in (lambda a, b: a & b, lambda a, b: a | b, lambda a, b: a ^ b, lambda a, b: ~a,
                     lambda a, b: a.logical_xor(b)):
        np.testing.assert_array_equal(operator(ta, tb).numpy(), operator(pa, pb).numpy())
    t = sg.tensor([12, 5])
    t &= 6
    t |= 1
    t <<= 2
    np.testing.assert_array_equal(t.numpy(), [20, 20])
    with pytest.raises(RuntimeError, match="float"):
        sg.tensor([1.0]) & sg.tensor([1])
    for name in ("logical_and_", "logical_or_", "logical_xor_"):  # in place, keeping the tensor's dtype
        got = getattr(sg.tensor([2, 0, 3]), name)(sg.tensor([1, 0, 0]))
        want = getattr(torch.tensor([2, 0, 3]), name)(torch.tensor([1, 0, 0]))
        assert got.dtype == want.numpy().dtype
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    np.testing.assert_array_equal(sg.tensor([1.5, 0.0]).logical_not_().numpy(), [0.0, 1.0])


def test_compiled_eager_step_with_bitwise_ops():
    """Tensors through a compiled function: the ops are recorded, not computed on the side."""
    f = sg.compile(lambda t: (t & 6) ^ (t >> 1))
    a = np.array([1, 7, 12, -5])
    np.testing.assert_array_equal(f(a), (a & 6) ^ (a >> 1))
    np.testing.assert_array_equal(((sg.tensor(a) & 6) ^ (sg.tensor(a) >> 1)).numpy(), (a & 6) ^ (a >> 1))
