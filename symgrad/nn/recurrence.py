"""One layer and direction of a recurrent layer over a whole sequence, with PyTorch's cells (gate order and
formulas of RNN, LSTM and GRU): the input projections of every time step are one matrix product (an op of its
own, as PyTorch's), then the recurrence. Packed sequences run padded, each sequence's state frozen past its end (so a reverse direction
starts at its own last step).

The recurrence is an sg.scan over the steps. On eager tensors the sequence is one primitive (`fused_rnn`), as
PyTorch's fused RNN op: its NumPy implementation is the scan, interpreted for the first calls of given (cell,
shapes, dtype, direction, bias, packed), then lowered once; its reverse rule differentiates the scan; and a
captured training step (eager/whole_backward.py) decomposes it into the scan before differentiating, so the whole
step, the recurrence included, is one native call. Inside a trace (sg.compile, sg.grad) the scan is one node of the trace, whatever the length. Mixed dtypes,
and eager tensors inside a trace, run the Python loop of the same steps, which records or traces each step.
"""
from __future__ import annotations

import numpy as np

from .. import code_cache, numpy_api as sgnp
from ..autodiff import backward_pass, forward_pass
from ..caches import Recent
from ..control_flow import scan
from ..core import Builder, Primitive, ShapeError, Tracer, building, current_builder
from ..eager.tensor import Tensor, apply_function
from ..ops.control import evaluate
from ..tracing import inline
from .functional import linear


def _gates(a, count):
    """a's last axis cut into `count` equal gates (what chunk does, on tensors and traced values alike)."""
    return [_gate(a, k, count) for k in range(count)]


def _gate(a, k, count):
    """Gate k of `count` along a's last axis. The key is slices of Python ints, no Ellipsis: on a tensor it replays a
    cached plan (Tensor.__getitem__)."""
    size = a.shape[-1] // count
    return a[(slice(None),) * (len(a.shape) - 1) + (slice(k * size, (k + 1) * size),)]


def _rnn_tanh(x_proj, h, w_hh, b_hh):
    return sgnp.tanh(x_proj + linear(h, w_hh, b_hh))


def _rnn_relu(x_proj, h, w_hh, b_hh):
    return sgnp.relu(x_proj + linear(h, w_hh, b_hh))


def _lstm(x_proj, state, w_hh, b_hh):
    """PyTorch's LSTM step: gates i, f, g, o; c' = f c + i g; h' = o tanh(c'). On tensors (LSTMCell) three cached
    plans, each deferred at once in a captured step, rather than fifteen calls (apply_function; in a trace, the ops)."""
    h, c = state
    z = apply_function(_lstm_gates, (x_proj, h, w_hh, b_hh), {})
    c = apply_function(_lstm_cell_state, (z, c), {})
    return apply_function(_lstm_hidden, (z, c), {}), c


def _lstm_gates(x_proj, h, w_hh, b_hh):
    return x_proj + linear(h, w_hh, b_hh)


def _lstm_cell_state(z, c):
    return sgnp.sigmoid(_gate(z, 1, 4)) * c + sgnp.sigmoid(_gate(z, 0, 4)) * sgnp.tanh(_gate(z, 2, 4))


def _lstm_hidden(z, c):
    return sgnp.sigmoid(_gate(z, 3, 4)) * sgnp.tanh(c)


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
    """(outputs (L, N, H), final state of shape (1, N, H), as a layer stacks them) of one direction of a layer:
    x (L, N, H_in), state h (or (h, c) for an LSTM, and so is the final state) of shape (N, H), weights (w_ih,
    w_hh, b_ih, b_hh) with None biases when there are none, lengths of the packed sequences (an int array) or
    None."""
    states = state if isinstance(state, tuple) else (state,)
    w_ih, w_hh, b_ih, b_hh = weights
    operands = (x, *states, *[w for w in weights if w is not None])
    if not all(t.dtype == x.dtype for t in operands) or x.dtype not in (np.float32, np.float64):
        return _unit_axis(*looped(mode, x, state, weights, lengths, reverse))  # (promotes, or raises the error)
    running = [] if lengths is None else [np.arange(x.shape[0])[:, None] < lengths[None, :]]
    spec = dict(mode=mode, reverse=bool(reverse), count=len(states), bias=b_hh is not None, masked=bool(running))
    recurrent = (*states, *[w for w in (w_hh, b_hh) if w is not None])
    if current_builder() is not None and any(isinstance(t, Tracer) and not isinstance(t, Tensor) for t in operands):
        packed = _scanned(**spec)(linear(x, w_ih, b_ih), *recurrent, *running)  # one scan node in the trace
    elif current_builder() is None and all(isinstance(t, Tensor) for t in operands):
        # the projection recorded apart, as PyTorch's: its backward reads x as it is then (NumPy may have written
        # it since the forward), while the recurrence's reads the projection's forward values
        packed = apply_function(_fused, (linear(x, w_ih, b_ih), *recurrent, *[Tensor._wrap(r) for r in running]),
                                spec)
    else:
        return _unit_axis(*looped(mode, x, state, weights, lengths, reverse))
    steps = x.shape[0]
    finals = tuple(packed[steps + k:steps + k + 1] for k in range(len(states)))
    return packed[:steps], finals if isinstance(state, tuple) else finals[0]


