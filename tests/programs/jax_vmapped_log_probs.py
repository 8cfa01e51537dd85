# Copyright 2018 The JAX Authors. Licensed under the Apache License, Version 2.0.
#
# google/jax docs/notebooks/vmapped_log_probs.md ("Autobatching for Bayesian inference"), its code cells in order:
# a Bayesian logistic regression's log joint in float32 (norm.logpdf, a log-sigmoid written out, integer labels),
# the unbatched function called on a batch and its error caught, a hand-batched version with axis arguments and
# transposes, the same by vmap, then jit of vmap of a jitted log joint inside a jitted ELBO, and variational
# inference by jit of value_and_grad with argnums=(0, 1), its parameters updated with +=. `jax.numpy` is
# `symgrad.numpy`, `jax` is `symgrad` (`jax.jit` is `sg.compile`). Changed (marked): the ELBO's noise is NumPy's
# (JAX's random keys are its own); 100 steps, not 1000; the arrays a notebook cell displays are printed; the caught
# error's text not printed (each library words it its own way); no plot.
import symgrad as jax  # changed: import jax
from symgrad import compile as jit  # changed: jax.jit is sg.compile

import symgrad.numpy as jnp
import symgrad.scipy as jsp

import numpy as np
import scipy as sp
import scipy.special  # changed: sp.special imported (the notebook's scipy had it loaded)

np.random.seed(10009)

num_features = 10
num_points = 100

true_beta = np.random.randn(num_features).astype(jnp.float32)
all_x = np.random.randn(num_points, num_features).astype(jnp.float32)
y = (np.random.rand(num_points) < sp.special.expit(all_x.dot(true_beta))).astype(jnp.int32)

print(y)  # changed: printed

def log_joint(beta):
    result = 0.
    # Note that no `axis` parameter is provided to `jnp.sum`.
    result = result + jnp.sum(jsp.stats.norm.logpdf(beta, loc=0., scale=1.))
    result = result + jnp.sum(-jnp.log(1 + jnp.exp(-(2*y-1) * jnp.dot(all_x, beta))))
    return result

print(log_joint(np.random.randn(num_features)))  # changed: printed

# This doesn't work, because we didn't write `log_prob()` to handle batching.
try:
  batch_size = 10
  batched_test_beta = np.random.randn(batch_size, num_features)

  log_joint(np.random.randn(batch_size, num_features))
except ValueError as e:
  print("Caught expected exception")  # changed: + str(e)

def batched_log_joint(beta):
    result = 0.
    # Here (and below) `sum` needs an `axis` parameter. At best, forgetting to set axis
    # or setting it incorrectly yields an error; at worst, it silently changes the
    # semantics of the model.
    result = result + jnp.sum(jsp.stats.norm.logpdf(beta, loc=0., scale=1.),
                           axis=-1)
    # Note the multiple transposes. Getting this right is not rocket science,
    # but it's also not totally mindless. (I didn't get it right on the first
    # try.)
    result = result + jnp.sum(-jnp.log(1 + jnp.exp(-(2*y-1) * jnp.dot(all_x, beta.T).T)),
                           axis=-1)
    return result

batch_size = 10
batched_test_beta = np.random.randn(batch_size, num_features)

print(batched_log_joint(batched_test_beta))  # changed: printed

vmap_batched_log_joint = jax.vmap(log_joint)
print(vmap_batched_log_joint(batched_test_beta))  # changed: printed

@jit  # changed: jax.jit is sg.compile
def log_joint(beta):
    result = 0.
    # Note that no `axis` parameter is provided to `jnp.sum`.
    result = result + jnp.sum(jsp.stats.norm.logpdf(beta, loc=0., scale=10.))
    result = result + jnp.sum(-jnp.log(1 + jnp.exp(-(2*y-1) * jnp.dot(all_x, beta))))
    return result

batched_log_joint = jit(jax.vmap(log_joint))  # changed: jax.jit is sg.compile

def elbo(beta_loc, beta_log_scale, epsilon):
    beta_sample = beta_loc + jnp.exp(beta_log_scale) * epsilon
    return jnp.mean(batched_log_joint(beta_sample), 0) + jnp.sum(beta_log_scale - 0.5 * np.log(2*np.pi))

elbo = jit(elbo)  # changed: jax.jit is sg.compile
elbo_val_and_grad = jit(jax.value_and_grad(elbo, argnums=(0, 1)))  # changed: jax.jit is sg.compile

noise = np.random.RandomState(10003)  # changed: random.key(10003)

def normal_sample(key, shape):  # changed: NumPy's draws, not random.split and random.normal
    """Convenience function for quasi-stateful RNG."""
    return key, jnp.array(key.randn(*shape).astype(np.float32))  # changed

beta_loc = jnp.zeros(num_features, jnp.float32)
beta_log_scale = jnp.zeros(num_features, jnp.float32)

step_size = 0.01
batch_size = 128
epsilon_shape = (batch_size, num_features)
key = noise  # changed
for i in range(100):  # changed: 1000
    key, epsilon = normal_sample(key, epsilon_shape)
    elbo_val, (beta_loc_grad, beta_log_scale_grad) = elbo_val_and_grad(
        beta_loc, beta_log_scale, epsilon)
    beta_loc += step_size * beta_loc_grad
    beta_log_scale += step_size * beta_log_scale_grad
    if i % 10 == 0:
        print('{}\t{}'.format(i, elbo_val))

print(true_beta)  # changed: plotted against the posterior means and error bars
print(beta_loc)  # changed
print(jnp.exp(beta_log_scale))  # changed
