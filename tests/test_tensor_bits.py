"""Tensor metadata changes in place (t_, unsqueeze_, squeeze_, transpose_, resize_), stride(), bitwise
operators on integer and boolean tensors, sg.bincount, sg.histc and sg.set_printoptions: against PyTorch
(skipped when absent) and against NumPy's answers."""
import numpy as np
import pytest

import symgrad as sg

INTS = (np.array([5, 3, -2, 0]), np.array([3, 6, 7, -1]))
BITWISE = [
    ("and", lambda a, b: a & b), ("or", lambda a, b: a | b), ("xor", lambda a, b: a ^ b), ("not", lambda a, b: ~a),
    ("and-int", lambda a, b: a & 3), ("rand-int", lambda a, b: 6 | a), ("lshift", lambda a, b: a << 2),
]


@pytest.mark.parametrize("name, op", BITWISE, ids=[name for name, _ in BITWISE])
@pytest.mark.parametrize("dtype", [np.int64, np.int32])
def test_bitwise_on_integers_is_numpys(name, op, dtype):
    a, b = (x.astype(dtype) for x in INTS)
    got = op(sg.tensor(a), sg.tensor(b))
    assert got.dtype == op(a, b).dtype and np.array_equal(got.numpy(), op(a, b))


def test_bitwise_on_booleans_is_logical_and_functions_match():
    p, q = sg.tensor([True, True, False]), sg.tensor([True, False, False])
    assert (p & q).tolist() == [True, False, False] and (p | q).tolist() == [True, True, False]
    assert (p ^ q).tolist() == [False, True, False] and (~p).tolist() == [False, False, True]
    assert (p ^ True).tolist() == [False, False, True]
    a, b = (sg.tensor(x) for x in INTS)
    assert sg.bitwise_and(a, b).tolist() == (a & b).tolist() and sg.bitwise_not(a).tolist() == (~a).tolist()
    assert sg.bitwise_xor(a, 1).tolist() == (INTS[0] ^ 1).tolist()


def test_bitwise_in_place_and_refused_on_floats():
    a = sg.tensor(INTS[0].copy())
    a &= 6
    a.bitwise_or_(sg.tensor(INTS[1]))
    assert a.tolist() == ((INTS[0] & 6) | INTS[1]).tolist()
    with pytest.raises(RuntimeError, match="bitwise_and.*float"):
        sg.tensor([1.5]) & sg.tensor([2.0])
    with pytest.raises(RuntimeError, match="bitwise_not.*float"):
        ~sg.tensor([1.5])


def test_metadata_in_place_changes_shape_and_keeps_the_gradient():
    x = sg.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    y = x * sg.tensor(np.arange(6.0).reshape(2, 3))
    before = y
    y.t_()
    assert y is before and y.shape == (3, 2)
    y.unsqueeze_(0)
    assert y.shape == (1, 3, 2)
    y.squeeze_(0)
    y.transpose_(0, 1)
    assert y.shape == (2, 3)
    (y * sg.tensor([[1.0, 2, 3], [4, 5, 6]])).sum().backward()
    assert np.array_equal(x.grad.numpy(), np.arange(6.0).reshape(2, 3) * np.arange(1.0, 7).reshape(2, 3))
    for call in (lambda t: t.t_(), lambda t: t.unsqueeze_(0), lambda t: t.squeeze_()):
        with pytest.raises(RuntimeError, match="leaf Variable"):
            call(sg.ones(2, 3, requires_grad=True))
    with sg.no_grad():
        leaf = sg.ones(2, 1, requires_grad=True).squeeze_()
    assert leaf.shape == (2,)


def test_resize_keeps_flat_order_and_refuses_grad():
    z = sg.tensor(np.arange(6.0))
    assert z.resize_(2, 2).tolist() == [[0.0, 1.0], [2.0, 3.0]]
    assert z.resize_((5,)).tolist() == [0.0, 1.0, 2.0, 3.0, 0.0] and z.resize_(0).shape == (0,)
    with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
        sg.ones(3, requires_grad=True).resize_(2)


@pytest.mark.parametrize("shape", [(2, 3, 4), (2, 0, 3), (2, 1, 3), (), (5,)])
def test_stride_is_pytorchs_for_a_contiguous_tensor(shape):
    torch = pytest.importorskip("torch")
    t, expected = sg.tensor(np.zeros(shape)), torch.zeros(shape)
    assert t.stride() == expected.stride()
    for dim in range(-len(shape), len(shape)):
        assert t.stride(dim) == expected.stride(dim)


BINCOUNTS = [([1, 1, 3], None, 0), ([1, 1, 3], [0.5, 1.0, 2.0], 0), ([0, 1], None, 4), ([], None, 0),
             ([2, 0], [1.0, -1.0], 5)]


@pytest.mark.parametrize("values, weights, minlength", BINCOUNTS)
def test_bincount(values, weights, minlength):
    torch = pytest.importorskip("torch")
    def run(lib):
        w = None if weights is None else lib.tensor(weights, dtype=lib.float64)
        return lib.bincount(lib.tensor(values, dtype=lib.int64), weights=w, minlength=minlength)
    got, expected = run(sg), run(torch)
    assert got.dtype == expected.numpy().dtype and np.array_equal(got.numpy(), expected.numpy())


