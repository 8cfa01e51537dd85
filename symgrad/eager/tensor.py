"""PyTorch-style tensors: NumPy arrays that execute eagerly and record each op for backward.

A Tensor is a Tracer whose builder is the eager recorder, so every sg.* function and
operator works on tensors unchanged: `core.bind` hands the operands to
`EagerRecorder.add`, which evaluates the primitive's NumPy implementation now and, in
grad mode with an operand that requires grad, records the op as a `Record` (the
result's `grad_fn`). `backward()` turns the records into an IR graph and runs the
compiler's adjoint pass on it (symgrad.eager.engine).
"""
from __future__ import annotations

import collections
import functools
import math
import warnings
import weakref

import numpy as np

from .. import core, dtypes, ir
from ..caches import scalar_token
from .. import numpy_api as sgnp
from . import plans
from .device import CPU, check_device, device as device_type
from .engine import Engine, update_in_place
from .graph import (UNSEEN_READ, DerivedCounter, Record, RemovableHandle, Results, VersionCounter, plan_step_reads,
                    shown)
from .matmul_reads import as_torch_reads, grad_fn_label as matmul_grad_fn_label
from .mode import enable_grad, no_grad, state as _mode
from .print_options import OPTIONS
from .size import Size, size_of
from .tape import same_bits, state as _tapes
from .whole_backward import alternatives, view_value
from ..ops import elementwise as E
from ..ops.shape import reshape_p
from ..core import (Tracer, TracerError, UnsupportedOpError, bind, current_builder, note_random_draw,
                    refuse_masked, tracing_anywhere, with_user_line)
from ..guards import concrete_array
from ..numpy_api.arrays import _safe_sqrt
from ..numpy_api.torch_keywords import check_alpha, torch_axes
from ..numpy_api.updates import IndexUpdateHelper

_random = np.random.default_rng(0)


def manual_seed(seed: int) -> None:
    """Seed the generator symgrad uses for parameter initialization (nn.Linear, sg.randn)."""
    global _random
    _random = np.random.default_rng(seed)


def random_generator() -> np.random.Generator:
    """The generator sg.manual_seed seeds, for every draw (refused inside sg.compile: see refuse_draws)."""
    refuse_draws()
    return _random


def refuse_draws() -> None:
    """A random draw (sg.randn, sg.rand, randint, an nn layer's initialization...) inside sg.compile's trace is an
    error: it was drawn once, when traced, and its values baked in, so every call returned the same numbers. In
    another trace (an uncompiled transform's) it is counted, and that trace is not reused."""
    if tracing_anywhere():
        builder = current_builder()
        if builder is not None and builder.reads is not None:
            raise UnsupportedOpError(with_user_line(
                "a random draw inside sg.compile would happen once, when traced, and every call would reuse its "
                "values; draw outside the compiled function and pass the values as an argument"))
        if builder is not None:
            note_random_draw()


class EagerRecorder:
    """The builder of eager tensors: evaluates each primitive now and records it when needed.

    Its depth (-1) is below every trace, so a tensor used inside a trace is an outer value.
    """

    depth = -1
    active = True

    def lift(self, operand) -> "Tensor":
        if isinstance(operand, Tensor):
            return operand
        if isinstance(operand, Tracer):
            if operand.builder is self:  # a constant wrapped by the elementwise front end
                return operand.value
            raise TracerError("a traced value and an eager Tensor were combined; pass the tensor's "
                              ".detach().numpy() (or trace a function of plain arrays)")
        refuse_masked(operand, "an operand of a tensor operation")
        wrapped = Tensor._wrap(np.asarray(operand))
        wrapped._version.exposed = True  # the caller's array, which NumPy may still write
        return wrapped

    def add(self, prim, operands, attrs, shape, dtype) -> "Tensor":
        return self.evaluate((prim, None, plans.evaluator(prim, attrs), ir.freeze_attrs(attrs), np.dtype(dtype), None),
                             operands)

    def defer(self, plan, operands) -> "DeferredTensor | None":
        """The deferred result of a plan of several primitives while the tape repeats a captured step
        (`_defer_plan`); None when it must run op by op."""
        tape = _tapes.tape
        if tape is None or tape.capture is None or not _mode.enabled:
            return None
        out = _defer_plan(tape, plan, operands)
        if out is None and tape.capture is not None:
            out = _defer_split(tape, plan, operands)
        return out

    def evaluate(self, step, operands, tape=None) -> "Tensor":
        """A plan's `step` (prim, operand indices, NumPy function of the operand arrays, frozen attributes, dtype,
        tape.Kind or None) on `operands` now; recorded when grad mode is on and an operand requires grad. While the
        ops repeat a captured step, they are deferred instead (`_defer`). Inside a trace (a model called in a
        function given to sg.compile) the op joins the trace. `tape`: the thread's tape when the caller read it
        (a thread-local read less), else None."""
        prim, _, evaluate, frozen_attrs, dtype, kind = step
        if core._building_count and current_builder() is not None:  # (tracing_anywhere(), without a call)
            return bind(prim, operands, dict(frozen_attrs))
        records = _mode.enabled and (dtype.kind == "f" or dtype.names is not None and ir.is_differentiable(dtype))
        if records:
            for t in operands:
                if t._requires_grad:  # an op that records (an op on constants, or a comparison, runs now)
                    if tape is None:
                        tape = _tapes.tape
                    if tape is not None and tape.capture is not None and dtype.kind == "f":
                        out = _defer(tape, prim, operands, frozen_attrs, kind and kind.label)
                        if out is not None:
                            return out
                    break
            else:
                records = False
        arrays = []
        for t in operands:  # (a loop: a list comprehension is a call of its own on Python 3.11)
            arrays.append(t._data)
        result = evaluate(*arrays)
        if dtype.names is not None:  # several results (a factorization's): `result` nodes read them
            result = Results(result, dtype)
        elif result.__class__ is not np.ndarray:
            result = np.asarray(result)
        if result.dtype is not dtype and result.dtype != dtype:
            result = result.astype(dtype)
        source = None  # the operand whose array `result` views (a slice, a reshape, a transpose, the array itself),
        # whose version counter it then shares, as a PyTorch view shares its base's: an in-place change of the base
        # is then seen by a backward that saved the view (it read the changed values)
        if result.__class__ is np.ndarray:  # (a several-results operand, a tuple of arrays, is no view's base)
            if result.base is None:
                for t in operands:
                    if t._data is result:
                        source = t
                        break
            else:
                for t in operands:
                    if t._data.__class__ is np.ndarray and np.may_share_memory(result, t._data):
                        source = t
                        break
        out = _new_tensor(Tensor)  # (Tensor._wrap, without its call)
        if source is None:
            out._init(result)
        else:
            viewed = source._version
            out._init(result, viewed)
            out._base = source if source._base is None else source._base
            viewed.viewed = True
        if records:
            for operand in operands:
                node = operand._node
                if node is not None and node.viewed:  # (a leaf or a constant is no stale view)
                    _refuse_stale_view(operand)
                    tape = None  # (its rebase may record ops, and start a tape)
            out._node = Record.of_op(prim, frozen_attrs, operands, arrays, out, kind=kind, tape=tape)
            if source is not None:
                out._node.mark_view()
            out._requires_grad = True
        return out


EAGER = EagerRecorder()
_new_tensor = object.__new__  # (Tensor.__new__, read once)


def _clamped(x, min, max):
    """torch.clamp: a bound may be None; a tie gives x (clamp(-0.0, min=0) is -0.0), unlike np.clip with one bound.
    An integer or boolean x with one bound is its maximum/minimum with it: an infinite other bound made it float64."""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if (min is None or max is None) and x.dtype.kind in "biu":
        return E.minimum(x, max) if min is None else E.maximum(x, min)
    return E.clip(x, -math.inf if min is None else min, math.inf if max is None else max)


def _refuse_stale_view(t: "Tensor") -> None:
    """A view whose base was changed in place after the view was taken holds the new values, but its grad_fn is the
    old values': its history is rebased, as PyTorch does, on the base's current one (`_rebase`); a view whose base
    is not known (its memory is no longer its base's) is an error, not a wrong gradient."""
    node = t._node
    if node is not None and node.viewed and node.out_version[0] is t._version and node.out_version[1] != t._version.value \
            and not _rebase(t):
        raise RuntimeError(with_user_line(
            "a view (slice, reshape, transpose) of a tensor that was modified in place after the view was taken is "
            "used in an op that records, and its memory is no longer its base's: it holds other values than its "
            "history. Take the view again after the in-place op, or clone() it before"))


def _rebase(view: "Tensor") -> bool:
    """Record `view` anew as the elements of its base's current value it is (PyTorch's view replay after an in-place
    change of the base); False, with nothing changed, when its elements are not its base's."""
    base = view._base
    key = None if base is None else view_positions(view._data, base._data)
    if key is None:
        return False
    with enable_grad():
        replay = sgnp.reshape(sgnp.getitem(base, key), view.shape)
    record = replay._node
    if record is not None:
        record.array, record.out_version = view._data, (view._version, view._version.value)
        record.mark_view()
    view._node, view._requires_grad = record, replay._requires_grad
    return True


def as_view(out: "Tensor", source: "Tensor", view: np.ndarray) -> "Tensor":
    """`out`, computed from `source` by a gather of exactly `view`'s elements (a view of source's array, as
    np.diagonal gives), made that view: it shares source's memory and version counter, as PyTorch's view ops do (a
    deferred `out` is then an ordinary tensor, its array that view)."""
    out._data, out._version, out._base = view, source._version, source if source._base is None else source._base
    out.__class__ = Tensor
    source._version.viewed = True
    node = out._node
    if node is not None:
        node.array, node.out_version = view, (source._version, source._version.value)
        node.mark_view()
    return out


def view_positions(view: np.ndarray, base: np.ndarray) -> "tuple | None":
    """The index into `base` of the elements `view` is made of (integer arrays of view's shape, one per axis of
    base), found from their memory addresses, so any chain of slices, reshapes, transposes and selections has one;
    None when some element of view is not one of base's."""
    if view.dtype != base.dtype or not np.may_share_memory(view, base):
        return None
    itemsize = base.itemsize
    offsets = _byte_offsets(view) + (view.__array_interface__["data"][0] - base.__array_interface__["data"][0])
    if base.flags.c_contiguous:
        flat, rest = np.divmod(offsets, itemsize)
        if rest.any() or (flat.size and (flat.min() < 0 or flat.max() >= base.size)):
            return None
    else:  # a base laid out otherwise: look each address up among the base's
        known = _byte_offsets(base).reshape(-1)
        order = np.argsort(known, kind="stable")
        ordered = known[order]
        found = np.minimum(np.searchsorted(ordered, offsets), max(ordered.size - 1, 0))
        if ordered.size == 0 or (ordered[found] != offsets).any():
            return None if offsets.size else ()
        flat = order[found]
    if base.ndim == 0:
        return ()
    return np.unravel_index(flat, base.shape)


def _byte_offsets(array: np.ndarray) -> np.ndarray:
    """The byte offset of each element of `array` from its first element's (an integer array of its shape)."""
    offsets = np.zeros(array.shape, np.int64)
    for axis, (size, stride) in enumerate(zip(array.shape, array.strides)):
        offsets += (np.arange(size, dtype=np.int64) * stride).reshape((-1,) + (1,) * (array.ndim - axis - 1))
    return offsets


def _refuse_recorded_write(t: "Tensor") -> None:
    """PyTorch's errors for an in-place op that grad mode would record on a leaf that requires grad, on a view of
    one, or on a view taken under no_grad of a tensor that requires grad."""
    if t._requires_grad and t._node is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    base = t._base
    if base is not None and base._requires_grad:
        if base._node is None:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")
        if not t._requires_grad:
            raise RuntimeError(
                "A view was created in no_grad mode and is being modified inplace with grad mode enabled. Given that "
                "this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by moving both "
                "the view and the inplace either both inside the no_grad block (if you don't want the inplace to be "
                "tracked) or both outside (if you want the inplace to be tracked).")


def _hand_to_numpy(counter, array=None) -> "np.ndarray | None":
    """Note that NumPy may write the array of this version counter from now on, unseen (numpy(), __array__, .data).
    The thread's deferred ops, which read an array not yet shared as it is (no copy), are computed first, and their
    backward takes the general path, which reads what their records saved (a captured step would compute the
    forward again from the arrays as NumPy left them). Given the `array` handed out, NumPy gets it through a
    memoryview, so that the sharing ends when the last array NumPy made of it dies (`_Export`); else for good."""
    exposed = counter.exposed
    if not exposed:
        tape = _tapes.tape
        if tape is not None and tape.pending:
            tape.force()
            tape.regular = False
    if array is None or exposed is True:
        counter.exposed = True
        return array
    try:
        shared = np.asarray(memoryview(array))
    except (TypeError, ValueError, BufferError):  # a dtype the buffer protocol does not carry
        shared = None
    if shared is None or shared.dtype != array.dtype or shared.strides != array.strides or \
            shared.base.__class__ is not memoryview:  # (an empty array's strides are not kept)
        counter.exposed = True
        return array
    counter.exposed = exposed + 1  # (False + 1 is 1)
    export = _Export(shared.base, counter)  # (NumPy's own memoryview of the one given, which it keeps)
    _EXPORTS[id(export)] = export
    return shared


