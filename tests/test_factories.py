"""Tensor factories and dtypes with PyTorch's signatures (issue 14 item 1), and the rule that keeps the
NumPy-like namespace's calls of the same names NumPy's."""
import pickle

import numpy as np
import pytest

import symgrad as sg
from symgrad.core import TracerError


# ----------------------------------------------------------------------------- the rule
@pytest.mark.parametrize("call", [
    lambda: sg.zeros((2, 3)), lambda: sg.zeros(3), lambda: sg.ones(3, np.float32), lambda: sg.ones((2,), sg.float64),
    lambda: sg.full((2, 2), 1.5), lambda: sg.empty((2,)), lambda: sg.eye(3), lambda: sg.eye(3, 4, 1),
    lambda: sg.arange(5), lambda: sg.arange(0.0, 1.0, 0.25), lambda: sg.linspace(0.0, 1.0, 7),
    lambda: sg.linspace(0, 1, num=5, endpoint=False), lambda: sg.zeros_like(np.ones(3)),
    lambda: sg.full_like(np.ones(2), 3.0), lambda: sg.argmax(np.array([1.0, 3.0, 2.0])),
    lambda: sg.sum(np.ones((2, 3)), axis=0), lambda: sg.zeros(0),
])
def test_numpy_style_calls_stay_numpy(call):
    assert isinstance(call(), (np.ndarray, np.generic))


@pytest.mark.parametrize("name", ["zeros", "ones", "empty", "full", "arange"])
@pytest.mark.parametrize("spelling", [sg.uint8, np.uint8, "uint8", sg.int8, sg.int16, np.int16, "int16", sg.uint16,
                                      sg.int32, sg.int64, sg.float32, np.float32, "float32", sg.float64, float, int,
                                      None])
def test_numpy_dtype_spellings_give_arrays_of_numpy_dtypes(name, spelling):
    """Every NumPy spelling of a dtype is NumPy's call (an array, as np.<name> gives); dtype=None is float64 for
    zeros/ones/empty (it gave int64: full's None, which follows the fill) and follows the fill for full/arange."""
    args = (3, 1) if name == "full" else (3,)
    got, want = getattr(sg, name)(*args, dtype=spelling), getattr(np, name)(*args, dtype=spelling)
    assert type(got) is np.ndarray and got.dtype == want.dtype and got.shape == (3,)
    if name != "empty":
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", ["zeros", "ones", "empty", "full", "arange"])
@pytest.mark.parametrize("spelling", ["float", "double", "long", "int", "short", "bool"])
def test_pytorch_dtype_names_give_tensors_of_pytorch_dtypes(name, spelling):
    torch = pytest.importorskip("torch")
    args = ((3,), 1) if name == "full" else (3,)
    if name == "arange" and spelling == "bool":
        return  # PyTorch's error (test_clear_errors)
    got = getattr(sg, name)(*args, dtype=getattr(sg, spelling))
    want = getattr(torch, name)(*args, dtype=getattr(torch, spelling))
    assert isinstance(got, sg.Tensor) and got.dtype == want.numpy().dtype
    if name != "empty":
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_numpy_style_calls_inside_a_trace_are_unchanged():
    def f(a):
        return sg.sum(sg.zeros_like(a) + sg.ones(3) * a + sg.linspace(0.0, 1.0, 3) + sg.eye(3)[0] + sg.full(3, 2.0))
    a = np.array([1.0, 2.0, 3.0])
    assert sg.compile(f)(a) == pytest.approx(6.0 + 1.5 + 1.0 + 6.0)
    np.testing.assert_allclose(sg.grad(f)(a), np.ones(3))
    assert "broadcast_to" in str(sg.trace(lambda a: a + sg.zeros(3), a))


