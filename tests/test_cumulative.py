"""sg.cumsum / sg.cumprod (with jax.lax's `reverse=`) and sg.roll, which the LLVM backend lowers by
composition: values as NumPy's at the edges on every path, cumprod's gradient where x has zeros
against central finite differences, forward mode and second order. Their registry cases (values,
float32, backend parity, zero sizes) are in test_ops.STRUCTURAL and ZERO_SIZE."""
from __future__ import annotations

import numpy as np
import pytest

import symgrad as sg
from symgrad.backends import for_backend
from symgrad.ir import IRError
from symgrad.ops.shape import roll_p
from symgrad.passes.decompose import decompose

from gradcheck import numeric_grad, value_and_grad_everywhere
from test_aot import HAS_LINKER, run_python
from test_ops import NP, SG

CUMULATIVE = ["cumsum", "cumprod"]
AXES = [None, 0, 1, -1]


def _paths(fn, x):
    """fn(SG, x) on every path: eager arrays, the NumPy backend, the LLVM backend, eager tensors."""
    return {"eager": fn(SG, x), "numpy": sg.compile(lambda a: fn(SG, a), backend="numpy")(x),
            "llvm": sg.compile(lambda a: fn(SG, a))(x), "tensor": fn(SG, sg.tensor(x)).numpy()}


# ----------------------------------------------------------------------------- values

EDGES = np.array([[1.5, np.inf, -2.0, 0.0, 3.0], [np.nan, 1.0, 2.0, -np.inf, 0.5], [0.0, -0.0, np.inf, 2.0, 1.0]])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("name", CUMULATIVE)
def test_infinities_and_nans_propagate_as_in_numpy(name, axis, reverse, dtype):
    x = EDGES.astype(dtype)
    fn = lambda ns, a: getattr(ns, name)(a, axis=axis, reverse=reverse)  # noqa: E731
    with np.errstate(invalid="ignore"):
        expected = fn(NP, x)
        for path, got in _paths(fn, x).items():
            assert got.shape == expected.shape and got.dtype == dtype, path
            np.testing.assert_array_equal(got, expected, err_msg=path)  # the same sequential order: bitwise


@pytest.mark.parametrize("shape,axis", [((), None), ((), 0), ((), -1), ((0,), None), ((0, 3), 0), ((0, 3), 1),
                                        ((3, 0), None), ((2, 0, 3), 2), ((1,), 0), ((4, 1), 1)])
@pytest.mark.parametrize("name", CUMULATIVE)
def test_zero_dimensional_and_empty_arrays_as_in_numpy(name, shape, axis):
    x = np.random.default_rng(0).uniform(0.5, 1.5, shape)
    fn = lambda ns, a: getattr(ns, name)(a, axis=axis)  # noqa: E731
    expected = getattr(np, name)(x, axis=axis)  # a 0-d array counts as 1-d: its result has shape (1,)
    for path, got in _paths(fn, x).items():
        assert got.shape == expected.shape and got.dtype == expected.dtype, path
        np.testing.assert_array_equal(got, expected, err_msg=path)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.bool_])
@pytest.mark.parametrize("name", CUMULATIVE)
def test_integers_and_booleans_accumulate_in_int64_as_in_numpy(name, dtype):
    x = np.random.default_rng(1).integers(-3, 4, (3, 5)).astype(dtype)
    for axis in AXES:
        expected = getattr(np, name)(x, axis=axis)
        for path, got in _paths(lambda ns, a: getattr(ns, name)(a, axis=axis), x).items():
            assert got.dtype == np.int64, path
            np.testing.assert_array_equal(got, expected, err_msg=f"{path}, axis {axis}")


