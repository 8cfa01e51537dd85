# PyTorch's "Learn the Basics", "Tensors" (beginner_source/basics/tensorqs_tutorial.py; the 60-minute blitz's tensor
# tutorial is the same text), `import torch` renamed: initializing, attributes, operations (indexing, joining,
# arithmetic with out=, single-element tensors, in-place), the bridge with NumPy. Changed (marked): random tensors
# are drawn by NumPy's generator (symgrad's random numbers are not PyTorch's), and `ones`/`zeros` of a shape tuple
# name their dtype (a bare sg.ones((2, 3)) is NumPy's array, docs/eager.md "Factories").
import symgrad as sg
import numpy as np

rng = np.random.default_rng(0)  # changed: the random numbers' source

######################################################################
# Initializing a Tensor
data = [[1, 2],[3, 4]]
x_data = sg.tensor(data)

np_array = np.array(data)
x_np = sg.from_numpy(np_array)

x_ones = sg.ones_like(x_data) # retains the properties of x_data
print(f"Ones Tensor: \n {x_ones} \n")

x_rand = sg.tensor(rng.random((2, 2)), dtype=sg.float)  # changed: sg.rand_like(x_data, dtype=sg.float)
print(f"Random Tensor: \n {x_rand} \n")

shape = (2,3,)
rand_tensor = sg.tensor(rng.random(shape), dtype=sg.float)  # changed: sg.rand(shape)
ones_tensor = sg.ones(shape, dtype=sg.float)  # changed: dtype=
zeros_tensor = sg.zeros(shape, dtype=sg.float)  # changed: dtype=

print(f"Random Tensor: \n {rand_tensor} \n")
print(f"Ones Tensor: \n {ones_tensor} \n")
print(f"Zeros Tensor: \n {zeros_tensor}")

######################################################################
# Attributes of a Tensor
tensor = sg.tensor(rng.random((3, 4)), dtype=sg.float)  # changed: sg.rand(3,4)

print(f"Shape of tensor: {tensor.shape}")
print(f"Datatype of tensor: {tensor.dtype}")
print(f"Device tensor is stored on: {tensor.device}")

######################################################################
# Operations on Tensors
# We move our tensor to the current accelerator if available
if sg.accelerator.is_available():
    tensor = tensor.to(sg.accelerator.current_accelerator())

tensor = sg.ones(4, 4)
print(f"First row: {tensor[0]}")
print(f"First column: {tensor[:, 0]}")
print(f"Last column: {tensor[..., -1]}")
tensor[:,1] = 0
print(tensor)

t1 = sg.cat([tensor, tensor, tensor], dim=1)
print(t1)

# This computes the matrix multiplication between two tensors. y1, y2, y3 will have the same value
# ``tensor.T`` returns the transpose of a tensor
y1 = tensor @ tensor.T
y2 = tensor.matmul(tensor.T)

y3 = sg.tensor(rng.random((4, 4)), dtype=sg.float)  # changed: sg.rand_like(y1)
sg.matmul(tensor, tensor.T, out=y3)


# This computes the element-wise product. z1, z2, z3 will have the same value
z1 = tensor * tensor
z2 = tensor.mul(tensor)

z3 = sg.tensor(rng.random((4, 4)), dtype=sg.float)  # changed: sg.rand_like(tensor)
sg.mul(tensor, tensor, out=z3)
print(y1, y2, y3, z1, z2, z3, sep="\n")  # changed: printed

agg = tensor.sum()
agg_item = agg.item()
print(agg_item, type(agg_item))

print(f"{tensor} \n")
tensor.add_(5)
print(tensor)

######################################################################
# Bridge with NumPy
t = sg.ones(5, dtype=sg.float)  # changed: dtype= (a bare sg.ones(5) is NumPy's array)
print(f"t: {t}")
n = t.numpy()
print(f"n: {n}")

t.add_(1)
print(f"t: {t}")
print(f"n: {n}")

n = np.ones(5)
t = sg.from_numpy(n)

np.add(n, 1, out=n)
print(f"t: {t}")
print(f"n: {n}")
