"""`sg.autograd.functional`: PyTorch's jacobian, hessian, vjp, jvp, hvp and vhp of a function of tensors.

As torch.autograd.functional does, each calls the function on tensors and differentiates with the eager
engine (`autograd.grad`; forward products by its double-backward trick), so any function of tensors works:
tensor methods, nn modules, custom Functions. symgrad's transforms (sg.jacrev, sg.jvp...) trace the function
with traced values, which have NumPy's methods, not a tensor's (`x.exp()`); the engine derives and compiles
the same adjoint graphs (a Jacobian's rows share one, compiled from the second row on). Outputs, shapes,
nesting, errors and `strict` are PyTorch's; `vectorize` and `strategy` are accepted and give the same values.

Given traced values (a function of arrays inside sg.compile, sg.grad...), each is symgrad's transform of the
same name (`_traced`): there the function is traced anyway, and its results are traced values, differentiable.
"""
from __future__ import annotations

import math

import numpy as np

from .. import numpy_api as sgnp
from ..core import Tracer, UnsupportedOpError
from ..eager.mode import enable_grad, is_grad_enabled, set_grad_enabled
from ..eager.tensor import ENGINE, Tensor

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


def _transform(name):
    """symgrad's transform `name` (sg.jacrev...), imported when first needed: eager code does not load them."""
    from .. import transforms
    return getattr(transforms, name)


def _traced(inputs) -> bool:
    """Whether the inputs are traced values (not tensors): the transforms then compute the result."""
    return any(isinstance(t, Tracer) and not isinstance(t, Tensor) for t in (inputs if isinstance(inputs, tuple)
                                                                              else (inputs,)))


def _transformed(fn_name, func, inputs, v, strict, compute):
    """compute(func, inputs as a tuple, argnums, v as a tuple) with symgrad's transforms, the result unpacked as
    PyTorch's: inside a trace every result is differentiable (create_graph holds), and strict has nothing to
    check it against (no requires_grad), so asking for it is an error."""
    if strict:
        raise UnsupportedOpError(f"autograd.functional.{fn_name}(strict=True) on traced values: inside a trace "
                                 "nothing says which values require grad; call it on tensors, or without strict")
    is_tuple = isinstance(inputs, tuple)
    inputs = inputs if is_tuple else (inputs,)
    argnums = tuple(range(len(inputs))) if is_tuple else 0
    vs = None if v is None else (v if isinstance(v, tuple) else (v,))
    return compute(func, inputs, argnums, vs, is_tuple)


def _as_tuple(value, what, fn_name):
    """(whether value was a tuple, value as a tuple of tensors), as PyTorch checks them."""
    is_tuple = isinstance(value, tuple)
    values = value if is_tuple else (value,)
    for i, el in enumerate(values):
        if not isinstance(el, Tensor):
            where = f"the value at index {i}" if is_tuple else f"the given {what}"
            raise TypeError(f"The {what} given to {fn_name} must be either a Tensor or a tuple of Tensors but "
                            f"{where} has type {type(el)}.")
    return is_tuple, values


def _outputs(func, inputs, fn_name, strict):
    """func(*inputs) as (whether a tuple, tuple of tensors), checked for strict mode."""
    is_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", fn_name)
    if strict:
        for i, out in enumerate(outputs):
            if not out.requires_grad:
                raise RuntimeError(f"Output {i} of the user-provided function does not require gradients. The "
                                   "outputs must be computed in a differentiable manner from the input when running "
                                   "in strict mode.")
    return is_tuple, outputs


def _prepared(inputs, create_graph, need_graph):
    """New tensors for the inputs (PyTorch's _grad_preprocess): still attached to their history under
    create_graph, else detached leaves that require grad when the graph is needed."""
    if create_graph:
        return tuple(t.view_as(t) if t.requires_grad else t.detach().requires_grad_(need_graph) for t in inputs)
    return tuple(t.detach().requires_grad_(need_graph) for t in inputs)


def _finished(tensors, create_graph):
    """Results without history unless create_graph (nested tuples kept)."""
    if isinstance(tensors, Tensor):
        return tensors if create_graph else tensors.detach()
    return tuple(_finished(t, create_graph) for t in tensors)


def _unpacked(result, unpack):
    """Undo _as_tuple: unpack is a flag, or a pair (outer, inner) for tuples of tuples."""
    if isinstance(unpack, tuple):
        if not unpack[1]:
            result = tuple(el[0] for el in result)
        unpack = unpack[0]
    return result if unpack else result[0]


