"""Hypothesis-driven random programs: values vs NumPy, gradients vs finite differences.

A program is a recipe (a list of instructions). One small interpreter runs a recipe
against a namespace `ns`: NumPy (the reference) or symgrad. Elementwise ops come from the
registry, so new ops are exercised automatically; each operand is squashed into the op's
domain (lo + (hi - lo) * sigmoid(v)) so finite differences stay away from poles.

Every value has a shape in SHAPES, a set closed under broadcasting (all broadcast to (3, 4)).
SYMGRAD_LONG_TESTS=1 runs many more examples.
"""
from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import symgrad as sg
from symgrad.ops.elementwise import ELEMENTWISE

from gradcheck import assert_grads_match_finite_differences
from test_ops import NP, SG

MAX_EXAMPLES = 500 if os.environ.get("SYMGRAD_LONG_TESTS") == "1" else 100
SETTINGS = settings(max_examples=MAX_EXAMPLES, deadline=None, derandomize=os.environ.get("SYMGRAD_LONG_TESTS") != "1",
                    suppress_health_check=list(HealthCheck))

FULL = (3, 4)
INPUT_SHAPES = [(3, 4), (4,), (3, 1), ()]
# The ops of the sg.* namespace (sg.scipy.special's have their own tests: test_scipy_special.py).
NAMESPACE_OPS = {name: op for name, op in ELEMENTWISE.items() if name in sg.__all__}
ELEMENTWISE_NAMES = sorted(name for name, op in NAMESPACE_OPS.items() if op.kind in ("float", "arith", "where")
                           and op.on_floats)  # (the bitwise ops take integers only)
COMPARE_NAMES = sorted(name for name, op in NAMESPACE_OPS.items()  # (binary: isinf and signbit take one operand)
                       if op.kind == "compare" and op.arity == 2 and not name.startswith("logical"))
# Arguments with their own domain (clip's bounds must be ordered, as for np.clip).
ARG_DOMAINS = {("clip", 1): (-1.5, -0.5), ("clip", 2): (0.5, 1.5)}


def _squash(ns, v, lo, hi):
    return lo + (hi - lo) * ns.sigmoid(v)


def _full(ns, v):
    return ns.broadcast_to(v, FULL)


def _bounded(ns, v):
    return ns.tanh(_full(ns, v))


def run(ns, recipe, inputs):
    """Run recipe on inputs with namespace ns; returns the list of all values."""
    values = list(inputs)

    def pick(i):
        return values[i % len(values)]

    for instr in recipe:
        kind, args = instr[0], instr[1:]
        if kind == "ew":
            name, picks = args
            op = ELEMENTWISE[name]
            fn = getattr(ns, name)
            operands = []
            for position in range(op.arity):
                v = pick(picks[position])
                if op.kind == "where" and position == 0:
                    compare, other = COMPARE_NAMES[picks[3] % len(COMPARE_NAMES)], pick(picks[3])
                    operands.append(getattr(ns, compare)(v, other))
                else:
                    lo, hi = ARG_DOMAINS.get((name, position), op.domain)
                    operands.append(_squash(ns, v, lo, hi))
            out = fn(*operands)
        elif kind == "scalar":
            which, i = args
            v = pick(i)
            out = [v * 2.5, 1.5 - v, v / 4.0, _squash(ns, v, 0.5, 2.0) ** 2, 3 * v + 1][which]
        elif kind == "reduce":
            which, axis, i = args
            v = ns.tanh(pick(i))
            ndim = np.ndim(v)
            axis = None if ndim == 0 or axis == "none" else (axis % ndim if axis != "all" else tuple(range(ndim)))
            keepdims = axis is not None
            fn = ["sum", "mean", "max", "min", "prod", "var", "logsumexp"][which]
            out = getattr(ns, fn)(v, axis=axis, keepdims=keepdims)
        elif kind == "matmul":
            which, i, j = args
            a, b = _bounded(ns, pick(i)), _bounded(ns, pick(j))
            if which == 0:
                out = ns.matmul(ns.matmul(a, ns.transpose(b)), a)
            elif which == 1:
                out = ns.reshape(a @ b[0], (3, 1))
            elif which == 2:
                out = ns.einsum("ij,ij->j", a, b)
            else:
                out = ns.einsum("ij,kj->ik", a, b) @ a
        elif kind == "shape":
            which, i = args
            v = _full(ns, pick(i))
            out = [
                lambda: ns.transpose(ns.reshape(v, (4, 3))),
                lambda: ns.reshape(ns.reshape(v, -1)[::-1], FULL),
                lambda: ns.squeeze(ns.expand_dims(v, 0), 0),
                lambda: ns.concatenate([v[:, :1], v[:, 1:] * 2.0], axis=1),
                lambda: ns.sum(ns.stack([v, v * v], axis=0), axis=0),
                lambda: ns.softmax(v, axis=-1),
                lambda: ns.log_softmax(v, axis=0),
            ][which]()
        elif kind == "index":
            which, i = args
            v = _full(ns, pick(i))
            out = [
                lambda: v[::-1],
                lambda: v[:, np.array([3, 1, 1, 0])],
                lambda: v[np.array([2, 0, -2])],
                lambda: v[1],
                lambda: v[:, 2:3],
                lambda: v[None, -1],
                lambda: v[..., ::-1],
                lambda: v[np.array([[0], [2], [1]]), np.array([1, 3, 0, 0])],
                lambda: ns.take_along_axis(v, np.array([[1, 0, 3, 3]] * 3), axis=1),
                lambda: ns.take(v, np.array([5, -1, 0, 11]), axis=None),
            ][which]()
        else:
            raise ValueError(kind)
        values.append(out)
    return values


