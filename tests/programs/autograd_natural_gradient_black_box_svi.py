# HIPS/autograd examples/natural_gradient_black_box_svi.py: black-box variational inference of a 10-parameter
# diagonal Gaussian posterior (norm.logpdf of a data vector under broadcast means and scales), optimized with adam on
# the gradient and with momentum-free sgd on the natural gradient (the gradient divided by the Fisher diagonal, a
# concatenation of exp(-2 log_sigma) and ones), at three step sizes. `autograd.numpy` is `symgrad.numpy`, autograd's
# transforms and scipy.stats are `sg`'s. Changed (marked): 5 observed dimensions, not 20; 50 samples, not 2000;
# 10 iterations printed every 5, not 200 every 50; the ELBO curves' ends printed instead of plotted; black_box_svi's
# black_box_variational_inference and autograd.misc's flatten, adam and sgd copied in.
import numpy.random as npr  # changed: autograd.numpy.random is NumPy's

import symgrad.numpy as np
import symgrad as sg  # changed: autograd's grad and vjp are sg's
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


def sgd(grad, x0, callback=None, num_iters=200, step_size=0.1, mass=0.9):
    # changed: autograd.misc.optimizers.sgd with its unflatten_optimizer wrapper, copied
    x, unflatten = flatten(x0)
    velocity = np.zeros(len(x))
    for i in range(num_iters):
        g = flatten(grad(unflatten(x), i))[0]
        if callback:
            callback(unflatten(x), i, unflatten(g))
        velocity = mass * velocity - (1.0 - mass) * g
        x = x + step_size * velocity
    return unflatten(x)


# same BBSVI function!
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

    return variational_objective, gradient, unpack_params  # changed: black_box_svi's, copied



if __name__ == "__main__":
    # Specify an inference problem by its unnormalized log-density.
    # it's difficult to see the benefit in low dimensions
    # model parameters are a mean and a log_sigma
    npr.seed(42)  # changed: np.random is NumPy's
    obs_dim = 5  # changed: 20
    Y = npr.randn(obs_dim, obs_dim).dot(npr.randn(obs_dim))  # changed: NumPy's

    def log_density(x, t):
        mu, log_sigma = x[:, :obs_dim], x[:, obs_dim:]
        sigma_density = np.sum(norm.logpdf(log_sigma, 0, 1.35), axis=1)
        mu_density = np.sum(norm.logpdf(Y, mu, np.exp(log_sigma)), axis=1)
        return sigma_density + mu_density

    # Build variational objective.
    D = obs_dim * 2  # dimension of our posterior
    objective, gradient, unpack_params = black_box_variational_inference(log_density, D,
                                                                         num_samples=50)  # changed: 2000

    # Define the natural gradient
    #   The natural gradient of the ELBO is the gradient of the elbo,
    #   preconditioned by the inverse Fisher Information Matrix.  The Fisher,
    #   in the case of a diagonal gaussian, is a diagonal matrix that is a
    #   simple function of the variance.  Intuitively, statistical distance
    #   created by perturbing the mean of an independent Gaussian is
    #   determined by how wide the distribution is along that dimension ---
    #   the wider the distribution, the less sensitive statistical distances is
    #   to perturbations of the mean; the narrower the distribution, the more
    #   the statistical distance changes when you perturb the mean (imagine
    #   an extremely narrow Gaussian --- basically a spike.  The KL between
    #   this Gaussian and a Gaussian $\epsilon$ away in location can be big ---
    #   moving the Gaussian could significantly reduce overlap in support
    #   which corresponds to a greater statistical distance).
    #
    #   When we want to move in directions of steepest ascent, we multiply by
    #   the inverse fisher --- that way we make quicker progress when the
    #   variance is wide, and we scale down our step size when the variance
    #   is small (which leads to more robust/less chaotic ascent).
    def fisher_diag(lam):
        _mu, log_sigma = unpack_params(lam)
        return np.concatenate([np.exp(-2.0 * log_sigma), np.ones(len(log_sigma)) * 2])

    # simple! basically free!
    natural_gradient = lambda lam, i: (1.0 / fisher_diag(lam)) * gradient(lam, i)

    # function for keeping track of callback ELBO values (for plotting below)
    def optimize_and_lls(optfun):
        num_iters = 10  # changed: 200
        elbos = []

        def callback(params, t, g):
            elbo_val = -objective(params, t)
            elbos.append(elbo_val)
            if t % 5 == 0:  # changed: 50
                print(f"Iteration {t} lower bound {elbo_val}")

        init_mean = -1 * np.ones(D)
        init_log_std = -5 * np.ones(D)
        init_var_params = np.concatenate([init_mean, init_log_std])
        variational_params = optfun(num_iters, init_var_params, callback)
        return np.array(elbos)

    # let's optimize this with a few different step sizes
    elbo_lists = []
    step_sizes = [0.1, 0.25, 0.5]
    for step_size in step_sizes:
        # optimize with standard gradient + adam
        optfun = lambda n, init, cb, step_size=step_size: adam(
            gradient, init, step_size=step_size, num_iters=n, callback=cb
        )
        standard_lls = optimize_and_lls(optfun)

        # optimize with natural gradient + sgd, no momentum
        optnat = lambda n, init, cb, step_size=step_size: sgd(
            natural_gradient, init, step_size=step_size, num_iters=n, callback=cb, mass=0.001
        )
        natural_lls = optimize_and_lls(optnat)
        elbo_lists.append((standard_lls, natural_lls))

    for ss, (stand_lls, nat_lls) in zip(step_sizes, elbo_lists):  # changed: printed, not plotted
        print(f"step size {ss:2.2f}: standard {stand_lls[-1]}, natural {nat_lls[-1]}")  # changed