@pytest.mark.parametrize("dtype", [np.int32, np.bool_, np.int64])
@pytest.mark.parametrize("name", CUMULATIVE)
def test_a_dtype_argument_is_the_result_dtype_as_in_numpy(name, dtype):
    """dtype=int32 was widened to int64 (NumPy: int32, wrapping), and dtype=bool gave int64 counts (NumPy: the
    running or of cumsum, the running and of cumprod)."""
    x = np.array([[3, -5, 2**30, 0], [2**30, 2**30, 7, 1], [0, 0, 1, 2]], np.int32)
    for data in (x, x > 0, x.astype(np.float32) + 0.5):
        for axis in AXES:
            expected = getattr(np, name)(data, axis=axis, dtype=dtype)
            for path, got in _paths(lambda ns, a: getattr(ns, name)(a, axis=axis, dtype=dtype), data).items():
                assert got.dtype == expected.dtype, path
                np.testing.assert_array_equal(got, expected, err_msg=f"{path}, axis {axis}")


@pytest.mark.parametrize("name", CUMULATIVE)
def test_an_axis_out_of_range_is_a_clear_error(name):
    for run in (lambda: getattr(sg, name)(np.ones((2, 3)), axis=2),
                lambda: sg.compile(lambda a: getattr(sg, name)(a, axis=-3))(np.ones((2, 3)))):
        with pytest.raises(sg.ShapeError, match="axis -?[23] is out of bounds for an array of dimension 2") as info:
            run()
        assert "test_cumulative.py" in str(info.value)


# ----------------------------------------------------------------------------- gradients

def _with_zeros(count, shape=(3, 5), seed=0):
    """Values in +-[0.5, 1.5] with `count` zeros in row 0 and min(count, 1) in the others."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.5, 1.5, shape) * rng.choice([-1.0, 1.0], shape)
    x[0, [1, 3, 4][:count]] = 0.0
    if count:
        x[1:, 2] = 0.0
    return x


# Zeros are cumprod's edge case; cumsum is linear (its derivative reads no value): one count of zeros for it.
WITH_ZEROS = [("cumsum", 0)] + [("cumprod", zeros) for zeros in (0, 1, 2, 3)]


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("name, zeros", WITH_ZEROS)
def test_gradient_with_zeros_matches_finite_differences(name, zeros, axis, reverse):
    """cumprod's derivative is written with products only (no division by x): exact where x has zeros."""
    x = _with_zeros(zeros)
    weights = np.random.default_rng(2).normal(size=x.size).reshape(x.shape if axis is not None else -1)

    def loss(ns):
        return lambda a: ns.sum(getattr(ns, name)(a, axis=axis, reverse=reverse) * weights)
    expected = numeric_grad(loss(NP), (x,), 0)
    for path, (value, (g,)) in value_and_grad_everywhere(loss(SG), (x,)).items():
        np.testing.assert_allclose(value, loss(NP)(x), rtol=1e-12, err_msg=path)
        assert np.all(np.isfinite(g)), path
        np.testing.assert_allclose(g, expected, rtol=1e-7, atol=1e-9, err_msg=path)


