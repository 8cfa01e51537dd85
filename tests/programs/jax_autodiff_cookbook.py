# Copyright 2018 The JAX Authors. Licensed under the Apache License, Version 2.0.
#
# google/jax docs/notebooks/autodiff_cookbook.md ("The Autodiff Cookbook"), its code cells in order up to the
# complex-number section: grad of grad of grad, grad with argnums as an int, a tuple and a dict of parameters,
# value_and_grad, finite-difference checks and check_grads to order 2, jacfwd and jacrev of a function and of a
# dict, hessian as jacfwd(jacrev), jvp, vjp and vgrad, three Hessian-vector products, matrix-Jacobian and
# Jacobian-matrix products by a loop and by vmap, and jacrev/jacfwd rebuilt from vjp/jvp
# and vmap. `jax.numpy` is `symgrad.numpy`, `jax` is `symgrad`. Changed (marked): the keys' normal draws are NumPy's
# (JAX's random keys are its own); the %timeit lines left out (their times printed nothing comparable); X and V
# 10 x 12 (not 30 x 40); a dict of gradients printed item by item (JAX's arrays print their type); the cell whose f
# branches on `x < 3` inside vjp left out (symgrad traces abstractly: a Python branch on a traced value is refused).
import numpy.random as npr  # changed: the keys' draws

import symgrad as sg  # changed: check_grads
import symgrad.numpy as jnp
from symgrad import grad, compile as jit, vmap  # changed: jax.jit is sg.compile

key = npr.RandomState(0)  # changed: random.key(0)

grad_tanh = grad(jnp.tanh)
print(grad_tanh(2.0))

print(grad(grad(jnp.tanh))(2.0))
print(grad(grad(grad(jnp.tanh)))(2.0))

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
targets = jnp.array([True, True, False, True])

# Training loss is the negative log-likelihood of the training examples.
def loss(W, b):
    preds = predict(W, b, inputs)
    label_probs = preds * targets + (1 - preds) * (1 - targets)
    return -jnp.sum(jnp.log(label_probs))

# Initialize random model coefficients
W = jnp.array(key.normal(size=(3,)))  # changed: random.normal(W_key, (3,))
b = jnp.array(key.normal(size=()))  # changed: random.normal(b_key, ())

# Differentiate `loss` with respect to the first positional argument:
W_grad = grad(loss, argnums=0)(W, b)
print('W_grad', W_grad)

# Since argnums=0 is the default, this does the same thing:
W_grad = grad(loss)(W, b)
print('W_grad', W_grad)

# But we can choose different values too, and drop the keyword:
b_grad = grad(loss, 1)(W, b)
print('b_grad', b_grad)

# Including tuple values
W_grad, b_grad = grad(loss, (0, 1))(W, b)
print('W_grad', W_grad)
print('b_grad', b_grad)

def loss2(params_dict):
    preds = predict(params_dict['W'], params_dict['b'], inputs)
    label_probs = preds * targets + (1 - preds) * (1 - targets)
    return -jnp.sum(jnp.log(label_probs))

for k, v in grad(loss2)({'W': W, 'b': b}).items():  # changed: print(grad(loss2)({'W': W, 'b': b}))
    print(k, v)  # changed

from symgrad import value_and_grad
loss_value, Wb_grad = value_and_grad(loss, (0, 1))(W, b)
print('loss value', loss_value)
print('loss value', loss(W, b))

# Set a step size for finite differences calculations
eps = 1e-4

# Check b_grad with scalar finite differences
b_grad_numerical = (loss(W, b + eps / 2.) - loss(W, b - eps / 2.)) / eps
print('b_grad_numerical', b_grad_numerical)
print('b_grad_autodiff', grad(loss, 1)(W, b))

