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

# google/jax examples/mnist_classifier_fromscratch.py: a tanh MLP trained by SGD under a jitted update of grad over a
# list of (w, b) pairs, scored with argmax accuracy. `jax.numpy` is `symgrad.numpy`, `jax.jit` is `sg.compile`.
# Changed (marked): synthetic data of MNIST's shapes (256 training, 64 test images, one-hot labels) instead of
# examples.datasets, layers 784-64-32-10, batches of 64, 2 epochs, step 0.01; the epoch's time not printed.

"""A basic MNIST example using Numpy and JAX.

The primary aim here is simplicity and minimal dependencies.
"""


import time

import numpy.random as npr

from symgrad import compile as jit, grad  # changed: jax.jit is sg.compile
from symgrad.scipy.special import logsumexp
import symgrad.numpy as jnp


def init_random_params(scale, layer_sizes, rng=npr.RandomState(0)):
  return [(scale * rng.randn(m, n), scale * rng.randn(n))
          for m, n, in zip(layer_sizes[:-1], layer_sizes[1:])]

def predict(params, inputs):
  activations = inputs
  for w, b in params[:-1]:
    outputs = jnp.dot(activations, w) + b
    activations = jnp.tanh(outputs)

  final_w, final_b = params[-1]
  logits = jnp.dot(activations, final_w) + final_b
  return logits - logsumexp(logits, axis=1, keepdims=True)

def loss(params, batch):
  inputs, targets = batch
  preds = predict(params, inputs)
  return -jnp.mean(jnp.sum(preds * targets, axis=1))

def accuracy(params, batch):
  inputs, targets = batch
  target_class = jnp.argmax(targets, axis=1)
  predicted_class = jnp.argmax(predict(params, inputs), axis=1)
  return jnp.mean(predicted_class == target_class)


def synthetic_mnist(rng, count):  # changed: images of MNIST's shape in [0, 1] and one-hot labels
  labels = rng.randint(10, size=count)
  images = rng.beta(0.3, 0.6, (count, 784)) + 0.3 * (npr.RandomState(1).randn(10, 784) > 1)[labels]
  return images, jnp.eye(10)[labels]


if __name__ == "__main__":
  layer_sizes = [784, 64, 32, 10]  # changed: [784, 1024, 1024, 10]
  param_scale = 0.1
  step_size = 0.01  # changed: 0.001
  num_epochs = 2  # changed: 10
  batch_size = 64  # changed: 128

  data_rng = npr.RandomState(2)  # changed: datasets.mnist()
  train_images, train_labels = synthetic_mnist(data_rng, 256)  # changed
  test_images, test_labels = synthetic_mnist(data_rng, 64)  # changed
  num_train = train_images.shape[0]
  num_complete_batches, leftover = divmod(num_train, batch_size)
  num_batches = num_complete_batches + bool(leftover)

  def data_stream():
    rng = npr.RandomState(0)
    while True:
      perm = rng.permutation(num_train)
      for i in range(num_batches):
        batch_idx = perm[i * batch_size:(i + 1) * batch_size]
        yield train_images[batch_idx], train_labels[batch_idx]
  batches = data_stream()

  @jit
  def update(params, batch):
    grads = grad(loss)(params, batch)
    return [(w - step_size * dw, b - step_size * db)
            for (w, b), (dw, db) in zip(params, grads)]

  params = init_random_params(param_scale, layer_sizes)
  for epoch in range(num_epochs):
    start_time = time.time()
    for _ in range(num_batches):
      params = update(params, next(batches))
    epoch_time = time.time() - start_time

    train_acc = accuracy(params, (train_images, train_labels))
    test_acc = accuracy(params, (test_images, test_labels))
    print(f"Epoch {epoch}")  # changed: the time taken not printed
    print(f"Training set accuracy {train_acc}")
    print(f"Test set accuracy {test_acc}")
    print(f"Training loss {loss(params, (train_images, train_labels))}")  # changed: a number to compare
