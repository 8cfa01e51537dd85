"""Probes of result dtypes against NumPy and PyTorch."""
import numpy as np
import pytest

import symgrad as sg


@pytest.mark.parametrize("fill", [3, True, 2.5, np.float32(1.5), np.int32(4)])
def test_full_takes_the_fill_values_dtype(fill):
    """sg.full((2,), 3) was float64; NumPy's (and torch.full's) is int64, a bool fill gives bool."""
    want = np.full((2,), fill)
    got = sg.full((2,), fill)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    traced = sg.compile(lambda x: sg.full((2,), fill))(np.zeros(1))
    assert traced.dtype == want.dtype
    assert sg.full(2, fill, dtype=np.float32).dtype == np.float32


def test_eager_ptp_of_booleans_raises_as_numpy():
    """sg.ptp(bool tensor, axis=0) runs the namespace function on the tensors when its plan cannot be traced;
    its sg.max(a, axis, keepdims) then meant torch.max(t, dim): (values, indices), and the difference of two
    such pairs came back as a (2, 3) array [[1, 0, 0], [-1, 0, 0]]. NumPy raises TypeError for booleans."""
    x = sg.tensor(np.array([[True, False, True], [False, False, True]]))
    with pytest.raises(TypeError, match="not supported on booleans"):
        sg.ptp(x, axis=0)
    floats = np.array([[1.0, 5.0, 2.0], [3.0, 0.0, 9.0]])
    np.testing.assert_array_equal(sg.ptp(sg.tensor(floats), axis=0).numpy(), np.ptp(floats, axis=0))


@pytest.mark.parametrize("pair", [lambda t: sg.max(t, 1), lambda t: sg.min(t, 1), lambda t: t.sort(1),
                                  lambda t: t.topk(2, 1)], ids=["max", "min", "sort", "topk"])
def test_values_indices_pair_is_not_an_array(pair):
    """sg.sum(sg.max(t, 1)) stacked PyTorch's (values, indices) into one array and summed it: 17 for
    [[1, 5, 2], [3, 0, 9]] (values 14 plus indices 3). torch.sum of the pair raises; so does symgrad now."""
    t = sg.tensor(np.array([[1.0, 5.0, 2.0], [3.0, 0.0, 9.0]]), requires_grad=True)
    for use in (sg.sum, sg.mean, sg.exp, sg.asarray):
        with pytest.raises(TypeError, match=r"pair \(values, indices\)"):
            use(pair(t))
    values, indices = pair(t)
    assert values.shape == indices.shape
    assert sg.max(t, 1).values.sum().item() == 14.0


@pytest.mark.parametrize("name", ["nanmax", "nanmin"])
@pytest.mark.parametrize("axis", [1, (0, 2), None])
def test_eager_nan_extrema_take_numpys_axis(name, axis):
    """sg.nanmax(t, axis) on a tensor asked sg.max for PyTorch's (values, indices) with a positional axis:
    a tuple axis was a TypeError from int <= tuple, an int axis the pair."""
    a = np.arange(24.0).reshape(2, 3, 4)
    a[0, 1, 2] = np.nan
    for values in (a, a.astype(np.int64)):
        got = getattr(sg, name)(sg.tensor(values), axis=axis)
        np.testing.assert_array_equal(got.numpy(), getattr(np, name)(values, axis=axis))


_PROMOTION_DTYPES = ["bool", "uint8", "int8", "int32", "int64", "float32", "float64"]
_PROMOTION_OPS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
                  "/": lambda a, b: a / b, "//": lambda a, b: a // b}


def _result_dtype(call) -> str:
    try:
        return str(call().dtype).replace("torch.", "")
    except Exception as err:  # noqa: BLE001 (the table compares refusals too)
        return type(err).__name__


def _documented_difference(torch_dtype, ours, operands) -> bool:
    """Where eager tensors deliberately differ from PyTorch (docs/eager.md): symgrad's default float dtype is
    float64 (PyTorch's float32 for ints with a Python float, and for int / int), an int32/int64 tensor with a
    float32 one is float64 (NumPy's rule), and `-` with a bool (and bool // bool), which PyTorch refuses, is
    NumPy's."""
    if torch_dtype == "float32" and ours == "float64":
        return "float32" not in operands or any(o in ("int32", "int64") for o in operands)
    return torch_dtype in ("RuntimeError", "NotImplementedError") and bool({"bool", "True"} & set(operands))


def test_eager_binary_ops_promote_as_pytorch_where_not_documented_otherwise():
    """The result dtype of +, -, *, /, // on tensors of every pair of dtypes and with Python numbers, against
    torch's result_type rules; the differences allowed are the documented ones (_documented_difference)."""
    torch = pytest.importorskip("torch")
    table = []
    for name, op in _PROMOTION_OPS.items():
        for a in _PROMOTION_DTYPES:
            x = np.array([3, 2, 1]).astype(a)
            operands = [(np.array([1, 2, 1]).astype(b), b) for b in _PROMOTION_DTYPES] + [(True, "True"), (2, "2"),
                                                                                             (2.5, "2.5")]
            for y, b in operands:
                for lhs, rhs in ((x, y), (y, x)) if isinstance(y, (bool, int, float)) else ((x, y),):
                    lift = lambda lib, v: lib.tensor(v) if isinstance(v, np.ndarray) else v  # noqa: E731
                    theirs = _result_dtype(lambda: op(lift(torch, lhs), lift(torch, rhs)))
                    ours = _result_dtype(lambda: op(lift(sg, lhs), lift(sg, rhs)))
                    if theirs != ours and not _documented_difference(theirs, ours, (a, b)):
                        table.append((name, a, b, theirs, ours))
    assert not table, table