class _Export(weakref.ref):
    """A weak reference to the memoryview an array went to NumPy through: every array NumPy makes of it keeps it
    alive (their bases lead to it), so its death means NumPy holds that memory no more, and the count of live
    exports on the array's version counter goes down (VersionCounter.exposed)."""

    __slots__ = ("counter",)

    def __new__(cls, view, counter):
        export = super().__new__(cls, view, _export_ended)
        export.counter = counter
        return export

    def __init__(self, view, counter):
        super().__init__(view, _export_ended)


def _export_ended(export) -> None:
    _EXPORTS.pop(id(export), None)
    counter = export.counter
    if counter.exposed is not True and counter.exposed:
        counter.exposed -= 1


_EXPORTS = {}  # id -> each live `_Export` (a weak reference calls back only while it lives; it hashes as its view)


def _records_writes(t: "Tensor") -> bool:
    """Whether an in-place op on `t` is recorded (or refused): grad mode, and t or the base it views requires grad."""
    return _mode.enabled and (t._requires_grad or (t._base is not None and t._base._requires_grad))


def _overlapping(array: np.ndarray) -> bool:
    """Whether several elements of `array` are one place in memory (a broadcast, expand(), unfold()'s windows that
    overlap): the axes in order of stride each step past the span of those before, or else the addresses counted."""
    if array.size <= 1:
        return False
    span = array.itemsize
    for stride, size in sorted((abs(stride), size) for size, stride in zip(array.shape, array.strides) if size > 1):
        if stride < span:
            return np.unique(_byte_offsets(array)).size < array.size
        span += stride * (size - 1)
    return False


def _refuse_overlap(view: np.ndarray) -> None:
    """PyTorch's error for an in-place write to a view whose elements share memory (an expand())."""
    if _overlapping(view):
        raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a single "
                           "memory location. Please clone() the tensor before performing the operation.")


def _defer(tape, prim, operands, attrs, label=None) -> "DeferredTensor | None":
    """The deferred result of prim(*operands) if it is the next op of the tape's capture: the same
    primitive and attributes, each operand from the same source (an earlier deferred op at the version it
    produced, the same leaf, or a constant) and of the same type. It then cannot fail: its errors were
    raised when the step was captured. The leaf and constant arrays it reads are kept (a copy of those
    NumPy may write: the rule in symgrad.eager.tape); its record is named `label`. None, with the tape abandoned, on
    any difference from every steady capture the step may repeat (`_switched`)."""
    position = len(tape.digests)
    out = _defer_at(tape.capture.steps, tape, prim, operands, attrs, position, label)
    if out is None:
        out = _switched(tape, position, lambda steps: _defer_at(steps, tape, prim, operands, attrs, position, label))
        if out is None:
            tape.abandon()
    return out


def _defer_at(steps, tape, prim, operands, attrs, position, label) -> "DeferredTensor | None":
    """`_defer` against the captured `steps`: None, with nothing changed, when the op is not their next."""
    if position < len(steps):
        step = steps[position]
        if step[0] is prim and (step[1] is attrs or step[1] == attrs) and len(operands) == len(step[5]):
            return _defer_step(tape, step, position, operands, label)
    return None


def _switched(tape, position, attempt) -> "DeferredTensor | None":
    """The deferred result of `attempt(steps)` against another steady capture whose steps before `position` are
    the tape's (whole_backward.alternatives: a step whose structure alternates), which the tape then expects;
    None, with the tape's capture unchanged, when none takes the op."""
    capture = tape.capture
    for other in alternatives(capture, position, tape.digests[-1] if position else None):
        tape.capture = other
        out = attempt(other.steps)
        if out is not None:
            return out
    tape.capture = capture
    return None


def _defer_step(tape, step, position, operands, label=None) -> "DeferredTensor | None":
    """`_defer` once the captured step at `position` is known to apply the same primitive to as many operands:
    the operands' checks, then the record (named `label`); None if an operand comes from elsewhere (nothing
    changed), or if the step made a view and its operand is not one tensor."""
    if len(operands) == 1:  # (without the loop: most ops have one or two operands)
        read = _deferred_operand(tape, operands[0], step[5][0], step[2][0])
        if read is None:
            return None
        parents, saved, versions = (read[0],), (read[1],), (read[2],)
    elif len(operands) == 2:
        first = _deferred_operand(tape, operands[0], step[5][0], step[2][0])
        second = first and _deferred_operand(tape, operands[1], step[5][1], step[2][1])
        if second is None:
            return None
        parents, saved, versions = (first[0], second[0]), (first[1], second[1]), (first[2], second[2])
    else:
        reads = [_deferred_operand(tape, operand, source, expected)
                 for operand, source, expected in zip(operands, step[5], step[2])]
        if None in reads:
            return None
        parents, saved, versions = zip(*reads)
    if step[8]:
        source = _viewed_source(operands, step)
        if source is None:
            return None
        counter = source._version
    else:
        source, counter = None, VersionCounter()
    record = Record.deferred(step, parents, saved, versions, counter, tape, position, counter.value, label)
    for operand in step[7]:
        tape.arrays.append(saved[operand])
    tape.digests.append(step[6])
    tape.pending.append(record)
    out = _deferred_tensor(record, counter)
    if source is not None:  # its value will be a view of the source's (Capture.run, Capture.compute)
        record.mark_view()
        counter.viewed = True
        out._base = source if source._base is None else source._base
    return out


def _viewed_source(operands, step) -> "Tensor | None":
    """The operand a deferred view (a step whose value was a view) is a view of: its one operand that is not a
    constant; None when it has several."""
    sources = [operand for operand, source in zip(operands, step[5]) if source != -1]
    return sources[0] if len(sources) == 1 else None


def _defer_plan(tape, plan, operands) -> "DeferredTensor | None":
    """The deferred result of a plan of several primitives if they are the next ops of the tape's capture
    (`_defer`'s conditions, op by op): its operands are checked once each, against the sources the capture
    expects, and only its result gets a record now (the records of its intermediate results, which no tensor
    holds, are made when something walks to them: Record.make). None, with nothing changed but what `_defer`
    changes on the way, when `_defer` must judge op by op."""
    position, capture = len(tape.digests), tape.capture
    out = _defer_plan_on(capture, tape, plan, operands, position)
    if out is None:  # another capture, if the step's first primitive is not this one's (else `_defer` judges op by op)
        first = plan.fold()[0][:1]  # (the plan's first recorded step, if any)
        if first and (position >= len(capture.steps) or capture.steps[position][0] is not first[0][0]):
            out = _switched(tape, position, lambda _: _defer_plan_on(tape.capture, tape, plan, operands, position))
    return out


def _defer_plan_on(capture, tape, plan, operands, position) -> "DeferredTensor | None":
    """`_defer_plan` against `capture`."""
    match = _plan_match_at(capture, position, plan, len(operands))
    return None if match is None else _defer_matched(tape, match, position, operands, plan.label)


def _plan_match_at(capture, position, plan, count):
    """`_plan_match` against `capture`'s steps, kept on the capture per (position, plan)."""
    match = capture.plan_matches.get((position, plan), _UNMATCHED)
    if match is _UNMATCHED:
        if len(capture.plan_matches) > 4 * len(capture.steps):  # plans evicted and made again: start over
            capture.plan_matches.clear()
        match = capture.plan_matches[(position, plan)] = _plan_match(capture.steps, position, plan, count)
    return match


def _defer_split(tape, plan, operands) -> "DeferredTensor | None":
    """The deferred result of a plan some of whose operands require no grad (a LayerNorm of the input batch), when
    the capture recorded only its steps that read an operand requiring grad, those on the others having run
    unrecorded (their values constants of the step): these are computed now, with NumPy as eagerly and at once
    (Split.values), and the others deferred as a plan of their own. None, with nothing changed but what
    `_defer_matched` changes on the way, when the capture does not have them there."""
    grads = []
    for t in operands:  # (a loop: a generator is a call of its own)
        grads.append(t._requires_grad)
    split = plan.split(tuple(grads)) if True in grads and False in grads else None
    if split is None:
        return None
    position = len(tape.digests)
    match = _plan_match_at(tape.capture, position, split.rest, len(split.sources))
    if match is None:
        return None
    values = split.values(operands)
    if values is None:  # (a view: op by op, as in later steps, rather than computing its steps twice each time)
        plan.splits[split.grads] = None
        return None
    sources = []
    for value in values:
        sources.append(Tensor._wrap(*value) if value.__class__ is tuple else value)
    return _defer_matched(tape, match, position, sources, plan.label)


def _defer_matched(tape, match, position, operands, label=None) -> "DeferredTensor | None":
    """`_defer_plan` once the plan's match at `position` is known (`_plan_match`; a shortcut keeps it), its record
    named `label`."""
    steps, checks, places, digests, blank, one_op = match
    reads = list(blank)  # (None per operand, then the reads of the plan's constants)
    for index, source, expected in checks:  # in order of first use, as the ops one by one would check them
        read = reads[index] = _deferred_operand(tape, operands[index], source, expected)
        if read is None:
            return None
    if one_op:
        _note_one_op(tape, operands, reads, position, len(steps))
    step, inputs, inner_only = steps[-1]
    saved, versions = plan_step_reads(inputs, inner_only, reads)
    counter = VersionCounter()
    record = Record.deferred(step, None, saved, versions, counter, tape, position + len(steps) - 1, 0, label)
    record.unmade = (steps, reads)  # the records of the other steps: made when needed (Record.make)
    arrays = tape.arrays
    for index in places:
        arrays.append(reads[index][1])
    tape.digests.extend(digests)
    tape.pending.append(record)
    return _deferred_tensor(record, counter)


def _plan_match(steps, position, plan, count):
    """How a plan applied at `position` repeats the capture's steps, found once per (capture, position, plan):
    per primitive, (captured step, per input: an operand index, or minus how many primitives back its
    value was made, and, for a primitive that reads such values only, its record's saved arrays and
    versions), per operand, in order of first use, (index, source, expected type), the operands that are
    inputs of the captured function (Capture.places), the steps' digests, and the reads of the operands and
    the plan's constants (Plan.fold: None for an operand). None when the primitives are not recorded there as
    one run of steps whose last is the result and that reads every operand."""
    plan_steps, output, constants = plan.fold()
    total = count + len(constants)  # (the constants are operands after the call's: the steps read them so)
    if not plan_steps or output != total + len(plan_steps) - 1 or position + len(plan_steps) > len(steps):
        return None
    matched, checks, sources, places = [], [], {}, []
    for k, (prim, inputs, _, attrs, dtype, _) in enumerate(plan_steps):
        step = steps[position + k]
        if step[0] is not prim or step[1] != attrs or len(inputs) != len(step[5]) or (
                dtype.kind != "f" and (dtype.names is None or k == len(plan_steps) - 1)) or (
                step[8] and k == len(plan_steps) - 1 and any(
                    index < total or steps[position + index - total][8] for index in inputs)):
            return None  # (a view of an operand, or of a view, as the result: `_defer` computes it; a view of
            # the plan's own intermediate result, which no tensor holds, is deferred as an array of its own)
        spec = []
        for index, source, expected in zip(inputs, step[5], step[2]):
            if index >= total:  # an earlier primitive of the plan
                if source != position + index - total:
                    return None
                spec.append(index - total - k)
                continue
            if source >= position or sources.setdefault(index, (source, expected)) != (source, expected):
                return None
            if index >= count:  # a constant of the plan: recorded as a constant operand of its type
                constant = constants[index - count]
                if source != -1 or constant.shape != expected[0] or constant.dtype != expected[1]:
                    return None
            elif len(checks) < count and all(index != checked[0] for checked in checks):
                checks.append((index, source, expected))
            spec.append(index)
        inner_only = ((None,) * len(inputs), (UNSEEN_READ,) * len(inputs)) if max(spec) < 0 else None
        matched.append((step, tuple(spec), inner_only))
        places.extend(inputs[operand] for operand in step[7])
    if len(checks) != count:
        return None
    blank = (None,) * count + tuple((None, constant, UNSEEN_READ) for constant in constants)
    return (tuple(matched), tuple(checks), tuple(places),
            [step[6] for step in steps[position:position + len(plan_steps)]], blank, getattr(plan, "one_op", False))


def _note_one_op(tape, operands, reads, position, count) -> None:
    """Note a deferred call PyTorch computes as one op (Plan.one_op) that read arrays NumPy may write: the positions of
    its intermediate results and the (copy, array) pairs it read, a write to which sends the backward to the general
    path, whose Capture.compute has those results computed again from the arrays as written."""
    pairs = []
    for operand, read in zip(operands, reads):
        counter = operand._version
        if counter.__class__ is DerivedCounter:
            pairs.extend(counter.sources)
        elif counter.exposed and read[1] is not None and read[1] is not operand._data:
            pairs.append((read[1], operand._data))
    if pairs:
        tape.one_op.append((range(position, position + count - 1), pairs))


