# Copyright 2019 The JAX Authors.
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

# google/jax examples/differentially_private_sgd.py: DP-SGD, per-example gradients by vmap of grad, each clipped by
# the norm of its flattened tree (tree_flatten, jnp.linalg.norm of a jnp.array of norms), summed, noised and
# rebuilt (tree_unflatten) in a jitted update, against a plain jitted SGD update. `jax.numpy` is `symgrad.numpy`,
# `jax.jit` is `sg.compile`, jax.tree_util is symgrad.tree_util. Changed (marked): the model is stax's Flatten,
# Dense(32), Relu, Dense(10), copied with serial and logsoftmax from jax.example_libraries.stax with initial weights
# from NumPy (neither symgrad nor JAX's core has stax; its Conv needs lax), optimizers.sgd copied too; the noise
# comes from NumPy (JAX's random numbers are its own); synthetic data of MNIST's shapes (128 training, 64 test
# images), batches of 32, 2 epochs; flags fixed; no privacy accounting (dp_accounting); times not printed.

"""JAX efficiently trains a differentially private conv net on MNIST.

This script contains a JAX implementation of Differentially Private Stochastic
Gradient Descent (https://arxiv.org/abs/1607.00133). DPSGD requires clipping
the per-example parameter gradients, which is non-trivial to implement
efficiently for convolutional neural networks.  The JAX XLA compiler shines in
this setting by optimizing the minibatch-vectorized computation for
convolutional architectures. Train time takes a few seconds per epoch on a
commodity GPU.
"""

import itertools
import time
import types

from symgrad import grad
from symgrad import compile as jit  # changed: jax.jit is sg.compile
from symgrad import vmap
import symgrad.numpy as jnp
from symgrad.tree_util import tree_flatten, tree_unflatten

import numpy.random as npr

_DPSGD = types.SimpleNamespace(value=True)  # changed: absl flags fixed
_LEARNING_RATE = types.SimpleNamespace(value=.15)
_NOISE_MULTIPLIER = types.SimpleNamespace(value=1.1)
_L2_NORM_CLIP = types.SimpleNamespace(value=1.0)
_BATCH_SIZE = types.SimpleNamespace(value=32)  # changed: 256
_EPOCHS = types.SimpleNamespace(value=2)  # changed: 60
_SEED = types.SimpleNamespace(value=0)


class stax:  # changed: jax.example_libraries.stax's layers used here, copied (initial weights from NumPy)
  @staticmethod
  def Dense(out_dim):
    def init_fun(rng, input_shape):
      output_shape = input_shape[:-1] + (out_dim,)
      W, b = 0.1 * rng.randn(input_shape[-1], out_dim), 1e-2 * rng.randn(out_dim)
      return output_shape, (W, b)
    def apply_fun(params, inputs, **kwargs):
      W, b = params
      return jnp.dot(inputs, W) + b
    return init_fun, apply_fun

  Relu = (lambda rng, input_shape: (input_shape, ()),
          lambda params, inputs, **kwargs: jnp.maximum(inputs, 0))

  Flatten = (lambda rng, input_shape: ((input_shape[0], int(jnp.prod(jnp.array(input_shape[1:])))), ()),
             lambda params, inputs, **kwargs: jnp.reshape(inputs, (inputs.shape[0], -1)))

  @staticmethod
  def logsoftmax(x, axis=-1):
    shifted = x - jnp.max(x, axis, keepdims=True)
    return shifted - jnp.log(jnp.sum(jnp.exp(shifted), axis, keepdims=True))

  @staticmethod
  def serial(*layers):
    init_funs, apply_funs = zip(*layers)
    def init_fun(rng, input_shape):
      params = []
      for init_fun in init_funs:
        input_shape, param = init_fun(rng, input_shape)
        params.append(param)
      return input_shape, params
    def apply_fun(params, inputs, **kwargs):
      for fun, param in zip(apply_funs, params):
        inputs = fun(param, inputs, **kwargs)
      return inputs
    return init_fun, apply_fun


class optimizers:  # changed: jax.example_libraries.optimizers.sgd, copied
  @staticmethod
  def sgd(step_size):
    def update(i, g, params):
      return [tuple(p - step_size * dp for p, dp in zip(layer, dlayer)) for layer, dlayer in zip(params, g)]
    return (lambda params: params), update, (lambda params: params)


init_random_params, predict = stax.serial(
    stax.Flatten,  # changed: stax.Conv(16, (8, 8), padding='SAME', strides=(2, 2)), Relu, MaxPool, Conv, ...
    stax.Dense(32),
    stax.Relu,
    stax.Dense(10),
)


def loss(params, batch):
  inputs, targets = batch
  logits = predict(params, inputs)
  logits = stax.logsoftmax(logits)  # log normalize
  return -jnp.mean(jnp.sum(logits * targets, axis=1))  # cross entropy loss


def accuracy(params, batch):
  inputs, targets = batch
  target_class = jnp.argmax(targets, axis=1)
  predicted_class = jnp.argmax(predict(params, inputs), axis=1)
  return jnp.mean(predicted_class == target_class)


