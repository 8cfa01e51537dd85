"""The short dispatch paths of an op on eager tensors (a product's plan found by its operands' types, a one-primitive
plan run without Plan.run, a sum by np.add.reduce): the values, dtypes, records and errors of the general path."""

import numpy as np
import pytest

import symgrad as sg


@pytest.mark.parametrize("array", [np.float32(2.5) * np.ones((), np.float32), np.zeros((0, 3)), np.ones((2, 3), bool),
                                   np.arange(6, dtype=np.int8).reshape(2, 3) * 40,
                                   np.array([[1.0, np.inf], [np.nan, -0.0]], np.float32)],
                         ids=["0-d", "empty", "bool", "int8", "inf-nan"])
def test_sum_gives_numpys_value_and_dtype(array):
    for axis in [None, 0] if array.ndim else [None]:
        got = sg.tensor(array).sum(axis)
        expected = np.sum(array, axis=axis)
        assert got.dtype == expected.dtype and got.shape == expected.shape
        np.testing.assert_array_equal(got.numpy(), expected)


def test_product_of_two_tensors_records_and_differentiates_on_each_path():
    rng = np.random.default_rng(0)
    a_array, b_array = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
    for _ in range(3):  # op by op, then captured, then deferred
        a, b = sg.tensor(a_array, requires_grad=True), sg.tensor(b_array, requires_grad=True)
        out = a @ b
        assert out.grad_fn.name() == "MmBackward0"
        sg.tanh(out).sum().backward()
        ct = 1 - np.tanh(a_array @ b_array) ** 2
        np.testing.assert_allclose(a.grad.numpy(), ct @ b_array.T, rtol=1e-12)
        np.testing.assert_allclose(b.grad.numpy(), a_array.T @ ct, rtol=1e-12)
    with sg.no_grad():
        assert (a @ b).grad_fn is None


def test_product_of_mismatched_tensors_raises_on_every_call():
    a, b = sg.tensor(np.ones((3, 4))), sg.tensor(np.ones((3, 4)))
    for _ in range(2):  # (the second finds the plan that could not be made)
        with pytest.raises(ValueError, match=r"4.*3|3.*4"):
            a @ b
    with pytest.raises((ValueError, TypeError)):
        sg.tensor(np.float64(1.0)) @ a