# Check W_grad with finite differences in a random direction
vec = jnp.array(key.normal(size=W.shape))  # changed: random.normal(subkey, W.shape)
unitvec = vec / jnp.sqrt(jnp.vdot(vec, vec))
W_grad_numerical = (loss(W + eps / 2. * unitvec, b) - loss(W - eps / 2. * unitvec, b)) / eps
print('W_dirderiv_numerical', W_grad_numerical)
print('W_dirderiv_autodiff', jnp.vdot(grad(loss)(W, b), unitvec))

sg.check_grads(loss, (W, b), order=2)  # check up to 2nd order derivatives  # changed: jax.test_util's

def hvp(f, x, v):
    return grad(lambda x: jnp.vdot(grad(f)(x), v))(x)

from symgrad import jacfwd, jacrev

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

J_dict = jacrev(predict_dict)({'W': W, 'b': b}, inputs)
for k, v in J_dict.items():
    print("Jacobian from {} to logits is".format(k))
    print(v)

def hessian(f):
    return jacfwd(jacrev(f))

H = hessian(f)(W)
print("hessian, with shape", H.shape)
print(H)

from symgrad import jvp

# Isolate the function from the weight matrix to the predictions
f = lambda W: predict(W, b, inputs)

v = jnp.array(key.normal(size=W.shape))  # changed: random.normal(subkey, W.shape)

# Push forward the vector `v` along `f` evaluated at `W`
y, u = jvp(f, (W,), (v,))
print(y, u)  # changed: printed

from symgrad import vjp

# Isolate the function from the weight matrix to the predictions
f = lambda W: predict(W, b, inputs)

y, vjp_fun = vjp(f, W)

u = jnp.array(key.normal(size=y.shape))  # changed: random.normal(subkey, y.shape)

# Pull back the covector `u` along `f` evaluated at `W`
v = vjp_fun(u)
print(v[0])  # changed: printed (the tuple's array: JAX's print their type)

from symgrad import vjp

def vgrad(f, x):
  y, vjp_fn = vjp(f, x)
  return vjp_fn(jnp.ones(y.shape))[0]

print(vgrad(lambda x: 3*x**2, jnp.ones((2, 2))))

def hvp(f, x, v):
    return grad(lambda x: jnp.vdot(grad(f)(x), v))(x)

from symgrad import jvp, grad

# forward-over-reverse
def hvp(f, primals, tangents):
  return jvp(grad(f), primals, tangents)[1]

def f(X):
  return jnp.sum(jnp.tanh(X)**2)

X = jnp.array(key.normal(size=(10, 12)))  # changed: random.normal(subkey1, (30, 40))
V = jnp.array(key.normal(size=(10, 12)))  # changed: random.normal(subkey2, (30, 40))

ans1 = hvp(f, (X,), (V,))
ans2 = jnp.tensordot(hessian(f)(X), V, 2)

print(jnp.allclose(ans1, ans2, 1e-4, 1e-4))
print(ans1.sum(), ans2.sum())  # changed: printed

# reverse-over-forward
def hvp_revfwd(f, primals, tangents):
  g = lambda primals: jvp(f, primals, tangents)[1]
  return grad(g)(primals)

# reverse-over-reverse, only works for single arguments
def hvp_revrev(f, primals, tangents):
  x, = primals
  v, = tangents
  return grad(lambda x: jnp.vdot(grad(f)(x), v))(x)


print("Forward over reverse")
print(hvp(f, (X,), (V,)).sum())  # changed: %timeit -n10 -r3 hvp(f, (X,), (V,))
print("Reverse over forward")
print(hvp_revfwd(f, (X,), (V,))[0].sum())  # changed: %timeit -n10 -r3 hvp_revfwd(f, (X,), (V,))
print("Reverse over reverse")
print(hvp_revrev(f, (X,), (V,)).sum())  # changed: %timeit -n10 -r3 hvp_revrev(f, (X,), (V,))

print("Naive full Hessian materialization")
print(jnp.tensordot(hessian(f)(X), V, 2).sum())  # changed: %timeit -n10 -r3 jnp.tensordot(hessian(f)(X), V, 2)

