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

# google/jax examples/kernel_lsq.py: kernel least squares, a Gram matrix by vmap of vmap of a kernel (linear, and an
# RBF added here) under jit of a partial, its objective minimized by momentum in a jitted update taking the step
# index, and a jit of vmap of a predictor closing over the fitted weights. `jax.numpy` is `symgrad.numpy`, `jax.jit`
# is `sg.compile`. Changed (marked): optimizers.momentum copied (jax.example_libraries is JAX's); 300 steps, not
# 10,000, of a larger step size; n = 40, d = 8; the jaxprs not printed (make_jaxpr is JAX's IR), the RBF kernel
# trained and its MSE printed instead; `precision=lax.Precision.HIGH` left out (symgrad has no lax; float64 on a
# CPU is computed at full precision either way).

from functools import partial

import numpy.random as npr

import symgrad.numpy as jnp
from symgrad import grad, compile as jit, vmap  # changed: make_jaxpr and lax are JAX's


class optimizers:  # changed: jax.example_libraries.optimizers.momentum, for an array
  @staticmethod
  def momentum(step_size, mass):
    init = lambda x0: (x0, jnp.zeros_like(x0))
    update = lambda i, g, state: (state[0] - step_size * (mass * state[1] + g), mass * state[1] + g)
    return init, update, lambda state: state[0]


def gram(kernel, xs):
  '''Compute a Gram matrix from a kernel and an array of data points.

  Args:
    kernel: callable, maps pairs of data points to scalars.
    xs: array of data points, stacked along the leading dimension.

  Returns:
    A 2d array `a` such that `a[i, j] = kernel(xs[i], xs[j])`.
  '''
  return vmap(lambda x: vmap(lambda y: kernel(x, y))(xs))(xs)


def minimize(f, x, num_steps=10000, step_size=0.000001, mass=0.9):
  opt_init, opt_update, get_params = optimizers.momentum(step_size, mass)

  @jit
  def update(i, opt_state):
    x = get_params(opt_state)
    return opt_update(i, grad(f)(x), opt_state)

  opt_state = opt_init(x)
  for i in range(num_steps):
    opt_state = update(i, opt_state)
  return get_params(opt_state)


def train(kernel, xs, ys, regularization=0.01):
  gram_ = jit(partial(gram, kernel))
  gram_mat = gram_(xs)
  n = xs.shape[0]

  def objective(v):
    risk = .5 * jnp.sum((jnp.dot(gram_mat, v) - ys) ** 2.0)
    reg = regularization * jnp.sum(v ** 2.0)
    return risk + reg

  v = minimize(objective, jnp.zeros(n), num_steps=300, step_size=0.0005)  # changed: 300 steps

  def predict(x):
    prods = vmap(lambda x_: kernel(x, x_))(xs)
    return jnp.sum(v * prods)

  return jit(vmap(predict))


if __name__ == "__main__":
  n = 40  # changed: 100
  d = 8  # changed: 20
  npr.seed(0)  # changed: seeded

  # linear kernel

  linear_kernel = lambda x, y: jnp.dot(x, y)  # changed: precision=lax.Precision.HIGH
  truth = npr.randn(d)
  xs = npr.randn(n, d)
  ys = jnp.dot(xs, truth)

  predict = train(linear_kernel, xs, ys)

  print('MSE:', jnp.sum((predict(xs) - ys) ** 2.))

  rbf_kernel = lambda x, y: jnp.exp(-jnp.sum((x - y) ** 2))

  predict = train(rbf_kernel, xs, ys)  # changed: the RBF kernel trained, not its jaxpr printed
  print('MSE:', jnp.sum((predict(xs) - ys) ** 2.))  # changed
  print(predict(xs[:3] + 0.1))  # changed: predictions at new points