def _unit_axis(outputs, final) -> tuple:
    """(outputs, the final state with a leading axis of 1) of looped()."""
    if isinstance(final, tuple):
        return outputs, tuple(sgnp.expand_dims(f, 0) for f in final)
    return outputs, sgnp.expand_dims(final, 0)


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
    """The sequence as a function of arrays (x_proj, *states, w_hh[, b_hh][, running]), x_proj the input's
    projection of every time step (L, N, gates), returning the outputs with the final states appended along time:
    (L + count, N, H)."""
    step = STEPS[mode][0]

    def recurrence(x_proj, *rest):
        states, rest = rest[:count], list(rest[count:])
        running = rest.pop() if masked else None
        w_hh, b_hh = rest if bias else (*rest, None)

        def body(carry, xs):
            old = carry if count == 2 else carry[0]
            new = step(xs[0], old, w_hh, b_hh)
            new = new if running is None else where_running(xs[1], new, old)
            new = new if count == 2 else (new,)
            return new, new[0]

        xs = (x_proj,) if running is None else (x_proj, running)
        finals, ys = scan(body, tuple(states), xs, reverse=reverse)
        return sgnp.concatenate([ys, *[f[None] for f in finals]], axis=0)

    recurrence.__name__ = mode.lower()
    return recurrence


def _shape(inputs, mode, reverse, count, bias, masked):
    """The outputs with the final states appended along time: (L + count, N, H), of the input's dtype."""
    expected = 1 + count + 1 + bias + masked
    if len(inputs) != expected:
        raise ShapeError(f"fused_rnn: expected {expected} operands, got {len(inputs)}")
    x, w_hh = inputs[0], inputs[1 + count]
    return (x.shape[0] + count, x.shape[1], w_hh.shape[1]), x.dtype


_graphs = Recent(64)  # (attrs, operand types) -> [graph, lowered or None, calls]; the code is code_cache's
# Calls of one sequence's types interpreted before it is lowered: a training step computes its ops eagerly twice,
# then its capture computes them (eager/whole_backward.py), so lowering the sequence alone would be wasted there.
_INTERPRETED_CALLS = 2


def _traced(attrs: dict, types: tuple) -> list:
    """[the graph of the sequence (_scanned) on operands of these (shape, dtype) types, its lowered code or None,
    how many times _run computed it]."""
    key = (tuple(sorted(attrs.items())), types)
    entry = _graphs.used(key)
    if entry is None:
        builder = Builder()
        with building(builder):
            inputs = [builder.new_input(shape, dtype) for shape, dtype in types]
            graph = builder.finish([_scanned(**attrs)(*inputs)], attrs["mode"].lower())
        entry = _graphs.keep(key, [graph, None, 0])
    return entry


def _types(values) -> tuple:
    return tuple((tuple(v.shape), np.dtype(v.dtype)) for v in values)


def _run(*arrays, **attrs):
    """The NumPy implementation: the sequence's scan, interpreted for its first calls (unless its code is cached
    already), then lowered once per attributes and operand types."""
    entry = _traced(attrs, _types(arrays))
    entry[2] += 1
    if entry[1] is None:
        code = code_cache.cached(entry[0]) if entry[2] <= _INTERPRETED_CALLS else code_cache.lowered(entry[0])
        if code is None:
            return evaluate(entry[0], arrays)[0]
        entry[1] = code.executable
    return entry[1](*arrays)[0]


def _vjp(ct, ans, *inputs, **attrs):
    """The reverse rule: the reverse pass through the sequence's scan (which computes it again for its residuals; a
    captured step decomposes the op before differentiating instead, so its forward computes them once)."""
    graph = _traced(attrs, _types(inputs))[0]
    env = inline(graph, list(inputs))
    cts = backward_pass(graph, env, [(id(graph.outputs[0]), ct)])
    return [cts.get(id(value)) if value.dtype.kind == "f" else None for value in graph.inputs]


def _jvp(tangents, ans, *inputs, **attrs):
    """The forward-mode rule: the forward pass through the sequence's scan."""
    graph = _traced(attrs, _types(inputs))[0]
    env = inline(graph, list(inputs))
    seeds = {id(value): t for value, t in zip(graph.inputs, tangents) if t is not None}
    return forward_pass(graph, env, seeds).get(id(graph.outputs[0]))


def _fused(*operands, **attrs):
    """fused_rnn_p of the operands: the function eager tensors call it by, replayed as a cached plan
    (eager/plans.py), as a namespace function is."""
    return fused_rnn_p(*operands, **attrs)


def _decompose(*inputs, **attrs):
    return _scanned(**attrs)(*inputs)


# fused_rnn[mode, reverse, count, bias, masked] x_proj, *states, w_hh[, b_hh][, running]: one layer and direction
# over the whole sequence from its input's projection, as _scanned computes it.
fused_rnn_p = Primitive("fused_rnn", _shape, _run, vjp=_vjp, jvp=_jvp, decompose=_decompose)
fused_rnn_p.decomposed_to_differentiate = True  # (eager/whole_backward.py)
