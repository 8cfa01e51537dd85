"""`autograd.Function`: an op with a user-written forward and backward, as in PyTorch.

`Function.apply(*args)` runs `forward(ctx, *args)` without recording and, when an input
requires grad, records one node whose gradient is `backward(ctx, grad_output)`. The
backward is Python, so the engine runs it between compiled adjoint runs.
"""
from __future__ import annotations

from ..core import UnsupportedOpError
from .graph import Record
from .mode import is_grad_enabled, no_grad
from .tensor import Tensor


class FunctionCtx:
    """The `ctx` passed to forward and backward: saved tensors, needs_input_grad, free attributes."""

    def __init__(self, needs_input_grad, tensor_inputs):
        self.needs_input_grad = needs_input_grad
        self._tensor_inputs = tensor_inputs
        self._saved = ()
        self._saved_versions = ()
        self._released = False
        self._output = None  # forward's result, once apply has it
        self._record = None  # the Function's record while its backward runs

    def save_for_backward(self, *tensors):
        self._saved = tensors
        self._saved_versions = tuple(getattr(t, "_version", None) and (t._version, t._version.value) for t in tensors)

    @property
    def saved_tensors(self):
        if self._released:
            raise RuntimeError("Trying to backward through the graph a second time (or directly access saved "
                               "tensors after they have already been freed). Specify retain_graph=True if you need "
                               "to backward through the graph a second time.")
        for i, versioned in enumerate(self._saved_versions):
            if versioned and versioned[0].value != versioned[1]:
                raise RuntimeError(f"one of the variables needed for gradient computation has been modified by an "
                                   f"inplace operation: saved tensor {i} is at version {versioned[0].value}; "
                                   f"expected version {versioned[1]} instead.")
        if self._record is None or not any(t is self._output for t in self._saved):
            return self._saved
        return tuple(self._output_in_graph() if t is self._output else t for t in self._saved)

    def _output_in_graph(self):
        """The saved output as PyTorch unpacks it: the output tensor, whose grad_fn is this Function,
        so a backward differentiated again (create_graph) sees that the output depends on the inputs."""
        out = Tensor._wrap(self._output._data, self._output._version)
        out._node, out._requires_grad = self._record, True
        return out

    def release(self):
        self._saved = ()
        self._released = True

    def call_backward(self, record, grad_output) -> list:
        """The backward of the Function recorded as `record`, checked as PyTorch checks it: one gradient
        per input of forward (trailing Nones beyond them are dropped), None for every input that is not
        a tensor. Returns [(position among forward's inputs, gradient)] for the tensor inputs."""
        function = record.function
        self._record = record
        try:
            grads = function.backward(self, grad_output)
        finally:
            self._record = None
        grads = list(grads) if isinstance(grads, tuple) else [grads]
        expected = len(self.needs_input_grad)
        if len(grads) > expected and all(g is None for g in grads[expected:]):
            grads = grads[:expected]
        if len(grads) != expected:
            raise RuntimeError(f"function {function.__name__}Backward returned an incorrect number of gradients "
                               f"(expected {expected}, got {len(grads)})")
        for position, (g, is_tensor) in enumerate(zip(grads, self._tensor_inputs)):
            if g is not None and not is_tensor:
                raise RuntimeError(f"function {function.__name__}Backward returned a gradient different than None "
                                   f"at position {position + 1}, but the corresponding forward input was not a "
                                   "Tensor")
        return [(position, g) for position, (g, is_tensor) in enumerate(zip(grads, self._tensor_inputs))
                if is_tensor]


class Function:
    """Subclass with static `forward(ctx, *args)` and `backward(ctx, *grad_outputs)`; call `apply`."""

    @staticmethod
    def forward(ctx, *args):
        raise NotImplementedError("subclasses of autograd.Function define forward(ctx, *args)")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("subclasses of autograd.Function define backward(ctx, *grad_outputs)")

    @classmethod
    def apply(cls, *args):
        ctx = FunctionCtx(tuple(isinstance(a, Tensor) and a.requires_grad for a in args),
                          tuple(isinstance(a, Tensor) for a in args))
        with no_grad():
            result = cls.forward(ctx, *args)
        if not isinstance(result, Tensor):
            if isinstance(result, tuple):
                raise UnsupportedOpError(f"{cls.__name__}.forward returned a tuple; symgrad's autograd.Function "
                                         "supports one output tensor")
            result = Tensor(result)
        out = Tensor._wrap(result._data, result._version)  # one version counter: saving result checks out
        if not any(result is a for a in args):  # an input passed through keeps its own history
            ctx._output = result
        if is_grad_enabled() and any(ctx.needs_input_grad) and out.dtype.kind == "f":
            inputs = [a for a in args if isinstance(a, Tensor)]
            out._node = Record.of_op(None, (), inputs, [t._data for t in inputs], out, function=cls, ctx=ctx)
            out._requires_grad = True
        return out
