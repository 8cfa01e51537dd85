"""Probes of the nn functions against PyTorch's numbers (float64), for inputs the layer tests did not cover."""
import math

import numpy as np
import pytest

import symgrad as sg
from symgrad.finite_differences import check_grads

F = sg.nn.functional
TABLE = np.arange(30.0).reshape(10, 3)
INDEX = np.array([1, 2, 4, 5, 4, 3, 2, 9])
# PyTorch's values: with include_last_offset the last bag runs to the end of input whatever the last offset says
LAST_BAG = {"sum": [42.0, 45.0, 48.0], "mean": [14.0, 15.0, 16.0], "max": [27.0, 28.0, 29.0]}


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_last_offset_short_of_input(mode):
    """offsets [0, 2, 5, 6] with include_last_offset over 8 indices: the last bag was indices 5:6 only
    (sum [9, 10, 11]); PyTorch's is 5:8 (sum [42, 45, 48]), and its gradient reaches rows 2 and 9."""
    table = sg.tensor(TABLE.copy(), requires_grad=True)
    out = F.embedding_bag(sg.tensor(INDEX), table, sg.tensor([0, 2, 5, 6]), mode=mode, include_last_offset=True)
    np.testing.assert_allclose(out.detach().numpy()[2], LAST_BAG[mode], rtol=1e-12)
    out.sum().backward()
    try:
        import torch
    except ImportError:
        return
    expected = torch.tensor(TABLE.copy(), requires_grad=True)
    torch.nn.functional.embedding_bag(torch.tensor(INDEX), expected, torch.tensor([0, 2, 5, 6]), mode=mode,
                                      include_last_offset=True).sum().backward()
    np.testing.assert_allclose(table.grad.numpy(), expected.grad.numpy(), rtol=1e-12)
    empty = F.embedding_bag(sg.tensor(INDEX), sg.tensor(TABLE), sg.tensor([0]), mode=mode, include_last_offset=True)
    assert empty.shape == (0, 3)


