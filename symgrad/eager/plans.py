"""Namespace calls on eager tensors without redoing their Python front end on every call.

What an sg.* call does with its arguments (NumPy promotion, broadcasting, axis handling,
the SymPy expression of an elementwise op) depends only on the tensors' shapes and dtypes
and on the other arguments' values. For tensors it is traced once per such signature into
a few primitive applications (a plan) and replayed by the eager recorder, which records
the same ops as the call would, several times faster for small tensors.
"""
from __future__ import annotations

import functools

import numpy as np

from ..caches import Recent
from ..core import Builder, Tracer, building, current_builder, tracing_anywhere
from ..ops.elementwise import ElementwiseOp
from ..ops.reduce import first_max_p, reduce_max_p, reduce_min_p, reduce_prod_p
from ..ops.shape import reduce_sum_p
from .graph import DerivedCounter, grad_fn_name
from .tape import Kind
from .mode import state as grad_mode

# function -> its result's grad_fn name from its array operands' ndims, where PyTorch names it by them (registered
# by the modules defining the functions' tensor meaning: matmul's in symgrad.eager.tensor)
LABELS = {}
# id(function) -> guard(evaluate, signature): the evaluator of the step making its result, wrapped with an eager check
# NumPy lacks (an integer quotient by zero: symgrad.eager.integer_arithmetic), or as it is; once per plan
GUARDS = {}
# key -> Plan; found by a plain get on every recorded call (not made the newest: that would cost a call per op)
_plans = Recent(4096)


class Plan:
    """The primitive applications one call makes: (prim, operand indices, evaluate, frozen attrs, dtype, kind), kind
    the step's structure on the tape (tape.Kind: its types are the trace's, as the plan is keyed by its operands')."""

    def __init__(self, op, signature, keywords=()):
        self.op = op
        # PyTorch computes the call as one op whose backward reads its inputs as they are then (an activation, a loss):
        # its intermediate values are computed again from arrays NumPy wrote since (`_derive`)
        self.one_op = getattr(op, "one_op_at_backward", False)
        builder = Builder()
        with building(builder):
            args = [builder.new_input(shape, dtype) if is_array else value
                    for is_array, shape, dtype, value in signature]
            result = op(*args, **dict(keywords))
            if not isinstance(result, Tracer) or result.builder is not builder:
                raise TypeError("not one traced array")
            graph = builder.finish([result])
        if len(graph.inputs) != sum(entry[0] for entry in signature):
            raise TypeError("captured a value besides the arguments")
        index = {id(v): i for i, v in enumerate(graph.inputs)}
        # an elementwise op's records are named after it (PyTorch's name), not after the primitive ew; a function's
        # by its namer (LABELS), once per plan: no cost per call
        namer = LABELS.get(op) if not isinstance(op, ElementwiseOp) else None
        self.label = grad_fn_name(op) if namer is None and isinstance(op, ElementwiseOp) else \
            None if namer is None else namer(*(len(entry[1]) for entry in signature if entry[0]))
        self.steps = []
        guard = GUARDS.get(id(op))
        for node in graph.nodes:
            kind = Kind(node.prim, node.attrs, tuple((v.shape, v.dtype) for v in node.inputs),
                        (node.out.shape, node.out.dtype), self.label if node.out is graph.outputs[0] else None)
            evaluate = evaluator(node.prim, node.params)
            if guard is not None and node.out is graph.outputs[0]:
                evaluate = guard(evaluate, signature)
            self.steps.append((node.prim, tuple(index[id(v)] for v in node.inputs), evaluate, node.attrs,
                               node.out.dtype, kind))
            index[id(node.out)] = len(index)
        self.output = index[id(graph.outputs[0])]
        self.arity = len(graph.inputs)
        self.folded = None  # (steps, output, constants): `fold`, made when a deferred step first needs it
        self.splits = {}  # which operands require grad -> Split or None: `split`, made when a deferred step needs it
        # one primitive applied to the operands as given (a * b, x @ w, ...): run without the loop
        operands = tuple(range(len(graph.inputs)))
        self.single = self.steps[0] if len(self.steps) == 1 and self.steps[0][1] == operands \
            and self.output == len(operands) else None

    def run(self, operands, recorder):
        """Apply the steps to the tensor operands through `recorder.evaluate` (the eager recorder), or defer
        them all at once (`recorder.defer`)."""
        if self.single is not None:
            return recorder.evaluate(self.single, operands)
        deferred = recorder.defer(self, operands)
        if deferred is not None:  # all its primitives repeat the captured step: recorded at once, not computed
            return deferred
        values = list(operands)
        copies = _watched(operands)
        for step in self.steps:
            prim, inputs, evaluate = step[:3]
            args = [values[i] for i in inputs]
            value = recorder.evaluate(step, args)
            if copies is not None and (value._node is None or self.one_op) and len(values) != self.output:
                _derive(value, prim, args, evaluate, copies)
            values.append(value)
        result = values[self.output]
        for value in values[len(operands):]:  # the values no tensor will hold, on the tape (Tape.intermediates)
            record = getattr(value, "_node", None)  # (none for a value that was not recorded, or a traced one)
            if record is not None and value is not result:
                record.tape.intermediates.add(record.position)
        return result

    def fold(self) -> tuple:
        """(steps, output, constants): the plan with the steps that read no operand (a number a quotient keeps as an
        operand, as `mean`'s count) computed once, their arrays (read-only) `constants`, operands after the call's;
        the other steps renumbered. Eagerly such a step runs unrecorded and its value is a constant operand of the
        next (symgrad.eager.tensor._plan_match matches the recorded steps)."""
        if self.folded is None:
            count, values, renumbered, steps, constants = self.arity, {}, {}, [], []
            for k, (prim, inputs, evaluate, attrs, dtype, _) in enumerate(self.steps):
                if all(index in values for index in inputs):  # (none an operand or a recorded step's value)
                    value = np.array(evaluate(*[values[index] for index in inputs]), dtype=dtype)  # (its own)
                    value.flags.writeable = False
                    values[count + k] = value
                    constants.append(value)
            for index in values:
                renumbered[index] = count + len(renumbered)
            for k, (prim, inputs, evaluate, attrs, dtype, kind) in enumerate(self.steps):
                if count + k not in values:
                    renumbered[count + k] = count + len(constants) + len(steps)
                    steps.append((prim, tuple(renumbered.get(i, i) for i in inputs), evaluate, attrs, dtype, kind))
            self.folded = (steps, renumbered.get(self.output, self.output), constants)
        return self.folded


    def split(self, grads: tuple) -> "Split | None":
        """The plan cut in two for operands of which `grads` (a flag per operand) require grad: the steps that read
        no operand requiring grad (a norm's statistics of an input batch: eagerly they run unrecorded) and the others,
        a plan of their own; None when all steps are of one kind (Split)."""
        split = self.splits.get(grads, _MISSING)
        if split is _MISSING:
            split = self.splits[grads] = Split.of(self, grads)
        return split


