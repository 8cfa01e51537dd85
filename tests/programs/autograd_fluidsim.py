# HIPS/autograd examples/fluidsim/fluidsim.py: a smoke simulation (Jos Stam's stable fluids: semi-Lagrangian
# advection gathering at floor()ed integer indices, Gauss-Seidel projection with np.roll) whose initial velocity
# field is optimized by scipy's conjugate gradients on autograd's value_and_grad to make the smoke match a target
# image. `autograd.numpy` is `symgrad.numpy`, autograd's value_and_grad is `sg`'s. Changed (marked): 16x16
# synthetic smoke and target images instead of the PNG files, 3 time steps (100), at most 2 CG iterations (25),
# no plots or GIF; the final smoke's statistics printed; advect's field made an array of the namespace (autograd's
# floor returns NumPy's integers, symgrad's and JAX's traced ones, which cannot index a NumPy array).
from scipy.optimize import minimize

import symgrad.numpy as np
import symgrad as sg  # changed: autograd's value_and_grad is sg's

# Fluid simulation code based on
# "Real-Time Fluid Dynamics for Games" by Jos Stam
# https://www.josstam.com/_files/ugd/cf1fd6_9989229efbd34a26ba5ccd913721a2ac.pdf


def project(vx, vy):
    """Project the velocity field to be approximately mass-conserving,
    using a few iterations of Gauss-Seidel."""
    p = np.zeros(vx.shape)
    h = 1.0 / vx.shape[0]
    div = (
        -0.5
        * h
        * (
            np.roll(vx, -1, axis=0)
            - np.roll(vx, 1, axis=0)
            + np.roll(vy, -1, axis=1)
            - np.roll(vy, 1, axis=1)
        )
    )

    for k in range(10):
        p = (
            div
            + np.roll(p, 1, axis=0)
            + np.roll(p, -1, axis=0)
            + np.roll(p, 1, axis=1)
            + np.roll(p, -1, axis=1)
        ) / 4.0

    vx -= 0.5 * (np.roll(p, -1, axis=0) - np.roll(p, 1, axis=0)) / h
    vy -= 0.5 * (np.roll(p, -1, axis=1) - np.roll(p, 1, axis=1)) / h
    return vx, vy


def advect(f, vx, vy):
    """Move field f according to x and y velocities (u and v)
    using an implicit Euler integrator."""
    rows, cols = f.shape
    f = np.array(f)  # changed: a NumPy image indexed by traced indices must be an array of the trace (as in JAX)
    cell_ys, cell_xs = np.meshgrid(np.arange(rows), np.arange(cols))
    center_xs = (cell_xs - vx).ravel()
    center_ys = (cell_ys - vy).ravel()

    # Compute indices of source cells.
    left_ix = np.floor(center_xs).astype(int)
    top_ix = np.floor(center_ys).astype(int)
    rw = center_xs - left_ix  # Relative weight of right-hand cells.
    bw = center_ys - top_ix  # Relative weight of bottom cells.
    left_ix = np.mod(left_ix, rows)  # Wrap around edges of simulation.
    right_ix = np.mod(left_ix + 1, rows)
    top_ix = np.mod(top_ix, cols)
    bot_ix = np.mod(top_ix + 1, cols)

    # A linearly-weighted sum of the 4 surrounding cells.
    flat_f = (1 - rw) * ((1 - bw) * f[left_ix, top_ix] + bw * f[left_ix, bot_ix]) + rw * (
        (1 - bw) * f[right_ix, top_ix] + bw * f[right_ix, bot_ix]
    )
    return np.reshape(flat_f, (rows, cols))


def simulate(vx, vy, smoke, num_time_steps, ax=None, render=False):
    print("Running simulation...")
    for t in range(num_time_steps):
        vx_updated = advect(vx, vx, vy)
        vy_updated = advect(vy, vx, vy)
        vx, vy = project(vx_updated, vy_updated)
        smoke = advect(smoke, vx, vy)
    return smoke  # changed: no plots


def images(rows, cols):  # changed: a smoke blob and a ring instead of init_smoke.png and skull.png
    ys, xs = np.meshgrid(np.arange(rows) - rows / 2 + 0.5, np.arange(cols) - cols / 2 + 0.5)
    radius = np.sqrt(xs**2 + ys**2)
    return np.exp(-((xs + 3) ** 2 + ys**2) / 8.0), np.exp(-((radius - 5) ** 2) / 2.0)


if __name__ == "__main__":
    simulation_timesteps = 3  # changed: 100

    print("Loading initial and target states...")
    init_smoke, target = images(16, 16)  # changed: synthetic images
    rows, cols = target.shape

    init_dx_and_dy = np.zeros((2, rows, cols)).ravel()

    def distance_from_target_image(smoke):
        return np.mean((target - smoke) ** 2)

    def convert_param_vector_to_matrices(params):
        vx = np.reshape(params[: (rows * cols)], (rows, cols))
        vy = np.reshape(params[(rows * cols) :], (rows, cols))
        return vx, vy

    def objective(params):
        init_vx, init_vy = convert_param_vector_to_matrices(params)
        final_smoke = simulate(init_vx, init_vy, init_smoke, simulation_timesteps)
        return distance_from_target_image(final_smoke)

    # Specify gradient of objective function using autograd.
    objective_with_grad = sg.value_and_grad(objective)

    def callback(params):
        init_vx, init_vy = convert_param_vector_to_matrices(params)
        simulate(init_vx, init_vy, init_smoke, simulation_timesteps)

    print("Optimizing initial conditions...")
    result = minimize(
        objective_with_grad,
        init_dx_and_dy,
        jac=True,
        method="CG",
        options={"maxiter": 2, "disp": True},  # changed: 25 iterations
        callback=callback,
    )

    print("Rendering optimized flow...")
    init_vx, init_vy = convert_param_vector_to_matrices(result.x)
    smoke = simulate(init_vx, init_vy, init_smoke, simulation_timesteps)
    print("distance", distance_from_target_image(smoke), "smoke", np.sum(smoke), np.max(smoke))  # changed: printed
    print("velocity", np.round(result.x[::37], 8))  # changed: printed
