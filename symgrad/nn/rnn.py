"""Recurrent layers with PyTorch's names, parameters (weight_ih_l0, weight_hh_l0_reverse, ...), gate order,
initialization U(-1/sqrt(hidden), 1/sqrt(hidden)) and shapes: RNN, LSTM, GRU (num_layers, bias, batch_first,
dropout between layers, bidirectional) and RNNCell, LSTMCell, GRUCell.

Each layer and direction runs its sequence through nn.recurrence: on eager tensors the input projection and one
recorded op of the recurrence (the primitive fused_rnn, as PyTorch's fused RNN op), in a trace one sg.scan
node. A PackedSequence input gives a PackedSequence output and each sequence's final state.
"""
from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from .. import numpy_api as sgnp
from ..core import UnsupportedOpError
from ..eager.tensor import Tensor, apply_function, labelled
from . import init
from .functional import dropout, linear
from .modules import Module
from .parameter import Parameter
from .recurrence import STEPS, sequence
from .utils.rnn import PackedSequence, packed_like, pad_packed_sequence


def _check_device(device):
    if device not in (None, "cpu"):
        raise ValueError(f"symgrad runs on the CPU only, not on device {device!r}")


class _RNNBase(Module):
    mode = None

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None, *, nonlinearity="tanh"):
        super().__init__()
        _check_device(device)
        if proj_size:
            _refuse_projection(self.mode, proj_size, hidden_size)
        if not isinstance(hidden_size, int) or hidden_size <= 0 or num_layers < 1:
            raise ValueError(f"hidden_size must be a positive int and num_layers >= 1, got {hidden_size}, "
                             f"{num_layers}")
        if not 0 <= dropout <= 1:
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an element "
                             "being zeroed")
        if self.mode.startswith("RNN"):
            if nonlinearity not in ("tanh", "relu"):
                raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
            self.mode, self.nonlinearity = f"RNN_{nonlinearity.upper()}", nonlinearity
        self.input_size, self.hidden_size, self.num_layers, self.bias = input_size, hidden_size, num_layers, bias
        self.batch_first, self.dropout, self.bidirectional = batch_first, float(dropout), bidirectional
        gates = STEPS[self.mode][1] * hidden_size
        dtype = dtypes.canonical(dtype or dtypes.FLOAT64)
        directions = 2 if bidirectional else 1
        for layer in range(num_layers):
            for direction in range(directions):
                suffix = f"_l{layer}" + ("_reverse" if direction else "")
                inputs = input_size if layer == 0 else hidden_size * directions
                self.register_parameter("weight_ih" + suffix, Parameter(np.empty((gates, inputs), dtype)))
                self.register_parameter("weight_hh" + suffix, Parameter(np.empty((gates, hidden_size), dtype)))
                if bias:
                    self.register_parameter("bias_ih" + suffix, Parameter(np.empty(gates, dtype)))
                    self.register_parameter("bias_hh" + suffix, Parameter(np.empty(gates, dtype)))
        self.reset_parameters()

    def reset_parameters(self):
        bound = 1.0 / math.sqrt(self.hidden_size)
        for weight in self.parameters():
            init.uniform_(weight, -bound, bound)

    @property
    def _flat_weights_names(self):
        """The parameters' names in PyTorch's order (by layer, direction, then weight_ih, weight_hh, bias_ih,
        bias_hh): private in PyTorch, but code written for it walks them (d2l's init_seq2seq)."""
        return list(self._parameters)

    @property
    def _flat_weights(self):
        return [self._parameters[name] for name in self._flat_weights_names]

    @property
    def all_weights(self):
        """For each layer and direction, its [weight_ih, weight_hh, bias_ih, bias_hh] (the weights without bias)."""
        return [[weight for weight in self._weights(layer, direction) if weight is not None]
                for layer in range(self.num_layers) for direction in range(2 if self.bidirectional else 1)]

    def _weights(self, layer, direction):
        suffix = f"_l{layer}" + ("_reverse" if direction else "")
        return tuple(getattr(self, name + suffix, None) for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"))

    def forward(self, input, hx=None):
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx)
        return self._forward(input, hx)

    def _forward_packed(self, input, hx):
        padded, lengths = pad_packed_sequence(input, batch_first=self.batch_first)
        output, final = self._forward(padded, hx, np.asarray(lengths._data))
        return packed_like(sgnp.swapaxes(output, 0, 1) if self.batch_first else output, input), final

    def _forward(self, input, hx, lengths=None):
        if input.ndim not in (2, 3):
            raise ValueError(f"{type(self).__name__}: Expected input to be 2D or 3D, got {input.ndim}D instead")
        batched = input.ndim == 3
        x = input if batched else sgnp.expand_dims(input, 1)  # (L, 1, H_in)
        if batched and self.batch_first:
            x = sgnp.swapaxes(x, 0, 1)
            # PyTorch's input projection reads a row-major copy, which NumPy's writes after forward miss: made here
            # when NumPy may write the input (elsewhere it would only hide the rows gathered from an embedding)
            x = x.contiguous() if isinstance(x, Tensor) and x._version.exposed else x
        if x.shape[0] == 0:
            raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
        if x.shape[2] != self.input_size:
            raise ValueError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, got "
                             f"{x.shape[2]}")
        directions = 2 if self.bidirectional else 1
        state_shape = (self.num_layers * directions, x.shape[1], self.hidden_size)
        states = self._initial_states(hx, batched, state_shape, x)
        finals = []
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(directions):
                state = states[layer * directions + direction]
                output, state = sequence(self.mode, x, state, self._weights(layer, direction), lengths, direction)
                outputs.append(output)
                finals.append(state)
            x = outputs[0] if directions == 1 else sgnp.concatenate(outputs, axis=2)
            if self.dropout and self.training and layer < self.num_layers - 1:
                x = dropout(x, self.dropout, True)
        output = _torch_named(sgnp.swapaxes(x, 0, 1) if batched and self.batch_first else x, self.mode,
                              batched and self.batch_first, directions)
        if self.mode == "LSTM":
            final = (_stacked([h for h, _ in finals]), _stacked([c for _, c in finals]))
            return (output, final) if batched else (_squeezed(output), tuple(_squeezed(s) for s in final))
        final = _stacked(finals)
        return (output, final) if batched else (_squeezed(output), _squeezed(final))

    def _initial_states(self, hx, batched, shape, x):
        """Per layer and direction, its initial state (h, or (h, c) for an LSTM): from hx as PyTorch takes it (h0, or
        (h0, c0)), batched like the input, or zeros when None."""
        count = 2 if self.mode == "LSTM" else 1
        if hx is None:
            zeros = _zeros(x, shape[1:])
            return [(zeros, zeros) if count == 2 else zeros] * shape[0]
        parts = tuple(hx) if count == 2 else (hx,)
        if len(parts) != count:
            raise ValueError(f"{type(self).__name__}: hx must be (h_0, c_0)")
        if not batched:
            parts = tuple(sgnp.expand_dims(p, 1) for p in parts)
        for part in parts:
            if tuple(part.shape) != shape:
                raise RuntimeError(f"Expected hidden size {shape}, got {tuple(part.shape)}")
        return [tuple(p[index] for p in parts) if count == 2 else parts[0][index] for index in range(shape[0])]

    def flatten_parameters(self):
        """PyTorch's cuDNN weight compaction: nothing to do on the CPU, as in PyTorch (pytorch/examples'
        word_language_model calls it after loading a model)."""

    def extra_repr(self):
        text = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            text += f", num_layers={self.num_layers}"
        for name, default in (("bias", True), ("batch_first", False), ("dropout", 0.0), ("bidirectional", False)):
            if getattr(self, name) != default:
                text += f", {name}={getattr(self, name)}"
        return text


