"""Eager tensors: attributes, backward, autograd.grad, modes, hooks, higher order, in-place ops, errors."""
import numpy as np
import pytest

import symgrad as sg


def test_scalar_chain_rule_and_attributes():
    x = sg.tensor(2.0, requires_grad=True)
    y = x ** 3
    assert x.is_leaf and not y.is_leaf and y.requires_grad
    assert y.grad_fn.name() == "PowBackward0" and "PowBackward0" in repr(y)
    y.backward()
    assert x.grad.item() == 12.0 and x.grad.dtype == np.float64
    x.grad.zero_()
    assert x.grad.item() == 0.0


def test_grad_fn_names_follow_pytorch():
    x = sg.tensor(np.ones((2, 2)), requires_grad=True)
    names = [(x + 2), (x - 1), (x / 2), (-x), x.tanh(), x @ x, x.sum(), x.mean(), x.reshape(4),
             sg.nn.functional.mse_loss(x, np.zeros((2, 2))), sg.nn.Linear(2, 3)(x)]
    assert [t.grad_fn.name() for t in names] == [
        "AddBackward0", "SubBackward0", "DivBackward0", "NegBackward0", "TanhBackward0", "MmBackward0",
        "SumBackward0", "MeanBackward0", "ViewBackward0", "MseLossBackward0", "AddmmBackward0"]
    assert type(x.tanh().grad_fn.next_functions[0][0]).__name__ == "AccumulateGrad"


def _overloads(lib):
    """Ops whose grad_fn PyTorch numbers by the form called (squeeze(dim) is SqueezeBackward1), and others named."""
    x = lib.tensor(np.full((2, 3), 1.5), requires_grad=True)
    u = x.unsqueeze(0)
    return [u.squeeze(0), u.squeeze(), u.squeeze((0, 1)), x.clamp(0, 1), x.clamp(min=0), x.clamp(lib.zeros(3), lib.ones(3)),
            x.clamp_min(0), x.clamp_max(1), x.sum(0), x.sum(1, keepdim=True), x.sum(), x.mean(0), x.mean(),
            x.max(), x.max(0)[0], x.min(), x.prod(), x.prod(0), x.std(0), x.var(), x.softmax(1), x.log_softmax(1),
            x.logsumexp(1), x.norm(), x * 2, x.tanh().grad_fn.next_functions[0][0]]


OVERLOADS = ["SqueezeBackward1", "SqueezeBackward0", "SqueezeBackward2", "ClampBackward1", "ClampBackward1", "ClampBackward0",
             "ClampMinBackward0", "ClampMaxBackward0", "SumBackward1", "SumBackward1", "SumBackward0", "MeanBackward1",
             "MeanBackward0", "MaxBackward1", "MaxBackward0", "MinBackward1", "ProdBackward0", "ProdBackward1",
             "StdBackward0", "VarBackward0", "SoftmaxBackward0", "LogSoftmaxBackward0", "LogsumexpBackward0",
             "LinalgVectorNormBackward0", "MulBackward0", "AccumulateGrad"]


def test_grad_fn_names_and_types_of_overloads_follow_pytorch():
    """A grad_fn's name numbers PyTorch's forms of an op, and its class is named as it, as PyTorch's
    (type(y.grad_fn).__name__ was 'Record'); the same object each time it is read."""
    functions = [t if not isinstance(t, sg.Tensor) else t.grad_fn for t in _overloads(sg)]
    assert [type(f).__name__ for f in functions] == OVERLOADS
    assert [f.name() for f in functions] == OVERLOADS[:-1] + ["torch::autograd::AccumulateGrad"]
    y = sg.tensor([1.0], requires_grad=True) * 3
    assert y.grad_fn is y.grad_fn and isinstance(y.grad_fn, sg.eager.graph.Record)
    z = sg.ones(1, 2, 1, requires_grad=True)
    assert z.squeeze((0, 2)).shape == (2,) and z.squeeze([-1, 1]).shape == (1, 2) and z.squeeze((1,)) is not z
    with pytest.raises(RuntimeError, match="appears multiple times"):
        z.squeeze((0, -3))
    torch = pytest.importorskip("torch")
    theirs = [t if not isinstance(t, torch.Tensor) else t.grad_fn for t in _overloads(torch)]
    assert [type(f).__name__ for f in theirs] == OVERLOADS
    assert [f.name() for f in theirs] == [f.name() for f in functions]


def test_tensor_class_called_with_sizes_as_pytorch():
    """sg.Tensor(2, 3) is a (2, 3) tensor, as torch.Tensor(2, 3) (it was read as data 2 requiring grad 3), in
    symgrad's default float64 and of zeros (sg.empty's); an sg.Size or no argument too; data stays sg.tensor's."""
    sizes = [(2, 3), (3,), (sg.Size([4, 1]),), (), (0, 2)]
    for args in sizes:
        t = sg.Tensor(*args)
        assert t.dtype == np.float64 and t.is_leaf and not t.requires_grad and not t.numpy().any()
    assert [sg.Tensor(*args).shape for args in sizes] == [(2, 3), (3,), (4, 1), (0,), (0, 2)]
    assert sg.Tensor(2, dtype=sg.float).dtype == np.float32 and sg.Tensor(2, 2, requires_grad=True).requires_grad
    assert sg.tensor(3).shape == () and sg.Tensor([1, 2]).tolist() == [1, 2] and sg.Tensor(np.ones(2)).shape == (2,)
    with pytest.raises(TypeError, match="sizes"):
        sg.Tensor(2, 3.0)
    torch = pytest.importorskip("torch")
    assert [tuple(torch.Tensor(*[torch.Size(a) if isinstance(a, sg.Size) else a for a in args]).shape)
            for args in sizes] == [sg.Tensor(*args).shape for args in sizes]


def test_tensor_constructor_dtypes_and_conversions():
    t = sg.tensor([1, 2, 3])
    assert t.dtype == np.int64 and t.shape == (3,) and t.size() == (3,) and t.size(0) == 3 and t.numel() == 3
    f = sg.tensor([1.0, 2.0], dtype=sg.float32)
    assert f.dtype == np.float32 and repr(f) == "tensor([1., 2.])"
    with pytest.raises(RuntimeError, match="floating point"):
        sg.tensor([1, 2], requires_grad=True)
    w = sg.tensor([0.5, 1.5], requires_grad=True)
    with pytest.raises(RuntimeError, match="detach"):
        w.numpy()
    np.testing.assert_array_equal(w.detach().numpy(), [0.5, 1.5])
    assert float(sg.tensor(2.5)) == 2.5 and sg.tensor([[3.0]]).item() == 3.0
    assert repr(sg.tensor([[1.5, 2], [3, 4]])) == "tensor([[1.5000, 2.0000],\n        [3.0000, 4.0000]])"


