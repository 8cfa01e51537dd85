"""Higher-order derivatives: differentiate the gradient again with create_graph=True.

Run: python examples/eager_higher_order.py
"""
import symgrad as sg

# d^n/dx^n sin(x) at 0 cycles through cos, -sin, -cos: 1, 0, -1, 0
x = sg.tensor(0.0, requires_grad=True)
derivative = sg.sin(x)
for order in range(1, 5):
    derivative, = sg.autograd.grad(derivative, x, create_graph=True)
    print(f"d{order}/dx{order} sin(x) at 0 = {derivative.item():.1f}")

# f(x) = x^3: f' = 3x^2 = 12, f'' = 6x = 12, f''' = 6 at x = 2, via backward(create_graph=True)
x = sg.tensor(2.0, requires_grad=True)
(x ** 3).backward(create_graph=True)
first = x.grad
print("f'(2) =", first.item())
x.grad = None
second, = sg.autograd.grad(first, x, create_graph=True)
third, = sg.autograd.grad(second, x)
print("f''(2) =", second.item(), " f'''(2) =", third.item())

# A Hessian-vector product: grad of (grad f . v)
w = sg.tensor([1.0, 2.0], requires_grad=True)
v = sg.tensor([1.0, 0.0])
f = (w[0] ** 2) * w[1] + w[1] ** 3
g, = sg.autograd.grad(f, w, create_graph=True)
hv, = sg.autograd.grad((g * v).sum(), w)
print("Hessian-vector product:", hv)