def _refuse_projection(mode, proj_size, hidden_size):
    """PyTorch's errors for a proj_size it refuses too; symgrad's for LSTM's projection (h = W_hr (o * tanh(c)),
    whose h is narrower than c: the fused sequence op stacks them along time, so it needs one width)."""
    if mode != "LSTM":
        raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
    if not isinstance(proj_size, int) or proj_size < 0:
        raise ValueError("proj_size should be a positive integer or zero to disable projections")
    if proj_size >= hidden_size:
        raise ValueError("proj_size has to be smaller than hidden_size")
    raise UnsupportedOpError(f"LSTM(proj_size={proj_size}): symgrad does not support the projection of the hidden "
                             "state (PyTorch's weight_hr_l*); use proj_size=0")


def _stacked(finals):
    """The final states of every layer and direction, each (1, N, H), as one (layers * directions, N, H): on tensors
    one cached plan (sgnp.concatenate's front end is not replayed); its grad_fn PyTorch's StackBackward0."""
    if len(finals) == 1:
        return labelled(finals[0], "Stack")
    return labelled(apply_function(_concatenated, tuple(finals), {}), "Stack") \
        if all(isinstance(f, Tensor) for f in finals) else sgnp.concatenate(finals, axis=0)


def _torch_named(output, mode, batch_first, directions):
    """A batched output with PyTorch's grad_fn name: its stack of the steps (RNN, GRU), its transpose (batch_first);
    a bidirectional one is a Cat as PyTorch's, a unidirectional LSTM's keeps symgrad's (PyTorch's is its CPU
    kernel's MkldnnRnnLayerBackward0)."""
    if batch_first:
        return labelled(output, "Transpose", overload=0 if mode == "LSTM" else 1)
    return labelled(output, "Stack") if directions == 1 and mode != "LSTM" else output


