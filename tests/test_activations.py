"""More activations (nn.functional and symgrad/nn/activation.py) and F.normalize: values and gradients against
PyTorch (float64, skipped when absent) and finite differences on both backends; edge points (0, the kinks,
+-25, infinities)."""
import numpy as np
import pytest

import symgrad as sg
from gradcheck import numeric_grad

F = sg.nn.functional

FUNCTIONS = [
    ("silu", ()), ("mish", ()), ("relu6", ()), ("hardtanh", (-0.5, 2.0)), ("hardsigmoid", ()), ("hardswish", ()),
    ("selu", ()), ("celu", (0.7,)), ("logsigmoid", ()), ("softmin", (1,)), ("softplus", ()),
    ("softplus", (2.0, 10.0)), ("softsign", ()), ("tanhshrink", ()), ("threshold", (0.5, -2.0)), ("glu", (1,)),
    ("glu", (0,)), ("normalize", ()), ("normalize", (1.0, 0)), ("hardshrink", ()), ("hardshrink", (1.5,)),
    ("softshrink", ()), ("softshrink", (2.0,)),
]
# PyTorch computes these derivatives with float32 constants (1/6, 1/alpha): equal to 2e-8
LOOSE = {"hardsigmoid": 1e-7, "celu": 1e-7}


def _input():
    x = np.random.default_rng(0).standard_normal((4, 6)) * 4
    x[0] = [-3.0, 3.0, 0.0, 6.0, 25.0, -25.0]  # the kinks, 0 and large magnitudes
    x[1, :2] = 0.0  # a row of zeros for normalize along dim 1
    return x


@pytest.mark.parametrize("name, args", FUNCTIONS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(FUNCTIONS)])
def test_values_and_gradients_match_pytorch(name, args):
    torch = pytest.importorskip("torch")
    x = _input()
    if name == "normalize":
        x[2] = 0.0  # a zero vector: gradient 0 there, as PyTorch's
    ours, theirs = sg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    a, b = getattr(F, name)(ours, *args), getattr(torch.nn.functional, name)(theirs, *args)
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-14, atol=1e-15)
    weights = np.linspace(-1, 1, b.numel()).reshape(tuple(b.shape))
    (a * sg.tensor(weights)).sum().backward()
    (b * torch.tensor(weights)).sum().backward()
    tol = LOOSE.get(name, 1e-12)
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
@pytest.mark.parametrize("name, args", FUNCTIONS[::2], ids=[n for n, _ in FUNCTIONS[::2]])
def test_gradients_match_finite_differences_on_both_backends(name, args, backend):
    x = np.random.default_rng(1).standard_normal((4, 6)) * 2  # away from the kinks
    ramp = np.linspace(-1, 2, 24).reshape(4, 6)

    def loss(v):
        out = getattr(F, name)(v, *args)
        return sg.sum(out * ramp[tuple(slice(0, n) for n in out.shape)])
    grad = sg.compile(sg.grad(loss), backend=backend)(x)
    np.testing.assert_allclose(grad, numeric_grad(loss, [x], 0), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("module, args", [
    ("SiLU", ()), ("Mish", ()), ("ReLU6", ()), ("Hardtanh", (-2.0, 3.0)), ("Hardswish", ()), ("SELU", ()),
    ("CELU", (0.5,)), ("LogSigmoid", ()), ("Softmin", (0,)), ("Softplus", (0.5,)), ("Softsign", ()),
    ("Tanhshrink", ()), ("Threshold", (0.1, 20.0)), ("GLU", ()), ("Hardsigmoid", ()), ("Hardshrink", (0.3,)),
    ("Softshrink", ()),
])
def test_modules_match_pytorch(module, args):
    torch = pytest.importorskip("torch")
    x = _input()
    ours, theirs = getattr(sg.nn, module)(*args), getattr(torch.nn, module)(*args)
    np.testing.assert_allclose(ours(sg.tensor(x)).numpy(), theirs(torch.tensor(x)).numpy(), rtol=1e-14, atol=1e-15)


def test_prelu_learns_its_slopes_as_pytorch():
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(2).standard_normal((3, 4, 5))
    for slopes in (1, 4):
        ours, theirs = sg.nn.PReLU(slopes, init=0.3), torch.nn.PReLU(slopes, init=0.3).double()
        assert ours.weight.shape == (slopes,) and np.all(ours.weight.detach().numpy() == 0.3)
        ours.load_state_dict({"weight": theirs.weight.detach().numpy()})  # PyTorch's 0.3 is a float32's
        a, b = sg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        (ours(a) ** 2).sum().backward()
        (theirs(b) ** 2).sum().backward()
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-13)
        np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(), rtol=1e-13)
    with pytest.raises(ValueError, match="4 weights need an input with 4 channels"):
        sg.nn.PReLU(4)(sg.tensor(np.ones((2, 3))))


def test_edge_points_and_errors():
    inf = sg.tensor([-np.inf, np.inf, 0.0])
    np.testing.assert_array_equal(F.silu(inf).numpy()[1:], [np.inf, 0.0])
    np.testing.assert_array_equal(F.softplus(inf).numpy(), [0.0, np.inf, np.log(2.0)])
    np.testing.assert_array_equal(F.logsigmoid(inf).numpy()[1:], [0.0, -np.log(2.0)])
    np.testing.assert_array_equal(F.hardtanh(inf).numpy(), [-1.0, 1.0, 0.0])
    assert F.silu(sg.tensor(np.zeros((0, 3)))).shape == (0, 3) and F.relu6(sg.tensor(7.0)).item() == 6.0
    with pytest.raises(RuntimeError, match="Halving dimension must be even"):
        F.glu(sg.tensor(np.ones((2, 3))))
    with pytest.raises(ValueError, match="min_val cannot be greater"):
        F.hardtanh(sg.tensor([1.0]), 2.0, 1.0)
    one = sg.tensor([1.0])
    assert F.silu(one, inplace=True) is one and one.item() == pytest.approx(1 / (1 + np.exp(-1.0)), rel=1e-15)
    with pytest.raises(TypeError, match="takes the arguments"):
        sg.nn.Hardtanh(1.0, 2.0, False, 3)


