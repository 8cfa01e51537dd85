"""autograd.Function with several outputs, ctx.mark_non_differentiable, ctx.set_materialize_grads and
once_differentiable: what backward receives, which outputs require grad, and the gradients, as in PyTorch."""
import numpy as np
import pytest

import symgrad as sg

X = np.array([3.0, -1.0, 2.0, 0.0])


def _classes(lib):
    """The same Functions written against `lib` (symgrad or torch); each backward logs what it received."""
    log = []

    class Sort(lib.autograd.Function):
        """values and indices; the indices are marked non-differentiable."""

        @staticmethod
        def forward(ctx, x):
            values, indices = x.sort()
            ctx.mark_non_differentiable(indices)
            ctx.save_for_backward(indices)
            return values, indices

        @staticmethod
        def backward(ctx, g_values, g_indices):
            log.append(("sort", g_values.numpy().tolist(), g_indices.numpy().tolist()))
            indices, = ctx.saved_tensors
            return lib.zeros_like(g_values).scatter(0, indices, g_values)

    class Pair(lib.autograd.Function):
        """Two differentiable outputs, one of them saved; materialized or not."""

        @staticmethod
        def forward(ctx, x, materialize):
            ctx.set_materialize_grads(materialize)
            square, cube = x * x, x * x * x
            ctx.save_for_backward(x, cube)
            return square, cube

        @staticmethod
        def backward(ctx, g_square, g_cube):
            log.append(("pair", None if g_square is None else g_square.detach().numpy().tolist(),
                        None if g_cube is None else g_cube.detach().numpy().tolist()))
            x, cube = ctx.saved_tensors
            grad = 0
            if g_square is not None:
                grad = grad + 2 * x * g_square
            if g_cube is not None:
                grad = grad + 3 * cube / x * g_cube
            return grad, None

    class Mixed(lib.autograd.Function):
        """A tensor, a Python number and None: backward gets None for the two that are not tensors."""

        @staticmethod
        def forward(ctx, x):
            return x.exp(), 5, None

        @staticmethod
        def backward(ctx, g, g_number, g_none):
            log.append(("mixed", g_number, g_none))
            return g * 2

    return log, Sort, Pair, Mixed


