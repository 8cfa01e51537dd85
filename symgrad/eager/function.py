"""`autograd.Function`: an op with a user-written forward and backward, as in PyTorch.

`Function.apply(*args)` runs `forward(ctx, *args)` without recording and, when an input requires grad,
records one node per differentiable output (the same ctx behind them all); the engine calls
`backward(ctx, *grad_outputs)` once, with the gradients of every output. The backward is Python, so the
engine runs it between compiled adjoint runs.
"""
from __future__ import annotations

import functools

import numpy as np

from ..core import Tracer, TracerError, UnsupportedOpError, current_builder
from ..numpy_api import stop_gradient
from .graph import Record
from .mode import is_grad_enabled, no_grad
from .tensor import Tensor


class FunctionCtx:
    """The `ctx` passed to forward and backward: saved tensors, needs_input_grad, the outputs marked
    non-differentiable, whether missing gradients are materialized, free attributes."""

    def __init__(self, needs_input_grad, tensor_inputs):
        self.needs_input_grad = needs_input_grad
        self._tensor_inputs = tensor_inputs
        self._saved = ()
        self._saved_versions = ()
        self._released = False
        self._non_differentiable = ()
        self._materialize_grads = True
        self._outputs = ()  # per output of forward: the tensor (None for an input passed through or a non-tensor)
        self._output_types = ()  # per output: (shape, dtype), or None for one that is not a tensor
        self._records = ()  # per output: its record, or None (not a tensor, not differentiable, or not recorded)
        self._in_backward = False

    def save_for_backward(self, *tensors):
        self._saved = tensors
        self._saved_versions = tuple(getattr(t, "_version", None) and (t._version, t._version.value) for t in tensors)

    def mark_non_differentiable(self, *tensors):
        """These outputs of forward get no gradient: they do not require grad, and backward receives zeros
        for them (None without materialized gradients)."""
        for t in tensors:
            if not isinstance(t, Tracer):  # a tensor, or a traced value inside a trace
                raise TypeError(f"mark_non_differentiable takes the tensors forward returns, got {type(t).__name__}")
        self._non_differentiable = tensors

    def mark_dirty(self, *tensors):
        raise UnsupportedOpError("ctx.mark_dirty (a Function that changes an input in place) is not supported by "
                                 "symgrad's autograd.Function; return a new tensor instead")

    def set_materialize_grads(self, value: bool):
        """Whether backward receives zeros (True, the default) or None for an output that got no gradient."""
        self._materialize_grads = bool(value)

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
        if not self._in_backward:
            return self._saved
        return tuple(self._output_in_graph(t) for t in self._saved)

    def _output_in_graph(self, saved):
        """A saved output as PyTorch unpacks it: the output tensor, whose grad_fn is this Function, so a
        backward differentiated again (create_graph) sees that the output depends on the inputs."""
        for output, record in zip(self._outputs, self._records):
            if output is not None and saved is output and record is not None:
                out = Tensor._wrap(output._data, output._version)
                out._node, out._requires_grad = record, True
                return out
        return saved

    def release(self):
        self._saved = ()
        self._released = True

    def output_records(self) -> tuple:
        """Per output of forward, the record that carries its gradient (None where none does)."""
        return self._records

    def call_backward(self, function, grad_outputs) -> list:
        """The backward of `function` given one gradient (a tensor, or None where none reached it) per output
        of forward, checked as PyTorch checks it: one gradient per input of forward (trailing Nones beyond
        them are dropped), None for every input that is not a tensor. Returns [(position among forward's
        inputs, gradient)] for the tensor inputs."""
        grads_in = [g if g is not None or not self._materialize_grads or kind is None
                    else Tensor._wrap(np.zeros(*kind)) for g, kind in zip(grad_outputs, self._output_types)]
        self._in_backward = True
        try:
            grads = function.backward(self, *grads_in)
        finally:
            self._in_backward = False
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
    """Subclass with static `forward(ctx, *args)` and `backward(ctx, *grad_outputs)`; call `apply`.
    forward returns a tensor or a tuple (tensors, and other values, which get no gradient). PyTorch 2's
    form works too: `forward(*args)` without ctx, and `setup_context(ctx, inputs, output)` filling ctx."""

    @staticmethod
    def forward(ctx, *args):
        raise NotImplementedError("subclasses of autograd.Function define forward(ctx, *args)")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is defined by a Function whose forward takes no ctx")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("subclasses of autograd.Function define backward(ctx, *grad_outputs)")

    @classmethod
    def apply(cls, *args):
        if current_builder() is not None and any(isinstance(a, Tracer) and not isinstance(a, Tensor) for a in args):
            return _traced_apply(cls, args)
        ctx = FunctionCtx(tuple(isinstance(a, Tensor) and a.requires_grad for a in args),
                          tuple(isinstance(a, Tensor) for a in args))
        with no_grad():
            result = _forward(cls, ctx, args)
        is_tuple = isinstance(result, tuple)
        results = result if is_tuple else (Tensor(result) if not isinstance(result, Tensor) else result,)
        _refuse_marked_elsewhere(cls, ctx._non_differentiable, results)
        inputs = [a for a in args if isinstance(a, Tensor)]
        recording = is_grad_enabled() and any(ctx.needs_input_grad)
        outs, records = [], []
        for k, r in enumerate(results):
            if not isinstance(r, Tensor):
                outs.append(r)
                records.append(None)
                continue
            out = Tensor._wrap(r._data, r._version)  # one version counter: saving the result checks it
            record = None
            if recording and out.dtype.kind == "f" and not any(r is m for m in ctx._non_differentiable):
                record = Record.of_op(None, (("output", k),), inputs, [t._data for t in inputs], out, function=cls,
                                      ctx=ctx)
                out._node, out._requires_grad = record, True
            outs.append(out)
            records.append(record)
        # an input passed through keeps its own history when saved
        ctx._outputs = tuple(r if isinstance(r, Tensor) and not any(r is a for a in args) else None for r in results)
        ctx._records = tuple(records)
        ctx._output_types = tuple((tuple(r.shape), r.dtype) if isinstance(r, Tensor) else None for r in results)
        return tuple(outs) if is_tuple else outs[0]


