"""A stand-in for gymnasium's CartPole-v1 (gymnasium/envs/classic_control/cartpole.py, MIT license): the same
dynamics (Euler steps of 0.02 s), termination, reward and reset, with episodes truncated at `max_episode_steps`,
and its Discrete(2) action space (whose draws are seeded, here by default: both runs of a port draw alike).
tests/programs' reinforcement-learning ports make it with `gym.make('CartPole-v1')`, as gymnasium's."""
import math
import types

import numpy as np


class Discrete:
    def __init__(self, n, seed=0):
        self.n, self.np_random = n, np.random.default_rng(seed)

    def sample(self):
        return int(self.np_random.integers(self.n))


class CartPole:
    gravity, masscart, masspole, length, force_mag, tau = 9.8, 1.0, 0.1, 0.5, 10.0, 0.02
    theta_threshold_radians, x_threshold = 12 * 2 * math.pi / 360, 2.4

    def __init__(self, max_episode_steps, reward_threshold):
        self.spec = types.SimpleNamespace(max_episode_steps=max_episode_steps, reward_threshold=reward_threshold)
        self.np_random = np.random.default_rng()
        self.action_space = Discrete(2)

    def reset(self, seed=None):
        if seed is not None:
            self.np_random = np.random.default_rng(seed)
        self.state, self.steps = self.np_random.uniform(-0.05, 0.05, size=(4,)), 0
        return self.state.astype(np.float32), {}

    def step(self, action):
        x, x_dot, theta, theta_dot = self.state
        force = self.force_mag if action == 1 else -self.force_mag
        costheta, sintheta = math.cos(theta), math.sin(theta)
        total_mass, polemass_length = self.masspole + self.masscart, self.masspole * self.length
        temp = (force + polemass_length * theta_dot**2 * sintheta) / total_mass
        thetaacc = (self.gravity * sintheta - costheta * temp) / (
            self.length * (4.0 / 3.0 - self.masspole * costheta**2 / total_mass))
        xacc = temp - polemass_length * thetaacc * costheta / total_mass
        x, x_dot = x + self.tau * x_dot, x_dot + self.tau * xacc
        theta, theta_dot = theta + self.tau * theta_dot, theta_dot + self.tau * thetaacc
        self.state, self.steps = np.array([x, x_dot, theta, theta_dot]), self.steps + 1
        terminated = bool(abs(x) > self.x_threshold or abs(theta) > self.theta_threshold_radians)
        truncated = self.steps >= self.spec.max_episode_steps
        return self.state.astype(np.float32), 1.0, terminated, truncated, {}


def make(name, render_mode=None, max_episode_steps=500, reward_threshold=475.0):
    assert name == "CartPole-v1", name
    return CartPole(max_episode_steps, reward_threshold)