@pytest.mark.parametrize("call, shape, dtype", [
    (lambda: sg.zeros(5, 3), (5, 3), np.float64), (lambda: sg.zeros(), (), np.float64),
    (lambda: sg.ones(2, dtype=sg.float), (2,), np.float32), (lambda: sg.zeros(size=(2, 1)), (2, 1), np.float64),
    (lambda: sg.empty(2, 2), (2, 2), np.float64), (lambda: sg.full((2,), 3, device="cpu"), (2,), np.int64),
    (lambda: sg.full((2,), True, device="cpu"), (2,), np.bool_), (lambda: sg.eye(2, 3, dtype=sg.long), (2, 3), np.int64),
    (lambda: sg.arange(5, device="cpu"), (5,), np.int64), (lambda: sg.arange(0, 1, 0.25, dtype=sg.double), (4,), np.float64),
    (lambda: sg.linspace(0, 1, steps=4), (4,), np.float64), (lambda: sg.zeros_like(sg.tensor([1, 2])), (2,), np.int64),
    (lambda: sg.ones_like(np.ones(3), device="cpu"), (3,), np.float64), (lambda: sg.full_like(sg.tensor([1.0]), 7), (1,), np.float64),
    (lambda: sg.empty_like(sg.tensor([[1.0]]), dtype=sg.float), (1, 1), np.float32),
    (lambda: sg.rand(2, 3), (2, 3), np.float64), (lambda: sg.randn((4,), dtype=sg.float), (4,), np.float32),
    (lambda: sg.randint(10, (3,)), (3,), np.int64), (lambda: sg.randint(2, 5, size=(2, 2)), (2, 2), np.int64),
    (lambda: sg.randperm(4), (4,), np.int64), (lambda: sg.rand_like(sg.zeros(2, 2)), (2, 2), np.float64),
    (lambda: sg.randn_like(sg.zeros(3, dtype=sg.float)), (3,), np.float32), (lambda: sg.zeros(0, 3), (0, 3), np.float64),
])
def test_pytorch_style_calls_give_tensors(call, shape, dtype):
    t = call()
    assert isinstance(t, sg.Tensor) and t.shape == shape and t.dtype == dtype and not t.requires_grad


def test_values_match_pytorch():
    torch = pytest.importorskip("torch")
    pairs = [
        (sg.linspace(-np.pi, np.pi, 2000, dtype=sg.double), torch.linspace(-np.pi, np.pi, 2000, dtype=torch.double)),
        (sg.linspace(-np.pi, np.pi, 7, dtype=sg.float), torch.linspace(-np.pi, np.pi, 7, dtype=torch.float)),
        (sg.linspace(3, -2, steps=6, dtype=sg.long), torch.linspace(3, -2, steps=6, dtype=torch.long)),
        (sg.linspace(1.0, 2.0, 1, device="cpu"), torch.linspace(1.0, 2.0, 1, dtype=torch.double)),
        (sg.linspace(1.0, 2.0, 0, device="cpu"), torch.linspace(1.0, 2.0, 0, dtype=torch.double)),
        (sg.arange(1, 2.5, 0.5, device="cpu"), torch.arange(1, 2.5, 0.5, dtype=torch.double)),
        (sg.arange(10, 0, -3, device="cpu"), torch.arange(10, 0, -3)),
        (sg.eye(3, 2, device="cpu"), torch.eye(3, 2, dtype=torch.double)), (sg.eye(0, device="cpu"), torch.eye(0).double()),
        (sg.full((2, 3), -1.5, device="cpu"), torch.full((2, 3), -1.5, dtype=torch.double)),
    ]
    for ours, theirs in pairs:
        assert ours.dtype == np.dtype(str(theirs.dtype).replace("torch.", ""))
        # PyTorch's vectorized kernel adds step * i to each vector's first element: the last bit may differ
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-15, atol=1e-15)
        assert ours.numpy()[-1:].tolist() == theirs.numpy()[-1:].tolist()

def test_requires_grad_on_factories():
    x = sg.zeros(5, 3, requires_grad=True)
    assert x.is_leaf and x.requires_grad
    (x * 2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full((5, 3), 2.0))
    e = sg.eye(4, 5, requires_grad=True)
    out = (e + 1).pow(2).t()
    out.backward(sg.ones_like(out), retain_graph=True)
    np.testing.assert_array_equal(e.grad.numpy(), 2 * (np.eye(4, 5) + 1))
    empty = sg.zeros(0, 2, requires_grad=True)
    empty.sum().backward()
    assert empty.grad.shape == (0, 2)
    scalar = sg.full((), 2.0, requires_grad=True, dtype=sg.float)
    (scalar ** 3).backward()
    assert scalar.grad.item() == 12.0 and scalar.grad.dtype == np.float32
    assert sg.zeros_like(x, requires_grad=True).requires_grad and sg.randn(2, requires_grad=True).requires_grad