def _checked_v(v, reference, is_tuple, create_graph, fn_name):
    """v as a tuple of detached tensors of the reference's sizes; None only for one single-element reference
    (the outputs for vjp, else the inputs)."""
    if v is None:
        _refuse_none_v(reference, fn_name)
        return None
    _, v = _as_tuple(v, "v", fn_name)
    v = _prepared(v, create_graph, need_graph=False)
    if len(v) != len(reference):
        raise RuntimeError(f"v is a tuple of invalid length: should be {len(reference)} but got {len(v)}."
                           if is_tuple else "The given v should contain a single Tensor.")
    for i, (el, ref) in enumerate(zip(v, reference)):
        if el.shape != ref.shape:
            prefix = f"Entry {i} in " if is_tuple else ""
            raise RuntimeError(f"{prefix}v has invalid size: should be {ref.shape} but got {el.shape}.")
    return v


def _refuse_none_v(reference, fn_name):
    """PyTorch's error for v=None unless the reference (the outputs for vjp, else the inputs) is one element."""
    if len(reference) != 1 or math.prod(reference[0].shape) != 1:
        raise RuntimeError("The vector v can only be None if the user-provided function returns a single Tensor "
                           "with a single element." if fn_name == "vjp" else
                           "The vector v can only be None if the input to the user-provided function is a "
                           "single Tensor with a single element.")


def _grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None):
    """autograd.grad over the outputs that require grad (None per input when none does, or where unused)."""
    grad_outputs = (None,) * len(outputs) if grad_outputs is None else grad_outputs
    pairs = [(out, g) for out, g in zip(outputs, grad_outputs) if out is not None and out.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return ENGINE.grad([out for out, _ in pairs], list(inputs), [g for _, g in pairs], retain_graph=retain_graph,
                       create_graph=create_graph, allow_unused=True)


_INDEPENDENT = {
    "back": "The output of the user-provided function is independent of input {i}. This is not allowed in strict "
            "mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the grad_outputs when "
                  "using the double backward trick to compute forward mode gradients. This is not allowed in strict "
                  "mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. This is not allowed in "
                   "strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {i} in the "
                         "grad_jacobian. This is not allowed in strict mode as it prevents from using the double "
                         "backward trick to replace forward mode AD.",
}


def _zeros_for_none(grads, refs, strict, create_graph, stage):
    """Zeros in place of a None gradient (an error in strict mode), as PyTorch's _fill_in_zeros."""
    filled = []
    for i, (g, ref) in enumerate(zip(grads, refs)):
        if g is None:
            if strict:
                raise RuntimeError(_INDEPENDENT[stage].format(i=i))
            g = _zeros(ref)
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of input {i}. This is not "
                               "allowed in strict mode when create_graph=True.")
        filled.append(g)
    return tuple(filled)


def _zeros(ref):
    return Tensor._wrap(np.zeros(ref.shape, ref.dtype))


