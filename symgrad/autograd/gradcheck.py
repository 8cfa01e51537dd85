"""`sg.autograd.gradcheck` and `gradgradcheck`, PyTorch's checks of a function of tensors (a custom Function's
backward, and its backward's backward): the Jacobians autograd gives against central finite differences, with
PyTorch's defaults (eps 1e-6, atol 1e-5, rtol 1e-3). Meant for float64 inputs, as PyTorch's."""
from __future__ import annotations

import numpy as np

from ..eager.tensor import ENGINE, Tensor


class GradcheckError(RuntimeError):
    """A Jacobian that differs from its finite differences (PyTorch's torch.autograd.gradcheck.GradcheckError)."""


def _tensors(value) -> tuple:
    return (value,) if isinstance(value, Tensor) else tuple(value)


def _differentiated(inputs) -> tuple:
    """The inputs as a tuple, PyTorch's ValueError when none requires grad (there would be nothing to check)."""
    inputs = _tensors(inputs)
    if not any(isinstance(value, Tensor) and value.requires_grad for value in inputs):
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of them have "
                         "requires_grad=True.")
    return inputs


def _differentiable(outputs) -> list:
    return [i for i, out in enumerate(outputs) if isinstance(out, Tensor) and out.dtype.kind in "fc"]


def _numerical(func, inputs, at, eps) -> list:
    """d outputs / d inputs[at] by central differences: per output, an (input size, output size) array."""
    base = inputs[at].detach().numpy()
    columns = []
    for k in range(base.size):
        sides = []
        for step in (eps, -eps):
            moved = base.copy()
            moved.flat[k] += step
            args = list(inputs)
            args[at] = Tensor._wrap(moved).requires_grad_(True)  # (gradgradcheck's func differentiates inside)
            outputs = _tensors(func(*args))
            sides.append([outputs[i].detach().numpy().ravel() for i in _differentiable(outputs)])
        columns.append([(plus - minus) / (2 * eps) for plus, minus in zip(*sides)])
    return [np.array([column[o] for column in columns]).reshape(base.size, columns[0][o].size)
            for o in range(len(columns[0]))] if columns else None


def _analytical(outputs, inputs, at) -> list:
    """d outputs / d inputs[at] by autograd, one backward per output element (a one-hot grad_output, as PyTorch's:
    the same backward each time, compiled once)."""
    jacobians = []
    for i in _differentiable(outputs):
        out, rows = outputs[i], []
        for j in range(out.numel()):
            one_hot = np.zeros(out.shape, out.dtype)
            one_hot.flat[j] = 1
            grad = ENGINE.grad(out, [inputs[at]], Tensor._wrap(one_hot), retain_graph=True, allow_unused=True)[0] \
                if out.requires_grad else None
            rows.append(np.zeros(inputs[at].shape) if grad is None else grad.detach().numpy())
        jacobians.append(np.array(rows).reshape(out.numel(), inputs[at].numel()).T)
    return jacobians


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, fast_mode=False) -> bool:
    """True when autograd's Jacobian of func at inputs (a tensor or a tuple) equals central differences for every
    input that requires grad and every floating output; otherwise GradcheckError (or False, raise_exception=False).
    `fast_mode=True` (PyTorch's check of random projections) is checked fully here, a stricter check."""
    inputs = _differentiated(inputs)
    outputs = _tensors(func(*inputs))
    for at, value in enumerate(inputs):
        if not (isinstance(value, Tensor) and value.requires_grad) or value.numel() == 0:
            continue
        numerical = _numerical(func, inputs, at, eps)
        for o, analytical in enumerate(_analytical(outputs, inputs, at)):
            if not np.allclose(analytical, numerical[o], rtol=rtol, atol=atol):
                if not raise_exception:
                    return False
                raise GradcheckError(f"Jacobian mismatch for output {o} with respect to input {at},\n"
                                     f"numerical:{numerical[o]}\nanalytical:{analytical}\n")
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
                  fast_mode=False) -> bool:
    """gradcheck of the gradients of func's outputs (weighted by grad_outputs, random normal ones when None) with
    respect to the inputs that require grad: the second derivatives a double backward computes."""
    inputs = _differentiated(inputs)
    outputs = _tensors(func(*inputs))
    wanted = [out for out in (outputs[i] for i in _differentiable(outputs)) if out.requires_grad]
    if grad_outputs is None:
        draws = np.random.default_rng(0)
        grad_outputs = tuple(Tensor._wrap(draws.standard_normal(out.shape)).requires_grad_(True) for out in wanted)
    grad_outputs = _tensors(grad_outputs)
    count = len(inputs)

    def gradients(*args):
        outs = _tensors(func(*args[:count]))
        outs = [out for out in (outs[i] for i in _differentiable(outs)) if out.requires_grad]
        differentiated = [x for x in args[:count] if isinstance(x, Tensor) and x.requires_grad]
        grads = ENGINE.grad(outs, differentiated, args[count:], create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(gradients, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol, raise_exception=raise_exception)
