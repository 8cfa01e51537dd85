"""Gradients accumulate into .grad across backward() calls until they are zeroed.

Run: python examples/eager_grad_accumulation.py
"""
import symgrad as sg

x = sg.tensor([1.0, 2.0, 3.0], requires_grad=True)

for step in range(3):
    loss = (x ** 2).sum()      # d loss / dx = 2x, added to x.grad on every backward()
    loss.backward()
    print(f"after backward {step + 1}: x.grad = {x.grad}")

x.grad.zero_()                 # zero in place, as an optimizer's zero_grad(set_to_none=False) does
print("after zero_():", x.grad)

(3 * x).sum().backward()
print("after one more backward:", x.grad)
x.grad = None                  # what zero_grad() does by default
print("after setting to None:", x.grad)
