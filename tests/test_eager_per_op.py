"""What an eager op computes and records when its Python work per op is cut: a quotient without a power of its
denominator, an elementwise op's NumPy function without a cast of its own (the recorder casts), a record's values
made when read, and the names and versions a record keeps."""

import numpy as np
import pytest
import sympy as sp

import symgrad as sg
from symgrad.eager import tape
from symgrad.eager.graph import value_of
from symgrad.ops.numpy_expressions import elementwise_function, elementwise_lines

X0, X1 = sp.symbols("x0 x1", real=True)


@pytest.mark.parametrize("expr", [X0 / X1, 1 / (X0 + X1), X0 / (X1 + 1) ** 2, sp.exp(X0) / (1 + sp.exp(X0))])
def test_a_quotient_divides_without_raising_its_denominator_to_one_first(expr):
    lines = elementwise_lines(expr, {X0: "a0", X1: "a1"}, np.float64, "r")
    assert not any("**1)" in line or "**1 " in line or line.endswith("**1") for line in lines), lines
    rng = np.random.default_rng(0)
    a, b = rng.uniform(0.5, 2.0, (2, 5))
    expected = sp.lambdify((X0, X1), expr, "numpy")(a, b)
    np.testing.assert_allclose(elementwise_function(expr, (X0, X1), np.dtype(np.float64))(a, b), expected,
                               rtol=1e-15)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_])
def test_a_reciprocal_is_the_same_number_for_every_operand_dtype(dtype):
    values = np.array([1, 0, 3, 1], dtype=dtype)
    function = elementwise_function(1 / X1, (X0, X1), np.dtype(np.float64))
    with np.errstate(divide="ignore"):
        np.testing.assert_array_equal(function(values, values), 1 / (values ** 1))


def test_the_eager_function_of_an_op_leaves_the_cast_to_the_recorder():
    """The NumPy function an eager plan calls has no cast of its own: a float32 tensor times a Python float, a
    comparison's selection, or a division, is still float32 and NumPy's bits of the same computation."""
    rng = np.random.default_rng(1)
    a_np, b_np = rng.standard_normal((2, 4, 3)).astype(np.float32)
    a, b = sg.from_numpy(a_np), sg.from_numpy(b_np)
    for ours, theirs in [(a * 0.5, a_np * np.float32(0.5)), (a / b, a_np / b_np), (sg.tanh(a), np.tanh(a_np)),
                         (sg.relu(a), np.maximum(a_np, 0)), (sg.where(a > b, a, b), np.where(a_np > b_np, a_np, b_np))]:
        assert ours.dtype == np.float32
        np.testing.assert_array_equal(ours.numpy(), theirs)


def test_a_record_makes_its_values_when_read_and_keeps_its_versions():
    tape.start_over()
    x = sg.tensor(np.array([1.0, 2.0]), requires_grad=True)
    c = sg.from_numpy(np.array([3.0, 4.0]))  # (an array NumPy shares: a value per read, made when read)
    y = x * c
    record = y.grad_fn
    assert record.inputs is None and record.out is None  # nothing read them yet
    assert record.versions == ((x._version, 0), (c._version, 0)) and record.saved[1] is c._data
    assert record.name() == "MulBackward0" and record.entry[2] == (-3, -1)
    leaf, constant = record.valued().inputs
    assert leaf is value_of(x) and constant is not value_of(c) and record.out is value_of(y)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 4.0])


def test_a_value_read_after_its_operand_changed_is_the_one_it_read():
    """An op reading a result written in place since its record (or given another array by `.data =`) takes its
    values when recorded: later, the record could not tell which value it read. Its backward is then PyTorch's."""
    torch = pytest.importorskip("torch")

    def run(lib):
        w = lib.tensor(np.array([0.5, -1.0]), requires_grad=True)
        h = w * 2.0 + 1.0  # (neither op saves h)
        with lib.no_grad():
            h.mul_(3.0)  # written unrecorded: later reads read another value than h's grad_fn made
        z = h * h
        (z.sum() + h.sum()).backward()
        return z.detach().numpy().copy(), w.grad.numpy().copy()

    ours, theirs = run(sg), run(torch)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-12)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-12)


