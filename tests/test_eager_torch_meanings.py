"""Tensor methods and sg.* functions on tensors whose PyTorch meaning differs from NumPy's: each gives
PyTorch's values and gradients (checked against PyTorch and central finite differences), not NumPy's."""
import numpy as np
import pytest

import symgrad as sg
from gradcheck import numeric_grad
from symgrad.eager.tensor import DeferredTensor

X = np.random.default_rng(11).standard_normal((2, 3))


def _weighted_grad(fn, x):
    """fn's result (an array) and the gradient of sum(result * w) for fixed weights w, as (value, grad)."""
    t = sg.tensor(x, requires_grad=True)
    y = fn(t)
    weights = np.arange(1.0, y.numel() + 1).reshape(y.shape)
    (y * sg.tensor(weights)).sum().backward()
    return y.detach().numpy(), t.grad.numpy(), weights


REPEATS = [(2, 1), (1, 3), (2, 1, 2), (0, 2)]


@pytest.mark.parametrize("sizes", REPEATS)
def test_tensor_repeat_tiles_as_pytorch(sizes):
    """t.repeat(2, 1) is PyTorch's tiling, not NumPy's element repetition (it gave a (2, 6) array)."""
    value, grad, weights = _weighted_grad(lambda t: t.repeat(*sizes), X)
    np.testing.assert_array_equal(value, np.tile(X, sizes))
    expected = numeric_grad(lambda a: np.sum(np.tile(a, sizes) * weights), (X,), 0)
    np.testing.assert_allclose(grad, expected, rtol=1e-8, atol=1e-8)
    torch = pytest.importorskip("torch")
    t = torch.tensor(X, requires_grad=True)
    (t.repeat(*sizes) * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(value, t.repeat(*sizes).detach().numpy(), rtol=0, atol=0)
    np.testing.assert_allclose(grad, t.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_tensor_repeat_edges_and_numpy_repeat():
    assert sg.tensor(2.0).repeat(3).tolist() == [2.0, 2.0, 2.0]
    assert sg.tensor(X)[:0].repeat(2, 2).shape == (0, 6)
    with pytest.raises(RuntimeError, match="can not be smaller than number of dimensions"):
        sg.tensor(X).repeat(2)
    # np.repeat(t, n, axis) passes axis= and keeps NumPy's meaning
    np.testing.assert_array_equal(np.repeat(sg.tensor(X), 2, axis=1).numpy(), np.repeat(X, 2, axis=1))
    np.testing.assert_array_equal(np.repeat(sg.tensor(X), 2).numpy(), np.repeat(X, 2))


@pytest.mark.parametrize("sizes", [(3, 1), (1, 1), (2, 1, 1), (1, 2)])
def test_repeat_and_tile_give_new_tensors_that_take_in_place_writes(sizes):
    """fast_neural_style's style.repeat(b, 1, 1, 1).div_(255): repeating a 1-sized axis gave a broadcast view (the
    write refused as overlapping) and no repeats gave self (the write changed it); PyTorch's repeat copies."""
    results = {}
    for lib in (sg, pytest.importorskip("torch")):
        t = lib.tensor([[1.0, 2.0]], dtype=lib.float64)
        repeated, tiled = t.repeat(*sizes), t.tile(sizes[1:])
        repeated.div_(2.0)
        tiled.add_(1.0)
        results[lib.__name__] = [repeated.tolist(), tiled.tolist(), t.tolist()]
    assert results["symgrad"] == results["torch"]


def test_numpy_tile_is_an_array_of_its_own():
    a = np.ones((1, 3))
    for reps in [(2, 1), 1, (1, 1)]:
        tiled = sg.tile(a, reps)
        assert tiled.flags.writeable and not np.shares_memory(tiled, a)
        np.testing.assert_array_equal(tiled, np.tile(a, reps))


TIES = np.array([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 1.0, 2.0], [5.0, -1.0, 5.0, 5.0]])


EXTREMA = {"amax-dim": (lambda ns, t: ns.amax(t, 1)), "amin-dim": (lambda ns, t: ns.amin(t, 0)),
           "amax-all": (lambda ns, t: ns.amax(t)), "amax-keywords": (lambda ns, t: ns.amax(t, dim=1, keepdim=True)),
           "amin-dims": (lambda ns, t: ns.amin(input=t, dim=(0, 1)))}


@pytest.mark.parametrize("name", sorted(EXTREMA))
def test_amax_amin_on_tensors_are_values_sharing_the_gradient_among_ties(name):
    """sg.amax(t, 1) gave PyTorch's max(t, 1) pair (values, indices), whose gradient goes to one tied element;
    torch.amax and np.amax both mean the values, whose gradient is shared among ties."""
    call = EXTREMA[name]
    value, grad, weights = _weighted_grad(lambda t: call(sg, t), TIES)
    np.testing.assert_allclose(sg.grad(lambda a: sg.sum(call(sg, a) * weights))(TIES), grad, rtol=1e-12)
    torch = pytest.importorskip("torch")
    t = torch.tensor(TIES, requires_grad=True)
    theirs = call(torch, t)
    (theirs * torch.tensor(weights)).sum().backward()
    np.testing.assert_array_equal(value, theirs.detach().numpy())
    np.testing.assert_allclose(grad, t.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize("call", [lambda t: t.amax(0), lambda t: t.amin(), lambda t: t.amax(dim=[-1], keepdim=True)])
def test_amax_amin_of_a_0d_tensor_reduce_its_one_element(call):
    """A 0-d tensor's amax was a copy, gradient 1 at a NaN where PyTorch's (the share among the elements equal to
    the result: none) is NaN (random_programs_torch float32 seed 31037); 2.0's gradient is 1 in both."""
    for value, expected in ((np.nan, np.nan), (2.0, 1.0), (-np.inf, 1.0)):
        t = sg.tensor(value, requires_grad=True)
        got = call(t)
        assert got.shape == ()
        got.backward()
        np.testing.assert_array_equal(t.grad.numpy(), expected)
    with pytest.raises(IndexError, match="Dimension out of range"):
        sg.tensor(1.0).amax(1)


def test_binary_cross_entropy_grad_fn_names_are_pytorchs():
    """The autograd tutorial prints loss.grad_fn: it said DivBackward0 (the mean's last op)."""
    z = sg.tensor([0.5, -1.0], requires_grad=True)
    y = sg.tensor([1.0, 0.0])
    functional = sg.nn.functional
    assert functional.binary_cross_entropy_with_logits(z, y).grad_fn.name() == "BinaryCrossEntropyWithLogitsBackward0"
    assert functional.binary_cross_entropy(z.sigmoid(), y).grad_fn.name() == "BinaryCrossEntropyBackward0"


def test_bmm_is_pytorchs_batched_product_named_bmm_backward():
    """d2l's attention prints torch.bmm's result: its grad_fn said MmBackward0; t.bmm broadcast a 2-d operand, which
    torch refuses."""
    x = sg.tensor(np.arange(24.0).reshape(2, 3, 4), requires_grad=True)
    y = sg.tensor(np.arange(40.0).reshape(2, 4, 5), requires_grad=True)
    for out in (sg.bmm(x, y), x.bmm(y)):
        assert out.grad_fn.name() == "BmmBackward0"
        np.testing.assert_array_equal(out.detach().numpy(), x.detach().numpy() @ y.detach().numpy())
    x.bmm(y).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.ones((2, 3, 5)) @ y.detach().numpy().transpose(0, 2, 1))
    with pytest.raises(RuntimeError, match="bmm: expected two 3-d tensors"):
        x.bmm(sg.ones(4, 5))


@pytest.mark.parametrize("form", ["method", "function", "dims", "all", "fliplr", "flipud", "reversed"])
def test_flips_are_copies_named_flip_backward(form):
    """t.flip(0), sg.flip(t, dims), fliplr, flipud and reversed(t) (d2l's bidirectional RNN) are PyTorch's copies:
    a write to a flip changed t (NumPy's flips are views) and reversed(t) was a Python iterator."""
    call = {"method": lambda t: t.flip(0), "function": lambda t: sg.flip(t, [1]),
            "dims": lambda t: sg.flip(t, dims=(0,)), "all": lambda t: sg.flip(t), "fliplr": lambda t: t.fliplr(),
            "flipud": lambda t: sg.flipud(t),
            "reversed": reversed}[form]
    expected = {"method": [0], "function": [1], "dims": [0], "all": [0, 1], "fliplr": [1], "flipud": [0],
                "reversed": [0]}[form]
    values = np.arange(6.0).reshape(3, 2)
    t = sg.tensor(values, requires_grad=True)
    out = call(t)
    assert isinstance(out, sg.Tensor) and out.grad_fn.name() == "FlipBackward0"
    np.testing.assert_array_equal(out.detach().numpy(), np.flip(values, expected))
    (out * sg.tensor(values)).sum().backward()
    np.testing.assert_array_equal(t.grad.numpy(), np.flip(values, expected))
    plain = sg.tensor(values)
    flipped = call(plain)
    flipped[0] = 100.0
    np.testing.assert_array_equal(plain.numpy(), values)
    assert reversed(sg.tensor(3.0)).item() == 3.0


def test_pytorch_function_forms_of_tensor_methods():
    """sg.mul(a, b), sg.sub, sg.div, sg.neg, sg.gather, sg.index_select, sg.masked_fill: torch's function forms."""
    a = sg.tensor(X, requires_grad=True)
    b = sg.tensor(X[::-1].copy())
    index = sg.tensor([[0, 2], [1, 1]])
    results = [sg.mul(a, b), sg.sub(a, 2.0), sg.div(a, b), sg.neg(a), sg.gather(a, 1, index),
               sg.index_select(a, 1, sg.tensor([2, 0])), sg.masked_fill(a, b > 0, 0.5)]
    expected = [X * X[::-1], X - 2.0, X / X[::-1], -X, np.take_along_axis(X, index.numpy(), 1), X[:, [2, 0]],
                np.where(X[::-1] > 0, 0.5, X)]
    for got, want in zip(results, expected):
        np.testing.assert_allclose(got.detach().numpy(), want, rtol=1e-15)
    sum(r.sum() for r in results).backward()
    torch = pytest.importorskip("torch")
    t, u = torch.tensor(X, requires_grad=True), torch.tensor(X[::-1].copy())
    theirs = [torch.mul(t, u), torch.sub(t, 2.0), torch.div(t, u), torch.neg(t),
              torch.gather(t, 1, torch.tensor(index.numpy())),
              torch.index_select(t, 1, torch.tensor([2, 0])), torch.masked_fill(t, u > 0, 0.5)]
    sum(r.sum() for r in theirs).backward()
    np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), rtol=1e-12)


