"""A long kernel's short loops: the plainly vectorizable ones (codegen/llvm/loophints.py) are emitted as vector
code (lanes.py) or, where an access is not contiguous, get `llvm.loop.vectorize.width`; the others neither, so
LLVM prints nothing (a hinted loop it cannot vectorize makes it print a remark to stderr); the results are the
NumPy backend's."""
from __future__ import annotations

import functools

import numpy as np
import pytest

import symgrad as sg

pytest.importorskip("symgrad.codegen.llvm.backend")

A = np.random.default_rng(0).standard_normal((8, 8)) * 0.3
STEPS = [lambda x, i, c: sg.sin(x) * c + sg.cumsum(x) * 0.01,  # a scan
         lambda x, i, c: x - sg.max(x) * c + sg.min(x ** 2) * 0.01,  # reductions by comparison
         lambda x, i, c: sg.where(x > c, sg.sqrt(sg.abs(x) + 1.0), sg.exp(-x * x)),  # a bool stored beside floats
         lambda x, i, c: A @ x * c + sg.take(x, i) * 0.01 + sg.cumprod(x * 0.1 + 1.0) * 0.001,  # a gather
         lambda x, i, c: sg.tanh(x) + sg.log1p(x * x) * c + sg.floor(x * 3.0) * 0.001 + sg.maximum(x, c) * 0.01,
         lambda x, i, c: x + sg.flip(x) * c + sg.concatenate([x[1:], x[:1]]) * 0.01,  # reversed and shifted reads
         lambda x, i, c: x * c + sg.sum(sg.reshape(x, (2, 4)), axis=0).repeat(2) * 0.01 + sg.prod(x * 0.01 + 1.0),
         lambda x, i, c: sg.clip(x, -c, c) + sg.arctan2(x, c) + (x.astype(np.int64) % 3) * 0.01 + sg.sign(x) * 0.01]
RNG = np.random.default_rng(1)
KINDS, CS = RNG.integers(0, len(STEPS), 80), RNG.uniform(0.5, 1.0, 80)


def _mixed(x, i):
    """80 steps drawn from STEPS: a long program (over 200 nodes) that does not roll into a loop."""
    for t in range(80):
        x = STEPS[KINDS[t]](x, i, float(CS[t]))
    return sg.sum(x ** 2) + sg.max(x)


def _elementwise(x):
    for t in range(60):
        x = sg.sin(x) * float(CS[t]) + x * 0.5 if KINDS[t] % 2 else sg.tanh(x * float(CS[t])) - sg.mean(x) * 0.1
    return sg.sum(x ** 2)


@functools.cache
def _on_numpy(fn):
    """value_and_grad of fn compiled on the NumPy backend, once per fn (a test calls it on several inputs)."""
    return sg.compile(sg.value_and_grad(fn), backend="numpy")


def _agrees_with_numpy_backend(compiled, fn, args, rtol, atol):
    """The LLVM function's value and gradient are the NumPy backend's."""
    value, gradient = compiled(*args)
    expected_value, expected_gradient = _on_numpy(fn)(*args)
    np.testing.assert_allclose(value, expected_value, rtol=rtol)
    np.testing.assert_allclose(gradient, expected_gradient, rtol=rtol, atol=atol)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_loops_llvm_cannot_vectorize_get_no_hint_and_nothing_is_printed(capfd, dtype):
    x, i = np.linspace(-1.0, 1.0, 8).astype(dtype), np.array([1, 3, 5, 7, 0, 2, 4, 6])
    compiled = sg.compile(sg.value_and_grad(_mixed), backend="llvm")
    lowered = compiled.lower(x, i)
    assert len(lowered.graph.nodes) > 200
    assert "llvm.loop.vectorize.width" in lowered.llvm_ir
    compiled(x, i)
    assert "remark" not in capfd.readouterr().err
    tolerance = 1e-12 if dtype == np.float64 else 1e-4
    _agrees_with_numpy_backend(compiled, _mixed, (x, i), tolerance, tolerance)