@pytest.mark.parametrize("call", [
    lambda: sg.zeros(2, dtype=sg.long, requires_grad=True), lambda: sg.arange(3, requires_grad=True),
    lambda: sg.full((2,), 1, requires_grad=True), lambda: sg.randint(3, (2,), requires_grad=True),
    lambda: sg.tensor([1, 2], requires_grad=True), lambda: sg.ones_like(sg.tensor([1]), requires_grad=True),
])
def test_requires_grad_on_integer_dtypes_is_refused(call):
    with pytest.raises(RuntimeError, match="floating point"):
        call()


@pytest.mark.parametrize("call, error, message", [
    (lambda: sg.zeros(2, device="cuda"), RuntimeError, "only device is 'cpu'"),
    (lambda: sg.tensor([1.0], device="cuda:0"), RuntimeError, "only device is 'cpu'"),
    (lambda: sg.ones(2, device="cpu:1"), RuntimeError, "one CPU device"),
    (lambda: sg.zeros(2, dtype=sg.half), TypeError, "no half precision"),
    (lambda: sg.tensor([1.0], dtype=sg.float16), TypeError, "no half precision"),
    (lambda: sg.zeros(2, -1), RuntimeError, "negative dimension -1"),
    (lambda: sg.zeros(2, pin_memory=True), RuntimeError, "pin_memory"),
    (lambda: sg.zeros(2, 2, bogus=1), TypeError, "bogus"),
    (lambda: sg.randint(5, 2, (3,)), RuntimeError, "from=5 >= to=2"),
    (lambda: sg.randint(3), TypeError, "randint"), (lambda: sg.rand(2, dtype=sg.long), TypeError, "float dtype"),
    (lambda: sg.arange(0, 1, 0, device="cpu"), RuntimeError, "nonzero"),
    (lambda: sg.arange(0, 5, -1, device="cpu"), RuntimeError, "inconsistent"),
    (lambda: sg.arange(3, dtype=sg.bool), RuntimeError, "Bool"),
    (lambda: sg.linspace(0, 1, -1, device="cpu"), RuntimeError, "non-negative"),
    (lambda: sg.randn(2, generator=np.random.default_rng()), TypeError, "sg.Generator"),
    (lambda: sg.tensor([1.0]).cuda(), RuntimeError, "no CUDA"),
    (lambda: sg.tensor([1.0]).to("cuda"), RuntimeError, "only device is 'cpu'"),
])
def test_clear_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_pytorch_style_call_inside_a_trace():
    f = sg.compile(lambda a: sg.sum(a * sg.ones(3, 3, dtype=sg.double)) + sg.zeros(2, 2, device="cpu")[0, 0])
    assert f(np.ones((3, 3))) == 9.0
    with pytest.raises(TracerError, match="requires_grad"):
        sg.grad(lambda a: sg.sum(a * sg.zeros(3, requires_grad=True)))(np.ones(3))


# ----------------------------------------------------------------------------- random numbers
def test_manual_seed_and_generators_reproduce():
    sg.manual_seed(3)
    first = sg.randn(4).numpy()
    sg.manual_seed(3)
    np.testing.assert_array_equal(sg.randn(4).numpy(), first)
    g1, g2 = sg.Generator().manual_seed(7), sg.Generator().manual_seed(7)
    a = [sg.rand(3, generator=g1).numpy(), sg.randint(0, 100, (5,), generator=g1).numpy(), sg.randperm(6, generator=g1).numpy()]
    b = [sg.rand(3, generator=g2).numpy(), sg.randint(0, 100, (5,), generator=g2).numpy(), sg.randperm(6, generator=g2).numpy()]
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    assert g1.initial_seed() == 7 and sorted(a[2]) == list(range(6))
    state = g1.get_state()
    drawn = sg.rand(2, generator=g1).numpy()
    np.testing.assert_array_equal(sg.rand(2, generator=g1.set_state(state)).numpy(), drawn)
    assert sg.rand(2, dtype=sg.float, generator=sg.Generator().manual_seed(1)).numpy() == pytest.approx(
        sg.rand(2, generator=sg.Generator().manual_seed(1)).numpy().astype(np.float32))
    ints = sg.randint(-2, 3, (1000,), generator=g1).numpy()
    assert ints.min() == -2 and ints.max() == 2