def test_gradients_accumulate_and_non_leaves_get_none():
    x = sg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    for _ in range(3):
        h = x * 2
        (h * h).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 3 * 8 * np.array([1.0, 2.0, 3.0]))
    with pytest.warns(UserWarning, match="not a leaf"):
        assert h.grad is None


def test_retain_grad_and_hooks():
    a = sg.tensor(3.0, requires_grad=True)
    h = a * 2
    h.retain_grad()
    seen = []
    h.register_hook(lambda g: seen.append(g.item()))
    handle = h.register_hook(lambda g: g * 10)
    a.register_hook(lambda g: g + 1)
    (h ** 2).backward(retain_graph=True)
    assert seen == [12.0] and h.grad.item() == 120.0 and a.grad.item() == 241.0
    handle.remove()
    a.grad = None
    (h ** 2).backward()
    assert a.grad.item() == 25.0 and h.grad.item() == 132.0


def test_nonscalar_backward_needs_gradient():
    x = sg.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    with pytest.raises(RuntimeError, match="implicitly created only for scalar outputs"):
        y.backward()
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        y.backward(sg.tensor([1.0, 1.0, 1.0]))
    y.backward(sg.tensor([1.0, 0.5]))
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0])


def test_backward_twice_is_an_error_unless_retained():
    x = sg.tensor(0.5, requires_grad=True)
    y = sg.sin(x) * x
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.item() == pytest.approx(2 * (np.cos(0.5) * 0.5 + np.sin(0.5)))
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()
    z = sg.tensor(1.0) * 0 + x  # nothing saved: a second backward is allowed, as in PyTorch
    z.backward()
    z.backward()


def test_backward_on_tensor_without_grad():
    with pytest.raises(RuntimeError, match="does not require grad"):
        sg.tensor(1.0).backward()


def test_autograd_grad_and_allow_unused():
    x = sg.tensor([1.0, 2.0], requires_grad=True)
    w = sg.tensor(3.0, requires_grad=True)
    unused = sg.tensor(1.0, requires_grad=True)
    h = sg.tanh(x * w)
    y = (h ** 2).sum()
    gx, gh = sg.autograd.grad(y, [x, h], retain_graph=True)
    np.testing.assert_allclose(gh.numpy(), 2 * np.tanh(3 * np.array([1.0, 2.0])))
    np.testing.assert_allclose(gx.numpy(), gh.numpy() * (1 - np.tanh([3.0, 6.0]) ** 2) * 3)
    assert x.grad is None  # grad() returns, it does not accumulate
    with pytest.raises(RuntimeError, match="allow_unused"):
        sg.autograd.grad(y, [w, unused], retain_graph=True)
    gw, gu = sg.autograd.grad(y, [w, unused], allow_unused=True)
    assert gu is None and gw.shape == ()


def test_third_derivative_of_sin_at_zero():
    x = sg.tensor(0.0, requires_grad=True)
    g1, = sg.autograd.grad(sg.sin(x), x, create_graph=True)
    g2, = sg.autograd.grad(g1, x, create_graph=True)
    g3, = sg.autograd.grad(g2, x)
    assert (g1.item(), g2.item(), g3.item()) == (1.0, 0.0, -1.0)


def test_create_graph_backward_then_differentiate_the_gradient():
    x = sg.tensor([1.0, 2.0], requires_grad=True)
    (x ** 3).sum().backward(create_graph=True)
    grad = x.grad
    assert grad.requires_grad
    np.testing.assert_allclose(grad.detach().numpy(), [3.0, 12.0])
    x.grad = None
    grad.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [6.0, 12.0])


def test_no_grad_enable_grad_and_decorator():
    x = sg.tensor(1.0, requires_grad=True)
    with sg.no_grad():
        y = x * 2
        with sg.enable_grad():
            z = x * 2
    assert not y.requires_grad and y.grad_fn is None and z.requires_grad

    @sg.no_grad()
    def evaluate(t):
        return t * 3
    assert not evaluate(x).requires_grad and sg.is_grad_enabled()


def test_detach_and_data_share_memory():
    x = sg.tensor([1.0, 2.0], requires_grad=True)
    d = x.detach()
    assert not d.requires_grad and d.is_leaf
    d.zero_()  # shares data with x, as in PyTorch
    np.testing.assert_array_equal(x.detach().numpy(), [0.0, 0.0])
    y = (x * 2).detach()
    assert y.grad_fn is None


def test_inplace_ops_record_and_version_errors():
    x = sg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.add_(1).mul_(3)
    y.sub_(sg.tensor([1.0, 1.0]), alpha=2)
    y /= 3
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0])
    e = sg.exp(x)
    e += 1  # exp's backward reads its output
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        e.sum().backward()
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        x.add_(1)
    with sg.no_grad():
        x -= 0.5 * x.grad
    np.testing.assert_allclose(x.detach().numpy(), [0.0, 1.0])


def test_inplace_on_saved_input_is_an_error_but_unsaved_is_fine():
    x = sg.tensor([1.0, 2.0], requires_grad=True)
    h = x + 0
    y = h * h
    h.zero_()
    with pytest.raises(RuntimeError, match="is at version 1; expected version 0"):
        y.sum().backward()
    a = x + 0
    b = a * 3  # mul by a constant does not save a
    a.fill_(7.0)
    b.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0])


