# rtqichen/torchdiffeq (MIT License, Copyright (c) 2018 Ricky Tian Qi Chen) examples/ode_demo.py: a neural ODE
# (a Linear-Tanh-Linear field of y**3) fitted by RMSprop to batches of a spiral's trajectory (windows picked by
# np.random.choice, stacked from true_y[s + i]), each batch integrated from its first points, the mean absolute
# error backpropagated through every solver step; the true spiral integrated under no_grad from torch.mm(y**3, A).
# With torchdiffeq's fixed-grid 'rk4' solver inline (torchdiffeq/_impl: rk_common.rk4_alt_step_func, the 3/8 rule,
# and solvers.FixedGridODESolver.integrate's loop writing solution[j] into a torch.empty, with _linear_interp):
# a hand-written RK4 differentiated step by step. `import torch` renamed.
# Changed (marked): odeint is that fixed-grid RK4 for dopri5 (the adaptive solvers are torchdiffeq's own library);
# float64 (the tensors given dtypes, the field .double()); the weights' normal draws from NumPy's generator (symgrad's
# random numbers are not PyTorch's) and NumPy's seeded for get_batch; args fixed: 100 points of t in [0, 5], windows
# of 5, batches of 8, 6 iterations tested every 2; no plots (--viz off), no timings printed.
import os
import argparse
import time
import numpy as np

import symgrad as torch
import symgrad.nn as nn
import symgrad.optim as optim

parser = argparse.ArgumentParser('ODE demo')
parser.add_argument('--method', type=str, choices=['dopri5', 'adams'], default='dopri5')
parser.add_argument('--data_size', type=int, default=1000)
parser.add_argument('--batch_time', type=int, default=10)
parser.add_argument('--batch_size', type=int, default=20)
parser.add_argument('--niters', type=int, default=2000)
parser.add_argument('--test_freq', type=int, default=20)
parser.add_argument('--viz', action='store_true')
parser.add_argument('--gpu', type=int, default=0)
parser.add_argument('--adjoint', action='store_true')
args = parser.parse_args(['--data_size', '100', '--batch_time', '5', '--batch_size', '8', '--niters', '6',  # changed
                          '--test_freq', '2'])  # changed: fixed
np.random.seed(0)  # changed: get_batch's choices fixed
rng = np.random.default_rng(0)  # changed: the weights' source

_one_third = 1 / 3  # changed: torchdiffeq/_impl/rk_common.py's, inline
_two_thirds = 2 / 3  # changed: (as below)


def rk4_alt_step_func(func, t0, dt, t1, y0, f0=None):  # changed: (perturb left out)
    """Smaller error with slightly more compute."""
    k1 = f0
    if k1 is None:
        k1 = func(t0, y0)  # changed: (perturb left out)
    k2 = func(t0 + dt * _one_third, y0 + dt * k1 * _one_third)
    k3 = func(t0 + dt * _two_thirds, y0 + dt * (k2 - k1 * _one_third))
    k4 = func(t1, y0 + dt * (k1 - k2 + k3))  # changed: (perturb left out)
    return (k1 + 3 * (k2 + k3) + k4) * dt * 0.125


def _linear_interp(t0, t1, y0, y1, t):  # changed: FixedGridODESolver's method as a function
    if t == t0:
        return y0
    if t == t1:
        return y1
    slope = (t - t0) / (t1 - t0)
    return y0 + slope * (y1 - y0)


def odeint(func, y0, t, method='rk4'):  # changed: torchdiffeq's RK4(FixedGridODESolver).integrate on the grid t
    solution = torch.empty(len(t), *y0.shape, dtype=y0.dtype, device=y0.device)
    solution[0] = y0

    j = 1
    for t0, t1 in zip(t[:-1], t[1:]):  # changed: time_grid is t (no step_size)
        dt = t1 - t0
        f0 = func(t0, y0)  # changed: RK4._step_func
        dy = rk4_alt_step_func(func, t0, dt, t1, y0, f0=f0)  # changed: RK4._step_func
        y1 = y0 + dy

        while j < len(t) and t1 >= t[j]:
            solution[j] = _linear_interp(t0, t1, y0, y1, t[j])  # changed: (interp "linear")
            j += 1
        y0 = y1

    return solution

device = torch.device('cuda:' + str(args.gpu) if torch.cuda.is_available() else 'cpu')

true_y0 = torch.tensor([[2., 0.]], dtype=torch.double).to(device)  # changed: float64
t = torch.linspace(0., 5., args.data_size, dtype=torch.double).to(device)  # changed: float64, 25.
true_A = torch.tensor([[-0.1, 2.0], [-2.0, -0.1]], dtype=torch.double).to(device)  # changed: float64


class Lambda(nn.Module):

    def forward(self, t, y):
        return torch.mm(y**3, true_A)


with torch.no_grad():
    true_y = odeint(Lambda(), true_y0, t, method='dopri5')


def get_batch():
    s = torch.from_numpy(np.random.choice(np.arange(args.data_size - args.batch_time, dtype=np.int64), args.batch_size, replace=False))
    batch_y0 = true_y[s]  # (M, D)
    batch_t = t[:args.batch_time]  # (T)
    batch_y = torch.stack([true_y[s + i] for i in range(args.batch_time)], dim=0)  # (T, M, D)
    return batch_y0.to(device), batch_t.to(device), batch_y.to(device)


