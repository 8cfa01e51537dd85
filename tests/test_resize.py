"""F.pad and F.interpolate (symgrad/nn/resize.py) and their modules: values and gradients against PyTorch
(float64, skipped when absent) and finite differences on the NumPy and LLVM backends; edge cases and errors."""
import numpy as np
import pytest

import symgrad as sg
from gradcheck import numeric_grad

F = sg.nn.functional

# (function name, input shape, keyword arguments)
CASES = [
    ("pad", (2, 3, 4, 5), {"pad": (1, 2)}),
    ("pad", (2, 3, 4, 5), {"pad": (1, 2, 0, 3), "mode": "reflect"}),
    ("pad", (2, 3, 4, 5), {"pad": (2, 1, 1, 0), "mode": "replicate"}),
    ("pad", (2, 3, 4, 5), {"pad": (1, 2, 3, 1), "mode": "circular"}),
    ("pad", (2, 3, 4, 5), {"pad": (-1, 2, 1, -2), "value": 1.5}),  # a negative width crops
    ("pad", (2, 3, 6), {"pad": (3, 1), "mode": "reflect"}),
    ("interpolate", (2, 3, 4, 5), {"scale_factor": 2}),
    ("interpolate", (2, 3, 4, 5), {"size": (7, 3)}),
    ("interpolate", (2, 3, 4, 5), {"scale_factor": (1.5, 2.5)}),
    ("interpolate", (2, 3, 4, 5), {"scale_factor": 2, "mode": "bilinear"}),
    ("interpolate", (2, 3, 4, 5), {"size": (7, 3), "mode": "bilinear"}),
    ("interpolate", (2, 3, 4, 5), {"size": (7, 3), "mode": "bilinear", "align_corners": True}),
    ("interpolate", (2, 3, 4, 5), {"scale_factor": 0.6, "mode": "bilinear"}),
    ("interpolate", (2, 3, 4, 5), {"scale_factor": 1.7, "mode": "bilinear", "recompute_scale_factor": True}),
    ("interpolate", (2, 3, 4, 5), {"size": (2, 3), "mode": "area"}),
    ("interpolate", (2, 3, 6), {"scale_factor": 3, "mode": "linear"}),
    ("interpolate", (2, 3, 6), {"size": 11, "mode": "linear", "align_corners": True}),
    ("interpolate", (2, 3, 4, 5), {"scale_factor": 2, "mode": "bicubic"}),
    ("interpolate", (2, 3, 4, 5), {"size": (7, 3), "mode": "bicubic", "align_corners": True}),
    ("interpolate", (2, 3, 4, 5), {"scale_factor": 0.6, "mode": "bicubic"}),
    ("interpolate", (2, 3, 4, 5), {"size": (1, 9), "mode": "bicubic", "align_corners": True}),
    ("interpolate", (2, 3, 4, 5), {"scale_factor": 1.7, "mode": "bicubic", "recompute_scale_factor": True}),
    ("interpolate", (2, 2, 3, 4, 5), {"scale_factor": 2, "mode": "trilinear"}),
    ("interpolate", (2, 2, 3, 4, 5), {"size": (5, 2, 7), "mode": "trilinear", "align_corners": True}),
    ("interpolate", (1, 2, 3, 4, 5), {"scale_factor": (0.7, 1.5, 1.0), "mode": "trilinear"}),
]
IDS = [f"{name}-{i}" for i, (name, *_) in enumerate(CASES)]


def _loss(name, kwargs, lib):
    def loss(x):
        out = getattr(lib.nn.functional, name)(x, **kwargs)
        ramp = np.linspace(-1.0, 2.0, int(np.prod(out.shape))).reshape(tuple(out.shape))
        return lib.sum(lib.sin(out) * (ramp if lib is sg else lib.tensor(ramp)))
    return loss


@pytest.mark.parametrize("name, shape, kwargs", CASES, ids=IDS)
def test_values_and_gradients_match_pytorch(name, shape, kwargs):
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(0).standard_normal(shape)
    out = getattr(F, name)(sg.tensor(x), **kwargs)
    expected = getattr(torch.nn.functional, name)(torch.tensor(x), **kwargs)
    assert out.shape == tuple(expected.shape)
    np.testing.assert_allclose(out.numpy(), expected.numpy(), rtol=1e-12, atol=1e-12)
    ours, theirs = sg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    _loss(name, kwargs, sg)(ours).backward()
    _loss(name, kwargs, torch)(theirs).backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