@pytest.mark.parametrize("overwrite", ["fill_", "zero_", "copy_", "copy_grad"])
def test_overwriting_a_graph_tensor_cuts_its_history(overwrite):
    """After y.fill_/zero_/copy_, y no longer depends on what it was: x gets only the gradient of
    the later use, and zeros through y (PyTorch: x.grad == 3 and y.grad_fn set; before, 5)."""
    x = sg.tensor([1.0, 2.0], requires_grad=True)
    w = sg.tensor([0.5, -1.0], requires_grad=True)
    y = x * 2
    {"fill_": lambda: y.fill_(4.0), "zero_": lambda: y.zero_(),
     "copy_": lambda: y.copy_(sg.tensor([5.0, 6.0])), "copy_grad": lambda: y.copy_(w * 3)}[overwrite]()
    assert y.requires_grad and y.grad_fn is not None
    (x * 3 + y).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 3.0])
    assert w.grad is None if overwrite != "copy_grad" else np.array_equal(w.grad.numpy(), [3.0, 3.0])
    x.grad = None
    z = x * 2
    z.zero_()
    z.sum().backward()  # reached through a zero derivative: zeros, as PyTorch
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_assigning_a_tensor_that_requires_grad_into_part_of_another(dtype):
    """out[t] = h as an RNN collects its states: the gradient of each assigned position reaches h;
    overwritten positions get none, a broadcast value gets the sum, a position assigned twice the last."""
    h = sg.tensor(np.array([1.0, 2.0, 3.0], dtype), requires_grad=True)
    s = sg.tensor(np.array(0.5, dtype), requires_grad=True)
    out = sg.tensor(np.zeros((3, 3), dtype))
    out[0] = h * h
    out[1] = h
    out[1, 2] = s * 4  # overwrites h[2]'s copy
    out[2, [0, 0, 1]] = h  # position 0 takes h[1]
    out[out > 8] = s  # h[2]**2 = 9 becomes s
    assert out.dtype == dtype and out.requires_grad
    np.testing.assert_array_equal(out.detach().numpy(), [[1, 4, 0.5], [1, 2, 2], [2, 3, 0]])
    weights = np.arange(1.0, 10.0, dtype=dtype).reshape(3, 3)
    (out * sg.tensor(weights)).sum().backward()
    # h: 2h*w[0] through out[0] (not h[2]: overwritten), w[1] (not h[2]), w[2, 0] to h[1], w[2, 1] to h[2]
    np.testing.assert_array_equal(h.grad.numpy(), [2 * 1 * 1 + 4, 2 * 2 * 2 + 5 + 7, 8])
    np.testing.assert_array_equal(s.grad.numpy(), 4 * 6 + 3)
    row = sg.tensor(np.zeros((2, 3), dtype))
    row[1] = sg.reshape(h, (1, 3)) * 2  # leading 1s dropped, as NumPy and PyTorch assign
    row.sum().backward()
    np.testing.assert_array_equal(h.grad.numpy(), [6 + 2, 20 + 2, 8 + 2])
    empty = sg.tensor(np.ones(2, dtype))
    empty[empty > 5] = s  # nothing assigned: recorded all the same, as PyTorch
    assert empty.requires_grad
    np.testing.assert_array_equal(empty.detach().numpy(), [1.0, 1.0])


def test_assigning_a_tensor_that_requires_grad_matches_torch():
    torch = pytest.importorskip("torch")
    grads = []
    for lib in (sg, torch):
        a = lib.tensor(np.array([[0.3, -0.2], [0.1, 0.4]]), requires_grad=True)
        h = lib.tensor(np.zeros(2))
        states = lib.tensor(np.zeros((3, 2)))
        for t in range(3):
            h = lib.tanh(a @ h + 1.0)
            states[t] = h
        states[0, 1] = a[1, 1] * 3
        (states ** 2).sum().backward()
        grads.append(a.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-13)


def test_clamp_copy_and_setitem():
    x = sg.tensor([-1.0, 0.5, 2.0], requires_grad=True)
    y = x * 1
    y.clamp_(0.0, 1.0)
    y[0] = 5.0
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 1.0, 0.0])
    t = sg.tensor([1.0, 2.0])
    t.copy_(sg.tensor([4.0, 5.0]))
    t.fill_(2)
    np.testing.assert_array_equal(t.numpy(), [2.0, 2.0])
    with pytest.raises(RuntimeError, match="can't be cast"):
        sg.tensor([1, 2]).add_(0.5)


def test_clamp_of_integers_and_booleans_with_one_bound_keeps_pytorchs_integer_dtype():
    """The missing bound was +-inf, which made clamp(int64, min=0) float64 (PyTorch: int64) and a boolean clamped
    by an int64 tensor float64 (random_programs_torch seed 20035); no bound at all is PyTorch's error."""
    i, m = sg.tensor([3, -2]), sg.tensor([[True, False]])
    for got, values in [(sg.clamp(i, min=0), [3, 0]), (i.clip(max=1), [1, -2]), (sg.clamp(m, min=i), [[3, 0]]),
                        (m.clamp(max=sg.tensor([0, 0])), [[0, 0]]), (i.clamp(-1, 1), [1, -1])]:
        assert got.dtype == np.int64
        np.testing.assert_array_equal(got.numpy(), values)
    assert sg.clamp(m, max=m).dtype == np.bool_
    k = i.clone()
    k.clamp_(max=0)
    np.testing.assert_array_equal(k.numpy(), [0, -2])
    with pytest.raises(RuntimeError, match="At least one of 'min' or 'max'"):
        i.clamp()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("keepdim", [False, True])
def test_max_and_min_along_a_dim_send_the_gradient_to_the_returned_index(dtype, keepdim):
    """With ties, torch.max(dim) gives the whole gradient to the index it returns (the first);
    the full max() shares it among the ties."""
    data = np.array([[2.0, 2.0, 1.0], [3.0, 3.0, 3.0]], dtype)
    t = sg.tensor(data, requires_grad=True)
    values, indices = t.max(1, keepdim)
    low = t.min(dim=0, keepdim=keepdim)
    assert values.shape == ((2, 1) if keepdim else (2,)) and indices.shape == values.shape
    np.testing.assert_array_equal(indices.numpy().reshape(-1), [0, 0])
    np.testing.assert_array_equal(low.indices.numpy().reshape(-1), [0, 0, 0])
    (values.sum() + 10 * low.values.sum()).backward()
    np.testing.assert_array_equal(t.grad.numpy(), [[11.0, 10.0, 10.0], [1.0, 0.0, 0.0]])
    assert t.grad.dtype == dtype
    t.grad = None
    t.max().backward()
    np.testing.assert_allclose(t.grad.numpy(), [[0, 0, 0], [1 / 3, 1 / 3, 1 / 3]], rtol=1e-6)
    scalar = sg.tensor(np.array(3.0, dtype), requires_grad=True)
    values, indices = scalar.max(0, keepdim)  # a 0-d tensor has dim 0 (or -1) here, as in PyTorch
    assert values.shape == () and indices.item() == 0 and values.item() == 3.0
    values.backward()
    assert scalar.grad.item() == 1.0
    with pytest.raises(IndexError, match="Dimension out of range"):
        scalar.min(1)


def test_max_along_a_dim_with_ties_matches_torch():
    torch = pytest.importorskip("torch")
    data = np.array([[2.0, 2.0, 1.0], [3.0, 3.0, 3.0], [-1.0, 4.0, 4.0]])
    grads = []
    for lib in (sg, torch):
        t = lib.tensor(data, requires_grad=True)
        (t.max(1).values.sum() + 2 * t.min(0).values.sum() + t.max()).backward()
        grads.append(t.grad.numpy())
    np.testing.assert_array_equal(grads[0], grads[1])