def _deferred_operand(tape, operand, source, expected) -> "tuple | None":
    """(parent, saved array or None, (counter, version)) of an operand of a deferred op that the capture
    expects from `source` with type `expected`; None if it comes from elsewhere."""
    counter = operand._version
    node = operand._node
    if source >= 0:  # an earlier deferred op, unmodified since
        if node is None or node.position != source or node.tape is not tape \
                or node.out_version[0] is not counter or counter.value != node.out_version[1]:
            return None
        if counter.exposed and not _view_unwritten(tape, operand):  # (a view of a leaf's memory NumPy may write)
            return None
        return node, None, (counter, counter.value)
    array = operand._data
    if node is not None or array.shape != expected[0] or (array.dtype is not expected[1] and array.dtype != expected[1]):
        return None
    if source == -1:
        if operand._requires_grad:
            return None
        if counter.exposed:
            if counter.__class__ is DerivedCounter:  # computed now from arrays NumPy may write: a write to them
                tape.exposed.extend(counter.sources)  # sends the backward to the general path, which reads it anew
                return None, array, (counter, counter.value)
            copy = array.copy()
            tape.exposed.append((copy, array))
            return None, copy, (counter, counter.value)
        return None, array, (counter, counter.value)
    if not operand._requires_grad or not _leaf_has_slot(tape, operand, -3 - source):
        return None
    if counter.exposed or tape.snapshots and -3 - source in tape.snapshots:  # (a snapshot: NumPy held it then)
        array = _leaf_snapshot(tape, -3 - source, array)
        if array is None:
            return None
    return operand, array, (counter, counter.value)


def _deferred_tensor(record, counter) -> "DeferredTensor":
    """The tensor of a deferred `record`, whose version `counter` it has."""
    out = DeferredTensor.__new__(DeferredTensor)
    out.value = None
    out.builder = EAGER
    out._requires_grad = True
    out._node = record
    out._version = counter
    out._grad = None
    out._hooks = None
    out._base = None
    out._value = None
    return out


_UNMATCHED = object()


def _leaf_snapshot(tape, slot, array) -> "np.ndarray | None":
    """The copy deferred ops of this step read of a leaf's array that NumPy may write: made at its first
    use, shared by the later ones (the captured step reads a leaf once); None if NumPy wrote it between
    two uses (that op then runs now, and its record reads the array as it is)."""
    first = tape.snapshots.get(slot)
    if first is None:
        first = tape.snapshots[slot] = array.copy()
        tape.exposed.append((first, array))
        return first
    return first if same_bits(first, array) else None  # (-0.0 written over 0.0 is a write)


def _view_unwritten(tape, view) -> bool:
    """Whether NumPy left the memory of a deferred view of a leaf as the step's deferred ops read it (the leaf's
    copy: `_leaf_snapshot`); if not, the op reading the view runs now, and reads it as written, as PyTorch's does."""
    leaf = view._base
    for slot, first in tape.snapshots.items():
        if tape.leaves[slot]() is leaf:
            return same_bits(first, leaf._data)
    return True


def _leaf_has_slot(tape, leaf, slot) -> bool:
    """Whether `leaf` has `slot` among the tape's leaves (given it now, if it is the next new one). A repeated step
    meets its leaves in the previous tape's order: while every slot so far holds that tape's reference at it
    (`Tape.hint`, whose leaves are distinct), a leaf that is the hint's next is new here, and takes its reference
    without the table of slots (Tape.slots) or a new weak reference."""
    leaves = tape.leaves
    if slot == len(leaves) == tape.hinted:
        hint = tape.hint
        if slot < len(hint) and hint[slot]() is leaf:
            leaves.append(hint[slot])
            tape.hinted = slot + 1
            return True
    slots = tape.slots()
    known = slots.get(id(leaf))
    if known is not None and leaves[known]() is leaf:
        return known == slot
    if slot != len(leaves):
        return False
    slots[id(leaf)] = slot
    leaves.append(weakref.ref(leaf))
    return True


class _Size(int):
    """`t.size` is NumPy's element count and, called, PyTorch's `size()` (an sg.Size) / `size(dim)`."""

    def __new__(cls, shape):
        self = super().__new__(cls, math.prod(shape))
        self.shape = size_of(shape)
        return self

    def __call__(self, dim=None):
        return self.shape if dim is None else self.shape[dim]


class ValuesIndices(collections.namedtuple("ValuesIndices", ["values", "indices"])):
    """PyTorch's pair (values, indices) of t.max(dim), t.sort(), t.topk(k), ... Not an array: NumPy would
    stack the two, so that sg.sum(sg.max(t, 1)) added the indices to the values (torch.sum of it raises)."""

    __slots__ = ()

    def __array__(self, dtype=None, copy=None):
        raise TypeError("a pair (values, indices), as sg.max(t, dim) or t.sort() give on a tensor (PyTorch's "
                        "meaning), is not an array: take .values (or write axis=dim for NumPy's max)")

    def __repr__(self):  # PyTorch's layout, `torch.return_types.max(\nvalues=...,\nindices=...)`
        return f"sg.return_types.{self.op}(\nvalues={self.values!r},\nindices={self.indices!r})" if self.op else \
            super().__repr__()

    op = None  # PyTorch's name of the op (a class per op below, so a pair still pickles)


def _return_type(op: str) -> type:
    cls = type(f"ValuesIndices_{op}", (ValuesIndices,), {"__slots__": (), "op": op, "__module__": __name__})
    globals()[cls.__name__] = cls
    return cls


_RETURN_TYPES = {op: _return_type(op) for op in ("max", "min", "sort", "topk", "kthvalue", "median", "cummax",
                                                  "cummin")}


def values_indices(values, indices, name: str) -> ValuesIndices:
    """The (values, indices) pair of the op PyTorch names `name` ('Max'), the values' grad_fn named after it."""
    return _RETURN_TYPES[name.lower()](labelled(values, name), Tensor._wrap(indices))


