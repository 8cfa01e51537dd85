"""no_grad() and detach(): computing without recording, and cutting a value out of the graph.

Run: python examples/eager_no_grad_detach.py
"""
import symgrad as sg

x = sg.tensor([1.0, 2.0], requires_grad=True)

with sg.no_grad():
    y = x * 2
print("under no_grad: y.requires_grad =", y.requires_grad, " y.grad_fn =", y.grad_fn)

with sg.no_grad():
    with sg.enable_grad():
        z = x * 2
print("enable_grad inside no_grad: z.requires_grad =", z.requires_grad)


@sg.no_grad()
def evaluate(t):
    return (t ** 2).sum()


print("decorated function: requires_grad =", evaluate(x).requires_grad)

# detach(): the value without its history; gradients do not flow through it
a = x ** 2
b = a.detach()
print("detached: b.requires_grad =", b.requires_grad, " b.is_leaf =", b.is_leaf)
loss = (a * b).sum()   # d/dx (x^2 * const) = 2x * const
loss.backward()
print("x.grad (b treated as a constant):", x.grad)

# detach shares the data: a change through it shows in the original
c = x.detach()
c.zero_()
print("x after zeroing its detached view:", x)
