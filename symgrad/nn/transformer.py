"""Attention and transformer layers with PyTorch's names, parameters, initialization and masks:
MultiheadAttention (F.scaled_dot_product_attention is in nn.functional), TransformerEncoderLayer/Encoder,
TransformerDecoderLayer/Decoder and Transformer (with generate_square_subsequent_mask).

Masks follow PyTorch: for MultiheadAttention and the transformer layers a boolean attn_mask or
key_padding_mask is True where attention is NOT allowed (a float mask is added to the scores); for
scaled_dot_product_attention a boolean mask is True where attention IS allowed.
"""
from __future__ import annotations

import copy
import math

import numpy as np

from .. import dtypes
from .. import numpy_api as sgnp
from ..eager.tensor import Tensor, apply_function, labelled
from ..ops.shape import convert_p
from . import functional as F
from . import init
from .container import ModuleList
from .layers import Dropout
from .modules import Linear, Module
from .normalization import LayerNorm
from .parameter import Parameter


class NonDynamicallyQuantizableLinear(Linear):
    """PyTorch's class of MultiheadAttention's out_proj: a Linear, whose name the model's printed form shows."""


class MultiheadAttention(Module):
    """Attention over num_heads heads of embed_dim / num_heads: in_proj_weight (3E, E) (xavier uniform),
    in_proj_bias (zeros), out_proj (a Linear, its bias zeroed), as PyTorch's. add_bias_kv: bias_k and bias_v
    (1, 1, E) (xavier normal), a key and a value appended to every sequence; add_zero_attn: a zero key and value
    appended after the heads are split. No mask forbids the appended positions."""

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False, add_zero_attn=False,
                 kdim=None, vdim=None, batch_first=False, device=None, dtype=None):
        super().__init__()
        if device not in (None, "cpu"):
            raise ValueError(f"symgrad runs on the CPU only, not on device {device!r}")
        if embed_dim % num_heads:
            raise AssertionError("embed_dim must be divisible by num_heads")
        self.embed_dim, self.num_heads, self.head_dim = embed_dim, num_heads, embed_dim // num_heads
        self.kdim, self.vdim = kdim or embed_dim, vdim or embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.dropout, self.batch_first = dropout, batch_first
        dtype = dtypes.canonical(dtype or dtypes.FLOAT64)
        # one (3E, E) in_proj_weight, or with keys or values of other widths (kdim, vdim) one weight each, as PyTorch
        names = ("in_proj_weight",) if self._qkv_same_embed_dim else ("q_proj_weight", "k_proj_weight", "v_proj_weight")
        shapes = ((3 * embed_dim, embed_dim),) if self._qkv_same_embed_dim else \
            ((embed_dim, embed_dim), (embed_dim, self.kdim), (embed_dim, self.vdim))
        for name, shape in zip(names, shapes):
            self.register_parameter(name, Parameter(np.empty(shape, dtype)))
            init.xavier_uniform_(getattr(self, name))
        for name in ("in_proj_weight", "q_proj_weight", "k_proj_weight", "v_proj_weight"):
            if name not in names:
                self.register_parameter(name, None)
        self.register_parameter("in_proj_bias", Parameter(np.zeros(3 * embed_dim, dtype)) if bias else None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, dtype=dtype)
        if bias:
            init.zeros_(self.out_proj.bias)
        for name in ("bias_k", "bias_v"):
            self.register_parameter(name, Parameter(np.empty((1, 1, embed_dim), dtype)) if add_bias_kv else None)
            if add_bias_kv:
                init.xavier_normal_(getattr(self, name))
        self.add_zero_attn = add_zero_attn

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True, is_causal=False):
        batched = _batched(query, key, value, self._qkv_same_embed_dim)
        if is_causal and attn_mask is None:
            raise RuntimeError("Need attn_mask if specifying the is_causal hint")
        # PyTorch's multi_head_attention_forward: with the hint, no key padding mask and no weights returned, the
        # mask is not read: scaled_dot_product_attention masks the upper triangle itself, in the query's dtype
        causal = bool(is_causal) and key_padding_mask is None and not need_weights
        if causal:
            attn_mask = None
        if batched and query.shape[-1] == self.embed_dim and not need_weights and attn_mask is None and \
                key_padding_mask is None and self.bias_k is None and not self.add_zero_attn and \
                self._qkv_same_embed_dim and not (self.dropout > 0.0 and self.training):
            # one front-end call (one plan, deferred at once in a captured step); out_proj's weights are read, as
            # PyTorch's multi_head_attention_forward reads them
            out = apply_function(_plain_attention, (query, key, value, self.in_proj_weight, self.in_proj_bias,
                                                    self.out_proj.weight, self.out_proj.bias, self.num_heads,
                                                    self.batch_first, causal), {})
            return labelled(out, "Transpose" if self.batch_first else "View"), None  # (the general path's names)
        if not batched:
            query, key, value = (sgnp.expand_dims(t, 1) for t in (query, key, value))
            key_padding_mask = None if key_padding_mask is None else F.mask_array(key_padding_mask)[None]
        elif self.batch_first:
            query, key, value = (sgnp.swapaxes(t, 0, 1) for t in (query, key, value))
        length, batch, embed = query.shape
        source = key.shape[0]
        if embed != self.embed_dim:
            raise AssertionError(f"was expecting embedding dimension of {self.embed_dim}, but got {embed}")
        w_q, w_k, w_v = self.in_proj_weight.chunk(3) if self._qkv_same_embed_dim else \
            (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight)
        b_q, b_k, b_v = (None,) * 3 if self.in_proj_bias is None else self.in_proj_bias.chunk(3)
        heads = (batch, self.num_heads, self.head_dim)
        k, v = F.linear(key, w_k, b_k), F.linear(value, w_v, b_v)
        extra = 0  # key positions appended: bias_k/bias_v, then a zero key and value
        if self.bias_k is not None:
            k, v = (sgnp.concatenate([x, sgnp.broadcast_to(b, (1, batch, embed))], axis=0)
                    for x, b in ((k, self.bias_k), (v, self.bias_v)))
            extra += 1
        q = _split_heads(F.linear(query, w_q, b_q), length, heads)
        k, v = _split_heads(k, source + extra, heads), _split_heads(v, source + extra, heads)
        if self.add_zero_attn:
            k, v = (sgnp.concatenate([x, np.zeros((*heads[:2], 1, self.head_dim), x.dtype)], axis=2) for x in (k, v))
            extra += 1
        scores = _scaled_scores(q, k)
        scores = self._masked(scores, attn_mask, key_padding_mask, batch, length, source, extra)
        if causal:  # (over the appended keys too, as scaled_dot_product_attention's is_causal masks them)
            scores = scores + _causal_mask(length, source + extra, scores.dtype)
        weights = F.softmax(scores, -1)
        dropped = F.dropout(weights, self.dropout, True) if self.dropout > 0.0 and self.training else weights
        out = F.linear(_merged_heads(sgnp.matmul(dropped, v), length, batch, self.embed_dim), self.out_proj.weight,
                       self.out_proj.bias)  # (out_proj's weights, not the module's call: PyTorch's)
        # PyTorch's names: attn_output.transpose(1, 0), its (L * N, E) product's view as (L, N, E), squeeze(1)
        out = labelled(sgnp.swapaxes(out, 0, 1), "Transpose") if batched and self.batch_first else (
            labelled(out, "View") if batched else labelled(sgnp.squeeze(out, 1), "Squeeze", overload=1))
        if not need_weights:
            return out, None
        weights = weights.mean(1) if average_attn_weights else weights
        return out, weights if batched else sgnp.squeeze(weights, 0)

    def _masked(self, scores, attn_mask, key_padding_mask, batch, length, source, extra):
        """scores (N, heads, L, S + extra) with attn_mask ((L, S) or (N * heads, L, S)) and key_padding_mask (N, S)
        added, each zero over the `extra` positions appended to the keys."""
        bias = F.additive_mask(attn_mask, scores.dtype, forbidden_when_true=True)
        if bias is not None:
            if tuple(bias.shape) == (batch * self.num_heads, length, source):
                bias = bias.reshape(batch, self.num_heads, length, source)
            elif tuple(bias.shape) != (length, source):
                raise RuntimeError(f"The shape of the 2D attn_mask is {tuple(bias.shape)}, but should be "
                                   f"{(length, source)} (or 3-d {(batch * self.num_heads, length, source)})")
            scores = scores + _open_columns(bias, extra)
        padding = F.additive_mask(key_padding_mask, scores.dtype, forbidden_when_true=True)
        if padding is not None:
            if tuple(padding.shape) != (batch, source):
                raise AssertionError(f"expecting key_padding_mask shape of {(batch, source)}, but got "
                                     f"{tuple(padding.shape)}")
            scores = scores + _open_columns(padding.reshape(batch, 1, 1, source), extra)
        return scores