def test_bincount_refuses_negative_or_2d_input():
    for bad in ([-1, 2], [[1]], [1.5]):
        with pytest.raises(RuntimeError, match="1-d non-negative integral"):
            sg.bincount(sg.tensor(bad))


HISTC = [([1.0, 2, 1, 4], 4, 0, 3), ([1.0, 2, 1, 4], 4, 0, 0), ([2.0, 2.0], 3, 0, 0), ([], 3, 0, 0),
         ([0.1, 0.2, 0.3, 0.7, 1.0, -0.5, np.inf], 10, 0, 1), (list(np.linspace(-1, 1, 101)), 7, -1, 1)]


@pytest.mark.parametrize("values, bins, low, high", HISTC)
def test_histc(values, bins, low, high):
    torch = pytest.importorskip("torch")
    got = sg.histc(sg.tensor(values, dtype=sg.float64), bins=bins, min=low, max=high)
    expected = torch.histc(torch.tensor(values, dtype=torch.float64), bins=bins, min=low, max=high)
    assert np.array_equal(got.numpy(), expected.numpy())


def test_histc_without_torch_counts_every_element_in_range():
    x = np.random.default_rng(0).standard_normal(1000)
    counts = sg.histc(sg.tensor(x), bins=20, min=-1, max=1).numpy()
    assert counts.sum() == np.count_nonzero(np.abs(x) <= 1)
    with pytest.raises(RuntimeError, match="histc takes floats"):
        sg.histc(sg.tensor([1, 2]))


OPTIONS = [dict(precision=2), dict(profile="short"), dict(edgeitems=1, linewidth=50), dict(sci_mode=True),
           dict(sci_mode=False), dict(threshold=5), dict(profile="full", precision=6)]


@pytest.mark.parametrize("options", OPTIONS, ids=str)
def test_set_printoptions_prints_as_pytorch(options):
    torch = pytest.importorskip("torch")
    data = [np.linspace(-3, 3, 2000).reshape(40, 50) ** 3 / 7, np.array([1.0, 2.0, 3e5]),
            np.arange(12.0).reshape(3, 4), np.array([1e-7, 0.5])]
    try:
        sg.set_printoptions(**options)
        torch.set_printoptions(**options)
        for x in data:
            assert str(sg.tensor(x, dtype=sg.float32)) == str(torch.tensor(x, dtype=torch.float32))
    finally:
        sg.set_printoptions(profile="default")
        torch.set_printoptions(profile="default")
    assert sg.get_printoptions() == {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80,
                                     "sci_mode": None}


def test_set_printoptions_refuses_an_unknown_profile():
    with pytest.raises(ValueError, match="profile 'long'"):
        sg.set_printoptions(profile="long")


X = np.random.default_rng(1).uniform(0.1, 0.9, (3, 4))
FUNCTION_FORMS = [
    ("lerp", (X, np.full((3, 4), 2.0), 0.25), {}), ("clamp_min", (X, 0.5), {}), ("clamp_max", (X, 0.5), {}),
    ("nonzero", (X > 0.5,), {}), ("addmm", (X[:, :3], X, X.T), {"beta": 0.5, "alpha": 2.0}), ("sgn", (X - 0.5,), {}),
    ("lgamma", (X,), {}),
    ("take_along_dim", (X, np.array([[0], [3], [1]])), {"dim": 1}), ("narrow", (X, 1, 1, 2), {}),
    ("movedim", (X, 0, 1), {}), ("repeat_interleave", (X, 2), {"dim": 0}), ("unflatten", (X, 1, (2, 2)), {}),
]


@pytest.mark.parametrize("name, args, kwargs", FUNCTION_FORMS, ids=[f[0] for f in FUNCTION_FORMS])
def test_function_forms_are_the_methods(name, args, kwargs):
    """sg.<name>(t, ...) is t.<name>(...), as torch.<name> is; against PyTorch when installed."""
    tensors = [sg.tensor(a) if isinstance(a, np.ndarray) else a for a in args]
    got = getattr(sg, name)(*tensors, **kwargs)
    np.testing.assert_array_equal(got.numpy(), getattr(tensors[0], name)(*tensors[1:], **kwargs).numpy())
    try:
        import torch
    except ImportError:
        return
    expected = getattr(torch, name)(*[torch.tensor(a) if isinstance(a, np.ndarray) else a for a in args], **kwargs)
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", ["var_mean", "std_mean"])
def test_var_mean_and_std_mean(name):
    t = sg.tensor(X)
    for kwargs in ({}, {"dim": 1}, {"dim": 0, "correction": 0, "keepdim": True}):
        spread, mean = getattr(sg, name)(t, **kwargs)
        method = getattr(t, name.split("_")[0])
        np.testing.assert_allclose(spread.numpy(), method(kwargs.get("dim"), keepdim=kwargs.get("keepdim", False),
                                                          correction=kwargs.get("correction", 1)).numpy())
        np.testing.assert_allclose(mean.numpy(), t.mean(kwargs.get("dim"), keepdim=kwargs.get("keepdim", False)).numpy())
