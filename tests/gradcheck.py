"""Finite-difference gradient checks for symgrad tests, on top of symgrad's public checker.

`sg.check_grads` (symgrad/finite_differences.py) checks random directions, to any order.
The tests also want whole gradients: `numeric_grad` is the full float64 central-difference
gradient, one `numerical_jvp` per element, and `assert_grads_match_finite_differences`
compares `sg.grad(f)` and `sg.value_and_grad(f)` (values, shapes, dtypes) with it.
"""
from __future__ import annotations

import numpy as np

import symgrad as sg
from symgrad.finite_differences import numerical_jvp


def _as64(a):
    a = np.asarray(a)
    return a.astype(np.float64) if a.dtype.kind == "f" else a


def numeric_grad(f, args, argnum, eps=1e-6):
    """Central finite differences of scalar f with respect to args[argnum], in float64."""
    args64 = [_as64(a) for a in args]
    x = np.asarray(args64[argnum], dtype=np.float64)
    args64[argnum] = x
    grad = np.zeros(x.size)
    for i in range(x.size):
        tangents = [np.zeros_like(a) if a.dtype.kind == "f" else a for a in map(np.asarray, args64)]
        tangents[argnum].reshape(-1)[i] = 1.0
        grad[i] = float(np.asarray(numerical_jvp(f, args64, tangents, eps)))
    return grad.reshape(x.shape)


def assert_grads_match_finite_differences(f, args, argnums=0, rtol=1e-6, atol=1e-8, eps=1e-6, reference=None):
    """Assert sg.grad/value_and_grad of f at args agree with float64 central differences.

    `reference`, if given, is a float64 NumPy function used for the finite differences
    (default: f itself, evaluated eagerly on float64 arguments). Returns the symgrad grads.
    """
    args = tuple(args)
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)
    ref = reference if reference is not None else f
    grads = sg.grad(f, argnums=argnums)(*args)
    value, grads2 = sg.value_and_grad(f, argnums=argnums)(*args)
    grads = (grads,) if single else tuple(grads)
    grads2 = (grads2,) if single else tuple(grads2)
    expected_value = float(np.asarray(ref(*[_as64(a) for a in args])))
    np.testing.assert_allclose(np.asarray(value, dtype=np.float64), expected_value, rtol=max(rtol, 1e-6),
                               atol=atol, err_msg="value_and_grad value")
    for n, g, g2 in zip(nums, grads, grads2):
        a = np.asarray(args[n])
        assert np.shape(g) == a.shape, f"grad of argument {n}: shape {np.shape(g)} != {a.shape}"
        if a.dtype.kind == "f":
            assert np.asarray(g).dtype == a.dtype, f"grad of argument {n}: dtype {np.asarray(g).dtype} != {a.dtype}"
        expected = numeric_grad(ref, args, n, eps)
        np.testing.assert_allclose(np.asarray(g, dtype=np.float64), expected, rtol=rtol, atol=atol,
                                   err_msg=f"grad of argument {n} vs finite differences")
        # the two graphs fuse differently, so they may round differently (by float32's epsilon)
        agree = 1e-12 if a.dtype != np.float32 else 1e-5
        np.testing.assert_allclose(np.asarray(g2, dtype=np.float64), np.asarray(g, dtype=np.float64),
                                   rtol=agree, atol=agree * 1e-3, err_msg=f"value_and_grad vs grad, argument {n}")
    return grads[0] if single else grads


def values_everywhere(f, *args, tensors=True) -> dict:
    """{path: f(*args)} through every path a user can take: eager arrays, sg.compile on each backend,
    and (`tensors`) eager tensors."""
    values = {"eager": f(*args), "numpy": sg.compile(f, backend="numpy")(*args), "llvm": sg.compile(f)(*args)}
    if tensors:
        values["tensor"] = f(*map(sg.tensor, args)).numpy()
    return values


def value_and_grad_everywhere(f, args, argnums=0, eager=True):
    """{path: (value, grads)} of scalar f at args through every path a user can take: the
    uncompiled transform, sg.compile on each backend, and (eager=True) eager tensors' backward.
    grads is a tuple (one per argnum); an unused eager leaf's None grad counts as zeros."""
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    vg = sg.value_and_grad(f, argnums=nums)
    results = {"transform": vg(*args),
               "numpy": sg.compile(vg, backend="numpy")(*args),
               "llvm": sg.compile(vg, backend="llvm")(*args)}
    if eager:
        tensors = [sg.tensor(a, requires_grad=i in nums) for i, a in enumerate(args)]
        out = f(*tensors)
        out.backward()
        grads = tuple(np.zeros_like(np.asarray(args[n])) if tensors[n].grad is None else tensors[n].grad.numpy()
                      for n in nums)
        results["eager"] = (out.detach().numpy(), grads)
    return {path: (np.asarray(value), tuple(np.asarray(g) for g in grads)) for path, (value, grads) in results.items()}