# ----------------------------------------------------------------------------- dtypes, devices, methods
def test_dtype_aliases():
    assert sg.float == np.float32 and np.dtype(sg.float) == np.float32 and sg.double == sg.float64
    assert sg.long == np.int64 and sg.int == np.int32 and sg.bool == np.bool_ and sg.float != sg.double
    assert {np.dtype(np.float32): "f"}[sg.float] == "f" and sg.float.is_floating_point and not sg.long.is_floating_point
    assert np.zeros(2, sg.long).dtype == np.int64 and repr(sg.float) == "sg.float"
    assert sg.tensor([1, 2], dtype=sg.float).dtype == np.float32
    assert sg.compile(lambda a: sg.astype(a, sg.float))(np.ones(2)).dtype == np.float32
    assert pickle.loads(pickle.dumps(sg.zeros)) is sg.zeros and pickle.loads(pickle.dumps(sg.sum)) is sg.sum


def test_tensor_conversions_and_devices():
    t = sg.tensor([[1.5, -2.0], [3.0, 0.0]], requires_grad=True)
    assert t.to(sg.float).dtype == np.float32 and t.float().dtype == np.float32 and t.double() is t.to(sg.double)
    assert t.to("cpu") is t and t.to(sg.device("cpu")) is t and t.to(device="cpu", dtype=sg.long).dtype == np.int64
    assert t.to("cpu", sg.float).dtype == np.float32 and t.to(sg.zeros(1, dtype=sg.int)).dtype == np.int32
    copied = t.to("cpu", copy=True)
    assert copied is not t and copied.grad_fn is not None
    assert t.long().tolist() == [[1, -2], [3, 0]] and t.int().dtype == np.int32 and t.bool().tolist() == [[True, True], [True, False]]
    (t.float() * 2).sum().backward()
    assert t.grad.dtype == np.float64 and t.grad.tolist() == [[2.0, 2.0], [2.0, 2.0]]
    assert str(t.device) == "cpu" and t.device == sg.device("cpu") and not t.is_cuda and t.is_floating_point()
    assert repr(sg.device("cpu", 0)) == "device(type='cpu', index=0)"
    assert t.size() == (2, 2) and t.size(1) == 2 and t.numel() == 4 and t.dim() == 2 and t.view(4).shape == (4,)
    assert t.view(-1, 1).shape == (4, 1) and t.T.tolist() == [[1.5, 3.0], [-2.0, 0.0]]
    assert t.argmax().item() == 2 and t.argmax(dim=1).tolist() == [0, 0] and sg.argmax(t, 0).tolist() == [1, 1]
    assert sg.tensor(5.0).dim() == 0 and sg.tensor(5.0).numel() == 1 and sg.zeros(0, 3).numel() == 0


def test_pytorch_keyword_names():
    a, b = sg.tensor([[1.0, 2.0]], requires_grad=True), sg.tensor([[3.0], [4.0]])
    out = sg.matmul(input=a, other=b)
    assert out.item() == 11.0 and sg.matmul(a, other=b).item() == 11.0
    out.backward()
    assert a.grad.tolist() == [[3.0, 4.0]]
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(sg.sum(x, dim=1, keepdim=True), x.sum(1, keepdims=True))
    np.testing.assert_array_equal(sg.mean(input=x, dim=0), x.mean(0))
    assert sg.argmax(sg.tensor(x), dim=1, keepdim=True).tolist() == [[2], [2]]
    np.testing.assert_allclose(sg.softmax(sg.tensor(x), dim=1).numpy(), np.exp(x) / np.exp(x).sum(1, keepdims=True))
    np.testing.assert_array_equal(sg.cumsum(x, dim=1), np.cumsum(x, 1))
    u = sg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)  # torch.triu(U, diagonal=1): normalizing flows'
    assert sg.triu(u, diagonal=1).tolist() == [[0.0, 2.0], [0.0, 0.0]] and sg.tril(input=u, diagonal=-1).sum() == 3
    np.testing.assert_array_equal(sg.tril(x, 1), np.tril(x, 1))  # NumPy's k as it was
    pieces = sg.split(sg.arange(14.0).reshape(1, 14), 5, dim=1)  # with dim, torch.split's pieces of size 5
    assert [p.shape for p in pieces] == [(1, 5), (1, 5), (1, 4)] and pieces[2].tolist() == [[10, 11, 12, 13]]
    assert [p.tolist() for p in sg.split(sg.arange(4.0), [1, 3], dim=0)] == [[0.0], [1.0, 2.0, 3.0]]
    assert [len(p) for p in sg.split(np.arange(6.0), 3)] == [2, 2, 2]  # NumPy's sections without dim
    with pytest.raises(RuntimeError, match="sum exactly to 4"):
        sg.split(sg.arange(4.0), [1, 2], dim=0)
    with pytest.raises(TypeError, match="twice"):
        sg.sum(x, axis=0, dim=1)
    with pytest.raises(TypeError, match="by name"):
        sg.matmul(a, input=b)