def test_argmax_argmin_max_min_take_pytorchs_numpy_style_aliases():
    """d2l's accuracy calls y_hat.argmax(axis=1): PyTorch takes axis/keepdims for dim/keepdim (a TypeError here)."""
    results = {}
    for lib in (sg, pytest.importorskip("torch")):
        t = lib.tensor(TIES)
        results[lib.__name__] = [t.argmax(axis=1).tolist(), t.argmin(axis=0, keepdims=True).tolist(),
                                 t.max(axis=1).values.tolist(), t.min(axis=1, keepdims=True).indices.tolist()]
    assert results["symgrad"] == results["torch"]


NAN_ROWS = np.array([[1.0, np.nan, 3.0, np.nan, 2.0], [2.0, -np.inf, 5.0, 4.0, 5.0]])


def test_cummax_and_cummin_keep_a_nan_from_where_it_appears():
    """A NaN is the running extreme from its place on, and a later NaN takes the index (PyTorch's); cummax gave
    [1, 1, 3, 3, 3] for [1, nan, 3, nan, 2], as if the NaN were not there."""
    for method in ("cummax", "cummin"):
        value, grad, weights = _weighted_grad(lambda t: getattr(t, method)(1).values, NAN_ROWS)
        indices = getattr(sg.tensor(NAN_ROWS), method)(1).indices.numpy()
        np.testing.assert_array_equal(indices[0], [0, 1, 1, 3, 3])
        np.testing.assert_array_equal(value, np.take_along_axis(NAN_ROWS, indices, 1))
        want = np.zeros_like(NAN_ROWS)  # each weight goes to the element the running extreme is
        np.add.at(want, (np.arange(2)[:, None].repeat(5, 1), indices), weights)
        np.testing.assert_array_equal(grad, want)


