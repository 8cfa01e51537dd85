"""PyTorch-named Tensor methods (symgrad/eager/torch_methods.py), sg.Size and F.one_hot: values, indices and
gradients against PyTorch (float64, skipped when absent) and finite differences; ties, NaN, infinities,
empty and 0-d tensors; NumPy's calls of the same methods keep NumPy's meaning."""
import pickle
import warnings

import numpy as np
import pytest

import symgrad as sg
from gradcheck import numeric_grad

F = sg.nn.functional


def _data(seed=0):
    x = np.random.default_rng(seed).standard_normal((3, 5))
    x[0, 1] = x[0, 3]  # a tie
    x[2, 4] = np.inf
    return x


INDEX = np.array([[0, 1, 2, 0, 0], [2, 0, 0, 1, 2]])
# (name, call on a tensor): each returns a tensor or a tuple of tensors
CALLS = [
    ("sort", lambda t: t.sort(dim=1)),
    ("sort-descending", lambda t: t.sort(dim=0, descending=True)),
    ("argsort", lambda t: t.argsort(dim=1, descending=True)),
    ("topk", lambda t: t.topk(2)),
    ("topk-smallest", lambda t: t.topk(3, dim=0, largest=False)),
    ("chunk", lambda t: t.chunk(2, 1)),
    ("chunk-fewer", lambda t: t.chunk(4, 1)),
    ("split", lambda t: t.split(2, dim=1)),
    ("split-sizes", lambda t: t.split([1, 4], 1)),
    ("unbind", lambda t: t.unbind(1)),
    ("flip", lambda t: t.flip(0, 1)),
    ("roll", lambda t: t.roll((1, -2), (0, 1))),
    ("roll-flat", lambda t: t.roll(4)),
    ("repeat", lambda t: t.repeat(2, 1, 3)),
    ("cumsum", lambda t: t.cumsum(dim=1)),
    ("cumprod", lambda t: t.cumprod(0)),
    ("expand", lambda t: t[:1].expand(4, -1)),
    ("masked_fill", lambda t: t.masked_fill(t > 0.5, -1.0)),
    ("gather", lambda t: t.gather(1, _like(t, INDEX[:, :3]))),
    ("view_as", lambda t: t.view_as(t.new_zeros(5, 3))),
    ("reshape_as", lambda t: t.reshape_as(t.new_ones(15))),
    ("expand_as", lambda t: t[1:2].expand_as(t)),
    ("where", lambda t: t.where(t > 0.1, t * 3)),
    ("masked_select", lambda t: t.masked_select(t > 0.1)),
    ("amax", lambda t: t.amax(1)),
    ("amin", lambda t: t.amin((0, 1), keepdim=True)),
    ("tril", lambda t: t.tril(-1)),
    ("triu", lambda t: t.triu(1)),
    ("movedim", lambda t: t.unsqueeze(0).movedim(0, 2)),
    ("swapaxes", lambda t: t.swapaxes(0, 1)),
    ("tile", lambda t: t.tile((2, 1))),
    ("clamp_min", lambda t: t.clamp_min(0.3)),
    ("clamp_max", lambda t: t.clamp_max(0.3)),
    ("isnan", lambda t: t.isnan()),
    ("isfinite", lambda t: t.isfinite()),
    ("floor", lambda t: t.floor()),
    ("nonzero", lambda t: t.nonzero()),
    ("atan2", lambda t: t.atan2(t * 2 - 1)),
    ("subtract", lambda t: t.subtract(t * t)),
    ("repeat_interleave", lambda t: t.repeat_interleave(_like(t, np.array([1, 0, 2])), dim=0)),
    ("repeat_interleave-flat", lambda t: t.repeat_interleave(2)),
    ("lerp", lambda t: t.lerp(t * 2 + 1, 0.7)),
    ("lerp-tensor-weight", lambda t: t.lerp(t * 2 + 1, (t * 0 + 0.25))),
    ("addcmul", lambda t: t.addcmul(t, t + 1, value=0.5)),
    ("addcdiv", lambda t: t.addcdiv(t, t * t + 1, value=2)),
    ("diff", lambda t: t.diff(dim=1)),
    ("median", lambda t: t.median()),
    ("median-dim", lambda t: t.median(1)),
    ("kthvalue", lambda t: t.kthvalue(2, 0, keepdim=True)),
    ("cummax", lambda t: t.cummax(1)),
    ("cummin", lambda t: t.cummin(0)),
    ("index_add", lambda t: t.index_add(1, _like(t, np.array([0, 3])), t[:, :2] * 2, alpha=3)),
    ("index_fill", lambda t: t.index_fill(1, _like(t, np.array([0, 3])), -1.0)),
    ("index_copy", lambda t: t.index_copy(0, _like(t, np.array([2])), t[:1] * 5)),
]


def _like(t, array):
    """array as a tensor of t's library (sg or torch)."""
    return sg.tensor(array) if isinstance(t, sg.Tensor) else __import__("torch").tensor(array)


def _tensors(result):
    return list(result) if isinstance(result, tuple) else [result]


def _finite(x):
    return np.where(np.isinf(x), 3.0, x)


@pytest.mark.parametrize("name, call", CALLS, ids=[c[0] for c in CALLS])
def test_methods_match_pytorch_values_indices_and_gradients(name, call):
    torch = pytest.importorskip("torch")
    x = _finite(_data()) if name == "cumprod" else _data()  # PyTorch's cumprod gradient is NaN at inf
    ours, theirs = sg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    mine, other = _tensors(call(ours)), _tensors(call(theirs))
    assert len(mine) == len(other)
    for a, b in zip(mine, other):
        assert a.shape == tuple(b.shape) and a.dtype == np.dtype(str(b.dtype).replace("torch.", ""))
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-15, atol=0)  # 1 ulp
    floats = [(a, b) for a, b in zip(mine, other) if a.dtype.kind == "f"]
    if not floats:
        return
    weights = [np.linspace(-1, 2, a.numel()).reshape(tuple(a.shape)) for a, _ in floats]
    sum(((a * sg.tensor(w)).sum() for (a, _), w in zip(floats, weights)), sg.tensor(0.0)).backward()
    sum(((b * torch.tensor(w)).sum() for (_, b), w in zip(floats, weights)), torch.tensor(0.0)).backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name, call", [c for c in CALLS if c[0] not in ("argsort", "amin", "nonzero", "isnan",
                                                                         "isfinite", "floor")],
                         ids=lambda value: value if isinstance(value, str) else None)  # (no addresses: ids alike in every process)