class Tensor(Tracer):
    """An n-d array with autograd: `requires_grad`, `grad`, `grad_fn`, `backward()`, in-place ops."""

    __slots__ = ("_data", "_requires_grad", "_node", "_version", "_grad", "_hooks", "_base", "_value", "__weakref__")

    def __init__(self, *data, requires_grad=False, dtype=None):
        """sg.Tensor(data) is sg.tensor(data); sizes (sg.Tensor(2, 3), an sg.Size; none is (0,)) give a tensor of
        that shape, as torch.Tensor's, in symgrad's default float64 and of zeros, as sg.empty's."""
        shape = legacy_sizes(data, "sg.Tensor")
        if shape is not None:
            data = (np.zeros(shape, dtypes.FLOAT64 if dtype is None else dtypes.canonical(dtype)),)
        self._fill(data[0], requires_grad, dtype)

    def _fill(self, data, requires_grad, dtype):
        """The leaf tensor of `data` (copied, in `dtype` or its own)."""
        refuse_masked(data, "tensor data")
        array = _array_of(data)
        target = dtypes.canonical(dtype if dtype is not None else array.dtype)
        if not isinstance(data, (np.ndarray, Tensor)):
            _check_fits(array, target)
        Tensor._init(self, array.astype(target, copy=False))
        if requires_grad:
            if not dtypes.is_float(target):  # (PyTorch's words for a factory; requires_grad_() has its own)
                raise RuntimeError(f"Only Tensors of floating point and complex dtype can require gradients (got "
                                   f"{target})")
            self.requires_grad_(True)

    def _init(self, array, version=None):
        self.value = None
        self.builder = EAGER
        self._data = array
        self._requires_grad = False
        self._node = None
        self._version = version if version is not None else VersionCounter()
        self._grad = None
        self._hooks = None
        self._base = None  # the tensor whose memory this one views (PyTorch's `_base`), or None
        self._value = None  # (its ir.Value, counter, version) once read by a record (graph.value_of)

    @classmethod
    def _wrap(cls, array, version=None) -> "Tensor":
        """A tensor around `array` (no copy), not requiring grad."""
        tensor = cls.__new__(cls)
        tensor._init(array, version)
        return tensor

    def __reduce__(self):
        """Pickle (and copy) a tensor as a leaf with its data and requires_grad, a non-leaf too, as PyTorch's (a
        parameter stays a Parameter)."""
        return _rebuild, (type(self), self._data, self._requires_grad)

    def __deepcopy__(self, memo):
        """A copy as pickled; a non-leaf requiring grad is PyTorch's error, not a leaf of its values."""
        if self._node is not None and self._requires_grad:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
                               "protocol at the moment.")
        rebuild, arguments = self.__reduce__()
        return rebuild(*arguments)

    def _parent(self):
        """What a record keeps for this operand: its grad_fn, itself if a leaf requiring grad, or None."""
        if self._node is not None:
            return self._node
        return self if self._requires_grad else None

    # ------------------------------------------------------------------ attributes
    shape = property(lambda self: size_of(self._data.shape))
    dtype = property(lambda self: self._data.dtype)
    ndim = property(lambda self: self._data.ndim)
    size = property(lambda self: _Size(self._data.shape))
    is_leaf = property(lambda self: self._node is None)
    grad_fn = property(lambda self: shown(self._node))
    _type = property(lambda self: (self._data.shape, self._data.dtype))  # (shape, dtype), the shape NumPy's tuple

    def dim(self) -> int:
        return self._data.ndim

    def numel(self) -> int:
        return self._data.size

    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, flag):
        self.requires_grad_(flag)

    def requires_grad_(self, requires_grad=True) -> "Tensor":
        if self._node is not None:
            if not requires_grad:
                raise RuntimeError("you can only change requires_grad flags of leaf variables. If you want to "
                                   "use a computed variable in a subgraph that doesn't require differentiation "
                                   "use var_no_grad = var.detach().")
            return self
        if requires_grad and not dtypes.is_float(self.dtype):
            raise RuntimeError(f"only Tensors of floating point dtype can require gradients (got {self.dtype})")
        if self._requires_grad != bool(requires_grad):
            self._requires_grad = bool(requires_grad)
            self._value = None  # a leaf now, or a constant: another value (adjoint.StageGraph keys inputs by value)
        return self

    @property
    def grad(self):
        if self._node is not None and self._node.retained_tensor() is not self:
            warnings.warn("The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
                          "attribute won't be populated during backward(); call .retain_grad() on the non-leaf "
                          "Tensor if you want its gradient.", UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            value = value if isinstance(value, Tensor) else Tensor(value)
            if value.shape != self.shape:
                raise RuntimeError(f"assigned grad has shape {value.shape} but the tensor has shape {self.shape}")
            if value.dtype != self.dtype:  # (PyTorch 2.13 refuses it: a float64 .grad silently moved float32 weights)
                raise RuntimeError(f"attempting to assign a gradient with dtype {value.dtype} to a tensor of dtype "
                                   f"{self.dtype}: the gradient must match the tensor's dtype")
        self._grad = value

    @property
    def data(self) -> "Tensor":
        """The same array, detached and with its own version counter (changes are not tracked)."""
        shared = Tensor._wrap(self._data)
        _hand_to_numpy(self._version)
        shared._version.exposed = True  # written unseen by this tensor's counter
        return shared

    @data.setter
    def data(self, value):
        array = np.asarray(value._data if isinstance(value, Tensor) else value)
        if self._requires_grad and not dtypes.is_float(array.dtype):
            raise RuntimeError(f"data set to a tensor that requires gradients must be floating point, got "
                               f"{array.dtype} (PyTorch's error)")
        _settle(self)
        self._replace_data(array, not isinstance(value, Tensor))

    def _replace_data(self, array: np.ndarray, exposed: bool) -> None:
        """`.data = array` once `array` is known to fit (a tensor's is not deferred, its dtype allowed), `exposed` when
        NumPy may write it (not a tensor's); the optimizers' state write-back calls it directly (a property, a
        conversion and checks less per state array)."""
        tape = _tapes.tape
        if tape is not None and self._node is not None:  # its record's output is no longer its array: later ops
            tape.abandon()  # read the new one, which neither a deferred op nor a captured step recomputes
            tape.regular = False
        elif tape is not None and id(self) in (tape.leaf_slots if tape.hinted <= 0 else tape.slots()):
            tape.regular = False  # ops on this tape read the old array: no captured step recomputes them
        self._data = array
        self._value = None  # another array: another value (graph.value_of)
        if self._node is not None:  # later ops read a value of its own, whose gradient still flows into the record
            # (its parent), as PyTorch's (grad_fn unchanged); the counter stays, as PyTorch's: a write after is seen by
            # the records that saved the tensor before
            self._value = (ir.typed_value(array.shape, array.dtype), self._version, self._version.value)
            self._version.exposed = self._version.exposed or exposed

    # ------------------------------------------------------------------ conversions
    def numpy(self, *, force: bool = False) -> np.ndarray:
        """The data, shared; refused for a tensor that requires grad in grad mode unless `force` (PyTorch's
        numpy(force=True), the way to read it now that np.asarray(t) is refused too)."""
        return self._exposed_array(watched=True) if force else self.__array__()

    def item(self):
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted to Scalar")
        return self._data.reshape(()).item()

    def tolist(self):
        return self._data.tolist()

    def detach(self) -> "Tensor":
        """The same data (shared, with the same version counter), cut from the graph."""
        return Tensor._wrap(self._data, self._version)

    def detach_(self) -> "Tensor":
        _settle(self)
        self._node = None
        self._requires_grad = False
        self._value = None
        return self

    def clone(self, *, _row_major=False) -> "Tensor":
        """A copy that stays in the graph (gradient flows back to self); laid out as self, or row-major."""
        if not (self._requires_grad and _mode.enabled or core._building_count and current_builder() is not None) \
                and 0 not in self._data.strides:  # nothing records it: a copy (of an expanded tensor, the ufunc's
            return Tensor._wrap(self._data.copy(order="C" if _row_major else "K"))  # layout below, PyTorch's)
        out = self * 1 if dtypes.is_float(self.dtype) else self.detach()
        if (out._data is self._data or np.shares_memory(out._data, self._data)
                or _row_major and not out._data.flags.c_contiguous):
            out._data = out._data.copy(order="C" if _row_major else "K")
            if out._node is not None:
                out._node.array = out._data
        return labelled(out, "Clone")

    def to(self, *args, dtype=None, device=None, non_blocking=False, copy=False) -> "Tensor":
        """PyTorch's to(dtype), to(device, dtype), to(other tensor): a cast (recorded) or self; `copy=True`
        always a new tensor. The one device is the CPU."""
        dtype = to_arguments(args, dtype, device)
        result = self if dtype is None else sgnp.astype(self, dtype)
        return result.clone() if copy and result is self else result

    def float(self):
        return self.to(dtypes.FLOAT32)

    def double(self):
        return self.to(dtypes.FLOAT64)

    def long(self):
        return self.to(dtypes.INT64)

    def int(self):
        return self.to(dtypes.INT32)

    def bool(self):
        return self.to(dtypes.BOOL)

    def byte(self):
        return self.to(dtypes.UINT8)

    def char(self):
        return self.to(dtypes.INT8)

    def short(self):
        return self.to(dtypes.INT16)

    def __array__(self, dtype=None, copy=None):
        """The data for NumPy, refused (as numpy() and PyTorch) while the tensor requires grad outside no_grad:
        an array made of it (np.asarray(t), an ndarray's items assigned t) keeps no history, so a gradient
        through it was lost silently. symgrad's own reads take guards.concrete_array."""
        if self._requires_grad and _mode.enabled:  # (PyTorch's test: under no_grad NumPy may read it)
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                               "instead.")
        return self._exposed_array(dtype, watched=True)

    def _exposed_array(self, dtype=None, watched=False) -> np.ndarray:
        """The data handed out to be read (a copy in `dtype` when given), its counter marked exposed: for good, or,
        `watched` (numpy(), __array__: the user's arrays), while NumPy holds it (`_hand_to_numpy`). symgrad's own
        reads (guards.concrete_array) are not watched: a compiled call's reads would pay a memoryview each."""
        if dtype is not None:
            return self._data.astype(dtype)
        if watched:
            return _hand_to_numpy(self._version, self._data)
        _hand_to_numpy(self._version)
        return self._data

    def __bool__(self):
        if self._data.size != 1:
            raise RuntimeError(f"Boolean value of Tensor with {self._data.size} values is ambiguous")
        return bool(self._data.reshape(()))

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __index__(self):
        if self._data.dtype.kind not in "iu":
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __format__(self, spec):
        return format(self.item(), spec) if self._data.ndim == 0 else format(str(self), spec)

    def __repr__(self):
        return format_tensor(self)

    __str__ = __repr__

    # ------------------------------------------------------------------ autograd
    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Accumulate d self / d leaf into every leaf's .grad (see SPEC section 5)."""
        if gradient is None and not create_graph and inputs is None:
            ENGINE.backward_of_loss(self, retain_graph)
        else:
            ENGINE.backward(self, None if gradient is None else [gradient], retain_graph, create_graph, inputs)

    def retain_grad(self) -> None:
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self._node is not None:
            self._node.retain(self)

    @property
    def retains_grad(self) -> bool:
        return self._node is not None and self._node.retained_tensor() is self

    def register_hook(self, hook):
        """hook(grad) -> None or a replacement gradient, called when this tensor's gradient is computed."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self._node is not None:
            return self._node.register_hook(hook)
        if self._hooks is None:
            self._hooks = []
        self._hooks.append(hook)
        return RemovableHandle(self._hooks, hook)

    # ------------------------------------------------------------------ PyTorch-named methods
    def sum(self, dim=None, keepdim=False, *, axis=None, keepdims=None, dtype=None):
        """PyTorch's dim/keepdim, or NumPy's axis/keepdims."""
        if dim is None and axis is None and keepdims is None:  # (the usual call, without _axis and _keep)
            axes, keep = None, keepdim
        else:
            axes, keep = _axis(dim, axis), _keep(keepdim, keepdims)
        args = (self, axes, keep, dtype)
        if axes is None and dtype is None and type(keep) is bool:
            result = _whole_reduction(_SUM, args, _WHOLE_SUM_KEYS[keep])
        else:
            result = apply_function(_SUM, args, {})
        if axes is None and not keep:
            return result
        # (PyTorch's sum(dim) form, whole with keepdim too: one op on self, not a sum then a view)
        return labelled(result, "Sum", None if axes is not None else (self,), overload=1)

    def mean(self, dim=None, keepdim=False, *, axis=None, keepdims=None, dtype=None):
        if dtype is not None:  # PyTorch's: the input cast to dtype first, a float one (an integer mean is no integer)
            if np.dtype(dtype).kind not in "fc":
                raise RuntimeError(f"mean(): could not infer output dtype. Optional dtype must be either a floating "
                                   f"point or complex dtype. Got: {np.dtype(dtype)} (PyTorch's error)")
            return self.to(dtype).mean(dim, keepdim, axis=axis, keepdims=keepdims)
        args = (self, _axis(dim, axis), _keep(keepdim, keepdims))
        if args[1] is None and type(args[2]) is bool:
            return labelled(_whole_reduction(_MEAN, args, _WHOLE_MEAN_KEYS[args[2]]), "Mean", (self,))
        return labelled(apply_function(_MEAN, args, {}), "Mean", (self,), overload=int(args[1] is not None))

    def prod(self, dim=None, keepdim=False, *, axis=None, keepdims=None, dtype=None):
        if dtype is not None:  # PyTorch's: the input cast to dtype first
            return self.to(dtype).prod(dim, keepdim, axis=axis, keepdims=keepdims)
        axes = _axis(dim, axis)
        return labelled(sgnp.prod(self, axes, _keep(keepdim, keepdims)), "Prod", overload=int(axes is not None))

    def var(self, dim=None, unbiased=True, keepdim=False, *, correction=None):
        """PyTorch's default: the unbiased estimate (correction=1)."""
        ddof = correction if correction is not None else int(bool(unbiased))
        return labelled(sgnp.var(self, _axis(dim, None), ddof, keepdim), "Var")

    def std(self, dim=None, unbiased=True, keepdim=False, *, correction=None):
        return labelled(_safe_sqrt(self.var(dim, unbiased, keepdim, correction=correction)), "Std")

    def _extreme(self, reduce, arg, name, dim, keepdim):
        """The full reduction (its gradient shared among ties), or with `dim` (values, indices) whose
        values are picked at the indices, so the gradient goes to that one element, as in PyTorch.
        `name` is PyTorch's name of the op, for the values' grad_fn."""
        if dim is None:
            return labelled(_full_extreme(self, reduce), name, overload=1)
        dim = _dim(dim, self.ndim)
        if self.ndim == 0:
            return values_indices(self.clone(), np.zeros((), np.int64), name)
        indices = np.asarray(arg(self._data, axis=dim, keepdims=True), dtype=np.int64)
        values = sgnp.take_along_axis(self, indices, dim)
        if not keepdim:
            values, indices = sgnp.squeeze(values, dim), np.squeeze(indices, dim)
        return values_indices(values, indices, name)

    def max(self, dim=None, keepdim=False, *, axis=None, keepdims=None):
        """The maximum, or with `dim` the pair (values, indices) as torch.max. `axis`/`keepdims` are PyTorch's
        NumPy-style aliases (d2l's code calls argmax(axis=1)), here and in min, argmax, argmin."""
        return self._extreme(sgnp.max, np.argmax, "Max", _axis(dim, axis), _keep(keepdim, keepdims))

    def min(self, dim=None, keepdim=False, *, axis=None, keepdims=None):
        return self._extreme(sgnp.min, np.argmin, "Min", _axis(dim, axis), _keep(keepdim, keepdims))

    def argmax(self, dim=None, keepdim=False, *, axis=None, keepdims=None):
        indices = np.argmax(self._data, axis=_axis(dim, axis), keepdims=_keep(keepdim, keepdims))
        return Tensor._wrap(np.asarray(indices, dtype=np.int64))

    def argmin(self, dim=None, keepdim=False, *, axis=None, keepdims=None):
        indices = np.argmin(self._data, axis=_axis(dim, axis), keepdims=_keep(keepdim, keepdims))
        return Tensor._wrap(np.asarray(indices, dtype=np.int64))

    def transpose(self, dim0=None, dim1=None):
        """PyTorch: swap two dimensions (no arguments: reverse them, as NumPy)."""
        if dim0 is None:
            return sgnp.transpose(self)
        if self.ndim == 0:
            _dim(dim0, 0), _dim(dim1, 0)
            return view_labelled(sgnp.reshape(self, ()), self, "Transpose")
        return view_labelled(sgnp.swapaxes(self, _dim(dim0, self.ndim), _dim(dim1, self.ndim)), self, "Transpose")

    def permute(self, *dims):
        return sgnp.transpose(self, dims[0] if len(dims) == 1 and not isinstance(dims[0], int) else dims)

    def t(self):
        return view_labelled(sgnp.transpose(self), self, "T")

    def view(self, *shape):
        """reshape that must alias: a layout no reshape can view (a transpose flattened) is PyTorch's error, not
        a copy that the in-place writes meant for self would silently miss."""
        shape = shape[0] if len(shape) == 1 and not isinstance(shape[0], int) else shape
        if not self.is_contiguous():
            try:
                np.reshape(self._data, shape, copy=False)
            except ValueError:
                np.reshape(self._data, shape)  # a size that does not fit raises its own error
                raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one "
                                   "dimension spans across two contiguous subspaces). Use .reshape(...) instead.") \
                    from None
        return sgnp.reshape(self, shape)

    def reshape(self, *shape):
        return sgnp.reshape(self, shape[0] if len(shape) == 1 and not isinstance(shape[0], int) else shape)

    def flatten(self, start_dim=0, end_dim=-1):
        start, end = _dim(start_dim, self.ndim), _dim(end_dim, self.ndim)
        if self.ndim == 0:
            return sgnp.reshape(self, (1,))
        # the flattened size written out: -1 is ambiguous in an empty tensor (an empty batch's (0, C, L).flatten(1))
        merged = math.prod(self.shape[start:end + 1])
        return sgnp.reshape(self, self.shape[:start] + (merged,) + self.shape[end + 1:])

    def unsqueeze(self, dim):
        return view_labelled(sgnp.expand_dims(self, _dim(dim, self.ndim + 1)), self, "Unsqueeze")

    def squeeze(self, dim=None):
        """Without dim every axis of size 1, else dim's (an int or, as PyTorch 2's, a tuple) that are of size 1
        (PyTorch leaves one of another size alone); grad_fn SqueezeBackward0, 1 or 2 as PyTorch's."""
        if dim is None:
            return view_labelled(sgnp.squeeze(self, None), self, "Squeeze")
        dims = [_dim(d, self.ndim) for d in (dim if isinstance(dim, (tuple, list)) else (dim,))]
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"dim {dims[0]} appears multiple times in the list of dims")
        ones = tuple(d for d in dims if self.ndim and self.shape[d] == 1)
        if not ones:
            return self
        overload = 2 if isinstance(dim, (tuple, list)) else 1
        return view_labelled(sgnp.squeeze(self, ones), self, "Squeeze", overload=overload)

    def expand(self, *sizes):
        sizes = sizes[0] if len(sizes) == 1 and not isinstance(sizes[0], int) else sizes
        lead = len(sizes) - self.ndim
        shape = tuple(self.shape[i - lead] if s == -1 else s for i, s in enumerate(sizes))
        return sgnp.broadcast_to(self, shape)

    def clamp(self, min=None, max=None):
        """ClampBackward1 with numbers as bounds, ClampBackward0 with arrays, as PyTorch names them."""
        numbers = (min is None or isinstance(min, (int, float))) and (max is None or isinstance(max, (int, float)))
        return labelled(_clamped(self, min, max), "Clamp", overload=int(numbers))

    clip = clamp

    def softmax(self, dim, dtype=None):
        """Along dim; with dtype, of self cast to it first (PyTorch's)."""
        return labelled(sgnp.softmax(self if dtype is None else sgnp.astype(self, dtype), dim), "Softmax")

    def log_softmax(self, dim, dtype=None):
        return labelled(sgnp.log_softmax(self if dtype is None else sgnp.astype(self, dtype), dim), "LogSoftmax")

    def norm(self, p=2, dim=None, keepdim=False):
        """The p-norm over all elements (or along dim), as torch.norm: sg.linalg.norm's vector norm, so that its
        gradient at a zero entry is PyTorch's 0 (a gradient penalty or a normalization may meet one), not NaN."""
        from ..linalg import _vector_norm
        return labelled(_vector_norm(self, 2 if p == "fro" else p, _axis(dim, None), keepdim), "LinalgVectorNorm")

    def logsumexp(self, dim, keepdim=False):
        return labelled(sgnp.logsumexp(self, _axis(dim, None), keepdim), "Logsumexp")

    def rsqrt(self):
        return sgnp.reciprocal(sgnp.sqrt(self))

    def masked_fill(self, mask, value):
        """value where mask is true, else self (as torch.Tensor.masked_fill): of self's dtype, the value cast to it
        (an int tensor filled with 2.5 holds 2, a bool one filled with 2 holds True), not promoted."""
        result = sgnp.where(mask, value, self)
        return labelled(result if result.dtype == self.dtype else sgnp.astype(result, self.dtype), "MaskedFill")

    def index_select(self, dim, index):
        index = _index_array(index)
        if index.ndim > 1:
            raise IndexError("index_select(): Index is supposed to be a vector")
        index = index.reshape(-1)  # (a 0-d index selects one, and keeps the dimension, as PyTorch's)
        if index.size and (index.min() < 0 or index.max() >= self.shape[dim]):  # (NumPy counts -1 from the end)
            raise IndexError("index out of range in self")
        return labelled(sgnp.take(self, index, axis=dim), "IndexSelect")

    def cpu(self):
        """Tensors live in host memory: itself, as torch's cpu() on a CPU tensor."""
        return self

    def contiguous(self, memory_format=None):
        """Itself when its array is laid out row-major, else a row-major copy (recorded, as clone()): as PyTorch's, a
        write to the result of a transposed view's contiguous() does not reach the view's base, and a view of the
        result aliases it (x.T * 1 is laid out as x.T: its view(-1) was a copy)."""
        return self if self.is_contiguous() else self.clone(_row_major=True)

    def is_contiguous(self, memory_format=None) -> bool:
        """Whether its array is laid out row-major (a deferred value that is not a view will be an array of its own:
        yes, without computing it)."""
        if self.__class__ is DeferredTensor and not self._node.viewed:
            return True
        return self._data.flags.c_contiguous

    def __getitem__(self, key):
        basic = _basic_key(key)
        if basic is not None:  # ints and slices: replayed from a plan made once per shape, dtype and key
            plan = plans.function_plan_for(_basic_getitem, ((True, self.shape, self.dtype, None),
                                                            (False, tuple, None, basic)), ())
            if plan is not None:
                return view_labelled(plan.run([self], EAGER), self, _view_label(basic, self.shape))
        result = sgnp.getitem(self, _concrete_key(key))
        items = key if type(key) is tuple else (key,)
        if all(item is None or item is Ellipsis for item in items if _basic_key(item) is None):
            result = view_labelled(result, self, _view_label(tuple((item.start, item.stop, item.step)
                                                                   if type(item) is slice else item for item in items),
                                                             self.shape))
        return result

    # ------------------------------------------------------------------ in-place ops
    def _inplace(self, compute):
        """Compute `compute(self)` out of place, then write it into self's data and bump its version. On a view, the
        write reaches its base's memory, as in PyTorch, and when recorded the base's history becomes it too
        (`_write_through`)."""
        recording = _mode.enabled
        if recording:
            _refuse_recorded_write(self)
            _refuse_stale_view(self)
        if recording:  # the op reads a private copy, so the overwrite cannot corrupt what it saved
            source = Tensor._wrap(self._data.copy())
            source._node, source._requires_grad = self._node, self._requires_grad
            result = compute(source)
            if self._requires_grad and not (isinstance(result, Tensor) and result._requires_grad):
                # overwritten by a constant (fill_, copy_): the old history gets a zero gradient
                result = sgnp.where(np.ones(self.shape, bool), result, source)
        else:
            result = compute(self)
        if isinstance(result, Tracer) and not isinstance(result, Tensor):
            raise TracerError(with_user_line(
                "an in-place change of a tensor inside a traced function (a BatchNorm updating its running "
                "statistics in training mode, an optimizer step) cannot be compiled: it would happen once, at "
                "trace time; call model.eval() first, or run that part eagerly"))
        result = result if isinstance(result, Tensor) else Tensor._wrap(np.asarray(result))
        if result.shape != self.shape:
            raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast shape "
                               f"{list(result.shape)}")
        if result.dtype != self.dtype:
            if not np.can_cast(result.dtype, self.dtype, "same_kind"):
                raise RuntimeError(f"result type {result.dtype} can't be cast to the desired output type "
                                   f"{self.dtype}")
            result = sgnp.astype(result, self.dtype)
        record = result._node
        if record is not None and self._base is not None and self._write_through(result):
            pass  # the base wrote self's memory and bumped the version
        else:
            np.copyto(self._writable_data(), result._data)
            self._version.value += 1
        if record is not None:
            record.array = self._data
            record.out_version = (self._version, self._version.value)
            record.mark_view(self._base is not None)
            if self._node is not None and self._node.retained is not None:
                record.rare().retained = self._node.retained
            self._node = record
            self._requires_grad = True
        return self

    def _write_through(self, values: "Tensor") -> bool:
        """Write the recorded new `values` of this view into its base (PyTorch's CopySlices): the base's new value is
        `values` at the view's elements and its old value elsewhere, recorded as `t[key] = values`, so its history,
        and every later use of it, has the write. False, with nothing done, when self's elements are not its base's
        (the base's memory was replaced since)."""
        base = self._base
        _refuse_overlap(self._data)
        key = view_positions(self._data, base._data)
        if key is None:
            self._base = None
            return False
        if base.ndim == 0:
            values = sgnp.reshape(values, ())
        base[key] = values
        base._node.label = "CopySlices"
        if not np.may_share_memory(self._data, base._data):  # the base's array was read-only: copied
            self._data, self._base = base._data[key], None
        return True

    def _writable_data(self) -> np.ndarray:
        """self's array, for an in-place op to write: a view's writes reach its base's memory (and every other view of
        it), as in PyTorch, and so do writes to an array shared with NumPy (`exposed`: from_numpy of a NumPy view)
        or with views (`viewed`). A view whose elements share memory (expand()) is PyTorch's error; an array that may
        not be written (a broadcast number, a read-only result) or that views memory no tensor is known to own (an
        array a backward made as a view of another) is copied first. Deferred ops are computed first: they may read
        this array as it is now."""
        tape = _tapes.tape
        if tape is not None and tape.pending:  # (tape.force_pending, without a call: every update asks)
            tape.force()
        data = self._data
        if data.flags.writeable and (data.flags.c_contiguous or not _overlapping(data)) and (
                data.base is None or self._base is not None or self._version.exposed or self._version.viewed):
            return data
        base = self._base
        if base is not None:
            _refuse_overlap(data)
            if base._data.flags.writeable and np.may_share_memory(data, base._data):
                data = self._data = data.view()  # a read-only view of a writable base (a row of an expand())
                data.flags.writeable = True
                return data
        self._data, self._base = data.copy(), None
        return self._data

    def add_(self, other, *scaled, alpha=1):
        other, alpha = alpha_first("add_", other, scaled, alpha)
        check_alpha(self, other, alpha)
        if alpha == 1 and self._unrecorded_update(np.add, other):
            return self
        return self._inplace(lambda s: s + (other if alpha == 1 else other * alpha))

    def sub_(self, other, *scaled, alpha=1):
        other, alpha = alpha_first("sub_", other, scaled, alpha)
        check_alpha(self, other, alpha)
        if alpha == 1 and self._unrecorded_update(np.subtract, other):
            return self
        return self._inplace(lambda s: s - (other if alpha == 1 else other * alpha))

    def mul_(self, other):
        if self._unrecorded_update(np.multiply, other):
            return self
        return self._inplace(lambda s: s * other)

    def div_(self, other):
        if self._unrecorded_update(np.true_divide, other):
            return self
        return self._inplace(lambda s: s / other)

    def _unrecorded_update(self, ufunc, other) -> bool:
        """`self op= other` as one NumPy call when nothing records it (no_grad, or nothing requires grad)
        and the result is plainly self's dtype and shape: a float tensor and a Python float or a tensor of
        its dtype that broadcasts to it (`w -= lr * w.grad`). Bit for bit what `_inplace` computes;
        False, with nothing done, for anything else (then `_inplace` runs, and raises its errors)."""
        data = self._data
        if data.dtype.kind != "f" or _mode.enabled and (
                _records_writes(self) or isinstance(other, Tensor) and other._requires_grad):
            return False
        if type(other) is float:
            value = other
        elif isinstance(other, Tensor):
            value = other._data  # (a deferred tensor computed now, as the write below would)
            if (value.dtype is not data.dtype and value.dtype != data.dtype) or (
                    value.shape != data.shape and np.broadcast_shapes(value.shape, data.shape) != data.shape):
                return False
        else:
            return False
        update_in_place(ufunc, self._writable_data(), value)
        self._version.value += 1
        return True

    def pow_(self, exponent):
        return self._inplace(lambda s: s ** exponent)

    def clamp_(self, min=None, max=None):
        return self._inplace(lambda s: _clamped(s, min, max))

    def zero_(self):
        if _records_writes(self):
            return self.fill_(0)  # recorded (or a leaf's error), as any in-place op
        self._writable_data().fill(0)  # nothing to record: `grad.zero_()` in a training loop is one NumPy call
        self._version.value += 1
        return self

    def fill_(self, value):
        _check_number_fits(value, self.dtype)  # (t.fill_(256) of a uint8 t: PyTorch's error, not a wrapped 0)
        return self.copy_(value)  # (a 0-d tensor filling a 0-d one is copy_'s case of no conversion)

    def copy_(self, src):
        """src written into self, recorded as a `where` that takes all of it: broadcast_to and astype give src
        itself when it needs no conversion, and self took over src's own record (y.copy_(a) lost a's gradient
        through y, a leaf having none)."""
        return self._inplace(lambda s: sgnp.where(np.ones(s.shape, bool),
                                                  sgnp.broadcast_to(sgnp.astype(src, s.dtype), s.shape), s))

    __iadd__, __isub__, __imul__, __itruediv__ = add_, sub_, mul_, div_

    def __setitem__(self, key, value):
        """`t[key] = value`, recorded as a `where` so the gradient skips the overwritten positions; a value
        that requires grad is spread over them with `take`, whose gradient gathers theirs back to it."""
        key = _concrete_key(key)
        differentiable = isinstance(value, Tensor) and value._requires_grad and _mode.enabled
        with no_grad():
            mask = np.zeros(self.shape, bool)
            mask[key] = True
            if differentiable:
                filled = _spread(value, key, self.shape, self.dtype)
            else:
                filled = np.zeros(self.shape, self.dtype)
                _check_number_fits(value, self.dtype)  # (t[0] = 300 of a uint8 t: PyTorch's error, not a wrapped 44)
                filled[key] = concrete_array(value)
        self._inplace(lambda s: sgnp.where(mask, filled, s))
        if self._node is not None and self._base is None:
            self._node.label = "CopySlices"  # PyTorch's name of an indexed write's grad_fn

    # ------------------------------------------------------------------ PyTorch surface (issue 14)
    device = property(lambda self: CPU)
    is_cuda = property(lambda self: False)

    def cuda(self, device=None, non_blocking=False):
        raise RuntimeError("cuda(): symgrad tensors live in host memory; there is no CUDA device")

    def is_floating_point(self) -> bool:
        return dtypes.is_float(self._data.dtype)

    def element_size(self) -> int:
        return self._data.itemsize

    def type_as(self, other) -> "Tensor":
        return self.to(other.dtype)

    def type(self, dtype=None):
        """type(dtype): the cast to(dtype) (`(pred == y).type(sg.float)`); type(): the name, e.g. 'sg.FloatTensor'."""
        if dtype is None:
            return f"sg.{_TYPE_NAMES.get(self._data.dtype, self._data.dtype)}"
        return self.to(dtype)