@pytest.mark.parametrize("name, shape, kwargs", CASES[::2], ids=IDS[::2])
def test_gradients_match_finite_differences_on_both_backends(name, shape, kwargs, backend):
    x = np.random.default_rng(1).standard_normal(shape)
    loss = _loss(name, kwargs, sg)
    value, grad = sg.compile(sg.value_and_grad(loss), backend=backend)(x)
    assert float(value) == pytest.approx(float(loss(x)), rel=1e-12)
    np.testing.assert_allclose(grad, numeric_grad(loss, [x], 0), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("module, args, kwargs", [
    ("ZeroPad2d", ((1, 2, 0, 1),), {}), ("ConstantPad2d", (2, 3.5), {}), ("ConstantPad1d", ((0, 2), -1.0), {}),
    ("ReflectionPad2d", (1,), {}), ("ReplicationPad1d", ((2, 0),), {}), ("ZeroPad1d", (1,), {}),
    ("Upsample", (), {"scale_factor": 2, "mode": "nearest"}), ("Upsample", ((5, 6),), {"mode": "bilinear"}),
    ("UpsamplingNearest2d", (), {"scale_factor": 3}), ("UpsamplingBilinear2d", ((6, 3),), {}),
    ("ZeroPad3d", ((1, 0, 2, 1, 0, 1),), {}), ("ReplicationPad3d", (1,), {}), ("CircularPad3d", (1,), {}),
])
def test_modules_match_pytorch(module, args, kwargs):
    torch = pytest.importorskip("torch")
    shape = {"1d": (2, 3, 5), "3d": (2, 3, 2, 4, 5)}.get(module[-2:], (2, 3, 4, 5))
    x = np.random.default_rng(2).standard_normal(shape)
    ours, theirs = getattr(sg.nn, module)(*args, **kwargs), getattr(torch.nn, module)(*args, **kwargs)
    np.testing.assert_allclose(ours(sg.tensor(x)).numpy(), theirs(torch.tensor(x)).numpy(), rtol=1e-12, atol=1e-12)
    if module.startswith("Zero"):
        assert repr(ours) == repr(theirs)


def test_edge_cases_empty_batches_infinities_and_identity():
    assert F.pad(np.ones((0, 2, 3)), (1, 1)).shape == (0, 2, 5)
    assert F.interpolate(np.ones((0, 2, 3)), scale_factor=2).shape == (0, 2, 6)
    x = np.array([[[1.0, np.inf, 3.0]]])
    np.testing.assert_array_equal(np.asarray(F.interpolate(x, scale_factor=2)), [[[1, 1, np.inf, np.inf, 3, 3]]])
    torch = pytest.importorskip("torch")
    np.testing.assert_array_equal(np.asarray(F.interpolate(x, size=5, mode="linear")),
                                  torch.nn.functional.interpolate(torch.tensor(x), size=5, mode="linear").numpy())
    np.testing.assert_array_equal(np.asarray(F.pad(x, (0, 0))), x)
    np.testing.assert_array_equal(np.asarray(F.pad(x, (1, 0), value=np.inf)), [[[np.inf, 1, np.inf, 3]]])


@pytest.mark.parametrize("size, align_corners", [((5, 3), True), ((5, 3), False), ((3, 5), True), ((4, 4), True)])
def test_bilinear_at_an_infinity_spreads_nan_where_pytorchs_does(size, align_corners):
    """An axis whose size is unchanged is PyTorch's copy: its neighbour (of weight 0) was the next element, so an
    infinity there made whole columns NaN (1, 2.5, 4, 5.5 in PyTorch, for a 3x3 input with inf at its centre
    resized to (5, 3): random_programs_torch seed 20029); the values and their gradient."""
    torch = pytest.importorskip("torch")
    x = np.array([[1.0, 2.0, 3.0], [4.0, np.inf, 6.0], [7.0, 8.0, 9.0]]).reshape(1, 1, 3, 3)
    t, s = torch.tensor(x, requires_grad=True), sg.tensor(x, requires_grad=True)
    expected = torch.nn.functional.interpolate(t, size=size, mode="bilinear", align_corners=align_corners)
    got = F.interpolate(s, size=size, mode="bilinear", align_corners=align_corners)
    np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(), rtol=1e-14)
    weights = np.cos(np.arange(np.prod(expected.shape))).reshape(expected.shape)
    (expected * torch.tensor(weights)).sum().backward()
    (got * sg.tensor(weights)).sum().backward()
    np.testing.assert_allclose(s.grad.numpy(), t.grad.numpy(), rtol=1e-14)


@pytest.mark.parametrize("call, error, match", [
    (lambda: F.pad(np.ones((2, 3)), (1, 2, 3)), ValueError, "must be even"),
    (lambda: F.pad(np.ones((2, 3)), (3, 0), mode="reflect"), ValueError, "less than the corresponding"),
    (lambda: F.pad(np.ones((2, 3)), (1, 1), mode="edge"), ValueError, "not one of"),
    (lambda: F.pad(np.ones((2, 3)), (1, 1), mode="reflect", value=2.0), ValueError, "doesn't take in value"),
    (lambda: F.pad(np.ones((2, 3)), (-2, -2)), ValueError, "negative size"),
    (lambda: F.pad(np.ones((2, 3)), (-1, 0), mode="replicate"), ValueError, "only supported in constant"),
    (lambda: F.interpolate(np.ones((1, 1, 3)), size=4, scale_factor=2), ValueError, "exactly one"),
    (lambda: F.interpolate(np.ones((1, 1, 3)), size=4, mode="bicubic"), ValueError, "needs a 4-d input"),
    (lambda: F.interpolate(np.ones((1, 1, 3, 3)), size=4, mode="trilinear"), ValueError, "needs a 5-d input"),
    (lambda: F.interpolate(np.ones((1, 1, 3)), size=4, mode="cubic"), sg.UnsupportedOpError, "cubic"),
    (lambda: F.interpolate(np.ones((1, 1, 3)), size=4, mode="bilinear"), ValueError, "needs a 4-d input"),
    (lambda: F.interpolate(np.ones((1, 1, 3)), size=4, align_corners=True), ValueError, "align_corners"),
    (lambda: F.interpolate(np.ones((1, 1, 3), np.int64), size=4), TypeError, "float"),
    (lambda: F.interpolate(np.ones((1, 1, 3)), scale_factor=0.1), ValueError, "empty output"),
    (lambda: F.interpolate(np.ones(3), size=4), ValueError, "expected an input"),
])
def test_errors_name_the_argument(call, error, match):
    with pytest.raises(error, match=match):
        call()
