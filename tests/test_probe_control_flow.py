"""Control flow and composed transforms: what random_programs_control.py found, minimized."""
import numpy as np
import pytest

import symgrad as sg


def test_vmap_of_a_loop_of_no_steps_on_eager_tensors():
    """vmap of fori_loop(0, 0, ...) over an eager tensor failed: the loop's result, a view of one array of its
    several results, was checked for sharing memory with that tuple of arrays (ValueError: inhomogeneous shape)."""
    x, w = np.arange(12.0).reshape(4, 3), np.linspace(-1.0, 1.0, 12).reshape(4, 3)
    for steps in (0, 1):
        t = sg.tensor(x, requires_grad=True)
        out = sg.vmap(lambda r: sg.fori_loop(0, steps, lambda i, c: c * 2.0, r))(t)
        np.testing.assert_array_equal(out.detach().numpy(), x * 2.0 ** steps)
        sg.sum(out * w).backward()
        np.testing.assert_array_equal(t.grad.numpy(), w * 2.0 ** steps)


@pytest.mark.parametrize("unroll", [1, 3, True, False])
def test_scan_and_fori_loop_take_jaxs_unroll(unroll):
    """unroll= (JAX's hint, no change of value) was a TypeError: JAX code calling scan(..., unroll=2) did not run."""
    x = np.array([0.5, -1.0, 2.0])

    def f(x):
        total, ys = sg.scan(lambda c, v: (c + sg.sin(v), c * v), 0.0, x, unroll=unroll)
        return total + sg.sum(ys) + sg.sum(sg.fori_loop(0, 3, lambda i, c: c * 0.5 + i, x, unroll=unroll))
    want = np.sum(np.sin(x)) + np.sum(np.cumsum(np.r_[0.0, np.sin(x)[:-1]]) * x) + np.sum(x / 8 + 0.5 + 2)
    for run in (f, sg.compile(f), sg.compile(f, backend="numpy")):
        np.testing.assert_allclose(run(x), want, rtol=1e-12)
    with pytest.raises(ValueError, match="unroll must be a positive int"):
        sg.scan(lambda c, v: (c, v), 0.0, x, unroll=0)


def test_python_number_carries_outside_a_trace_are_arrays_as_in_a_trace():
    """Outside a trace a Python-number carry or operand reached the body as it was: `(c > 0).astype(...)` on the
    initial 0.0 raised AttributeError ('bool' object has no attribute 'astype') where the compiled call ran."""
    x = np.array([0.5, -1.2, 2.0])
    cases = [lambda x: sg.sum(sg.scan(lambda c, v: (c + v, (c > 0).astype(sg.int64)), 0.0, x)[1] * x),
             lambda x: sg.fori_loop(0, 3, lambda i, c: c + (c > 0).astype(np.float64) + x[0], 0.0),
             lambda x: sg.while_loop(lambda c: c < 2, lambda c: c + (c >= 0).astype(np.int64), 0) * x[1],
             lambda x: sg.cond(x[0] > 0, lambda a: (a > 0).astype(np.float64) * x[2], lambda a: a * x[1], 1.0),
             lambda x: sg.switch(1, [lambda a: a * x[0], lambda a: (a > 0).astype(np.float64) * x[2]], 1.0)]
    for f in cases:
        want = sg.compile(f)(x)
        np.testing.assert_allclose(f(x), want, rtol=1e-15)
        np.testing.assert_allclose(f(sg.tensor(x)).numpy(), want, rtol=1e-15)


def test_a_scan_of_no_steps_outside_a_trace_gives_empty_ys_of_the_steps_types():
    """scan over no steps on NumPy arrays or eager tensors raised ("the ys' shapes are unknown") where the compiled
    call, and JAX's, give empty ys: the body is traced, not run, for their types."""
    x = np.arange(6.0).reshape(3, 2)

    def f(x, xs):
        return sg.scan(lambda c, r: (c * 2.0, {"a": c + (0.0 if r is None else r[0]), "b": c > 0}), x[0], xs, length=0)
    for xs in ((x[:0], None), None):
        want_carry, want_ys = sg.compile(f)(x, xs)
        for run in (f, lambda x, xs: f(sg.tensor(x, requires_grad=True), xs)):
            carry, ys = run(x, xs)
            np.testing.assert_array_equal(np.asarray(carry.detach().numpy() if hasattr(carry, "detach") else carry),
                                          want_carry)
            for key in ("a", "b"):
                assert ys[key].shape == want_ys[key].shape == (0, 2) and ys[key].dtype == want_ys[key].dtype
        t = sg.tensor(x, requires_grad=True)  # on tensors the ys are tensors, as the steps' would be
        out = sg.sum(f(t, xs)[1]["a"])
        out.backward()
        assert out.item() == 0.0 and np.array_equal(t.grad.numpy(), np.zeros_like(x))


def test_a_failing_trace_names_the_python_value_argument_it_was_given():
    """The note naming the Python values (None, a string) a failing trace was given indexed the names of the
    arguments' leaves by the argument's position: an IndexError, or another argument's name, after a pytree."""
    def f(pair, k):
        return pair[0] * k
    with pytest.raises(TypeError, match=r"argument k = None \(a NoneType\)"):
        sg.compile(f)((np.ones(2), np.ones(2)), None)
    with pytest.raises(TypeError, match=r"argument k = None \(a NoneType\)"):
        sg.compile(lambda x, k: x * k)(np.ones(2), None)