class Split:
    """A plan's steps on operands that require no grad (`prefix`, computed at once by `values`, as eagerly) and
    the others (`rest`, with the `fold` of a plan whose operands are the `sources`: the plan's operands and prefix
    values they read), so a deferred step whose capture reads the prefix's values as constants matches `rest`
    (symgrad.eager.tensor._defer_split). Indices are the folded plan's: operands, its constants, then its steps."""

    def __init__(self, grads, prefix, sources, rest, constants, size):
        self.grads, self.prefix, self.sources, self.rest = grads, prefix, sources, rest
        self.constants, self.size = constants, size

    @classmethod
    def of(cls, plan, grads) -> "Split | None":
        steps, output, constants = plan.fold()
        count, total = plan.arity, plan.arity + len(constants)
        fixed = {index for index in range(total) if index >= count or not grads[index]}
        prefix, rest = [], []
        for k, step in enumerate(steps):
            if all(index in fixed for index in step[1]):
                fixed.add(total + k)
                prefix.append((total + k, *step))
            else:
                rest.append((total + k, *step))
        if not prefix or not rest or output in fixed or any(step[5].names is not None for step in prefix):
            return None
        sources = []
        for step in rest:
            for index in step[2]:
                if (index < count or index >= total and index in fixed) and index not in sources:
                    sources.append(index)
        renumbered = {index: k for k, index in enumerate(sources)}
        renumbered.update((count + k, len(sources) + k) for k in range(len(constants)))
        renumbered.update((step[0], len(sources) + len(constants) + k) for k, step in enumerate(rest))
        rest_steps = [(prim, tuple(renumbered[index] for index in inputs), evaluate, attrs, dtype, kind)
                      for _, prim, inputs, evaluate, attrs, dtype, kind in rest]
        return cls(grads, prefix, tuple(sources), _Folded((rest_steps, renumbered[output], constants)), constants,
                   total + len(steps))

    def values(self, operands) -> "list | None":
        """Per source, the operand it is or (array, counter or None) of the prefix value it is, computed as
        `Plan.run` computes it eagerly (an array of its own, whose counter is a DerivedCounter when it was computed
        from arrays NumPy may write, `_derive`'s); None when a value is a view of an operand (then op by op)."""
        values = [None] * self.size
        origins = {}  # index -> the exposed operands it is computed again from at backward (`_derive`'s)
        for index, t in enumerate(operands):
            if t._requires_grad:  # (no prefix step reads it: a deferred operand is not computed for it)
                continue
            values[index] = t._data
            if t._version.exposed:
                if t._version.__class__ is DerivedCounter:
                    return None
                origins[index] = (index,)
        for k, constant in enumerate(self.constants):
            values[len(operands) + k] = constant
        for index, prim, inputs, evaluate, _, dtype, _ in self.prefix:
            value = evaluate(*[values[i] for i in inputs])
            if value.__class__ is not np.ndarray:
                value = np.asarray(value)
            if value.dtype != dtype:
                value = value.astype(dtype)
            values[index] = value
            if origins and prim not in SAVED:
                reached = tuple(sorted({o for i in inputs for o in origins.get(i, ())}))
                if reached:
                    origins[index] = reached
        out, copies = [], {}
        for index in self.sources:
            if index < len(operands):
                out.append(operands[index])
                continue
            value = values[index]
            if value.base is not None and any(np.may_share_memory(value, t._data) for t in operands
                                              if not t._requires_grad):
                return None  # (a view of an operand: eagerly it shares its version counter)
            counter = None
            if index in origins:
                pairs = [copies.get(o) or copies.setdefault(o, (values[o].copy(), values[o])) for o in origins[index]]
                reads = [(operands[o]._version, operands[o]._version.value) for o in origins[index]]
                counter = DerivedCounter(pairs, functools.partial(self._recomputed, operands, values, origins, index),
                                         reads)
            out.append((value, counter))
        return out

    def _recomputed(self, operands, forward, origins, wanted) -> np.ndarray:
        """The prefix value `wanted` from the operands' arrays as they are now (a DerivedCounter's `recompute`):
        the steps computed from them again, the others' values (statistics) as the forward computed them."""
        values = list(forward)
        for index, t in enumerate(operands):
            values[index] = t._data
        for index, _, inputs, evaluate, _, dtype, _ in self.prefix:
            if index in origins:
                value = np.asarray(evaluate(*[values[i] for i in inputs]))
                values[index] = value if value.dtype == dtype else value.astype(dtype)
            if index == wanted:
                return values[index]
        raise AssertionError("not a prefix value")


