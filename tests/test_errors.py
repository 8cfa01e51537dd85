"""SPEC section 6: every bad input gets a clear error, raised before any wrong number."""
import numpy as np
import pytest

import symgrad as sg
from gradcheck import assert_grads_match_finite_differences

THIS_FILE = "test_errors.py"


def assert_names_user_line(message, code):
    assert THIS_FILE in message, message
    assert code in message, message


def add_mismatched(a, b):
    return a + b  # the offending line


def test_shape_mismatch_names_both_shapes_and_the_source_line():
    with pytest.raises(sg.ShapeError) as info:
        sg.trace(add_mismatched, np.ones(3), np.ones(4))
    message = str(info.value)
    assert "(3,)" in message and "(4,)" in message
    assert_names_user_line(message, "return a + b  # the offending line")


def test_shape_mismatch_under_grad_and_eagerly():
    with pytest.raises(sg.ShapeError) as info:
        sg.grad(lambda a, b: sg.sum(add_mismatched(a, b)))(np.ones((2, 3)), np.ones((3, 2)))
    assert "(2, 3)" in str(info.value) and "(3, 2)" in str(info.value)
    assert_names_user_line(str(info.value), "return a + b")
    with pytest.raises(sg.ShapeError) as info:
        sg.add(np.ones(3), np.ones(4))
    assert "(3,)" in str(info.value) and "(4,)" in str(info.value)


def branchy(x):
    if x > 0:  # branch on a traced value
        return x
    return -x


def test_if_on_traced_value_suggests_where_and_names_the_line():
    with pytest.raises(sg.TracerError) as info:
        sg.trace(branchy, 1.0)
    message = str(info.value)
    assert "sg.where" in message
    assert_names_user_line(message, "if x > 0:  # branch on a traced value")
    with pytest.raises(sg.TracerError, match="sg.where"):
        sg.grad(branchy)(1.0)
    assert isinstance(info.value, TypeError)


def test_float_and_int_of_traced_value():
    with pytest.raises(sg.TracerError, match="sg.where"):
        sg.trace(lambda x: float(x), 1.0)
    with pytest.raises(sg.TracerError):
        sg.trace(lambda x: [x for _ in range(int(x))], 1.0)


def test_numpy_ufuncs_on_tracers_route_to_sg_and_other_numpy_functions_are_clear_errors():
    graph = sg.trace(lambda x: np.sin(x) + np.ones(2) * x, np.ones(2))
    assert "sin" in str(graph)
    with pytest.raises(sg.TracerError, match="sg.asarray") as info:
        sg.trace(lambda x: np.asarray(x), np.ones(2))
    assert "test_errors.py" in str(info.value)
    with pytest.raises(sg.TracerError, match="add.accumulate"):
        sg.trace(lambda x: np.add.accumulate(x), np.ones(2))


NUMPY_REDUCTIONS = [lambda x: np.sum(x), lambda x: np.sum(x, axis=1, keepdims=True), lambda x: np.mean(x, axis=0),
                    lambda x: np.max(x, axis=1), lambda x: np.amin(x), lambda x: np.prod(x, 0),
                    lambda x: np.std(x, ddof=1), lambda x: np.var(x, axis=1), lambda x: np.sum(x, dtype=np.float32)]


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
@pytest.mark.parametrize("reduction", NUMPY_REDUCTIONS)
def test_numpy_reductions_on_tracers_work_as_on_arrays(reduction, backend):
    """np.sum(t), np.std(t, ddof=1), ... call t.sum(axis=, dtype=, out=) as on any array-like; they used to fail
    with "sum() got an unexpected keyword argument 'out'". They give NumPy's values and the right gradients."""
    x = np.random.default_rng(3).normal(size=(3, 4))
    expected = reduction(x)
    got = sg.compile(reduction, backend=backend)(x)
    assert got.shape == np.shape(expected) and got.dtype == np.asarray(expected).dtype
    np.testing.assert_allclose(got, expected, rtol=1e-6 if got.dtype == np.float32 else 1e-12)
    weights = np.arange(1.0, got.size + 1).reshape(got.shape)
    # a float32 cast rounds: finite differences through it need a large step and loose tolerance
    tol = dict(rtol=1e-2, atol=1e-3, eps=1e-3) if got.dtype == np.float32 else {}
    grad = assert_grads_match_finite_differences(lambda v: sg.sum(reduction(v) * weights), (x,),
                        reference=lambda v: np.sum(reduction(v) * weights), **tol)
    compiled = sg.compile(sg.grad(lambda v: sg.sum(reduction(v) * weights)), backend=backend)(x)
    np.testing.assert_allclose(compiled, grad, rtol=1e-6)


