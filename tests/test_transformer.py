"""MultiheadAttention, the transformer layers and F.scaled_dot_product_attention (symgrad/nn/transformer.py):
outputs, attention weights and gradients against PyTorch with the same weights (float64, skipped when absent)
and finite differences; masks (boolean and float, attn and key padding), batch_first, unbatched input."""
import math

import numpy as np
import pytest

import symgrad as sg
from gradcheck import numeric_grad

E, H = 8, 2
RNG = np.random.default_rng(0)
Q, K = RNG.standard_normal((5, 3, E)), RNG.standard_normal((4, 3, E))
MASK = np.triu(np.ones((5, 4), bool), 1)
PADDING = np.zeros((3, 4), bool)
PADDING[0, 3] = True


def _flat(value):
    if value is None:
        return []
    return [value] if not isinstance(value, (tuple, list)) else [leaf for part in value for leaf in _flat(part)]


def _lib(module):
    return sg if isinstance(module, sg.nn.Module) else __import__("torch")


CASES = [  # (label, module name, arguments, inputs, call)
    ("mha", "MultiheadAttention", (E, H), (Q, K, K), lambda m, a, b, c: m(a, b, c)),
    ("mha-masks", "MultiheadAttention", (E, H), (Q, K, K),
     lambda m, a, b, c: m(a, b, c, attn_mask=_lib(m).tensor(MASK), key_padding_mask=_lib(m).tensor(PADDING),
                          average_attn_weights=False)),
    ("mha-float-mask", "MultiheadAttention", (E, H), (Q, K, K),
     lambda m, a, b, c: m(a, b, c, attn_mask=_lib(m).tensor(np.where(MASK, -2.5, 0.3)))),
    ("mha-batch-first", "MultiheadAttention", (E, H, 0.0, False), (Q.transpose(1, 0, 2), K.transpose(1, 0, 2),
                                                                   K.transpose(1, 0, 2)), None),
    ("mha-unbatched", "MultiheadAttention", (E, H), (Q[:, 0], K[:, 0], K[:, 0]), lambda m, a, b, c: m(a, b, c)),
    ("encoder-layer", "TransformerEncoderLayer", (E, H, 16, 0.0), (Q,),
     lambda m, a: m(a, src_key_padding_mask=_lib(m).tensor(np.zeros((3, 5), bool)))),
    ("encoder-layer-norm-first", "TransformerEncoderLayer", (E, H, 16, 0.0, "gelu", 1e-5, False, True), (Q,), None),
    ("decoder-layer", "TransformerDecoderLayer", (E, H, 16, 0.0), (Q, K), None),
    ("decoder-layer-norm-first", "TransformerDecoderLayer", (E, H, 16, 0.0, "relu", 1e-5, False, True), (Q, K),
     None),
]


@pytest.mark.parametrize("label, name, args, inputs, call", CASES, ids=[c[0] for c in CASES])
def test_matches_pytorch_given_the_same_weights(label, name, args, inputs, call):
    torch = pytest.importorskip("torch")
    if label == "mha-batch-first":
        ours, theirs = sg.nn.MultiheadAttention(E, H, batch_first=True), \
            torch.nn.MultiheadAttention(E, H, batch_first=True).double()
    else:
        ours, theirs = getattr(sg.nn, name)(*args), getattr(torch.nn, name)(*args).double()
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    ours.load_state_dict({n: v.detach().numpy() for n, v in theirs.state_dict().items()})
    call = call or (lambda m, *xs: m(*xs))
    mine_in = [sg.tensor(x, requires_grad=True) for x in inputs]
    their_in = [torch.tensor(x, requires_grad=True) for x in inputs]
    mine, other = _flat(call(ours, *mine_in)), _flat(call(theirs, *their_in))
    assert [tuple(m.shape) for m in mine] == [tuple(o.shape) for o in other]
    weights = [np.random.default_rng(i).standard_normal(tuple(o.shape)) for i, o in enumerate(other)]
    sum((m * sg.tensor(w)).sum() for m, w in zip(mine, weights)).backward()
    sum((o * torch.tensor(w)).sum() for o, w in zip(other, weights)).backward()
    for m, o in zip(mine, other):
        np.testing.assert_allclose(m.detach().numpy(), o.detach().numpy(), rtol=1e-12, atol=1e-13)
    for a, b in zip(mine_in, their_in):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-11, atol=1e-13)
    for (n, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-11, atol=1e-13, err_msg=n)