def test_no_accelerator_and_default_device():
    device = sg.accelerator.current_accelerator().type if sg.accelerator.is_available() else "cpu"
    assert device == "cpu" and not sg.cuda.is_available() and sg.cuda.device_count() == 0
    assert not sg.backends.mps.is_available() and not sg.backends.mps.is_built()  # (the DQN tutorial's device)
    assert sg.cuda.manual_seed(0) is None and sg.cuda.manual_seed_all(3407) is None  # makemore seeds both
    sg.set_default_device(device)
    assert sg.get_default_device() == sg.device("cpu")
    with pytest.raises(RuntimeError, match="only device is 'cpu'"):
        sg.set_default_device("cuda")


def test_module_to_device_and_dtype():
    model = sg.nn.Sequential(sg.nn.Linear(2, 3), sg.nn.ReLU(), sg.nn.Linear(3, 1))
    weight = model[0].weight
    opt = sg.optim.SGD(model.parameters(), lr=0.1)
    assert model.to("cpu") is model and model.cpu() is model and model.to(sg.device("cpu")) is model
    assert model.float() is model and model[0].weight is weight and weight.dtype == np.float32
    model(sg.ones(4, 2, dtype=sg.float)).sum().backward()
    assert weight.grad.dtype == np.float32
    opt.step()
    assert weight.dtype == np.float32 and weight.requires_grad
    model.to("cpu", dtype=sg.double)
    assert weight.dtype == np.float64 and weight.grad.dtype == np.float64
    with pytest.raises(TypeError, match="floating point"):
        model.to(sg.long)
    with pytest.raises(RuntimeError, match="only device is 'cpu'"):
        model.to("cuda")


def test_tensor_type():
    pred, y = sg.tensor([[0.1, 0.9], [0.8, 0.2]]), sg.tensor([1, 1])
    correct = (pred.argmax(1) == y).type(sg.float).sum().item()
    assert correct == 1.0 and sg.tensor([1]).type() == "sg.LongTensor" and sg.tensor(1.0).type() == "sg.DoubleTensor"


def test_function_forms_of_tensor_methods():
    x = sg.tensor([[1.0, -2.0, 3.0]], requires_grad=True)
    assert sg.unsqueeze(x, 0).shape == (1, 1, 3) and sg.flatten(x).shape == (3,) and sg.t(x).shape == (3, 1)
    assert sg.clamp(x, min=0).tolist() == [[1.0, 0.0, 3.0]] and sg.numel(x) == 3 and sg.permute(x, (1, 0)).shape == (3, 1)
    assert sg.mm(x, sg.t(x)).item() == 14.0 and sg.norm(x).item() == pytest.approx(14 ** 0.5)
    assert sg.is_tensor(x) and not sg.is_tensor(np.ones(2)) and sg.clone(x).grad_fn is not None
    a, b = sg.randn(2, 3, 4), sg.randn(2, 4, 5)
    np.testing.assert_allclose(sg.bmm(a, b).numpy(), a.numpy() @ b.numpy())
    s = sg.stack([x[0], x[0]], dim=1)
    assert s.shape == (3, 2)
    s.sum().backward()
    assert x.grad.tolist() == [[2.0, 2.0, 2.0]]
    assert sg.unsqueeze(np.ones(2), 1).shape == (2, 1)
    with pytest.raises(RuntimeError, match="same batch size"):
        sg.bmm(sg.randn(2, 3, 4), sg.randn(3, 4, 5))
    with pytest.raises(TracerError, match="PyTorch's function of tensors"):
        sg.grad(lambda a: sg.sum(sg.unsqueeze(a, 0)))(np.ones(2))


