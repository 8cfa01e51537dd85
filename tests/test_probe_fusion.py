"""Probes of elementwise fusion (passes/fuse.py) on chains of piecewise functions: compiled on both backends,
values and gradients against the uncompiled function and central finite differences."""
import numpy as np
import pytest

import symgrad as sg
from gradcheck import numeric_grad

F = sg.nn.functional
X = np.array([[-9.0, -3.0, -2.0, -1.0, -0.25, 0.0], [0.3, 0.5, 1.0, 2.0, 6.0, 40.0]])
RAMP = np.linspace(-1.0, 2.0, X.size).reshape(X.shape)
CHAINS = {  # a Piecewise substituted into another's conditions made SymPy recurse without end or divide by zero
    "hardtanh": lambda v: F.hardtanh(v, -2.0, 2.0) ** 2,
    "relu6 of a product": lambda v: F.relu6(v * 4.0),
    "hardtanh of hardtanh": lambda v: F.hardtanh(F.hardtanh(v * 3.0, -5.0, 5.0) - 1.0, -1.0, 1.0),
    "clip of clip": lambda v: sg.clip(sg.clip(v, -2.0, 2.0) * 3.0, -1.0, 1.0),
    "where on a clip": lambda v: sg.where(sg.clip(v, -1.0, 1.0) > 0.5, v, -v),
    "hardswish of relu6": lambda v: F.hardswish(F.relu6(v) - 3.0),
}


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
@pytest.mark.parametrize("name", CHAINS)
def test_piecewise_chains_compile(name, backend):
    """F.hardtanh and F.relu6(v * 4) inside sg.compile raised RecursionError and ZeroDivisionError (from SymPy)."""
    chain = CHAINS[name]

    def loss(v):
        return sg.sum(chain(v) * RAMP)
    value, grad = sg.compile(sg.value_and_grad(loss), backend=backend)(X)
    np.testing.assert_allclose(value, loss(sg.tensor(X)).item(), rtol=1e-14)
    np.testing.assert_allclose(grad, sg.grad(loss)(X), rtol=1e-14)
    away = X + 0.01  # off the kinks, for finite differences
    np.testing.assert_allclose(sg.compile(sg.grad(loss), backend=backend)(away), numeric_grad(loss, [away], 0),
                               rtol=1e-6, atol=1e-8)