def test_transformer_and_its_causal_mask_match_pytorch():
    torch = pytest.importorskip("torch")
    mask = sg.nn.Transformer.generate_square_subsequent_mask(5)
    their_mask = torch.nn.Transformer.generate_square_subsequent_mask(5, dtype=torch.float64)
    np.testing.assert_array_equal(mask.numpy(), their_mask.numpy())
    ours, theirs = sg.nn.Transformer(E, H, 2, 2, 16, dropout=0.0), torch.nn.Transformer(E, H, 2, 2, 16, dropout=0.0)
    theirs = theirs.double()
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    ours.load_state_dict({n: v.detach().numpy() for n, v in theirs.state_dict().items()})
    out = ours(sg.tensor(K), sg.tensor(Q), tgt_mask=mask)
    expected = theirs(torch.tensor(K), torch.tensor(Q), tgt_mask=their_mask)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("kwargs", [{}, {"is_causal": True}, {"scale": 0.3}, {"attn_mask": MASK[:, :4]}])
def test_scaled_dot_product_attention_matches_pytorch(kwargs):
    torch = pytest.importorskip("torch")
    q, k = RNG.standard_normal((2, 3, 5, 4)), RNG.standard_normal((2, 3, 4, 4))
    if "attn_mask" in kwargs:
        kwargs = {"attn_mask": ~MASK}  # True: may attend (the opposite of MultiheadAttention's convention)
    mine = [sg.tensor(x, requires_grad=True) for x in (q, k, k)]
    theirs = [torch.tensor(x, requires_grad=True) for x in (q, k, k)]
    ours = sg.nn.functional.scaled_dot_product_attention(
        *mine, **{k_: (sg.tensor(v) if k_ == "attn_mask" else v) for k_, v in kwargs.items()})
    expected = torch.nn.functional.scaled_dot_product_attention(
        *theirs, **{k_: (torch.tensor(v) if k_ == "attn_mask" else v) for k_, v in kwargs.items()})
    np.testing.assert_allclose(ours.detach().numpy(), expected.detach().numpy(), rtol=1e-12, atol=1e-13)
    ours.sum().backward()
    expected.sum().backward()
    for a, b in zip(mine, theirs):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-11, atol=1e-13)


