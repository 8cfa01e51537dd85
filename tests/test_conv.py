"""Convolution and pooling (im2col/col2im primitives, sg.nn.functional): values and gradients against finite
differences (float64), PyTorch (float32 and float64, skipped when absent), on the NumPy and LLVM backends and on
eager tensors; forward mode, vmap, edge shapes and errors."""
import numpy as np
import pytest
from llvmlite import ir

import symgrad as sg
from symgrad.codegen.llvm import blas, kernel, rules
from symgrad.compiler import Compiled
from symgrad.ops.conv import col2im_p, im2col_p
from gradcheck import numeric_grad

F = sg.nn.functional
BACKENDS = ["numpy", "llvm"]
DTYPES = [np.float64, np.float32]
TOLERANCE = {np.float64: 1e-9, np.float32: 2e-4}

# (functional name, input shape, weight shape or None, keyword arguments)
CASES = [
    ("conv2d", (2, 4, 7, 6), (6, 4, 3, 2), {}),
    ("conv2d", (2, 4, 7, 6), (6, 4, 3, 3), {"stride": 2, "padding": 1}),
    ("conv2d", (2, 4, 7, 6), (6, 2, 3, 2), {"stride": (2, 1), "padding": (1, 2), "dilation": (1, 2), "groups": 2}),
    ("conv2d", (1, 3, 5, 5), (4, 3, 2, 2), {"padding": "same"}),
    ("conv2d", (2, 3, 5, 5), (4, 3, 3, 3), {"padding": "valid", "bias": False}),
    ("conv2d", (3, 5, 4), (2, 3, 3, 3), {"padding": 1}),  # unbatched
    ("conv1d", (2, 3, 9), (5, 3, 4), {"padding": "same", "dilation": 2}),
    ("conv1d", (2, 4, 9), (4, 1, 3), {"stride": 3, "groups": 4}),
    ("conv3d", (2, 3, 5, 4, 6), (4, 3, 2, 3, 3), {"stride": (1, 2, 1), "padding": (1, 0, 1), "dilation": (2, 1, 1)}),
    ("max_pool2d", (2, 3, 7, 6), None, {"kernel_size": 2}),
    ("max_pool2d", (2, 3, 7, 6), None, {"kernel_size": 3, "stride": 2, "padding": 1}),
    ("max_pool2d", (2, 3, 7, 6), None, {"kernel_size": (3, 2), "stride": 1, "dilation": 2}),
    ("max_pool1d", (2, 3, 9), None, {"kernel_size": 3, "stride": 2, "padding": 1}),
    ("avg_pool2d", (2, 3, 7, 6), None, {"kernel_size": 2}),
    ("avg_pool2d", (2, 3, 7, 6), None, {"kernel_size": 3, "stride": 2, "padding": 1}),
    ("avg_pool2d", (2, 3, 7, 6), None, {"kernel_size": 3, "stride": 1, "padding": 1, "count_include_pad": False}),
    ("avg_pool1d", (2, 3, 9), None, {"kernel_size": 4, "stride": 2, "padding": 2}),
    ("max_pool2d", (2, 3, 7, 6), None, {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True}),
    ("max_pool1d", (2, 3, 10), None, {"kernel_size": 3, "stride": 2, "ceil_mode": True}),
    ("avg_pool2d", (2, 3, 7, 6), None, {"kernel_size": 3, "stride": 2, "ceil_mode": True}),
    ("avg_pool2d", (2, 3, 8, 7), None, {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True}),
    ("avg_pool2d", (2, 3, 8, 7), None, {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True,
                                        "count_include_pad": False}),
    ("adaptive_avg_pool2d", (2, 3, 7, 6), None, {"output_size": (3, 4)}),
    ("adaptive_avg_pool2d", (2, 3, 8, 6), None, {"output_size": (1, 1)}),
    ("adaptive_avg_pool1d", (2, 3, 9), None, {"output_size": 4}),
    ("conv_transpose2d", (2, 4, 5, 6), (4, 3, 3, 2), {}),
    ("conv_transpose2d", (2, 4, 4, 5), (4, 3, 3, 3), {"stride": 2, "padding": 1, "output_padding": 1}),
    ("conv_transpose2d", (2, 4, 4, 5), (4, 2, 3, 2), {"stride": (2, 3), "padding": (1, 2), "output_padding": (1, 0),
                                                      "groups": 2, "dilation": (1, 2)}),
    ("conv_transpose1d", (2, 3, 6), (3, 2, 4), {"padding": 1, "output_padding": 2, "dilation": 3}),  # op > padding
    ("conv_transpose1d", (3, 6), (3, 2, 2), {"stride": 3, "bias": False}),  # unbatched
    ("conv_transpose3d", (1, 2, 3, 2, 3), (2, 2, 2, 3, 2), {"stride": (2, 1, 2), "padding": (1, 0, 0),
                                                            "output_padding": (1, 0, 1)}),
]
IDS = [f"{name}-{i}" for i, (name, *_) in enumerate(CASES)]