def test_numpy_reduction_into_out_on_a_tracer_is_a_clear_error():
    with pytest.raises(sg.TracerError, match="out=") as info:
        sg.trace(lambda x: np.sum(x, out=np.zeros(())), np.ones(2))
    assert "test_errors.py" in str(info.value)


def test_sg_trace_of_an_array_is_numpys_trace():
    """sg.trace is the IR tracer; a port of np.trace(a) used to fail with "'Tracer' object is not callable",
    then pointed to einsum; given an array it is now NumPy's trace."""
    np.testing.assert_allclose(sg.grad(lambda a: sg.trace(a))(np.ones((3, 3))), np.eye(3))
    np.testing.assert_allclose(sg.grad(lambda a: sg.einsum("ii", a))(np.ones((3, 3))), np.eye(3))


def test_gradient_with_respect_to_integer_input():
    with pytest.raises(TypeError, match="int64") as info:
        sg.grad(lambda x: sg.sum(x * 1.0))(np.arange(3))
    assert "differentiate" in str(info.value) and "'x'" in str(info.value)
    with pytest.raises(TypeError, match="'params_n'"):
        sg.grad(lambda params: sg.sum(params["n"] * 1.0))({"n": np.arange(2)})
    with pytest.raises(TypeError, match="bool"):
        sg.grad(lambda x, m: sg.sum(sg.where(m, x, 0.0)), argnums=1)(np.ones(2), np.array([True, False]))
    # an integer argument outside argnums is fine
    g = sg.grad(lambda x, n: sg.sum(x * n))(np.ones(2), np.array([2, 3]))
    np.testing.assert_allclose(g, [2.0, 3.0])


def test_grad_of_non_scalar_output_names_the_shape():
    with pytest.raises(TypeError, match=r"\(3,\)") as info:
        sg.grad(lambda x: x * 2)(np.ones(3))
    assert "scalar" in str(info.value)
    with pytest.raises(TypeError, match=r"\(2, 2\)"):
        sg.value_and_grad(lambda x: x * 2)(np.ones((2, 2)))


def test_unknown_dtypes_are_type_errors():
    with pytest.raises(TypeError, match="float16"):
        sg.grad(lambda x: sg.sum(x))(np.ones(3, np.float16))
    with pytest.raises(TypeError, match="float16"):
        sg.trace(lambda x: sg.sum(x), np.ones(3, np.float16))
    with pytest.raises(TypeError, match="complex"):
        sg.grad(lambda x: sg.sum(x))(np.ones(3, complex))
    with pytest.raises(TypeError, match="complex"):
        sg.trace(lambda x: sg.sum(x), 1 + 2j)
    with pytest.raises(TypeError, match="float16"):
        sg.trace(lambda x: sg.astype(x, "float16"), np.ones(3))
    with pytest.raises(TypeError):
        sg.trace(lambda x: sg.sum(x), "abc")


def test_matmul_misalignment():
    with pytest.raises(sg.ShapeError) as info:
        sg.trace(lambda a, b: a @ b, np.ones((2, 3)), np.ones((4, 2)))
    message = str(info.value)
    assert "(2, 3)" in message and "(4, 2)" in message and "aligned" in message
    assert_names_user_line(message, "a @ b")


def test_bad_axis():
    with pytest.raises(sg.ShapeError, match="axis 2") as info:
        sg.trace(lambda a: sg.sum(a, axis=2), np.ones((2, 3)))
    assert_names_user_line(str(info.value), "sg.sum(a, axis=2)")
    with pytest.raises(sg.ShapeError):
        sg.trace(lambda a: sg.concatenate([a, a], axis=3), np.ones((2, 3)))


