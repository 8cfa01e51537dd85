"""sg.check_grads: derivatives up to any order against central finite differences, both modes."""
import numpy as np
import pytest

import symgrad as sg

X = np.array([0.3, -1.2, 2.0])


def test_passes_on_correct_derivatives_of_every_order():
    sg.check_grads(lambda x: sg.sum(sg.tanh(x) ** 3), (X,), order=3)
    sg.check_grads(lambda x: sg.exp(x) * sg.sin(x), (X,), order=2, modes=("rev",))


def test_pytrees_integer_arguments_and_float32():
    def f(params, x, n):
        return {"y": sg.sin(x) * params["w"] * n, "s": sg.sum(params["b"] ** 2)}

    params = {"w": X[::-1].copy(), "b": np.array(0.5)}
    sg.check_grads(f, (params, X, np.arange(3)), order=2)
    sg.check_grads(lambda x: sg.sum(sg.tanh(x) ** 2), (X.astype(np.float32),), order=2)


@pytest.mark.parametrize("mode", ["fwd", "rev"])
def test_a_wrong_derivative_fails_naming_the_mode(mode):
    def wrong(x):
        return x * sg.stop_gradient(x)  # derivative 2x, but the rules give x

    with pytest.raises(AssertionError, match="forward mode" if mode == "fwd" else "reverse mode"):
        sg.check_grads(wrong, (X,), order=1, modes=(mode,))


def test_a_wrong_second_derivative_is_caught_at_order_two_only():
    def cube(x):  # the value is x**3 and the first derivative 3x**2, but the rules see no curvature
        return sg.sum(sg.stop_gradient(x ** 3) + 3 * sg.stop_gradient(x ** 2) * (x - sg.stop_gradient(x)))

    sg.check_grads(cube, (X,), order=1)
    for mode in ("fwd", "rev"):
        with pytest.raises(AssertionError, match="order 2"):
            sg.check_grads(cube, (X,), order=2, modes=(mode,))


def test_bad_options_are_errors():
    with pytest.raises(ValueError, match="modes"):
        sg.check_grads(sg.sin, (X,), modes=("backward",))
    with pytest.raises(ValueError, match="order"):
        sg.check_grads(sg.sin, (X,), order=0)
    with pytest.raises(TypeError, match="no float argument"):
        sg.check_grads(lambda n: n * 2, (np.arange(3),))