@pytest.mark.parametrize("d", [1, 2, 3])
def test_adaptive_max_pool_gives_a_tie_gradient_to_the_first_maximum(d):
    """Tied maxima of an adaptive window shared the gradient (sg.max's rule): adaptive_max_pool1d([1, 3, 3, 0, 2, 2],
    4) gave [0, 1.5, 0.5, 0, 1.5, 0.5]; PyTorch (and max_pool) give it to the first maximum in row-major order of
    the window, [0, 2, 0, 0, 2, 0]. Windows that divide and that do not, both backends and eager."""
    plain = sg.tensor(np.array([[[1.0, 3, 3, 0, 2, 2]]]), requires_grad=True)
    F.adaptive_max_pool1d(plain, 4).sum().backward()
    np.testing.assert_array_equal(plain.grad.numpy(), [[[0, 2, 0, 0, 2, 0]]])
    try:
        import torch
    except ImportError:
        return
    x = np.random.default_rng(d).integers(0, 3, (2, 2) + (7,) * d).astype(float)
    pool, expected_pool = getattr(F, f"adaptive_max_pool{d}d"), getattr(torch.nn.functional, f"adaptive_max_pool{d}d")
    for size in (3, 1, 7):
        weights = np.cos(np.arange(4 * size ** d)).reshape((2, 2) + (size,) * d)
        expected = torch.tensor(x, requires_grad=True)
        (expected_pool(expected, size) * torch.tensor(weights)).sum().backward()
        t = sg.tensor(x, requires_grad=True)
        (pool(t, size) * sg.tensor(weights)).sum().backward()
        compiled = [sg.compile(sg.grad(lambda a: sg.sum(pool(a, size) * weights)), backend=backend)(x)
                    for backend in ("numpy", "llvm")]
        for grad in [t.grad.numpy()] + compiled:
            np.testing.assert_allclose(grad, expected.grad.numpy(), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("batch_first", [False, True])
def test_multihead_attention_inside_compile(batch_first):
    """MultiheadAttention called on traced arrays: its .view/.permute/.unsqueeze were Tensor methods a traced
    value lacks (AttributeError) and its .transpose(0, 1) took NumPy's meaning (a ShapeError). Values and the
    gradient of the query, batched or not, against the eager layer and PyTorch."""
    sg.manual_seed(0)
    attention = sg.nn.MultiheadAttention(4, 2, batch_first=batch_first)
    rng = np.random.default_rng(1)
    query, keys = rng.standard_normal((2, 5, 4)), rng.standard_normal((2, 3, 4) if batch_first else (3, 5, 4))
    mask = np.triu(np.ones((5 if batch_first else 2, 3), bool), 1)
    for q, k in ((query, keys), (query[0] if batch_first else query[:, 0], keys[0] if batch_first else keys[:, 0])):
        def loss(a, k=k):
            out, weights = attention(a, k, k, attn_mask=mask)
            return sg.sum(out ** 2) + sg.sum(weights * 3.0)
        t = sg.tensor(q, requires_grad=True)
        expected = loss(t, sg.tensor(k))
        expected.backward()
        for backend in ("numpy", "llvm"):
            value, grad = sg.compile(sg.value_and_grad(loss), backend=backend)(q)
            np.testing.assert_allclose(value, expected.item(), rtol=1e-12)
            np.testing.assert_allclose(grad, t.grad.numpy(), rtol=1e-10, atol=1e-14)
        try:
            import torch
        except ImportError:
            continue
        reference = torch.nn.MultiheadAttention(4, 2, batch_first=batch_first).double()
        state = attention.state_dict()
        reference.load_state_dict({name: torch.tensor(p.detach().numpy()) for name, p in state.items()})
        tq = torch.tensor(q, requires_grad=True)
        out, weights = reference(tq, torch.tensor(k), torch.tensor(k), attn_mask=torch.tensor(mask))
        ((out ** 2).sum() + (weights * 3.0).sum()).backward()
        np.testing.assert_allclose(t.grad.numpy(), tq.grad.numpy(), rtol=1e-10, atol=1e-14)


def test_flatten_and_unflatten_modules_inside_compile():
    """nn.Flatten called x.flatten(1, -1), NumPy's ravel on a traced array (TypeError), nn.Unflatten x.view
    and an unbatched InstanceNorm x.unsqueeze (AttributeError): PyTorch's meaning on traced arrays as on tensors."""
    x = np.arange(24.0).reshape(2, 3, 4)
    for module, shape in ((sg.nn.Flatten(), (2, 12)), (sg.nn.Flatten(0, 1), (6, 4)), (sg.nn.Unflatten(-1, (2, -1)),
                          (2, 3, 2, 2)), (sg.nn.Unflatten(1, (3, 1)), (2, 3, 1, 4))):
        for backend in ("numpy", "llvm"):
            np.testing.assert_array_equal(sg.compile(lambda a: module(a), backend=backend)(x), x.reshape(shape))
        np.testing.assert_array_equal(module(sg.tensor(x)).numpy(), x.reshape(shape))
    norm = sg.nn.InstanceNorm1d(3)  # an unbatched (C, L) input: its unsqueeze(0) did not exist on a traced array
    np.testing.assert_allclose(sg.compile(lambda a: norm(a))(x[0]), norm(sg.tensor(x[0])).numpy(), rtol=1e-12)


@pytest.mark.parametrize("backend", ["eager", "llvm", "numpy"])
def test_threshold_keeps_nan(backend):
    """F.threshold was where(x > threshold, x, value), which gave a NaN input the value (-5.0); PyTorch's is
    where(x <= threshold, value, x): NaN, with gradient 1."""
    torch = pytest.importorskip("torch")
    x = np.array([np.nan, 0.5, 1.0, 1.5, -np.inf, np.inf])
    t = torch.tensor(x, requires_grad=True)
    want = torch.nn.functional.threshold(t, 1.0, -5.0)
    want.sum().backward()
    f = lambda a: sg.nn.functional.threshold(a, 1.0, -5.0)  # noqa: E731
    if backend == "eager":
        s = sg.tensor(x, requires_grad=True)
        got = f(s)
        got.sum().backward()
        got, grad = got.detach().numpy(), s.grad.numpy()
    else:
        got = sg.compile(f, backend=backend)(x)
        grad = sg.compile(sg.grad(lambda a: sg.sum(f(a))), backend=backend)(x)
    np.testing.assert_array_equal(got, want.detach().numpy())
    np.testing.assert_array_equal(grad, t.grad.numpy())


@pytest.mark.parametrize("pool, kwargs", [("max_pool1d", dict(dilation=2)), ("max_pool1d", {}), ("avg_pool1d", {}),
                                          ("avg_pool1d", dict(count_include_pad=False))])
def test_ceil_mode_keeps_a_window_that_overhangs_the_input(pool, kwargs):
    """With ceil_mode a window that starts inside the input is kept even when it is longer than the padded input:
    max_pool1d(x of 4, kernel 3, stride 3, dilation 2, ceil_mode=True) is PyTorch's max(x[0], x[2]) (5.196 for
    [1, 2, 3, 4] ** 1.5); it was a ValueError ("does not fit"). Values and gradients against PyTorch and finite
    differences, eager and compiled."""
    x = np.arange(1.0, 5.0).reshape(1, 1, 4) ** 1.5
    cases = [(3, 3, 0), (5, 3, 0), (5, 2, 1)]
    for kernel, stride, padding in cases:
        if pool == "max_pool1d" and kwargs and kernel == 5:
            continue
        fn = lambda a: getattr(F, pool)(a, kernel, stride, padding, ceil_mode=True, **kwargs)
        t = sg.tensor(x, requires_grad=True)
        out = fn(t)
        out.sum().backward()
        check_grads(lambda a: sg.sum(fn(a)), (x,), order=1)
        compiled = sg.compile(sg.grad(lambda a: sg.sum(fn(a))))(x)
        np.testing.assert_allclose(compiled, t.grad.numpy(), rtol=1e-12)
        try:
            import torch
        except ImportError:
            continue
        expected = torch.tensor(x, requires_grad=True)
        value = getattr(torch.nn.functional, pool)(expected, kernel, stride, padding, ceil_mode=True, **kwargs)
        value.sum().backward()
        np.testing.assert_allclose(out.detach().numpy(), value.detach().numpy(), rtol=1e-12)
        np.testing.assert_allclose(t.grad.numpy(), expected.grad.numpy(), rtol=1e-12)


def test_kl_div_of_a_negative_target_is_nan():
    """kl_div(log [0.2, 0.3, 0.5], [0, -0.5, 1.5], reduction='none') was [0, -0.602, 1.648]: a target that is not
    positive was taken for 0 minus its log term, so a negative target gave a number. PyTorch's xlogy(t, t) - t x
    is NaN there (input gradient -t = 0.5 still, target gradient NaN); a target of 0 gives 0. Eager and compiled."""
    x, target = np.log([0.2, 0.3, 0.5, 0.1]), np.array([0.0, -0.5, 1.5, np.nan])
    expected = [0.0, np.nan, 1.5 * (np.log(1.5) - x[2]), np.nan]
    a, b = sg.tensor(x, requires_grad=True), sg.tensor(target, requires_grad=True)
    with np.errstate(invalid="ignore"):
        out = F.kl_div(a, b, reduction="none")
    out.sum().backward()
    compiled = sg.compile(lambda p, q: F.kl_div(p, q, reduction="none"))(x, target)
    grads = sg.compile(sg.grad(lambda p, q: sg.sum(F.kl_div(p, q, reduction="none")), argnums=(0, 1)))(x, target)
    for value in (out.detach().numpy(), compiled):
        np.testing.assert_allclose(value, expected, rtol=1e-12)
    for grad in (a.grad.numpy(), grads[0]):
        np.testing.assert_allclose(grad, [0.0, 0.5, -1.5, np.nan], rtol=1e-12)
    for grad in (b.grad.numpy(), grads[1]):
        assert np.isnan(grad[1]) and np.isnan(grad[3])
        np.testing.assert_allclose(grad[2], np.log(1.5) + 1 - x[2], rtol=1e-12)
    try:
        import torch
    except ImportError:
        return
    np.testing.assert_allclose(out.detach().numpy(), torch.nn.functional.kl_div(
        torch.tensor(x), torch.tensor(target), reduction="none").numpy(), rtol=1e-12)


@pytest.mark.parametrize("var_shape", [(2, 3), (2, 1), (2,)])
def test_gaussian_nll_loss_with_a_traced_variance(var_shape):
    """gaussian_nll_loss inside sg.compile/sg.grad with the variance an argument was a TracerError (its check for
    negative entries read the traced value with np.asarray). It now traces; a negative entry, which eager calls
    refuse with PyTorch's ValueError, gives NaN there. Values and gradients of input and var against PyTorch."""
    rng = np.random.default_rng(0)
    x, y, var = rng.standard_normal((2, 3)), rng.standard_normal((2, 3)), np.exp(rng.standard_normal(var_shape))
    var.flat[0] = 1e-9  # below eps: clamped, its gradient passed through
    loss = lambda a, b, v: F.gaussian_nll_loss(a, b, v, full=True, reduction="sum")
    value = sg.compile(loss)(x, y, var)
    grads = sg.compile(sg.grad(loss, argnums=(0, 2)))(x, y, var)
    assert np.isnan(sg.compile(loss)(x, y, -var))
    with pytest.raises(ValueError, match="negative"):
        loss(sg.tensor(x), sg.tensor(y), sg.tensor(-var))
    check_grads(lambda a, v: loss(a, y, v), (x, var + 0.5), order=1)
    try:
        import torch
    except ImportError:
        return
    tx, tv = torch.tensor(x, requires_grad=True), torch.tensor(var, requires_grad=True)
    expected = torch.nn.functional.gaussian_nll_loss(tx, torch.tensor(y), tv, full=True, reduction="sum")
    expected.backward()
    np.testing.assert_allclose(value, expected.item(), rtol=1e-12)
    np.testing.assert_allclose(grads[0], tx.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(grads[1], tv.grad.numpy(), rtol=1e-12)


def test_embedding_bag_of_a_2d_input_takes_per_sample_weights_of_its_shape():
    """A 2-d input's per_sample_weights have the input's shape, as PyTorch requires; they were refused ("should
    match the indices' (6,)") unless flattened, which PyTorch refuses. Values and the gradients of the table and
    the weights against PyTorch; a flat weight vector for a 2-d input is PyTorch's error."""
    index = np.array([[1, 2, 4], [4, 3, 0]])
    scale = np.array([[0.5, 1.5, 2.0], [1.0, -1.0, 3.0]])
    table, weights = sg.tensor(TABLE.copy(), requires_grad=True), sg.tensor(scale, requires_grad=True)
    out = F.embedding_bag(sg.tensor(index), table, mode="sum", per_sample_weights=weights)
    (out * sg.tensor(np.cos(np.arange(6.0)).reshape(2, 3))).sum().backward()
    np.testing.assert_allclose(out.detach().numpy()[1], TABLE[4] - TABLE[3] + 3 * TABLE[0], rtol=1e-12)
    with pytest.raises(ValueError, match="per_sample_weights"):
        F.embedding_bag(sg.tensor(index), table, mode="sum", per_sample_weights=sg.tensor(scale.reshape(-1)))
    try:
        import torch
    except ImportError:
        return
    expected_table, expected_weights = torch.tensor(TABLE.copy(), requires_grad=True), torch.tensor(scale,
                                                                                                     requires_grad=True)
    expected = torch.nn.functional.embedding_bag(torch.tensor(index), expected_table, mode="sum",
                                                 per_sample_weights=expected_weights)
    (expected * torch.tensor(np.cos(np.arange(6.0)).reshape(2, 3))).sum().backward()
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(table.grad.numpy(), expected_table.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(weights.grad.numpy(), expected_weights.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize("d", [1, 2, 3])
@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_conv_padding_modes(d, mode):
    """Conv1d/2d/3d with padding_mode reflect, replicate or circular (a clear UnsupportedOpError before): the input
    padded by F.pad in that mode, then convolved unpadded, as PyTorch. Int, tuple and 'same' padding (an odd
    total split with the extra on the right), stride and dilation; values and the gradients of the input, weight
    and bias against PyTorch, eager and compiled, and finite differences."""
    rng = np.random.default_rng(d)
    x = rng.standard_normal((2, 2) + (6,) * d)
    cases = [dict(padding=1), dict(padding=tuple(range(1, d + 1)), stride=2), dict(padding="same", dilation=2),
             dict(padding="same", kernel_size=2)]
    for case in cases:
        options = {**dict(kernel_size=3), **case}
        conv = getattr(sg.nn, f"Conv{d}d")(2, 3, padding_mode=mode, **options)
        t = sg.tensor(x, requires_grad=True)
        out = conv(t)
        weights = np.cos(np.arange(out.numel())).reshape(out.shape)
        (out * sg.tensor(weights)).sum().backward()
        compiled = sg.compile(sg.grad(lambda a: sg.sum(conv(a) * weights)))(x)
        np.testing.assert_allclose(compiled, t.grad.numpy(), rtol=1e-12, atol=1e-14)
        with sg.no_grad():  # the finite differences read the output, which the parameters make require grad
            check_grads(lambda a: sg.sum(conv(a) * weights), (x,), order=1)
        try:
            import torch
        except ImportError:
            continue
        expected = getattr(torch.nn, f"Conv{d}d")(2, 3, padding_mode=mode, dtype=torch.float64, **options)
        with torch.no_grad():
            expected.weight.copy_(torch.tensor(conv.weight.detach().numpy()))
            expected.bias.copy_(torch.tensor(conv.bias.detach().numpy()))
        tx = torch.tensor(x, requires_grad=True)
        value = expected(tx)
        (value * torch.tensor(weights)).sum().backward()
        np.testing.assert_allclose(out.detach().numpy(), value.detach().numpy(), rtol=1e-12, atol=1e-14)
        for mine, theirs in ((t, tx), (conv.weight, expected.weight), (conv.bias, expected.bias)):
            np.testing.assert_allclose(mine.grad.numpy(), theirs.grad.numpy(), rtol=1e-12, atol=1e-13)


def test_binary_cross_entropy_in_a_trace_has_pytorchs_gradient_at_saturated_probabilities():
    """sg.grad/sg.compile of binary_cross_entropy at p exactly 0 or 1 gave NaN (the clamped logs' derivative,
    0 * inf), where PyTorch and symgrad's eager tensors give (p - y) / max(p (1 - p), eps): [-1.000000004e12,
    1.000000004e12, 0, 0] for p = [0, 1, 0, 1], y = [1, 0, 0, 1] (eps = float32(1e-12), as PyTorch's; eager's was
    1e-12, 4e-9 off). Inside the interior the gradient and the Hessian are the loss's own
    (finite differences), and the target's gradient is -logit(p) as PyTorch's."""
    p, y = np.array([0.0, 1.0, 0.0, 1.0, 0.3]), np.array([1.0, 0.0, 0.0, 1.0, 0.6])
    loss = lambda a, b: F.binary_cross_entropy(a, b, reduction="sum")
    saturated = 1 / float(np.float32(1e-12))  # PyTorch's bound of p (1 - p) is 1e-12 rounded to a float32
    expected = [-saturated, saturated, 0.0, 0.0, (0.3 - 0.6) / 0.21]
    for backend in ("numpy", "llvm"):
        np.testing.assert_allclose(sg.compile(sg.grad(loss), backend=backend)(p, y), expected, rtol=1e-12)
    np.testing.assert_allclose(sg.grad(loss, argnums=1)(p, y)[4], np.log(0.7 / 0.3), rtol=1e-12)
    inside, target = np.array([0.2, 0.7, 0.45]), np.array([1.0, 0.0, 0.3])
    check_grads(lambda a: loss(a, target), (inside,), order=2)
    np.testing.assert_allclose(np.diag(sg.hessian(lambda a: loss(a, target))(inside)),
                               target / inside ** 2 + (1 - target) / (1 - inside) ** 2, rtol=1e-12)
    eager = sg.tensor(p, requires_grad=True)
    loss(eager, sg.tensor(y)).backward()
    np.testing.assert_allclose(eager.grad.numpy(), expected, rtol=1e-12)
    try:
        import torch
    except ImportError:
        return
    reference = torch.tensor(p, requires_grad=True)
    torch.nn.functional.binary_cross_entropy(reference, torch.tensor(y), reduction="sum").backward()
    np.testing.assert_allclose(sg.grad(loss)(p, y), reference.grad.numpy(), rtol=1e-12)


def test_cross_entropy_targets_given_to_a_trace():
    """cross_entropy in sg.compile/sg.grad with the target an argument: probability targets were a TracerError
    (their shape was read with np.asarray) and now trace (values and gradients against PyTorch, both arguments);
    class-index targets, checked and picked with NumPy, are a clear UnsupportedOpError naming the loss, not
    NumPy's conversion error; closed over, they work as before."""
    rng = np.random.default_rng(0)
    logits, probabilities = rng.standard_normal((3, 4)), rng.dirichlet(np.ones(4), 3)
    loss = lambda a, t: F.cross_entropy(a, t, label_smoothing=0.1)
    value = sg.compile(loss)(logits, probabilities)
    grads = sg.compile(sg.grad(loss, argnums=(0, 1)))(logits, probabilities)
    classes = np.array([1, 0, 3])
    for fn in (loss, lambda a, t: F.nll_loss(a, t)):
        with pytest.raises(sg.UnsupportedOpError, match="class-index targets must be concrete"):
            sg.compile(fn)(logits, classes)
    closed = sg.compile(sg.grad(lambda a: loss(a, classes)))(logits)
    try:
        import torch
    except ImportError:
        return
    a, t = torch.tensor(logits, requires_grad=True), torch.tensor(probabilities, requires_grad=True)
    expected = torch.nn.functional.cross_entropy(a, t, label_smoothing=0.1)
    expected.backward()
    np.testing.assert_allclose(value, expected.item(), rtol=1e-12)
    np.testing.assert_allclose(grads[0], a.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(grads[1], t.grad.numpy(), rtol=1e-12)
    reference = torch.tensor(logits, requires_grad=True)
    torch.nn.functional.cross_entropy(reference, torch.tensor(classes), label_smoothing=0.1).backward()
    np.testing.assert_allclose(closed, reference.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize("weight", [None, np.array([1.0, 2.0, 3.0, 4.0])])
def test_label_smoothing_with_every_target_ignored_has_a_gradient_of_zeros(weight):
    """cross_entropy(label_smoothing=0.2, reduction='mean') with every target equal to ignore_index is NaN, as
    PyTorch's 0/0, with a gradient of zeros, as PyTorch's; the smoothing term's own 0/0 made the gradient NaN (the
    NLL part already gave zeros). Eager and compiled."""
    logits, target = np.random.default_rng(0).standard_normal((3, 4)), np.array([1, 1, 1])
    loss = lambda a, w: F.cross_entropy(a, target, weight=w, ignore_index=1, label_smoothing=0.2)
    t = sg.tensor(logits, requires_grad=True)
    value = loss(t, None if weight is None else sg.tensor(weight))
    value.backward()
    assert np.isnan(value.item())
    np.testing.assert_array_equal(t.grad.numpy(), np.zeros((3, 4)))
    np.testing.assert_array_equal(sg.compile(sg.grad(lambda a: loss(a, weight)))(logits), np.zeros((3, 4)))
    assert np.isnan(sg.compile(lambda a: loss(a, weight))(logits))
    try:
        import torch
    except ImportError:
        return
    reference = torch.tensor(logits, requires_grad=True)
    torch.nn.functional.cross_entropy(reference, torch.tensor(target), None if weight is None else torch.tensor(weight),
                                      ignore_index=1, label_smoothing=0.2).backward()
    np.testing.assert_array_equal(reference.grad.numpy(), np.zeros((3, 4)))


ZERO_WEIGHTS = np.array([0.0, 0.0, 1.0, 1.0])  # targets 0 and 1 weigh 0: the weighted mean divides by 0


@pytest.mark.parametrize("name, target, options", [
    ("cross_entropy", [0, 1, 1], {}), ("nll_loss", [0, 1, 1], {}), ("cross_entropy", [0, 1, -100], {}),
    ("nll_loss", [1, -100, 0], {}), ("cross_entropy", [0, 1, 1], {"label_smoothing": 0.2}),
    ("cross_entropy", [0, 1, 2], {"weight": np.array([1.0, -0.5, -0.5, 2.0])}),  # weights summing to 0: -inf
])
def test_weighted_mean_over_weights_summing_to_zero_is_pytorchs_division_by_zero(name, target, options):
    """reduction='mean' with the counted targets' class weights summing to 0: PyTorch divides by that 0, so the loss
    is NaN (0/0, or an infinity) and each counted target's gradient w * g / 0 (NaN for weight 0); an ignored
    target's gradient stays 0. symgrad's gradient was 0 everywhere. Eager, uncompiled and both backends."""
    from gradcheck import value_and_grad_everywhere
    logits, target = np.random.default_rng(1).standard_normal((3, 4)), np.array(target)
    options = {"weight": ZERO_WEIGHTS, **options}

    def loss(a):
        weight = sg.tensor(options["weight"]) if isinstance(a, sg.Tensor) else options["weight"]
        return getattr(F, name)(a if name == "cross_entropy" else F.log_softmax(a, 1), target,
                                **{**options, "weight": weight})

    with np.errstate(all="ignore"):
        paths = value_and_grad_everywhere(loss, (logits,))
    counted = target != -100
    for path, (value, (grad,)) in paths.items():
        if "label_smoothing" in options or options["weight"] is ZERO_WEIGHTS:
            assert np.isnan(value), path
            assert np.isnan(grad[counted]).all() and (grad[~counted] == 0).all(), path
    try:
        import torch
    except ImportError:
        return
    t = torch.tensor(logits, requires_grad=True)
    expected = getattr(torch.nn.functional, name)(t if name == "cross_entropy" else t.log_softmax(1),
                                                  torch.tensor(target), **{**options, "weight": torch.tensor(
                                                      options["weight"])})
    expected.backward()
    for path, (value, (grad,)) in paths.items():
        np.testing.assert_array_equal(value, expected.item(), err_msg=path)
        np.testing.assert_array_equal(grad, t.grad.numpy(), err_msg=path)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("name, options", [
    ("nll_loss", {"weight": np.array([1.0, 2.0, 3.0])}), ("cross_entropy", {"weight": np.array([1.0, 2.0, 3.0])}),
    ("cross_entropy", {"label_smoothing": 0.1}), ("cross_entropy", {"label_smoothing": 0.1, "weight": [1.0, 2, 3]}),
])
def test_an_ignored_target_with_a_log_probability_of_minus_inf_is_not_read(name, options, reduction):
    """An ignored target's terms were multiplied by 0: a row whose log-probability is -inf (a logit of -inf, a
    probability of 0) made the loss NaN where PyTorch, which never reads it, gives a number; selected away now.
    Eager, uncompiled and both backends."""
    from gradcheck import value_and_grad_everywhere
    logits = np.array([[-np.inf, 0.5, 1.0], [0.2, -0.3, 0.1], [1.0, -2.0, 0.0]])
    target = np.array([-100, 1, 2])
    options = {**options, "weight": None if "weight" not in options else np.asarray(options["weight"], float)}

    def loss(a):
        weight = options["weight"]
        weight = sg.tensor(weight) if isinstance(a, sg.Tensor) and weight is not None else weight
        log_probs = a if name == "cross_entropy" else F.log_softmax(a, 1)
        return sg.sum(getattr(F, name)(log_probs, target, **{**options, "weight": weight}, reduction=reduction))

    with np.errstate(all="ignore"):
        paths = value_and_grad_everywhere(loss, (logits,))
    for path, (value, (grad,)) in paths.items():
        assert np.isfinite(value) and np.isfinite(grad).all() and (grad[0] == 0).all(), path
    try:
        import torch
    except ImportError:
        return
    t = torch.tensor(logits, requires_grad=True)
    weight = None if options["weight"] is None else torch.tensor(options["weight"])
    expected = getattr(torch.nn.functional, name)(t if name == "cross_entropy" else t.log_softmax(1),
                                                  torch.tensor(target), **{**options, "weight": weight},
                                                  reduction=reduction).sum()
    expected.backward()
    for path, (value, (grad,)) in paths.items():
        np.testing.assert_allclose(value, expected.item(), rtol=1e-12, err_msg=path)
        np.testing.assert_allclose(grad, t.grad.numpy(), rtol=1e-12, atol=1e-15, err_msg=path)


@pytest.mark.parametrize("kdim, vdim", [(3, 5), (None, 5), (3, None)])
def test_multihead_attention_with_keys_and_values_of_other_widths(kdim, vdim):
    """MultiheadAttention(kdim=, vdim=) (an UnsupportedOpError before) has PyTorch's q_proj_weight (E, E),
    k_proj_weight (E, kdim) and v_proj_weight (E, vdim) in place of in_proj_weight, in PyTorch's order and state_dict
    names; outputs, attention weights and all gradients equal PyTorch's given its state_dict, with a key padding
    mask, batch_first, eager and compiled."""
    mine = sg.nn.MultiheadAttention(4, 2, kdim=kdim, vdim=vdim, batch_first=True)
    names = [name for name, _ in mine.named_parameters()]
    assert names == ["q_proj_weight", "k_proj_weight", "v_proj_weight", "in_proj_bias", "out_proj.weight",
                     "out_proj.bias"] and mine.in_proj_weight is None
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal(shape) for shape in ((2, 3, 4), (2, 5, kdim or 4), (2, 5, vdim or 4)))
    mask = np.zeros((2, 5), bool)
    mask[1, 3:] = True
    inputs = [sg.tensor(a, requires_grad=True) for a in (q, k, v)]
    out, weights = mine(*inputs, key_padding_mask=sg.tensor(mask))
    (out * sg.tensor(np.cos(np.arange(24.0)).reshape(2, 3, 4))).sum().backward()
    compiled = sg.compile(lambda a, b, c: mine(a, b, c, key_padding_mask=mask)[0])(q, k, v)
    np.testing.assert_allclose(compiled, out.detach().numpy(), rtol=1e-12)
    try:
        import torch
    except ImportError:
        return
    theirs = torch.nn.MultiheadAttention(4, 2, kdim=kdim, vdim=vdim, batch_first=True, dtype=torch.float64)
    theirs.load_state_dict({name: torch.tensor(value.detach().numpy()) for name, value in mine.state_dict().items()})
    expected_inputs = [torch.tensor(a, requires_grad=True) for a in (q, k, v)]
    expected, expected_weights = theirs(*expected_inputs, key_padding_mask=torch.tensor(mask))
    (expected * torch.tensor(np.cos(np.arange(24.0)).reshape(2, 3, 4))).sum().backward()
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(weights.detach().numpy(), expected_weights.detach().numpy(), rtol=1e-12)
    for a, b in zip(inputs, expected_inputs):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-12, atol=1e-15)
    for (name, a), (_, b) in zip(mine.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-12, atol=1e-15, err_msg=name)


def test_embedding_refuses_a_negative_index():
    """F.embedding([-1], table) gave the table's last row, NumPy's negative indexing; PyTorch has no negative
    indices there and raises 'index out of range in self', as symgrad now does (nn.Embedding too). A negative
    padding_idx still counts from the end, as PyTorch's."""
    table = sg.tensor(TABLE.copy())
    for index in ([-1], [[0, -10]]):
        with pytest.raises(IndexError, match="index out of range in self"):
            F.embedding(sg.tensor(index), table)
    layer = sg.nn.Embedding(10, 3, padding_idx=-1)
    with pytest.raises(IndexError, match="index out of range in self"):
        layer(sg.tensor([2, -1]))
    out = layer(sg.tensor([2, 9]))
    out.sum().backward()
    np.testing.assert_array_equal(layer.weight.grad.numpy()[[2, 9]], [[1, 1, 1], [0, 0, 0]])
    try:
        import torch
    except ImportError:
        return
    with pytest.raises(IndexError, match="index out of range in self"):
        torch.nn.functional.embedding(torch.tensor([-1]), torch.tensor(TABLE))


@pytest.mark.parametrize("shape", [(1, 3, 1), (2, 3, 1, 1)])
def test_instance_and_group_norm_refuse_a_single_value_as_pytorch(shape):
    """InstanceNorm without running statistics over one spatial element, and group_norm with one value in all
    (N * C / groups * spatial == 1), gave zeros (x minus its own mean); PyTorch raises, and symgrad now raises the
    same ValueError. InstanceNorm with running statistics refused already; two values per group still work."""
    x = sg.tensor(np.arange(1.0, 1.0 + math.prod(shape)).reshape(shape))
    instance = getattr(sg.nn, f"InstanceNorm{len(shape) - 2}d")(3)
    with pytest.raises(ValueError, match="Expected more than 1 spatial element"):
        instance(x)
    if shape[0] == 1:
        with pytest.raises(ValueError, match="Expected more than 1 value per channel"):
            F.group_norm(x, 3)
    np.testing.assert_allclose(F.group_norm(x, 1).detach().numpy().reshape(shape[0], -1).mean(1), 0, atol=1e-15)
    try:
        import torch
    except ImportError:
        return
    with pytest.raises(ValueError, match="Expected more than 1 spatial element"):
        getattr(torch.nn, f"InstanceNorm{len(shape) - 2}d")(3)(torch.tensor(x.numpy()))


def test_loss_weights_of_a_wrong_shape_are_refused_as_by_pytorch():
    """cross_entropy/nll_loss with a weight of another length than the classes picked weights by the targets
    anyway (weight [1, 2] for 3 classes, target 1: a loss of 1.495); binary_cross_entropy(_with_logits) with a
    weight or pos_weight broadcasting the input to a larger shape ((2, 1) against (1, 3)) averaged the larger
    result, and a logits target of another shape broadcast. PyTorch refuses each, as symgrad now does; weights of
    the right shapes give PyTorch's numbers."""
    x = np.random.default_rng(0).standard_normal((1, 3))
    for weight in ([1.0, 2.0], [[1.0], [2.0]], [[1.0, 2.0, 3.0]]):
        for loss in (F.cross_entropy, F.nll_loss):
            with pytest.raises(RuntimeError, match="weight tensor should be defined either for all 3 classes"):
                loss(sg.tensor(x), sg.tensor([1]), weight=sg.tensor(weight))
        with pytest.raises(RuntimeError, match="weight tensor should be defined"):
            F.cross_entropy(sg.tensor(x), sg.ones(1, 3) / 3, weight=sg.tensor(weight))
    column = sg.tensor([[1.0], [2.0]])
    with pytest.raises(RuntimeError, match="weight: output with shape"):
        F.binary_cross_entropy(sg.tensor(x).sigmoid(), sg.ones(1, 3), weight=column)
    with pytest.raises(RuntimeError, match="pos_weight: output with shape"):
        F.binary_cross_entropy_with_logits(sg.tensor(x), sg.ones(1, 3), pos_weight=column)
    with pytest.raises(ValueError, match="Target size"):
        F.binary_cross_entropy_with_logits(sg.tensor(x), sg.ones(3))
    weights = np.array([1.0, 2.0, 3.0])
    value = F.cross_entropy(sg.tensor(x), sg.tensor([1]), weight=sg.tensor(weights)).item()
    logits = F.binary_cross_entropy_with_logits(sg.tensor(x), sg.ones(1, 3), weight=sg.tensor(weights),
                                                pos_weight=sg.tensor(weights)).item()
    try:
        import torch
    except ImportError:
        return
    assert value == pytest.approx(torch.nn.functional.cross_entropy(torch.tensor(x), torch.tensor([1]),
                                                                    weight=torch.tensor(weights)).item(), rel=1e-12)
    assert logits == pytest.approx(torch.nn.functional.binary_cross_entropy_with_logits(
        torch.tensor(x), torch.ones(1, 3, dtype=torch.float64), weight=torch.tensor(weights),
        pos_weight=torch.tensor(weights)).item(), rel=1e-12)


@pytest.mark.parametrize("backend", ["llvm", "numpy"])
def test_embedding_of_traced_indices(backend):
    """F.embedding (and nn.Embedding) inside sg.compile with the indices an input (a TracerError before): PyTorch's
    rows and gradient, none to padding_idx's row; an index out of range, negative ones too (PyTorch has none), is an
    IndexError as the call runs, not a row from the end; max_norm, which needs the indices, a clear error."""
    weight, index = np.random.default_rng(0).standard_normal((5, 3)), np.array([[0, 4], [2, 2]])
    step = sg.compile(sg.value_and_grad(lambda w, i: (F.embedding(i, w, padding_idx=2) ** 2).sum()), backend=backend)
    value, grad = step(weight, index)
    counts = np.array([1, 0, 0, 0, 1])[:, None]  # row 2 is padding
    np.testing.assert_allclose(value, (weight[index] ** 2).sum(), rtol=1e-14)
    np.testing.assert_allclose(grad, 2 * counts * weight, rtol=1e-14)
    for bad in (np.array([[0, 5], [1, 1]]), np.array([[0, -1], [1, 1]])):
        with pytest.raises(IndexError):
            step(weight, bad)
    with pytest.raises(sg.UnsupportedOpError, match="max_norm"):
        sg.compile(lambda w, i: F.embedding(i, w, max_norm=1.0).sum(), backend=backend)(weight, index)
    module = sg.nn.Embedding(5, 3)
    np.testing.assert_allclose(sg.compile(lambda i: module(i), backend=backend)(index),
                               module.weight.detach().numpy()[index], rtol=1e-15)
    torch = pytest.importorskip("torch")
    t = torch.tensor(weight, requires_grad=True)
    (torch.nn.functional.embedding(torch.tensor(index), t, padding_idx=2) ** 2).sum().backward()
    np.testing.assert_allclose(grad, t.grad.numpy(), rtol=1e-14)


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
def test_traced_embedding_names_the_negative_index_it_refuses(backend):
    """Traced, a negative index became the table's length before the lookup, so the NumPy backend reported 'index 10
    is out of bounds' for [-1]: the check is wrap_index's without negative indices, naming the index given."""
    lookup = sg.compile(lambda i, w: F.embedding(i, w), backend=backend)
    np.testing.assert_array_equal(lookup(np.array([9, 0]), TABLE), TABLE[[9, 0]])
    for index, shown in (([0, -1], "-1"), ([[3, 10]], "10"), ([-11], "-11")):
        with pytest.raises(IndexError, match=f"index {shown} is out" if backend == "numpy" else "out of bounds"):
            lookup(np.array(index), TABLE)