ENGINE = Engine(Tensor)  # backward() of tensors: Tensor.backward and sg.autograd.backward / grad


class DeferredTensor(Tensor):
    """The result of a deferred op (symgrad.eager.tensor._defer): its shape and dtype are known, its array is
    computed when first read (`_data`), and it is then an ordinary Tensor."""

    __slots__ = ()

    # (its record's entry's output type: the record's values are made only when read, Record.valued)
    shape = property(lambda self: size_of(self._node.entry[4][0]))
    dtype = property(lambda self: self._node.entry[4][1])  # (a NumPy dtype: the value's that the capture recorded)
    ndim = property(lambda self: len(self._node.entry[4][0]))
    size = property(lambda self: _Size(self._node.entry[4][0]))
    _type = property(lambda self: self._node.entry[4])

    def dim(self) -> int:
        return len(self._node.entry[4][0])

    def numel(self) -> int:
        return math.prod(self._node.entry[4][0])

    def __getattr__(self, name):
        if name != "_data":
            raise AttributeError(f"'Tensor' object has no attribute '{name}'")
        record = self._node
        if record.value is None:
            record.tape.force()
        value = self._data = view_value(record) if record.viewed else record.value
        self.__class__ = Tensor
        return value

    def __reduce__(self):
        _settle(self)
        return Tensor.__reduce__(self)


def _settle(tensor) -> None:
    """Compute a deferred tensor's array now (it is about to lose what it was deferred from)."""
    if tensor.__class__ is DeferredTensor:
        tensor.__getattr__("_data")


