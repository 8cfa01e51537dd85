# Copyright 2020 The JAX Authors. Licensed under the Apache License, Version 2.0.
#
# google/jax docs/automatic-vectorization.md ("Automatic vectorization"): a 1-d convolution by a Python loop of
# dots on slices and jnp.array of a list of traced scalars, batched by hand (a loop, then vectorized slicing) and by
# vmap with in_axes/out_axes 1, in_axes [0, None], under jit, and a pairwise vmap of vmap. `jax` is `symgrad` (its
# vmap; `jax.jit` is `sg.compile`), `jax.numpy` is `symgrad.numpy`. Changed (marked): the cells' bare expressions
# printed; pairwise applied once (the notebook only defines it).
import symgrad as jax  # changed: symgrad's vmap
from symgrad import compile as jit  # changed: jax.jit is sg.compile
import symgrad.numpy as jnp

x = jnp.arange(5)
w = jnp.array([2., 3., 4.])

def convolve(x, w):
  output = []
  for i in range(1, len(x)-1):
    output.append(jnp.dot(x[i-1:i+2], w))
  return jnp.array(output)

print(convolve(x, w))  # changed: printed

xs = jnp.stack([x, x])
ws = jnp.stack([w, w])

def manually_batched_convolve(xs, ws):
  output = []
  for i in range(xs.shape[0]):
    output.append(convolve(xs[i], ws[i]))
  return jnp.stack(output)

print(manually_batched_convolve(xs, ws))  # changed: printed

def manually_vectorized_convolve(xs, ws):
  output = []
  for i in range(1, xs.shape[-1] -1):
    output.append(jnp.sum(xs[:, i-1:i+2] * ws, axis=1))
  return jnp.stack(output, axis=1)

print(manually_vectorized_convolve(xs, ws))  # changed: printed

auto_batch_convolve = jax.vmap(convolve)

print(auto_batch_convolve(xs, ws))  # changed: printed

auto_batch_convolve_v2 = jax.vmap(convolve, in_axes=1, out_axes=1)

xst = jnp.transpose(xs)
wst = jnp.transpose(ws)

print(auto_batch_convolve_v2(xst, wst))  # changed: printed

batch_convolve_v3 = jax.vmap(convolve, in_axes=[0, None])

print(batch_convolve_v3(xs, w))  # changed: printed

jitted_batch_convolve = jit(auto_batch_convolve)  # changed: jax.jit is sg.compile

print(jitted_batch_convolve(xs, ws))  # changed: printed

def pairwise(f, xs):
  return jax.vmap(lambda x: jax.vmap(lambda y: f(x, y))(xs))(xs)

print(pairwise(lambda a, b: jnp.sum((a - b) ** 2), ws * jnp.array([[1.], [0.5]])))  # changed: applied once