@pytest.mark.parametrize("index, axis, size", [
    (lambda a: a[5], 0, 2),
    (lambda a: a[:, 3], 1, 3),
    (lambda a: a[-3], 0, 2),
    (lambda a: a[np.array([0, 7])], 0, 2),
    (lambda a: sg.take(a, np.array([0, 7]), axis=1), 1, 3),
])
def test_index_out_of_bounds_names_axis_and_size(index, axis, size):
    with pytest.raises(IndexError) as info:
        sg.trace(index, np.ones((2, 3)))
    message = str(info.value)
    assert f"axis {axis}" in message and f"size {size}" in message
    assert THIS_FILE in message


def test_other_shape_errors():
    with pytest.raises(sg.ShapeError, match=r"\(2, 3\).*\(4,\)"):
        sg.trace(lambda a: sg.reshape(a, (4,)), np.ones((2, 3)))
    with pytest.raises(sg.ShapeError, match=r"\(2, 3\).*\(3, 3\)"):
        sg.trace(lambda a, b: sg.concatenate([a, b], axis=1), np.ones((2, 3)), np.ones((3, 3)))


def test_bad_argnums_and_cotangent_shapes():
    with pytest.raises(ValueError, match="argnums"):
        sg.grad(lambda x: sg.sum(x), argnums=3)(np.ones(2))
    _, pullback = sg.vjp(lambda x: x * 2, np.ones(3))
    with pytest.raises(ValueError, match=r"\(2,\)"):
        pullback(np.ones(2))
    with pytest.raises(ValueError, match=r"\(2,\)"):
        sg.jvp(lambda x: x * 2, (np.ones(3),), (np.ones(2),))


def test_has_aux_requires_a_pair():
    with pytest.raises(TypeError, match="pair"):
        sg.grad(lambda x: sg.sum(x), has_aux=True)(np.ones(2))


def test_non_array_output():
    with pytest.raises(TypeError, match="str"):
        sg.trace(lambda x: "nope", 1.0)


@pytest.mark.parametrize("backend", ["llvm", "numpy"])
def test_compiled_function_called_with_the_wrong_argument_count_names_its_parameters(backend):
    def loss(w, x):
        return sg.sum(w * x)
    step = sg.compile(loss, backend=backend)
    assert step(np.ones(2), np.ones(2)) == 2.0
    with pytest.raises(TypeError, match=r"loss\(w, x\) called with 1 argument\(s\): missing a required argument: 'x'"):
        step(np.ones(2))
    with pytest.raises(TypeError, match=r"loss\(w, x\) called with 3 argument\(s\)"):
        step(np.ones(2), np.ones(2), np.ones(2))


def test_pytorchs_refusals_that_symgrad_took_silently():
    """A .grad of another dtype (a float64 one moved float32 weights), anything but a Module or None over a registered
    submodule (it was dropped), and both dim= and axis= (axis was ignored): PyTorch 2.13 refuses each."""
    torch = pytest.importorskip("torch")
    for lib in (sg, torch):
        p = lib.nn.Parameter(lib.tensor(np.zeros(3, np.float32)))
        for wrong in (np.ones(3), np.ones(3, np.int64)):
            with pytest.raises(RuntimeError, match="dtype"):
                p.grad = lib.tensor(wrong)
        p.grad = lib.tensor(np.ones(3, np.float32))
        assert p.grad.dtype == p.dtype
        model = lib.nn.Sequential(lib.nn.Linear(2, 2))
        with pytest.raises(TypeError, match="child module '0'"):
            setattr(model, "0", 3)
        assert isinstance(model[0], lib.nn.Linear)
        setattr(model, "0", None)
        assert list(model._modules.items()) == [("0", None)]
        t = lib.tensor(np.array([[1.0, 2.0], [3.0, 0.0]]))
        for method in ("max", "min", "sum", "mean", "prod", "argmax", "argmin", "cumsum"):
            with pytest.raises(TypeError):
                getattr(t, method)(dim=0, axis=1)
        assert t.max(axis=1).values.tolist() == [2.0, 3.0] and t.sum(axis=0).tolist() == [4.0, 2.0]