@pytest.mark.parametrize("module", ["symgrad", "symgrad.numpy"])
def test_full_of_a_traced_fill_value_broadcasts_it(module):
    """np.full(x.shape, g) with a traced g (the vjp rule of HIPS/autograd's define_gradient example) raised
    TracerError (the fill value went through np.asarray); NumPy and JAX broadcast the fill value to the shape."""
    import importlib
    full = importlib.import_module(module).full
    x = np.array([[1.0, -2.0, 0.5], [3.0, 0.0, 4.0]])
    f = lambda g, x: sg.sum(full(x.shape, g) * x)
    value, (dg, dx) = sg.value_and_grad(f, argnums=(0, 1))(2.0, x)
    assert value == pytest.approx(2.0 * x.sum()) and dg == pytest.approx(x.sum())
    np.testing.assert_allclose(dx, np.full(x.shape, 2.0))
    assert sg.compile(sg.grad(f))(2.0, x) == pytest.approx(x.sum())
    row = lambda r: full((2, 3), r)  # an array fill value broadcasts as NumPy's
    np.testing.assert_allclose(sg.jacobian(lambda r: sg.sum(row(r), axis=0))(np.ones(3)), 2 * np.eye(3))
    assert sg.compile(lambda g: full((), g, dtype=np.float32))(np.float64(1.5)).dtype == np.float32
    assert sg.compile(lambda g: full(0, g))(1.0).shape == (0,)


def test_normal_of_floats_and_of_tensors():
    """torch.normal's forms (d2l's weights are normal(0, 0.01, size=..., requires_grad=True)): shapes, dtypes and the
    moments of the samples; a mean or std that requires grad is refused (PyTorch differentiates it as zero)."""
    sg.manual_seed(0)
    w = sg.normal(0, 0.01, size=(400, 10), requires_grad=True)
    assert w.shape == (400, 10) and w.dtype == sg.float64 and w.requires_grad and w.is_leaf
    assert abs(w.detach().numpy().std() - 0.01) < 1e-3 and abs(w.detach().numpy().mean()) < 1e-3
    means = sg.tensor([[0.0], [100.0]], dtype=sg.float32)
    draws = sg.normal(means, 2.0 * sg.ones(2, 500, dtype=sg.float32))
    assert draws.shape == (2, 500) and draws.dtype == sg.float32
    np.testing.assert_allclose(draws.numpy().mean(1), [0.0, 100.0], atol=0.3)
    assert sg.normal(sg.zeros(0), 1.0).shape == (0,) and sg.normal(1.0, 0.0, size=(3,)).tolist() == [1.0] * 3
    with pytest.raises(RuntimeError, match="requires grad"):
        sg.normal(sg.zeros(2, requires_grad=True), 1.0)
    with pytest.raises(RuntimeError, match="std >= 0"):
        sg.normal(0.0, -1.0, size=(2,))
    torch = pytest.importorskip("torch")
    assert torch.normal(0, 0.01, size=(400, 10)).shape == w.shape
    assert torch.normal(torch.zeros(2, 1), torch.ones(2, 500)).shape == draws.shape


def test_amp_disabled_changes_nothing_and_enabled_is_refused():
    """nanoGPT's train.py builds torch.cuda.amp.GradScaler(enabled=False) on a CPU and steps through it."""
    for scaler in (sg.amp.GradScaler(enabled=False), sg.cuda.amp.GradScaler(enabled=False)):
        w = sg.tensor([1.0, -2.0], requires_grad=True)
        opt = sg.optim.SGD([w], lr=0.5)
        with sg.autocast(device_type="cpu", enabled=False), sg.amp.autocast("cpu", enabled=False):
            loss = (w * w).sum()
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        scaler.step(opt)
        scaler.update()
        assert w.tolist() == [0.0, 0.0] and scaler.get_scale() == 1.0 and not scaler.is_enabled()
        assert scaler.state_dict() == {}
    for make in (sg.amp.GradScaler, lambda: sg.autocast("cpu"), lambda: sg.amp.autocast("cpu", sg.float16)):
        with pytest.raises(NotImplementedError, match="enabled=False"):
            make()