def _forward(cls, ctx, args):
    """forward(ctx, *args); or, for a Function with setup_context, forward(*args) then setup_context."""
    if cls.setup_context is Function.setup_context:
        return cls.forward(ctx, *args)
    output = cls.forward(*args)
    cls.setup_context(ctx, tuple(args), output)
    return output


def _traced_apply(cls, args):
    """Function.apply inside a trace (sg.compile, sg.grad, sg.vmap, a model compiled whole): a custom_vjp whose
    fwd is forward, its saved tensors the residuals, and whose bwd is backward, so every transform takes the
    user's gradient. Traced values and arrays are its inputs, other arguments Python values (hashable); in a
    tuple forward returns, the values that are not arrays are given back as they are, and outputs marked
    non-differentiable are stop_gradient'ed."""
    inputs = tuple(i for i, a in enumerate(args) if isinstance(a, (Tracer, np.ndarray)))
    needs = tuple(i in inputs and not isinstance(args[i], np.ndarray)
                  and (args[i].requires_grad if isinstance(args[i], Tensor) else True) for i in range(len(args)))
    tensors = tuple(i in inputs for i in range(len(args)))
    traced = {}  # of forward's latest trace: its ctx, which outputs are arrays, which it marked, the other values

    def forward(*values):
        ctx = FunctionCtx(needs, tensors)
        result = _in_trace(cls, "forward", lambda: _forward(cls, ctx, values))
        outputs = result if isinstance(result, tuple) else (result,)
        _refuse_marked_elsewhere(cls, ctx._non_differentiable, outputs)
        arrays = [not isinstance(result, tuple) or isinstance(r, (Tracer, np.ndarray)) for r in outputs]
        ctx._output_types = tuple((tuple(np.shape(r)), r.dtype) if array else None for r, array in zip(outputs, arrays))
        traced.update(ctx=ctx, arrays=arrays, marked=[any(r is m for m in ctx._non_differentiable) for r in outputs],
                      others=[r for r, array in zip(outputs, arrays) if not array])
        if all(arrays):
            return result, tuple(ctx._saved)
        return tuple(r for r, array in zip(outputs, arrays) if array), tuple(ctx._saved)

    def backward(*rest):
        residuals, grad = rest[-2:]
        ctx = traced["ctx"]
        for name, value in vars(ctx).items():
            if isinstance(value, Tracer) and not name.startswith("_"):
                raise TracerError(f"{cls.__name__}.forward stored a traced value on ctx.{name}, which backward "
                                  "cannot read inside a trace; save it with ctx.save_for_backward")
        ctx._saved, ctx._saved_versions = tuple(residuals), ()
        given = iter(grad if isinstance(grad, tuple) else (grad,))  # (none for the values that are not arrays)
        grad_outputs = [next(given) if array else None for array in traced["arrays"]]
        grads = dict(_in_trace(cls, "backward", lambda: ctx.call_backward(cls, grad_outputs)))
        return tuple(grads[i] for i in inputs)

    def function(*values):
        return forward(*values)[0]

    function.__name__ = forward.__name__ = backward.__name__ = cls.__name__
    from ..custom_derivatives import custom_vjp  # (here: eager code does not load the transforms)
    rule = custom_vjp(function, nondiff_argnums=tuple(i for i in range(len(args)) if i not in inputs))
    rule.defvjp(forward, backward)
    result = rule(*args)
    computed, others = iter(result if isinstance(result, tuple) else (result,)), iter(traced["others"])
    outputs = tuple(next(computed) if array else next(others) for array in traced["arrays"])
    outputs = tuple(stop_gradient(r) if marked else r for r, marked in zip(outputs, traced["marked"]))
    return outputs if isinstance(result, tuple) else outputs[0]