def _run(lib):
    log, Sort, Pair, Mixed = _classes(lib)
    seen = []
    x = lib.tensor(X, requires_grad=True)
    values, indices = Sort.apply(x)
    seen.append((values.requires_grad, indices.requires_grad, indices.grad_fn is None, indices.dtype == lib.int64))
    (values * lib.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
    seen.append(x.grad.numpy().tolist())
    for materialize in (True, False):
        x = lib.tensor([1.0, 2.0, 4.0], requires_grad=True)
        square, cube = Pair.apply(x, materialize)
        square.sum().backward()  # cube got no gradient
        seen.append(x.grad.numpy().tolist())
        x.grad = None
        square, cube = Pair.apply(x, materialize)
        (square.sum() + 2 * cube.sum()).backward()
        seen.append(x.grad.numpy().tolist())
    x = lib.tensor([1.0, 2.0, 4.0], requires_grad=True)
    square, cube = Pair.apply(x, True)
    g, = lib.autograd.grad((square * cube).sum(), x, create_graph=True)  # the saved cube is in the graph
    g.sum().backward()
    seen.append((g.detach().numpy().tolist(), x.grad.numpy().tolist()))
    out, number, none = Mixed.apply(x)
    seen.append((number, none, out.requires_grad))
    out.sum().backward()
    return log, seen


def test_several_outputs_as_pytorch():
    torch = pytest.importorskip("torch")
    ours, theirs = _run(sg), _run(torch)
    assert ours[0] == theirs[0]  # what each backward received
    for a, b in zip(ours[1], theirs[1]):
        np.testing.assert_allclose(np.array(a, dtype=float), np.array(b, dtype=float), rtol=1e-14)


def test_several_outputs_against_finite_differences():
    _, _, Pair, _ = _classes(sg)
    x0 = np.array([0.5, -1.5, 2.0])
    weights = np.array([1.0, -2.0, 0.5])

    def loss(x):
        square, cube = Pair.apply(x, True)
        return (square * cube * sg.tensor(weights)).sum() + cube.sin().sum()

    x = sg.tensor(x0, requires_grad=True)
    loss(x).backward()
    eps = 1e-6
    numeric = [(loss(sg.tensor(x0 + eps * e)).item() - loss(sg.tensor(x0 - eps * e)).item()) / (2 * eps)
               for e in np.eye(3)]
    np.testing.assert_allclose(x.grad.numpy(), numeric, rtol=1e-7)


def test_marking_every_output_leaves_nothing_to_differentiate():
    class Floor(sg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            out = x.floor()
            ctx.mark_non_differentiable(out)
            return out

        @staticmethod
        def backward(ctx, g):
            raise AssertionError("never called")

    y = Floor.apply(sg.tensor(X, requires_grad=True))
    assert not y.requires_grad and y.grad_fn is None
    with pytest.raises(RuntimeError, match="does not require grad and does not have a grad_fn"):
        y.sum().backward()


def test_marking_an_input_is_a_clear_error():
    class Marks(sg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_non_differentiable(x)
            return x * 2

    with pytest.raises(sg.UnsupportedOpError, match="Marks.forward: ctx.mark_non_differentiable was given a tensor "
                                                    "that forward does not return"):
        Marks.apply(sg.tensor(X, requires_grad=True))
    with pytest.raises(sg.UnsupportedOpError, match="ctx.mark_dirty .* is not supported"):
        sg.autograd.FunctionCtx((), ()).mark_dirty(sg.tensor(X))
    with pytest.raises(TypeError, match="takes the tensors forward returns"):
        sg.autograd.FunctionCtx((), ()).mark_non_differentiable(3.0)


def test_hooks_and_retain_grad_on_each_output():
    _, _, Pair, _ = _classes(sg)
    x = sg.tensor([1.0, 2.0], requires_grad=True)
    square, cube = Pair.apply(x, True)
    cube.retain_grad()
    seen = []
    square.register_hook(lambda g: seen.append(g.numpy().tolist()) or g * 10)
    (square.sum() + cube.sum() * 3).backward()
    assert seen == [[1.0, 1.0]]
    np.testing.assert_array_equal(cube.grad.numpy(), [3.0, 3.0])
    np.testing.assert_allclose(x.grad.numpy(), 20 * np.array([1.0, 2.0]) + 9 * np.array([1.0, 4.0]))


def test_autograd_grad_with_respect_to_an_output():
    _, _, Pair, _ = _classes(sg)
    x = sg.tensor([1.0, 2.0], requires_grad=True)
    square, cube = Pair.apply(x, True)
    g_square, g_x = sg.autograd.grad((square * cube).sum(), [square, x])
    np.testing.assert_allclose(g_square.numpy(), [1.0, 8.0])
    np.testing.assert_allclose(g_x.numpy(), 5 * np.array([1.0, 2.0]) ** 4)


class Cube(sg.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    @sg.autograd.once_differentiable
    def backward(ctx, g):
        assert not sg.is_grad_enabled()
        x, = ctx.saved_tensors
        return 3 * x ** 2 * g


def test_once_differentiable():
    from symgrad.autograd.function import Function, once_differentiable  # (torch.autograd.function's path: the conv
    assert once_differentiable is sg.autograd.once_differentiable and Function is sg.autograd.Function  # bn tutorial)
    x = sg.tensor([1.0, 2.0], requires_grad=True)
    Cube.apply(x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 12.0])
    g, = sg.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)  # as PyTorch: no history, no error yet
    assert not g.requires_grad
    with pytest.raises(RuntimeError, match="trying to differentiate twice a function that was marked with "
                                           "@once_differentiable"):
        sg.autograd.functional.jvp(Cube.apply, x, sg.tensor([1.0, 0.0]))  # its gradient depends on grad_outputs


def test_once_differentiable_matches_pytorch():
    """PyTorch raises the same error for a second backward through it; its jvp (the double-backward trick)
    silently gives zeros, where symgrad raises (above)."""
    torch = pytest.importorskip("torch")
    from torch.autograd.function import once_differentiable

    class TorchCube(torch.autograd.Function):
        forward = staticmethod(Cube.forward)

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 3 * x ** 2 * g

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = TorchCube.apply(x)
    g, = torch.autograd.grad(y, x, torch.zeros_like(y, requires_grad=True), create_graph=True)
    with pytest.raises(RuntimeError, match="trying to differentiate twice"):
        g.sum().backward()
    _, jv = torch.autograd.functional.jvp(TorchCube.apply, torch.tensor([1.0, 2.0]), torch.tensor([1.0, 0.0]))
    assert jv.tolist() == [0.0, 0.0]
    x = sg.tensor([1.0, 2.0], requires_grad=True)
    y = Cube.apply(x)
    g, = sg.autograd.grad(y, x, sg.zeros_like(y, requires_grad=True), create_graph=True)
    with pytest.raises(RuntimeError, match="trying to differentiate twice"):
        g.sum().backward()


def _setup_context_function(lib):
    """PyTorch 2's form: forward without ctx, setup_context saving and marking."""

    class MaxAndIndex(lib.autograd.Function):
        @staticmethod
        def forward(x):
            index = x.argmax()
            return x[index] * 2, index

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, = inputs
            ctx.mark_non_differentiable(output[1])
            ctx.save_for_backward(output[1])
            ctx.size = x.shape[0]

        @staticmethod
        def backward(ctx, g, g_index):
            index, = ctx.saved_tensors
            grad = lib.zeros(ctx.size, dtype=g.dtype)
            grad[index] = 2 * g
            return grad

    return MaxAndIndex


def test_setup_context_form():
    results = []
    libs = [sg]
    try:
        import torch
        libs.append(torch)
    except ImportError:
        pass
    for lib in libs:
        x = lib.tensor(X, requires_grad=True)
        value, index = _setup_context_function(lib).apply(x)
        (value * 3).backward()
        results.append((value.item(), index.item(), index.requires_grad, x.grad.numpy().tolist()))
    assert results[0] == (6.0, 0, False, [6.0, 0.0, 0.0, 0.0])
    assert all(r == results[0] for r in results)
    with pytest.raises(sg.TracerError, match="item assignment into a traced array"):  # traced: its backward writes
        sg.grad(lambda x: _setup_context_function(sg).apply(x)[0])(X)


def _edges(lib):
    """A second backward through the other output after the saved tensors were freed, empty, 0-d and inf."""

    class SumAndDouble(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.sum(), x * 2

        @staticmethod
        def backward(ctx, g_sum, g_double):
            x, = ctx.saved_tensors
            return g_sum * lib.ones_like(x) + 2 * g_double

    seen = []
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    total, double = SumAndDouble.apply(x)
    total.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        double.sum().backward()
    empty = lib.tensor(np.zeros((0, 3)), requires_grad=True)
    total, double = SumAndDouble.apply(empty)
    (total + double.sum()).backward()
    seen.append((tuple(empty.grad.shape), tuple(total.shape)))
    scalar = lib.tensor(0.0, requires_grad=True)
    total, double = SumAndDouble.apply(scalar)
    (total * double).backward()
    seen.append(float(scalar.grad))
    x = lib.tensor([np.inf, -1.0], requires_grad=True)
    total, double = SumAndDouble.apply(x)
    double.sum().backward()
    seen.append(x.grad.tolist())
    return seen


def test_edge_values_as_pytorch():
    ours = _edges(sg)
    assert ours == [((0, 3), ()), 0.0, [2.0, 2.0]]
    torch = pytest.importorskip("torch")
    assert _edges(torch) == ours
