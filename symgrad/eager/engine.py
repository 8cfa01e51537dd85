"""backward() and autograd.grad(): walk the recorded graph from the outputs to the leaves.

The records reachable from the outputs that lead to a wanted input are processed in
reverse creation order, in runs. A run is a stretch of ordinary records between two
points where Python must see a gradient: a record with hooks or retain_grad, an input
of autograd.grad, or a custom autograd.Function (whose backward is Python). Each run is
one adjoint graph derived by the compiler's reverse pass and cached by structure
(symgrad.eager.adjoint); with no hooks or custom functions the whole backward is one run.
"""
from __future__ import annotations

import operator
import warnings

import numpy as np

from ..ops.shape import unbroadcast
from . import saved_hooks
from .adjoint import reads_output_of, run_stage
from .graph import Record
from .mode import set_grad_enabled
from .tape import force_pending, start_over
from .whole_backward import try_backward

_ERROR_NO_GRAD = "element {} of tensors does not require grad and does not have a grad_fn"


class Engine:
    """backward() and autograd.grad() over the graph that tensors of `tensor_type` record.

    The engine works on records and arrays and sits below the tensor module: it recognizes and
    creates tensors only through the class it is given. symgrad.eager.tensor makes the one engine,
    `Engine(Tensor)`, that Tensor.backward and sg.autograd call.
    """

    def __init__(self, tensor_type):
        self.tensor_type = tensor_type

    def __repr__(self):
        return f"Engine({self.tensor_type.__qualname__})"

    def backward(self, tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
        """Accumulate the gradients of `tensors` into the .grad of the leaves (or of `inputs` only)."""
        tensors = _as_list(tensors)
        grad_tensors = _as_list(grad_tensors) if grad_tensors is not None else [None] * len(tensors)
        seeds = self._seeds(tensors, grad_tensors, create_graph)
        self._backward(tensors, seeds, create_graph if retain_graph is None else retain_graph, create_graph, inputs)

    def backward_of_loss(self, loss, retain_graph=None):
        """`backward(loss, retain_graph=retain_graph)` (Tensor.backward() without a gradient, create_graph or inputs,
        the common case), with the seed of a 0-d tensor that requires grad made without the lists and checks."""
        if isinstance(loss, self.tensor_type) and loss._requires_grad and loss.ndim == 0:
            self._backward((loss,), (_ONES[loss.dtype].copy(),), False if retain_graph is None else retain_graph)
        else:
            self.backward(loss, None, retain_graph)

    def _backward(self, tensors, seeds, retain_graph, create_graph=False, inputs=None):
        """`backward` once the seeds are made: the captured step's call if it applies, else the general path."""
        capture = None
        try:
            if inputs is None and not create_graph and len(tensors) == 1:
                ran, capture = try_backward(self, tensors[0], seeds[0], retain_graph)
                if ran:
                    return
            force_pending()
            targets = None if inputs is None else _as_list(inputs)
            for t in targets or ():  # a non-leaf input's .grad is filled, as PyTorch's backward(inputs=) retains it
                if t._node is not None:
                    t._node.retain(t)
            _Backward(self, tensors, seeds, targets, create_graph).execute(accumulate=True, retain_graph=retain_graph)
        finally:
            start_over(capture)  # the next step records a tape of its own, deferred while it repeats the capture

    def grad(self, outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
             allow_unused=False):
        """The gradients of `outputs` with respect to `inputs`, returned (not accumulated), as torch.autograd.grad;
        `only_inputs`, deprecated and ignored as PyTorch's, is still passed by older programs (WGAN-GP's)."""
        if not only_inputs:
            warnings.warn("only_inputs argument is deprecated and is ignored now (defaults to True). To accumulate "
                          "gradient for other parts of the graph, please use torch.autograd.backward.",
                          FutureWarning, stacklevel=2)
        outputs, inputs = _as_list(outputs), _as_list(inputs)
        grad_outputs = _as_list(grad_outputs) if grad_outputs is not None else [None] * len(outputs)
        for i, t in enumerate(inputs):
            if not isinstance(t, self.tensor_type) or not t.requires_grad:
                raise RuntimeError(f"One of the differentiated Tensors (input {i}) does not require grad")
        seeds = self._seeds(outputs, grad_outputs, create_graph)
        try:
            force_pending()
            found = _Backward(self, outputs, seeds, inputs, create_graph).execute(
                accumulate=False, retain_graph=create_graph if retain_graph is None else retain_graph)
        finally:
            start_over()
        results = []
        for i, t in enumerate(inputs):
            ct = found.get(id(t._parent()))
            if ct is None and not allow_unused:
                raise RuntimeError(f"One of the differentiated Tensors (input {i}) appears to not have been used in "
                                   "the graph. Set allow_unused=True if this is the desired behavior.")
            results.append(None if ct is None else self.as_tensor(ct, copy=not create_graph))
        return tuple(results)

    def accumulate(self, tensor, ct, create_graph=False, owned=False):
        """Add the cotangent `ct` into tensor.grad (a new .grad the first time: `ct` itself if `owned`, an
        array nothing else holds)."""
        if create_graph:  # a copy, as PyTorch's: `ct` may be the caller's gradient= tensor or one the graph saves
            ct = self.as_tensor(ct)
            with set_grad_enabled(True):
                tensor._grad = ct.clone() if tensor._grad is None else tensor._grad + ct
            if tensor._grad._node is not None and tensor._grad._node.label == "CloneBackward0":
                tensor._grad._node.label = "torch::autograd::CopyBackwards"  # (PyTorch's name of that first copy)
        elif tensor._grad is None:
            tensor._grad = self.tensor_type._wrap(ct) if owned else self.as_tensor(ct, copy=True)
        else:  # in place, as PyTorch: whoever holds the .grad (or a detach() of it) sees the sum
            grad = tensor._grad
            ct = ct if ct.__class__ is np.ndarray else getattr(ct, "_data", ct)
            update_in_place(np.add, grad._writable_data(), ct)
            grad._version.value += 1

    def as_tensor(self, ct, copy=False):
        """A cotangent (an array, or a tensor under create_graph) as a tensor."""
        if isinstance(ct, self.tensor_type):
            return ct
        return self.tensor_type._wrap(np.array(ct, copy=True) if copy else np.asarray(ct))

    def _seeds(self, tensors, grads, create_graph):
        """The cotangent fed into each output: ones for a scalar, else the given gradient (checked)."""
        tensor_type = self.tensor_type
        seeds = []
        for i, (t, g) in enumerate(zip(tensors, grads)):
            if not isinstance(t, tensor_type) or not t.requires_grad:
                raise RuntimeError(_ERROR_NO_GRAD.format(i))
            if g is None and not create_graph and t.ndim == 0:  # a loss: no check to make
                seeds.append(_ONES[t.dtype].copy())
                continue
            if g is None:
                if t.numel() != 1:
                    raise RuntimeError(f"grad can be implicitly created only for scalar outputs (output {i} has "
                                       f"shape {tuple(t.shape)}); pass gradient= (a tensor of that shape) to "
                                       "backward()")
                g = np.ones(t.shape, t.dtype)
            if not create_graph or not isinstance(g, tensor_type):
                g = np.asarray(g._data if isinstance(g, tensor_type) else g)
                if g.shape != t.shape:
                    raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {tuple(g.shape)} and "
                                       f"output[{i}] has a shape of {tuple(t.shape)}.")
                g = g.astype(t.dtype, copy=False)
                seeds.append(tensor_type._wrap(g) if create_graph else g)
            else:
                if g.shape != t.shape:
                    raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {tuple(g.shape)} and "
                                       f"output[{i}] has a shape of {tuple(t.shape)}.")
                seeds.append(g.to(t.dtype))
        return seeds