def _plain_attention(query, key, value, in_proj_weight, in_proj_bias, out_weight, out_bias, num_heads, batch_first,
                     causal):
    """MultiheadAttention's forward without masks (but the causal one), appended keys or dropout, the projections in
    and out included: a function of tensors only, which an eager call replays as one cached plan. The ops are the
    general path's."""
    if batch_first:
        query, key, value = (sgnp.swapaxes(t, 0, 1) for t in (query, key, value))
    length, batch, embed = query.shape
    heads, source = (batch, num_heads, embed // num_heads), key.shape[0]
    w_q, w_k, w_v = (in_proj_weight[i * embed:(i + 1) * embed] for i in range(3))
    b_q, b_k, b_v = (None,) * 3 if in_proj_bias is None else (in_proj_bias[i * embed:(i + 1) * embed] for i in range(3))
    k, v = F._linear(key, w_k, b_k), F._linear(value, w_v, b_v)
    q, k, v = _split_heads(F._linear(query, w_q, b_q), length, heads), _split_heads(k, source, heads), \
        _split_heads(v, source, heads)
    scores = _scaled_scores(q, k)
    if causal:
        scores = scores + _causal_mask(length, source, scores.dtype)
    weights = F._softmax_shifted(scores, -1)
    out = F._linear(_merged_heads(sgnp.matmul(weights, v), length, batch, embed), out_weight, out_bias)
    # batch first: a copy of the (N, L, E) view, since a deferred plan's result is no view (its values, and the
    # gradients summed over (L, N) rows, are the general path's)
    return convert_p(sgnp.swapaxes(out, 0, 1), dtype=out.dtype) if batch_first else out


def _batched(query, key, value, same_embed_dim) -> bool:
    """Whether the inputs are batched (3-D), PyTorch's AssertionError when their dimensions or key's and value's
    shapes do not match (a 2-D key with a batch of one query was read as one batch, silently)."""
    kind = {3: "batched (3-D)", 2: "unbatched (2-D)"}.get(query.ndim)
    if kind is None:
        raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {query.ndim}-D query "
                             "tensor")
    if key.ndim != query.ndim or value.ndim != query.ndim:
        raise AssertionError(f"For {kind} `query`, expected `key` and `value` to be {query.ndim}-D but found "
                             f"{key.ndim}-D and {value.ndim}-D tensors respectively")
    if (key.shape if same_embed_dim else key.shape[:-1]) != (value.shape if same_embed_dim else value.shape[:-1]):
        raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")
    return query.ndim == 3


