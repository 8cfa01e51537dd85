"""The benchmark problems compare equal work: each hand-written NumPy gradient matches symgrad's
and central finite differences (small inputs), and symgrad's at the benchmark sizes."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import symgrad as sg

from gradcheck import numeric_grad
from test_ops import NP

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from problems import PROBLEMS  # noqa: E402


def _tolerance(args):
    """Hand-written vs symgrad: both exact formulas, so rounding differences only."""
    single = any(np.asarray(a).dtype == np.float32 for a in args)
    return dict(rtol=2e-4, atol=2e-5) if single else dict(rtol=1e-9, atol=1e-11)


def _fd_tolerance(arg):
    """Hand-written vs float64 central differences (step 1e-6); float32 gradients are rounded."""
    return dict(rtol=1e-5, atol=1e-7) if arg.dtype == np.float64 else dict(rtol=2e-3, atol=2e-4)


@pytest.mark.parametrize("problem", PROBLEMS, ids=lambda p: p.name)
def test_hand_written_gradient_matches_finite_differences_and_symgrad(problem):
    args = problem.make_args(np.random.default_rng(3), True)
    value, grads = problem.hand(*args)
    reference = lambda *a: problem.loss(NP, *a)  # noqa: E731
    np.testing.assert_allclose(value, reference(*[np.asarray(a, np.float64) for a in args]), **_tolerance(args))
    sg_value, sg_grads = sg.value_and_grad(lambda *a: problem.loss(sg, *a), argnums=problem.argnums)(*args)
    np.testing.assert_allclose(value, sg_value, **_tolerance(args))
    assert len(grads) == len(problem.argnums)
    for n, g, sg_g in zip(problem.argnums, grads, sg_grads):
        assert np.shape(g) == np.shape(args[n]) and np.asarray(g).dtype == args[n].dtype
        np.testing.assert_allclose(g, sg_g, **_tolerance(args), err_msg=f"argument {n}: hand vs symgrad")
        np.testing.assert_allclose(g, numeric_grad(reference, args, n), **_fd_tolerance(args[n]),
                                   err_msg=f"argument {n}: hand vs finite differences")


@pytest.mark.parametrize("problem", PROBLEMS, ids=lambda p: p.name)
def test_hand_written_gradient_matches_symgrad_at_benchmark_size(problem):
    args = problem.make_args(np.random.default_rng(4), False)
    value, grads = problem.hand(*args)
    sg_value, sg_grads = sg.value_and_grad(lambda *a: problem.loss(sg, *a), argnums=problem.argnums)(*args)
    rtol = _tolerance(args)["rtol"]
    np.testing.assert_allclose(value, sg_value, rtol=rtol)
    for n, g, sg_g in zip(problem.argnums, grads, sg_grads):  # entries near zero: error relative to the largest
        np.testing.assert_allclose(g, sg_g, rtol=rtol, atol=rtol * float(np.max(np.abs(g))), err_msg=f"argument {n}")