def _spread(value: "Tensor", key, shape, dtype) -> "Tensor":
    """A tensor of `shape` holding `value` (broadcast as NumPy assigns it) at t[key] and anything elsewhere,
    recorded so that the gradient of each position under t[key] flows back to the element of value it came
    from (a position assigned twice takes the last, as NumPy's assignment does)."""
    source = np.zeros(shape, np.int64)
    selected = source[key].shape
    source[key] = np.arange(int(np.prod(selected, dtype=np.int64))).reshape(selected)
    with enable_grad():
        extra = value.ndim - len(selected)
        if extra > 0 and all(d == 1 for d in value.shape[:extra]):  # NumPy's assignment drops leading 1s
            value = sgnp.reshape(value, value.shape[extra:])
        flat = sgnp.reshape(sgnp.broadcast_to(sgnp.astype(value, dtype), selected), (-1,))
        if flat.shape[0] == 0:  # nothing is assigned: still recorded, as PyTorch (value gets a zero gradient)
            return sgnp.broadcast_to(sgnp.sum(flat), shape)
        return sgnp.take(flat, source)


_TYPE_NAMES = {dtypes.FLOAT32: "FloatTensor", dtypes.FLOAT64: "DoubleTensor", dtypes.INT32: "IntTensor",
               dtypes.INT64: "LongTensor", dtypes.BOOL: "BoolTensor", dtypes.UINT8: "ByteTensor",
               dtypes.INT8: "CharTensor", dtypes.INT16: "ShortTensor"}


def to_arguments(args, dtype=None, device=None):
    """The dtype that PyTorch's to(dtype) / to(device, dtype) / to(other) / to(device=, dtype=) asks for (None:
    keep it), after checking that any device named is the CPU."""
    for arg in args:
        if isinstance(arg, Tensor):
            dtype = arg.dtype
        elif isinstance(arg, (str, device_type)):
            check_device(arg)
        else:
            dtype = arg
    check_device(device)
    return dtype


def _array_of(data) -> np.ndarray:
    """A copy of data as an array; tensors in a list of them give their values, as torch.tensor([a, b]) copies what
    they hold (NumPy's conversion of one that requires grad is refused, so the list is walked then only)."""
    if isinstance(data, Tensor):
        return np.array(data._data, copy=True)
    try:
        return np.array(data, copy=True)
    except RuntimeError:
        if not isinstance(data, (list, tuple)):
            raise
        return np.array([_array_of(item) for item in data])


def _check_fits(array: np.ndarray, dtype: np.dtype):
    """PyTorch's error for Python integers out of an integer dtype's range (sg.tensor([300], dtype=sg.uint8)), which
    a cast would wrap silently; arrays cast as NumPy's astype does."""
    if array.size and array.dtype.kind in "iu" and dtype.kind in "iu":
        info = np.iinfo(dtype)
        if array.min() < info.min or array.max() > info.max:
            raise RuntimeError(f"value cannot be converted to type {dtype} without overflow")


def _check_number_fits(value, dtype: np.dtype):
    """PyTorch's error for a Python int or float written into an integer tensor outside its dtype's range (t[0] = 300
    or 300.0, t.fill_(-0.5) of a uint8 t; NaN and infinities too), which a cast would wrap or make up silently; a
    float inside it is truncated, as PyTorch's (2.7 -> 2)."""
    if dtype.kind in "iu" and type(value) in (int, float):
        info = np.iinfo(dtype)
        if not info.min <= value <= info.max:  # (False for NaN)
            raise RuntimeError(f"value cannot be converted to type {dtype} without overflow")


def legacy_sizes(args: tuple, name: str):
    """The shape PyTorch's legacy constructors (torch.Tensor(2, 3), torch.FloatTensor(2, 3)) read in their arguments:
    ints, one Size, or none ((0,)); None when they are one array-like, the data."""
    if len(args) == 1 and isinstance(args[0], Size):
        return tuple(args[0])
    if all(isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in args):
        return tuple(int(a) for a in args) if args else (0,)
    if len(args) > 1:
        raise TypeError(f"{name}() takes sizes (ints) or one sequence of data, got {args!r}")
    return None


def _rebuild(cls, data, requires_grad):
    tensor = cls._wrap(np.array(data))
    tensor._requires_grad = requires_grad
    return tensor


def _dim(dim, ndim) -> int:
    """dim as an index into ndim dimensions, or PyTorch's IndexError; a 0-d tensor counts as one dimension."""
    size = max(ndim, 1)
    if not -size <= dim < size:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-size}, {size - 1}], but got {dim})")
    return dim % size


def _axis(dim, axis):
    """The axes of PyTorch's dim or its NumPy-style alias axis; PyTorch's dim=() (or []) reduces every axis, NumPy's
    axis=() none; both given is PyTorch's TypeError (one was silently taken)."""
    if dim is not None and axis is not None:
        raise TypeError(f"got both dim={dim!r} and axis={axis!r} (axis is dim's NumPy-style alias): pass one")
    return axis if dim is None else torch_axes(dim)


def _keep(keepdim, keepdims):
    return keepdim if keepdims is None else keepdims


def _basic_key(key):
    """A hashable form of an index key made of Python ints and slices of them (a slice is a tuple of its
    start, stop and step), or None for any other key."""
    form = []
    for item in key if type(key) is tuple else (key,):
        kind = type(item)
        if kind is slice and all(type(v) is int or v is None for v in (item.start, item.stop, item.step)):
            form.append((item.start, item.stop, item.step))
        elif kind is int:
            form.append(item)
        else:
            return None
    return tuple(form)


@functools.lru_cache(maxsize=4096)
def _view_label(form, shape) -> str:
    """PyTorch's grad_fn name of t[key] for a key of ints, slices (as in _basic_key), None and Ellipsis: its last
    step that changes something (Select, Slice, Unsqueeze), Alias when none does; a lone slice is a Slice."""
    label, dim = "Alias", 0
    explicit = sum(item is not None and item is not Ellipsis for item in form)
    for item in form:
        if item is Ellipsis:
            dim += len(shape) - explicit
        elif item is None:
            label = "Unsqueeze"
        elif type(item) is tuple:
            if len(form) == 1 or slice(*item).indices(shape[dim]) != (0, shape[dim], 1):
                label = "Slice"
            dim += 1
        else:
            label, dim = "Select", dim + 1
    return label


def _basic_getitem(x, form):
    """x[key] for the key of `form` (see _basic_key)."""
    return sgnp.getitem(x, tuple(slice(*item) if type(item) is tuple else item for item in form))


def _concrete_key(key):
    """Index keys with tensors in them use the tensors' arrays (indices are never differentiated)."""
    if isinstance(key, tuple):
        return tuple(k._data if isinstance(k, Tensor) else k for k in key)
    return key._data if isinstance(key, Tensor) else key


_SCALARS = (bool, int, float)


def elementwise_on_tensors(op, args):
    """op(*args) for tensor operands through a cached plan (see eager.plans);
    arrays among them become constant tensors, as the elementwise front end would lift them.

    Python numbers become operands too (see `_numbers_as_operands`), so a loss scaled by a
    number that changes every step (`loss * beta`, `w - lr * g`) keeps one plan and one
    recorded structure, and its adjoint stays cached and compiled."""
    count = len(args)
    if (count == 2 and isinstance(args[0], Tensor) and isinstance(args[1], Tensor)) or (
            count == 1 and isinstance(args[0], Tensor)):  # the common case: no loop below
        return _on_tensors(op, args)
    tape = _tapes.tape
    call = None
    if tape is not None and tape.capture is not None and _mode.enabled:  # the plan this call ran before?
        call = _call_key(args, None)
        result = _shortcut(tape, op, call, args)
        if result is not None:
            return result
    if count == 2 and (type(args[0]) is float or type(args[1]) is float):
        ufunc = _ARITHMETIC.get(id(op))
        result = None if ufunc is None else _unrecorded_arithmetic(ufunc, *args)
        if result is not None:
            return result
    values, numbers, tensors = [], False, False
    for arg in args:
        kind = type(arg)
        if kind in _SCALARS:
            numbers = True
        elif kind is Tensor or isinstance(arg, Tensor):
            tensors = True
        elif isinstance(arg, (np.ndarray, np.generic, list)):
            refuse_masked(arg, "an operand of a tensor operation")
            arg = Tensor._wrap(sgnp.asarray(arg))
            arg._version.exposed = True  # the caller's array, which NumPy may still write
        else:
            return E.apply_elementwise(op, args)  # a tracer: the ordinary path
        values.append(arg)
    if not tensors:
        return op(*args)
    if numbers:
        with_numbers = values
        values = _numbers_as_operands(op, values)
        if values is not with_numbers:  # numbers became operands: their values are not the call's structure
            call = None
    signature, operands = [], []
    for value in values:
        if type(value) in _SCALARS:
            signature.append((False, type(value), None, value))
            continue
        shape, dtype = value._type
        signature.append((True, shape, dtype, None))
        operands.append(value)
    return _run_plan(plans.plan_for(op, tuple(signature)), operands, tape, op, call)


def _on_tensors(op, tensors, plan_for=plans.tensor_plan_for):
    """op(*tensors) for one or two tensors and no other argument (`a * b`, `t.tanh()`, `sg.exp(t)`; `x @ w` with
    plans.tensor_function_plan_for, a namespace function's): the shortcut of a deferred step's op (`_shortcut`), else
    its plan, found by the tensors' types; op's own call when it has none."""
    tape = _tapes.tape
    call = None
    deferring = tape is not None and tape.capture is not None
    if deferring and _mode.enabled:  # the plan this call ran before?
        call = _ALL_TENSORS[len(tensors)]
        result = _shortcut(tape, op, call, tensors)
        if result is not None:
            return result
    plan = plan_for(op, tensors, deferring)
    if plan is None:
        return op(*tensors)
    if call is None and plan.single is not None:  # (_run_plan's first case, without its call)
        return EAGER.evaluate(plan.single, tensors, tape)
    return _run_plan(plan, tensors, tape, op, call)


def _call_key(args, kwargs) -> "tuple | None":
    """A front-end call's arguments besides its tensors' types (`_shortcut`): per argument None for a tensor
    or (type, value) for a number, a string, None or a tuple of ints, then the keyword arguments alike.
    None when an argument is anything else (an array, which each call lifts to a constant anew)."""
    key = []
    for arg in args:
        if isinstance(arg, Tensor):
            key.append(None)
            continue
        kind = type(arg)
        if kind in _PLAIN or (kind is tuple and all(type(item) is int for item in arg)):
            key.append((kind if kind is not float or arg else scalar_token(arg), arg))  # (scalar_token, inlined)
        else:
            return None
    if kwargs:
        for name, value in sorted(kwargs.items()):
            if type(value) not in _PLAIN:
                return None
            key.append((name, scalar_token(value), value))
    return tuple(key)


_ALL_TENSORS = ((), (None,), (None, None))  # the call key of an op on 0, 1, 2 tensors
_WHOLE_MEAN_KEYS = {keep: (None, (type(None), None), (bool, keep)) for keep in (False, True)}  # t.mean(), keepdim
_WHOLE_SUM_KEYS = {keep: key + ((type(None), None),) for keep, key in _WHOLE_MEAN_KEYS.items()}  # t.sum(), dtype=None


def _shortcut(tape, op, call, args) -> "DeferredTensor | None":
    """The deferred result of a front-end call op(*args) (an operator, an sg.* function) in grad mode at a
    position of the tape where the same call (op and `_call_key`) ran a plan that deferred in an earlier step
    of this capture: that plan's captured step (or how its primitives matched the steps), taken without looking
    the plan up by the operands' shapes and dtypes or matching it again, which the checks of deferring imply
    (each operand from the source the capture expects, of the type it expects).
    None, with nothing changed, when there is none, inside a trace, or when an operand comes from elsewhere:
    then the ordinary path judges the call."""
    position = len(tape.digests)
    known = tape.capture.shortcuts.get(position)
    if known is None or known[0] is not op or known[1] != call or (
            core._building_count and current_builder() is not None):  # (tracing_anywhere(), without a call)
        return None
    _, _, single, tensors, deferral, label = known
    operands = args
    if tensors is not None:  # (a loop, not a list comprehension: that is a call of its own on Python 3.11)
        operands = []
        for index in tensors:
            operands.append(args[index])
    if single:  # the captured step there applies the plan's primitive (it deferred before)
        return _defer_step(tape, deferral, position, operands, label)
    return _defer_matched(tape, deferral, position, operands, label)


def _whole_reduction(fn, args, call) -> "Tensor":
    """apply_function(fn, args, {}) for sg.sum or sg.mean of a whole tensor, args (the tensor, axis None, a bool
    keepdims and, for a sum, dtype None) of `_call_key` `call`: a deferred step's shortcut, else the plan found by a
    signature made at once, without apply_function's general handling of arguments (t.sum() is a common call)."""
    tape = _tapes.tape
    if tape is not None and tape.capture is not None and _mode.enabled:
        result = _shortcut(tape, fn, call, args)
        if result is not None:
            return result
    else:
        call = None
    signature = [(True, *args[0]._type, None)]
    for arg in args[1:]:  # (a loop: a generator is a call of its own on Python 3.11)
        signature.append(_FLAG_SIGNATURES[arg])
    plan = plans.function_plan_for(fn, tuple(signature), ())
    if plan is None:
        return fn(*args)
    return _run_plan(plan, (args[0],), tape, fn, call)