def test_a_long_programs_elementwise_loops_and_their_sums_are_vector_code_computing_the_same():
    x = np.linspace(-1.0, 1.0, 8)
    compiled = sg.compile(sg.value_and_grad(_elementwise), backend="llvm")
    text = compiled.lower(x).llvm_ir
    assert text.count('\nlanes') > 50 and "<8 x double>" in text and "llvm.vector.reduce.fadd.v8f64" in text
    assert "call <8 x double> @\"symgrad.sin.f64.v8\"" in text
    _agrees_with_numpy_backend(compiled, _elementwise, (x,), 1e-12, 1e-15)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_matrix_vector_rows_summed_in_order_are_vector_code_computing_the_same(dtype):
    def f(x):
        for t in range(40):
            x = sg.sin(A.astype(dtype) @ x * 0.1 + x) * float(CS[t])
        return sg.sum(x ** 2)
    compiled = sg.compile(sg.value_and_grad(f), backend="llvm")  # one signature: both inputs run its code
    for x in (np.linspace(-1.0, 1.0, 8), np.array([0.0, -0.0, np.inf, 1.0, np.nan, 1e-310, -1e300, 3.0])):
        x, text_type = x.astype(dtype), "double" if dtype == np.float64 else "float"
        text = compiled.lower(x).llvm_ir
        suffix = "v8f64" if dtype == np.float64 else "v8f32"
        assert f'call {text_type} @"llvm.vector.reduce.fadd.{suffix}"({text_type} %' in text  # in order, from y[r]
        assert text.count("\nlanes") > 80
        with np.errstate(all="ignore"):
            tolerance = 1e-12 if dtype == np.float64 else 1e-5
            _agrees_with_numpy_backend(compiled, f, (x,), tolerance, tolerance)


def test_integer_sums_and_edge_values_in_vector_code():
    def f(x):
        total = sg.sum(x * 0.0)
        for t in range(50):
            x = sg.sin(x) * float(CS[t]) + sg.sum((x * 4.0).astype(np.int64)) * 0.001
        return sg.sum(x ** 2) + total
    compiled = sg.compile(sg.value_and_grad(f), backend="llvm")  # one signature: both inputs run its code
    for x in (np.linspace(-1.0, 1.0, 8), np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-310, -1e300, 3.0])):
        assert "llvm.vector.reduce" in compiled.lower(x).llvm_ir
        _agrees_with_numpy_backend(compiled, f, (x,), 1e-12, 1e-15)


def test_a_short_program_gets_no_hints():
    def f(x):
        return sg.sum(sg.sin(x) * 2.0 + sg.cumsum(x))
    x = np.linspace(-1.0, 1.0, 8)
    text = sg.compile(sg.value_and_grad(f), backend="llvm").lower(x).llvm_ir
    assert "!llvm.loop" not in text



@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_gradient_testing_the_loop_index_is_vector_code_computing_the_same(dtype):
    """The gradient of a sum over outputs reading x[i % 8] tests the loop index against each element read
    (unslice): compared and chosen as a vector of indices, not left a hinted loop (LLVM's vectorizer took time
    growing faster than the loop: 1.7 of 2.0 s of O3 at 1,600 outputs)."""
    def f(x):
        total = 0.0
        for i in range(120):
            total = total + sg.sum(sg.sin(x * (i + 1.0)) + x[i % 8] * x[-1 - i % 3])
        return total
    compiled = sg.compile(sg.value_and_grad(f), backend="llvm")  # one signature: both inputs run its code
    for x in (np.linspace(-0.5, 1.5, 8), np.array([0.0, -0.0, np.inf, 1.0, np.nan, 1e-310, -1e300, 3.0])):
        x = x.astype(dtype)
        text = compiled.lower(x).llvm_ir
        assert "icmp ult <8 x i64>" in text and "llvm.loop.vectorize" not in text
        with np.errstate(all="ignore"):
            tolerance = 1e-12 if dtype == np.float64 else 1e-5
            _agrees_with_numpy_backend(compiled, f, (x,), tolerance, tolerance)
