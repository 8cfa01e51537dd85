# pytorch/examples reinforcement_learning/reinforce.py: REINFORCE on CartPole, a Linear-Dropout-ReLU-Linear-softmax
# policy whose Categorical log-probabilities of the actions taken are weighted by the normalized discounted returns
# (a tensor of a deque) and summed by cat, under Adam. `import torch` renamed. Changed (marked): float64
# states and policy, weights from NumPy; gymnasium's CartPole is the stand-in tests/programs/cartpole.py (episodes
# truncated at 25 steps, solved at 20); the actions are drawn from the policy's probabilities with NumPy's generator
# (symgrad's random numbers are not PyTorch's); Dropout(0) (random); 6 episodes, logged every 2, with the loss.
import argparse
import cartpole as gym  # changed: a stand-in for gymnasium's CartPole-v1
import numpy as np
from itertools import count
from collections import deque
import symgrad as sg
import symgrad.nn as nn
import symgrad.nn.functional as F
import symgrad.optim as optim
from symgrad.distributions import Categorical


args = argparse.Namespace(gamma=0.99, seed=543, render=False, log_interval=2)  # changed: fixed


render_mode = "human" if args.render else None
env = gym.make('CartPole-v1', render_mode=render_mode, max_episode_steps=25, reward_threshold=20.0)  # changed
env.reset(seed=args.seed)
sg.manual_seed(args.seed)
rng = np.random.default_rng(0)  # changed: the random numbers' source


class Policy(nn.Module):
    def __init__(self):
        super(Policy, self).__init__()
        self.affine1 = nn.Linear(4, 128)
        self.dropout = nn.Dropout(p=0.0)  # changed: 0.6
        self.affine2 = nn.Linear(128, 2)

        self.saved_log_probs = []
        self.rewards = []

    def forward(self, x):
        x = self.affine1(x)
        x = self.dropout(x)
        x = F.relu(x)
        action_scores = self.affine2(x)
        return F.softmax(action_scores, dim=1)


policy = Policy().double()  # changed: float64
policy.load_state_dict({name: sg.tensor(rng.uniform(-0.3, 0.3, tuple(p.shape)))  # changed: fixed weights
                        for name, p in policy.state_dict().items()})
optimizer = optim.Adam(policy.parameters(), lr=1e-2)
eps = np.finfo(np.float32).eps.item()


def select_action(state):
    state = sg.from_numpy(state).double().unsqueeze(0)  # changed: float64
    probs = policy(state)
    m = Categorical(probs)
    action = sg.tensor([int(rng.random() >= probs[0, 0].item())])  # changed: m.sample(), NumPy's numbers
    policy.saved_log_probs.append(m.log_prob(action))
    return action.item()


def finish_episode():
    R = 0
    policy_loss = []
    returns = deque()
    for r in policy.rewards[::-1]:
        R = r + args.gamma * R
        returns.appendleft(R)
    returns = sg.tensor(returns, dtype=sg.double)  # changed: float64 (PyTorch's default is float32)
    returns = (returns - returns.mean()) / (returns.std() + eps)
    for log_prob, R in zip(policy.saved_log_probs, returns):
        policy_loss.append(-log_prob * R)
    optimizer.zero_grad()
    policy_loss = sg.cat(policy_loss).sum()
    policy_loss.backward()
    optimizer.step()
    del policy.rewards[:]
    del policy.saved_log_probs[:]
    return policy_loss.item()  # changed: printed


def main():
    running_reward = 10
    for i_episode in count(1):
        state, _ = env.reset()
        ep_reward = 0
        for t in range(1, 10000):  # Don't infinite loop while learning
            action = select_action(state)
            state, reward, terminated, truncated, _ = env.step(action)
            if args.render:
                env.render()
            policy.rewards.append(reward)
            ep_reward += reward
            if terminated or truncated:
                break

        running_reward = 0.05 * ep_reward + (1 - 0.05) * running_reward
        loss = finish_episode()  # changed: its loss printed
        if i_episode % args.log_interval == 0:
            print(f'Episode {i_episode}\tLast reward: {ep_reward:.2f}\tAverage reward: {running_reward:.2f}')
            print(f'loss {loss} weight norm {policy.affine2.weight.norm().item()}')  # changed: numbers to compare
        if running_reward > env.spec.reward_threshold or i_episode == 6:  # changed: at most 6 episodes
            print(f"Solved! Running reward is now {running_reward} and the last episode runs to {t} time steps!")
            break


if __name__ == '__main__':
    main()
