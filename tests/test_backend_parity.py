"""Backend parity: every registered backend other than NumPy agrees with the NumPy backend, and
its gradients with finite differences, on every primitive (the registry-generated elementwise
cases and the structural cases of test_ops), on focused cases (reductions over every axis
subset of a rank-3 array, batched matmul, integer-array indexing and its scatter-add adjoint,
concatenate, where/comparisons, broadcasting) and on hypothesis random programs, in float64
and float32. Skipped while NumPy is the only backend registered.

A case is f(*args) -> array or tuple of arrays. It is compiled once per backend as
value_and_grad(loss, has_aux=True) with loss = sum of each output times fixed random weights
and aux = f's outputs, so one compiled function yields f's value and its gradient.
"""
from __future__ import annotations

import itertools
import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import symgrad as sg
from symgrad import pytree
from symgrad.backends import BACKENDS

from gradcheck import numeric_grad
from test_ops import (COMPARE_OPS, DIFF_OPS, NP, SG, STRUCTURAL, _distinct, _float_argnums, _op_cases, _r, _sample,
                      _seeded, compare_reference, numpy_reference)
from test_random_programs import FULL, RECIPE, SETTINGS, _inputs, loss as program_loss

OTHER_BACKENDS = sorted(set(BACKENDS) - {"numpy"})
PROGRAM_EXAMPLES = 500 if os.environ.get("SYMGRAD_LONG_TESTS") == "1" else 50

# Backend vs NumPy backend: relative, plus absolute relative to the output's largest entry
# (sums cancel; the backends may order and fuse them differently).
PARITY_RTOL = {np.dtype(np.float64): 1e-12, np.dtype(np.float32): 1e-5}
# Gradient vs float64 central finite differences (step 1e-6).
FD_TOL = {np.dtype(np.float64): dict(rtol=1e-6, atol=1e-8), np.dtype(np.float32): dict(rtol=1e-3, atol=1e-4)}


@pytest.fixture(params=OTHER_BACKENDS or [pytest.param(None, marks=pytest.mark.skip(
    reason="only the numpy backend is registered: parity needs a second backend (llvm)"))])
def backend(request):
    """The name of a registered backend other than numpy."""
    return request.param


# ----------------------------------------------------------------------------- helpers

def assert_backends_agree(got, expected, what, rtol_scale=1.0, scale_floor=1e-30):
    """Same output structure, shapes and dtypes; floats close with NaN/inf at the same places,
    everything else equal. Absolute tolerance: rtol times the output's largest entry, or
    `scale_floor` if larger."""
    got_leaves, got_tree = pytree.flatten(got)
    expected_leaves, expected_tree = pytree.flatten(expected)
    assert got_tree == expected_tree, f"{what}: output structure differs"
    for k, (g, e) in enumerate(zip(got_leaves, expected_leaves)):
        g, e = np.asarray(g), np.asarray(e)
        message = f"{what}, output {k}"
        assert g.shape == e.shape and g.dtype == e.dtype, f"{message}: {g.dtype}{g.shape} vs {e.dtype}{e.shape}"
        if e.dtype.kind != "f":
            np.testing.assert_array_equal(g, e, err_msg=message)
            continue
        rtol = PARITY_RTOL[e.dtype] * rtol_scale
        finite = e[np.isfinite(e)]
        scale = float(np.max(np.abs(finite))) if finite.size else 0.0
        np.testing.assert_allclose(g, e, rtol=rtol, atol=rtol * max(scale, scale_floor), equal_nan=True, err_msg=message)


def _outputs(value):
    """A case's outputs as a tuple."""
    return value if isinstance(value, tuple) else (value,)


def parity(fn, args, argnums, weights, backend, what, **tolerance):
    """value_and_grad of (sum of f's outputs times weights, aux = the outputs), compiled on NumPy
    and on `backend`: assert the two agree; return `backend`'s result."""
    def loss(*a):
        outs = _outputs(fn(*a))
        return sum(sg.sum(out * w) for out, w in zip(outs, weights)), outs

    step = sg.value_and_grad(loss, argnums=argnums, has_aux=True)
    with np.errstate(all="ignore"):
        expected = sg.compile(step, backend="numpy")(*args)
    got = sg.compile(step, backend=backend)(*args)
    assert_backends_agree(got, expected, f"{what} {backend} vs numpy", **tolerance)
    return got