def update_in_place(ufunc, data: np.ndarray, value) -> None:
    """data = ufunc(data, value) written into data's memory (same_kind casting), for the ufuncs of gradient
    accumulation and parameter updates. A one-element float32/float64 array and float array take Python's float
    arithmetic, rounded once into data: NumPy's in-place call on one element takes a slow path (0.8 us, 0.3 this
    way), and a sum or difference of float32 values computed in float64 and rounded to float32 is their float32 sum,
    bit for bit (53 >= 2 * 24 + 2 bits), as NumPy's (which also computes a float32/float64 mix in float64)."""
    if data.size == 1 and value.__class__ is np.ndarray and value.size == 1 and value.ndim <= data.ndim:
        scalar = _SCALAR_OPS.get(ufunc)
        if scalar is not None and data.dtype in _FLOATS and value.dtype in _FLOATS:
            data.fill(scalar(data.item(), value.item()))
            return
    ufunc(data, value, data)  # (out given by position: its keyword costs 0.05 us a call)


_SCALAR_OPS = {np.add: operator.add, np.subtract: operator.sub}
_FLOATS = frozenset([np.dtype(np.float32), np.dtype(np.float64)])  # (native byte order)


class _Ones(dict):
    """dtype -> a 0-d 1 of it, copied for each seed (a copy costs a tenth of np.ones)."""

    def __missing__(self, dtype):
        one = self[dtype] = np.ones((), dtype)
        return one