def _require_independent(grads, strict, kind):
    """strict mode: each gradient computed with create_graph must depend on the inputs."""
    if not strict:
        return
    for i, g in enumerate(grads):
        if g is None:
            raise RuntimeError(f"The output of the user-provided function is independent of input {i}. This is not "
                               "allowed in strict mode.")
        if not g.requires_grad:
            if kind == "grad_inputs":
                raise RuntimeError(f"The gradient with respect to input {i} is independent of the inputs of the "
                                   "user-provided function. This is not allowed in strict mode.")
            if kind == "hessian":
                raise RuntimeError(f"The hessian of the user-provided function with respect to input {i} is "
                                   "independent of the input. This is not allowed in strict mode. You should ensure "
                                   "that your function is thrice differentiable and that the hessian depends on the "
                                   "inputs.")
            raise RuntimeError(f"While computing the hessian, found that the jacobian of the user-provided function "
                               f"with respect to input {i} is independent of the input. This is not allowed in strict "
                               "mode. You should ensure that your function is twice differentiable and that the "
                               "jacobian depends on the inputs (this would be violated by a linear function for "
                               "example).")


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(*inputs), v^T J): one gradient per input, shaped as the inputs."""
    if _traced(inputs):
        return _transformed("vjp", func, inputs, v, strict, _traced_vjp)
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _prepared(inputs, create_graph, need_graph=True)
        is_outputs_tuple, outputs = _outputs(func, inputs, "vjp", strict)
        v = _checked_v(v, outputs, is_outputs_tuple, create_graph, "vjp")
    with set_grad_enabled(create_graph or is_grad_enabled()):
        grads = _grad(outputs, inputs, v, create_graph=create_graph)
        result = _zeros_for_none(grads, inputs, strict, create_graph, "back")
    return (_unpacked(_finished(outputs, create_graph), is_outputs_tuple),
            _unpacked(_finished(result, create_graph), is_inputs_tuple))


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(*inputs), J v): one product per output, shaped as the outputs (the double-backward trick)."""
    if _traced(inputs):
        return _transformed("jvp", func, inputs, v, strict, _traced_jvp)
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _prepared(inputs, create_graph, need_graph=True)
        v = _checked_v(v, inputs, is_inputs_tuple, create_graph, "jvp")
        is_outputs_tuple, outputs = _outputs(func, inputs, "jvp", strict)
        # the backward is linear in these, so their value (zeros) does not matter
        grad_outputs = tuple(Tensor._wrap(np.zeros(out.shape, out.dtype)).requires_grad_() for out in outputs)
        grad_inputs = _grad(outputs, inputs, grad_outputs, create_graph=True)
        _require_independent(grad_inputs, strict, "grad_inputs")
    with set_grad_enabled(create_graph or is_grad_enabled()):
        grads = _grad(grad_inputs, grad_outputs, v, create_graph=create_graph)
        result = _zeros_for_none(grads, outputs, strict, create_graph, "back_trick")
    return (_unpacked(_finished(outputs, create_graph), is_outputs_tuple),
            _unpacked(_finished(result, create_graph), is_outputs_tuple))


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """The Jacobian of func at inputs: for output i and input j, a tensor of shape output i + input j; a single
    tensor for one input and one output, a tuple over the one that is a tuple, a tuple of tuples for both."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your function '
                             'has more outputs than inputs, "forward-mode" tends to be more performant. Otherwise, '
                             'prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError('torch.autograd.functional.jacobian: `create_graph=True` and `strategy='
                                      '"forward-mode"` are not supported together (yet). Please either set '
                                      '`create_graph=False` or `strategy="reverse-mode"`.')
        if strict:
            raise RuntimeError('torch.autograd.functional.jacobian: `strict=True` and `strategy="forward-mode"` are '
                               'not supported together (yet). Please either set `strict=False` or '
                               '`strategy="reverse-mode"`.')
        if not vectorize:
            raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse Hessian is only "
                                      "implemented for `vectorize=True`.")
    if vectorize and strict:
        raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not "
                           "supported together. Please either set `strict=False` or `vectorize=False`.")
    if _traced(inputs):
        return _transformed("jacobian", func, inputs, None, strict,
                            lambda f, inp, nums, _, __: _transform("jacrev")(f, nums)(*inp))
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _prepared(inputs, create_graph, need_graph=True)
        is_outputs_tuple, outputs = _outputs(func, inputs, "jacobian", strict)
        blocks = tuple(_jacobian_rows(i, out, inputs, create_graph, strict) for i, out in enumerate(outputs))
        if strategy == "forward-mode":  # PyTorch's forward mode gives the output's dtype
            blocks = tuple(tuple(b.to(out.dtype) for b in row) for row, out in zip(blocks, outputs))
    return _unpacked(_finished(blocks, create_graph), (is_outputs_tuple, is_inputs_tuple))


def _jacobian_rows(index, out, inputs, create_graph, strict) -> tuple:
    """Per input, d out / d input of shape out.shape + input.shape: one backward per element of out, each seeded
    with a row of the identity (so every row has the same adjoint graph, compiled once)."""
    rows = [[] for _ in inputs]
    count = out.numel()
    for k in range(count):
        seed = np.zeros(count, out.dtype)
        seed[k] = 1
        grads = _grad((out,), inputs, (Tensor._wrap(seed.reshape(out.shape)),), create_graph=create_graph,
                      retain_graph=True)
        for j, (g, inp) in enumerate(zip(grads, inputs)):
            if g is None:
                if strict:
                    raise RuntimeError(f"Output {index} of the user-provided function is independent of input {j}. "
                                       "This is not allowed in strict mode.")
                g = _zeros(inp)
            elif strict and create_graph and not g.requires_grad:
                raise RuntimeError(f"The jacobian of the user-provided function is independent of input {index}. "
                                   "This is not allowed in strict mode when create_graph=True.")
            rows[j].append(g)
    return tuple(_stacked(r, out.shape + inp.shape, inp) for r, inp in zip(rows, inputs))


def _stacked(rows, shape, inp):
    if not rows:  # an output with no elements: its Jacobian is empty
        return Tensor._wrap(np.zeros(shape, inp.dtype))
    return sgnp.stack(rows, axis=0).reshape(shape)


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a function returning one element: the Jacobian of its gradient. A tensor for one input,
    else a tuple of tuples with [i][j] of shape input i + input j."""
    if _traced(inputs):
        return _transformed("hessian", func, inputs, None, strict, _traced_hessian)
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def single_output(*inp):
        return _scalar_output(func, inp, "hessian", strict)[0].squeeze()

    def gradient(*inp):
        if outer_jacobian_strategy == "forward-mode":
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(single_output, inp, create_graph=True)
        _require_independent(jac, strict, "jacobian")
        return jac

    result = jacobian(gradient, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize,
                      strategy=outer_jacobian_strategy)
    return _unpacked(result, (is_inputs_tuple, is_inputs_tuple))


