# Copyright 2018 The JAX Authors.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     https://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

# google/jax examples/advi.py: automatic differentiation variational inference of a funnel density, a Monte Carlo
# ELBO through vmap of a partial (in_axes=(0, None, None)) and vmap of norm.logpdf, grad inside a jitted update with
# momentum, and a jitted mesh evaluation with static arguments (a function, tuples of limits, a tick count; meshgrid,
# stack, vmap over points). `jax.numpy` is `symgrad.numpy`, `jax.jit` is `sg.compile`. Changed (marked): the noise
# is NumPy's, drawn beforehand (40 samples per step), and indexed by the step (JAX's random keys are its own);
# optimizers.momentum copied for a tuple of arrays; 20 steps, not 100; the meshes' sums printed instead of plotted
# (11 ticks, not 101).

"""Automatic differentiation variational inference in Numpy and JAX.

This demo fits a Gaussian approximation to an intractable, unnormalized
density, by differentiating through a Monte Carlo estimate of the
variational evidence lower bound (ELBO)."""


from functools import partial
import numpy.random as npr  # changed: the noise's source (matplotlib not used)

from symgrad import compile as jit, grad, vmap  # changed: jax.jit is sg.compile
import symgrad.numpy as jnp
import symgrad.scipy.stats.norm as norm

NOISE = npr.RandomState(0).randn(20, 40, 2)  # changed: random.normal(random.key(t), ...) for steps t < 20


class optimizers:  # changed: jax.example_libraries.optimizers.momentum, for a tuple of arrays
  @staticmethod
  def momentum(step_size, mass):
    init = lambda x0: [(x, jnp.zeros_like(x)) for x in x0]
    update = lambda i, g, state: [(x - step_size * (mass * v + gx), mass * v + gx) for (x, v), gx in zip(state, g)]
    return init, update, lambda state: tuple(x for x, _ in state)


# ========= Functions to define the evidence lower bound. =========

def diag_gaussian_sample(rng, mean, log_std):
    # Take a single sample from a diagonal multivariate Gaussian.
    return mean + jnp.exp(log_std) * rng  # changed: rng is the noise, random.normal(rng, mean.shape)

def diag_gaussian_logpdf(x, mean, log_std):
    # Evaluate a single point on a diagonal multivariate Gaussian.
    return jnp.sum(vmap(norm.logpdf)(x, mean, jnp.exp(log_std)))

def elbo(logprob, rng, mean, log_std):
    # Single-sample Monte Carlo estimate of the variational lower bound.
    sample = diag_gaussian_sample(rng, mean, log_std)
    return logprob(sample) - diag_gaussian_logpdf(sample, mean, log_std)

def batch_elbo(logprob, rng, params, num_samples):
    # Average over a batch of random samples.
    rngs = rng  # changed: the samples' noise, random.split(rng, num_samples)
    vectorized_elbo = vmap(partial(elbo, logprob), in_axes=(0, None, None))
    return jnp.mean(vectorized_elbo(rngs, *params))


# ========= Helper function for plotting. =========

@jit(static_argnums=(0, 1, 2, 4))
def _mesh_eval(func, x_limits, y_limits, params, num_ticks):
    # Evaluate func on a 2D grid defined by x_limits and y_limits.
    x = jnp.linspace(*x_limits, num=num_ticks)
    y = jnp.linspace(*y_limits, num=num_ticks)
    X, Y = jnp.meshgrid(x, y)
    xy_vec = jnp.stack([X.ravel(), Y.ravel()]).T
    zs = vmap(func, in_axes=(0, None))(xy_vec, params)
    return X, Y, zs.reshape(X.shape)

def mesh_eval(func, x_limits, y_limits, params, num_ticks=101):
    return _mesh_eval(func, x_limits, y_limits, params, num_ticks)

# ========= Define an intractable unnormalized density =========

def funnel_log_density(params):
    return norm.logpdf(params[0], 0, jnp.exp(params[1])) + \
           norm.logpdf(params[1], 0, 1.35)


if __name__ == "__main__":
    num_samples = 40

    @jit
    def objective(params, t):
        rng = jnp.array(NOISE)[t]  # changed: random.key(t)
        return -batch_elbo(funnel_log_density, rng, params, num_samples)

    x_limits = (-2, 2)
    y_limits = (-4, 2)
    target_dist = lambda x, _: jnp.exp(funnel_log_density(x))
    approx_dist = lambda x, params: jnp.exp(diag_gaussian_logpdf(x, *params))

    def callback(params, t):
        print(f"Iteration {t} lower bound {objective(params, t)}")

        X, Y, Z = mesh_eval(target_dist, x_limits, y_limits, 1, 11)  # changed: 11 ticks, printed
        print(X.sum(), Y.sum(), Z.sum())  # changed: ax.contour(X, Y, Z)
        X, Y, Z = mesh_eval(approx_dist, x_limits, y_limits, params, 11)  # changed: 11 ticks, printed
        print(Z.sum(), Z.max())  # changed: ax.contour(X, Y, Z)

        # Here we clone the rng used in computing the objective
        # so that we can show exactly the same samples.
        rngs = jnp.array(NOISE)[t]  # changed: random.split(random.key(t), num_samples)
        samples = vmap(diag_gaussian_sample, in_axes=(0, None, None))(rngs, *params)
        print(samples[:, 0].sum(), samples[:, 1].sum())  # changed: ax.plot(samples[:, 0], samples[:, 1], 'b.')


    # Set up optimizer.
    D = 2
    init_mean = jnp.zeros(D)
    init_std  = jnp.zeros(D)
    init_params = (init_mean, init_std)
    opt_init, opt_update, get_params = optimizers.momentum(step_size=0.1, mass=0.9)
    opt_state = opt_init(init_params)

    @jit
    def update(i, opt_state):
        params = get_params(opt_state)
        gradient = grad(objective)(params, i)
        return opt_update(i, gradient, opt_state)


    # Main loop.
    print("Optimizing variational parameters...")
    for t in range(20):  # changed: 100
        opt_state = update(t, opt_state)
        params = get_params(opt_state)
        callback(params, t)