def _arguments(case, dtype, seed=0):
    name, shape, weight_shape, kwargs = case
    rng = np.random.default_rng(seed)
    args = [rng.standard_normal(shape).astype(dtype)]
    kwargs = dict(kwargs)
    if weight_shape is not None:
        args.append(rng.standard_normal(weight_shape).astype(dtype))
        if kwargs.get("bias", True):
            channels = weight_shape[1] * kwargs.get("groups", 1) if "transpose" in name else weight_shape[0]
            args.append(rng.standard_normal(channels).astype(dtype))
        else:
            kwargs["bias"] = None
    return args, kwargs


def _loss(name, kwargs, lib=sg):
    """A scalar of the layer's output that weighs every element differently."""
    def loss(*args):
        out = getattr(lib.nn.functional, name)(*args, **kwargs)
        ramp = np.linspace(-1.0, 1.0, int(np.prod(out.shape))).reshape(tuple(out.shape))
        ramp = ramp.astype(np.dtype(out.dtype)) if lib is sg else lib.tensor(ramp, dtype=out.dtype)
        return lib.sum(lib.sin(out) * ramp)
    return loss


def _torch_result(case, args, kwargs):
    torch = pytest.importorskip("torch")
    tensors = [torch.tensor(a, requires_grad=True) for a in args]
    loss = _loss(case[0], kwargs, torch)(*tensors)
    loss.backward()
    return loss.item(), [t.grad.numpy() for t in tensors]


