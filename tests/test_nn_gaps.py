"""nn layers and functions a tutorial user hits: Bilinear, RMSNorm, LazyLinear, EmbeddingBag, Fold/Unfold,
affine_grid/grid_sample, gumbel_softmax, packed sequences through RNN/LSTM/GRU, Sequential's list methods.
Values and gradients against PyTorch in float64 (skipped when absent) and central finite differences."""
import collections

import numpy as np
import pytest

import symgrad as sg

F = sg.nn.functional
RAMP_SEED = 7


def _ramp(shape):
    return np.linspace(-1, 1, int(np.prod(shape))).reshape(shape)


def _run(lib, fn, arrays):
    """fn's value and the gradients of sum(value * ramp) with respect to the float arrays, in `lib`."""
    tensors = [lib.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
    out = fn(lib, *tensors)
    (out * lib.tensor(_ramp(tuple(out.shape)))).sum().backward()
    grads = [None if t.grad is None else t.grad.numpy() for t in tensors if t.dtype.is_floating_point
             or getattr(t.dtype, "kind", "") == "f"] if lib is not sg else \
        [None if t.grad is None else t.grad.numpy() for t in tensors if t.dtype.kind == "f"]
    return out.detach().numpy(), grads


def _finite_differences(fn, arrays, eps=1e-6):
    """Central differences of sum(fn(...) * ramp) with respect to each float array, on eager tensors."""
    def loss(values):
        with sg.no_grad():
            out = fn(sg, *[sg.tensor(v) for v in values])
            return float((out.numpy() * _ramp(tuple(out.shape))).sum())
    grads = []
    for index, array in enumerate(arrays):
        if array.dtype.kind != "f":
            continue
        grad = np.zeros(array.size)
        for i in range(array.size):
            shifted = [a.copy() for a in arrays]
            shifted[index].reshape(-1)[i] += eps
            up = loss(shifted)
            shifted[index].reshape(-1)[i] -= 2 * eps
            grad[i] = (up - loss(shifted)) / (2 * eps)
        grads.append(grad.reshape(array.shape))
    return grads


def _check(fn, arrays, fd=True):
    value, grads = _run(sg, fn, arrays)
    if fd:
        for got, expected in zip(grads, _finite_differences(fn, arrays)):
            np.testing.assert_allclose(0 if got is None else got, expected, rtol=1e-6, atol=1e-7)
    try:
        import torch
    except ImportError:
        return
    torch_value, torch_grads = _run(torch, lambda lib, *t: fn(lib, *t), arrays)
    np.testing.assert_allclose(value, torch_value, rtol=1e-10, atol=1e-12)
    for got, expected in zip(grads, torch_grads):
        np.testing.assert_allclose(0 if got is None else got, expected, rtol=1e-10, atol=1e-12)


rng = np.random.default_rng(0)
IMAGE = rng.standard_normal((2, 3, 5, 6))
TABLE = rng.standard_normal((6, 3))
INDEX, OFFSETS = np.array([0, 2, 2, 5, 1, 3, 4]), np.array([0, 3, 3, 5])


def test_bilinear():
    _check(lambda lib, a, b, w, c: lib.nn.functional.bilinear(a, b, w, c),
           [rng.standard_normal((4, 2)), rng.standard_normal((4, 3)), rng.standard_normal((5, 2, 3)),
            rng.standard_normal(5)])
    layer = sg.nn.Bilinear(2, 3, 4)
    assert layer(sg.ones(5, 2), sg.ones(5, 3)).shape == (5, 4) and layer.weight.shape == (4, 2, 3)
    with pytest.raises(RuntimeError, match="bilinear"):
        layer(sg.ones(5, 3), sg.ones(5, 3))


@pytest.mark.parametrize("shape, eps", [((3, 4), None), (4, 0.1), ((2, 3, 4), 1e-3)])
def test_rms_norm(shape, eps):
    x = rng.standard_normal((2, 3, 4))
    normalized = (shape,) if isinstance(shape, int) else shape
    _check(lambda lib, x, w: lib.nn.functional.rms_norm(x, normalized, w, eps=eps),
           [x, rng.standard_normal(normalized)])
    module = sg.nn.RMSNorm(shape, eps=eps)
    assert np.allclose(module(sg.tensor(x)).detach().numpy(), F.rms_norm(sg.tensor(x), normalized, eps=eps).numpy())


def test_rms_norm_of_zeros_is_zero():
    assert np.array_equal(F.rms_norm(sg.zeros(2, 3), 3).numpy(), np.zeros((2, 3)))


def test_lazy_linear_infers_in_features_and_becomes_linear():
    model = sg.nn.LazyLinear(3)
    optimizer = sg.optim.SGD(model.parameters(), lr=0.1)
    out = model(sg.ones(2, 4))
    assert type(model) is sg.nn.Linear and model.in_features == 4 and out.shape == (2, 3)
    out.sum().backward()
    before = model.weight.detach().numpy().copy()
    optimizer.step()  # the optimizer built before the first call holds the filled parameters
    assert np.allclose(model.weight.detach().numpy(), before - 0.1 * 2)
    assert sg.nn.LazyLinear(2, bias=False)(sg.ones(1, 5)).shape == (1, 2)


LAZY = [("LazyConv1d", (4, 3), {"padding": 1}, (3, 7)), ("LazyConv2d", (4, 3), {"stride": 2}, (2, 3, 6, 6)),
        ("LazyConv3d", (2, 2), {"bias": False}, (1, 3, 4, 4, 4)),
        ("LazyConvTranspose2d", (4, 3), {"groups": 1}, (2, 3, 5, 5)),
        ("LazyBatchNorm1d", (), {"momentum": 0.3}, (5, 3)), ("LazyBatchNorm2d", (), {"affine": False}, (2, 3, 4, 4)),
        ("LazyLinear", (5,), {}, (2, 3, 4))]


@pytest.mark.parametrize("name, args, kwargs, shape", LAZY, ids=[case[0] for case in LAZY])
def test_lazy_modules_infer_their_first_size_and_become_the_full_class(name, args, kwargs, shape):
    """d2l's models are built of LazyConv2d/LazyBatchNorm2d/LazyLinear: the sizes come from the first batch, the
    module (a subclass of the full class, as PyTorch's) becomes that class, a float64 move before the call holds,
    and the optimizer built before the call steps the filled parameters; its output is the full class's with the
    same weights, and PyTorch's reprs and state_dict shapes and dtypes, before and after."""
    x = rng.standard_normal(shape)
    model = getattr(sg.nn, name)(*args, **kwargs)
    full = model.cls_to_become
    assert isinstance(model, full) and type(model) is not full
    before = repr(model)
    optimizer = sg.optim.SGD(model.parameters(), lr=0.1) if list(model.parameters()) else None
    model.double()
    out = model(sg.tensor(x))
    assert type(model) is full
    size = next(getattr(model, key) for key in ("in_features", "in_channels", "num_features") if hasattr(model, key))
    reference = full(size, *args, **kwargs).double()
    reference.load_state_dict({key: value.detach() for key, value in model.named_parameters()}, strict=False)
    np.testing.assert_array_equal(out.detach().numpy(), reference(sg.tensor(x)).detach().numpy())
    for key, value in reference.state_dict().items():  # BatchNorm's statistics moved once, from the defaults
        np.testing.assert_array_equal(model.state_dict()[key].numpy(), value.numpy())
    if optimizer is not None:
        out.sum().backward()
        weight = model.weight.detach().numpy().copy()
        optimizer.step()
        np.testing.assert_allclose(model.weight.detach().numpy(), weight - 0.1 * model.weight.grad.numpy())
    torch = pytest.importorskip("torch")
    theirs = getattr(torch.nn, name)(*args, **kwargs)
    assert before == repr(theirs)
    theirs.double()(torch.tensor(x))
    assert repr(model) == repr(theirs)
    assert {key: (tuple(value.shape), str(value.dtype)) for key, value in model.state_dict().items()} == {
        key: (tuple(value.shape), str(value.dtype).replace("torch.", "")) for key, value in theirs.state_dict().items()}


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("form", ["offsets", "2d-padding", "last-offset"])
def test_embedding_bag(mode, form):
    if form == "offsets":
        call = lambda lib, t: lib.nn.functional.embedding_bag(lib.tensor(INDEX), t, lib.tensor(OFFSETS), mode=mode)
    elif form == "2d-padding":
        call = lambda lib, t: lib.nn.functional.embedding_bag(lib.tensor(INDEX[:6].reshape(2, 3)), t, mode=mode,
                                                              padding_idx=2)
    else:
        call = lambda lib, t: lib.nn.functional.embedding_bag(lib.tensor(INDEX), t, lib.tensor(np.array([0, 3, 7])),
                                                              mode=mode, include_last_offset=True)
    _check(call, [TABLE.copy()])


def test_embedding_bag_per_sample_weights_and_errors():
    _check(lambda lib, t, w: lib.nn.functional.embedding_bag(lib.tensor(INDEX), t, lib.tensor(OFFSETS), mode="sum",
                                                             per_sample_weights=w),
           [TABLE.copy(), rng.standard_normal(7)])
    table = sg.tensor(TABLE)
    with pytest.raises(RuntimeError, match=r"offsets\[0\] has to be 0"):
        F.embedding_bag(sg.tensor(INDEX), table, sg.tensor([1, 2]))
    with pytest.raises(sg.UnsupportedOpError, match="only supported for mode='sum'"):
        F.embedding_bag(sg.tensor(INDEX), table, sg.tensor(OFFSETS), mode="max", per_sample_weights=sg.ones(7))
    with pytest.raises(ValueError, match="offsets has to be None"):
        F.embedding_bag(sg.tensor([[0, 1]]), table, sg.tensor([0]))
    with pytest.raises(IndexError, match="out of range"):
        F.embedding_bag(sg.tensor([0, 6]), table, sg.tensor([0]))
    empty = F.embedding_bag(sg.tensor(np.zeros(0, np.int64)), table, sg.tensor([0]), mode="max")
    assert np.array_equal(empty.numpy(), np.zeros((1, 3)))
    bag = sg.nn.EmbeddingBag(6, 3, mode="sum")
    assert bag(sg.tensor(INDEX), sg.tensor(OFFSETS)).shape == (4, 3)


WINDOWS = [dict(kernel_size=2), dict(kernel_size=(2, 3), dilation=(1, 2), padding=1, stride=(2, 1)),
           dict(kernel_size=3, stride=2, padding=(0, 1))]


@pytest.mark.parametrize("window", WINDOWS, ids=str)
def test_unfold_and_fold(window):
    _check(lambda lib, x: lib.nn.functional.unfold(x, **window), [IMAGE.copy()], fd=False)
    cols = F.unfold(sg.tensor(IMAGE), **window).numpy()
    _check(lambda lib, c: lib.nn.functional.fold(c, (5, 6), **window), [cols], fd=False)
    # fold is unfold's adjoint: <unfold(x), c> == <x, fold(c)>
    c = rng.standard_normal(cols.shape)
    assert np.isclose((cols * c).sum(), (IMAGE * F.fold(sg.tensor(c), (5, 6), **window).numpy()).sum())
    assert sg.nn.Unfold(**window)(sg.tensor(IMAGE[0])).shape == cols.shape[1:]  # unbatched


def test_unfold_gradient_by_finite_differences_and_fold_errors():
    _check(lambda lib, x: lib.nn.functional.unfold(x, 2, padding=1), [rng.standard_normal((1, 2, 3, 3))])
    with pytest.raises(RuntimeError, match="fold: expected an input"):
        F.fold(sg.ones(1, 8, 5), (4, 5), 2)


@pytest.mark.parametrize("align_corners", [False, True])
def test_affine_grid(align_corners):
    _check(lambda lib, t: lib.nn.functional.affine_grid(t, (2, 3, 4, 5), align_corners=align_corners),
           [rng.standard_normal((2, 2, 3))])
    with pytest.raises(ValueError, match="Nx2x3"):
        F.affine_grid(sg.ones(2, 3, 3), (2, 1, 4, 4))


@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("padding_mode", ["zeros", "border"])
@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
def test_grid_sample(mode, padding_mode, align_corners):
    grid = np.random.default_rng(1).uniform(-1.3, 1.3, (2, 4, 5, 2))  # some places outside the image
    _check(lambda lib, x, g: lib.nn.functional.grid_sample(x, g, mode=mode, padding_mode=padding_mode,
                                                           align_corners=align_corners),
           [IMAGE.copy(), grid], fd=mode == "bilinear")


def test_grid_sample_identity_and_refusals():
    x = sg.tensor(IMAGE)
    grid = F.affine_grid(sg.tensor(np.tile(np.eye(2, 3), (2, 1, 1))), (2, 3, 5, 6), align_corners=False)
    assert np.allclose(F.grid_sample(x, grid, align_corners=False).numpy(), IMAGE)
    with pytest.raises(sg.core.UnsupportedOpError, match="reflection"):
        F.grid_sample(x, grid, padding_mode="reflection")
    with pytest.raises(sg.core.UnsupportedOpError, match="bicubic"):
        F.grid_sample(x, grid, mode="bicubic")


def test_gumbel_softmax_soft_and_hard():
    logits = np.random.default_rng(2).standard_normal((4, 5))
    sg.manual_seed(3)
    noise = -np.log(np.random.default_rng(3).exponential(1.0, (4, 5)))  # the draw sg.manual_seed(3) gives
    t = sg.tensor(logits, requires_grad=True)
    soft = F.gumbel_softmax(t, tau=0.5)
    expected = np.exp((logits + noise) / 0.5)
    expected /= expected.sum(-1, keepdims=True)
    np.testing.assert_allclose(soft.detach().numpy(), expected, rtol=1e-12)
    sg.manual_seed(3)
    hard = F.gumbel_softmax(t, tau=0.5, hard=True)
    assert np.array_equal(hard.detach().numpy(), np.eye(5)[expected.argmax(-1)])
    (hard * sg.tensor(_ramp((4, 5)))).sum().backward()
    sg.manual_seed(3)
    t2 = sg.tensor(logits, requires_grad=True)
    (F.gumbel_softmax(t2, tau=0.5) * sg.tensor(_ramp((4, 5)))).sum().backward()
    np.testing.assert_allclose(t.grad.numpy(), t2.grad.numpy(), rtol=1e-12)  # straight-through


SEQUENCES = [rng.standard_normal((n, 3)) for n in (2, 4, 1, 4)]


def _packed_run(lib, mode, bidirectional, batch_first, enforce_sorted, state_dict):
    R = lib.nn.utils.rnn
    tensors = [lib.tensor(s, requires_grad=True) for s in SEQUENCES]
    order = sorted(range(4), key=lambda i: -SEQUENCES[i].shape[0]) if enforce_sorted else range(4)
    packed = R.pack_sequence([tensors[i] for i in order], enforce_sorted=enforce_sorted)
    model = getattr(lib.nn, mode)(3, 5, num_layers=2, bidirectional=bidirectional, batch_first=batch_first).double()
    model.load_state_dict({k: lib.tensor(v) for k, v in state_dict.items()})
    out, state = model(packed)
    padded, lengths = R.pad_packed_sequence(out, batch_first=True)
    final = state[0] if mode == "LSTM" else state
    loss = (padded * lib.tensor(_ramp(tuple(padded.shape)))).sum() + (final * final).sum()
    loss.backward()
    return [padded.detach().numpy(), final.detach().numpy(), np.asarray(lengths), out.data.detach().numpy(),
            np.asarray(out.batch_sizes)] + [t.grad.numpy() for t in tensors]


@pytest.mark.parametrize("enforce_sorted", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("mode", ["RNN", "LSTM", "GRU"])
def test_packed_sequences_through_recurrent_layers(mode, bidirectional, batch_first, enforce_sorted):
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    reference = getattr(torch.nn, mode)(3, 5, num_layers=2, bidirectional=bidirectional).double()
    state_dict = {k: v.detach().numpy() for k, v in reference.state_dict().items()}
    got = _packed_run(sg, mode, bidirectional, batch_first, enforce_sorted, state_dict)
    expected = _packed_run(torch, mode, bidirectional, batch_first, enforce_sorted, state_dict)
    for a, b in zip(got, expected):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_packed_sequence_matches_separate_runs_without_torch():
    """Each sequence run alone gives the packed run's outputs and final state."""
    model = sg.nn.GRU(3, 4, bidirectional=True)
    model.requires_grad_(False)
    packed = sg.nn.utils.rnn.pack_sequence([sg.tensor(s) for s in SEQUENCES], enforce_sorted=False)
    out, final = model(packed)
    padded, lengths = sg.nn.utils.rnn.pad_packed_sequence(out, total_length=5)
    assert padded.shape == (5, 4, 8) and lengths.tolist() == [2, 4, 1, 4]
    for i, sequence in enumerate(SEQUENCES):
        alone, alone_final = model(sg.tensor(sequence))
        np.testing.assert_allclose(padded[:len(sequence), i].numpy(), alone.numpy(), rtol=1e-12)
        assert np.all(padded[len(sequence):, i].numpy() == 0)
        np.testing.assert_allclose(final[:, i].numpy(), alone_final.numpy(), rtol=1e-12)
    unpacked = sg.nn.utils.rnn.unpack_sequence(sg.nn.utils.rnn.pack_sequence([sg.tensor(s) for s in SEQUENCES],
                                                                             enforce_sorted=False))
    assert all(np.array_equal(u.numpy(), s) for u, s in zip(unpacked, SEQUENCES))
    with pytest.raises(RuntimeError, match="sorted in decreasing order"):
        sg.nn.utils.rnn.pack_padded_sequence(sg.zeros(4, 2, 3), [2, 3])


def test_sequential_list_methods_as_pytorch():
    nn = sg.nn
    s = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    s[1] = nn.Tanh()
    assert [type(m).__name__ for m in s] == ["Linear", "Tanh", "Linear"]
    del s[0]
    s.append(nn.Sigmoid())
    s.insert(1, nn.ReLU())
    s.extend([nn.Identity()])
    assert [(name, type(m).__name__) for name, m in s.named_children()] == [
        ("0", "Tanh"), ("1", "ReLU"), ("2", "Linear"), ("3", "Sigmoid"), ("4", "Identity")]
    assert type(s[1:3]) is nn.Sequential and len(s[1:3]) == 2
    named = nn.Sequential(collections.OrderedDict([("a", nn.ReLU()), ("b", nn.Tanh())]))
    named[0] = nn.Sigmoid()
    assert list(dict(named.named_children())) == ["a", "b"] and type(named.a) is nn.Sigmoid
    del named[1]
    assert list(dict(named.named_children())) == ["0"]
    assert s(sg.ones(1, 3)).shape == (1, 1)


def test_module_apply_requires_grad_submodules_and_forward_hooks():
    nn = sg.nn
    model = nn.Sequential(nn.Linear(2, 3), nn.Sequential(nn.ReLU(), nn.Linear(3, 1)))
    seen = []
    assert model.apply(lambda m: seen.append(type(m).__name__)) is model
    assert seen == ["Linear", "ReLU", "Linear", "Sequential", "Sequential"]  # children first, as PyTorch
    model.apply(lambda m: nn.init.zeros_(m.weight) if isinstance(m, nn.Linear) else None)
    assert not model[0].weight.detach().numpy().any()
    model.requires_grad_(False)
    assert not any(p.requires_grad for p in model.parameters())
    assert model.get_submodule("1.1") is model[1][1] and model.get_parameter("1.1.bias") is model[1][1].bias
    with pytest.raises(AttributeError, match="no attribute `2`"):
        model.get_submodule("1.2")
    calls = []
    handle = model[0].register_forward_hook(lambda m, args, out: calls.append(tuple(out.shape)) or out * 2)
    pre = model[0].register_forward_pre_hook(lambda m, args: (args[0] + 1,))
    out = model[0](sg.ones(4, 2))
    assert calls == [(4, 3)] and np.allclose(out.numpy(), 2 * (2 * model[0].weight.sum(1) + model[0].bias).numpy())
    handle.remove()
    pre.remove()
    assert np.allclose(model[0](sg.ones(4, 2)).numpy(), model[0].bias.numpy()) and calls == [(4, 3)]
    with pytest.raises(RuntimeError, match="CPU only"):
        model.cuda()


CTC_LOGITS = np.random.default_rng(5).standard_normal((6, 3, 4))
CTC_CASES = [
    ([[1, 2, 2], [3, 1, 0], [2, 2, 2]], [6, 5, 4], [3, 2, 1], {}),
    ([[1, 2, 2], [3, 1, 0], [2, 2, 2]], [6, 5, 4], [3, 0, 1], dict(reduction="sum")),
    ([[1, 2, 2], [3, 1, 0], [2, 2, 2]], [2, 5, 4], [3, 2, 3], dict(reduction="none", zero_infinity=True)),
    ([1, 2, 2, 3, 1], [6, 5, 0], [3, 2, 0], dict(reduction="none")),  # concatenated targets, an empty input
    ([[1, 2, 2], [3, 1, 0], [2, 2, 2]], [6, 5, 4], [3, 2, 1], dict(reduction="none", blank=3)),
]


@pytest.mark.parametrize("targets, input_lengths, target_lengths, options", CTC_CASES, ids=str)
def test_ctc_loss_through_log_softmax(targets, input_lengths, target_lengths, options):
    """PyTorch's CTC gradient assumes log_softmax inputs: through one, it is the true gradient of the logits."""
    def call(lib, logits):
        return lib.nn.functional.ctc_loss(logits.log_softmax(2), lib.tensor(np.array(targets)),
                                          lib.tensor(np.array(input_lengths)), lib.tensor(np.array(target_lengths)),
                                          **options)
    _check(lambda lib, x: call(lib, x).reshape(-1), [CTC_LOGITS.copy()])


def test_ctc_loss_gradient_of_log_probs_is_the_true_derivative_and_module():
    log_probs = CTC_LOGITS - np.log(np.exp(CTC_LOGITS).sum(2, keepdims=True))
    targets, lengths = np.array([[1, 2, 2], [3, 1, 0], [2, 2, 2]]), np.array([3, 2, 1])
    call = lambda lib, lp: lib.nn.CTCLoss(reduction="none")(lp, lib.tensor(targets), lib.tensor(np.array([6, 5, 4])),
                                                            lib.tensor(lengths))
    value, grads = _run(sg, call, [log_probs])
    for got, expected in zip(grads, _finite_differences(call, [log_probs])):
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-7)
    unbatched = F.ctc_loss(sg.tensor(log_probs[:, 0]), sg.tensor(targets[0]), [6], [3], reduction="none")
    assert np.isclose(float(unbatched), value[0])
    impossible = F.ctc_loss(sg.tensor(log_probs), sg.tensor(targets), [1, 5, 4], [3, 2, 1], reduction="none")
    assert np.isinf(impossible[0].item()) and np.isfinite(impossible[1].item())
    with pytest.raises(RuntimeError, match="input_lengths"):
        F.ctc_loss(sg.tensor(log_probs), sg.tensor(targets), [7, 5, 4], [3, 2, 1])


def test_a_state_dict_loaded_before_the_first_call_gives_the_lazy_modules_their_sizes():
    """A model of lazy layers restored from a checkpoint before any call (inference from a saved d2l model): the
    sizes are the loaded tensors' and the values theirs (a 'size mismatch' error before), the optimizer built
    before holds them; a bias without its weight is a clear error. The outputs against PyTorch's, which loads alike."""
    def build(lib, lazy):
        nn = lib.nn
        if lazy:
            return nn.Sequential(nn.LazyConv2d(4, 3, groups=2), nn.LazyBatchNorm2d(), nn.Flatten(),
                                 nn.LazyLinear(3)).double()
        return nn.Sequential(nn.Conv2d(2, 4, 3, groups=2), nn.BatchNorm2d(4), nn.Flatten(), nn.Linear(16, 3)).double()
    source = build(sg, False)
    source(sg.tensor(rng.standard_normal((3, 2, 4, 4))))  # (running statistics away from their defaults)
    model = build(sg, True)
    optimizer = sg.optim.SGD(model.parameters(), lr=0.1)
    model.load_state_dict(source.state_dict())
    assert [type(layer) for layer in model] == [type(layer) for layer in source]
    model.eval(), source.eval()
    x = rng.standard_normal((2, 2, 4, 4))
    out = model(sg.tensor(x))
    np.testing.assert_array_equal(out.detach().numpy(), source(sg.tensor(x)).detach().numpy())
    out.sum().backward()
    weight = model[3].weight.detach().numpy().copy()
    optimizer.step()
    np.testing.assert_allclose(model[3].weight.detach().numpy(), weight - 0.1 * model[3].weight.grad.numpy())
    with pytest.raises(RuntimeError, match="bias but not its weight"):
        sg.nn.LazyLinear(3).load_state_dict({"bias": sg.ones(3)}, strict=False)
    torch = pytest.importorskip("torch")
    theirs = build(torch, True)
    theirs.load_state_dict({key: torch.tensor(value.numpy()) for key, value in source.state_dict().items()})
    theirs.eval()
    np.testing.assert_allclose(theirs(torch.tensor(x)).detach().numpy(), source(sg.tensor(x)).detach().numpy(),
                               rtol=1e-12)  # (the model loaded, before the optimizer's step)
