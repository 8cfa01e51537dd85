"""NumPy writes to a from_numpy array between forward and backward, read as PyTorch's backward reads them: an
embedding's padding positions come from the indices as written, and torch.matmul / F.linear read a batch operand
whose reshape copies (a transposed 3-D one) as it was at the forward, every other operand as written."""
import itertools

import numpy as np
import pytest

import symgrad as sg
from symgrad.eager.matmul_reads import copied

try:
    import torch
except ImportError:  # the PyTorch comparisons are skipped
    torch = None

LIBRARIES = [sg] + ([] if torch is None else [torch])


@pytest.mark.parametrize("lib", LIBRARIES, ids=lambda lib: lib.__name__)
def test_embedding_padding_positions_are_the_indices_numpy_wrote(lib):
    """Indices [0, 1, 2, 1] (padding_idx 1) written to [1, 1, 0, 2] before backward: rows 0 and 2 take the
    gradients of the last two positions, the padding row none (symgrad kept the forward's padding positions and gave
    row 1 the first position's gradient)."""
    for step in range(3):  # (later steps repeat a captured one)
        indices = np.array([0, 1, 2, 1])
        table = lib.tensor(np.arange(6.0).reshape(3, 2), dtype=lib.float64, requires_grad=True)
        out = lib.nn.functional.embedding(lib.from_numpy(indices), table, padding_idx=1)
        assert out.tolist() == [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0], [2.0, 3.0]]  # the padding row's values stay
        indices[:] = [1, 1, 0, 2]
        (out * lib.tensor(np.arange(8.0).reshape(4, 2))).sum().backward()
        assert table.grad.tolist() == [[4.0, 5.0], [0.0, 0.0], [6.0, 7.0]], step


def _products(lib, linear):
    """The weight gradients over three steps of a product with a weight (2, 3) of a transposed (2, 4, 3) view of a
    NumPy array and of a contiguous (2, 4, 3) one, both written after the forward."""
    seen = []
    for step in range(3):  # (later steps repeat a captured one)
        transposed_np, contiguous_np = np.arange(24.0).reshape(2, 3, 4), np.arange(24.0).reshape(2, 4, 3)
        transposed, contiguous = lib.from_numpy(transposed_np).transpose(1, 2), lib.from_numpy(contiguous_np)
        weight = lib.tensor(np.arange(6.0).reshape(2, 3) / 4, dtype=lib.float64, requires_grad=True)
        if linear:
            linear = lib.nn.functional.linear
            loss = linear(transposed, weight).sum() + linear(contiguous, weight).sum()
        else:
            loss = (transposed @ weight.t()).sum() + lib.matmul(contiguous, weight.t()).sum()
        transposed_np[...], contiguous_np[...] = 0.5, -1.0
        loss.backward()
        seen.append(weight.grad.numpy().copy())
    return seen


@pytest.mark.parametrize("linear", [False, True])
def test_a_transposed_batch_is_read_as_the_forward_saw_it_a_contiguous_one_as_written(linear):
    """PyTorch folds the transposed batch into rows through a copy (its write is not seen), the contiguous one
    through a view (its write is): the weight's gradient sums the first's original rows and the second's -1s
    (symgrad read both as written: 0.5s for the first)."""
    rows = np.arange(24.0).reshape(2, 3, 4).transpose(0, 2, 1).reshape(-1, 3).sum(0)
    expected = np.tile(rows - 8.0, (2, 1))
    ours = _products(sg, linear)
    for got in ours:
        np.testing.assert_array_equal(got, expected)
    if torch is not None:
        for got, want in zip(ours, _products(torch, linear)):
            np.testing.assert_array_equal(got, want)


SHAPES = [(3,), (2, 3), (4, 2, 3), (1, 2, 3), (2, 1, 2, 3)]
LAYOUTS = {"row-major": lambda t: t, "transposed": lambda t: t.transpose(-1, -2),
           "leading axes swapped": lambda t: t.transpose(0, 1), "every other column": lambda t: t[..., ::2]}


def _base_shape(shape, layout):
    if layout == "transposed":
        return shape[:-2] + shape[:-3:-1]
    if layout == "leading axes swapped":
        return (shape[1], shape[0]) + shape[2:]
    return shape[:-1] + (2 * shape[-1],) if layout == "every other column" else shape