def test_normalize_of_a_vector_holding_nan_is_nan():
    """F.normalize divides by max(norm, eps); a NaN norm counted as zero, so the row was divided by eps (1e12
    times its values); PyTorch's max(NaN, eps) is NaN. A zero vector still gives zeros and a gradient of 1/eps."""
    x = sg.tensor(np.array([[3.0, np.nan, 4.0], [0.0, 0.0, 0.0], [3.0, 0.0, 4.0]]), requires_grad=True)
    y = sg.nn.functional.normalize(x, dim=1)
    np.testing.assert_array_equal(y.detach().numpy(), [[np.nan] * 3, [0.0] * 3, [0.6, 0.0, 0.8]])
    y[1:].sum().backward()
    np.testing.assert_allclose(x.grad.numpy()[1:], [[1e12] * 3, [0.032, 0.2, -0.024]], rtol=1e-12)


def test_median_of_a_tensor_holding_nan_sends_the_gradient_to_the_nans():
    """median() is NaN where there is one, and its gradient is shared among the NaNs (PyTorch's); it was NaN for
    every element."""
    value, grad, _ = _weighted_grad(lambda t: t.median(), NAN_ROWS)
    assert np.isnan(value)
    np.testing.assert_array_equal(grad, np.where(np.isnan(NAN_ROWS), 0.5, 0.0))


