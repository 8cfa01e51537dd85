"""Tensor hooks: read or replace a gradient while backward runs; retain_grad() on intermediates.

Run: python examples/eager_hooks.py
"""
import symgrad as sg

x = sg.tensor([1.0, 2.0, 3.0], requires_grad=True)
h = x * 2
h.retain_grad()                                    # keep the gradient of a non-leaf
h.register_hook(lambda grad: print("gradient reaching h:", grad))
handle = h.register_hook(lambda grad: grad * 0.5)  # replace it: halve what flows back to x
x.register_hook(lambda grad: print("gradient reaching x:", grad))

y = (h ** 2).sum()
y.backward(retain_graph=True)
print("h.grad:", h.grad)
print("x.grad:", x.grad)

handle.remove()                                    # without the halving hook
x.grad = None
y.backward()
print("x.grad without the hook:", x.grad)

# Clipping a gradient with a hook
w = sg.tensor([10.0, -10.0], requires_grad=True)
w.register_hook(lambda grad: grad.clamp(-1.0, 1.0))
(w ** 2).sum().backward()
print("clipped w.grad:", w.grad)
