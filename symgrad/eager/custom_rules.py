"""A custom_jvp / custom_vjp function called on eager tensors in a form the recorder cannot take as one node
(several outputs, tensors inside a pytree, nondiff_argnums): one autograd.Function whose backward is sg.vjp of the
function on the tensors' arrays, so the tensors' gradient follows the user's rule as sg.grad's does (running the
function's own ops would differentiate them instead: another, silently wrong, gradient). Installed on Tensor as
`__sg_custom_rule__`, which symgrad.custom_derivatives looks up on its arguments' types (it is below eager)."""
from __future__ import annotations

from .. import pytree
from .function import Function
from .mode import is_grad_enabled
from .tensor import Tensor


def call_with_rules(function, args):
    """function(*args) (a custom_jvp / custom_vjp function) on eager tensors: its results are recorded as one
    Function of the tensors that require grad, whose backward is the function's rule (through sg.vjp)."""
    leaves, tree = pytree.flatten(list(args))
    differentiable = [i for i, leaf in enumerate(leaves) if isinstance(leaf, Tensor) and leaf.requires_grad
                      and leaf.dtype.kind in "fc"]
    values = [leaf.detach().numpy() if isinstance(leaf, Tensor) else leaf for leaf in leaves]

    def on_arrays(*arrays):
        filled = list(values)
        for i, array in zip(differentiable, arrays):
            filled[i] = array
        return function(*pytree.unflatten(tree, filled))

    if not differentiable or not is_grad_enabled():  # nothing to record: the function on the arrays
        out_leaves, out_tree = pytree.flatten(on_arrays())
        return pytree.unflatten(out_tree, [Tensor(leaf) for leaf in out_leaves])
    return _recorded(on_arrays, [leaves[i] for i in differentiable])


def _recorded(fn, tensors):
    """fn(*arrays) (arrays in, a pytree of arrays out, differentiable by sg's transforms) on `tensors`: the results
    as one Function whose backward is sg.vjp of fn, itself recorded so under create_graph (every order of
    derivative is then sg.grad's)."""
    from ..transforms import vjp  # (the transforms load on first use)
    out_tree = []

    class CustomRule(Function):
        @staticmethod
        def forward(ctx, *inputs):
            out_leaves, tree = pytree.flatten(fn(*(t.numpy() for t in inputs)))
            out_tree.append(tree)
            ctx.save_for_backward(*inputs)
            results = tuple(Tensor(leaf) for leaf in out_leaves)
            ctx.mark_non_differentiable(*(r for r in results if r.dtype.kind not in "fc"))
            return results

        @staticmethod
        def backward(ctx, *grads):
            inputs = ctx.saved_tensors

            def pullback(*arrays):
                cotangent = pytree.unflatten(out_tree[0], list(arrays[len(inputs):]))
                return tuple(vjp(fn, *arrays[:len(inputs)])[1](cotangent))

            return tuple(_recorded(pullback, [*inputs, *grads]))

    CustomRule.__name__ = f"{getattr(fn, '__name__', 'custom')}Backward"
    results = CustomRule.apply(*tensors)  # (forward gives out_tree its value)
    return pytree.unflatten(out_tree[0], list(results))


Tensor.__sg_custom_rule__ = staticmethod(call_with_rules)  # (custom_derivatives finds it on an argument's type)
