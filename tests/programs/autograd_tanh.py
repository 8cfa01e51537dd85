# HIPS/autograd examples/tanh.py: tanh written with exp and its first four derivatives by nesting
# elementwise_grad. `autograd.numpy` is `symgrad.numpy`. Changed (marked): elementwise_grad written with vjp
# (autograd's definition: the vjp of an all-ones cotangent; neither symgrad nor JAX has the name); the curves'
# values at every 70th point printed instead of plotted.
import symgrad.numpy as np
import symgrad as sg  # changed: autograd's vjp is sg's


def egrad(fun):  # changed: autograd's elementwise_grad
    def gradfun(x):
        ans, vjp = sg.vjp(fun, x)
        return vjp(np.ones_like(ans))[0]

    return gradfun


def tanh(x):
    return (1.0 - np.exp(-2 * x)) / (1.0 + np.exp(-(2 * x)))


### Plotting
x = np.linspace(-7, 7, 700)
curves = [tanh(x), egrad(tanh)(x), egrad(egrad(tanh))(x), egrad(egrad(egrad(tanh)))(x),  # changed: printed
          egrad(egrad(egrad(egrad(tanh))))(x)]
labels = ["tanh(x)", "1st derivative", "2nd derivative", "3rd derivative", "4th derivative"]
for label, curve in zip(labels, curves):
    print(label, np.round(curve[::70], 10))
print("4th derivative at its extremes", np.min(curves[4]), np.max(curves[4]))