@pytest.mark.parametrize("name", ["hardshrink", "softshrink"])
def test_shrinks_at_their_kinks_and_edge_values_match_pytorch(name):
    """At +-lambd exactly (PyTorch's gradient 0 there), 0, infinities and NaN (whose gradient is left out:
    PyTorch's is 0 for hardshrink, 1 for softshrink); a negative lambd is refused by softshrink as by PyTorch."""
    torch = pytest.importorskip("torch")
    x = np.array([-0.5, 0.5, 0.0, -0.0, np.inf, -np.inf, np.nan, 0.7, -0.7])
    ours, theirs = sg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    a, b = getattr(F, name)(ours), getattr(torch.nn.functional, name)(theirs)
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    a.sum().backward()
    b.sum().backward()
    keep = ~np.isnan(x)
    np.testing.assert_array_equal(ours.grad.numpy()[keep], theirs.grad.numpy()[keep])
    if name == "softshrink":
        with pytest.raises(RuntimeError, match="lambda must be greater or equal to 0"):
            F.softshrink(ours, -1.0)


SIGNED = np.array([-0.0, 0.0, np.nan, -0.3, 0.3, -1.0, 1.0, -7.0, 7.0])
SIGNED_ZEROS = [("relu", ()), ("relu6", ()), ("hardtanh", ()), ("hardtanh", (0.0, 1.0)), ("hardtanh", (-0.0, 0.0)),
                ("threshold", (0.0, 5.0)), ("threshold", (-0.0, -0.0)), ("leaky_relu", ()), ("hardshrink", ()),
                ("elu", ())]  # (not softshrink: PyTorch's -0.0 * 0 of short tensors is +0.0 in long ones)


@pytest.mark.parametrize("name, args", SIGNED_ZEROS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(SIGNED_ZEROS)])
def test_signed_zeros_and_nan_match_pytorch_bit_for_bit_eagerly_and_compiled(name, args):
    """-0.0 stays -0.0 where PyTorch keeps it (relu(-0.0), a clamp's tie), the gradients at the zeros are PyTorch's
    (at NaN, PyTorch's differ between its vectorized and scalar loops); sg.compile on both backends gives the eager
    bits."""
    torch = pytest.importorskip("torch")
    t = torch.tensor(SIGNED, requires_grad=True)
    getattr(torch.nn.functional, name)(t, *args).sum().backward()
    x = sg.tensor(SIGNED, requires_grad=True)
    value = getattr(F, name)(x, *args)
    value.sum().backward()
    want = getattr(torch.nn.functional, name)(torch.tensor(SIGNED), *args).numpy()
    np.testing.assert_array_equal(np.signbit(value.detach().numpy()), np.signbit(want))
    np.testing.assert_array_equal(value.detach().numpy(), want)
    number = ~np.isnan(SIGNED)
    np.testing.assert_array_equal(x.grad.numpy()[number], t.grad.numpy()[number])
    for backend in ("numpy", "llvm"):
        compiled = sg.compile(lambda a: getattr(F, name)(a, *args), backend=backend)(SIGNED)
        np.testing.assert_array_equal(np.signbit(compiled), np.signbit(want))


@pytest.mark.parametrize("bounds", [(0.0, None), (-0.0, None), (None, 0.0), (None, -0.0), (0.0, 1.0), (-0.0, 0.0),
                                    (np.nan, None), (None, -1.0)])
def test_clip_gives_numpys_signed_zeros_and_clamp_pytorchs(bounds):
    """np.clip with one bound gives the bound at a tie (np.clip(-0.0, 0.0, None) is 0.0), with two x (-0.0):
    sg.clip as NumPy, eagerly and on both backends; Tensor.clamp as torch.clamp (x at every tie); gradient 1 on
    the closed interval either way."""
    want = np.clip(SIGNED, *bounds)
    for got in [sg.clip(SIGNED, *bounds)] + [sg.compile(lambda a: sg.clip(a, *bounds), backend=b)(SIGNED)
                                              for b in ("numpy", "llvm")]:
        number = ~np.isnan(want)  # (a NaN's sign bit is no part of either's contract)
        np.testing.assert_array_equal(np.signbit(np.asarray(got))[number], np.signbit(want)[number])
        np.testing.assert_array_equal(np.asarray(got), want)
    lo, hi = bounds
    inside = ~((lo is not None and SIGNED < lo) | (hi is not None and SIGNED > hi))
    if lo is not None and np.isnan(lo):
        inside = np.zeros(len(SIGNED), bool)
    np.testing.assert_array_equal(sg.grad(lambda a: sg.clip(a, *bounds).sum())(SIGNED)[~np.isnan(SIGNED)],
                                  inside[~np.isnan(SIGNED)].astype(float))
    torch = pytest.importorskip("torch")
    clamped, want = sg.tensor(SIGNED).clamp(*bounds).numpy(), torch.tensor(SIGNED).clamp(*bounds).numpy()
    np.testing.assert_array_equal(clamped, want)
    number = ~np.isnan(want)  # (a NaN's sign bit is no part of either's contract)
    np.testing.assert_array_equal(np.signbit(clamped)[number], np.signbit(want)[number])