def check_case(fn, reference, args, argnums, backend, fd_tol=None, what=""):
    """`parity` with fixed random weights, then `backend`'s gradients against finite differences
    of `reference` (the same function in NumPy)."""
    dtype = next(a.dtype for a in args if a.dtype.kind == "f")
    rng = np.random.default_rng(7)
    weights = [rng.normal(size=np.shape(out)).astype(dtype) for out in _outputs(reference(*args))]
    got = parity(fn, args, argnums, weights, backend, what)

    def reference_loss(*a):
        return sum(np.sum(out * w) for out, w in zip(_outputs(reference(*a)), weights))

    tol = fd_tol or FD_TOL[dtype]
    for n, g in zip(argnums, got[1]):
        np.testing.assert_allclose(np.asarray(g, np.float64), numeric_grad(reference_loss, args, n, tol.get("eps", 1e-6)),
                                   rtol=tol["rtol"], atol=tol["atol"],
                                   err_msg=f"{what} {backend}: gradient of argument {n} vs finite differences")


# ----------------------------------------------------------------------------- every primitive

@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("op,shapes", _op_cases(DIFF_OPS))
def test_elementwise(op, shapes, dtype, backend):
    args = _sample(op, shapes, _seeded(op.name + str(shapes) + "parity"), dtype)
    check_case(lambda *a: op(*a), numpy_reference(op.name), args, _float_argnums(op), backend, what=op.name)


@pytest.mark.parametrize("op,shapes", _op_cases(COMPARE_OPS))
def test_comparison(op, shapes, backend):
    rng = _seeded(op.name + "parity")
    if op.name.startswith("logical"):
        args = [rng.random(s) < 0.5 for s in shapes]
    else:  # small integers as floats: plenty of ties
        args = [rng.integers(0, 3, s).astype(np.float64) for s in shapes]
    fn = lambda *a: op(*a)  # noqa: E731
    got = sg.compile(fn, backend=backend)(*args)
    assert_backends_agree(got, sg.compile(fn, backend="numpy")(*args), f"{op.name} {backend} vs numpy")
    np.testing.assert_array_equal(got, compare_reference(op.name)(*args))


# Outside domains, at poles, overflowing, infinite and NaN: values and gradients must be the same
# (same NaN and inf positions) on every backend.
SPECIAL = np.array([-np.inf, -800.0, -2.5, -1.0, -0.0, 0.0, 0.5, 1.0, 30.0, 800.0, np.inf, np.nan])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("op", [op for op in DIFF_OPS if op.kind != "where"], ids=lambda op: op.name)
def test_special_values(op, dtype, backend):
    """Every pair (every triple's first two, for clip) of special values."""
    grid = np.meshgrid(*[SPECIAL] * min(op.arity, 2), indexing="ij")
    bounds = [np.asarray(v, dtype) for v in (-1.0, 1.0)][:max(op.arity - 2, 0)]
    args = [g.astype(dtype) for g in grid] + bounds
    weights = [np.ones(grid[0].shape, dtype)]
    parity(lambda *a: op(*a), args, _float_argnums(op), weights, backend, op.name)


STRUCTURAL_FLOAT64 = [pytest.param(i, f, a, id=i) for i, f, a in STRUCTURAL]
STRUCTURAL_FLOAT32 = [pytest.param(i, f, [x.astype(np.float32) for x in a], id=i + "-f32") for i, f, a in STRUCTURAL
                      if not i.startswith("astype")]
# A float32 cast rounds: finite differences through it need a large step and loose tolerance.
CAST_FD_TOL = dict(rtol=1e-2, atol=1e-3, eps=1e-3)


@pytest.mark.parametrize("name,fn,args", STRUCTURAL_FLOAT64 + STRUCTURAL_FLOAT32)
def test_structural(name, fn, args, backend):
    check_case(lambda *a: fn(SG, *a), lambda *a: fn(NP, *a), args, tuple(range(len(args))), backend,
               fd_tol=CAST_FD_TOL if name.startswith("astype") else None, what=name)


# ----------------------------------------------------------------------------- focused cases