def test_namespace_max_and_min_with_a_dim_mean_what_torch_max_means():
    """`_, predicted = torch.max(outputs, 1)` ported as is: the indices, not the two rows' maxima."""
    x = sg.tensor([[1.0, 3.0, 2.0], [4.0, 0.0, 5.0]], requires_grad=True)
    _, predicted = sg.max(x, 1)
    np.testing.assert_array_equal(predicted.numpy(), [1, 2])
    values, indices = sg.min(x, dim=0, keepdim=True)
    np.testing.assert_array_equal(values.detach().numpy(), [[1.0, 0.0, 2.0]])
    np.testing.assert_array_equal(indices.numpy(), [[0, 1, 0]])
    assert values.grad_fn.name() == "MinBackward0"
    np.testing.assert_array_equal(sg.max(x, x * 0 + 2).detach().numpy(), [[2.0, 3.0, 2.0], [4.0, 2.0, 5.0]])
    np.testing.assert_array_equal(sg.max(x, axis=1).detach().numpy(), [3.0, 5.0])  # NumPy's spelling
    assert sg.max(x).item() == 5.0
    np.testing.assert_array_equal(sg.max(np.array([[1.0, 2.0], [3.0, 0.0]]), 1), [2.0, 3.0])
    np.testing.assert_array_equal(x.norm(float("inf"), 1).detach().numpy(), [3.0, 5.0])
    with pytest.raises(TypeError, match="unexpected"):
        sg.max(x, 1, keepdims=True)


def test_namespace_max_with_a_dim_matches_torch():
    torch = pytest.importorskip("torch")
    data = np.array([[1.0, 3.0, 3.0], [4.0, 0.0, 5.0]])
    results = []
    for lib in (sg, torch):
        x = lib.tensor(data, requires_grad=True)
        values, indices = lib.max(x, 1)
        low = lib.min(x, dim=0, keepdim=True)
        (values.sum() + 2 * low.values.sum() + lib.max(x, x * 0 + 2).sum()).backward()
        results.append((values.detach().numpy(), indices.numpy(), low.indices.numpy(), x.grad.numpy()))
    for ours, theirs in zip(*results):
        np.testing.assert_array_equal(ours, theirs)


NORM_ROWS = np.array([[0.0, 0.0], [3.0, 4.0], [-1.0, 0.0]])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("p", [2, 3])
def test_norm_of_a_zero_vector_has_gradient_zero(dtype, p):
    """PyTorch's subgradient at 0, not 0 * inf = NaN (a gradient penalty meets zero gradients)."""
    x = sg.tensor(NORM_ROWS.astype(dtype), requires_grad=True)
    norms = x.norm(p, dim=1)
    row_norms = (np.abs(NORM_ROWS) ** p).sum(1, keepdims=True) ** (1 / p)
    np.testing.assert_allclose(norms.detach().numpy(), row_norms[:, 0], rtol=1e-6)
    norms.sum().backward()  # d|x|_p/dx = |x|^(p-1) sign(x) / |x|_p^(p-1), and 0 for the zero row
    expected = np.abs(NORM_ROWS) ** (p - 1) * np.sign(NORM_ROWS) / np.where(row_norms > 0, row_norms, 1) ** (p - 1)
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-6)
    assert x.grad.dtype == dtype and norms.dtype == dtype
    zero = sg.tensor(np.zeros(3, dtype), requires_grad=True)
    zero.norm().backward()
    np.testing.assert_array_equal(zero.grad.numpy(), [0.0, 0.0, 0.0])
    nan = sg.tensor(np.array([np.nan, 1.0], dtype), requires_grad=True)
    assert np.isnan(nan.norm().item())


def test_norm_gradients_match_torch():
    torch = pytest.importorskip("torch")
    grads = []
    for lib in (sg, torch):
        x = lib.tensor(NORM_ROWS, requires_grad=True)
        (x.norm() * 0 + x.norm(2, dim=1).sum() + x.norm(3, dim=0).sum() + x[0].norm()).backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-13)


@pytest.mark.parametrize("p", [0.5, -1, 3, np.inf, -np.inf, "fro"])
def test_norm_of_any_order_has_pytorchs_gradient_at_zero_entries(p):
    """x.norm(p) is sg.linalg.norm's vector norm: |x|**p's infinite derivative at a zero entry (p < 1) gave NaN."""
    torch = pytest.importorskip("torch")
    grads = []
    for lib in (sg, torch):
        x = lib.tensor(NORM_ROWS, requires_grad=True)
        (x.norm(p, dim=1).sum() + x.norm(p)).backward()
        grads.append(x.grad.numpy())
    assert not np.isnan(grads[0]).any()
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-13)
    assert sg.tensor([0.0, 1.0, -2.0]).norm(0).item() == 2.0  # the count of nonzeros, as PyTorch's


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_0d_tensor_reduces_and_reshapes_along_dim_0_as_in_pytorch(dtype):
    """PyTorch treats a 0-d tensor as having one dimension here; these failed inside symgrad."""
    s = sg.tensor(np.array(2.0, dtype), requires_grad=True)
    results = [s.sum(0), s.mean(-1), s.softmax(0), s.log_softmax(0), s.logsumexp(0), s.squeeze(0), s.transpose(0, -1),
               s.prod(0), s.flatten(0, -1), s.unsqueeze(-1)]
    assert [r.shape for r in results] == [()] * 8 + [(1,), (1,)]
    np.testing.assert_array_equal([float(r.sum().item()) for r in results], [2, 2, 1, 0, 2, 2, 2, 2, 2, 2])
    sum(r.sum() for r in results).backward()
    assert s.grad.dtype == dtype and s.grad.item() == 8.0  # softmax and log_softmax are constant here
    assert sg.sum(np.array(2.0, dtype), 0) == 2.0  # the namespace on arrays too


@pytest.mark.parametrize("call", ["unsqueeze(3)", "unsqueeze(-4)", "squeeze(2)", "transpose(0, 2)", "flatten(0, 5)",
                                  "max(2)", "min(-3)"])
def test_a_dim_out_of_range_is_pytorchs_index_error(call):
    """Before: unsqueeze and flatten accepted these silently (wrapping around), the others failed inside symgrad."""
    x = sg.tensor(np.ones((2, 3)), requires_grad=True)
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-\d, \d\]"):
        eval(f"x.{call}")