class _Folded:
    """A plan given by its folded form (`Plan.fold`'s triple): the steps of a Split that read operands requiring
    grad, which a deferred step matches as a plan (symgrad.eager.tensor._plan_match)."""

    def __init__(self, folded):
        self.folded = folded

    def fold(self) -> tuple:
        return self.folded


# What PyTorch's one op keeps from its forward, where it reads its input again at backward: statistics (a norm's
# mean and variance, a loss's count of targets) and a pooling's choices, as reductions compute them
SAVED = frozenset({reduce_sum_p, reduce_max_p, reduce_min_p, reduce_prod_p, first_max_p})


def _watched(operands) -> "dict | None":
    """{} (the copies `_derive` keeps, by operand) when a call may record ops that read values it computes unrecorded
    from arrays NumPy may write: grad mode is on, an operand requires grad and one is such an array; else None."""
    exposed = requires_grad = False
    for t in operands:  # (a loop: a generator is a call of its own)
        exposed = exposed or t._version.exposed
        requires_grad = requires_grad or t._requires_grad
    if not (exposed and requires_grad and grad_mode.enabled) or tracing_anywhere() and current_builder() is not None:
        return None
    return {}


def _derive(value, prim, args, evaluate, copies) -> None:
    """Give `value` (a call's intermediate result, computed unrecorded) a DerivedCounter when it was computed from
    arrays NumPy may write (an operand that is one, or such a value): its recorded readers then read it as those
    arrays give it at backward, as PyTorch's one op reads its input then (a convolution's weight gradient)."""
    counter = value._version
    if counter.exposed and counter.__class__ is not DerivedCounter or value.dtype.names is not None \
            or prim in SAVED:
        return  # (a view of memory NumPy may write: read as it is; several results; a statistic)
    sources, reads = [], []
    for t in args:
        if t._version.__class__ is DerivedCounter:
            sources.extend(t._version.sources)
            reads.extend(t._version.reads)
        elif t._version.exposed:
            pair = copies.get(id(t))
            if pair is None:
                pair = copies[id(t)] = (t._data.copy(), t._data)
            sources.append(pair)
            reads.append((t._version, t._version.value))
    if sources:
        dtype = value.dtype
        value._version = DerivedCounter(sources, lambda: _recomputed(evaluate, args, dtype), reads)
        if value._node is not None:  # (a recorded intermediate value of a call PyTorch computes as one op)
            value._node.out_version = (value._version, 0)