AXIS_SUBSETS = [None] + [axes for r in range(4) for axes in itertools.combinations(range(3), r)]
REDUCTIONS = ["sum", "mean", "max", "min", "prod", "var", "logsumexp"]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_reduction_over_every_axis_subset(reduction, dtype, backend):
    """One compiled function reduces a rank-3 array over each axis subset (keepdims alternating)."""
    x = (_distinct((2, 3, 4), 3) * 2 + (1.0 if reduction == "prod" else 0.0)).astype(dtype)

    def every_subset(ns, x):
        return tuple(getattr(ns, reduction)(x, axis=axes, keepdims=k % 2 == 1) for k, axes in enumerate(AXIS_SUBSETS))
    check_case(lambda x: every_subset(SG, x), lambda x: every_subset(NP, x), [x], (0,), backend, what=reduction)


REPEATS = np.array([1, 1, 0, 1, 2, 1, 1])
FOCUSED = [
    ("bcast-rank3", lambda ns, a, b, c: ns.tanh(a * b + c) * a, [_r((2, 1, 4)), _r((3, 1), 1), _r((), 2)]),
    ("bcast-to-and-back", lambda ns, a, b: ns.sum(ns.broadcast_to(a, (5, 3, 4)) * b, axis=0), [_r((3, 1)), _r((4,), 1)]),
    ("bcast-middle-axes", lambda ns, a, b: ns.exp(a) - ns.sin(b), [_r((2, 1, 1, 3)), _r((1, 4, 5, 1), 1)]),
    ("matmul-2d-large", lambda ns, a, b: a @ b, [_r((40, 50)), _r((50, 30), 1)]),
    ("matmul-batched-large", lambda ns, a, b: ns.matmul(a, b), [_r((3, 17, 33)), _r((3, 33, 9), 1)]),
    ("matmul-batched-bcast-large", lambda ns, a, b: ns.matmul(a, b), [_r((2, 1, 16, 24)), _r((5, 24, 8), 1)]),
    ("matmul-mat-vec-large", lambda ns, a, b: a @ b, [_r((64, 48)), _r((48,), 1)]),
    ("matmul-chain-tanh", lambda ns, a, b, c: ns.tanh(a @ b) @ c, [_r((8, 6)), _r((6, 5), 1), _r((5, 3), 2)]),
    ("matvec-tanh-large", lambda ns, X, w: ns.tanh(X @ w), [_r((100, 80)), _r((80,), 1)]),
    ("index-repeated-rows", lambda ns, x: x[REPEATS], [_r((3, 4))]),
    ("index-repeated-rank3", lambda ns, x: x[:, REPEATS % 3, 1:], [_r((2, 3, 4))]),
    ("index-repeated-two-arrays", lambda ns, x: x[np.array([[0], [0], [2]]), np.array([1, 1, 3])], [_r((3, 4))]),
    ("gather-many-from-few", lambda ns, x: ns.take(x, np.arange(200) % 5), [_r((5,))]),
    ("take-repeated-axis1", lambda ns, x: ns.take(x, np.array([3, 3, 0, 3]), axis=1), [_r((2, 4, 3))]),
    ("take_along_axis-repeated", lambda ns, x: ns.take_along_axis(x, np.array([[0, 0, 0], [2, 2, 1]]), axis=1),
     [_r((2, 3))]),
    ("index-negative-repeated", lambda ns, x: x[np.array([-1, -1, 0, -4])] * 2.0, [_r((4, 3))]),
    ("index-traced-array", lambda ns, x, i: x[i], [_r((3, 4)), np.array([2, 0, 2, -1, 0])]),
    ("index-traced-two-arrays", lambda ns, x, i, j: x[i, j] * x[2 - i, 3 - j],
     [_r((3, 4)), np.array([[0], [2]]), np.array([1, 3, 3])]),
    ("take-traced-axis1", lambda ns, x, i: ns.take(x, i, axis=1), [_r((2, 4, 3)), np.array([[3, 3], [0, -1]])]),
    ("take_along_axis-traced", lambda ns, x, i: ns.take_along_axis(x, i, axis=0),
     [_r((3, 4)), np.array([[2, 0, 1, 1], [2, 2, 0, 0]])]),
    ("concatenate-rank3-axis2", lambda ns, a, b, c: ns.concatenate([a, b, c], axis=2),
     [_r((2, 3, 1)), _r((2, 3, 4), 1), _r((2, 3, 2), 2)]),
    ("concatenate-computed", lambda ns, a, b: ns.concatenate([ns.exp(a), a * b, b[::-1]], axis=0),
     [_r((3, 4)), _r((3, 4), 1)]),
    ("concatenate-same-twice", lambda ns, a: ns.concatenate([a, a], axis=-1), [_r((3, 2))]),
    ("where-less", lambda ns, a, b: ns.where(ns.less(a, b), a * a, b - a), [_r((3, 4)), _r((4,), 1)]),
    ("where-greater-equal-bcast", lambda ns, a, b: ns.where(a >= b, ns.exp(a), ns.sin(b)), [_r((3, 1)), _r((4,), 1)]),
    ("where-nested", lambda ns, a, b: ns.where(a > 0, ns.where(b > 0, a * b, a), -b), [_r((3, 4)), _r((3, 4), 1)]),
    ("where-logical", lambda ns, a, b: ns.where(ns.logical_and(a > -0.5, b < 0.5), a, b), [_r((3, 4)), _r((3, 4), 1)]),
    ("where-scalar-branch", lambda ns, a: ns.where(a > 0.1, a, 0.5), [_r((5,))]),
]