def _split_heads(x, n, heads):
    """(n, N, E) -> (N, heads, n, head_dim)."""
    return sgnp.transpose(sgnp.reshape(x, (n, *heads)), (1, 2, 0, 3))


def _scaled_scores(q, k):
    """q k^T / sqrt(head_dim) over the last two axes."""
    return sgnp.matmul(q, sgnp.swapaxes(k, -2, -1)) * (1.0 / math.sqrt(q.shape[-1]))


def _causal_mask(length, source, dtype) -> np.ndarray:
    """The additive mask of scaled_dot_product_attention's is_causal: -inf above the (length, source) diagonal."""
    return np.triu(np.full((length, source), -np.inf, dtype), 1)


def _merged_heads(out, length, batch, embed):
    """(N, heads, L, head_dim) -> (L, N, E)."""
    return sgnp.reshape(sgnp.transpose(out, (2, 0, 1, 3)), (length, batch, embed))


def _open_columns(mask, extra):
    """An additive mask with `extra` zero columns appended (key positions every query may attend)."""
    if not extra:
        return mask
    return sgnp.concatenate([mask, np.zeros((*mask.shape[:-1], extra), mask.dtype)], axis=-1)


def _activation(activation):
    if callable(activation):
        return activation
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


class _TransformerLayer(Module):
    """What both layers share: their attentions (named `attentions`), the feed-forward block, a LayerNorm and a
    Dropout per block (norm1, dropout1, ...), registered in PyTorch's order; self-attention, the feed-forward."""

    def __init__(self, attentions, d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
                 batch_first, norm_first, bias, device, dtype):
        super().__init__()
        for name in attentions:
            setattr(self, name, MultiheadAttention(d_model, nhead, dropout, bias, batch_first=batch_first,
                                                   device=device, dtype=dtype))
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, dtype=dtype)
        self.norm_first = norm_first
        blocks = len(attentions) + 1
        for block in range(1, blocks + 1):
            setattr(self, f"norm{block}", LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype))
        for block in range(1, blocks + 1):
            setattr(self, f"dropout{block}", Dropout(dropout))
        self.activation = _activation(activation)
        self._feed_forward_dropout = f"dropout{blocks}"  # the last block's

    def _self_attention(self, x, mask, padding, is_causal):
        return self.dropout1(self.self_attn(x, x, x, attn_mask=mask, key_padding_mask=padding, need_weights=False,
                                            is_causal=is_causal)[0])

    def _feed_forward(self, x):
        out = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return getattr(self, self._feed_forward_dropout)(out)


