"""Probes of eager views and in-place writes against PyTorch: what aliases, what copies, what raises."""
import numpy as np
import pytest

import symgrad as sg


def test_view_of_a_layout_no_reshape_can_view_raises():
    """t.t().view(6) returned a copy, so an in-place write meant for t through it silently did nothing
    (t stayed [[0, 1, 2], [3, 4, 5]], not doubled); PyTorch raises and points to reshape, as symgrad now does."""
    t = sg.tensor(np.arange(6.0).reshape(2, 3))
    for make in (lambda: t.t().view(6), lambda: t.t().view(-1), lambda: t[:, ::2].view(4)):
        with pytest.raises(RuntimeError, match=r"view size is not compatible.*Use \.reshape"):
            make()
    assert t.t().view(3, 2).shape == (3, 2) and t[:, 1:].view(2, 2, 1).shape == (2, 2, 1)
    flat = t.view(6)
    flat.mul_(2.0)
    np.testing.assert_array_equal(t.numpy(), np.arange(6.0).reshape(2, 3) * 2)
    copied = t.t().reshape(6)  # reshape may copy, as PyTorch's: the write does not reach t
    copied.zero_()
    np.testing.assert_array_equal(t.numpy(), np.arange(6.0).reshape(2, 3) * 2)


def test_contiguous_result_is_row_major_so_its_view_aliases():
    """(x * 1).T.contiguous() was laid out as x.T (a clone keeps its operand's layout), so its view(-1) was a
    copy: v[0:2].mul_(10) left c at [[0, 3], [1, 4], [2, 5]] and x.grad[1, 0] at 1 (PyTorch: c[0, 1] == 30,
    x.grad[1, 0] == 10)."""
    results = {}
    libs = [sg]
    try:
        import torch
        libs.append(torch)
    except ImportError:
        pass
    for lib in libs:
        x = lib.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
        c = (x * 1).T.contiguous()
        assert c.is_contiguous()
        c.view(-1)[0:2].mul_(10.0)
        (c * lib.tensor(np.arange(6.0).reshape(3, 2))).sum().backward()
        results[lib.__name__] = c.detach().numpy(), x.grad.numpy()
    np.testing.assert_array_equal(results["symgrad"][0], [[0, 30], [1, 4], [2, 5]])
    np.testing.assert_array_equal(results["symgrad"][1], [[0, 2, 4], [10, 3, 5]])
    for got, expected in zip(results["symgrad"], results.get("torch", results["symgrad"])):
        np.testing.assert_array_equal(got, expected)


def test_numpy_refuses_a_tensor_that_requires_grad():
    """np.asarray(t), np.array([t, t]) or an ndarray's items assigned t took t's data while t required grad,
    silently dropping its history: out = np.zeros(3); out[:] = h made h's gradient 0 (PyTorch raises, "Can't
    call numpy() on Tensor that requires grad"). A ufunc (np.exp(t)) stays a tensor op; detached, under no_grad,
    or not requiring grad, NumPy reads it."""
    w = sg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    h = w * 2
    out = np.zeros(3)
    for convert in (np.asarray, lambda t: out.__setitem__(slice(None), t), lambda t: np.array([t, t])):
        with pytest.raises(RuntimeError, match="requires grad"):
            convert(h)
    assert not out.any() and np.exp(h).requires_grad
    s = sg.tensor(3.0, requires_grad=True)  # as torch.tensor([a, b]): a list of tensors copies their values
    np.testing.assert_array_equal(sg.tensor([s, s * 2, 1.0]).numpy(), [3.0, 6.0, 1.0])
    np.testing.assert_array_equal(sg.tensor([[s, 2.0], [h[0], s]]).numpy(), [[3.0, 2.0], [2.0, 3.0]])
    np.testing.assert_array_equal(np.asarray(h.detach()), [2.0, 4.0, 6.0])
    with sg.no_grad():  # PyTorch's rule: under no_grad NumPy may read a tensor that requires grad
        np.testing.assert_array_equal(np.asarray(w * 2), [2.0, 4.0, 6.0])
        out[:] = w
        np.testing.assert_array_equal(out, w.numpy())
    model = sg.nn.Linear(3, 1)  # sg.compile still reads parameters that require grad, at every call
    x = np.ones((2, 3))
    forward = sg.compile(lambda a: model(a))
    np.testing.assert_allclose(forward(x), model(sg.tensor(x)).detach().numpy(), rtol=1e-12)
    with sg.no_grad():
        model.weight.mul_(2.0)
    np.testing.assert_allclose(forward(x), model(sg.tensor(x)).detach().numpy(), rtol=1e-12)