def _deferred_call(op, call, args) -> "DeferredTensor | None":
    """`_shortcut` of op(*args), whose `_call_key` is `call`, when the thread's tape defers a captured step in grad
    mode; else None. The operators and methods try it first, so a deferred step's op skips the general call's
    argument handling."""
    tape = _tapes.tape
    if tape is None or tape.capture is None or not _mode.enabled or call is None:
        return None
    return _shortcut(tape, op, call, args)


def _run_plan(plan, operands, tape, op, call) -> "Tensor":
    """plan.run(operands) for the front-end call of op whose `_call_key` is `call` (None for one that has no
    shortcut), remembered as the shortcut at this position of the tape when it deferred (`_shortcut`)."""
    if call is None or tape is None or tape.capture is None:
        single = plan.single
        if single is not None:  # (plan.run's first case, without its call)
            return EAGER.evaluate(single, operands)
        return plan.run(operands, EAGER)
    capture, position = tape.capture, len(tape.digests)
    result = plan.run(operands, EAGER)
    if result.__class__ is DeferredTensor and tape.capture is capture:
        tensors = tuple(i for i, kind in enumerate(call) if kind is None)  # the arguments that are operands
        single = plan.single is not None  # then the captured step, else how the plan matched the steps (none when
        deferral = capture.steps[position] if single else capture.plan_matches.get((position, plan))  # op by op)
        if deferral is not None:
            capture.shortcuts[position] = (op, call, single, None if len(tensors) == len(call) else tensors,
                                           deferral, plan.label)
    return result


_NEP50 = int(np.__version__.split(".")[0]) >= 2  # a Python float takes the array's dtype, whatever its value
# by the op's identity (hashing an elementwise op hashes all its fields)
_ARITHMETIC = {id(E.add): np.add, id(E.subtract): np.subtract, id(E.multiply): np.multiply,
               id(E.divide): np.true_divide} if _NEP50 else {}


def _unrecorded_arithmetic(ufunc, a, b) -> "Tensor | None":
    """a + b, a - b, a * b or a / b as one NumPy call when it is a float tensor and a Python float and
    nothing records it (`lr * w.grad` under no_grad): bit for bit what the plan computes, in the tensor's
    dtype; None for anything else."""
    if type(a) is float and isinstance(b, Tensor):
        tensor = b
    elif type(b) is float and isinstance(a, Tensor):
        tensor = a
    else:
        return None
    if tensor._requires_grad and _mode.enabled:  # (first: a deferred tensor's data would be computed)
        return None
    data = tensor._data
    if data.dtype.kind != "f":
        return None
    result = ufunc(data, b) if tensor is a else ufunc(a, data)
    return Tensor._wrap(result if result.__class__ is np.ndarray else np.asarray(result))


def _numbers_as_operands(op, values) -> list:
    """values with each operand number (E.operand_numbers) replaced by a tensor holding it, broadcast to
    the op's shape, in the float dtype NumPy's promotion gives the op (so the result's dtype does not
    change). Numbers stay in the SymPy expression where the result is not a float (nothing to
    differentiate), and where the op keeps them literal (a power's exponent, a user op's arguments)."""
    flags = E.operand_numbers(op, values)
    if not any(flags):
        return values
    array_dtypes, number_types, shapes = [], [], []
    for position, value in enumerate(values):
        kind = type(value)
        if kind not in _SCALARS:
            shapes.append(value.shape)
            if position not in op.conditions:
                array_dtypes.append(value.dtype)
        elif position not in op.conditions:
            number_types.append(kind)
    dtype = _number_dtype(tuple(array_dtypes), tuple(number_types))
    shape = shapes[0] if len(shapes) == 1 else _broadcast_shape(shapes)
    if dtype is None or shape is None:
        return values
    return [Tensor._wrap(_filled_view(value, dtype, shape)) if flag else value for value, flag in zip(values, flags)]


@functools.lru_cache(maxsize=1024)
def _number_dtype(array_dtypes, number_types):
    """The float dtype arrays of `array_dtypes` and Python numbers of `number_types` promote to, or None.
    NEP 50 promotion depends on the numbers' types, not their values, so this is cached by types."""
    dtype = dtypes.promote(list(array_dtypes), [kind() for kind in number_types])
    return dtype if dtype.kind == "f" else None


def _filled_view(number, dtype, shape) -> np.ndarray:
    """A read-only array of `shape` whose every element is `number`: one element in memory, as
    np.broadcast_to(np.array(number, dtype), shape) gives, built in a tenth of its time."""
    view = np.ndarray(shape, dtype, np.array(number, dtype), 0, (0,) * len(shape))
    view.flags.writeable = False
    return view


def _broadcast_shape(shapes):
    """The operands' broadcast shape; None if they do not broadcast (the op then raises its error)."""
    try:
        return E.broadcast_shapes(*shapes)
    except E.ShapeError:
        return None


def apply_function(fn, args, kwargs):
    """A namespace function (sg.sum, sg.matmul, ...) on tensors through a cached plan, keyed by
    the tensors' shapes and dtypes and the other arguments; the usual eager call otherwise."""
    if kwargs and "out" in kwargs:
        rest = {key: value for key, value in kwargs.items() if key != "out"}
        return write_out(fn.__name__, kwargs["out"], args, lambda: apply_function(fn, args, rest)) \
            if kwargs["out"] is not None else apply_function(fn, args, rest)
    torch_meaning = _TORCH_MEANINGS.get(fn)
    if torch_meaning is not None and isinstance(args[0], Tensor):
        result = torch_meaning(args, kwargs)
        if result is not NotImplemented:
            return result
    if fn is _ALLCLOSE and isinstance(args[0], Tensor):  # torch.allclose(a, b): a Python bool, as PyTorch's
        return args[0].allclose(*args[1:], **kwargs)
    if fn is _MATMUL and len(args) == 2:
        args = as_torch_reads(*args)
    if len(args) == 2 and not kwargs and isinstance(args[0], Tensor) and isinstance(args[1], Tensor):
        return _on_tensors(fn, args, plans.tensor_function_plan_for)  # (a product's, without building a signature)
    tape = _tapes.tape
    call = None
    if tape is not None and tape.capture is not None and _mode.enabled:  # the plan this call ran before?
        call = _call_key(args, kwargs)
        result = _shortcut(tape, fn, call, args)
        if result is not None:
            return result
    signature, operands = [], []
    for arg in args:
        kind = type(arg)
        if kind is Tensor or isinstance(arg, Tensor):
            shape, dtype = arg._type
            signature.append((True, shape, dtype, None))
            operands.append(arg)
        elif arg is None or kind is bool:  # (the common ones, axis=None and keepdim=False: made once)
            signature.append(_FLAG_SIGNATURES[arg])
        elif kind in _PLAIN or (kind is tuple and all(type(item) is int for item in arg)):
            signature.append((False, kind, scalar_token(arg), arg))  # (Plan reads the value only)
        else:
            return fn(*args, **kwargs)
    keywords = ()
    if kwargs:
        if any(type(value) not in _PLAIN for value in kwargs.values()):
            return fn(*args, **kwargs)
        keywords = tuple(sorted((name, scalar_token(value), value) for name, value in kwargs.items()))
    plan = plans.function_plan_for(fn, tuple(signature), keywords)
    if plan is None:
        return fn(*args, **kwargs)
    return _run_plan(plan, operands, tape, fn, call)


_PLAIN = (int, float, bool, str, type(None))
_FLAG_SIGNATURES = {value: (False, type(value), scalar_token(value), value) for value in (None, False, True)}


def write_out(name, out, operands, compute):
    """PyTorch's `out=` (`torch.matmul(a, b, out=c)`): compute()'s result copied into `out` (resized first when
    its shape differs, converted when the result's dtype casts to its kind), which is returned; refused, as by
    PyTorch, where autograd would record the call (out= keeps no history)."""
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if _mode.enabled and any(isinstance(arg, Tensor) and arg._requires_grad for arg in (*operands, out)):
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic differentiation, "
                           "but one of the arguments requires grad.")
    result = compute()
    if not isinstance(result, Tensor):
        raise TypeError(f"{name}(): out= takes one tensor; this call gives {type(result).__name__}")
    if not np.can_cast(result.dtype, out.dtype, "same_kind"):  # (copy_ itself converts any dtype)
        raise RuntimeError(f"result type {result.dtype} can't be cast to the desired output type {out.dtype}")
    if out.shape != result.shape:
        out.resize_(result.shape)
    return out.copy_(result)


def _torch_extreme(reduce, elementwise, args, kwargs):
    """sg.max(t, dim) / sg.min(t, dim) on a tensor mean what torch.max(t, dim) means: the
    (values, indices) pair (so `_, predicted = torch.max(outputs, 1)` ported as is gets the
    indices, not two values), and sg.max(t, other) is the elementwise maximum. NumPy's spelling
    with `axis=` keeps NumPy's meaning, the values (and sg.max(t) NumPy's path: NotImplemented)."""
    if len(args) == 1 and "dim" not in kwargs:
        return NotImplemented
    if len(args) == 2 and isinstance(args[1], Tensor) and not kwargs:
        return elementwise(*args)
    names = ("dim", "keepdim")
    bound = dict(zip(names, args[1:]), **kwargs)
    unknown = set(bound) - set(names)
    if len(args) > 3 or unknown:
        raise TypeError(f"{reduce.__name__}(input, dim, keepdim=False) got unexpected arguments "
                        f"{sorted(unknown) if unknown else args[3:]}")
    return reduce(args[0], bound["dim"], bound.get("keepdim", False))


def _rot90(t, k=1, dims=(0, 1), axes=None):
    """torch.rot90's copy of sg.rot90(t, k, axes) (NumPy's rot90 is a view)."""
    return t.rot90(k, axes or dims)


def _flipped_dims(t, axis=None, dims=None):
    """torch.flip's dims (or NumPy's axis, None for all) of sg.flip(t, ...)."""
    chosen = dims if dims is not None else axis
    return tuple(range(t.ndim)) if chosen is None else chosen


# A namespace function on a tensor whose PyTorch meaning differs from NumPy's: its PyTorch form (NotImplemented:
# NumPy's path). sg.flip/fliplr/flipud copy, as torch's do (NumPy's flips are views: a write to one changed t).
_TORCH_MEANINGS = {
    sgnp.max.__wrapped__: functools.partial(_torch_extreme, Tensor.max, sgnp.maximum),
    sgnp.min.__wrapped__: functools.partial(_torch_extreme, Tensor.min, sgnp.minimum),
    sgnp.flip.__wrapped__: lambda args, kwargs: Tensor.flip(args[0], _flipped_dims(*args, **kwargs)),
    sgnp.fliplr.__wrapped__: lambda args, kwargs: Tensor.flip(args[0], 1),
    sgnp.flipud.__wrapped__: lambda args, kwargs: Tensor.flip(args[0], 0),
    sgnp.rot90.__wrapped__: lambda args, kwargs: _rot90(*args, **kwargs)}
_ALLCLOSE = sgnp.allclose.__wrapped__

# sg.tanh(t), sg.sum(t, 1), ...: the namespace's functions replay cached plans on tensors.
Tensor.__sg_elementwise__ = staticmethod(elementwise_on_tensors)
Tensor.__sg_function__ = staticmethod(apply_function)
Tensor.__sg_out__ = staticmethod(write_out)
Tensor.at = property(IndexUpdateHelper)  # t.at[key].set(v) ...: JAX's functional updates, as on traced values
# sg.matmul, sg.sum and sg.mean without their dispatch, which the methods below and t.sum(), t.mean() skip: their
# first argument is a tensor, whose handler (apply_function) the dispatch would search for and find
_MATMUL, _SUM, _MEAN = sgnp.matmul.__wrapped__, sgnp.sum.__wrapped__, sgnp.mean.__wrapped__
plans.LABELS[_MATMUL] = plans.LABELS[sgnp.dot.__wrapped__] = matmul_grad_fn_label  # (dot of vectors: DotBackward0)


def _matmul(self, other):
    """self @ other straight to its plan (what sg.matmul's dispatch does, without its search for the handler)."""
    if isinstance(other, Tensor):
        self, other = as_torch_reads(self, other)
        return _on_tensors(_MATMUL, (self, other), plans.tensor_function_plan_for)
    return apply_function(_MATMUL, (self, other), {})


Tensor.__matmul__ = Tensor.matmul = Tensor.mm = _matmul
Tensor.__rmatmul__ = lambda self, other: apply_function(_MATMUL, (other, self), {})


def view_labelled(result, source, torch_name: str, overload=0):
    """labelled; a view that changes nothing is still a tensor of its own (`alias`)."""
    return labelled(alias(source) if result is source else result, torch_name, overload=overload)


def alias(source: "Tensor") -> "Tensor":
    """A view of all of source (an identity reshape): what PyTorch's view ops give when they change nothing (t[:],
    t.reshape(t.shape), squeeze() of no 1-sized axis), a tensor of its own sharing source's memory, version and
    history, so that requires_grad_, retain_grad or a hook on it are not source's."""
    return reshape_p(source, shape=source.shape)