def loss(ns, recipe, W):
    def f(*inputs):
        values = run(ns, recipe, inputs)
        total = ns.sum(_full(ns, values[-1]) * W)
        # also use a few earlier values, so gradients flow through more of the program
        for k, v in enumerate(values[len(inputs):-1][-3:]):
            total = total + 0.3 * (k + 1) * ns.mean(v)
        return total
    return f


_idx = st.integers(0, 63)
_ew = st.tuples(st.just("ew"), st.sampled_from(ELEMENTWISE_NAMES), st.tuples(_idx, _idx, _idx, _idx))
_scalar = st.tuples(st.just("scalar"), st.integers(0, 4), _idx)
_reduce = st.tuples(st.just("reduce"), st.integers(0, 6), st.sampled_from([0, 1, -1, "none", "all"]), _idx)
_matmul = st.tuples(st.just("matmul"), st.integers(0, 3), _idx, _idx)
_shape = st.tuples(st.just("shape"), st.integers(0, 6), _idx)
_index = st.tuples(st.just("index"), st.integers(0, 9), _idx)
INSTRUCTION = st.one_of(_ew, _ew, _ew, _scalar, _reduce, _matmul, _shape, _index)
RECIPE = st.lists(INSTRUCTION, min_size=1, max_size=6)


def _inputs(seed, dtype=np.float64):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1.5, 1.5, s).astype(dtype) for s in INPUT_SHAPES]


@SETTINGS
@given(recipe=RECIPE, seed=st.integers(0, 2 ** 32 - 1))
def test_random_program_value_matches_numpy(recipe, seed):
    inputs = _inputs(seed)
    expected = run(NP, recipe, inputs)[-1]
    got = sg.compile(lambda *xs: run(SG, recipe, xs)[-1])(*inputs)
    assert np.shape(got) == np.shape(expected)
    np.testing.assert_allclose(np.asarray(got), np.asarray(expected), rtol=1e-9, atol=1e-12)


@SETTINGS
@given(recipe=RECIPE, seed=st.integers(0, 2 ** 32 - 1))
def test_random_program_grad_matches_finite_differences(recipe, seed):
    inputs = _inputs(seed)
    W = np.random.default_rng(seed + 1).normal(size=FULL)
    assert_grads_match_finite_differences(loss(SG, recipe, W), inputs, argnums=(0, 1, 2, 3), rtol=1e-5, atol=1e-6,
                reference=loss(NP, recipe, W))


@settings(SETTINGS, max_examples=max(MAX_EXAMPLES // 4, 10))
@given(recipe=RECIPE, seed=st.integers(0, 2 ** 32 - 1))
def test_random_program_float32(recipe, seed):
    """float32 inputs stay float32 (value and gradient), close to the float64 computation."""
    inputs = _inputs(seed, np.float32)
    W = np.random.default_rng(seed + 1).normal(size=FULL).astype(np.float32)
    value, grads = sg.value_and_grad(loss(SG, recipe, W), argnums=(0, 1, 2, 3))(*inputs)
    assert np.asarray(value).dtype == np.float32
    assert all(g.dtype == np.float32 for g in grads)
    inputs64 = [x.astype(np.float64) for x in inputs]
    value64, grads64 = sg.value_and_grad(loss(SG, recipe, W.astype(np.float64)), argnums=(0, 1, 2, 3))(*inputs64)
    scale = 1 + np.abs(value64)
    assert abs(float(value) - float(value64)) <= 1e-4 * scale
    for g, g64 in zip(grads, grads64):
        np.testing.assert_allclose(g, g64, rtol=2e-3, atol=2e-3 * (1 + np.max(np.abs(g64))))


# Programs that once failed, run every time.
REGRESSIONS = [
    # fused clip(clip(...)) put a Piecewise inside a condition: SymPy's ITE, which the NumPy printer lacked
    [("scalar", 0, 0), ("scalar", 0, 0), ("ew", "clip", (0, 58, 0, 0)), ("ew", "clip", (1, 0, 6, 0))],
]


@pytest.mark.parametrize("recipe", REGRESSIONS)
def test_regression_programs(recipe):
    inputs = _inputs(0)
    expected = run(NP, recipe, inputs)[-1]
    got = sg.compile(lambda *xs: run(SG, recipe, xs)[-1])(*inputs)
    np.testing.assert_allclose(np.asarray(got), np.asarray(expected), rtol=1e-9, atol=1e-12)
    W = np.random.default_rng(1).normal(size=FULL)
    assert_grads_match_finite_differences(loss(SG, recipe, W), inputs, argnums=(0, 1, 2, 3), rtol=1e-5, atol=1e-6, reference=loss(NP, recipe, W))
