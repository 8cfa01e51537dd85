# PyTorch's "Introduction to PyTorch" series, "Introduction to PyTorch Tensors"
# (beginner_source/introyt/tensors_deeper_tutorial.py), `import torch` renamed: creating tensors, *_like, dtypes and
# to(), arithmetic with scalars and tensors, broadcasting, common functions, trigonometry, bitwise ops, comparisons,
# reductions, vectors and matrices, in-place ops, out=, copying with clone and detach, unsqueeze/squeeze/reshape, and
# the NumPy bridge. Changed (marked): random tensors come from NumPy's generator (symgrad's random numbers are not
# PyTorch's, so manual_seed's reproducibility section prints fixed draws), empty() is printed after filling it,
# `sg.int16`/`sg.float64` alone are NumPy's dtypes in a factory call (docs/eager.md "Factories": PyTorch's names
# sg.short/sg.double instead), and torch.std is t.std() (sg.std is NumPy's population estimate); the SVD is left
# out, and errors are printed as their type.
import math

import numpy as np
import symgrad as sg

rng = np.random.default_rng(16)  # changed: the random numbers' source


def rand(*shape, dtype=sg.float):  # changed: stands for sg.rand
    return sg.tensor(rng.random(shape), dtype=dtype)


x = sg.empty(3, 4)
print(type(x).__name__)  # changed: the class's name (torch.Tensor, symgrad.eager.tensor.Tensor)
print(x.zero_())  # changed: filled before printing

zeros = sg.zeros(2, 3)
print(zeros)

ones = sg.ones(2, 3)
print(ones)

sg.manual_seed(1729)
random = rand(2, 3)
print(random)

x = sg.empty(2, 2, 3)
print(x.shape)

empty_like_x = sg.empty_like(x)
print(empty_like_x.shape)

zeros_like_x = sg.zeros_like(x)
print(zeros_like_x.shape)
print(zeros_like_x)

ones_like_x = sg.ones_like(x)
print(ones_like_x.shape)
print(ones_like_x)

some_constants = sg.tensor([[3.1415926, 2.71828], [1.61803, 0.0072897]])
print(some_constants)

some_integers = sg.tensor((2, 3, 5, 7, 11, 13, 17, 19))
print(some_integers)

more_integers = sg.tensor(((2, 4, 6), [3, 6, 9]))
print(more_integers)

a = sg.ones((2, 3), dtype=sg.short)  # changed: sg.int16
print(a)

b = rand(2, 3, dtype=sg.double) * 20.  # changed: sg.rand((2, 3), dtype=sg.float64)
print(b)

c = b.to(sg.int32)
print(c)

ones = sg.zeros(2, 2) + 1
twos = sg.ones(2, 2) * 2
threes = (sg.ones(2, 2) * 7 - 1) / 2
fours = twos ** 2
sqrt2s = twos ** 0.5

print(ones)
print(twos)
print(threes)
print(fours)
print(sqrt2s)

powers2 = twos ** sg.tensor([[1, 2], [3, 4]])
print(powers2)

fives = ones + fours
print(fives)

dozens = threes * fours
print(dozens)

a = rand(2, 3)
b = rand(3, 2)
try:  # changed: the error caught and named
    print(a * b)
except RuntimeError:
    print("RuntimeError")

rand_ = rand(2, 4)
doubled = rand_ * (sg.ones(1, 4) * 2)

print(rand_)
print(doubled)

a = sg.ones(4, 3, 2)

b = a * rand(3, 2) # 3rd & 2nd dims identical to a, dim 1 absent
print(b)

c = a * rand(3, 1) # 3rd dim = 1, 2nd dim identical to a
print(c)

d = a * rand(1, 2) # 3rd dim identical to a, 2nd dim = 1
print(d)

a = sg.ones(4, 3, 2)
for shape in ((4, 3), (2, 3), (0,)):  # changed: the errors printed
    try:
        b = a * sg.ones(*shape)
    except RuntimeError:
        print("RuntimeError")

# common functions
a = rand(2, 4) * 2 - 1
print('Common functions:')
print(sg.abs(a))
print(sg.ceil(a))
print(sg.floor(a))
print(sg.clamp(a, -0.5, 0.5))

# trigonometric functions and their inverses
angles = sg.tensor([0, math.pi / 4, math.pi / 2, 3 * math.pi / 4])
sines = sg.sin(angles)
inverses = sg.asin(sines)
print('\nSine and arcsine:')
print(angles)
print(sines)
print(inverses)

# bitwise operations
print('\nBitwise XOR:')
b = sg.tensor([1, 5, 11])
c = sg.tensor([2, 7, 10])
print(sg.bitwise_xor(b, c))