def test_method_gradients_match_finite_differences(name, call):
    x = np.random.default_rng(1).standard_normal((3, 5))  # no ties: a differentiable point

    def loss(array):
        pieces = [p for p in _tensors(call(sg.tensor(array))) if p.dtype.kind == "f"]
        return sum(float((p * sg.tensor(np.linspace(-1, 2, p.numel()).reshape(tuple(p.shape)))).sum())
                   for p in pieces)

    t = sg.tensor(x, requires_grad=True)
    pieces = [p for p in _tensors(call(t)) if p.dtype.kind == "f"]
    sum((p * sg.tensor(np.linspace(-1, 2, p.numel()).reshape(tuple(p.shape)))).sum() for p in pieces).backward()
    expected = numeric_grad(lambda a: sg.asarray(loss(np.asarray(a))), [x], 0)
    np.testing.assert_allclose(t.grad.numpy(), expected, rtol=1e-6, atol=1e-7)


def test_scatter_and_scatter_add_match_pytorch_with_gradients_to_both_operands():
    torch = pytest.importorskip("torch")
    x, src = _data(), _data(3)[:2]  # PyTorch's backward wants src of the index's shape
    for method in ("scatter", "scatter_add"):
        ours, theirs = sg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        our_src, their_src = sg.tensor(src, requires_grad=True), torch.tensor(src, requires_grad=True)
        index = INDEX if method == "scatter_add" else np.array([[0, 1, 2, 1, 0], [2, 0, 1, 0, 1]])
        a = getattr(ours, method)(0, sg.tensor(index), our_src)
        b = getattr(theirs, method)(0, torch.tensor(index), their_src)
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
        weights = np.linspace(-1, 1, 15).reshape(3, 5)
        (a * sg.tensor(weights)).sum().backward()
        (b * torch.tensor(weights)).sum().backward()
        np.testing.assert_array_equal(ours.grad.numpy(), theirs.grad.numpy())
        np.testing.assert_array_equal(our_src.grad.numpy(), their_src.grad.numpy())
    filled = sg.tensor(x).scatter(1, sg.tensor(INDEX[:, :2]), value=7.0)
    np.testing.assert_array_equal(filled.numpy(), torch.tensor(x).scatter(1, torch.tensor(INDEX[:, :2]), 7.0).numpy())
    with pytest.raises(RuntimeError, match="out of bounds"):
        sg.tensor(x).scatter(0, sg.tensor(INDEX + 3), 1.0)


def test_scatter_scatter_add_and_gather_of_a_0d_tensor_as_pytorch():
    """A 0-d self (with a 0-d index and src, or src and index of one element) is a tensor of one element, as PyTorch
    takes it; these were an internal IndexError (scatter_reduce already took it). Gradients to self and src."""
    torch = pytest.importorskip("torch")
    calls = {"scatter": lambda lib, t, s: t.scatter(0, lib.tensor(0), s),
             "scatter value": lambda lib, t, s: t.scatter(-1, lib.tensor(0), value=7.0) * s,
             "scatter_add": lambda lib, t, s: t.scatter_add(0, lib.tensor(0), s),
             "scatter_add of one element": lambda lib, t, s: t.scatter_add(0, lib.tensor([0]), s.reshape(1)),
             "gather": lambda lib, t, s: t.gather(0, lib.tensor(0)) * s}
    for name, call in calls.items():
        results = []
        for lib in (sg, torch):
            t, s = lib.tensor(2.0, requires_grad=True), lib.tensor(5.0, requires_grad=True)
            out = call(lib, t, s)
            (out * 3.0).backward()
            results.append((tuple(out.shape), out.item(), t.grad.item(), s.grad.item(), out.grad_fn.name()))
        assert results[0] == results[1], (name, results)
    with pytest.raises(RuntimeError, match="out of bounds"):
        sg.tensor(1.0).scatter(0, sg.tensor(1), sg.tensor(5.0))
    with pytest.raises(IndexError, match="Dimension out of range"):
        sg.tensor(1.0).scatter_add(1, sg.tensor(0), sg.tensor(5.0))


def test_a_0d_boolean_index_is_a_new_axis_kept_or_emptied_as_numpy_and_pytorch():
    """x[True], x[t0d > 0] add an axis of length 1 (0 where false), as NumPy and PyTorch: a 0-d mask was NumPy's
    ValueError from nonzero, and Python's True indexed element 1 (x[True] was x[1], a silent wrong answer), on
    arrays, tensors and traced values alike; the gradient reaches the selected elements."""
    torch = pytest.importorskip("torch")
    x = np.arange(6.0).reshape(2, 3)
    keys = [True, False, np.bool_(True), np.array(False), (True, 1), (Ellipsis, True), (slice(None), np.False_),
            (True, [0, 1]), (0, True, slice(None)), (None, True, 0), ([1, 0], True, [2, 1])]
    for key in keys:
        want = x[key]
        for path, got in (("eager", sg.getitem(x, key)), ("compiled", sg.compile(lambda a: a[key])(x)),
                          ("tensor", sg.tensor(x)[key].numpy())):
            assert got.shape == want.shape, (key, path)
            np.testing.assert_array_equal(got, want, err_msg=f"{key} {path}")
    for lib in (sg, torch):
        t = lib.tensor(np.array([1.0, -2.0, 3.0]), requires_grad=True)
        zero_d = lib.tensor(np.array(0.5), requires_grad=True)
        picked, none = t[zero_d > 0], t[zero_d < 0]
        assert tuple(picked.shape) == (1, 3) and tuple(none.shape) == (0, 3)
        ((picked * lib.tensor(np.array([1.0, 2.0, 3.0]))).sum() + zero_d[zero_d > 0].sum() * 4.0).backward()
        np.testing.assert_array_equal(t.grad.numpy(), [1.0, 2.0, 3.0])
        assert zero_d.grad.item() == 4.0


