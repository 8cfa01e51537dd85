"""Probes of elementwise fusion (passes/fuse.py) on chains of piecewise functions: compiled on both backends,
values and gradients against the uncompiled function and central finite differences."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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
    "cbrt of fmax": lambda v: sg.cbrt(sg.sqrt(sg.exp(sg.fmax(sg.cbrt(v), 0.25)))),  # cbrt's sign cases
    "xlogy of clip": lambda v: sg.scipy.special.xlogy(sg.clip(v, -1.0, 1.0), sg.abs(v) + 0.5),
}


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
@pytest.mark.parametrize("name", CHAINS)
def test_piecewise_chains_compile(name, backend):
    """F.hardtanh and F.relu6(v * 4) inside sg.compile raised RecursionError and ZeroDivisionError (from SymPy), a
    cbrt of an fmax AttributeError ('isnan' object has no attribute '_eval_as_set')."""
    chain = CHAINS[name]

    def loss(v):
        return sg.sum(chain(v) * RAMP)
    value, grad = sg.compile(sg.value_and_grad(loss), backend=backend)(X)
    np.testing.assert_allclose(value, loss(sg.tensor(X)).item(), rtol=1e-14)
    np.testing.assert_allclose(grad, sg.grad(loss)(X), rtol=1e-14)
    away = X + 0.01  # off the kinks, for finite differences
    np.testing.assert_allclose(sg.compile(sg.grad(loss), backend=backend)(away), numeric_grad(loss, [away], 0),
                               rtol=1e-6, atol=1e-8)


# Chains of piecewise and smooth ops applied to one another directly (test_random_programs squashes every operand
# through a sigmoid first, so a kink never reaches another's condition); 108 of 300 such programs crashed.
UNARY = {
    "abs": lambda ns, x: ns.abs(x), "clip": lambda ns, x: ns.clip(x, -1.5, 2.0), "sign": lambda ns, x: ns.sign(x),
    "floor": lambda ns, x: ns.floor(x), "round": lambda ns, x: ns.round(x), "sin": lambda ns, x: ns.sin(x),
    "tanh": lambda ns, x: ns.tanh(x), "square": lambda ns, x: ns.square(x), "affine": lambda ns, x: x * 3.0 - 1.0,
    "maximum": lambda ns, x: ns.maximum(x, 0.5), "minimum": lambda ns, x: ns.minimum(x, -0.5),
    "where": lambda ns, x: ns.where(x > 0.3, x, 2.0 * x), "log1p": lambda ns, x: ns.log1p(ns.abs(x)),
    "cbrt": lambda ns, x: ns.cbrt(x), "fmax": lambda ns, x: ns.fmax(x, 0.25),
}
BINARY = {"add": lambda ns, a, b: a + b, "multiply": lambda ns, a, b: a * b,
          "maximum": lambda ns, a, b: ns.maximum(a, b), "minimum": lambda ns, a, b: ns.minimum(a, b),
          "where": lambda ns, a, b: ns.where(a > b, a, b - 1.0)}
STEP = st.one_of(st.tuples(st.just("unary"), st.sampled_from(sorted(UNARY)), st.just(0)),
                 st.tuples(st.just("binary"), st.sampled_from(sorted(BINARY)), st.integers(0, 63)))
POINTS = np.array([[0.0, -1.5, 2.0, 0.3, -0.5], [1.7, -2.2, 0.49, 3.1, -0.01], [-4.0, 0.5, 1.0, -1.0, 2.6]])


def chain(ns, steps, x):
    values = [x]
    for kind, name, other in steps:
        if kind == "unary":
            values.append(UNARY[name](ns, values[-1]))
        else:
            values.append(BINARY[name](ns, values[-1], values[other % len(values)]))
    return ns.sum(values[-1] * np.linspace(-1.0, 1.0, x.size).reshape(x.shape))


@settings(max_examples=25, deadline=None, derandomize=True)
@given(steps=st.lists(STEP, min_size=2, max_size=9))
def test_random_piecewise_chains(steps):
    want = chain(np, steps, POINTS)
    grads = {}
    for backend in ("numpy", "llvm"):
        value, grads[backend] = sg.compile(sg.value_and_grad(lambda x: chain(sg, steps, x)), backend=backend)(POINTS)
        np.testing.assert_allclose(value, want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(grads["llvm"], grads["numpy"], rtol=1e-12, atol=1e-12)