def test_the_llvm_backend_lowers_the_primitives_itself():
    assert rules.has_rule(im2col_p) and rules.has_rule(col2im_p)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_gradients_match_finite_differences_on_both_backends(case):
    args, kwargs = _arguments(case, np.float64)
    loss = _loss(case[0], kwargs)
    argnums = tuple(range(len(args)))
    forward = sg.compile(loss, backend="numpy")  # the differences of the eager value: a call costs a tenth
    assert float(forward(*args)) == pytest.approx(float(loss(*args)), rel=1e-12)
    expected = [numeric_grad(forward, args, i) for i in argnums]
    for backend in BACKENDS:
        value, grads = sg.compile(sg.value_and_grad(loss, argnums=argnums), backend=backend)(*args)
        assert float(value) == pytest.approx(float(loss(*args)), rel=1e-12)
        for got, want in zip(grads, expected):
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8, err_msg=backend)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_values_and_gradients_match_pytorch_on_both_backends_and_eager(case, dtype):
    args, kwargs = _arguments(case, dtype)
    want_value, want_grads = _torch_result(case, args, kwargs)
    loss = _loss(case[0], kwargs)
    argnums = tuple(range(len(args)))
    tol = TOLERANCE[dtype]
    for backend in BACKENDS:
        value, grads = sg.compile(sg.value_and_grad(loss, argnums=argnums), backend=backend)(*args)
        assert np.asarray(value).dtype == dtype
        assert float(value) == pytest.approx(want_value, rel=tol, abs=tol)
        for got, i in zip(grads, argnums):
            assert got.dtype == dtype
            np.testing.assert_allclose(got, want_grads[i], rtol=tol, atol=tol, err_msg=backend)
    tensors = [sg.tensor(a, requires_grad=True) for a in args]
    for step in range(3):  # the third backward runs the captured, compiled adjoint
        for t in tensors:
            t.grad = None
        out = loss(*tensors)
        out.backward()
        assert out.item() == pytest.approx(want_value, rel=tol, abs=tol)
        for t, want in zip(tensors, want_grads):
            np.testing.assert_allclose(t.grad.numpy(), want, rtol=tol, atol=tol, err_msg=f"eager step {step}")


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_max_pool_gives_the_gradient_to_the_first_maximum_as_pytorch(backend, dtype):
    x = np.array([[[[1, 3, 3, 0], [3, 2, 1, 3], [0, 0, 0, 0], [0, 0, 5, 5]]]], dtype=dtype)
    grad = sg.compile(sg.grad(lambda x: sg.sum(F.max_pool2d(x, 2, stride=1) * np.arange(1.0, 10).reshape(3, 3))),
                      backend=backend)(x)
    # windows in row-major order; ties go to the first: (0,1) for windows (0,0) and (0,1), (3,2) for (2,1), (2,2)
    expected = np.array([[[[0, 3, 3, 0], [4, 5, 0, 6], [7, 0, 0, 0], [0, 0, 17, 0]]]], dtype=dtype)
    np.testing.assert_array_equal(grad, expected)
    torch = pytest.importorskip("torch")
    t = torch.tensor(x, requires_grad=True)
    weights = torch.arange(1.0, 10, dtype=t.dtype).reshape(3, 3)
    (torch.nn.functional.max_pool2d(t, 2, stride=1) * weights).sum().backward()
    np.testing.assert_array_equal(grad, t.grad.numpy())


@pytest.mark.parametrize("backend", BACKENDS)
def test_max_pool_propagates_nan_and_infinities(backend):
    x = np.array([[[[np.nan, 1.0], [2.0, 3.0]], [[-np.inf, -np.inf], [-np.inf, 0.0]], [[np.inf, 1.0], [2.0, 3.0]]]])
    out = sg.compile(lambda x: F.max_pool2d(x, 2), backend=backend)(x)
    np.testing.assert_array_equal(out.reshape(-1), [np.nan, 0.0, np.inf])


@pytest.mark.parametrize("backend", BACKENDS)
def test_max_pool_keeps_the_sign_of_a_zero_maximum(backend):
    """A window of -0.0 pools to -0.0, as PyTorch and NumPy (LLVM summed the first maximum with zeros: 0.0)."""
    x = np.array([[[-0.0, -0.0, 0.0, -0.0, -1.0, -0.0]]])
    eager = lambda x: F.max_pool1d(sg.tensor(x), 2).numpy()  # noqa: E731
    for f in (sg.compile(lambda x: F.max_pool1d(x, 2), backend=backend), eager):
        out = f(x).reshape(-1)
        np.testing.assert_array_equal(out, [0.0, 0.0, 0.0])
        np.testing.assert_array_equal(np.signbit(out), [True, False, True])