_ONES = _Ones()


def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _copied_parents(record):
    """Parents whose output `record` did not read as recorded (an in-place op read a snapshot):
    they must be in a later run, which receives the gradient once this one has run."""
    return {id(p) for slot, p in enumerate(record.parents)
            if isinstance(p, Record) and not reads_output_of(record, slot, p)}


class _Backward:
    """One backward call: the pending cotangents and the order in which records are processed."""

    def __init__(self, engine, roots, seeds, targets, create_graph):
        self.engine = engine
        self.create_graph = create_graph
        self.pending = {}
        self.nodes = {}
        for root, seed in zip(roots, seeds):
            self.deliver(root._parent(), seed)
        records = {}
        stack = [root._node for root in roots if root._node is not None]
        while stack:
            record = stack.pop()
            if id(record) not in records:
                records[id(record)] = record
                stack.extend(p for p in record.parents if isinstance(p, Record))
        if targets is None:  # every leaf that requires grad
            self.targets = {id(p) for r in records.values() for p in r.parents if p is not None
                            and not isinstance(p, Record)}
            self.targets |= {id(root) for root in roots if root._node is None}
        else:
            self.targets = {id(t._parent()) for t in targets}
        self.useful = set()
        for record in sorted(records.values(), key=lambda r: r.seq):
            if any(p is not None and (id(p) in self.targets or id(p) in self.useful) for p in record.parents):
                self.useful.add(id(record))
        self.order = sorted((r for r in records.values() if id(r) in self.useful), key=lambda r: -r.seq)

    def deliver(self, node, ct):
        key = id(node)
        if isinstance(node, Record) and not isinstance(ct, tuple) and np.shape(ct) != node.valued().out.shape:
            raise RuntimeError(f"the gradient of the result of {node.name()} has shape {list(np.shape(ct))}, but "
                               f"the op made {list(node.valued().out.shape)}: its .data was set to another shape since "
                               "(PyTorch refuses this backward too); set .data on a leaf, or keep the shape")
        self.nodes[key] = node
        if key not in self.pending:
            self.pending[key] = ct
        elif isinstance(ct, tuple):  # a value of several results (a factorization's): one cotangent each
            self.pending[key] = tuple(a + b for a, b in zip(self.pending[key], ct))
        else:
            self.pending[key] = self.pending[key] + ct

    def wanted(self, parent) -> bool:
        return id(parent) in self.useful or id(parent) in self.targets

    def _stops_run(self, record) -> bool:
        return (record.function is not None or bool(record.hooks) or record.retained is not None
                or id(record) in self.targets)

    def execute(self, accumulate: bool, retain_graph: bool) -> dict:
        """Propagate to the targets; accumulate into .grad or return {id(target): cotangent}."""
        if saved_hooks.PACKED[0]:
            saved_hooks.unpack(self.order, retain_graph)
        found = {}
        processed = []
        position = 0
        while position < len(self.order):
            record = self.order[position]
            if id(record) in self.pending and self._stops_run(record):
                self._at_gradient(record, found)
            if record.function is not None:
                self._run_function(record, found, accumulate)
                processed.append(record)
                position += 1
                continue
            end = position + 1
            copied = _copied_parents(record)  # parents read as a copy or another version
            while end < len(self.order):
                following = self.order[end]
                if self._stops_run(following) or id(following) in copied:
                    break
                copied |= _copied_parents(following)
                end += 1
            run = self.order[position:end][::-1]
            for parent, ct in run_stage(run, self.pending, self.wanted, self.create_graph, self.engine.tensor_type):
                self.deliver(parent, ct)
            processed.extend(run)
            position = end
        for key in list(self.pending):
            node = self.nodes[key]
            if key not in self.targets:
                continue
            if isinstance(node, Record):  # a non-leaf input past every use: its hooks and retain_grad run now
                if key not in found:
                    self._at_gradient(node, found)
                continue
            ct = self._apply_hooks(node._hooks or (), self.pending.pop(key))
            if accumulate:
                self._accumulate(node, ct)
            else:
                found[key] = ct
        if not retain_graph:
            for record in processed:
                record.release()
        return found

    def _at_gradient(self, record, found):
        """A record whose output gradient is now complete: report it when it is a target, run its hooks, retain it
        (autograd.grad's pass too, as PyTorch's). PyTorch reports the gradient before the hooks when the pass goes on
        through the record (it is in `order`: its own node runs them later), after them when it stops there."""
        key = id(record)
        ct = self.pending[key]
        if key in self.targets and key in self.useful:
            found[key] = ct
        ct = self.pending[key] = self._apply_hooks(record.hooks, ct)
        tensor = record.retained_tensor()
        if tensor is not None:
            self._retain(tensor, ct)
        if key in self.targets and key not in self.useful:
            found[key] = ct

    def _apply_hooks(self, hooks, ct):
        for hook in list(hooks):
            result = hook(self.engine.as_tensor(ct))
            if result is None:
                continue
            result = self.engine.as_tensor(result)
            name = getattr(hook, "__name__", hook)
            if result.shape != tuple(np.shape(ct)):
                raise RuntimeError(f"hook '{name}' has changed the size of value (from {list(np.shape(ct))} to "
                                   f"{list(result.shape)})")
            if result.dtype != ct.dtype:
                raise RuntimeError(f"hook '{name}' has changed the type of value (was {ct.dtype} got {result.dtype})")
            ct = result if self.create_graph else result._data
        return ct

    def _accumulate(self, tensor, ct):
        self.engine.accumulate(tensor, ct, self.create_graph)

    def _retain(self, tensor, ct):
        """A retain_grad() tensor's .grad, as PyTorch's retains_grad hook makes it: a copy of the first gradient, then
        a new sum each pass, never a leaf's in-place add (whoever holds the earlier .grad keeps its value, and a
        create_graph gradient's tensor, which the graph may save, is not written later)."""
        if self.create_graph:
            ct = self.engine.as_tensor(ct)
            with set_grad_enabled(True):
                tensor._grad = ct.clone() if tensor._grad is None else tensor._grad + ct
            if tensor._grad._node is not None and tensor._grad._node.label == "CloneBackward0":
                tensor._grad._node.label = "torch::autograd::CopyBackwards"  # (PyTorch's name of that first copy)
        else:
            ct = getattr(ct, "_data", ct)
            tensor._grad = self.engine.as_tensor(np.array(ct, copy=True) if tensor._grad is None
                                                 else tensor._grad._data + ct)

    def _run_function(self, record, found, accumulate):
        """A custom autograd.Function: call its Python backward once, with the gradients of all its outputs.
        Its outputs' records were made together, so every use of them comes later: the first of them reached
        has every output's gradient complete (the others find theirs taken)."""
        siblings = record.ctx.output_records()
        for other in siblings:  # their hooks and retain_grad see their gradient before the backward runs
            if other is not None and other is not record and id(other) in self.pending and self._stops_run(other):
                self._at_gradient(other, found)
        cts = [None if other is None else self.pending.pop(id(other), None) for other in siblings]
        if all(ct is None for ct in cts):
            return
        with set_grad_enabled(self.create_graph):
            grads = record.ctx.call_backward(record.function, [None if ct is None else self.engine.as_tensor(ct)
                                                               for ct in cts])
        name = f"{record.function.__name__}Backward"
        for parent, (position, g), (shape, dtype) in zip(record.parents, grads, record.in_types):
            if parent is None or g is None or not self.wanted(parent):
                continue
            g = _summed_to(self.engine.as_tensor(g), shape, lambda got: (
                f"Function {name} returned an invalid gradient at index {position} - got {got} but expected "
                f"shape compatible with {list(shape)}"))
            self.deliver(parent, g.to(dtype) if self.create_graph else np.asarray(g._data, dtype=dtype))


def _summed_to(grad, shape, message):
    """grad summed down to `shape` when `shape` broadcasts to its shape (PyTorch reduces such a gradient);
    otherwise a RuntimeError with message(list of grad's shape)."""
    if grad.shape == tuple(shape):
        return grad
    lead = grad.ndim - len(shape)
    if lead < 0 or any(d != 1 and d != grad.shape[lead + i] for i, d in enumerate(shape)):
        raise RuntimeError(message(list(grad.shape)))
    return unbroadcast(grad, shape)