def test_indexing_methods_and_namespace_functions_on_tensors():
    m = sg.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    picked = m[sg.tensor([0, 1]), sg.tensor([2, 0])]
    values, indices = m.max(1)
    out = (picked.sum() + values.sum() + sg.logsumexp(m, axis=1).sum() + m.t().mean()
           + m.view(3, 2)[1:].pow(2).sum() + np.sin(m).sum())
    assert isinstance(out, sg.Tensor)
    out.backward()
    data = np.arange(6.0).reshape(2, 3)
    expected = np.zeros((2, 3))
    expected[0, 2] += 1
    expected[1, 0] += 1
    expected[:, 2] += 1
    expected += np.exp(data) / np.exp(data).sum(1, keepdims=True) + 1 / 6 + np.cos(data)
    expected.reshape(-1)[2:] += 2 * data.reshape(-1)[2:]
    np.testing.assert_allclose(m.grad.numpy(), expected)
    np.testing.assert_array_equal(indices.numpy(), [2, 2])
    assert m.transpose(0, 1).shape == (3, 2) and m.unsqueeze(0).shape == (1, 2, 3)
    assert m.flatten().shape == (6,) and m.sum(dim=1, keepdim=True).shape == (2, 1)
    assert m.var().item() == pytest.approx(np.var(data, ddof=1))


def test_float32_stays_float32():
    x = sg.tensor(np.float32([0.5, 1.5]), requires_grad=True)
    (sg.tanh(x) * 2.0).sum().backward()
    assert x.grad.dtype == np.float32
    np.testing.assert_allclose(x.grad.numpy(), 2 * (1 - np.tanh(np.float32([0.5, 1.5])) ** 2), rtol=1e-6)


def test_backward_inputs_and_set_grad_enabled():
    a, b = sg.tensor(2.0, requires_grad=True), sg.tensor(3.0, requires_grad=True)
    (a * b).backward(inputs=[a])
    assert a.grad.item() == 3.0 and b.grad is None
    with sg.set_grad_enabled(False):
        assert not (a * b).requires_grad
    assert sg.is_grad_enabled()


def test_data_updates_are_not_tracked_like_pytorch():
    w = sg.tensor([1.0, 2.0], requires_grad=True)
    w.mul(3).add(1).sum().backward()
    w.data -= 0.1 * w.grad.data  # the classic manual update: no version bump, no leaf error
    w.grad.data.zero_()
    np.testing.assert_allclose(w.detach().numpy(), [0.7, 1.7])
    assert w._version.value == 0 and not np.any(w.grad.numpy())


def test_hooks_under_create_graph_see_differentiable_gradients():
    x = sg.tensor(1.5, requires_grad=True)
    y = x ** 2
    y.register_hook(lambda g: g * x)  # the replacement depends on x, so it is differentiated too
    g, = sg.autograd.grad(y * 1.0, x, create_graph=True)  # d/dx: 1 * x * 2x = 2x^2
    assert g.item() == pytest.approx(4.5)
    h, = sg.autograd.grad(g, x)
    assert h.item() == pytest.approx(6.0)


def test_tensor_methods_match_numpy():
    data = np.array([[1.0, -2.0], [3.0, 0.5]])
    t = sg.tensor(data)
    assert t.norm().item() == pytest.approx(np.linalg.norm(data))
    assert t.norm(p=1).item() == pytest.approx(np.abs(data).sum())
    np.testing.assert_allclose(t.logsumexp(1).numpy(), np.log(np.exp(data).sum(1)))
    np.testing.assert_array_equal(t.gt(0).numpy(), data > 0)
    np.testing.assert_allclose(t.div(2).sub(1).numpy(), data / 2 - 1)
    np.testing.assert_allclose(t.softmax(1).numpy().sum(1), [1.0, 1.0])
    assert t.argmax().item() == 2 and t.permute(1, 0).shape == (2, 2) and t.expand(3, 2, 2).shape == (3, 2, 2)


def test_version_check_covers_exactly_what_the_adjoint_reads():
    """relu's derivative reads its output, not its input (PyTorch's): writing the output is the error, writing
    the input is not."""
    x = sg.tensor([-1.0, 2.0], requires_grad=True)
    h = x + 0  # saves nothing, so the backward below reaches the version check
    y = h.relu()
    y.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
    r = h.relu()
    h.add_(1)
    r.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 1.0])


def test_pytorch_factories_and_indexing_methods():
    sg.manual_seed(3)
    x = sg.randn(2, 3, requires_grad=True)
    assert x.shape == (2, 3) and x.requires_grad and x.is_leaf and sg.rand((4,)).shape == (4,)
    array = np.arange(3.0)
    shared = sg.from_numpy(array)
    shared.add_(1)  # shares memory, as torch.from_numpy
    assert array.tolist() == [1.0, 2.0, 3.0]
    joined = sg.cat([x, x * 2], dim=1)
    assert joined.shape == (2, 6)
    w = sg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    picked = w.gather(1, sg.tensor([[0], [1]]))
    rows = w.index_select(0, sg.tensor([1]))
    masked = w.masked_fill(w > 2, 0.0)
    assert picked.tolist() == [[1.0], [4.0]] and rows.tolist() == [[3.0, 4.0]]
    assert masked.tolist() == [[1.0, 2.0], [0.0, 0.0]]
    assert "GatherBackward0" in repr(picked.grad_fn) and "MaskedFillBackward0" in repr(masked.grad_fn)
    (picked.sum() + rows.sum() + masked.sum()).backward()
    assert w.grad.tolist() == [[2.0, 1.0], [1.0, 2.0]]  # torch gives the same
    assert w.cpu() is w and w.contiguous() is w


# ---------------------------------------------------------------- in-place ops on every tensor a user holds
_VALUE = {(): np.array(1.5), (3,): np.array([0.5, 1.5, 2.5])}


def _accumulated_grad(shape, dtype, times, lib=sg):
    """x.grad after `times` backward calls of sum(x*x): 2 * times * x."""
    x = lib.tensor(_VALUE[shape].astype(dtype), requires_grad=True)
    for _ in range(times):
        (x * x).sum().backward()
    return x.grad


def _retained_grad(shape, dtype, times, lib=sg):
    """y.grad of a non-leaf y = 2x that called retain_grad(), after `times` backward calls of sum(y*y)."""
    y = lib.tensor(_VALUE[shape].astype(dtype), requires_grad=True) * 2
    y.retain_grad()
    for _ in range(times):
        (y * y).sum().backward(retain_graph=True)
    return y.grad


