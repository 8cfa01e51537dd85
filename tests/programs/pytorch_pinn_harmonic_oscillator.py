# benmoseley/harmonic-oscillator-pinn "Harmonic oscillator PINN.ipynb" (MIT License, Copyright (c) 2021 Ben
# Moseley): a Tanh MLP of nested Sequentials fitted to ten points of a damped oscillator's exact solution, then a
# physics-informed net whose loss adds the ODE's residual at 30 collocation points, its first and second derivatives
# by autograd.grad(create_graph=True) of a grad (gradients of gradients through the weights), under Adam.
# `import torch` renamed. Changed (marked): float64 (linspace's dtype, the models'); the weights come from NumPy's
# generator (symgrad's random numbers are not PyTorch's); no plots, GIFs or PIL: the losses and predictions printed;
# 40 steps of each training instead of 1000 and 20000, the physics net at lr 1e-3 instead of 1e-4.
import numpy as np
import symgrad as torch
import symgrad.nn as nn

rng = np.random.default_rng(0)  # changed: the random numbers' source


def oscillator(d, w0, x):
    """Defines the analytical solution to the 1D underdamped harmonic oscillator problem.
    Equations taken from: https://beltoforion.de/en/harmonic_oscillator/"""
    assert d < w0
    w = np.sqrt(w0**2-d**2)
    phi = np.arctan(-d/w)
    A = 1/(2*np.cos(phi))
    cos = torch.cos(phi+w*x)
    sin = torch.sin(phi+w*x)
    exp = torch.exp(-d*x)
    y  = exp*2*A*cos
    return y

class FCN(nn.Module):
    "Defines a connected network"

    def __init__(self, N_INPUT, N_OUTPUT, N_HIDDEN, N_LAYERS):
        super().__init__()
        activation = nn.Tanh
        self.fcs = nn.Sequential(*[
                        nn.Linear(N_INPUT, N_HIDDEN),
                        activation()])
        self.fch = nn.Sequential(*[
                        nn.Sequential(*[
                            nn.Linear(N_HIDDEN, N_HIDDEN),
                            activation()]) for _ in range(N_LAYERS-1)])
        self.fce = nn.Linear(N_HIDDEN, N_OUTPUT)

    def forward(self, x):
        x = self.fcs(x)
        x = self.fch(x)
        x = self.fce(x)
        return x


def fixed_weights(model):  # changed: the weights from NumPy, in float64
    model.double().load_state_dict({name: torch.tensor(rng.uniform(-0.5, 0.5, tuple(p.shape)))
                                    for name, p in model.state_dict().items()})
    return model


d, w0 = 2, 20

# get the analytical solution over the full domain
x = torch.linspace(0,1,500, dtype=torch.double).view(-1,1)  # changed: float64
y = oscillator(d, w0, x).view(-1,1)
print(x.shape, y.shape)

# slice out a small number of points from the LHS of the domain
x_data = x[0:200:20]
y_data = y[0:200:20]
print(x_data.shape, y_data.shape)

# train standard neural network to fit training data
torch.manual_seed(123)
model = fixed_weights(FCN(1,1,32,3))  # changed: fixed_weights
optimizer = torch.optim.Adam(model.parameters(),lr=1e-3)
for i in range(40):  # changed: 1000
    optimizer.zero_grad()
    yh = model(x_data)
    loss = torch.mean((yh-y_data)**2)# use mean squared error
    loss.backward()
    optimizer.step()

    if (i+1) % 10 == 0:  # changed: printed instead of plotted
        yh = model(x).detach()
        print(i + 1, loss.item(), yh[::100, 0].tolist())  # changed: printed instead of plotted

x_physics = torch.linspace(0,1,30, dtype=torch.double).view(-1,1).requires_grad_(True)  # changed: float64
mu, k = 2*d, w0**2

torch.manual_seed(123)
model = fixed_weights(FCN(1,1,32,3))  # changed: fixed_weights
optimizer = torch.optim.Adam(model.parameters(),lr=1e-3)  # changed: 1e-4
for i in range(40):  # changed: 20000
    optimizer.zero_grad()

    # compute the "data loss"
    yh = model(x_data)
    loss1 = torch.mean((yh-y_data)**2)# use mean squared error

    # compute the "physics loss"
    yhp = model(x_physics)
    dx  = torch.autograd.grad(yhp, x_physics, torch.ones_like(yhp), create_graph=True)[0]# computes dy/dx
    dx2 = torch.autograd.grad(dx,  x_physics, torch.ones_like(dx),  create_graph=True)[0]# computes d^2y/dx^2
    physics = dx2 + mu*dx + k*yhp# computes the residual of the 1D harmonic oscillator differential equation
    loss2 = (1e-4)*torch.mean(physics**2)

    # backpropagate joint loss
    loss = loss1 + loss2# add two loss terms together
    loss.backward()
    optimizer.step()

    if (i+1) % 10 == 0:  # changed: printed instead of plotted
        yh = model(x).detach()
        xp = x_physics.detach()
        print(i + 1, loss1.item(), loss2.item(), yh[::100, 0].tolist())  # changed: printed
        print(x_physics.grad[::10].tolist())  # changed: printed
        print(dx2[::10, 0].tolist(), model.fce.weight.grad.norm().item())  # changed: printed
