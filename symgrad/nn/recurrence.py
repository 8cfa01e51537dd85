"""One layer and direction of a recurrent layer over a whole sequence, with PyTorch's cells (gate order and
formulas of RNN, LSTM and GRU): the input projections of every time step are one matrix product, then the
recurrence. Packed sequences run padded, each sequence's state frozen past its end (so a reverse direction
starts at its own last step).

The recurrence is an sg.scan over the steps. On eager tensors the sequence is one compiled call recorded as
one op whose backward is one compiled call too, as PyTorch's fused RNN op: the scan and its vjp are traced and
lowered once per (cell, shapes, dtype, direction, bias, packed) (transforms.vjp_code). Inside a trace (sg.compile,
sg.grad) the scan is one node of the trace, whatever the length. A double backward (create_graph), mixed dtypes,
and eager tensors inside a trace run the Python loop of the same steps, which records or traces each step.
"""
from __future__ import annotations

import collections

import numpy as np

from .. import numpy_api as sgnp
from ..control_flow import scan
from ..core import Tracer, current_builder
from ..eager.function import Function
from ..eager.mode import is_grad_enabled
from ..eager.tensor import ENGINE, Tensor
from ..transforms import vjp_code
from .functional import linear


def _gates(a, count):
    """a's last axis cut into `count` equal gates (what chunk does, on tensors and traced values alike)."""
    size = a.shape[-1] // count
    return [a[..., k * size:(k + 1) * size] for k in range(count)]


def _rnn_tanh(x_proj, h, w_hh, b_hh):
    return sgnp.tanh(x_proj + linear(h, w_hh, b_hh))


def _rnn_relu(x_proj, h, w_hh, b_hh):
    return sgnp.relu(x_proj + linear(h, w_hh, b_hh))


def _lstm(x_proj, state, w_hh, b_hh):
    """PyTorch's LSTM step: gates i, f, g, o; c' = f c + i g; h' = o tanh(c')."""
    h, c = state
    i, f, g, o = _gates(x_proj + linear(h, w_hh, b_hh), 4)
    c = sgnp.sigmoid(f) * c + sgnp.sigmoid(i) * sgnp.tanh(g)
    return sgnp.sigmoid(o) * sgnp.tanh(c), c


def _gru(x_proj, h, w_hh, b_hh):
    """PyTorch's GRU step: r, z from both projections; n = tanh(x_n + r (W_hn h + b_hn)); h' = (1 - z) n + z h."""
    x_r, x_z, x_n = _gates(x_proj, 3)
    h_r, h_z, h_n = _gates(linear(h, w_hh, b_hh), 3)
    r, z = sgnp.sigmoid(x_r + h_r), sgnp.sigmoid(x_z + h_z)
    n = sgnp.tanh(x_n + r * h_n)
    return (1 - z) * n + z * h


# mode -> (step, gates per hidden unit)
STEPS = {"RNN_TANH": (_rnn_tanh, 1), "RNN_RELU": (_rnn_relu, 1), "LSTM": (_lstm, 4), "GRU": (_gru, 3)}


def where_running(running, new, old):
    """new where the sequence is still running at this step, else old (an LSTM's (h, c) both)."""
    mask = running[:, None]
    if isinstance(new, tuple):
        return tuple(sgnp.where(mask, n, o) for n, o in zip(new, old))
    return sgnp.where(mask, new, old)


def sequence(mode, x, state, weights, lengths=None, reverse=False):
    """(outputs (L, N, H), final state) of one direction of a layer: x (L, N, H_in), state h (or (h, c) for an
    LSTM) of shape (N, H), weights (w_ih, w_hh, b_ih, b_hh) with None biases when there are none, lengths of
    the packed sequences (an int array) or None."""
    states = state if isinstance(state, tuple) else (state,)
    operands = (x, *states, *[w for w in weights if w is not None])
    if not all(t.dtype == x.dtype for t in operands) or x.dtype not in (np.float32, np.float64):
        return looped(mode, x, state, weights, lengths, reverse)  # (which promotes, or raises the op's error)
    running = None if lengths is None else np.arange(x.shape[0])[:, None] < lengths[None, :]
    spec = (mode, bool(reverse), len(states), weights[2] is not None, lengths)
    if current_builder() is not None and any(isinstance(t, Tracer) and not isinstance(t, Tensor) for t in operands):
        masks = [] if running is None else [running]
        packed = _scanned(*spec[:4], running is not None)(*operands, *masks)  # one scan node in the trace
    elif current_builder() is None and all(isinstance(t, Tensor) for t in operands):
        key = spec[:4] + (running is not None, x.dtype) + tuple(t.shape for t in operands)
        packed = FusedRnn.apply(_code(key, operands, running), spec, running, *operands)
    else:
        return looped(mode, x, state, weights, lengths, reverse)
    steps = x.shape[0]
    finals = tuple(packed[steps + k] for k in range(len(states)))
    return packed[:steps], finals if isinstance(state, tuple) else finals[0]


