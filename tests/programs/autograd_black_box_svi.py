# HIPS/autograd examples/black_box_svi.py: black-box stochastic variational inference of a 2-d funnel density with
# a diagonal Gaussian, trained with autograd's adam. `autograd.numpy` is `symgrad.numpy`, autograd's transforms and
# scipy.stats are `sg`'s. Changed (marked): 12 adam steps instead of 2000; the plots' contour values are printed
# (their sums) instead of drawn; autograd.misc's flatten and adam copied in (neither symgrad nor JAX has them).
import numpy.random as npr  # changed: autograd.numpy.random is NumPy's

import symgrad.numpy as np
import symgrad as sg  # changed: autograd's grad and vjp are sg's
import symgrad.scipy.stats.multivariate_normal as mvn
from symgrad.scipy.stats import norm


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


def adam(grad, x0, callback=None, num_iters=100, step_size=0.001, b1=0.9, b2=0.999, eps=10**-8):
    # changed: autograd.misc.optimizers.adam with its unflatten_optimizer wrapper, copied
    x, unflatten = flatten(x0)
    m = np.zeros(len(x))
    v = np.zeros(len(x))
    for i in range(num_iters):
        g = flatten(grad(unflatten(x), i))[0]
        if callback:
            callback(unflatten(x), i, unflatten(g))
        m = (1 - b1) * g + b1 * m  # First  moment estimate.
        v = (1 - b2) * (g**2) + b2 * v  # Second moment estimate.
        mhat = m / (1 - b1 ** (i + 1))  # Bias correction.
        vhat = v / (1 - b2 ** (i + 1))
        x = x - step_size * mhat / (np.sqrt(vhat) + eps)
    return unflatten(x)




def black_box_variational_inference(logprob, D, num_samples):
    """Implements http://arxiv.org/abs/1401.0118, and uses the
    local reparameterization trick from http://arxiv.org/abs/1506.02557"""

    def unpack_params(params):
        # Variational dist is a diagonal Gaussian.
        mean, log_std = params[:D], params[D:]
        return mean, log_std

    def gaussian_entropy(log_std):
        return 0.5 * D * (1.0 + np.log(2 * np.pi)) + np.sum(log_std)

    rs = npr.RandomState(0)

    def variational_objective(params, t):
        """Provides a stochastic estimate of the variational lower bound."""
        mean, log_std = unpack_params(params)
        samples = rs.randn(num_samples, D) * np.exp(log_std) + mean
        lower_bound = gaussian_entropy(log_std) + np.mean(logprob(samples, t))
        return -lower_bound

    gradient = sg.grad(variational_objective)

    return variational_objective, gradient, unpack_params


if __name__ == "__main__":
    # Specify an inference problem by its unnormalized log-density.
    D = 2

    def log_density(x, t):
        mu, log_sigma = x[:, 0], x[:, 1]
        sigma_density = norm.logpdf(log_sigma, 0, 1.35)
        mu_density = norm.logpdf(mu, 0, np.exp(log_sigma))
        return sigma_density + mu_density

    # Build variational objective.
    objective, gradient, unpack_params = black_box_variational_inference(log_density, D, num_samples=2000)

    # Set up plotting code
    def plot_isocontours(ax, func, xlimits=None, ylimits=None, numticks=101):
        if ylimits is None:
            ylimits = [-4, 2]
        if xlimits is None:
            xlimits = [-2, 2]
        x = np.linspace(*xlimits, num=numticks)
        y = np.linspace(*ylimits, num=numticks)
        X, Y = np.meshgrid(x, y)
        zs = func(np.concatenate([np.atleast_2d(X.ravel()), np.atleast_2d(Y.ravel())]).T)
        Z = zs.reshape(X.shape)
        print("contour sum", np.sum(Z), "max", np.max(Z))  # changed: printed, not drawn

    ax = None  # changed: no figure

    def callback(params, t, g):
        print(f"Iteration {t} lower bound {-objective(params, t)}")

        if t % 4 == 0:  # changed: every fourth step's contours
            target_distribution = lambda x: np.exp(log_density(x, t))
            plot_isocontours(ax, target_distribution)

            mean, log_std = unpack_params(params)
            variational_contour = lambda x: mvn.pdf(x, mean, np.diag(np.exp(2 * log_std)))
            plot_isocontours(ax, variational_contour)

    print("Optimizing variational parameters...")
    init_mean = -1 * np.ones(D)
    init_log_std = -5 * np.ones(D)
    init_var_params = np.concatenate([init_mean, init_log_std])
    variational_params = adam(gradient, init_var_params, step_size=0.1, num_iters=12,  # changed: 2000
                              callback=callback)
    print("variational parameters", variational_params)  # changed: printed