def test_nan_sorts_as_the_largest_and_ties_keep_their_order_as_pytorch():
    torch = pytest.importorskip("torch")
    x = np.array([2.0, np.nan, -np.inf, 2.0, np.inf, 0.0, np.nan])
    for descending in (False, True):
        ours = sg.tensor(x).sort(descending=descending)
        theirs = torch.tensor(x).sort(descending=descending, stable=True)
        np.testing.assert_array_equal(ours.values.numpy(), theirs.values.numpy())
        np.testing.assert_array_equal(ours.indices.numpy(), theirs.indices.numpy())
    np.testing.assert_array_equal(sg.tensor(x).topk(3).values.numpy(), torch.tensor(x).topk(3).values.numpy())


def test_edge_shapes_empty_and_zero_d():
    empty = sg.tensor(np.zeros((0, 3)))
    assert empty.sort(0).values.shape == (0, 3) and empty.topk(0, dim=0).indices.shape == (0, 3)
    assert [p.shape for p in empty.split(2)] == [(0, 3)] and empty.unbind(0) == ()
    assert empty.repeat(2, 2).shape == (0, 6) and empty.cumsum(0).shape == (0, 3)
    scalar = sg.tensor(3.0, requires_grad=True)
    values, indices = scalar.sort()
    assert values.item() == 3.0 and indices.item() == 0
    assert scalar.topk(1).values.item() == 3.0 and scalar.argsort().item() == 0
    values.backward()
    assert scalar.grad.item() == 1.0
    with pytest.raises(RuntimeError, match="out of range"):
        sg.tensor([1.0, 2.0]).topk(3)
    with pytest.raises(RuntimeError, match="sum exactly to 2"):
        sg.tensor([1.0, 2.0]).split([1, 2])
    with pytest.raises(RuntimeError, match="greater than 0"):
        sg.tensor([1.0, 2.0]).chunk(0)
    with pytest.raises(RuntimeError, match="can not be smaller"):
        sg.tensor(np.ones((2, 2))).repeat(2)


