# HIPS/autograd examples/negative_binomial_maxlike.py: the negative binomial's maximum-likelihood r by scipy's
# Newton (Halley) iteration, its first and second derivatives by nesting grad over a gradient: third derivatives
# of gammaln. `autograd.numpy` is `symgrad.numpy`, autograd's grad and scipy.special are `sg`'s. Changed (marked):
# grad's argnum is JAX's and symgrad's argnums; 300 samples (1000); no plot, the fitted curve's values printed.
import scipy.optimize

import numpy.random as npr  # changed: autograd.numpy.random is NumPy's

import symgrad.numpy as np
import symgrad as sg  # changed: autograd's grad is sg's
from symgrad.scipy.special import gammaln

# The code in this example implements a method for finding a stationary point of
# the negative binomial likelihood via Newton's method, described here:
# https://en.wikipedia.org/wiki/Negative_binomial_distribution#Maximum_likelihood_estimation


def newton(f, x0):
    # wrap scipy.optimize.newton with our automatic derivatives
    return scipy.optimize.newton(f, x0, fprime=sg.grad(f), fprime2=sg.grad(sg.grad(f)))


def negbin_loglike(r, p, x):
    # the negative binomial log likelihood we want to maximize
    return gammaln(r + x) - gammaln(r) - gammaln(x + 1) + x * np.log(p) + r * np.log(1 - p)


def negbin_sample(r, p, size):
    # a negative binomial is a gamma-compound-Poisson
    return npr.poisson(npr.gamma(r, p / (1 - p), size=size))


def fit_maxlike(x, r_guess):
    # follows Wikipedia's section on negative binomial max likelihood
    assert np.var(x) > np.mean(x), "Likelihood-maximizing parameters don't exist!"
    loglike = lambda r, p: np.sum(negbin_loglike(r, p, x))
    p = lambda r: np.sum(x) / np.sum(r + x)
    rprime = lambda r: sg.grad(loglike)(r, p(r))
    r = newton(rprime, r_guess)
    return r, p(r)


if __name__ == "__main__":
    # generate data
    npr.seed(0)
    data = negbin_sample(r=5, p=0.5, size=300)  # changed: 1000

    # fit likelihood-extremizing parameters
    r, p = fit_maxlike(data, r_guess=1)

    # report fit
    print("Fit parameters:")
    print(f"r={r}, p={p}")

    print("Check that we are at a local stationary point:")
    loglike = lambda r, p: np.sum(negbin_loglike(r, p, data))
    grad_both = sg.grad(loglike, argnums=(0, 1))  # changed: argnum
    print([float(g) for g in grad_both(r, p)])  # changed: floats (JAX prints its arrays as Array(...))

    xm = data.max()
    print("fit", np.round(np.exp(negbin_loglike(r, p, np.arange(xm))), 10))  # changed: printed, not plotted
