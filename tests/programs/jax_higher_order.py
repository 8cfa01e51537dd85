# Copyright 2024 The JAX Authors. Licensed under the Apache License, Version 2.0.
#
# google/jax docs/higher-order.md ("Advanced automatic differentiation"), its code cells but the %timeit one: a
# Hessian as jacfwd of grad, TD(0) learning where stop_gradient keeps the target out of the gradient, a straight-
# through estimator for jnp.round, per-example gradients by jit of vmap of grad with in_axes (None, 0, 0, 0), a
# Hessian-vector product, and jacfwd/jacrev of a logistic model and of a dict of its parameters. `jax` is
# `symgrad`, `jax.numpy` is `symgrad.numpy`, `jax.lax.stop_gradient` is `sg.stop_gradient`, `jax.jit` is
# `sg.compile`. Changed (marked): bare expressions printed; the random key's normal draws are NumPy's (JAX's keys
# are its own); the timing cell left out; hvp applied once (the notebook only defines it).
import numpy.random as npr  # changed: the keys' draws

import symgrad as jax  # changed: symgrad's grad, jacfwd, jacrev and vmap
from symgrad import compile as jit  # changed: jax.jit is sg.compile
from symgrad import stop_gradient  # changed: jax.lax.stop_gradient is sg.stop_gradient

def hessian(f):
  return jax.jacfwd(jax.grad(f))

import symgrad.numpy as jnp

def f(x):
  return jnp.dot(x, x)

print(hessian(f)(jnp.array([1., 2., 3.])))  # changed: printed

# Value function and initial parameters
value_fn = lambda theta, state: jnp.dot(theta, state)
theta = jnp.array([0.1, -0.1, 0.])

# An example transition.
s_tm1 = jnp.array([1., 2., -1.])
r_t = jnp.array(1.)
s_t = jnp.array([2., 1., 0.])

def td_loss(theta, s_tm1, r_t, s_t):
  v_tm1 = value_fn(theta, s_tm1)
  target = r_t + value_fn(theta, s_t)
  return -0.5 * ((target - v_tm1) ** 2)

td_update = jax.grad(td_loss)
delta_theta = td_update(theta, s_tm1, r_t, s_t)

print(delta_theta)  # changed: printed

def td_loss(theta, s_tm1, r_t, s_t):
  v_tm1 = value_fn(theta, s_tm1)
  target = r_t + value_fn(theta, s_t)
  return -0.5 * ((stop_gradient(target) - v_tm1) ** 2)  # changed: jax.lax.stop_gradient

td_update = jax.grad(td_loss)
delta_theta = td_update(theta, s_tm1, r_t, s_t)

print(delta_theta)  # changed: printed

s_grad = jax.grad(value_fn)(theta, s_tm1)
delta_theta_original_calculation = (r_t + value_fn(theta, s_t) - value_fn(theta, s_tm1)) * s_grad

print(delta_theta_original_calculation) # [1.2, 2.4, -1.2], same as `delta_theta`  # changed: printed

def f(x):
  return jnp.round(x)  # non-differentiable

def straight_through_f(x):
  # Create an exactly-zero expression with Sterbenz lemma that has
  # an exactly-one gradient.
  zero = x - stop_gradient(x)  # changed: jax.lax.stop_gradient
  return zero + stop_gradient(f(x))  # changed: jax.lax.stop_gradient

print("f(x): ", f(3.2))
print("straight_through_f(x):", straight_through_f(3.2))

print("grad(f)(x):", jax.grad(f)(3.2))
print("grad(straight_through_f)(x):", jax.grad(straight_through_f)(3.2))

perex_grads = jit(jax.vmap(jax.grad(td_loss), in_axes=(None, 0, 0, 0)))  # changed: jax.jit is sg.compile

# Test it:
batched_s_tm1 = jnp.stack([s_tm1, s_tm1])
batched_r_t = jnp.stack([r_t, r_t])
batched_s_t = jnp.stack([s_t, s_t])

print(perex_grads(theta, batched_s_tm1, batched_r_t, batched_s_t))  # changed: printed

dtdloss_dtheta = jax.grad(td_loss)

print(dtdloss_dtheta(theta, s_tm1, r_t, s_t))  # changed: printed

almost_perex_grads = jax.vmap(dtdloss_dtheta)

batched_theta = jnp.stack([theta, theta])
print(almost_perex_grads(batched_theta, batched_s_tm1, batched_r_t, batched_s_t))  # changed: printed

inefficient_perex_grads = jax.vmap(dtdloss_dtheta, in_axes=(None, 0, 0, 0))

print(inefficient_perex_grads(theta, batched_s_tm1, batched_r_t, batched_s_t))  # changed: printed

perex_grads = jit(inefficient_perex_grads)  # changed: jax.jit is sg.compile

print(perex_grads(theta, batched_s_tm1, batched_r_t, batched_s_t))  # changed: printed

def hvp(f, x, v):
    return jax.grad(lambda x: jnp.vdot(jax.grad(f)(x), v))(x)

print(hvp(lambda x: jnp.sum(jnp.sin(x) * x ** 2), jnp.array([0.5, 1.0, -2.0]), jnp.array([1.0, 0.0, 2.0])))  # changed

from symgrad import jacfwd, jacrev

# Define a sigmoid function.
def sigmoid(x):
    return 0.5 * (jnp.tanh(x / 2) + 1)

# Outputs probability of a label being true.
def predict(W, b, inputs):
    return sigmoid(jnp.dot(inputs, W) + b)

# Build a toy dataset.
inputs = jnp.array([[0.52, 1.12,  0.77],
                   [0.88, -1.08, 0.15],
                   [0.52, 0.06, -1.30],
                   [0.74, -2.49, 1.39]])

# Initialize random model coefficients
key = npr.RandomState(0)  # changed: jax.random.key(0)
W = key.normal(size=(3,))  # changed: jax.random.normal(W_key, (3,))
b = key.normal()  # changed: jax.random.normal(b_key, ())

# Isolate the function from the weight matrix to the predictions
f = lambda W: predict(W, b, inputs)

J = jacfwd(f)(W)
print("jacfwd result, with shape", J.shape)
print(J)

J = jacrev(f)(W)
print("jacrev result, with shape", J.shape)
print(J)

def predict_dict(params, inputs):
    return predict(params['W'], params['b'], inputs)

J_dict = jax.jacrev(predict_dict)({'W': W, 'b': b}, inputs)
for k, v in J_dict.items():
    print("Jacobian from {} to logits is".format(k))
    print(v)