def looped(mode, x, state, weights, lengths=None, reverse=False):
    """sequence() as a Python loop over the time steps of tensor (or traced) ops."""
    w_ih, w_hh, b_ih, b_hh = weights
    step = STEPS[mode][0]
    projected = linear(x, w_ih, b_ih)  # every time step at once: (L, N, gates)
    times = range(x.shape[0] - 1, -1, -1) if reverse else range(x.shape[0])
    outputs = [None] * x.shape[0]
    for t in times:
        new = step(projected[t], state, w_hh, b_hh)
        state = new if lengths is None else where_running(t < lengths, new, state)
        outputs[t] = state[0] if isinstance(state, tuple) else state
    return sgnp.stack(outputs), state


def _scanned(mode, reverse, count, bias, masked=False):
    """The sequence as a function of arrays (x, *states, w_ih, w_hh[, b_ih, b_hh][, running]) returning the
    outputs with the final states appended along time: (L + count, N, H)."""
    step = STEPS[mode][0]

    def recurrence(x, *rest):
        states, rest = rest[:count], list(rest[count:])
        running = rest.pop() if masked else None
        w_ih, w_hh, b_ih, b_hh = rest if bias else (*rest, None, None)

        def body(carry, xs):
            old = carry if count == 2 else carry[0]
            new = step(xs[0], old, w_hh, b_hh)
            new = new if running is None else where_running(xs[1], new, old)
            new = new if count == 2 else (new,)
            return new, new[0]

        xs = (linear(x, w_ih, b_ih),) if running is None else (linear(x, w_ih, b_ih), running)
        finals, ys = scan(body, tuple(states), xs, reverse=reverse)
        return sgnp.concatenate([ys, *[f[None] for f in finals]], axis=0)

    recurrence.__name__ = mode.lower()
    return recurrence


_CODE_SIZE = 64
_codes: "collections.OrderedDict" = collections.OrderedDict()


def _code(key, operands, running):
    """The VjpCode of the sequence for these operands' types, traced and lowered on first use."""
    code = _codes.pop(key, None)
    if code is None:
        mode, reverse, count, bias = key[:4]  # (key[4]: packed, so the code takes `running`)
        arrays = [np.zeros(t.shape, t.dtype) for t in operands] + ([] if running is None else [running])
        names = ["input"] + [f"state{k}" for k in range(count)] + ["w_ih", "w_hh"] + ["b_ih", "b_hh"] * bias
        code = vjp_code(_scanned(mode, reverse, count, bias, running is not None), arrays,
                        names + ["running"] * (running is not None))
    _codes[key] = code
    if len(_codes) > _CODE_SIZE:
        _codes.popitem(last=False)
    return code


class FusedRnn(Function):
    """The fused sequence as one recorded op: forward and backward are the calls of its VjpCode."""

    @staticmethod
    def forward(ctx, code, spec, running, *operands):
        arrays = [t._data for t in operands] + ([] if running is None else [running])
        values = code.forward(*arrays, *code.constants)
        ctx.code, ctx.spec, ctx.count = code, spec, len(operands)
        ctx.save_for_backward(*operands, *[Tensor._wrap(r) for r in values[1:]])
        return Tensor._wrap(values[0])

    @staticmethod
    def backward(ctx, grad):
        saved, code = ctx.saved_tensors, ctx.code
        operands, residuals = saved[:ctx.count], saved[ctx.count:]
        if is_grad_enabled():  # a backward to differentiate again (create_graph): the loop, recorded
            return (None, None, None, *_looped_grads(ctx.spec, operands, grad, ctx.needs_input_grad[3:]))
        (shape, dtype), = code.ct_types
        grads = code.backward(*[r._data for r in residuals], np.asarray(grad._data, dtype).reshape(shape))
        return (None, None, None, *[Tensor._wrap(g) for g in grads])


def _looped_grads(spec, operands, grad, needs) -> list:
    """The input gradients of the fused sequence given its output's, by the loop recorded (for create_graph)."""
    mode, reverse, count, bias, lengths = spec
    weights = tuple(operands[1 + count:]) if bias else (*operands[1 + count:], None, None)
    states = tuple(operands[1:1 + count])
    outputs, final = looped(mode, operands[0], states if count == 2 else states[0], weights, lengths, reverse)
    finals = final if count == 2 else (final,)
    packed = sgnp.concatenate([outputs, *[f[None] for f in finals]], axis=0)
    wanted = [t for t, need in zip(operands, needs) if need]
    found = iter(ENGINE.grad(packed, wanted, grad, create_graph=True, allow_unused=True))
    return [next(found) if need else None for need in needs]