def test_numpy_calls_keep_numpy_meaning():
    t = sg.tensor(np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(np.repeat(t, 2).numpy(), np.repeat(np.arange(6.0).reshape(2, 3), 2))
    np.testing.assert_array_equal(np.repeat(t, 2, axis=0).numpy(), np.repeat(t.numpy(), 2, axis=0))
    np.testing.assert_array_equal(np.argsort(sg.tensor([3.0, 1.0, 2.0])).numpy(), [1, 2, 0])
    np.testing.assert_array_equal(np.cumsum(t).numpy(), np.cumsum(t.numpy()))
    assert t.repeat(1, 2).shape == (2, 6)  # the method: PyTorch's


def test_new_factories_keep_the_dtype_and_take_pytorchs_arguments():
    t = sg.tensor(np.ones(3, np.float32))
    assert t.new_zeros(2, 3).dtype == np.float32 and t.new_ones((2,)).shape == (2,)
    full = t.new_full((2, 2), 3.5, requires_grad=True)
    assert full.requires_grad and full.tolist() == [[3.5, 3.5], [3.5, 3.5]]
    assert t.new_tensor([1, 2]).dtype == np.float32 and t.new_empty(4).numpy().tolist() == [0.0] * 4
    assert t.new_zeros(2, dtype=sg.long).dtype == np.int64
    with pytest.raises(RuntimeError, match="only device is 'cpu'"):
        t.new_zeros(2, device="cuda")
    with pytest.raises(TypeError, match="float16"):
        t.half()
    assert t.nelement() == 3 and t.ndimension() == 1 and t.is_contiguous()
    assert sg.tensor(3.0).nonzero().shape == (1, 0) and sg.tensor(0.0).nonzero().shape == (0, 0)


def test_unique_nan_to_num_and_random_draws():
    torch = pytest.importorskip("torch")
    labels = np.array([[3, 1, 3], [2, 1, 1]])
    for ours, theirs in zip(sg.tensor(labels).unique(return_inverse=True, return_counts=True),
                            torch.tensor(labels).unique(return_inverse=True, return_counts=True)):
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    special = np.array([1.0, np.nan, np.inf, -np.inf])
    np.testing.assert_array_equal(sg.tensor(special).nan_to_num(posinf=5.0).numpy(),
                                  torch.tensor(special).nan_to_num(posinf=5.0).numpy())
    assert np.isnan(sg.tensor([1.0, np.nan, 3.0]).median().item())
    assert sg.tensor(np.zeros((2, 0))).median().numpy().shape == ()
    sg.manual_seed(3)
    draws = sg.tensor([[0.0, 1.0, 3.0], [1.0, 1.0, 0.0]]).multinomial(200, replacement=True)
    assert draws.shape == (2, 200) and draws.dtype == np.int64
    assert set(draws.numpy()[0]) <= {1, 2} and set(draws.numpy()[1]) <= {0, 1}
    assert 0.65 < (draws.numpy()[0] == 2).mean() < 0.85
    assert sorted(sg.tensor([1.0, 1.0, 1.0]).multinomial(3).tolist()) == [0, 1, 2]  # without replacement
    coins = sg.tensor(np.full(2000, 0.3)).bernoulli()
    assert set(np.unique(coins.numpy())) <= {0.0, 1.0} and 0.25 < coins.numpy().mean() < 0.35
    with pytest.raises(RuntimeError, match="without replacement"):
        sg.tensor([1.0, 1.0]).multinomial(3)
    with pytest.raises(RuntimeError, match="in \\[0, 1\\]"):
        sg.tensor([1.5]).bernoulli()
    with pytest.raises(RuntimeError, match="out of range"):
        sg.tensor([1.0]).kthvalue(2)


def test_inference_mode_is_no_grad_as_a_context_and_both_decorators():
    x = sg.tensor([1.0], requires_grad=True)
    with sg.inference_mode():
        assert not (x * 2).requires_grad
    with sg.inference_mode(False):
        assert (x * 2).requires_grad

    @sg.inference_mode
    def bare(v):
        return v * 2

    @sg.inference_mode()
    def called(v):
        return v * 2
    assert not bare(x).requires_grad and not called(x).requires_grad and sg.is_grad_enabled()


def test_function_forms():
    t = sg.tensor([[3.0, 1.0, 2.0]])
    assert sg.topk(t, 1).indices.tolist() == [[0]]
    assert [p.shape for p in sg.chunk(t, 3, dim=1)] == [(1, 1)] * 3
    assert [p.tolist() for p in sg.unbind(t, 1)] == [[3.0], [1.0], [2.0]]
    assert sg.scatter_add(t, 1, sg.tensor([[0, 0]]), sg.tensor([[1.0, 1.0]])).tolist() == [[5.0, 1.0, 2.0]]
    assert sg.gather(t, 1, sg.tensor([[2]])).tolist() == [[2.0]] and sg.index_select(t, 1, [0]).tolist() == [[3.0]]
    assert sg.masked_select(t, t > 1.5).tolist() == [3.0, 2.0] and sg.eq(t, 1.0).tolist() == [[False, True, False]]
    assert sg.mul(t, 2).tolist() == [[6.0, 2.0, 4.0]] and sg.neg(t).tolist() == [[-3.0, -1.0, -2.0]]
    assert sg.rsqrt(sg.tensor([4.0])).tolist() == [0.5] and sg.gt(t, 2).tolist() == [[True, False, False]]


def test_size_is_a_tuple_with_pytorchs_behaviour():
    t = sg.zeros(2, 3, 4)
    assert isinstance(t.shape, sg.Size) and isinstance(t.size(), tuple) and isinstance(t.shape, tuple)
    assert t.shape == (2, 3, 4) and t.size() == t.shape and t.size(1) == 3 and t.size(-1) == 4
    assert t.shape.numel() == 24 == t.numel() and t.size == 24  # t.size uncalled: NumPy's count
    assert t.shape[1:] == sg.Size([3, 4]) and isinstance(t.shape[1:], sg.Size) and t.shape[0] == 2
    assert repr(t.shape) == "sg.Size([2, 3, 4])" and repr(sg.tensor(1.0).shape) == "sg.Size([])"
    assert sg.Size([]).numel() == 1 and hash(t.shape) == hash((2, 3, 4))
    assert pickle.loads(pickle.dumps(t.shape)) == (2, 3, 4)
    assert (t * 2).shape == (2, 3, 4) and isinstance((t * 2).shape, sg.Size)  # a deferred or computed result
    n, c, h = t.shape  # unpacks as a tuple
    assert (n, c, h) == (2, 3, 4)


def test_one_hot_matches_pytorch_and_refuses_bad_classes():
    labels = np.array([[0, 2], [1, 0]])
    out = F.one_hot(sg.tensor(labels))
    assert out.dtype == np.int64 and out.shape == (2, 2, 3)
    torch = pytest.importorskip("torch")
    np.testing.assert_array_equal(out.numpy(), torch.nn.functional.one_hot(torch.tensor(labels)).numpy())
    np.testing.assert_array_equal(F.one_hot(sg.tensor(labels), 5).numpy(),
                                  torch.nn.functional.one_hot(torch.tensor(labels), 5).numpy())
    assert F.one_hot(sg.tensor(np.zeros(0, np.int64)), 4).shape == (0, 4)
    with pytest.raises(RuntimeError, match="non-negative"):
        F.one_hot(sg.tensor([-1, 0]))
    with pytest.raises(RuntimeError, match="smaller than num_classes"):
        F.one_hot(sg.tensor([3]), 3)
    with pytest.raises(RuntimeError, match="empty"):
        F.one_hot(sg.tensor(np.zeros(0, np.int64)))
    with pytest.raises(TypeError, match="integer"):
        F.one_hot(sg.tensor([1.0]))


@pytest.mark.parametrize("name, args", [
    ("masked_fill_", (lambda lib, t: t > 0.2, -1.0)), ("relu_", ()), ("sigmoid_", ()), ("clamp_min_", (0.1,)),
    ("lerp_", (lambda lib, t: t * 2, 0.3)), ("index_add_", (1, lambda lib, t: lib.tensor([0, 2]),
                                                           lambda lib, t: t[:, :2] * 3)),
    ("scatter_", (0, lambda lib, t: lib.tensor(INDEX[:, :4]), lambda lib, t: t[:2, :4] * 2)),
    ("fill_diagonal_", (5.0,)), ("cumsum_", (1,)), ("addcmul_", (lambda lib, t: t * 3, lambda lib, t: t + 1)),
])
def test_in_place_forms_match_pytorch_with_gradients(name, args):
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(5).standard_normal((3, 5))
    results = []
    for lib in (sg, torch):
        leaf = lib.tensor(x, requires_grad=True)
        t = leaf * 1.0  # not a leaf: in-place is allowed and recorded
        out = getattr(t, name)(*[a(lib, t) if callable(a) else a for a in args])
        assert out is t
        (t * lib.tensor(np.linspace(-1, 1, 15).reshape(3, 5))).sum().backward()
        results.append((t.detach().numpy(), leaf.grad.numpy()))
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-13, atol=1e-15)


def test_random_fills_draw_in_place_and_refuse_a_leaf_that_requires_grad():
    sg.manual_seed(0)
    weight = sg.nn.Parameter(sg.tensor(np.zeros((200, 50))))
    with sg.no_grad():
        weight.uniform_(-0.5, 0.5)
        values = weight.detach().numpy()
        assert np.abs(values).max() <= 0.5 and values.std() > 0.25
        weight.normal_(2.0, 0.1)
        assert abs(weight.detach().numpy().mean() - 2.0) < 0.01
        weight.bernoulli_(0.25)
        assert set(np.unique(weight.detach().numpy())) == {0.0, 1.0}
        weight.exponential_(4.0)
        assert abs(weight.detach().numpy().mean() - 0.25) < 0.02
    assert weight.requires_grad and weight.is_leaf
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        weight.uniform_()