def _full_extreme(x, reduce):
    """x.max() / x.min() (`reduce` sgnp.max or min) with PyTorch's gradient: shared among the ties or, where x holds
    NaN, among the NaNs (its evenly_distribute_backward; amax's rule gave every element NaN). Written in the graph,
    not by reading x, so a deferred step stays deferred; the extremum itself is taken over x with its NaNs hidden.
    (Five times the time of the plain reduction, so only where a gradient is recorded.)"""
    if x.dtype.kind != "f" or not (x.requires_grad and _mode.enabled):
        return reduce(x)
    nan = sgnp.isnan(x)
    count = sgnp.sum(nan).to(x.dtype)
    among_nans = sgnp.sum(sgnp.where(nan, x, 0.0)) / sgnp.maximum(count, 1.0)  # (NaN, its gradient 1/count each)
    hidden = np.inf if reduce is sgnp.min else -np.inf
    return sgnp.where(count > 0, among_nans, reduce(sgnp.where(nan, hidden, x)))


def labelled(result, torch_name: str, operands=None, overload=0):
    """Name result's grad_fn after the user-level op, PyTorch's name of it ('Mean' -> MeanBackward0; `overload`
    numbers PyTorch's forms of an op: mean(dim) is MeanBackward1), not after the last primitive; with the op's
    `operands`, its next_functions are theirs, not the last primitive's."""
    node = result._node if isinstance(result, Tensor) else None
    if node is not None:
        node.label = f"{torch_name}Backward{overload}"
        if operands is not None:
            parents = []
            for o in operands:  # (a loop: a generator expression is a call of its own on Python 3.11)
                parents.append(o._parent() if isinstance(o, Tensor) else None)
            node.rare().shown_parents = tuple(parents)
    return result


def _elementwise_method(op, reflected=False):
    ufunc = _ARITHMETIC.get(id(op))
    if ufunc is None:
        if reflected:
            return lambda self, other: elementwise_on_tensors(op, (other, self))

        def method(self, *args):
            if not args:
                return _on_tensors(op, (self,))
            if len(args) == 1:
                other = args[0]
                if isinstance(other, Tensor):
                    return _on_tensors(op, (self, other))
                if type(other) is int:  # a deferred step's `x ** 2`: its shortcut, without `_call_key`'s loop
                    result = _deferred_call(op, (None, (int, other)), (self, other))
                    if result is not None:
                        return result
            return elementwise_on_tensors(op, (self, *args))
        return method
    # + - * / with a Python float and nothing to record (`lr * w.grad`): one NumPy call, tried first
    if reflected:
        def reflected_arithmetic(self, other):
            result = _unrecorded_arithmetic(ufunc, other, self) if type(other) is float else None
            return elementwise_on_tensors(op, (other, self)) if result is None else result
        return reflected_arithmetic

    def arithmetic(self, *args):
        if len(args) == 1:
            other = args[0]
            if type(other) is float:
                result = _unrecorded_arithmetic(ufunc, self, other)
                if result is not None:
                    return result
            elif isinstance(other, Tensor):
                return _on_tensors(op, (self, other))
        return elementwise_on_tensors(op, (self, *args))
    return arithmetic


# Operators and unary methods (with PyTorch's names) replay cached elementwise plans.
# (`2 * b` is b * 2, as PyTorch computes it: the same values, and its grad_fn lists b's first in next_functions)
for _name, _op in {"__add__": E.add, "__radd__": E.add, "__sub__": E.subtract, "__mul__": E.multiply,
                   "__rmul__": E.multiply, "__truediv__": E.divide,
                   "__pow__": E.power, "__lt__": E.less, "__le__": E.less_equal, "__gt__": E.greater,
                   "__ge__": E.greater_equal, "__eq__": E.equal, "__ne__": E.not_equal, "__neg__": E.negative,
                   "__abs__": E.abs, "__and__": E.logical_and, "__or__": E.logical_or,
                   "__invert__": E.logical_not, "exp": E.exp, "log": E.log, "log1p": E.log1p, "expm1": E.expm1,
                   "sin": E.sin, "cos": E.cos, "tan": E.tan, "tanh": E.tanh, "sinh": E.sinh, "cosh": E.cosh,
                   "sigmoid": E.sigmoid, "relu": E.relu, "sqrt": E.sqrt, "abs": E.abs, "sign": E.sign,
                   "square": E.square, "reciprocal": E.reciprocal, "erf": E.erf, "asin": E.arcsin,
                   "acos": E.arccos, "atan": E.arctan, "softplus": E.softplus, "neg": E.negative,
                   "pow": E.power, "add": E.add, "sub": E.subtract, "mul": E.multiply, "div": E.divide,
                   "eq": E.equal, "ne": E.not_equal, "lt": E.less, "le": E.less_equal, "gt": E.greater,
                   "ge": E.greater_equal, "maximum": E.maximum, "minimum": E.minimum}.items():
    setattr(Tensor, _name, _elementwise_method(_op))
for _name, _op in {"__rsub__": E.subtract, "__rtruediv__": E.divide, "__rpow__": E.power}.items():
    setattr(Tensor, _name, _elementwise_method(_op, reflected=True))


def alpha_first(name, other, scaled, alpha):
    """(other, alpha) of add/sub and their in-place forms, which also take PyTorch's deprecated `t.add_(alpha,
    other)` (older tutorials' `p.data.add_(-learning_rate, p.grad.data)`): a number (or, as PyTorch reads one, a
    0-d tensor that does not require grad), then a tensor or a number."""
    if not scaled:
        return other, alpha
    number = isinstance(other, (int, float)) or (
        isinstance(other, Tensor) and other.ndim == 0 and not other.requires_grad)
    if len(scaled) == 1 and isinstance(scaled[0], (Tensor, int, float)) and number and alpha == 1:
        return scaled[0], other.item() if isinstance(other, Tensor) else other
    raise TypeError(f"{name}() takes a tensor other and a keyword alpha (or the deprecated number alpha, then a "
                    f"tensor), got {len(scaled) + 1} positional arguments: {type(other).__name__}, "
                    f"{', '.join(type(arg).__name__ for arg in scaled)}")


def _with_alpha(method, name):
    """add/sub with PyTorch's alpha: other scaled by alpha first."""
    def scaled(self, other, *deprecated, alpha=1):
        other, alpha = alpha_first(name, other, deprecated, alpha)
        check_alpha(self, other, alpha)
        return method(self, other if alpha == 1 else other * alpha)
    return scaled


def _with_rounding(method):
    """div with PyTorch's rounding_mode: None (true division), 'floor' (floor_divide), 'trunc' (toward zero, an
    integer quotient of integers)."""
    def div(self, other, *, rounding_mode=None):
        if rounding_mode is None:
            return method(self, other)
        if rounding_mode == "floor":
            return sgnp.floor_divide(self, other)
        if rounding_mode != "trunc":
            raise ValueError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                             f"'{rounding_mode}'")
        a, b = self.detach(), other.detach() if isinstance(other, Tensor) else other
        floor = sgnp.floor_divide(a, b)
        if dtypes.is_float(floor.dtype):
            return sgnp.trunc(method(self, other))
        # integers (no gradient): floor's quotient, one up where it rounded a negative one down; exact past 2**53,
        # where a float quotient is not, and 0 for a zero divisor as floor's
        rounded_down = sgnp.logical_and(sgnp.remainder(a, b) != 0, sgnp.less(a, 0) != sgnp.less(b, 0))
        return floor + sgnp.astype(rounded_down, floor.dtype)
    return div


Tensor.add, Tensor.sub = _with_alpha(Tensor.add, "add"), _with_alpha(Tensor.sub, "sub")
Tensor.div = _with_rounding(Tensor.div)


def tensor(data, requires_grad=False, dtype=None, device=None) -> Tensor:
    """A new leaf tensor holding a copy of `data` (Python floats and lists become float64)."""
    check_device(device)
    result = Tensor.__new__(Tensor)
    result._fill(data, requires_grad, dtype)
    return result


def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor sharing `array`'s memory, as torch.from_numpy (in-place ops write through)."""
    refuse_masked(array, "from_numpy")
    shared = Tensor._wrap(np.asarray(array).astype(dtypes.canonical(np.asarray(array).dtype), copy=False))
    shared._version.exposed = True  # NumPy may write it unseen: a deferred op reads a copy
    return shared


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """torch.as_tensor: `data` itself when it is a tensor of that dtype (else its conversion, recorded), a NumPy
    array's memory shared when no other dtype is asked (as from_numpy), otherwise a copy (as sg.tensor)."""
    check_device(device)
    if isinstance(data, Tensor):
        return data if dtype is None else data.to(dtype)
    if isinstance(data, np.ndarray) and (dtype is None or np.dtype(dtype) == dtypes.canonical(data.dtype)):
        return from_numpy(data)
    return tensor(data, dtype=dtype)


def cat(tensors, dim=0) -> Tensor:
    """torch.cat: sg.concatenate with PyTorch's name and `dim`."""
    return sgnp.concatenate(list(tensors), axis=dim)


def _index_array(index):
    return index._data if isinstance(index, Tensor) else np.asarray(index)


def int64_array(value) -> np.ndarray:
    """Indices, lengths or targets (a tensor, an array or a sequence) as an int64 array."""
    return _index_array(value).astype(np.int64)


def format_tensor(t: Tensor) -> str:
    """PyTorch's printed form: `tensor([1.0000, 2.5000], grad_fn=<MulBackward0>)`, laid out as torch/_tensor_str.py
    lays it out (sg.set_printoptions: by default 80 columns, the first and last 3 along each axis beyond 1000
    elements, 4 decimals). The float dtype is not shown
    (PyTorch shows float64 and symgrad would show float32: neither is the other's default)."""
    data = t._data
    summarize = data.size > OPTIONS.threshold
    fmt, width = _element_format(_summarized(data) if summarize else data)
    body = _nested_str(data, 7, summarize, lambda v: fmt(v).rjust(width), width) if data.size else "[]"
    extras = []
    if data.size == 0 and data.ndim != 1:
        extras.append(f"size={data.shape}")
    if not dtypes.is_float(data.dtype) and (data.dtype not in (dtypes.INT64, dtypes.BOOL) or data.size == 0):
        extras.append(f"dtype={data.dtype}")  # floats print alike, so examples print what PyTorch prints
    if t._node is not None:
        extras.append(f"grad_fn=<{t._node.name()}>")
    elif t._requires_grad:
        extras.append("requires_grad=True")
    text = "tensor(" + body
    line = len(text) - text.rfind("\n") + 1  # as PyTorch counts the last line
    for extra in extras:  # on the last line while it fits in the line width
        if line + len(extra) + 2 > OPTIONS.linewidth:
            text, line = text + ",\n" + " " * 7 + extra, 7 + len(extra)
        else:
            text, line = text + ", " + extra, line + len(extra) + 2
    return text + ")"


def _nested_str(data: np.ndarray, indent: int, summarize: bool, fmt, width: int) -> str:
    """torch's _tensor_str_with_formatter: rows of as many elements as fit in the line width, `...` for the
    middle."""
    if data.ndim == 0:
        return fmt(data[()])
    edge = OPTIONS.edgeitems
    long = summarize and data.shape[0] > 2 * edge
    if data.ndim == 1:
        items = ([fmt(v) for v in data[:edge]] + [" ..."] + [fmt(v) for v in data[-edge:]] if long
                 else [fmt(v) for v in data])
        per_line = max(1, (OPTIONS.linewidth - indent) // (width + 2))
        lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    rows = [_nested_str(row, indent + 1, summarize, fmt, width) for row in (data[:edge] if long else data)]
    if long:
        rows += ["..."] + [_nested_str(row, indent + 1, summarize, fmt, width) for row in data[-edge:]]
    return "[" + ("," + "\n" * (data.ndim - 1) + " " * (indent + 1)).join(rows) + "]"


def _element_format(shown: np.ndarray):
    """PyTorch's _Formatter: the element format and width, both from the nonzero finite values shown (a NaN, an
    inf or a zero does not widen the columns): scientific when they span more than 1e3 or reach 1e8 (or, unless
    all are whole, go below 1e-4), else `precision` decimals, or `3.` when all are whole; sci_mode forces or
    refuses scientific notation."""
    if not dtypes.is_float(shown.dtype):
        return str, max((len(str(v)) for v in shown.reshape(-1)), default=1)
    values = shown[np.isfinite(shown) & (shown != 0)]
    magnitudes = np.abs(values)
    integral = bool(np.all(np.equal(np.mod(values, 1), 0)))
    spread = magnitudes.size > 0 and (magnitudes.max() / magnitudes.min() > 1e3 or magnitudes.max() > 1e8)
    precision = OPTIONS.precision
    scientific = spread or (not integral and magnitudes.min() < 1e-4)
    if OPTIONS.sci_mode if OPTIONS.sci_mode is not None else scientific:
        fmt = lambda v: f"{v:.{precision}e}"  # noqa: E731
    else:
        fmt = (lambda v: f"{v:.0f}.") if integral else (lambda v: f"{v:.{precision}f}")
    return _finite_or_name(fmt), max((len(fmt(v)) for v in values), default=1)


def _summarized(data: np.ndarray) -> np.ndarray:
    """The elements PyTorch shows of a summarized tensor: the first and last edgeitems along each longer axis."""
    edge = OPTIONS.edgeitems
    for axis, size in enumerate(data.shape):
        if size > 2 * edge:
            data = np.concatenate([data.take(range(edge), axis), data.take(range(size - edge, size), axis)], axis)
    return data


def _finite_or_name(fmt):
    return lambda v: fmt(v) if np.isfinite(v) else ("nan" if np.isnan(v) else ("inf" if v > 0 else "-inf"))