def _squeezed(value):
    """An unbatched result: the batch dimension removed (PyTorch's SqueezeBackward1)."""
    return labelled(sgnp.squeeze(value, 1), "Squeeze", overload=1)


def _concatenated(*parts):
    """The parts concatenated along the first axis (a function of tensors only, which a plan replays)."""
    return sgnp.concatenate(parts, axis=0)


def _zeros(x, shape):
    """The zero initial state: a tensor like x in eager mode, an array of x's dtype in a trace."""
    return Tensor._wrap(np.zeros(shape, x.dtype)) if isinstance(x, Tensor) else sgnp.zeros(shape, x.dtype)


class RNN(_RNNBase):
    """h' = tanh (or relu) of W_ih x + b_ih + W_hh h + b_hh, per layer."""

    mode = "RNN_TANH"

    def __init__(self, *args, nonlinearity="tanh", **kwargs):
        super().__init__(*args, nonlinearity=nonlinearity, **kwargs)


class LSTM(_RNNBase):
    mode = "LSTM"


class GRU(_RNNBase):
    mode = "GRU"


class _CellBase(Module):
    mode = None

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        super().__init__()
        _check_device(device)
        if self.mode == "RNN_TANH":
            if nonlinearity not in ("tanh", "relu"):
                raise ValueError(f"Unknown nonlinearity: {nonlinearity}")
            self.mode, self.nonlinearity = f"RNN_{nonlinearity.upper()}", nonlinearity
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        gates = STEPS[self.mode][1] * hidden_size
        dtype = dtypes.canonical(dtype or dtypes.FLOAT64)
        self.weight_ih = Parameter(np.empty((gates, input_size), dtype))
        self.weight_hh = Parameter(np.empty((gates, hidden_size), dtype))
        self.register_parameter("bias_ih", Parameter(np.empty(gates, dtype)) if bias else None)
        self.register_parameter("bias_hh", Parameter(np.empty(gates, dtype)) if bias else None)
        _RNNBase.reset_parameters(self)

    def forward(self, input, hx=None):
        if input.ndim not in (1, 2):
            raise ValueError(f"{type(self).__name__}: Expected input to be 1D or 2D, got {input.ndim}D instead")
        batched = input.ndim == 2
        x = input if batched else sgnp.expand_dims(input, 0)
        if hx is None:
            zeros = _zeros(x, (x.shape[0], self.hidden_size))
            hx = (zeros, zeros) if self.mode == "LSTM" else zeros
        elif not batched:
            hx = tuple(sgnp.expand_dims(h, 0) for h in hx) if self.mode == "LSTM" else sgnp.expand_dims(hx, 0)
        weights = (self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)  # (a bias set to None stays in place)
        if self.mode == "LSTM":  # (two results: op by op)
            out = _cell(x, hx, *weights, mode=self.mode)
        else:  # one cached plan, deferred at once in a captured step, rather than four calls
            out = apply_function(_cell, (x, hx, *weights), dict(mode=self.mode))
        if batched:
            return out
        return tuple(sgnp.squeeze(o, 0) for o in out) if self.mode == "LSTM" else sgnp.squeeze(out, 0)

    def extra_repr(self):
        return f"{self.input_size}, {self.hidden_size}" + ("" if self.bias else ", bias=False")


def _cell(x, h, w_ih, w_hh, b_ih, b_hh, *, mode):
    """One step of a cell: h' (or (h', c') for an LSTM) from the input x (N, H_in) and the state h (or (h, c))."""
    return STEPS[mode][0](linear(x, w_ih, b_ih), h, w_hh, b_hh)


class RNNCell(_CellBase):
    mode = "RNN_TANH"


class LSTMCell(_CellBase):
    mode = "LSTM"

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, device=device, dtype=dtype)


class GRUCell(_CellBase):
    mode = "GRU"

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, device=device, dtype=dtype)