def _float_positions(args):
    return tuple(n for n, a in enumerate(args) if a.dtype.kind == "f")


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name,fn,args", [pytest.param(i, f, a, id=i) for i, f, a in FOCUSED])
def test_focused(name, fn, args, dtype, backend):
    """Float arguments in `dtype`, all differentiated; integer arguments are traced index arrays."""
    args = [a.astype(dtype) if a.dtype.kind == "f" else a for a in args]
    check_case(lambda *a: fn(SG, *a), lambda *a: fn(NP, *a), args, _float_positions(args), backend, what=name)


MULTI_ARGUMENT = [pytest.param(i, f, a, id=i) for i, f, a in STRUCTURAL + FOCUSED if len(_float_positions(a)) > 1]


@pytest.mark.parametrize("name,fn,args", MULTI_ARGUMENT)
def test_gradient_of_last_argument_only(name, fn, args, backend):
    """The other arguments are inputs without a gradient: adjoint graphs without their branches."""
    check_case(lambda *a: fn(SG, *a), lambda *a: fn(NP, *a), args, _float_positions(args)[-1:], backend, what=name)


# ----------------------------------------------------------------------------- random programs

# Composed programs amplify rounding differences (operation order, fusion, vector math within
# a few ulp), so the backends are compared a little more loosely than single primitives, and
# absolutely on the inputs' scale (1): a gradient that is zero in exact arithmetic, e.g. of
# mean(softmax(x)), is rounding noise whose sign depends on the order of operations.
PROGRAM_TOL = dict(rtol_scale=100.0, scale_floor=1.0)


@settings(SETTINGS, max_examples=PROGRAM_EXAMPLES)
@given(recipe=RECIPE, seed=st.integers(0, 2 ** 32 - 1),
       argnums=st.sets(st.integers(0, 3), min_size=1).map(lambda s: tuple(sorted(s))))
def test_random_program(backend, recipe, seed, argnums):
    inputs = _inputs(seed)
    W = np.random.default_rng(seed + 1).normal(size=FULL)
    step = sg.value_and_grad(program_loss(SG, recipe, W), argnums=argnums)
    got = sg.compile(step, backend=backend)(*inputs)
    assert_backends_agree(got, sg.compile(step, backend="numpy")(*inputs), f"{backend} vs numpy",
                          **PROGRAM_TOL)
    reference = program_loss(NP, recipe, W)
    for n, g in zip(argnums, got[1]):
        np.testing.assert_allclose(g, numeric_grad(reference, inputs, n), rtol=1e-5, atol=1e-6,
                                   err_msg=f"{backend}: gradient of input {n} vs finite differences")


@settings(SETTINGS, max_examples=max(PROGRAM_EXAMPLES // 4, 10))
@given(recipe=RECIPE, seed=st.integers(0, 2 ** 32 - 1))
def test_random_program_float32(backend, recipe, seed):
    inputs = _inputs(seed, np.float32)
    W = np.random.default_rng(seed + 1).normal(size=FULL).astype(np.float32)
    step = sg.value_and_grad(program_loss(SG, recipe, W), argnums=(0, 1, 2, 3))
    got = sg.compile(step, backend=backend)(*inputs)
    assert_backends_agree(got, sg.compile(step, backend="numpy")(*inputs), f"{backend} vs numpy",
                          **PROGRAM_TOL)
