"""`sg.check_grads`: a function's derivatives checked against central finite differences.

As JAX's and autograd's checkers: forward mode compares `jvp` with the difference quotient
along a random direction; reverse mode compares `<vjp(u), v>` with `<u, jvp(v)>` (the
numerical one), which checks the pullback without building a Jacobian. Higher orders check
the derivative functions themselves, recursively. Directions come from a fixed seed, so a
failure is reproducible.
"""
from __future__ import annotations

import numpy as np

from . import pytree
from .guards import concrete_array
from .transforms import jvp, vjp

# float dtype -> (step, default tolerance): a step near the cube root of the dtype's epsilon
# keeps truncation (step**2) and rounding (eps / step) errors balanced.
_STEP_AND_TOLERANCE = {np.dtype(np.float64): (1e-6, 1e-5), np.dtype(np.float32): (1e-3, 2e-2)}


def check_grads(f, args, order=2, modes=("fwd", "rev"), atol=None, rtol=None, eps=None):
    """Raise AssertionError unless f's derivatives at args, up to `order`, in `modes` ("fwd", "rev"),
    agree with central finite differences. Tolerances and step follow the widest float dtype of args. An eager
    tensor among args is its values, as for a transform's argument (even while it requires grad)."""
    args = _map(lambda leaf: concrete_array(leaf) if hasattr(leaf, "_exposed_array") else leaf, tuple(args))
    modes = (modes,) if isinstance(modes, str) else tuple(modes)  # modes="rev" works in JAX too
    unknown = set(modes) - {"fwd", "rev"}
    if unknown:
        raise ValueError(f"check_grads: unknown modes {sorted(unknown)}; use 'fwd' and/or 'rev'")
    if order < 1:
        raise ValueError(f"check_grads: order must be at least 1, got {order}")
    step, tolerance = _step_and_tolerance(args)
    tolerances = (atol if atol is not None else tolerance, rtol if rtol is not None else tolerance)
    _check(f, args, order, tuple(modes), tolerances, eps if eps is not None else step, np.random.default_rng(0))


def _step_and_tolerance(args):
    float_dtypes = [np.asarray(leaf).dtype for leaf in pytree.flatten(list(args))[0]
                    if np.asarray(leaf).dtype.kind == "f"]
    if not float_dtypes:
        raise TypeError("check_grads: no float argument to differentiate")
    return _STEP_AND_TOLERANCE[max(float_dtypes, key=lambda d: d.itemsize)]


def _check(f, args, order, modes, tolerances, eps, rng, level=1):
    """Check the derivative of order `level` of the original function (f is its derivative of order level - 1)."""
    count = len(args)
    if "fwd" in modes:
        tangents = _random_like(args, rng)
        _, analytic = jvp(f, args, tangents)
        _assert_close(analytic, numerical_jvp(f, args, tangents, eps), tolerances, f"forward mode (jvp), order {level}")
        if level < order:
            _check(lambda *primals_and_tangents: jvp(f, primals_and_tangents[:count], primals_and_tangents[count:])[1],
                   args + tuple(tangents), order, modes, tolerances, eps, rng, level + 1)
    if "rev" in modes:
        out, pullback = vjp(f, *args)
        cotangent = _random_like(out, rng)
        directions = _random_like(args, rng)
        reverse = _dot(pullback(cotangent), directions)
        forward = _dot(cotangent, numerical_jvp(f, args, directions, eps))
        _assert_close(reverse, forward, tolerances, f"reverse mode (vjp), order {level}")
        if level < order:
            _check(lambda *args_and_ct: vjp(f, *args_and_ct[:count])[1](args_and_ct[count]),
                   args + (cotangent,), order, modes, tolerances, eps, rng, level + 1)


def numerical_jvp(f, args, tangents, eps):
    """(f(args + eps * tangents) - f(args - eps * tangents)) / (2 eps), leaf by leaf; integer leaves fixed."""
    def shifted(sign):
        return f(*_map(lambda a, t: a + sign * eps * t if _is_float(a) else a, args, tangents))

    plus, minus = pytree.flatten(shifted(1.0)), pytree.flatten(shifted(-1.0))
    return pytree.unflatten(plus[1], [(np.asarray(p, np.float64) - np.asarray(m, np.float64)) / (2 * eps)
                                      for p, m in zip(plus[0], minus[0])])


def _is_float(leaf) -> bool:
    return np.asarray(leaf).dtype.kind == "f"


def _map(fn, *trees):
    leaves = [pytree.flatten(tree)[0] for tree in trees]
    return pytree.unflatten(pytree.flatten(trees[0])[1], [fn(*items) for items in zip(*leaves)])


def _random_like(tree, rng):
    """A direction for each float leaf (zeros for integer leaves), same structure, shapes and dtypes."""
    def draw(leaf):
        leaf = np.asarray(leaf)
        if not _is_float(leaf):
            return np.zeros(leaf.shape, np.float64)
        return rng.standard_normal(leaf.shape).astype(leaf.dtype)

    return _map(draw, tree)


def _dot(a, b) -> float:
    """Sum over the leaves of two trees of one structure of <a, b>; None (the cotangent of an
    integer argument) counts as zero."""
    if a is None or b is None:
        return 0.0
    if isinstance(a, dict):
        return sum(_dot(a[key], b[key]) for key in a)
    if isinstance(a, (tuple, list)):
        return sum(_dot(x, y) for x, y in zip(a, b))
    return float(np.vdot(np.asarray(a, np.float64), np.asarray(b, np.float64)))


def _assert_close(analytic, numerical, tolerances, what):
    atol, rtol = tolerances
    for i, (got, expected) in enumerate(zip(pytree.flatten(analytic)[0], pytree.flatten(numerical)[0])):
        np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(expected, np.float64), atol=atol,
                                   rtol=rtol, err_msg=f"check_grads: {what}, output {i}: derivative vs finite "
                                                      "differences")