_HELD = {  # name: (make(shape, dtype, lib), its value as a NumPy array)
    "grad after 1 backward": (lambda s, d, lib: _accumulated_grad(s, d, 1, lib), lambda v: 2 * v),
    "grad after 2 backwards": (lambda s, d, lib: _accumulated_grad(s, d, 2, lib), lambda v: 4 * v),
    "grad after 3 backwards": (lambda s, d, lib: _accumulated_grad(s, d, 3, lib), lambda v: 6 * v),
    "detach() of grad after 2": (lambda s, d, lib: _accumulated_grad(s, d, 2, lib).detach(), lambda v: 4 * v),
    ".data of grad after 2": (lambda s, d, lib: _accumulated_grad(s, d, 2, lib).data, lambda v: 4 * v),
    "retained grad after 2": (lambda s, d, lib: _retained_grad(s, d, 2, lib), lambda v: 8 * v),
    "autograd.grad result": (lambda s, d, lib: lib.autograd.grad(
        (lambda x: (x * x).sum())(x := lib.tensor(_VALUE[s].astype(d), requires_grad=True)), [x])[0],
        lambda v: 2 * v),
    "detach() of a leaf": (lambda s, d, lib: lib.tensor(_VALUE[s].astype(d), requires_grad=True).detach(),
                           lambda v: v),
    "a reduction's result": (lambda s, d, lib: (lib.tensor(_VALUE[s].astype(d)) * 2).sum(),
                             lambda v: np.asarray(2 * v.sum())),
}
_INPLACE = {  # name: (apply(tensor, lib), expected(array))
    "zero_": (lambda t, lib: t.zero_(), lambda a: 0 * a),
    "fill_": (lambda t, lib: t.fill_(7), lambda a: 0 * a + 7),
    "add_": (lambda t, lib: t.add_(1.5), lambda a: a + 1.5),
    "add_ alpha": (lambda t, lib: t.add_(lib.tensor(2.0, dtype=t.dtype), alpha=3), lambda a: a + 6),
    "sub_": (lambda t, lib: t.sub_(0.25), lambda a: a - 0.25),
    "mul_": (lambda t, lib: t.mul_(3), lambda a: a * 3),
    "div_": (lambda t, lib: t.div_(2), lambda a: a / 2),
    "pow_": (lambda t, lib: t.pow_(2), lambda a: a ** 2),
    "clamp_": (lambda t, lib: t.clamp_(1.0, 2.0), lambda a: np.clip(a, 1.0, 2.0)),
    "copy_": (lambda t, lib: t.copy_(lib.tensor(np.full(t.shape, 4.0))), lambda a: 0 * a + 4),
    "+=": (lambda t, lib: t.__iadd__(1.0), lambda a: a + 1),
    "-=": (lambda t, lib: t.__isub__(1.0), lambda a: a - 1),
    "*=": (lambda t, lib: t.__imul__(2.0), lambda a: a * 2),
    "/=": (lambda t, lib: t.__itruediv__(4.0), lambda a: a / 4),
    "t[...] =": (lambda t, lib: t.__setitem__(..., 9.0), lambda a: 0 * a + 9),
}


@pytest.mark.parametrize("held", sorted(_HELD))
@pytest.mark.parametrize("shape", [(), (3,)], ids=["0-d", "1-d"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_every_inplace_op_works_on_every_held_tensor(held, shape, dtype):
    """Accumulating twice into a 0-d .grad used to leave a NumPy scalar behind, and every in-place
    op on it then failed (copyto() argument 1 must be a numpy.ndarray)."""
    make, value = _HELD[held]
    for name, (apply, expected) in _INPLACE.items():
        t = make(shape, dtype, sg)
        before = t._version.value
        with sg.no_grad():
            assert apply(t, sg) is t or name == "t[...] =", name
        want = expected(value(_VALUE[shape].astype(dtype)))
        assert t.shape == want.shape and t.dtype == dtype and isinstance(t.numpy(), np.ndarray), name
        np.testing.assert_allclose(t.numpy(), want, rtol=1e-6, err_msg=name)
        assert t._version.value == before + 1, name


def test_accumulation_is_in_place_as_in_pytorch():
    """A .grad held before a second backward (or its detach()) sees the sum, as in PyTorch."""
    x = sg.tensor(2.0, requires_grad=True)
    (x ** 3).backward()
    held = x.grad
    detached = held.detach()
    (x ** 3).backward()
    assert x.grad is held and held.item() == 24.0 and detached.item() == 24.0
    x.grad.zero_()
    assert held.item() == 0.0
    (x ** 3).backward()
    assert x.grad.item() == 12.0


@pytest.mark.parametrize("shape", [(), (3,)], ids=["0-d", "1-d"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_inplace_ops_on_held_tensors_match_torch(shape, dtype):
    torch = pytest.importorskip("torch")
    for held, (make, _) in _HELD.items():
        for name, (apply, _) in _INPLACE.items():
            for grad_mode in (False, True):
                results = []
                for lib in (sg, torch):
                    t = make(shape, dtype, lib)
                    with lib.set_grad_enabled(grad_mode):
                        apply(t, lib)
                    results.append((np.asarray(t.detach().numpy()), tuple(t.shape), str(t.dtype)[-7:]))
                (ours, our_shape, our_dtype), (theirs, their_shape, their_dtype) = results
                np.testing.assert_allclose(ours, theirs, rtol=1e-6, err_msg=f"{held}: {name}")
                assert our_shape == their_shape and our_dtype == their_dtype, (held, name)


PRINTED = [  # (values, dtype name): what tutorials print
    ([float("nan"), float("inf"), -float("inf"), -0.0], "float"), ([1e-5, 1.0, 1000.0], "float"), ([999.0, 1.0], "float"),
    ([[1.0, -2.0], [float("nan"), 4e4]], "float"), (np.arange(2000.0), "float"), (np.arange(2000.0) / 3, "float"),
    (np.arange(1200.0).reshape(40, 30) - 600, "float"), (np.arange(1001) - 500, "long"), (np.arange(40.0) * 1.5, "float"),
    (np.arange(30).reshape(3, 10) * 1000, "long"), (np.arange(8000.0).reshape(20, 20, 20), "float"),
    (np.zeros((0, 3)), "float"), ([], "float"), (np.zeros((2, 0)), "long"), ([True, False], "bool"), (-0.0, "float"),
]


@pytest.mark.parametrize("values,dtype", PRINTED)
def test_printed_tensors_are_laid_out_as_pytorch_lays_them_out(values, dtype):
    """A NaN or an inf widened every column, whole numbers spanning more than 1e3 were not scientific, an empty
    tensor of shape (0, 3) printed as tensor([]), and rows wrapped at NumPy's 75 columns, not PyTorch's 80."""
    torch = pytest.importorskip("torch")
    for requires_grad in (False, True) if dtype == "float" else (False,):
        ours = sg.tensor(values, dtype=getattr(sg, dtype), requires_grad=requires_grad)
        theirs = torch.tensor(values, dtype=getattr(torch, dtype), requires_grad=requires_grad)
        if requires_grad:
            ours, theirs = ours * 1.5, theirs * 1.5
        assert repr(ours) == repr(theirs).replace("torch.", "")


def test_printed_suffixes_wrap_at_80_columns_as_pytorchs():
    torch = pytest.importorskip("torch")
    for values in (np.arange(40.0).reshape(2, 20) * 1.5, np.arange(11.0) * 1.5, np.arange(12.0).reshape(2, 2, 3) / 7):
        ours = sg.tensor(values, dtype=sg.float, requires_grad=True)
        theirs = torch.tensor(values, dtype=torch.float, requires_grad=True)
        assert repr(ours) == repr(theirs)
        assert repr(ours * 2) == repr(theirs * 2)


VIEWS = {"slice of a non-leaf, modified in place": lambda lib, a: _modified_after(lib, a * 1, lambda b: b[1:3], False),
         "slice of a leaf, modified under no_grad": lambda lib, a: _modified_after(lib, a, lambda b: b[1:3], True),
         "reshape of a leaf, modified under no_grad": lambda lib, a: _modified_after(lib, a, lambda b: b.reshape(2, 2), True),
         "transpose of a non-leaf": lambda lib, a: _modified_after(lib, a.reshape(2, 2) * 1, lambda b: b.t(), False)}


def _modified_after(lib, base, view_of, under_no_grad):
    """sum(view ** 2), then base *= 10 in place, then backward."""
    y = (view_of(base) ** 2).sum()
    if under_no_grad:
        with lib.no_grad():
            base.mul_(10)
    else:
        base.mul_(10)
    return y


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_a_saved_view_of_a_tensor_modified_in_place_is_pytorchs_error(name):
    """A slice or reshape is a NumPy view of its source's array, but had a version counter of its own: an in-place
    change of the source changed the values a backward read from the view unseen, and the gradient came out 10
    times too large. The view now shares its source's counter, as a PyTorch view does, and backward raises."""
    a = sg.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    y = VIEWS[name](sg, a)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()
    torch = pytest.importorskip("torch")
    t = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        VIEWS[name](torch, t).backward()


def test_a_view_that_nothing_modified_still_differentiates():
    a = sg.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    b = a * 1
    y = (b[1:3] ** 2).sum() + (b.reshape(2, 2).t() ** 3).sum()
    b2 = b.detach()[::-1]  # a view of the detached data, read only
    y.backward()
    np.testing.assert_allclose(a.grad.numpy(), [3.0, 4.0 + 12.0, 6.0 + 27.0, 48.0])
    assert b2.tolist() == [4.0, 3.0, 2.0, 1.0]


def test_a_view_of_a_tensor_modified_in_place_since_is_rebased_in_recorded_ops():
    """v = z[0]; z.mul_(2); v * 3: v holds the doubled values, and its history is rebased on z's new one (PyTorch
    replays the view), so the gradient reaching a is PyTorch's, not half of it (the old slice's history)."""
    a = sg.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    z = a * 1
    view = z[0]
    z.mul_(2)
    assert view.tolist() == [0.0, 2.0, 4.0]  # the view sees the change, as PyTorch's
    (view * 3).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), [[6.0, 6.0, 6.0], [0.0, 0.0, 0.0]])
    torch = pytest.importorskip("torch")
    t = torch.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    u = t * 1
    v = u[0]
    u.mul_(2)
    (v * 3).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), t.grad.numpy())