@pytest.mark.parametrize("n", [1, 2, 3, 8, 13])
@pytest.mark.parametrize("reverse", [False, True])
def test_cumprod_gradient_for_every_length_of_the_doubling_scan(n, reverse):
    x = _with_zeros(0, (2, n), seed=n)
    x[0, n // 2] = 0.0
    weights = np.random.default_rng(n).normal(size=x.shape)
    loss = lambda ns: lambda a: ns.sum(ns.cumprod(a, axis=1, reverse=reverse) * weights)  # noqa: E731
    for path, (_, (g,)) in value_and_grad_everywhere(loss(SG), (x,), eager=False).items():
        np.testing.assert_allclose(g, numeric_grad(loss(NP), (x,), 0), rtol=1e-7, atol=1e-9, err_msg=path)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("name", CUMULATIVE)
def test_forward_mode_and_second_order(name, reverse, dtype):
    for zeros in (0, 1, 2):
        x = _with_zeros(zeros).astype(dtype)
        for axis in (0, 1):
            sg.check_grads(lambda a: getattr(sg, name)(a, axis=axis, reverse=reverse), (x,), order=2,
                           modes=("fwd", "rev"))


def test_cumprod_gradient_with_zeros_matches_torch():
    torch = pytest.importorskip("torch")
    for zeros in (0, 1, 2, 3):
        x = _with_zeros(zeros)
        weights = np.random.default_rng(4).normal(size=x.shape)
        for dim in (0, 1):
            t = torch.tensor(x, requires_grad=True)
            (torch.cumprod(t, dim) * torch.tensor(weights)).sum().backward()
            g = sg.grad(lambda a: sg.sum(sg.cumprod(a, axis=dim) * weights))(x)
            np.testing.assert_allclose(g, t.grad.numpy(), rtol=1e-12, atol=1e-15, err_msg=f"zeros {zeros}, dim {dim}")


# ----------------------------------------------------------------------------- lowering

def test_tensor_cumsum_of_a_leading_negative_zero_is_pytorchs_positive_zero():
    """PyTorch's sums start from +0, so t.cumsum() never gives -0.0 (NumPy's, and sg.cumsum's, keep a leading one);
    an atan2 of it was pi where PyTorch's is 0 (random_programs_torch float32 seed 30017)."""
    data = np.array([[-0.0, -0.0], [-0.0, 1.0], [-1.0, -0.0]])
    t = sg.tensor(data, requires_grad=True)
    got = t.cumsum(0)
    np.testing.assert_array_equal(np.signbit(got.detach().numpy()), [[False, False], [False, False], [True, False]])
    assert type(got.grad_fn).__name__ == "CumsumBackward0"
    got.sum().backward()
    np.testing.assert_array_equal(t.grad.numpy(), [[3.0, 3.0], [2.0, 2.0], [1.0, 1.0]])
    assert np.signbit(np.asarray(sg.cumsum(data, 0))[0, 0])
    assert sg.atan2(sg.tensor(0.0), sg.tensor([-0.0]).cumsum(0)).item() == 0.0


def test_numpy_backend_calls_the_reference_implementation_in_readable_source():
    """No NumPy rule was written for cumsum: the module defines its NumPy reference and calls it."""
    lowered = sg.compile(lambda a: sg.cumsum(a, axis=0, reverse=True) + sg.cumprod(a, axis=1), backend="numpy")
    source = lowered.lower(np.ones((2, 3))).source
    assert "def _cumsum(x, axis, reverse):" in source and "def _cumprod(x, axis, reverse):" in source
    assert "v0 = _cumsum(a, axis=0, reverse=True)" in source
    namespace = {}
    exec(compile(source, "<standalone>", "exec"), namespace)  # the module imports what it needs itself
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(namespace["f"](x)[0], NP.cumsum(x, axis=0, reverse=True) + np.cumprod(x, axis=1))


def test_numpy_artifact_with_cumulative_ops_stands_alone(tmp_path):
    def f(x):
        return sg.sum(sg.cumprod(x, axis=1) * sg.cumsum(x, reverse=True, axis=1))
    out = str(tmp_path / "cumulative")
    sg.aot.compile(f, (np.ones((2, 4)),), value_and_grad=True, out=out, backend="numpy")
    x = _with_zeros(1, (2, 4))
    stdout = run_python("""
        import importlib.util, sys
        import numpy as np
        spec = importlib.util.spec_from_file_location("cumulative_aot", sys.argv[1] + ".py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        value, grad = module.value_and_grad(np.array(eval(sys.argv[2])))
        print(repr((float(value), grad.tolist())))
    """, out, repr(x.tolist()), block=("sympy", "llvmlite", "symgrad"))
    value, grad = eval(stdout)
    expected_value, expected_grad = sg.value_and_grad(f)(x)
    np.testing.assert_allclose(value, expected_value, rtol=1e-12)
    np.testing.assert_allclose(grad, expected_grad, rtol=1e-12)


def test_llvm_backend_lowers_roll_by_its_decomposition():
    """roll has no LLVM rule: the LLVM backend gets it as a concatenation of two slices, natively."""
    x = np.arange(12.0).reshape(3, 4)
    lowered = sg.compile(lambda a: sg.roll(a, 1, axis=1) * 2.0).lower(x)
    assert "roll" in str(lowered.graph)
    native = lowered.executable.graph  # what the LLVM backend compiled
    assert [n.prim.name for n in native.nodes if n.prim.name in ("roll", "concatenate")] == ["concatenate"]
    assert lowered.llvm_ir  # native code, not the NumPy fallback
    np.testing.assert_array_equal(lowered.executable(x)[0], np.roll(x, 1, axis=1) * 2.0)
    numpy_graph = sg.trace(lambda a: sg.roll(a, 1, axis=1), x)
    assert for_backend(numpy_graph, "numpy") is numpy_graph  # NumPy calls np.roll: nothing to decompose


def test_decompose_keeps_every_other_node_and_the_meta():
    x = np.arange(6.0).reshape(2, 3)
    graph = sg.trace(sg.value_and_grad(lambda a: sg.sum(sg.roll(sg.sin(a), 2, axis=1) * a)), x)
    expanded = decompose(graph, lambda prim: prim is not roll_p)
    assert not any(n.prim is roll_p for n in expanded.nodes)
    decomposed = ("slice", "concatenate")
    assert ([n.prim.name for n in expanded.nodes if n.prim.name not in decomposed]
            == [n.prim.name for n in graph.nodes if n.prim is not roll_p])
    assert any(n.meta.get("section") == "backward" and n.prim.name == "concatenate" for n in expanded.nodes)
    assert decompose(graph, lambda prim: True) is graph


@pytest.mark.skipif(not HAS_LINKER, reason="linking a shared library needs a C compiler")
def test_llvm_artifact_lowers_roll_by_its_decomposition(tmp_path):
    def f(x):
        return sg.sum(sg.roll(x, -1, axis=0) * sg.cumsum(x, axis=0))
    out = str(tmp_path / "roll")
    sg.aot.compile(f, (np.ones((3, 2)),), value_and_grad=True, out=out)
    x = np.arange(6.0).reshape(3, 2)
    value, grad = sg.load(out).value_and_grad(x)
    expected_value, expected_grad = sg.value_and_grad(f)(x)
    np.testing.assert_allclose(value, expected_value, rtol=1e-12)
    np.testing.assert_allclose(grad, expected_grad, rtol=1e-12)


def test_a_decomposition_that_never_ends_or_changes_the_type_is_an_error():
    from symgrad.core import REGISTRY, Primitive
    same = lambda inputs: (inputs[0].shape, inputs[0].dtype)  # noqa: E731
    echo = Primitive("echo_test", same, lambda x: x, decompose=lambda x: echo(x))
    flat = Primitive("flat_test", same, lambda x: x, decompose=lambda x: sg.ravel(x))
    for prim in (echo, flat):
        del REGISTRY[prim.name]  # not a primitive of the library: test_ops checks the registry's
    graph = sg.trace(lambda a: flat(echo(a)) * 2.0, np.ones((2, 3)))
    with pytest.raises(IRError, match="decompositions of echo_test do not terminate"):
        decompose(graph, lambda prim: prim is not echo)
    with pytest.raises(IRError, match=r"decomposition of flat_test gives f64\[6\], not f64\[2,3\]"):
        decompose(graph, lambda prim: prim is not flat)


def _double(x):
    return x * 2


def _doubled_by_a_helper(x):
    return _double(x)


def test_numpy_backend_calls_only_references_that_stand_alone():
    """A reference that is a lambda, or uses a module's own helpers, cannot be printed into a standalone
    module: without a rule or a decomposition the NumPy backend says so."""
    from symgrad.codegen import numpy_backend
    from symgrad.core import REGISTRY, Primitive
    same = lambda inputs: (inputs[0].shape, inputs[0].dtype)  # noqa: E731
    prims = [Primitive("lambda_test", same, lambda x: x * 2), Primitive("helper_test", same, _doubled_by_a_helper)]
    for prim in prims:
        del REGISTRY[prim.name]
        assert numpy_backend.impl_helper(prim) is None
        with pytest.raises(sg.UnsupportedOpError, match=rf"numpy backend cannot lower the primitive\(s\) {prim.name}"):
            sg.compile(lambda a: prim(a), backend="numpy")(np.ones(2))