def makedirs(dirname):
    if not os.path.exists(dirname):
        os.makedirs(dirname)


if args.viz:
    makedirs('png')
    import matplotlib.pyplot as plt
    fig = plt.figure(figsize=(12, 4), facecolor='white')
    ax_traj = fig.add_subplot(131, frameon=False)
    ax_phase = fig.add_subplot(132, frameon=False)
    ax_vecfield = fig.add_subplot(133, frameon=False)
    plt.show(block=False)


def visualize(true_y, pred_y, odefunc, itr):

    if args.viz:

        ax_traj.cla()
        ax_traj.set_title('Trajectories')
        ax_traj.set_xlabel('t')
        ax_traj.set_ylabel('x,y')
        ax_traj.plot(t.cpu().numpy(), true_y.cpu().numpy()[:, 0, 0], t.cpu().numpy(), true_y.cpu().numpy()[:, 0, 1], 'g-')
        ax_traj.plot(t.cpu().numpy(), pred_y.cpu().numpy()[:, 0, 0], '--', t.cpu().numpy(), pred_y.cpu().numpy()[:, 0, 1], 'b--')
        ax_traj.set_xlim(t.cpu().min(), t.cpu().max())
        ax_traj.set_ylim(-2, 2)
        ax_traj.legend()

        ax_phase.cla()
        ax_phase.set_title('Phase Portrait')
        ax_phase.set_xlabel('x')
        ax_phase.set_ylabel('y')
        ax_phase.plot(true_y.cpu().numpy()[:, 0, 0], true_y.cpu().numpy()[:, 0, 1], 'g-')
        ax_phase.plot(pred_y.cpu().numpy()[:, 0, 0], pred_y.cpu().numpy()[:, 0, 1], 'b--')
        ax_phase.set_xlim(-2, 2)
        ax_phase.set_ylim(-2, 2)

        ax_vecfield.cla()
        ax_vecfield.set_title('Learned Vector Field')
        ax_vecfield.set_xlabel('x')
        ax_vecfield.set_ylabel('y')

        y, x = np.mgrid[-2:2:21j, -2:2:21j]
        dydt = odefunc(0, torch.Tensor(np.stack([x, y], -1).reshape(21 * 21, 2)).to(device)).cpu().detach().numpy()
        mag = np.sqrt(dydt[:, 0]**2 + dydt[:, 1]**2).reshape(-1, 1)
        dydt = (dydt / mag)
        dydt = dydt.reshape(21, 21, 2)

        ax_vecfield.streamplot(x, y, dydt[:, :, 0], dydt[:, :, 1], color="black")
        ax_vecfield.set_xlim(-2, 2)
        ax_vecfield.set_ylim(-2, 2)

        fig.tight_layout()
        plt.savefig('png/{:03d}'.format(itr))
        plt.draw()
        plt.pause(0.001)


class ODEFunc(nn.Module):

    def __init__(self):
        super(ODEFunc, self).__init__()

        self.net = nn.Sequential(
            nn.Linear(2, 50),
            nn.Tanh(),
            nn.Linear(50, 2),
        )

        for m in self.net.modules():
            if isinstance(m, nn.Linear):
                m.weight.data.copy_(torch.tensor(rng.normal(0, 0.1, tuple(m.weight.shape))))  # changed: normal_
                nn.init.constant_(m.bias, val=0)

    def forward(self, t, y):
        return self.net(y**3)


class RunningAverageMeter(object):
    """Computes and stores the average and current value"""

    def __init__(self, momentum=0.99):
        self.momentum = momentum
        self.reset()

    def reset(self):
        self.val = None
        self.avg = 0

    def update(self, val):
        if self.val is None:
            self.avg = val
        else:
            self.avg = self.avg * self.momentum + val * (1 - self.momentum)
        self.val = val


if __name__ == '__main__':

    ii = 0

    func = ODEFunc().double().to(device)  # changed: float64
    
    optimizer = optim.RMSprop(func.parameters(), lr=1e-3)
    end = time.time()

    time_meter = RunningAverageMeter(0.97)
    
    loss_meter = RunningAverageMeter(0.97)

    for itr in range(1, args.niters + 1):
        optimizer.zero_grad()
        batch_y0, batch_t, batch_y = get_batch()
        pred_y = odeint(func, batch_y0, batch_t).to(device)
        loss = torch.mean(torch.abs(pred_y - batch_y))
        loss.backward()
        optimizer.step()

        time_meter.update(time.time() - end)
        loss_meter.update(loss.item())

        if itr % args.test_freq == 0:
            with torch.no_grad():
                pred_y = odeint(func, true_y0, t)
                loss = torch.mean(torch.abs(pred_y - true_y))
                print('Iter {:04d} | Total Loss {:.6f}'.format(itr, loss.item()))
                print('loss_meter', loss_meter.avg, func.net[0].weight.grad.norm().item())  # changed: printed
                visualize(true_y, pred_y, func, ii)
                ii += 1

        end = time.time()
