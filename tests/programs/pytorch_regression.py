# pytorch/examples regression/main.py: a Linear layer fitted to a random degree-4 polynomial by hand-written SGD
# steps (param.data.add_) on F.smooth_l1_loss, until the loss is below 1e-3. `import torch` renamed. Changed
# (marked): float64, and the target polynomial, batches and initial weights come from NumPy's generator (symgrad's
# random numbers are not PyTorch's).
from __future__ import print_function
from itertools import count

import numpy as np  # changed: the random numbers' source
import symgrad as sg
import symgrad.nn.functional as F

rng = np.random.default_rng(0)  # changed: the random numbers' source
POLY_DEGREE = 4
W_target = sg.tensor(rng.standard_normal((POLY_DEGREE, 1))) * 5  # changed: sg.randn(POLY_DEGREE, 1), float64
b_target = sg.tensor(rng.standard_normal(1)) * 5  # changed: sg.randn(1), float64


def make_features(x):
    """Builds features i.e. a matrix with columns [x, x^2, x^3, x^4]."""
    x = x.unsqueeze(1)
    return sg.cat([x ** i for i in range(1, POLY_DEGREE+1)], 1)


def f(x):
    """Approximated function."""
    return x.mm(W_target) + b_target.item()


def poly_desc(W, b):
    """Creates a string description of a polynomial."""
    result = 'y = '
    for i, w in enumerate(W):
        result += '{:+.2f} x^{} '.format(w, i + 1)
    result += '{:+.2f}'.format(b[0])
    return result


def get_batch(batch_size=32):
    """Builds a batch i.e. (x, f(x)) pair."""
    random = sg.tensor(rng.standard_normal(batch_size))  # changed: sg.randn(batch_size), float64
    x = make_features(random)
    y = f(x)
    return x, y


# Define model
fc = sg.nn.Linear(W_target.size(0), 1).double()  # changed: float64
fc.load_state_dict({"weight": sg.tensor(rng.uniform(-0.5, 0.5, (1, 4))),  # changed: fixed initial weights
                    "bias": sg.tensor(rng.uniform(-0.5, 0.5, 1))})

for batch_idx in count(1):
    # Get data
    batch_x, batch_y = get_batch()

    # Reset gradients
    fc.zero_grad()

    # Forward pass
    output = F.smooth_l1_loss(fc(batch_x), batch_y)
    loss = output.item()

    # Backward pass
    output.backward()

    # Apply gradients
    for param in fc.parameters():
        param.data.add_(-0.1 * param.grad)

    # Stop criterion
    if loss < 1e-3:
        break

print('Loss: {:.6f} after {} batches'.format(loss, batch_idx))
print('==> Learned function:\t' + poly_desc(fc.weight.view(-1), fc.bias))
print('==> Actual function:\t' + poly_desc(W_target.view(-1), b_target))