def clipped_grad(params, l2_norm_clip, single_example_batch):
  """Evaluate gradient for a single-example batch and clip its grad norm."""
  grads = grad(loss)(params, single_example_batch)
  nonempty_grads, tree_def = tree_flatten(grads)
  total_grad_norm = jnp.linalg.norm(
      jnp.array([jnp.linalg.norm(neg.ravel()) for neg in nonempty_grads]))
  divisor = jnp.maximum(total_grad_norm / l2_norm_clip, 1.)
  normalized_nonempty_grads = [g / divisor for g in nonempty_grads]
  return tree_unflatten(tree_def, normalized_nonempty_grads)


def private_grad(params, batch, rng, l2_norm_clip, noise_multiplier,
                 batch_size):
  """Return differentially private gradients for params, evaluated on batch."""
  clipped_grads = vmap(clipped_grad, (None, None, 0))(params, l2_norm_clip, batch)
  clipped_grads_flat, grads_treedef = tree_flatten(clipped_grads)
  aggregated_clipped_grads = [g.sum(0) for g in clipped_grads_flat]
  rngs = rng  # changed: random.split(rng, len(aggregated_clipped_grads)), the noise drawn by NumPy
  noised_aggregated_clipped_grads = [
      g + l2_norm_clip * noise_multiplier * r  # changed: random.normal(r, g.shape)
      for r, g in zip(rngs, aggregated_clipped_grads)]
  normalized_noised_aggregated_clipped_grads = [
      g / batch_size for g in noised_aggregated_clipped_grads]
  return tree_unflatten(grads_treedef, normalized_noised_aggregated_clipped_grads)


def shape_as_image(images, labels, dummy_dim=False):
  target_shape = (-1, 1, 28, 28, 1) if dummy_dim else (-1, 28, 28, 1)
  return jnp.reshape(images, target_shape), labels


def synthetic_mnist(rng, count):  # changed: images of MNIST's shape in [0, 1] and one-hot labels
  labels = rng.randint(10, size=count)
  images = rng.beta(0.3, 0.6, (count, 784)) + 0.3 * (npr.RandomState(1).randn(10, 784) > 1)[labels]
  return images, jnp.eye(10)[labels]


def main(_):

  data_rng = npr.RandomState(2)  # changed: datasets.mnist()
  train_images, train_labels = synthetic_mnist(data_rng, 128)  # changed
  test_images, test_labels = synthetic_mnist(data_rng, 64)  # changed
  num_train = train_images.shape[0]
  num_complete_batches, leftover = divmod(num_train, _BATCH_SIZE.value)
  num_batches = num_complete_batches + bool(leftover)
  key = npr.RandomState(_SEED.value)  # changed: random.key(_SEED.value)

  def data_stream():
    rng = npr.RandomState(_SEED.value)
    while True:
      perm = rng.permutation(num_train)
      for i in range(num_batches):
        batch_idx = perm[i * _BATCH_SIZE.value:(i + 1) * _BATCH_SIZE.value]
        yield train_images[batch_idx], train_labels[batch_idx]

  batches = data_stream()

  opt_init, opt_update, get_params = optimizers.sgd(_LEARNING_RATE.value)

  @jit
  def update(_, i, opt_state, batch):
    params = get_params(opt_state)
    return opt_update(i, grad(loss)(params, batch), opt_state)

  @jit
  def private_update(rng, i, opt_state, batch):
    params = get_params(opt_state)
    # changed: rng = random.fold_in(rng, i), the noise is drawn outside
    return opt_update(
        i,
        private_grad(params, batch, rng, _L2_NORM_CLIP.value,
                     _NOISE_MULTIPLIER.value, _BATCH_SIZE.value), opt_state)

  _, init_params = init_random_params(key, (-1, 28, 28, 1))
  opt_state = opt_init(init_params)
  itercount = itertools.count()
  noise = lambda: [key.randn(*p.shape) for layer in get_params(opt_state) for p in layer]  # changed: NumPy's

  print('\nStarting training...')
  for epoch in range(1, _EPOCHS.value + 1):
    start_time = time.time()
    for _ in range(num_batches):
      if _DPSGD.value:
        opt_state = \
            private_update(
                noise(), next(itercount), opt_state,  # changed: key
                shape_as_image(*next(batches), dummy_dim=True))
      else:
        opt_state = update(
            _SEED.value, next(itercount), opt_state, shape_as_image(*next(batches)))  # changed: key
    epoch_time = time.time() - start_time
    print(f'Epoch {epoch}')  # changed: the time taken not printed

    # evaluate test accuracy
    params = get_params(opt_state)
    test_acc = accuracy(params, shape_as_image(test_images, test_labels))
    test_loss = loss(params, shape_as_image(test_images, test_labels))
    print('Test set loss, accuracy (%): ({:.2f}, {:.2f})'.format(
        test_loss, 100 * test_acc))
    print('Test set loss', test_loss)  # changed: all its digits
  _DPSGD.value = False  # changed: the non-private update too, one epoch
  for _ in range(num_batches):
    opt_state = update(_SEED.value, next(itercount), opt_state, shape_as_image(*next(batches)))  # changed: key
  print('Trained with vanilla non-private SGD optimizer', loss(get_params(opt_state), (train_images, train_labels)))


if __name__ == '__main__':
  main(None)  # changed: app.run(main)
