"""Probes of ahead-of-time artifacts against the JIT: the same numbers from every entry point."""
import numpy as np
import pytest

import symgrad as sg


def two_loops(x):
    """Forward runs two loop bodies; the gradient needs only the second (the first adds a constant)."""
    a = sg.fori_loop(0, 3, lambda i, c: c + 1.0, x)
    b = sg.fori_loop(0, 3, lambda i, c: c * 0.5, x)
    return sg.sum(a) + sg.sum(b) ** 2


def nonlinear_loop(x):
    """The gradient entry's loop body also returns the residual it saves: more outputs than forward's."""
    return sg.sum(sg.fori_loop(0, 3, lambda i, c: sg.sin(c) * 0.9 + x, x) ** 2)


@pytest.mark.parametrize("fn", [two_loops, nonlinear_loop])
def test_numpy_module_entries_keep_their_own_loop_bodies(fn, tmp_path):
    """Each entry of a NumPy-backend module numbers its loop bodies from _step_0: the gradient entry's
    body replaced forward's (forward gave 0.156 for 10.119, or failed to unpack the extra residual)."""
    x = np.array([0.3, -1.2, 2.0])
    value, grad = sg.compile(fn)(x), sg.grad(fn)(x)
    sg.aot.compile(fn, (x,), grad="x", out=str(tmp_path / "g"), backend="numpy")
    loaded = sg.load(str(tmp_path / "g"))
    np.testing.assert_allclose(loaded(x), value, rtol=1e-13)
    np.testing.assert_allclose(loaded.grad(x), grad, rtol=1e-13)
    sg.aot.compile(fn, (x,), grad="x", value_and_grad=True, out=str(tmp_path / "vg"), backend="numpy")
    loaded = sg.load(str(tmp_path / "vg"))
    np.testing.assert_allclose(loaded(x), value, rtol=1e-13)
    got_value, got_grad = loaded.value_and_grad(x)
    np.testing.assert_allclose(got_value, value, rtol=1e-13)
    np.testing.assert_allclose(got_grad, grad, rtol=1e-13)