class TransformerEncoderLayer(_TransformerLayer):
    """Self-attention then a feed-forward block, each with dropout, a residual and LayerNorm (after, or before
    with norm_first), as PyTorch's."""

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu", layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__(("self_attn",), d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
                         batch_first, norm_first, bias, device, dtype)

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        x = src
        if self.norm_first:
            x = x + self._self_attention(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            return x + self._feed_forward(self.norm2(x))
        x = self.norm1(x + self._self_attention(x, src_mask, src_key_padding_mask, is_causal))
        return self.norm2(x + self._feed_forward(x))


class TransformerDecoderLayer(_TransformerLayer):
    """Self-attention, attention over the encoder's memory, then a feed-forward block, as PyTorch's."""

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu", layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__(("self_attn", "multihead_attn"), d_model, nhead, dim_feedforward, dropout, activation,
                         layer_norm_eps, batch_first, norm_first, bias, device, dtype)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False):
        x = tgt
        if self.norm_first:
            x = x + self._self_attention(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._cross_attention(self.norm2(x), memory, memory_mask, memory_key_padding_mask,
                                          memory_is_causal)
            return x + self._feed_forward(self.norm3(x))
        x = self.norm1(x + self._self_attention(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
        x = self.norm2(x + self._cross_attention(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal))
        return self.norm3(x + self._feed_forward(x))

    def _cross_attention(self, x, memory, mask, padding, is_causal):
        return self.dropout2(self.multihead_attn(x, memory, memory, attn_mask=mask, key_padding_mask=padding,
                                                 need_weights=False, is_causal=is_causal)[0])


def _sequence_length(x, batch_first) -> int:
    """The length of a layer stack's input sequence (PyTorch's _get_seq_len)."""
    return x.shape[0] if x.ndim == 2 else x.shape[1 if batch_first else 0]


def _is_causal_mask(mask, is_causal, length) -> bool:
    """PyTorch's _detect_is_causal_mask: the hint when given, else whether the mask (a boolean one as the additive
    mask it stands for) is the (length, length) causal one of generate_square_subsequent_mask."""
    if is_causal is not None or mask is None:
        return is_causal is True
    data = F.mask_array(mask)
    if data.dtype == np.bool_:
        data = np.where(data, -np.inf, 0.0)
    return data.shape == (length, length) and bool((data == _causal_mask(length, length, data.dtype)).all())


class TransformerEncoder(Module):
    """num_layers copies of encoder_layer (deep copies, as PyTorch's), then an optional norm."""

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True, mask_check=True):
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(encoder_layer) for _ in range(num_layers)])
        self.num_layers, self.norm = num_layers, norm

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        is_causal = _is_causal_mask(mask, is_causal, _sequence_length(src, self.layers[0].self_attn.batch_first))
        for layer in self.layers:
            src = layer(src, src_mask=mask, src_key_padding_mask=src_key_padding_mask, is_causal=is_causal)
        return src if self.norm is None else self.norm(src)


class TransformerDecoder(Module):
    """num_layers copies of decoder_layer, then an optional norm."""

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(decoder_layer) for _ in range(num_layers)])
        self.num_layers, self.norm = num_layers, norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False):
        tgt_is_causal = _is_causal_mask(tgt_mask, tgt_is_causal,
                                        _sequence_length(tgt, self.layers[0].self_attn.batch_first))
        for layer in self.layers:
            tgt = layer(tgt, memory, tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask,
                        tgt_is_causal, memory_is_causal)
        return tgt if self.norm is None else self.norm(tgt)


class Transformer(Module):
    """An encoder and a decoder stack, each ending in a LayerNorm; every matrix parameter xavier uniform."""

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6, dim_feedforward=2048,
                 dropout=0.1, activation="relu", custom_encoder=None, custom_decoder=None, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__()
        options = dict(dim_feedforward=dim_feedforward, dropout=dropout, activation=activation,
                       layer_norm_eps=layer_norm_eps, batch_first=batch_first, norm_first=norm_first, bias=bias,
                       device=device, dtype=dtype)
        self.encoder = custom_encoder or TransformerEncoder(
            TransformerEncoderLayer(d_model, nhead, **options), num_encoder_layers,
            LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype))
        self.decoder = custom_decoder or TransformerDecoder(
            TransformerDecoderLayer(d_model, nhead, **options), num_decoder_layers,
            LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype))
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first
        for parameter in self.parameters():
            if parameter.ndim > 1:
                init.xavier_uniform_(parameter)

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None, src_key_padding_mask=None,
                tgt_key_padding_mask=None, memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal=False):
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=tgt_is_causal,
                            memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz, device=None, dtype=None):
        """A float (sz, sz) mask: 0 on and below the diagonal, -inf above (no attending to later positions)."""
        dtype = dtypes.canonical(dtype or dtypes.FLOAT64)
        return Tensor._wrap(_causal_mask(sz, sz, dtype))