@pytest.mark.parametrize("expr, ufunc", [(X0 * X1, np.multiply), (X0 + X1, np.add), (X0 - X1, np.subtract),
                                         (X0 / X1, np.true_divide), (sp.tanh(X0), np.tanh), (sp.exp(X0), np.exp)])
def test_a_one_ufunc_expression_is_called_as_the_ufunc_with_the_operators_bits(expr, ufunc):
    """An expression NumPy computes with one ufunc of the arguments in order is evaluated by that ufunc, the bits of
    the generated function's operator (float32, float64 and ints, broadcast, 0-d); any other stays generated."""
    args = (X0, X1) if len(expr.free_symbols) == 2 else (X0,)
    rng = np.random.default_rng(2)
    for dtype in (np.float32, np.float64, np.int64):
        function = elementwise_function(expr, args, np.dtype(dtype), cast=False)
        assert function is ufunc
        for shapes in [((3, 4), (3, 4)), ((3, 4), (4,)), ((), ())]:
            arrays = [(rng.uniform(0.5, 2.0, shape) * 4).astype(dtype) for shape in shapes[:len(args)]]
            with np.errstate(divide="ignore", invalid="ignore"):
                expected = sp.lambdify(args, expr, "numpy")(*arrays)
                np.testing.assert_array_equal(function(*arrays), expected)
    assert elementwise_function(X1 * X0 + X0, (X0, X1), np.dtype(np.float64), cast=False).__name__ == "_ew"
    assert elementwise_function(sp.atan2(X1, X0), (X0, X1), np.dtype(np.float64), cast=False).__name__ == "_ew"


def test_a_matmul_of_two_dimensional_arrays_numpy_shares_reads_them_in_place():
    """torch.matmul's mm reads both operands as they are: from_numpy operands are not copied at the forward, and a
    NumPy write before backward is seen by the gradient, as PyTorch's (a 3-D @ 2-D product still copies: folded)."""
    from symgrad.eager.matmul_reads import as_torch_reads
    rng = np.random.default_rng(3)
    x_np, w_np = rng.standard_normal((2, 3, 3))
    x, w = sg.from_numpy(x_np), sg.tensor(w_np, requires_grad=True)
    read_x, read_w = as_torch_reads(x, w)
    assert read_x is x and read_w is w
    loss = (x @ w).sum()
    x_np[...] = 2.0
    loss.backward()
    np.testing.assert_array_equal(w.grad.numpy(), np.full((3, 3), 6.0))
    batch = sg.from_numpy(rng.standard_normal((2, 3, 3)).T.copy().T)  # (a layout whose fold copies)
    copied, same = as_torch_reads(batch, sg.tensor(w_np, requires_grad=True))
    assert copied is not batch and same.requires_grad


def test_a_whole_sum_or_mean_keeps_its_names_parents_and_values():
    """t.sum() / t.mean() (and keepdim) through their plan found at once: PyTorch's grad_fn names and next
    functions, the values and gradients of the general call (sg.sum, sg.mean)."""
    rng = np.random.default_rng(4)
    a_np = rng.standard_normal((3, 4)).astype(np.float32)
    for keep in (False, True):
        a = sg.tensor(a_np, requires_grad=True)
        total, mean = a.sum(keepdim=keep), a.mean(keepdim=keep)
        assert total.grad_fn.name() == ("SumBackward1" if keep else "SumBackward0")
        assert mean.grad_fn.name() == "MeanBackward0"
        assert mean.grad_fn.next_functions[0][0].variable is a
        np.testing.assert_array_equal(total.detach().numpy(), sg.sum(a, keepdims=keep).detach().numpy())
        np.testing.assert_array_equal(mean.detach().numpy(), sg.mean(a, keepdims=keep).detach().numpy())
        (total.sum() + 2 * mean.sum()).backward()
        np.testing.assert_allclose(a.grad.numpy(), np.full((3, 4), 1 + 2 / 12, np.float32), rtol=1e-6)