def _in_trace(cls, which, call):
    """call(), a method of the Function traced: a tensor method that traced values lack is a clear error."""
    try:
        return call()
    except AttributeError as err:
        if not str(err).startswith("'Tracer' object has no attribute"):
            raise
        raise UnsupportedOpError(f"{cls.__name__}.{which} inside a trace (sg.compile, sg.grad...): {err}; traced "
                                 "values have NumPy's methods, not a tensor's: write it with sg.* functions and "
                                 "operators, or call the Function on tensors outside the trace") from err


def _refuse_marked_elsewhere(cls, marked, results):
    """mark_non_differentiable takes outputs: an input or another tensor marked is a mistake that would have no
    effect (PyTorch ignores it silently)."""
    for t in marked:
        if not any(t is r for r in results):
            raise UnsupportedOpError(f"{cls.__name__}.forward: ctx.mark_non_differentiable was given a tensor that "
                                     "forward does not return (an input?); mark the outputs that get no gradient")


class _DelayedError(Function):
    """The grad_fn of what a once_differentiable backward returns under create_graph: differentiating it
    again is PyTorch's error. Its inputs are the results, then the gradients they were computed from, so
    a derivative with respect to those (the double-backward trick of functional.jvp) raises too, where
    PyTorch's, whose inputs are detached copies of the results, returns zeros."""

    @staticmethod
    def forward(ctx, count, *tensors):
        return tuple(t.detach() for t in tensors[:count])

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError("trying to differentiate twice a function that was marked with @once_differentiable")


def once_differentiable(backward):
    """Decorate a Function's backward that cannot itself be differentiated: it runs without recording, and
    when its gradients require grad (create_graph) its results are tensors whose backward raises PyTorch's
    error."""

    @functools.wraps(backward)
    def wrapper(ctx, *grad_outputs):
        with no_grad():
            outputs = backward(ctx, *grad_outputs)
        connected = [g for g in grad_outputs if isinstance(g, Tensor) and g.requires_grad]
        if not is_grad_enabled() or not connected:
            return outputs
        packed = outputs if isinstance(outputs, tuple) else (outputs,)
        positions = [i for i, g in enumerate(packed) if isinstance(g, Tensor)]
        delayed = _DelayedError.apply(len(positions), *[packed[i] for i in positions], *connected)
        replaced = list(packed)
        for i, g in zip(positions, delayed):
            replaced[i] = g
        return tuple(replaced) if isinstance(outputs, tuple) else replaced[0]

    return wrapper