# Isolate the function from the weight matrix to the predictions
f = lambda W: predict(W, b, inputs)

# Pull back the covectors `m_i` along `f`, evaluated at `W`, for all `i`.
# First, use a list comprehension to loop over rows in the matrix M.
def loop_mjp(f, x, M):
    y, vjp_fun = vjp(f, x)
    return jnp.vstack([vjp_fun(mi)[0] for mi in M])  # changed: [0] (JAX's vstack now refuses tuples, NumPy's not)

# Now, use vmap to build a computation that does a single fast matrix-matrix
# multiply, rather than an outer loop over vector-matrix multiplies.
def vmap_mjp(f, x, M):
    y, vjp_fun = vjp(f, x)
    outs, = vmap(vjp_fun)(M)
    return outs

num_covecs = 128
U = jnp.array(key.normal(size=(num_covecs,) + y.shape))  # changed: random.normal(key, ...)

loop_vs = loop_mjp(f, W, M=U)
print('Non-vmapped Matrix-Jacobian product')
print(loop_vs.shape, loop_vs.sum())  # changed: %timeit -n10 -r3 loop_mjp(f, W, M=U)

print('\nVmapped Matrix-Jacobian product')
vmap_vs = vmap_mjp(f, W, M=U)
print(vmap_vs.shape, vmap_vs.sum())  # changed: %timeit -n10 -r3 vmap_mjp(f, W, M=U)

assert jnp.allclose(loop_vs, vmap_vs), 'Vmap and non-vmapped Matrix-Jacobian Products should be identical'

def loop_jmp(f, W, M):
    # jvp immediately returns the primal and tangent values as a tuple,
    # so we'll compute and select the tangents in a list comprehension
    return jnp.vstack([jvp(f, (W,), (mi,))[1] for mi in M])

def vmap_jmp(f, W, M):
    _jvp = lambda s: jvp(f, (W,), (s,))[1]
    return vmap(_jvp)(M)

num_vecs = 128
S = jnp.array(key.normal(size=(num_vecs,) + W.shape))  # changed: random.normal(key, ...)

loop_vs = loop_jmp(f, W, M=S)
print('Non-vmapped Jacobian-Matrix product')
print(loop_vs.shape, loop_vs.sum())  # changed: %timeit -n10 -r3 loop_jmp(f, W, M=S)
vmap_vs = vmap_jmp(f, W, M=S)
print('\nVmapped Jacobian-Matrix product')
print(vmap_vs.shape, vmap_vs.sum())  # changed: %timeit -n10 -r3 vmap_jmp(f, W, M=S)

assert jnp.allclose(loop_vs, vmap_vs), 'Vmap and non-vmapped Jacobian-Matrix products should be identical'

from symgrad import jacrev as builtin_jacrev

def our_jacrev(f):
    def jacfun(x):
        y, vjp_fun = vjp(f, x)
        # Use vmap to do a matrix-Jacobian product.
        # Here, the matrix is the Euclidean basis, so we get all
        # entries in the Jacobian at once.
        J, = vmap(vjp_fun, in_axes=0)(jnp.eye(len(y)))
        return J
    return jacfun

assert jnp.allclose(builtin_jacrev(f)(W), our_jacrev(f)(W)), 'Incorrect reverse-mode Jacobian results!'

from symgrad import jacfwd as builtin_jacfwd

def our_jacfwd(f):
    def jacfun(x):
        _jvp = lambda s: jvp(f, (x,), (s,))[1]
        Jt = vmap(_jvp, in_axes=1)(jnp.eye(len(x)))
        return jnp.transpose(Jt)
    return jacfun

assert jnp.allclose(builtin_jacfwd(f)(W), our_jacfwd(f)(W)), 'Incorrect forward-mode Jacobian results!'
print(our_jacrev(f)(W).sum(), our_jacfwd(f)(W).sum())  # changed: printed