_OTHER = np.random.default_rng(9).standard_normal((3, 3))
ALIASES = [  # (name, call): PyTorch's Tensor methods that are NumPy functions under other names, or small compositions
    ("addmm", lambda t, lib: t.addmm(t, lib.tensor(_OTHER), beta=0.5, alpha=2)),
    ("narrow", lambda t, lib: t.narrow(1, 1, 2)), ("select", lambda t, lib: t.select(0, -1)),
    ("unflatten", lambda t, lib: t.reshape(9).unflatten(0, (3, 3))), ("cross", lambda t, lib: t.cross(t * 2 + 1, 1)),
    ("isclose", lambda t, lib: t.isclose(t + 1e-6)), ("count_nonzero", lambda t, lib: (t > 0).count_nonzero(0)),
    ("logical_xor", lambda t, lib: (t > 0).logical_xor(t > 0.5)), ("outer", lambda t, lib: t[0].outer(t[1])),
    ("inner", lambda t, lib: t[0].inner(t[1])), ("mv", lambda t, lib: t.mv(t[0])), ("bmm", lambda t, lib: t[None].bmm(
        t[None])), ("fliplr", lambda t, lib: t.fliplr()), ("flipud", lambda t, lib: t.flipud()),
    ("diag", lambda t, lib: t.diag()), ("kron", lambda t, lib: t.kron(t)), ("rot90", lambda t, lib: t.rot90(1, (0, 1))),
    ("sinc", lambda t, lib: t.sinc()), ("deg2rad", lambda t, lib: t.deg2rad()), ("copysign", lambda t, lib: t.copysign(
        -t)), ("fmax", lambda t, lib: t.fmax(t * 0)), ("logaddexp", lambda t, lib: t.logaddexp(t * 2)),
    ("float_power", lambda t, lib: t.float_power(2)), ("xlogy", lambda t, lib: t.abs().xlogy(t.abs() + 1)),
    ("msort", lambda t, lib: t.msort()), ("sgn", lambda t, lib: t.sgn()), ("arctan", lambda t, lib: t.arctan()),
    ("asinh", lambda t, lib: t.asinh()), ("lgamma", lambda t, lib: t.abs().lgamma()), ("nansum", lambda t, lib: t.nansum()),
    ("mT", lambda t, lib: t.mT), ("take_along_dim", lambda t, lib: t.take_along_dim(lib.tensor([[0], [2], [1]]), 1)),
    ("split_with_sizes", lambda t, lib: t.split_with_sizes([1, 2], 1)[1]),
]


@pytest.mark.parametrize("name, call", ALIASES, ids=[a[0] for a in ALIASES])
def test_aliases_match_pytorch(name, call):
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(8).standard_normal((3, 3))
    ours, theirs = sg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    a, b = call(ours, sg), call(theirs, torch)
    assert tuple(a.shape) == tuple(b.shape) and np.dtype(a.dtype) == np.dtype(str(b.dtype).split(".")[-1])
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-13, atol=1e-15)
    if a.dtype.kind == "f" and name not in ("sgn",):
        a.sum().backward()
        b.sum().backward()
        np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-12, atol=1e-14)


def test_predicates_and_properties():
    t = sg.tensor([[1.0, 2.0]])
    assert t.allclose(t + 1e-9) and t.equal(sg.tensor([[1.0, 2.0]])) and not t.equal(sg.tensor([1.0, 2.0]))
    assert not t.is_complex() and t.is_signed() and t.is_cpu and t.get_device() == -1
    assert not (t.is_cuda or t.is_xpu or t.is_mps or t.is_meta)  # pytorch/examples' dcgan asks is_xpu
    assert t.itemsize == 8 and t.nbytes == 16 and t.positive() is t
    with pytest.raises(RuntimeError, match="exceeds dimension size"):
        t.narrow(1, 1, 2)


OUT_CALLS = [("matmul", lambda lib, a, b, out: lib.matmul(a, b.T, out=out)),
             ("mul", lambda lib, a, b, out: lib.mul(a, b, out=out)),
             ("add", lambda lib, a, b, out: lib.add(a, b, out=out)),
             ("sum", lambda lib, a, b, out: lib.sum(a, 0, out=out)),
             ("exp", lambda lib, a, b, out: lib.exp(a, out=out))]


@pytest.mark.parametrize("name", [name for name, _ in OUT_CALLS])
@pytest.mark.parametrize("out_shape", [(3, 3), (0,), ()])
def test_out_argument(name, out_shape):
    """`torch.mul(a, b, out=c)` (the tensors tutorial): c holds the result, resized to its shape, and is returned."""
    call = dict(OUT_CALLS)[name]
    a, b = (np.arange(9.0).reshape(3, 3) / 4, np.ones((3, 3)) * 0.5)
    out = sg.zeros(out_shape, dtype=sg.double)
    result = call(sg, sg.tensor(a), sg.tensor(b), out)
    assert result is out
    torch = pytest.importorskip("torch")
    expected = call(torch, torch.tensor(a), torch.tensor(b), torch.zeros(out_shape, dtype=torch.float64))
    np.testing.assert_array_equal(out.numpy(), expected.numpy())


def test_out_argument_errors():
    """out= keeps no history, so PyTorch refuses it when an operand requires grad (not under no_grad), and a
    result that does not cast to out's kind; a float32 result goes into a float64 out."""
    w = sg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="out=... arguments don't support automatic differentiation"):
        sg.mul(w, w, out=sg.zeros(2, dtype=sg.double))
    with sg.no_grad():
        assert sg.mul(w, w, out=sg.zeros(2, dtype=sg.double)).tolist() == [1.0, 4.0]
    with pytest.raises(RuntimeError, match="can't be cast"):
        sg.mul(sg.tensor([1.5]), 2.0, out=sg.zeros(1, dtype=sg.long))
    into = sg.zeros(2, dtype=sg.double)
    sg.add(sg.tensor([1.0, 2.0], dtype=sg.float), 1.0, out=into)
    assert into.dtype == np.float64 and into.tolist() == [2.0, 3.0]
    with pytest.raises(TypeError, match="argument 'out' must be Tensor"):
        sg.mul(w.detach(), 2.0, out=np.zeros(2))