BASIC_KEYS = [0, -1, (1, 2), (slice(None), 1), (slice(1, None), slice(None, None, 2)), slice(-2, None),
              (0, slice(5, 9)), (slice(None, None, -1), -2), slice(10, 20), ()]
# PyTorch's grad_fn names of those keys: the last step that changes something; () changes nothing (a view of y)
BASIC_NAMES = ["Select", "Select", "Select", "Select", "Slice", "Slice", "Slice", "Select", "Slice", "Alias"]


@pytest.mark.parametrize("key", BASIC_KEYS, ids=repr)
def test_basic_indexing_values_gradients_and_names(key):
    """Keys of ints and slices take a cached plan: values and gradients as NumPy gives them, grad_fn names as
    the general path gives them."""
    data = np.arange(12.0).reshape(3, 4)
    for _ in range(2):  # the second time from the plan made the first time
        x = sg.tensor(data, requires_grad=True)
        y = (x * 2.0)[key]
        np.testing.assert_array_equal(y.detach().numpy(), (data * 2.0)[key])
        assert y.grad_fn.name() == BASIC_NAMES[BASIC_KEYS.index(key)] + "Backward0"
        y.sum().backward()
        expected = np.zeros_like(data)
        np.add.at(expected, key, 2.0) if key != () else expected.fill(2.0)
        np.testing.assert_array_equal(x.grad.numpy(), expected)


def test_basic_indexing_errors_name_the_index_and_shape():
    x = sg.tensor(np.zeros((3, 4)))
    for _ in range(2):
        with pytest.raises(IndexError, match=r"index 3 is out of bounds for axis 0 with size 3"):
            x[3]
        with pytest.raises(IndexError, match="too many indices"):
            x[0, 0, 0]
    np.testing.assert_array_equal(x[np.int64(1)].numpy(), np.zeros(4))  # not a Python int: the general path


def test_indexed_write_grad_fn_is_copy_slices():
    """`w[0] = 0` on a computed tensor: its grad_fn prints as PyTorch's CopySlices (the autograd mechanics notes),
    and the gradient skips the overwritten element."""
    x = sg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = x * 2
    w[0] = 0
    assert repr(w).endswith("grad_fn=<CopySlices>)") and repr(w.grad_fn).startswith("<CopySlices object at")
    w.sum().backward()
    assert x.grad.tolist() == [0.0, 2.0, 2.0]


def test_integer_requires_grad_errors_are_pytorchs():
    """A factory's words and requires_grad_()'s words differ in PyTorch; each is kept."""
    with pytest.raises(RuntimeError, match="^Only Tensors of floating point and complex dtype can require gradients"):
        sg.tensor([1, 2], requires_grad=True)
    with pytest.raises(RuntimeError, match="^Only Tensors of floating point and complex dtype can require gradients"):
        sg.zeros(2, dtype=sg.long, requires_grad=True)
    with pytest.raises(RuntimeError, match="^only Tensors of floating point dtype can require gradients"):
        sg.tensor([1, 2]).requires_grad_()