# comparisons:
print('\nBroadcasted, element-wise equality comparison:')
d = sg.tensor([[1., 2.], [3., 4.]])
e = sg.ones(1, 2)  # many comparison ops support broadcasting!
print(sg.eq(d, e)) # returns a tensor of type bool

# reductions:
print('\nReduction ops:')
print(sg.max(d))        # returns a single-element tensor
print(sg.max(d).item()) # extracts the value from the returned tensor
print(sg.mean(d))       # average
print(d.std())          # standard deviation  # changed: sg.std(d)
print(sg.prod(d))       # product of all numbers
print(sg.unique(sg.tensor([1, 2, 1, 2, 1, 2]))) # filter unique elements

# vector and linear algebra operations
v1 = sg.tensor([1., 0., 0.])         # x unit vector
v2 = sg.tensor([0., 1., 0.])         # y unit vector
m1 = rand(2, 2)                      # random matrix
m2 = sg.tensor([[3., 0.], [0., 3.]]) # three times identity matrix

print('\nVectors & Matrices:')
print(sg.linalg.cross(v2, v1)) # negative of z unit vector (v1 x v2 == -v2 x v1)
print(m1)
m3 = sg.linalg.matmul(m1, m2)
print(m3)                  # 3 times m1

a = sg.tensor([0, math.pi / 4, math.pi / 2, 3 * math.pi / 4])
print('a:')
print(a)
print(sg.sin(a))   # this operation creates a new tensor in memory
print(a)              # a has not changed

b = sg.tensor([0, math.pi / 4, math.pi / 2, 3 * math.pi / 4])
print('\nb:')
print(b)
print(sg.sin_(b))  # note the underscore
print(b)              # b has changed

a = sg.ones(2, 2)
b = rand(2, 2)

print('Before:')
print(a)
print(b)
print('\nAfter adding:')
print(a.add_(b))
print(a)
print(b)
print('\nAfter multiplying')
print(b.mul_(b))
print(b)

a = rand(2, 2)
b = rand(2, 2)
c = sg.zeros(2, 2)
old_id = id(c)

print(c)
d = sg.matmul(a, b, out=c)
print(c)                # contents of c have changed

assert c is d           # test c & d are same object, not just containing equal values
assert id(c) == old_id  # make sure that our new c is the same object as the old one

a = sg.ones(2, 2)
b = a

a[0][1] = 561  # we change a...
print(b)       # ...and b is also altered

a = sg.ones(2, 2)
b = a.clone()

assert b is not a      # different objects in memory...
print(sg.eq(a, b))  # ...but still with the same contents!

a[0][1] = 561          # a changes...
print(b)               # ...but b is still all ones

a = sg.tensor(rng.random((2, 2)), dtype=sg.float, requires_grad=True) # turn on autograd  # changed
print(a)

b = a.clone()
print(b)

c = a.detach().clone()
print(c)

print(a)

a = rand(3, 226, 226)
b = a.unsqueeze(0)

print(a.shape)
print(b.shape)

c = rand(1, 1, 1, 1, 1)
print(c)

a = rand(1, 20)
print(a.shape)
print(a)

b = a.squeeze(0)
print(b.shape)
print(b)

c = rand(2, 2)
print(c.shape)

d = c.squeeze(0)
print(d.shape)

a = sg.ones(4, 3, 2)

c = a * rand(   3, 1) # 3rd dim = 1, 2nd dim identical to a
print(c)

a = sg.ones(4, 3, 2)
b = rand(   3)     # trying to multiply a * b will give a runtime error
c = b.unsqueeze(1)       # change to a 2-dimensional tensor, adding new dim at the end
print(c.shape)
print(a * c)             # broadcasting works again!

batch_me = rand(3, 226, 226)
print(batch_me.shape)
batch_me.unsqueeze_(0)
print(batch_me.shape)

output3d = rand(6, 20, 20)
print(output3d.shape)

input1d = output3d.reshape(6 * 20 * 20)
print(input1d.shape)

# can also call it as a method on the torch module:
print(sg.reshape(output3d, (6 * 20 * 20,)).shape)

numpy_array = np.ones((2, 3))
print(numpy_array)

pytorch_tensor = sg.from_numpy(numpy_array)
print(pytorch_tensor)

pytorch_rand = rand(2, 3)
print(pytorch_rand)

numpy_rand = pytorch_rand.numpy()
print(numpy_rand)

numpy_array[1, 1] = 23
print(pytorch_tensor)

pytorch_rand[1, 1] = 17
print(numpy_rand)