COPIES = [lambda x: x.flip(0), lambda x: sg.flip(x, [1]), lambda x: sg.flip(x, dims=(0, 1)), lambda x: x.fliplr(),
          lambda x: sg.flipud(x), lambda x: x.rot90(), lambda x: sg.rot90(x, 2, [0, 1]), lambda x: x[0, 0].flip(0),
          lambda x: sg.cat([x]), lambda x: sg.concatenate([x], 1), lambda x: sg.stack([x])[0],
          lambda x: sg.vstack([x]), lambda x: sg.hstack([x])]


@pytest.mark.parametrize("make", COPIES)
def test_flip_rot90_and_cat_of_one_tensor_are_copies(make):
    """PyTorch's flip, rot90, cat and stack copy; symgrad's were NumPy's views (cat of one tensor: the tensor
    itself), so an in-place write to the result changed x: x.flip(0)[0] = 9 made x [[1, 2], [9, 9]]."""
    x = sg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = make(x)
    assert y is not x and not y.is_leaf
    w = sg.tensor(np.cos(np.arange(y.numel())).reshape(tuple(y.shape)))
    z = y * 1.0
    y.detach().mul_(0.0).add_(100.0)
    np.testing.assert_array_equal(x.detach().numpy(), [[1.0, 2.0], [3.0, 4.0]])
    (z * w).sum().backward()
    flat = np.arange(4.0).reshape(2, 2)  # the gradient: each weight sent back to the element moved to its place
    want = np.zeros(4)
    np.add.at(want, make(sg.tensor(flat)).numpy().ravel().astype(int), w.numpy().ravel())
    np.testing.assert_array_equal(x.grad.numpy().ravel(), want)


def test_numpy_concatenate_of_one_array_is_a_copy():
    """np.concatenate and np.stack copy; sg's of one array returned it (or a view of it)."""
    a = np.ones((2, 2))
    for result in (sg.concatenate([a]), sg.stack([a]), sg.concatenate([a], axis=1)):
        assert not np.shares_memory(result, a)


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_pad_of_no_widths_is_a_new_tensor(mode):
    """F.pad(x, (0, 0)) returned x itself (PyTorch's is a copy): an in-place write to it changed x, and a conv
    with padding_mode='reflect' and padding=0 saved its input, not the copy PyTorch's saves, so a NumPy write
    between forward and backward changed its weight gradient (-0.426 where PyTorch keeps 0.198)."""
    x = sg.tensor(np.ones((1, 1, 3)), requires_grad=True)
    y = sg.nn.functional.pad(x, (0, 0), mode=mode)
    assert y is not x and not y.is_leaf
    y.detach().mul_(5.0)
    np.testing.assert_array_equal(x.detach().numpy(), np.ones((1, 1, 3)))
    grads = []
    for write in (False, True):
        x_np = np.random.default_rng(0).standard_normal((2, 1, 5, 5))
        conv = sg.nn.Conv2d(1, 1, 3, padding=0, padding_mode="zeros" if mode == "constant" else mode,
                            dtype=sg.float64)
        with sg.no_grad():
            conv.weight.fill_(1.0), conv.bias.fill_(0.3)
        loss = sg.sigmoid(conv(sg.from_numpy(x_np))).sum()
        if write:
            x_np[1] = x_np[0][::-1]
        loss.backward()
        grads.append(conv.weight.grad.numpy())
    if mode != "constant":  # (a zeros padding of 0 saves the input itself, as PyTorch's: the write is read)
        np.testing.assert_array_equal(grads[0], grads[1])