VIEW_NAMES = [("x[0]", "Select"), ("x[:, 1]", "Select"), ("x[0, :2]", "Slice"), ("x[:1]", "Slice"),
              ("x[..., 0]", "Select"), ("x[None]", "Unsqueeze"), ("x[:, None, 1]", "Select"),
              ("x[None, :, 1:]", "Slice"), ("x[0, 0:3]", "Select"), ("x[-1]", "Select"), ("x.select(0, 1)", "Select"),
              ("x.t()", "T"), ("x.transpose(0, 1)", "Transpose"), ("x.unsqueeze(0)", "Unsqueeze"),
              ("x.unsqueeze(1).squeeze()", "Squeeze"), ("x.split(1)[0]", "Split"),
              ("x.split([1, 1])[1]", "SplitWithSizes"), ("x.chunk(2)[0]", "Split"), ("x.unbind(0)[0]", "Unbind"),
              ("x[[0, 1]]", "Index")]


@pytest.mark.parametrize("text, name", VIEW_NAMES)
def test_view_grad_fn_names(text, name):
    """Views name their grad_fn as PyTorch's (the NLP tutorial prints `param[:, k]`: SelectBackward0): an index key's
    last step that changes something, or the view method's own name. A view that changes nothing (`y[:, 0:3]` of
    3 columns, `y.t()` of a vector) is y itself here, its grad_fn y's, where PyTorch makes an alias."""
    x = sg.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    assert repr(eval(text).grad_fn).startswith(f"<{name}Backward0 object")
    torch = pytest.importorskip("torch")
    x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    assert repr(eval(text).grad_fn).startswith(f"<{name}Backward0 object")


def test_legacy_constructors():
    """sg.LongTensor([label]) and the other legacy constructors: data of that dtype, or zeros of the sizes given."""
    assert sg.LongTensor([3]).dtype == np.int64 and sg.LongTensor([3]).tolist() == [3]
    assert sg.FloatTensor([[1, 2]]).dtype == np.float32 and sg.FloatTensor((2, 3)).tolist() == [2.0, 3.0]
    assert sg.DoubleTensor(2, 3).shape == (2, 3) and sg.DoubleTensor(2, 3).dtype == np.float64
    assert sg.FloatTensor().shape == (0,) and sg.ByteTensor([1, 2]).dtype == np.uint8
    assert sg.IntTensor([1]).type() == "sg.IntTensor" and sg.BoolTensor([True]).dtype == np.bool_
    with pytest.raises(TypeError, match="takes sizes"):
        sg.FloatTensor([1], 2)


def _next_names(t):
    return [None if f is None else f.name() for f, _ in t.grad_fn.next_functions]


def test_next_functions_as_pytorch_lists_them():
    """The introyt autograd tutorial walks d.grad_fn.next_functions[0][0]... down to the leaf: `2 * b` lists b
    first (PyTorch computes b * 2), mean and Tensor.where list their tensors, and a leaf's AccumulateGrad ends
    the walk with no next_functions."""
    a = sg.tensor([0.5, 1.0], requires_grad=True)
    b = sg.sin(a)
    w = sg.tensor([3.0, 4.0], requires_grad=True)
    assert _next_names(2 * b) == ["SinBackward0", None] and _next_names(1 + b) == ["SinBackward0", None]
    assert (2 * b).tolist() == (b * 2).tolist() and (1.5 + b).tolist() == (b + 1.5).tolist()
    assert _next_names(b.mean()) == ["SinBackward0"]
    assert _next_names(b.where(b > 0.6, w)) == ["SinBackward0", "torch::autograd::AccumulateGrad"]
    leaf = (2 * b).grad_fn.next_functions[0][0].next_functions[0][0]
    assert leaf.name() == "torch::autograd::AccumulateGrad" and leaf.next_functions == ()
    torch = pytest.importorskip("torch")
    tb = torch.sin(torch.tensor([0.5, 1.0], requires_grad=True))
    tw = torch.tensor([3.0, 4.0], requires_grad=True)
    for ours, theirs in ((2 * b, 2 * tb), (1 + b, 1 + tb), (b.mean(), tb.mean()), (b.where(b > 0.6, w),
                                                                                   tb.where(tb > 0.6, tw))):
        assert _next_names(ours) == [None if f is None else f.name() for f, _ in theirs.grad_fn.next_functions]


def _pickled_and_copied(lib):
    """A non-leaf requiring grad, pickled and copied: a leaf requiring grad; deepcopy refuses it."""
    import copy
    import pickle
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    for again in (pickle.loads(pickle.dumps(y)), copy.copy(y)):
        assert again.requires_grad and again.is_leaf and again.tolist() == [2.0, 4.0]
    with pytest.raises(RuntimeError, match="graph leaves"):
        copy.deepcopy(y)
    assert not copy.deepcopy(y.detach()).requires_grad and copy.deepcopy(x).requires_grad
    parameter = copy.deepcopy(lib.nn.Parameter(lib.ones(2)))
    assert type(parameter) is lib.nn.Parameter and parameter.requires_grad


def test_pickled_and_copied_non_leaf_keeps_requires_grad_as_pytorch():
    """A pickled (or copy.copy'd) non-leaf requiring grad comes back a leaf requiring grad, as PyTorch's (it lost
    requires_grad); copy.deepcopy of one is PyTorch's error; leaves, detached tensors and parameters as before."""
    _pickled_and_copied(sg)
    _pickled_and_copied(pytest.importorskip("torch"))


@pytest.mark.parametrize("shape, start, end", [((0, 5, 4), 1, -1), ((0, 5, 4), 0, 1), ((3, 0, 2), 1, 2),
                                               ((2, 3, 0), 0, -1), ((2, 3, 4), 1, 1), ((0,), 0, 0)])
def test_flatten_of_an_empty_tensor_as_pytorchs(shape, start, end):
    """flatten reshaped to -1, ambiguous when the tensor is empty: an empty batch's conv output (0, C, L).flatten(1)
    raised a ShapeError where PyTorch gives (0, C * L) (random_programs_eager.py widened, seed 367); the gradient
    of the flattened tensor reaches the input."""
    torch = pytest.importorskip("torch")
    x = sg.zeros(*shape, dtype=sg.float64, requires_grad=True)
    flat = x.flatten(start, end)
    assert tuple(flat.shape) == tuple(torch.zeros(shape).flatten(start, end).shape)
    assert tuple(sg.flatten(x, start, end).shape) == tuple(flat.shape)
    (flat * 2.0).sum().backward()
    assert tuple(x.grad.shape) == shape and (x.grad.numpy() == 2.0).all()