def test_zero_dim_index_of_a_vector():
    """A 0-d index is one of one element, as PyTorch takes it: the transforms tutorial's one-hot
    `zeros(10).scatter_(0, tensor(y), value=1)`, scatter/scatter_add of a 0-d src, gather giving a 0-d result."""
    assert sg.zeros(10, dtype=sg.float).scatter_(0, sg.tensor(3), value=1).tolist() == [0, 0, 0, 1] + [0] * 6
    s = sg.tensor(5.0, requires_grad=True)
    out = sg.zeros(4, dtype=sg.double).scatter(0, sg.tensor(1), s * 2) + sg.zeros(4, dtype=sg.double).scatter_add(
        0, sg.tensor(3), s)
    out.sum().backward()
    assert out.tolist() == [0, 10, 0, 5] and s.grad.item() == 3.0
    x = sg.tensor([0.0, 1.0, 2.0, 3.0], requires_grad=True)
    y = x.gather(0, sg.tensor(2))
    y.backward()
    assert y.shape == () and y.item() == 2.0 and x.grad.tolist() == [0, 0, 1, 0]
    with pytest.raises(RuntimeError, match="out of bounds"):
        sg.zeros(3, dtype=sg.float).scatter(0, sg.tensor(3), 1.0)
    torch = pytest.importorskip("torch")
    assert torch.zeros(4).scatter(0, torch.tensor(3), torch.tensor(5.0)).tolist() == [0, 0, 0, 5]
    assert torch.tensor([0.0, 1.0, 2.0]).gather(0, torch.tensor(2)).shape == ()


NEGATIVE_INDEX = [("gather", lambda lib, t, i: t.gather(0, i), RuntimeError),
                  ("scatter", lambda lib, t, i: t.scatter(0, i, 1.0), RuntimeError),
                  ("scatter_add", lambda lib, t, i: t.scatter_add(0, i, t[:1]), RuntimeError),
                  ("index_select", lambda lib, t, i: t.index_select(0, i), IndexError),
                  ("index_add", lambda lib, t, i: t.index_add(0, i, t[:1]), IndexError),
                  ("index_copy", lambda lib, t, i: t.index_copy(0, i, t[:1]), IndexError)]


@pytest.mark.parametrize("name", [name for name, _, _ in NEGATIVE_INDEX])
def test_negative_index_refused(name):
    """PyTorch refuses index -1 in these (where NumPy's indexing would take the last element: a silent number);
    index_fill and take_along_dim count it from the end in both."""
    _, call, error = next(entry for entry in NEGATIVE_INDEX if entry[0] == name)
    with pytest.raises(error, match="out of"):
        call(sg, sg.tensor([0.0, 1.0, 2.0, 3.0]), sg.tensor([-1]))
    assert sg.tensor([0.0, 1.0, 2.0, 3.0]).index_fill(0, sg.tensor([-1]), 9.0).tolist() == [0, 1, 2, 9]
    torch = pytest.importorskip("torch")
    with pytest.raises(error, match="out of"):
        call(torch, torch.tensor([0.0, 1.0, 2.0, 3.0]), torch.tensor([-1]))


def test_index_select_by_a_0d_index_keeps_the_dimension():
    """PyTorch's index_select takes a 0-d index as a vector of one (shape (3, 1) below; it gave (3,), which broadcasts
    on silently), and refuses an index of two dimensions (it gave a 3-d take)."""
    t = sg.tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
    picked = t.index_select(1, sg.tensor(2))
    assert picked.shape == (3, 1) and picked.tolist() == [[2.0], [6.0], [10.0]]
    picked.sum().backward()
    assert t.grad.numpy()[:, 2].tolist() == [1.0, 1.0, 1.0] and t.grad.numpy().sum() == 3.0
    with pytest.raises(IndexError, match="supposed to be a vector"):
        t.index_select(0, sg.tensor([[1]]))
    torch = pytest.importorskip("torch")
    assert torch.arange(12.0).reshape(3, 4).index_select(1, torch.tensor(2)).shape == (3, 1)


def test_values_indices_print_as_pytorch_return_types():
    """`print(x.max(1))` reads as PyTorch's torch.return_types.max, in sg's name; the pair unpacks, indexes and
    pickles as before."""
    x = sg.tensor([[3.0, 1.0], [0.5, 4.0]])
    pair = x.max(1)
    assert repr(pair) == "sg.return_types.max(\nvalues=tensor([3., 4.]),\nindices=tensor([0, 1]))"
    assert repr(x.sort()).startswith("sg.return_types.sort(\nvalues=") and repr(x.topk(1)).startswith(
        "sg.return_types.topk(")
    values, indices = pair
    assert values.tolist() == [3.0, 4.0] and pair[1].tolist() == [0, 1] and pair.indices.tolist() == [0, 1]
    assert repr(pickle.loads(pickle.dumps(pair))) == repr(pair)
    torch = pytest.importorskip("torch")
    assert repr(torch.tensor([[3.0, 1.0], [0.5, 4.0]]).max(1)) == repr(pair).replace("sg.", "torch.")


def test_function_forms_tutorials_call():
    """torch.asin/acos/atan..., torch.unique, torch.sin_(b) (the introyt tensors tutorial) as functions of tensors,
    equal to the methods; the in-place forms refuse an array (its copy would change, not it)."""
    t = sg.tensor([0.25, 0.5])
    for name in ("asin", "acos", "atan", "asinh", "atanh"):
        assert getattr(sg, name)(t).tolist() == getattr(t, name)().tolist()
    assert sg.acosh(sg.tensor([1.5])).tolist() == sg.tensor([1.5]).acosh().tolist()
    assert sg.unique(sg.tensor([3, 1, 3])).tolist() == [1, 3] and sg.kthvalue(t, 1).values.item() == 0.25
    b = sg.tensor([0.0, 1.0])
    assert sg.sin_(b) is b and b.tolist() == [0.0, float(np.sin(1.0))]
    with pytest.raises(TypeError, match="in place"):
        sg.sin_(np.zeros(2))


def test_shape_errors_are_runtime_errors():
    """PyTorch raises RuntimeError for operands that do not broadcast; ported `except RuntimeError:` catches ours."""
    with pytest.raises(RuntimeError):
        sg.ones(2, 3) * sg.ones(3, 2)
    with pytest.raises(ValueError):  # (and it stays the ValueError it was)
        sg.ones(2, 3) + sg.ones(4)


def _scatter_reduce_both(lib, x, index, src, dim, reduce, include_self):
    """Value and gradients (self's, src's) of a weighted sum of x.scatter_reduce(...) in `lib` (symgrad or torch)."""
    t, s = lib.tensor(x, requires_grad=True), lib.tensor(src, requires_grad=True)
    y = t.scatter_reduce(dim, lib.tensor(index), s, reduce, include_self=include_self)
    (y * lib.tensor(np.linspace(-1, 2, y.numel()).reshape(tuple(y.shape)).astype(x.dtype))).sum().backward()
    return y.detach().numpy(), t.grad.numpy(), s.grad.numpy()


