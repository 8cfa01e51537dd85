"""autograd.Function.apply on traced values (inside sg.compile, sg.grad, sg.vmap): a custom_vjp of its forward
and backward, so the transforms use the user's gradient; checked against the eager Function and float64 central
differences, with clear errors for what a trace cannot do."""
import numpy as np
import pytest

import symgrad as sg

X = np.array([0.5, -1.0, 2.0, 0.0])


class Cube(sg.autograd.Function):
    """k x^3 with a Python number k; backward scaled by `scale` so the tests see the user's rule is used."""

    scale = 1.0

    @staticmethod
    def forward(ctx, x, k):
        ctx.save_for_backward(x)
        ctx.k = k
        return k * x ** 3

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return Cube.scale * ctx.k * 3 * x ** 2 * g, None


class Sorted(sg.autograd.Function):
    """Sorted values and their indices, marked non-differentiable."""

    @staticmethod
    def forward(ctx, x):
        indices = sg.argsort(x)
        ctx.mark_non_differentiable(indices)
        ctx.save_for_backward(indices)
        return sg.sort(x), indices

    @staticmethod
    def backward(ctx, g_values, g_indices):
        indices, = ctx.saved_tensors
        return sg.zeros_like(g_values).at[indices].set(g_values)


def _loss(x):
    values, indices = Sorted.apply(Cube.apply(x, 2.0))
    return sg.sum(values * np.arange(4.0)) + sg.sum(sg.sin(values)) + sg.sum(indices) * 0.0


def test_the_users_gradient_under_grad_compile_and_vmap(monkeypatch):
    x = sg.tensor(X, requires_grad=True)
    _loss(x).backward()
    eager = x.grad.numpy()
    np.testing.assert_allclose(sg.grad(_loss)(X), eager, rtol=1e-14)
    np.testing.assert_allclose(sg.compile(sg.grad(_loss))(X), eager, rtol=1e-14)
    np.testing.assert_allclose(sg.compile(sg.grad(_loss), backend="numpy")(X), eager, rtol=1e-14)
    np.testing.assert_allclose(sg.compile(_loss)(X), _loss(sg.tensor(X)).item(), rtol=1e-14)
    rows = np.stack([X, -X, X * 3])
    np.testing.assert_allclose(sg.vmap(sg.grad(_loss))(rows), np.stack([sg.grad(_loss)(r) for r in rows]),
                               rtol=1e-14)
    monkeypatch.setattr(Cube, "scale", 2.0)  # the user's rule, not the autodiff of forward
    np.testing.assert_allclose(sg.grad(lambda x: sg.sum(Cube.apply(x, 1.0)))(X), 6 * X ** 2, rtol=1e-15)


def test_against_finite_differences():
    eps = 1e-6
    numeric = [(sg.compile(_loss)(X + eps * e) - sg.compile(_loss)(X - eps * e)) / (2 * eps) for e in np.eye(4)]
    np.testing.assert_allclose(sg.grad(_loss)(X), numeric, rtol=1e-7, atol=1e-9)


def test_second_reverse_derivative_and_tensor_arguments():
    second = sg.grad(lambda x: sg.sum(sg.grad(lambda y: sg.sum(Cube.apply(y, 2.0)))(x)))(X)
    np.testing.assert_allclose(second, 12 * X, rtol=1e-14)
    w = sg.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)  # a tensor argument is an input of the rule

    class Scale(sg.autograd.Function):
        @staticmethod
        def forward(ctx, x, w):
            ctx.save_for_backward(x, w)
            return x * w

        @staticmethod
        def backward(ctx, g):
            x, w = ctx.saved_tensors
            return g * w, g * x

    np.testing.assert_allclose(sg.grad(lambda x: sg.sum(Scale.apply(x, w) ** 2))(X), 2 * X * w.detach().numpy() ** 2)


def test_a_python_value_among_the_outputs_is_given_back():
    """forward may return Python values beside its tensors, as on tensors (it raised AttributeError: 'int' object
    has no attribute 'dtype'); backward gets None for them."""
    seen = []

    class WithCount(sg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return 5, x * 2, "label"

        @staticmethod
        def backward(ctx, g_count, g, g_label):
            seen.append((g_count, g_label))
            return g * 3

    returned = []

    def loss(x):
        returned.append(WithCount.apply(x))
        return sg.sum(returned[-1][1])

    np.testing.assert_array_equal(sg.grad(loss)(X), np.full(4, 3.0))
    assert seen == [(None, None)]
    assert (returned[0][0], returned[0][2]) == (5, "label") and type(returned[0][0]) is int
    np.testing.assert_array_equal(sg.compile(lambda x: WithCount.apply(x)[1])(X), 2 * X)


def test_errors():
    class StoresTraced(sg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.doubled = x * 2
            return x * 3

        @staticmethod
        def backward(ctx, g):
            return g * ctx.doubled

    with pytest.raises(sg.TracerError, match="StoresTraced.forward stored a traced value on ctx.doubled"):
        sg.grad(lambda x: sg.sum(StoresTraced.apply(x)))(X)

    class TensorMethods(sg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clamp(min=0)

    with pytest.raises(sg.UnsupportedOpError, match="TensorMethods.forward inside a trace .*'clamp'"):
        sg.compile(lambda x: sg.sum(TensorMethods.apply(x)))(X)
    with pytest.raises(sg.UnsupportedOpError, match="forward mode .* of Cube"):
        sg.jvp(lambda x: Cube.apply(x, 2.0), (X,), (X,))