def _product_gradients(lib, shapes, layouts, grads, shared):
    """The gradients of the operands that require grad of (a @ b).sum(), a and b NumPy arrays seen through a layout,
    written after the forward when shared (from_numpy); None when the layout does not apply or PyTorch refuses."""
    operands, arrays = [], []
    for k, (shape, layout) in enumerate(zip(shapes, layouts)):
        if len(shape) < 2 and layout == "transposed" or len(shape) < 3 and layout == "leading axes swapped":
            return None
        base = _base_shape(shape, layout)
        array = np.arange(float(np.prod(base))).reshape(base) * (0.1 + k) + 1.0
        arrays.append(array)
        t = LAYOUTS[layout](lib.from_numpy(array) if shared[k] else lib.tensor(array.copy(), dtype=lib.float64))
        operands.append(t.requires_grad_(True) if grads[k] else t)
    try:
        product = operands[0] @ operands[1]
    except RuntimeError:
        return None
    for array in arrays:
        array[...] = np.sin(array) * 3.0
    product.sum().backward()
    return [t.grad.numpy().copy() for t in operands if t.requires_grad]


def test_matmul_reads_what_pytorch_reads_over_shapes_and_layouts():
    """Every pair of shapes and layouts above, each operand requiring grad or not and shared with NumPy or not: the
    gradients after a NumPy write as PyTorch's (symgrad differed in 60 of these 945 cases)."""
    if torch is None:
        pytest.skip("PyTorch is the reference here")
    for shapes in itertools.product(SHAPES, SHAPES):
        for layouts in itertools.product(LAYOUTS, LAYOUTS):
            for grads, shared in itertools.product([(1, 0), (0, 1), (1, 1)], [(1, 0), (0, 1), (1, 1)]):
                theirs = _product_gradients(torch, shapes, layouts, grads, shared)
                if theirs is None:
                    continue
                ours = _product_gradients(sg, shapes, layouts, grads, shared)
                for got, want in zip(ours, theirs):
                    np.testing.assert_allclose(got, want, rtol=1e-13, err_msg=f"{shapes} {layouts} {grads} {shared}")


def test_which_operands_torch_matmul_copies():
    """aten's rule on layouts (shape, strides in elements, requires_grad), PyTorch-free: a (2, 4, 3) transposed batch
    times a matrix that requires grad folds through a copy; row-major, through a view; a matrix times a batch folds
    the batch transposed; batches broadcast along a middle axis expand into copies, along a new leading axis not."""
    transposed = ((2, 4, 3), (12, 1, 4), False)
    assert copied(transposed, ((3, 5), (5, 1), True)) == (True, False)
    assert copied(((2, 4, 3), (12, 3, 1), False), ((3, 5), (5, 1), True)) == (False, False)
    assert copied(((5, 4), (4, 1), True), ((2, 4, 3), (12, 3, 1), False)) == (False, True)  # (its .mT's rows)
    assert copied(((5, 4), (4, 1), True), ((2, 4, 3), (12, 1, 4), False)) == (False, False)
    assert copied(((2, 1, 4, 3), (12, 12, 3, 1), False), ((3, 3, 2), (6, 2, 1), True)) == (True, True)
    assert copied(((2, 4, 3), (12, 3, 1), False), ((1, 3, 2), (6, 1, 3), False)) == (False, False)
    assert copied(((0, 4, 3), (12, 1, 4), False), ((3, 5), (5, 1), True)) == (False, False)  # nothing to copy


RELU_FORMS = {"relu": lambda lib, x: lib.relu(x), "method": lambda lib, x: x.relu(),
              "functional": lambda lib, x: lib.nn.functional.relu(x), "module": lambda lib, x: lib.nn.ReLU()(x)}


@pytest.mark.parametrize("form", sorted(RELU_FORMS))
@pytest.mark.parametrize("lib", LIBRARIES, ids=lambda lib: lib.__name__)
def test_relu_gradient_is_masked_by_its_forward_output(lib, form):
    """relu's derivative reads its output (PyTorch's threshold_backward of the saved result), so an input NumPy
    shifts by 0.75 after the forward keeps the forward's mask [0, 0, 0, 1, 1] (symgrad read the input as written:
    [0, 1, 1, 1, 1]); a NaN's gradient is 1, a zero's 0. Later steps repeat a captured one."""
    for step in range(3):
        data = np.array([-1.0, -0.5, 0.0, 0.5, np.nan])
        x = lib.from_numpy(data).requires_grad_()
        y = RELU_FORMS[form](lib, x)
        data += 0.75
        (y * lib.tensor([1.0, 2.0, 3.0, 4.0, 5.0], dtype=lib.float64)).sum().backward()
        assert x.grad.tolist() == [0.0, 0.0, 0.0, 4.0, 5.0], step