SCATTER_REDUCES = [(r, i) for r in ("sum", "prod", "mean", "amax", "amin") for i in (True, False)]


@pytest.mark.parametrize("reduce, include_self", SCATTER_REDUCES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_scatter_reduce_matches_pytorch_with_ties_zeros_and_gradients(reduce, include_self, dtype):
    """Ties among src and with self (amax/amin split the gradient evenly among them), zeros (prod), dim -1."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    x, src = rng.standard_normal((3, 5)).astype(dtype), np.round(rng.standard_normal((2, 5))).astype(dtype)
    src[1, 2] = 0
    if include_self:  # (without include_self PyTorch still counts self's element among the ties, and gives it
        x[0, 1], x[2, 0] = 0, src[1, 0]  # none of the gradient: it then sums to less than 1; symgrad's sums to 1)
    tol = 1e-10 if dtype == np.float64 else 1e-5
    for index, source, dim in ((INDEX, src, 0), (INDEX[:, :3].T.copy(), src[:, :3].T.copy(), -1)):
        ours = _scatter_reduce_both(sg, x, index, source, dim, reduce, include_self)
        theirs = _scatter_reduce_both(torch, x, index, source, dim, reduce, include_self)
        for a, b in zip(ours, theirs):
            assert a.dtype == b.dtype
            np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


@pytest.mark.parametrize("reduce, include_self", SCATTER_REDUCES)
def test_scatter_reduce_nan_infinities_and_several_zeros_as_pytorch(reduce, include_self):
    """NaN spreads (amax/amin: its place's elements get NaN gradients, as PyTorch's 0/0), -inf ties, prod with two
    zeros at one place. (prod's gradient at an infinity is the exact one, PyTorch's result/src gives NaN:
    skipped.)"""
    torch = pytest.importorskip("torch")
    x = np.array([1.0, np.nan, 3.0, -np.inf, 0.0, -0.0])
    src = np.array([1.0, 1.0, np.nan, 2.0, -np.inf, 0.0, 0.0, 5.0])
    index = np.array([0, 0, 1, 2, 3, 4, 4, 5])
    ours = _scatter_reduce_both(sg, x, index, src, 0, reduce, include_self)
    unseen = x.copy()  # (PyTorch without include_self counts self's element among amax's ties: not that element)
    unseen[np.unique(index)] = x[np.unique(index)] if include_self else 12345.0
    theirs = _scatter_reduce_both(torch, unseen, index, src, 0, reduce, include_self)
    np.testing.assert_array_equal(np.signbit(ours[0]), np.signbit(theirs[0]))
    finite = slice(None) if reduce != "prod" else np.array([0, 2, 4, 5])  # prod: places without NaN or inf
    finite_src = slice(None) if reduce != "prod" else np.isin(index, [0, 2, 4, 5])
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-12)
    np.testing.assert_allclose(ours[1][finite], theirs[1][finite], rtol=1e-12)
    np.testing.assert_allclose(ours[2][finite_src], theirs[2][finite_src], rtol=1e-12)


@pytest.mark.parametrize("reduce, include_self", SCATTER_REDUCES)
def test_scatter_reduce_gradient_matches_finite_differences(reduce, include_self):
    rng = np.random.default_rng(2)
    x, src = rng.standard_normal((3, 4)), rng.standard_normal((2, 4))
    index = np.array([[0, 1, 2, 0], [0, 0, 1, 2]])
    weights = np.linspace(-1, 2, 12).reshape(3, 4)

    def loss(a, b):
        return (sg.tensor(a).scatter_reduce(0, sg.tensor(index), sg.tensor(b), reduce, include_self=include_self)
                * sg.tensor(weights)).sum().numpy()
    _, grad_self, grad_src = _scatter_reduce_both(sg, x, index, src, 0, reduce, include_self)
    for k, (arr, grad) in enumerate(((x, grad_self), (src, grad_src))):
        expected = numeric_grad(lambda *args: sg.asarray(loss(*map(np.asarray, args))), [x, src], k)
        np.testing.assert_allclose(grad, expected, rtol=1e-6, atol=1e-7)


def _index_reduce_both(lib, x, index, src, reduce, include_self):
    """Value and gradients (self's, source's) of a weighted sum of x.index_reduce(1, ...) in `lib`."""
    t, s = lib.tensor(x, requires_grad=True), lib.tensor(src, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (PyTorch's: index_reduce is in beta)
        y = t.index_reduce(1, lib.tensor(index), s, reduce, include_self=include_self)
    (y * lib.tensor(np.linspace(-1, 2, y.numel()).reshape(tuple(y.shape)))).sum().backward()
    return y.detach().numpy(), t.grad.numpy(), s.grad.numpy()


@pytest.mark.parametrize("reduce, include_self", [(r, i) for r in ("prod", "mean", "amax", "amin")
                                                  for i in (True, False)])
def test_index_reduce_is_scatter_reduce_along_slices_as_pytorchs(reduce, include_self):
    """torch.index_reduce(_) (a GraphSAGE-style mean or max of neighbours): source's columns reduced into self's at
    index, repeated places included; gradients against finite differences, values and gradients against PyTorch."""
    rng = np.random.default_rng(3)
    x, src, index = rng.standard_normal((2, 4)), rng.standard_normal((2, 5)), np.array([0, 2, 0, 3, 0])
    ours = _index_reduce_both(sg, x, index, src, reduce, include_self)
    spread = np.broadcast_to(index, src.shape)
    np.testing.assert_allclose(ours[0], _scatter_reduce_both(sg, x, spread, src, 1, reduce, include_self)[0])
    weights = np.linspace(-1, 2, 8).reshape(2, 4)
    for k in (0, 1):
        expected = numeric_grad(lambda a, b: sg.asarray((sg.tensor(np.asarray(a)).index_reduce(
            1, sg.tensor(index), sg.tensor(np.asarray(b)), reduce, include_self=include_self)
            * sg.tensor(weights)).sum().numpy()), [x, src], k)
        np.testing.assert_allclose(ours[1 + k], expected, rtol=1e-6, atol=1e-7)
    t = sg.tensor(x.copy())
    assert t.index_reduce_(1, sg.tensor(index), sg.tensor(src), reduce, include_self=include_self) is t
    np.testing.assert_allclose(t.numpy(), ours[0])
    with pytest.raises(RuntimeError, match="Expected reduce to be one of prod, mean, amax or amin but got sum"):
        t.index_reduce(1, sg.tensor(index), sg.tensor(src), "sum")
    torch = pytest.importorskip("torch")
    for a, b in zip(ours, _index_reduce_both(torch, x, index, src, reduce, include_self)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_scatter_reduce_empty_index_0d_integers_in_place_and_refusals():
    torch = pytest.importorskip("torch")
    for reduce in ("sum", "prod", "mean", "amax", "amin"):
        x = sg.tensor([1.0, 2.0], requires_grad=True)
        y = x.scatter_reduce(0, sg.tensor(np.zeros(0, np.int64)), sg.tensor(np.zeros(0)), reduce)
        assert y.tolist() == [1.0, 2.0]
        y.sum().backward()
        assert x.grad.tolist() == [1.0, 1.0]
        zero_d = sg.scatter_reduce(sg.tensor(2.0), 0, sg.tensor(0), sg.tensor(3.0), reduce)
        assert zero_d.shape == () and zero_d.item() == torch.tensor(2.0).scatter_reduce(
            0, torch.tensor(0), torch.tensor(3.0), reduce).item()
    ints, index, src = np.array([1, 2, 3, 4]), np.array([0, 0, 1, 1]), np.array([2, 3, -4, -7])
    for reduce in ("sum", "prod", "mean", "amax", "amin"):  # mean of integers: floor division, as PyTorch's
        for include_self in (True, False):
            ours = sg.tensor(ints).scatter_reduce(0, sg.tensor(index), sg.tensor(src), reduce,
                                                  include_self=include_self)
            theirs = torch.tensor(ints).scatter_reduce(0, torch.tensor(index), torch.tensor(src), reduce,
                                                       include_self=include_self)
            assert ours.tolist() == theirs.tolist() and ours.dtype == np.int64
    for reduce in ("sum", "prod", "mean", "amax", "amin"):  # src an array (sg.ones gives one), self a constant
        ours = sg.tensor([1.0, 5.0]).scatter_reduce(0, sg.tensor([1, 1]), sg.ones(2) * 2, reduce)
        assert ours.tolist() == torch.tensor([1.0, 5.0]).scatter_reduce(0, torch.tensor([1, 1]), torch.ones(2) * 2,
                                                                        reduce).tolist()
    t = sg.tensor([1.0, 5.0])
    t.scatter_reduce_(0, sg.tensor([1, 1]), sg.tensor([7.0, 3.0]), "amin", include_self=False)
    assert t.tolist() == [1.0, 3.0]
    with pytest.raises(RuntimeError, match="reduce must be"):
        t.scatter_reduce(0, sg.tensor([0]), sg.tensor([1.0]), "max")
    with pytest.raises(NotImplementedError, match="float or integer tensors"):
        sg.tensor([True]).scatter_reduce(0, sg.tensor([0]), sg.tensor([False]), "amax")
    with pytest.raises(RuntimeError, match="out of bounds"):
        t.scatter_reduce(0, sg.tensor([2]), sg.tensor([1.0]), "sum")


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
def test_scatter_reduce_in_repeated_steps_follows_the_changing_data(reduce):
    """The ties and counts are read from each step's values: a cached or compiled step must not keep old ones."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    x, src = rng.standard_normal((3, 5)), np.round(rng.standard_normal((2, 5)))
    ours = [sg.tensor(x, requires_grad=True), sg.tensor(src, requires_grad=True)]
    theirs = [torch.tensor(x, requires_grad=True), torch.tensor(src, requires_grad=True)]
    for step in range(6):
        for (a, b), lib in ((ours, sg), (theirs, torch)):
            y = (a * 1).scatter_reduce(0, lib.tensor(INDEX), b * 1, reduce, include_self=step % 2 == 0)
            (y * y).sum().backward()
        for mine, other in zip(ours, theirs):
            np.testing.assert_allclose(mine.grad.numpy(), other.grad.numpy(), rtol=1e-10, atol=1e-12)
            with sg.no_grad():
                mine -= 0.3 * mine.grad
            with torch.no_grad():
                other -= 0.3 * other.grad
            mine.grad = other.grad = None


@pytest.mark.parametrize("name", ["sign", "sgn", "sign_"])
def test_sign_of_a_boolean_tensor_is_its_truth_values_as_pytorchs(name):
    """t.sign() of a bool tensor is PyTorch's bool copy (random_programs_torch seed 9134: NumPy's TypeError here);
    sg.sign, NumPy's function, still refuses booleans."""
    values = np.array([[True, False], [False, True]])
    t = sg.tensor(values)
    got = getattr(t, name)()
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(got.numpy(), values)
    assert (got is t) == name.endswith("_")
    with pytest.raises(TypeError, match="booleans"):
        sg.sign(t)


def test_square_of_a_boolean_tensor_is_int64_as_pytorchs():
    """t.square() of a bool tensor is PyTorch's int64 (random_programs_torch seed 20015: NumPy's int8 here)."""
    got = sg.tensor([[True, False]]).square()
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got.numpy(), [[1, 0]])


@pytest.mark.parametrize("source, destination", [(0, -1), (-1, 0), (0, 0)])
def test_movedim_of_a_0d_tensor_is_its_view(source, destination):
    """movedim takes dim 0 or -1 of a 0-d tensor, as PyTorch: NumPy's moveaxis has no axis there and divided by
    its ndim, a ZeroDivisionError (random_programs_torch seed 20021); dim 1 is PyTorch's IndexError."""
    t = sg.tensor(2.0, requires_grad=True)
    moved = t.movedim(source, destination)
    assert moved.shape == () and moved._base is t and sg.movedim(t, source, destination).item() == 2.0
    (moved * 3).backward()
    assert t.grad.item() == 3.0
    with pytest.raises(IndexError, match="Dimension out of range"):
        t.movedim(1, 0)
