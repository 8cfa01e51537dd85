# HIPS/autograd examples/logistic_regression.py: logistic regression by gradient descent on a toy dataset.
# `autograd.numpy` is `symgrad.numpy`, autograd's transforms are `sg`'s. Changed (marked): check_grads is JAX's
# call form, and the weights are printed.
import symgrad.numpy as np
import symgrad as sg  # changed: autograd's grad and check_grads are sg's


def sigmoid(x):
    return 0.5 * (np.tanh(x) + 1)


def logistic_predictions(weights, inputs):
    # Outputs probability of a label being true according to logistic model.
    return sigmoid(np.dot(inputs, weights))


def training_loss(weights):
    # Training loss is the negative log-likelihood of the training labels.
    preds = logistic_predictions(weights, inputs)
    label_probabilities = preds * targets + (1 - preds) * (1 - targets)
    return -np.sum(np.log(label_probabilities))


# Build a toy dataset.
inputs = np.array([[0.52, 1.12, 0.77], [0.88, -1.08, 0.15], [0.52, 0.06, -1.30], [0.74, -2.49, 1.39]])
targets = np.array([True, True, False, True])

# Build a function that returns gradients of training loss using autograd.
training_gradient_fun = sg.grad(training_loss)

# Check the gradients numerically, just to be safe.
weights = np.array([0.0, 0.0, 0.0])
sg.check_grads(training_loss, (weights,), order=1, modes=["rev"])  # changed: JAX's call form

# Optimize weights using gradient descent.
print("Initial loss:", training_loss(weights))
for i in range(100):
    weights -= training_gradient_fun(weights) * 0.01

print("Trained loss:", training_loss(weights))
print("Weights:", weights)  # changed: printed