NAN_STEPS = [NAN_ROWS, np.array([[1.0, 5.0, -0.0, 5.0, 2.0], [0.0, 5.0, 1.0, -1.0, 3.0]]),
             np.array([[np.inf, np.nan, -np.inf, 1.0, 2.0], [0.0] * 5]), np.full((2, 5), -0.0), np.full((2, 5), np.nan)]


def _nan_share(x, extreme):
    """PyTorch's gradient of x.max() / x.min(): 1/count to each NaN where x holds one, else to each tied extremum."""
    hits = np.isnan(x) if np.isnan(x).any() else x == extreme(x)
    return hits / hits.sum()


def _full_extrema_steps(lib):
    """x.max() * 2 + x.min() for each of NAN_STEPS written into one x, as (max, gradient) per step."""
    x = lib.zeros(2, 5, dtype=lib.float64, requires_grad=True)
    results = []
    for data in NAN_STEPS * 2:
        x.grad = None
        with lib.no_grad():
            x.copy_(lib.tensor(data))
        top = x.max()
        (top * 2.0 + x.min()).backward()
        results.append((top, x.grad.numpy().copy()))
    return results


def test_full_max_min_of_a_tensor_holding_nan_send_the_gradient_to_the_nans():
    """x.max() / x.min() shared the gradient by x == result, never true at NaN, so every element got 0/0 = NaN;
    PyTorch shares it among the NaNs. The rule is in the graph, so a captured then deferred step (a NaN in some
    steps only) gives it too without reading x; the ties rule (no NaN) and the sign of a zero extremum stand."""
    for step, (top, grad) in enumerate(_full_extrema_steps(sg)):
        data = NAN_STEPS[step % len(NAN_STEPS)]
        assert isinstance(top, DeferredTensor) == (step >= 2)
        value = top.item()
        assert value == np.max(data) and np.signbit(value) == np.signbit(np.max(data)) or np.isnan(np.max(data))
        np.testing.assert_array_equal(grad, 2.0 * _nan_share(data, np.max) + _nan_share(data, np.min))


def test_full_max_min_gradients_at_nan_are_pytorchs():
    torch = pytest.importorskip("torch")
    for (top, grad), (theirs, their_grad) in zip(_full_extrema_steps(sg), _full_extrema_steps(torch)):
        np.testing.assert_array_equal(top.item(), theirs.item())
        np.testing.assert_array_equal(grad, their_grad)
