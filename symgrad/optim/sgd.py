"""SGD with momentum, dampening, Nesterov and weight decay: PyTorch's update formula."""
from __future__ import annotations

import numpy as np

from ..codegen.runtime import axpy_functions
from .adaptive import _direction
from .optimizer import Optimizer

_AXPY_SIZE = 32768  # from this many elements on, BLAS's axpy (a ctypes call, ~2.5 us) beats NumPy's two passes


class SGD(Optimizer):
    """p -= lr * d, where d is the gradient (plus weight_decay * p), through the momentum buffer if any."""

    group_keys = (
        "lr", "momentum", "dampening", "weight_decay", "nesterov", "maximize", "foreach", "differentiable", "fused",
    )

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, maximize=False,
                 **options):
        if lr < 0 or momentum < 0 or weight_decay < 0:
            raise ValueError(f"Invalid SGD hyperparameter: lr={lr}, momentum={momentum}, weight_decay={weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                                      nesterov=nesterov, maximize=maximize), **options)

    def _step_group(self, params, group):
        """Plain SGD (no momentum, no weight decay) updates each parameter in place, without a new array: a large
        contiguous one by BLAS's axpy (one pass, p + (-lr) * g mostly rounded once, as PyTorch's add_(g,
        alpha=-lr)), the others by NumPy's p - lr * g. The general path (a new value, then copied) for the rest."""
        lr = group["lr"]
        if group["momentum"] or group["weight_decay"] or lr.__class__ not in (float, int) or \
                type(self).formula is not SGD.formula or type(self).update is not Optimizer.update:
            return super()._step_group(params, group)
        axpy = axpy_functions()
        for p in params:
            data, grad = p._data, p.grad._data
            # (not with lr = 0: BLAS's axpy then returns at once, where p - 0 * g is NaN at an infinite gradient)
            function = axpy.get(data.dtype) if data.size >= _AXPY_SIZE and lr else None
            if function is not None and grad.dtype == data.dtype and grad.shape == data.shape and \
                    data.flags.c_contiguous and grad.flags.c_contiguous and data.flags.writeable and \
                    not np.may_share_memory(data, grad):
                function(data.size, lr if group["maximize"] else -lr, grad.ctypes.data, 1, data.ctypes.data, 1)
            elif group["maximize"]:
                np.add(data, lr * grad, out=data, casting="unsafe")
            else:
                np.subtract(data, lr * grad, out=data, casting="unsafe")
            p._version.value += 1

    def prepare(self, param, state, group):
        return group["lr"], group["weight_decay"], group["momentum"], 1 - group["dampening"]

    def buffers(self, state, group):
        return (state.get("momentum_buffer"),) if group["momentum"] else ()

    def store(self, state, buffers, group):
        if buffers:
            state["momentum_buffer"] = buffers[0]

    def structure(self, group):
        return "SGD", bool(group["weight_decay"]), bool(group["momentum"]), group["nesterov"], group["maximize"]

    def formula(self, param, grad, buffers, coefficients, group):
        lr, weight_decay, momentum, undamped = coefficients
        d = _direction(param, grad, weight_decay, group)
        if not group["momentum"]:
            return param - lr * d, ()
        buffer = d.copy() if buffers[0] is None else momentum * buffers[0] + undamped * d
        d = d + momentum * buffer if group["nesterov"] else buffer
        return param - lr * d, (buffer,)