@pytest.mark.parametrize("case", [c for c in CASES if c[0].startswith("conv")][:4], ids=IDS[:4])
def test_forward_mode_matches_finite_differences(case):
    args, kwargs = _arguments(case, np.float64)
    fn = getattr(F, case[0])
    rng = np.random.default_rng(1)
    tangents = tuple(rng.standard_normal(a.shape) for a in args)
    out, tangent = sg.jvp(lambda *xs: fn(*xs, **kwargs), tuple(args), tangents)
    eps = 1e-6
    plus = fn(*[a + eps * t for a, t in zip(args, tangents)], **kwargs)
    minus = fn(*[a - eps * t for a, t in zip(args, tangents)], **kwargs)
    np.testing.assert_allclose(tangent, (plus - minus) / (2 * eps), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(out, fn(*args, **kwargs), rtol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_vmap_of_a_convolution_and_pooling_equals_the_examples_one_by_one(backend):
    rng = np.random.default_rng(2)
    xs, w = rng.standard_normal((3, 2, 2, 6, 5)), rng.standard_normal((4, 2, 3, 3))

    def layer(x, w):
        return F.max_pool2d(F.conv2d(x, w, padding=1), 2) + F.avg_pool2d(F.conv2d(x, w, padding=1), 2)
    batched = sg.compile(sg.vmap(layer, in_axes=(0, None)), backend=backend)(xs, w)
    np.testing.assert_allclose(batched, np.stack([layer(x, w) for x in xs]), rtol=1e-12, atol=1e-12)
    grads = sg.compile(sg.vmap(sg.grad(lambda x, w: sg.sum(layer(x, w) ** 2), argnums=1), in_axes=(0, None)),
                       backend=backend)(xs, w)
    one_by_one = [sg.grad(lambda x, w: sg.sum(layer(x, w) ** 2), argnums=1)(x, w) for x in xs]
    np.testing.assert_allclose(grads, np.stack(one_by_one), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_an_empty_batch_gives_empty_results_and_zero_gradients(backend, dtype):
    x, w = np.zeros((0, 2, 5, 5), dtype), np.ones((3, 2, 3, 3), dtype)
    out = sg.compile(lambda x, w: F.max_pool2d(F.conv2d(x, w, padding=1), 2), backend=backend)(x, w)
    assert out.shape == (0, 3, 2, 2) and out.dtype == dtype
    grad = sg.compile(sg.grad(lambda w, x: sg.sum(F.conv2d(x, w)), argnums=0), backend=backend)(w, x)
    np.testing.assert_array_equal(grad, np.zeros_like(w))


def test_im2col_and_col2im_are_each_others_transpose():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 6, 5))
    window = dict(kernel=(3, 2), stride=(2, 1), dilation=(1, 2), padding=((1, 2), (0, 1)))
    cols = im2col_p(x, fill="0", **window)
    other = rng.standard_normal(cols.shape)
    image = col2im_p(other, spatial=(6, 5), **window)
    assert np.vdot(cols, other) == pytest.approx(np.vdot(x, image), rel=1e-12)


@pytest.mark.parametrize("shape, window, fill, dtype", [
    ((2, 3, 6, 5), dict(kernel=(3, 2), stride=(2, 1), dilation=(1, 2), padding=((1, 2), (0, 1))), "0", np.float32),
    ((2, 3, 6, 5), dict(kernel=(2, 2), stride=(2, 2), dilation=(1, 1), padding=((1, 1), (1, 0))), "-inf", np.float64),
    ((0, 2, 4), dict(kernel=(3,), stride=(1,), dilation=(1,), padding=((2, 1),)), "0", np.float32),  # empty batch
    ((1, 2, 3, 4, 3), dict(kernel=(2, 3, 2), stride=(1, 2, 1), dilation=(1, 1, 2), padding=((1, 0), (0, 1), (2, 2))),
     "0", np.int64),
])
def test_numpy_im2col_is_the_padded_image_at_each_window_position(shape, window, fill, dtype):
    """The NumPy im2col (an eager convolution of an input that requires no grad runs it every step), against its
    definition: patches[n, c, *j, *o] = x[n, c, *(o * stride + j * dilation - lo)], or `fill` outside x."""
    x = (np.random.default_rng(5).standard_normal(shape) * 4).astype(dtype)
    cols = im2col_p(x, fill=fill, **window)
    kernel, stride, dilation, padding = (window[name] for name in ("kernel", "stride", "dilation", "padding"))
    expected = np.full(cols.shape, np.asarray(float(fill)).astype(dtype), dtype)
    d = len(kernel)
    for index in np.ndindex(*cols.shape):
        at = [o * s + j * dl - lo for j, o, s, dl, (lo, _) in zip(index[2:2 + d], index[2 + d:], stride, dilation,
                                                                  padding)]
        if all(0 <= a < n for a, n in zip(at, shape[2:])):
            expected[index] = x[(*index[:2], *at)]
    assert cols.dtype == dtype and cols.flags.c_contiguous
    np.testing.assert_array_equal(cols, expected)


COL2IM_WINDOWS = [
    ((6, 5), dict(kernel=(3, 2), stride=(2, 1), dilation=(1, 2), padding=((1, 2), (0, 1)))),
    ((2, 3), dict(kernel=(5, 3), stride=(1, 1), dilation=(1, 1), padding=((2, 2), (1, 1)))),  # offsets off the image
    ((7, 7), dict(kernel=(3, 3), stride=(3, 2), dilation=(2, 1), padding=((2, 0), (1, 1)))),
    ((1, 4), dict(kernel=(3, 1), stride=(1, 2), dilation=(1, 1), padding=((1, 1), (0, 0)))),
]


@pytest.mark.parametrize("spatial, window", COL2IM_WINDOWS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_col2im_on_the_llvm_backend_equals_numpys(spatial, window, dtype):
    """The native col2im (a loop per kernel offset over the positions landing inside the image) against the
    NumPy implementation (a strided add per offset into the padded image)."""
    rng = np.random.default_rng(4)
    cols = im2col_p(rng.standard_normal((3, 2, *spatial)).astype(dtype), fill="0", **window)
    other = rng.standard_normal(cols.shape).astype(dtype)
    native = sg.compile(lambda c: col2im_p(c, spatial=spatial, **window), backend="llvm")(other)
    np.testing.assert_allclose(native, col2im_p(other, spatial=spatial, **window), rtol=1e-6 if dtype == np.float32
                               else 1e-13)


@pytest.mark.parametrize("call, error, words", [
    (lambda: F.conv2d(np.ones((1, 3, 5, 5)), np.ones((4, 2, 3, 3))), ValueError, "expected input"),
    (lambda: F.conv2d(np.ones((1, 4, 5, 5)), np.ones((3, 2, 3, 3)), groups=2), ValueError, "groups=2"),
    (lambda: F.conv2d(np.ones((1, 3, 2, 2)), np.ones((4, 3, 3, 3))), ValueError, "does not fit"),
    (lambda: F.conv2d(np.ones((5, 5)), np.ones((4, 3, 3, 3))), ValueError, "got shape (5, 5)"),
    (lambda: F.conv2d(np.ones((1, 3, 5, 5)), np.ones((4, 3, 3, 3)), stride=2, padding="same"), ValueError, "same"),
    (lambda: F.conv2d(np.ones((1, 3, 5, 5)), np.ones((4, 3, 3, 3)), padding="full"), ValueError, "padding string"),
    (lambda: F.conv2d(np.ones((1, 3, 5, 5), np.int64), np.ones((4, 3, 3, 3))), TypeError, "float"),
    (lambda: F.max_pool2d(np.ones((1, 1, 2, 2)), 3, padding=1, dilation=2), ValueError, "does not fit"),
    (lambda: F.max_pool2d(np.ones((1, 1, 4, 4)), 2, padding=2), ValueError, "at most half"),
    (lambda: F.avg_pool2d(np.ones((1, 1, 4, 4), np.int64), 2), TypeError, "float"),
])
def test_bad_arguments_are_clear_errors(call, error, words):
    with pytest.raises(error, match=None) as info:
        call()
    assert words in str(info.value)


def test_vmap_batches_the_primitives_into_one_call_not_a_loop_over_examples():
    xs, w = np.ones((3, 2, 2, 6, 5)), np.ones((4, 2, 3, 3))
    graph = sg.trace(sg.vmap(sg.grad(lambda x, w: sg.sum(F.max_pool2d(F.conv2d(x, w, padding=1), 2) ** 2)),
                             in_axes=(0, None)), xs, w)
    names = [node.prim.name for node in graph.nodes]
    assert "scan" not in names and "im2col" in names and "col2im" in names


@pytest.mark.parametrize("dtype", DTYPES)
def test_infinities_and_nan_propagate_alike_on_both_backends_and_eager(dtype):
    x = np.zeros((1, 2, 5, 5), dtype)
    x[0, 0, 0, 0], x[0, 1, 4, 4] = np.inf, np.nan
    w = np.linspace(0.1, 1, 2 * 2 * 2 * 2).reshape(2, 2, 2, 2).astype(dtype)

    def layers(x, w):
        return F.avg_pool2d(F.conv2d(x, w, padding=1), 2, stride=1), F.adaptive_avg_pool2d(x, 2)
    expected = [np.asarray(a) for a in layers(x, w)]
    for out in expected:
        assert np.isnan(out).any() and np.isinf(out).any() and np.isfinite(out).any()
    for backend in BACKENDS:
        for got, want in zip(sg.compile(layers, backend=backend)(x, w), expected):
            np.testing.assert_array_equal(got, want, err_msg=backend)
    for got, want in zip(layers(sg.tensor(x), sg.tensor(w, requires_grad=True)), expected):
        np.testing.assert_array_equal(got.detach().numpy(), want)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_float32_image_and_float64_weights_promote_as_numpy_does(backend):
    x, w = np.ones((1, 2, 4, 4), np.float32), np.full((3, 2, 3, 3), 0.5)
    out = sg.compile(lambda x, w: F.conv2d(x, w, padding=1), backend=backend)(x, w)
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, F.conv2d(x.astype(np.float64), w, padding=1))
    assert F.conv2d(sg.tensor(x), sg.tensor(w, requires_grad=True)).dtype == np.float64


@pytest.mark.parametrize("shape, kwargs", [
    ((2, 3, 7, 6), {"kernel_size": 2}),
    ((2, 3, 7, 6), {"kernel_size": 3, "stride": 2, "padding": 1}),
    ((2, 3, 7, 6), {"kernel_size": (3, 2), "stride": 1, "dilation": 2}),
    ((3, 7, 6), {"kernel_size": 3, "stride": 2, "ceil_mode": True}),  # unbatched
])
def test_max_pool_indices_match_pytorch_and_max_unpool_inverts_them(shape, kwargs):
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(0).standard_normal(shape)
    x[..., 0, :2] = 5.0  # ties: the first maximum's index
    values, indices = F.max_pool2d(sg.tensor(x), return_indices=True, **kwargs)
    want_values, want_indices = torch.nn.functional.max_pool2d(torch.tensor(x), return_indices=True, **kwargs)
    np.testing.assert_array_equal(values.numpy(), want_values.numpy())
    np.testing.assert_array_equal(indices.numpy(), want_indices.numpy())
    assert indices.dtype == np.int64
    arrays = F.max_pool2d(x, return_indices=True, **kwargs)  # on arrays: (array, array)
    np.testing.assert_array_equal(arrays[1], want_indices.numpy())
    if "dilation" in kwargs or "ceil_mode" in kwargs:
        return
    unpool = sg.nn.MaxUnpool2d(kwargs["kernel_size"], kwargs.get("stride"), kwargs.get("padding", 0))
    mine = sg.tensor(values.numpy(), requires_grad=True)
    theirs = torch.tensor(values.numpy(), requires_grad=True)
    out = unpool(mine, indices, output_size=shape)
    expected = torch.nn.MaxUnpool2d(kwargs["kernel_size"], kwargs.get("stride"), kwargs.get("padding", 0))(
        theirs, want_indices, output_size=shape)
    np.testing.assert_array_equal(out.detach().numpy(), expected.detach().numpy())
    weights = np.random.default_rng(1).standard_normal(shape)
    (out * sg.tensor(weights)).sum().backward()
    (expected * torch.tensor(weights)).sum().backward()
    if kwargs.get("stride", 2) >= kwargs["kernel_size"]:  # no repeated index: PyTorch's gradient, a gather
        np.testing.assert_array_equal(mine.grad.numpy(), theirs.grad.numpy())


@pytest.mark.parametrize("backend", BACKENDS)
def test_max_unpool_gradient_matches_finite_differences(backend):
    x = np.random.default_rng(2).standard_normal((2, 3, 6, 4))
    _, indices = F.max_pool2d(x, 2, return_indices=True)
    pooled = np.random.default_rng(3).standard_normal((2, 3, 3, 2))
    ramp = np.linspace(-1, 1, 2 * 3 * 7 * 4).reshape(2, 3, 7, 4)

    def loss(v):
        return sg.sum(sg.sin(F.max_unpool2d(v, indices, 2, output_size=(7, 4))) * ramp)
    grad = sg.compile(sg.grad(loss), backend=backend)(pooled)
    np.testing.assert_allclose(grad, numeric_grad(loss, [pooled], 0), rtol=1e-6, atol=1e-8)


def test_max_pool_index_of_a_window_of_padding_and_minus_infinities_is_its_first_place_in_the_input():
    """A window whose places in x are all -inf ties with its -inf padding: PyTorch's index is the first place in x
    (it was the padding's, a negative or neighbouring index)."""
    torch = pytest.importorskip("torch")
    x = np.full((1, 1, 4, 5), -np.inf)
    x[0, 0, 2:, 2:] = np.arange(6.0).reshape(2, 3)
    x[0, 0, 3, 0] = np.nan
    for kwargs in [dict(kernel_size=2, stride=2, padding=1), dict(kernel_size=3, stride=2, padding=1),
                   dict(kernel_size=3, stride=1, padding=1, dilation=2)]:
        values, indices = F.max_pool2d(sg.tensor(x), return_indices=True, **kwargs)
        want_values, want_indices = torch.nn.functional.max_pool2d(torch.tensor(x), return_indices=True, **kwargs)
        np.testing.assert_array_equal(indices.numpy(), want_indices.numpy())
        np.testing.assert_array_equal(values.numpy(), want_values.numpy())
    line = np.array([[[-np.inf, -np.inf, -np.inf, 1.0]]])
    assert F.max_pool1d(line, 2, 2, padding=1, return_indices=True)[1].tolist() == [[[0, 1, 3]]]


@pytest.mark.parametrize("backend", BACKENDS)
def test_max_pool_gradient_of_a_window_of_padding_and_minus_infinities_goes_to_its_first_place_in_the_input(backend):
    """The gradient goes where the index points: a window whose places in x are all -inf gives it to the first of
    them, as PyTorch's (it went to the -inf padding before them, and was lost), on every path."""
    line = np.array([[[-np.inf, -np.inf, -np.inf, 2.0]]])
    weights = np.arange(1.0, 6.0)  # windows [pad, 0] [0, 1] [1, 2] [2, 3] [3, pad]: to 0, 0, 1, 3, 3
    expected = [[[1.0 + 2.0, 3.0, 0.0, 4.0 + 5.0]]]
    loss = lambda x: sg.sum(F.max_pool1d(x, 2, 1, padding=1) * weights)  # noqa: E731
    np.testing.assert_array_equal(sg.compile(sg.grad(loss), backend=backend)(line), expected)
    t = sg.tensor(line, requires_grad=True)
    loss(t).backward()
    np.testing.assert_array_equal(t.grad.numpy(), expected)
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    for d, kwargs in [(1, dict(kernel_size=3, stride=2, padding=1)), (2, dict(kernel_size=2, stride=1, padding=1)),
                      (2, dict(kernel_size=3, stride=2, padding=1, dilation=2, ceil_mode=True)),
                      (3, dict(kernel_size=(2, 3, 2), stride=(1, 2, 2), padding=(1, 1, 0)))]:
        x = rng.choice([-np.inf, -np.inf, -np.inf, 0.5, -1.0], size=(2, 2) + (5,) * d)
        grads = []
        for lib in (sg, torch):
            t = lib.tensor(x, dtype=lib.float64, requires_grad=True)
            out = getattr(lib.nn.functional, f"max_pool{d}d")(t, **kwargs)
            (out * lib.tensor(np.arange(1.0, out.numel() + 1).reshape(tuple(out.shape)))).sum().backward()
            grads.append(t.grad.numpy())
        np.testing.assert_array_equal(*grads, err_msg=str(kwargs))


def test_max_pool_indices_edge_cases_and_unpool_errors():
    x = np.array([[[[1.0, np.nan, 2.0, np.nan]]]])
    assert F.max_pool2d(x, (1, 4), return_indices=True)[1].tolist() == [[[[3]]]]  # PyTorch: the last NaN
    values, indices = F.max_pool1d(sg.tensor(np.array([[[-np.inf, -np.inf, 3.0]]])), 2, stride=1, return_indices=True)
    assert indices.tolist() == [[[0, 2]]] and values.numpy().tolist() == [[[-np.inf, 3.0]]]
    empty = F.max_pool2d(np.ones((0, 2, 4, 4)), 2, return_indices=True)
    assert empty[0].shape == empty[1].shape == (0, 2, 2, 2)
    with pytest.raises(sg.UnsupportedOpError, match="concrete input"):
        sg.grad(lambda v: sg.sum(F.max_pool2d(v, 2, return_indices=True)[0]))(np.ones((1, 1, 4, 4)))
    with pytest.raises(ValueError, match="invalid max index"):
        F.max_unpool2d(np.ones((1, 1, 2, 2)), np.full((1, 1, 2, 2), 16), 2)
    with pytest.raises(ValueError, match="indices must be integers of the input's shape"):
        F.max_unpool2d(np.ones((1, 1, 2, 2)), np.zeros((1, 1, 2)), 2)
    repeated = F.max_unpool1d(np.array([[[1.0, 2.0]]]), np.array([[[1, 1]]]), 2)
    assert np.asarray(repeated).tolist() == [[[0.0, 2.0, 0.0, 0.0]]]  # the last element at a repeated index


def test_max_pool3d_indices_and_max_unpool3d_match_pytorch():
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(4).standard_normal((1, 2, 4, 4, 6))
    values, indices = F.max_pool3d(sg.tensor(x), 2, return_indices=True)
    want_values, want_indices = torch.nn.functional.max_pool3d(torch.tensor(x), 2, return_indices=True)
    np.testing.assert_array_equal(indices.numpy(), want_indices.numpy())
    restored = sg.nn.MaxUnpool3d(2)(values, indices)
    np.testing.assert_array_equal(restored.numpy(), torch.nn.MaxUnpool3d(2)(want_values, want_indices).numpy())


def test_the_llvm_plan_of_a_convolution_holds_one_examples_patches_at_a_time():
    """The forward product and both gradients' read or write im2col's patches one example at a time (filled
    in cache just before each BLAS call, summed by col2im just after): no buffer holds all examples' patches."""
    if not blas.addresses():
        pytest.skip("no BLAS found next to NumPy")
    x, w = np.ones((6, 4, 10, 9)), np.ones((5, 4, 3, 3))

    def loss(x, w):
        return sg.sum(sg.sin(sg.nn.functional.conv2d(x, w, padding=1)))
    graph = Compiled(sg.value_and_grad(loss, argnums=(0, 1)), backend="numpy").lower(x, w).graph
    builder = kernel.KernelBuilder(graph, ir.Module(), "k")
    builder.plan()
    one_example = 4 * 9 * 10 * 9 * 8
    assert max(b.nbytes for b in builder.buffers) < 6 * one_example
    assert any(b.nbytes == one_example for b in builder.buffers)
