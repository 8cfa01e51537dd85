# HIPS/autograd examples/gmm.py: a Gaussian mixture model fitted to pinwheel data by Newton-CG with autograd's
# gradient and Hessian-vector product (hessian_vector_product: the gradient of <gradient, v>). `autograd.numpy` is
# `symgrad.numpy`, autograd's transforms and scipy.stats are `sg`'s. Changed (marked): 3 components and 20 points
# per class instead of 10 and 100, at most 4 Newton-CG iterations; plots dropped; make_pinwheel (examples/data.py),
# autograd.misc's flatten_func and autograd's hessian_vector_product copied in (neither symgrad nor JAX has them).
import numpy as onp  # changed: NumPy's own arrays where the program writes into one (JAX's are immutable)
import numpy.random as npr  # changed: autograd.numpy.random is NumPy's
from scipy.optimize import minimize

import symgrad.numpy as np
import symgrad as sg  # changed: autograd's grad and vjp are sg's
import symgrad.scipy.stats.multivariate_normal as mvn
from symgrad.scipy.special import logsumexp


def make_pinwheel(radial_std, tangential_std, num_classes, num_per_class, rate, rs=None):  # changed: copied
    """Based on code by Ryan P. Adams."""
    rs = rs if rs is not None else npr.RandomState(0)
    rads = onp.linspace(0, 2 * np.pi, num_classes, endpoint=False)

    features = rs.randn(num_classes * num_per_class, 2) * onp.array([radial_std, tangential_std])
    features[:, 0] += 1
    labels = onp.repeat(onp.arange(num_classes), num_per_class)

    angles = rads[labels] + rate * onp.exp(features[:, 0])
    rotations = onp.stack([onp.cos(angles), -onp.sin(angles), onp.sin(angles), onp.cos(angles)])
    rotations = onp.reshape(rotations.T, (-1, 2, 2))

    return onp.einsum("ti,tij->tj", features, rotations)


def _flatten(value):  # changed: autograd.misc.flatten, copied
    t = type(value)
    if t in (list, tuple):
        return _concatenate(map(_flatten, value))
    elif t is dict:
        return _concatenate(_flatten(value[k]) for k in sorted(value))
    else:
        return np.ravel(value)


def _concatenate(lst):  # changed: autograd.misc.flatten, copied
    lst = list(lst)
    return np.concatenate(lst) if lst else np.array([])


def flatten(value):  # changed: autograd.misc.flatten, copied (make_vjp is sg.vjp, its pullback returns a tuple)
    flat_value, pullback = sg.vjp(_flatten, value)
    return flat_value, lambda flat: pullback(flat)[0]


def flatten_func(func, example):  # changed: autograd.misc.flatten, copied
    _ex, unflatten = flatten(example)
    _func = lambda _x, *args: func(unflatten(_x), *args)  # changed: the output not raveled (JAX's grad refuses (1,))
    return _func, unflatten, _ex


def hessian_vector_product(fun, argnum=0):  # changed: autograd's hessian_tensor_product, copied
    fun_grad = sg.grad(fun, argnum)

    def vector_dot_grad(*args, **kwargs):
        args, vector = args[:-1], args[-1]
        return np.tensordot(fun_grad(*args, **kwargs), vector, np.ndim(vector))

    return sg.grad(vector_dot_grad, argnum)


def init_gmm_params(num_components, D, scale, rs=None):
    rs = rs if rs is not None else npr.RandomState(0)
    return {
        "log proportions": rs.randn(num_components) * scale,
        "means": rs.randn(num_components, D) * scale,
        "lower triangles": np.zeros((num_components, D, D)) + np.eye(D),
    }


def log_normalize(x):
    return x - logsumexp(x)


def unpack_gmm_params(params):
    normalized_log_proportions = log_normalize(params["log proportions"])
    return normalized_log_proportions, params["means"], params["lower triangles"]


def gmm_log_likelihood(params, data):
    cluster_lls = []
    for log_proportion, mean, cov_sqrt in zip(*unpack_gmm_params(params)):
        cov = np.dot(cov_sqrt.T, cov_sqrt)
        cluster_lls.append(log_proportion + mvn.logpdf(data, mean, cov))
    return np.sum(logsumexp(np.vstack(cluster_lls), axis=0))


if __name__ == "__main__":
    init_params = init_gmm_params(num_components=3, D=2, scale=0.1)  # changed: 10 components

    data = make_pinwheel(radial_std=0.3, tangential_std=0.05, num_classes=3, num_per_class=20,  # changed: 100
                         rate=0.4)

    def objective(params):
        return -gmm_log_likelihood(params, data)

    flattened_obj, unflatten, flattened_init_params = flatten_func(objective, init_params)

    def callback(flattened_params):
        params = unflatten(flattened_params)
        print(f"Log likelihood {-objective(params)}")

    result = minimize(  # changed: the result kept and printed
        flattened_obj,
        flattened_init_params,
        jac=sg.grad(flattened_obj),
        hessp=hessian_vector_product(flattened_obj),
        method="Newton-CG",
        callback=callback,
        options={"maxiter": 4},  # changed: at most 4 iterations
    )
    print("function evaluations", result.nfev, "gradients", result.njev, "Hessian products", result.nhev)
    for name, value in sorted(unflatten(result.x).items()):
        print(name, np.round(value, 6))