def _scalar_output(func, inputs, fn_name, strict):
    is_outputs_tuple, outputs = _outputs(func, inputs, fn_name, strict)
    _refuse_not_single(is_outputs_tuple, outputs[0].shape, fn_name)
    return outputs


def _refuse_not_single(is_tuple, shape, fn_name):
    """PyTorch's errors for a function given to hessian, hvp or vhp that returns a tuple or several elements."""
    if is_tuple:
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if math.prod(shape) != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should contain a single element")


def _gradient_of_one_element(func, inputs, v, create_graph, strict, fn_name):
    """vhp's and hvp's start (under enable_grad): the inputs prepared, v checked against them, the function's one
    output and its gradient, kept differentiable. Returns (whether inputs was a tuple, inputs, v, outputs, gradient)."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", fn_name)
    inputs = _prepared(inputs, create_graph, need_graph=True)
    v = _checked_v(v, inputs, is_inputs_tuple, create_graph, fn_name)
    outputs = _scalar_output(func, inputs, fn_name, strict)
    jac = _grad(outputs, inputs, create_graph=True)
    _require_independent(jac, strict, "jacobian")
    return is_inputs_tuple, inputs, v, outputs, jac


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(*inputs), v^T H) of a function returning one element, shaped as the inputs."""
    if _traced(inputs):
        return _transformed("vhp", func, inputs, v, strict, _traced_vhp)
    with enable_grad():
        is_inputs_tuple, inputs, v, outputs, jac = _gradient_of_one_element(func, inputs, v, create_graph, strict,
                                                                            "vhp")
    with set_grad_enabled(create_graph or is_grad_enabled()):
        grads = _grad(jac, inputs, v, create_graph=create_graph)
        result = _zeros_for_none(grads, inputs, strict, create_graph, "double_back")
    return _finished(outputs, create_graph)[0], _unpacked(_finished(result, create_graph), is_inputs_tuple)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(*inputs), H v) of a function returning one element, shaped as the inputs (the double-backward
    trick over vhp, as PyTorch computes it)."""
    if _traced(inputs):
        return _transformed("hvp", func, inputs, v, strict, _traced_hvp)
    with enable_grad():
        is_inputs_tuple, inputs, v, outputs, jac = _gradient_of_one_element(func, inputs, v, create_graph, strict,
                                                                            "hvp")
        grad_jac = tuple(Tensor._wrap(np.zeros(t.shape, t.dtype)).requires_grad_() for t in inputs)
        double_back = _grad(jac, inputs, grad_jac, create_graph=True)
        _require_independent(jac, strict, "hessian")
    with set_grad_enabled(create_graph or is_grad_enabled()):
        grads = _grad(double_back, grad_jac, v, create_graph=create_graph)
        result = _zeros_for_none(grads, inputs, strict, create_graph, "double_back_trick")
    return _finished(outputs, create_graph)[0], _unpacked(_finished(result, create_graph), is_inputs_tuple)


# ----------------------------------------------------------------------------- on traced values: the transforms

def _traced_vjp(func, inputs, argnums, vs, is_tuple):
    out, pullback = _transform("vjp")(func, *inputs)
    vs = _default_v(vs, out if isinstance(out, tuple) else (out,), "vjp")
    cotangent = vs if isinstance(out, tuple) else vs[0]
    grads = pullback(cotangent)
    return out, grads if is_tuple else grads[0]


def _default_v(vs, reference, fn_name):
    """vs, or for None a one for the single element of the reference (PyTorch's error if it is not one)."""
    if vs is not None:
        return vs
    _refuse_none_v(reference, fn_name)
    return (sgnp.ones_like(reference[0]),)


def _traced_jvp(func, inputs, argnums, vs, is_tuple):
    tangents = _default_v(vs, inputs, "jvp")
    return _transform("jvp")(func, inputs, tangents)


def _traced_hessian(func, inputs, argnums, vs, is_tuple):
    """sg.hessian of func's one element as a 0-d value, as the eager path squeezes it (a (1,) output gave a
    (1, n, n) Hessian, a tuple or several elements a result where PyTorch raises)."""
    def single_output(*values):
        out = func(*values)
        _refuse_not_single(isinstance(out, tuple), getattr(out, "shape", ()), "hessian")
        return sgnp.reshape(out, ())

    return _transform("hessian")(single_output, argnums)(*inputs)


def _traced_vhp(func, inputs, argnums, vs, is_tuple):
    out, pullback = _transform("vjp")(_transform("grad")(func, argnums), *inputs)
    tangents = _default_v(vs, inputs, "vhp")
    grads = pullback(tangents if is_tuple else tangents[0])
    return func(*inputs), grads if is_tuple else grads[0]


def _traced_hvp(func, inputs, argnums, vs, is_tuple):
    tangents = _default_v(vs, inputs, "hvp")
    products = _transform("hvp")(func, inputs, tangents)
    return func(*inputs), products if is_tuple else products[0]