def test_attention_gradient_matches_finite_differences():
    sg.manual_seed(0)
    attention = sg.nn.MultiheadAttention(4, 2)
    q, k = RNG.standard_normal((3, 2, 4)), RNG.standard_normal((5, 2, 4))
    ramp = np.linspace(-1, 1, 24).reshape(3, 2, 4)

    def loss(array):
        return sg.asarray(float((attention(sg.tensor(array), sg.tensor(k), sg.tensor(k))[0] * sg.tensor(ramp)).sum()))

    t = sg.tensor(q, requires_grad=True)
    (attention(t, sg.tensor(k), sg.tensor(k))[0] * sg.tensor(ramp)).sum().backward()
    np.testing.assert_allclose(t.grad.numpy(), numeric_grad(lambda a: loss(np.asarray(a)), [q], 0), rtol=1e-6,
                               atol=1e-8)
    keys = RNG.standard_normal((3, 5, 4))  # (batch, source, E) against q's (batch, 2, E)

    def attention_loss(v):
        return sg.sum(sg.nn.functional.scaled_dot_product_attention(v, keys, keys, is_causal=False) ** 2)
    for backend in ("numpy", "llvm"):
        on_arrays = sg.compile(sg.grad(attention_loss), backend=backend)(q)
        np.testing.assert_allclose(on_arrays, numeric_grad(attention_loss, [q], 0), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("source", ["self", "other"])
def test_attention_without_weights_is_the_general_path(batch_first, source):
    """need_weights=False without masks is one front-end call (one cached plan): its output, the gradients of its
    inputs and parameters, and its grad_fn are those of the general path (need_weights=True), bit for bit."""
    sg.manual_seed(2)
    attention = sg.nn.MultiheadAttention(E, H, batch_first=batch_first)
    q, k = (a.transpose(1, 0, 2) if batch_first else a for a in (Q, K))
    seen = []
    for need_weights in (False, True):
        attention.zero_grad()
        query = sg.tensor(q, requires_grad=True)
        key = query if source == "self" else sg.tensor(k, requires_grad=True)
        out = attention(query, key, key, need_weights=need_weights)[0]
        (out * sg.tensor(np.linspace(-1, 1, out.numel()).reshape(out.shape))).sum().backward()
        seen.append([type(out.grad_fn).__name__, out.detach().numpy(), query.grad.numpy(), key.grad.numpy()]
                    + [p.grad.numpy() for p in attention.parameters()])
    assert seen[0][0] == seen[1][0] == ("TransposeBackward0" if batch_first else "ViewBackward0")  # (PyTorch's)
    for plain, general in zip(seen[0][1:], seen[1][1:]):
        np.testing.assert_array_equal(plain, general)


def test_initialization_dropout_and_errors():
    sg.manual_seed(1)
    attention = sg.nn.MultiheadAttention(6, 3, dropout=0.5)
    bound = math.sqrt(6 / (6 + 18))  # xavier uniform of the (3E, E) in_proj_weight
    assert np.abs(attention.in_proj_weight.detach().numpy()).max() <= bound
    assert not attention.in_proj_bias.detach().numpy().any() and not attention.out_proj.bias.detach().numpy().any()
    x = sg.tensor(RNG.standard_normal((4, 2, 6)))
    first, second = attention(x, x, x)[0].detach().numpy(), attention(x, x, x)[0].detach().numpy()
    assert not np.array_equal(first, second)  # dropout on the weights while training
    attention.eval()
    assert np.array_equal(attention(x, x, x)[0].detach().numpy(), attention(x, x, x)[0].detach().numpy())
    assert attention(x, x, x, need_weights=False)[1] is None
    assert attention(x[:, 0], x[:, 0], x[:, 0])[0].grad_fn.name() == "SqueezeBackward1"  # (unbatched: PyTorch's)
    with pytest.raises(AssertionError, match="divisible by num_heads"):
        sg.nn.MultiheadAttention(7, 2)
    with pytest.raises(RuntimeError, match="attn_mask is"):
        attention(x, x, x, attn_mask=sg.tensor(np.zeros((3, 3), bool)))
    with pytest.raises(AssertionError, match="key_padding_mask shape"):
        attention(x, x, x, key_padding_mask=sg.tensor(np.zeros((2, 3), bool)))
    for need_weights in (True, False):  # (PyTorch's checks, on the general path and the plain one)
        with pytest.raises(AssertionError, match="expected `key` and `value` to be 3-D but found 2-D and 2-D"):
            attention(x[:, :1], x[:, 0], x[:, 0], need_weights=need_weights)
        with pytest.raises(AssertionError, match="key shape"):
            attention(x, x, x[:3], need_weights=need_weights)
    with pytest.raises(AssertionError, match="unbatched 2D or batched 3D"):
        attention(x[None], x[None], x[None])
    with pytest.raises(RuntimeError, match="activation should be relu/gelu"):
        sg.nn.TransformerEncoderLayer(6, 2, activation="tanh")
    encoder = sg.nn.TransformerEncoder(sg.nn.TransformerEncoderLayer(6, 2, 8), num_layers=3)
    assert len(encoder.layers) == 3 and encoder.layers[0].linear1.weight is not encoder.layers[1].linear1.weight


@pytest.mark.parametrize("bias_kv, zero_attn", [(True, False), (False, True), (True, True)])
@pytest.mark.parametrize("mask", ["none", "bool", "float3d", "padding", "unbatched", "batch_first"])
def test_multihead_attention_bias_kv_and_zero_attn_match_pytorch(bias_kv, zero_attn, mask):
    """bias_k/bias_v appended to keys and values, a zero key and value after the heads split; masks open over them.
    Same parameters (names, order, shapes) as PyTorch's, outputs, weights and every gradient equal."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(11)
    width, heads, length, source, batch = 6, 2, 3, 4, 2
    options = dict(add_bias_kv=bias_kv, add_zero_attn=zero_attn, batch_first=mask == "batch_first")
    ours = sg.nn.MultiheadAttention(width, heads, **options)
    theirs = torch.nn.MultiheadAttention(width, heads, dtype=torch.float64, **options)
    assert [(n, tuple(p.shape)) for n, p in ours.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in theirs.named_parameters()]
    ours.load_state_dict({k: sg.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    shape = lambda n: (n, width) if mask == "unbatched" else ((batch, n, width) if mask == "batch_first"  # noqa: E731
                                                              else (n, batch, width))
    q, k, v = rng.standard_normal(shape(length)), rng.standard_normal(shape(source)), rng.standard_normal(shape(source))
    masks = {"bool": {"attn_mask": rng.random((length, source)) < 0.3},
             "float3d": {"attn_mask": rng.standard_normal((batch * heads, length, source))},
             "padding": {"key_padding_mask": np.array([[False, True, False, False], [False] * 4])}}.get(mask, {})
    inputs = [sg.tensor(a, requires_grad=True) for a in (q, k, v)]
    references = [torch.tensor(a, requires_grad=True) for a in (q, k, v)]
    out, weights = ours(*inputs, **{n: sg.tensor(m) for n, m in masks.items()})
    expected, expected_weights = theirs(*references, **{n: torch.tensor(m) for n, m in masks.items()})
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(weights.detach().numpy(), expected_weights.detach().numpy(), rtol=1e-10, atol=1e-12)
    cotangent = rng.standard_normal(tuple(expected.shape))
    (out * sg.tensor(cotangent)).sum().backward()
    (expected * torch.tensor(cotangent)).sum().backward()
    for mine, reference in zip(inputs, references):
        np.testing.assert_allclose(mine.grad.numpy(), reference.grad.numpy(), rtol=1e-10, atol=1e-12)
    reference_parameters = dict(theirs.named_parameters())
    for name, parameter in ours.named_parameters():
        np.testing.assert_allclose(parameter.grad.numpy(), reference_parameters[name].grad.numpy(), rtol=1e-10,
                                   atol=1e-12, err_msg=name)


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
def test_multihead_attention_bias_kv_compiled_gradient_matches_finite_differences(backend):
    attention = sg.nn.MultiheadAttention(4, 2, add_bias_kv=True, add_zero_attn=True)
    k = RNG.standard_normal((3, 2, 4))
    loss = lambda q: sg.sum(sg.sin(attention(q, k, k)[0]))  # noqa: E731
    q = RNG.standard_normal((2, 2, 4))
    value, grad = sg.compile(sg.value_and_grad(loss), backend=backend)(q)
    assert float(value) == pytest.approx(float(loss(q).item()), rel=1e-12)
    np.testing.assert_allclose(grad, numeric_grad(lambda q: float(loss(q).item()), [q], 0), rtol=1e-6, atol=1e-8)


CAUSAL = np.triu(np.full((5, 5), -np.inf), 1)
CAUSAL_CASES = {  # label: (keyword arguments of the encoder's call but the padding, a key padding mask)
    "hint": (dict(mask=CAUSAL, is_causal=True), False),
    "detected": (dict(mask=CAUSAL), False),
    "detected-bool": (dict(mask=np.isinf(CAUSAL)), False),
    "hint-over-another-mask": (dict(mask=np.where(MASK[:, :1], 0.0, -1.5) * np.ones(5), is_causal=True), False),
    "hint-with-padding": (dict(mask=CAUSAL, is_causal=True), True),
    "no-hint": (dict(mask=CAUSAL, is_causal=False), False),
}


@pytest.mark.parametrize("label", CAUSAL_CASES)
def test_the_causal_hint_and_a_causal_mask_are_pytorchs(label):
    """PyTorch's TransformerEncoder takes the is_causal hint, or finds its mask causal, and then (no key padding
    mask, no weights returned) attends causally without reading the mask: a mask the hint contradicts is not
    applied, and the encoder's output keeps the query's dtype whatever the mask's."""
    torch = pytest.importorskip("torch")
    kwargs, padded = CAUSAL_CASES[label]
    theirs = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(E, H, 16, 0.0, dtype=torch.float64), 2,
                                         enable_nested_tensor=False)
    ours = sg.nn.TransformerEncoder(sg.nn.TransformerEncoderLayer(E, H, 16, 0.0), 2)
    ours.load_state_dict({n: v.detach().numpy() for n, v in theirs.state_dict().items()})
    padding = np.zeros((3, 5), bool)
    padding[1, 4] = padded
    mine_in, their_in = sg.tensor(Q, requires_grad=True), torch.tensor(Q, requires_grad=True)
    mine = ours(mine_in, src_key_padding_mask=sg.tensor(padding) if padded else None,
                **{k: sg.tensor(v) if k == "mask" else v for k, v in kwargs.items()})
    other = theirs(their_in, src_key_padding_mask=torch.tensor(padding) if padded else None,
                   **{k: torch.tensor(v) if k == "mask" else v for k, v in kwargs.items()})
    np.testing.assert_allclose(mine.detach().numpy(), other.detach().numpy(), rtol=1e-12, atol=1e-13)
    weights = np.random.default_rng(3).standard_normal(Q.shape)
    (mine * sg.tensor(weights)).sum().backward()
    (other * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(mine_in.grad.numpy(), their_in.grad.numpy(), rtol=1e-11, atol=1e-13)
    for (n, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-11, atol=1e-13, err_msg=n)


def test_a_causal_float32_encoder_stays_float32():
    """generate_square_subsequent_mask is float64 by default (symgrad's default dtype), PyTorch's float32: the
    causal attention of a float32 encoder does not read it, so the output is float32 as PyTorch's (it was float64)."""
    layer = sg.nn.TransformerEncoderLayer(E, H, 16, 0.0, batch_first=True, dtype=sg.float32)
    encoder, x = sg.nn.TransformerEncoder(layer, 2), sg.tensor(Q.transpose(1, 0, 2), dtype=sg.float32)
    mask = sg.nn.Transformer.generate_square_subsequent_mask(5)
    assert mask.dtype == sg.float64
    for kwargs in ({"is_causal": True}, {}):
        assert encoder(x, mask=mask, **kwargs).dtype == sg.float32
    decoder = sg.nn.TransformerDecoder(sg.nn.TransformerDecoderLayer(E, H, 16, 0.0, batch_first=True,
                                                                     dtype=sg.float32), 1)
    assert decoder(x, x, tgt_mask=mask).dtype == sg.float32