def _recomputed(evaluate, args, dtype) -> np.ndarray:
    """`evaluate` of the operands' arrays as they are now (a DerivedCounter's operand's computed again)."""
    arrays = [t._version.current(t._data) if t._version.__class__ is DerivedCounter else t._data for t in args]
    result = np.asarray(evaluate(*arrays))
    return result if result.dtype == dtype else result.astype(dtype)


def evaluator(prim, attrs: dict):
    """prim's NumPy implementation with its attributes bound: a function of the operand arrays only.
    A primitive may resolve its attributes once (`evaluator`, e.g. the NumPy function of an ew expression)."""
    specialized = getattr(prim, "evaluator", None)
    if specialized is not None:
        return specialized(attrs)
    return functools.partial(prim.impl, **attrs) if attrs else prim.impl


def plan_for(op, signature) -> Plan:
    """The cached plan of op for a signature: per argument (is_array, shape, dtype, scalar value).
    Keyed by the op's identity (hashing an elementwise op hashes all its fields), checked on a hit."""
    key = (id(op), signature)
    plan = _plans.get(key)
    if plan is None or plan.op is not op:
        plan = _plans.keep(key, Plan(op, signature))
    return plan


def tensor_plan_for(op, tensors, deferring=True) -> Plan:
    """plan_for(op, the signature of these tensor operands), found without building the signature, by a key of their
    shapes and dtypes (`_types_key`)."""
    if deferring or len(tensors) != 2:
        key = _types_key(id(op), tensors, deferring)
    else:  # (_types_key's common case, `a * b` with nothing deferred, without its call)
        first, second = tensors[0]._data, tensors[1]._data
        key = id(op), first.shape, first.dtype, second.shape, second.dtype
    plan = _plans.get(key)
    if plan is None or plan.op is not op:
        plan = _plans.keep(key, plan_for(op, tuple((True, t.shape, t.dtype, None) for t in tensors)))
    return plan


def _types_key(head, tensors, deferring) -> tuple:
    """(head, then each tensor's shape and dtype), read from their arrays, or, while a tape defers ops (`deferring`),
    by Tensor._type, which reads a deferred tensor's without computing it (with nothing deferred, reading its array
    computes nothing). One or two operands without a loop: the common calls."""
    if deferring:
        if len(tensors) == 1:
            return (head, *tensors[0]._type)
        if len(tensors) == 2:
            return (head, *tensors[0]._type, *tensors[1]._type)
        key = [head]
        for t in tensors:  # (a loop: a list comprehension is a call of its own on Python 3.11)
            key.extend(t._type)
        return tuple(key)
    if len(tensors) == 1:
        data = tensors[0]._data
        return head, data.shape, data.dtype
    if len(tensors) == 2:
        first, second = tensors[0]._data, tensors[1]._data
        return head, first.shape, first.dtype, second.shape, second.dtype
    key = [head]
    for t in tensors:
        data = t._data
        key.append(data.shape)
        key.append(data.dtype)
    return tuple(key)


def function_plan_for(fn, signature, keywords) -> "Plan | None":
    """The cached plan of a namespace function for a signature and keyword arguments (name, key token, value),
    or None when the call cannot be replayed from a trace (then it runs as usual)."""
    key = (fn, signature, keywords)
    plan = _plans.get(key, _MISSING)
    if plan is _MISSING:
        try:
            plan = Plan(fn, signature, tuple((name, value) for name, _, value in keywords))
        except Exception:  # noqa: BLE001  (the call then runs eagerly, and raises its own error)
            plan = None
        _plans.keep(key, plan)
    return plan


def tensor_function_plan_for(fn, tensors, deferring=True) -> "Plan | None":
    """function_plan_for(fn, the signature of these tensor operands, no keyword), found without building the
    signature (a product's, the common call of two tensors), by `_types_key`."""
    if deferring or len(tensors) != 2:
        key = _types_key(fn, tensors, deferring)
    else:  # (_types_key's common case, `x @ w` with nothing deferred, without its call)
        first, second = tensors[0]._data, tensors[1]._data
        key = fn, first.shape, first.dtype, second.shape, second.dtype
    plan = _plans.get(key, _MISSING)
    if plan is _MISSING:
        plan = _plans.keep(key, function_plan_for(fn, tuple((True, *t._type, None) for t in tensors), ()))
    return plan


_MISSING = object()
