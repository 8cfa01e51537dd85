# pytorch/examples reinforcement_learning/actor_critic.py: an actor-critic on CartPole, one Linear trunk with a softmax
# action head and a value head; the loss sums Categorical log-probabilities weighted by advantages (value.item()) and
# smooth_l1_loss of the values against tensors made of 0-d tensors ([R]), stacked, under Adam. `import torch` renamed.
# Changed (marked): float64 states, policy and returns, weights from NumPy; gymnasium's CartPole is the stand-in
# tests/programs/cartpole.py (episodes truncated at 25 steps, solved at 20); the actions are drawn from the policy's
# probabilities with NumPy's generator (symgrad's random numbers are not PyTorch's); 6 episodes, logged every 2.
import argparse
import cartpole as gym  # changed: a stand-in for gymnasium's CartPole-v1
import numpy as np
from itertools import count
from collections import namedtuple

import symgrad as sg
import symgrad.nn as nn
import symgrad.nn.functional as F
import symgrad.optim as optim
from symgrad.distributions import Categorical

# Cart Pole

args = argparse.Namespace(gamma=0.99, seed=543, render=False, log_interval=2)  # changed: fixed


render_mode = "human" if args.render else None
env = gym.make('CartPole-v1', render_mode=render_mode, max_episode_steps=25, reward_threshold=20.0)  # changed
env.reset(seed=args.seed)
sg.manual_seed(args.seed)
rng = np.random.default_rng(0)  # changed: the random numbers' source


SavedAction = namedtuple('SavedAction', ['log_prob', 'value'])


class Policy(nn.Module):
    """
    implements both actor and critic in one model
    """
    def __init__(self):
        super(Policy, self).__init__()
        self.affine1 = nn.Linear(4, 128)

        # actor's layer
        self.action_head = nn.Linear(128, 2)

        # critic's layer
        self.value_head = nn.Linear(128, 1)

        # action & reward buffer
        self.saved_actions = []
        self.rewards = []

    def forward(self, x):
        """
        forward of both actor and critic
        """
        x = F.relu(self.affine1(x))

        # actor: choses action to take from state s_t
        # by returning probability of each action
        action_prob = F.softmax(self.action_head(x), dim=-1)

        # critic: evaluates being in the state s_t
        state_values = self.value_head(x)

        # return values for both actor and critic as a tuple of 2 values:
        # 1. a list with the probability of each action over the action space
        # 2. the value from state s_t
        return action_prob, state_values


model = Policy().double()  # changed: float64
model.load_state_dict({name: sg.tensor(rng.uniform(-0.3, 0.3, tuple(p.shape)))  # changed: fixed weights
                       for name, p in model.state_dict().items()})
optimizer = optim.Adam(model.parameters(), lr=3e-2)
eps = np.finfo(np.float32).eps.item()


def select_action(state):
    state = sg.from_numpy(state).double()  # changed: float64
    probs, state_value = model(state)

    # create a categorical distribution over the list of probabilities of actions
    m = Categorical(probs)

    # and sample an action using the distribution
    action = sg.tensor(int(rng.random() >= probs[0].item()))  # changed: m.sample(), NumPy's numbers

    # save to action buffer
    model.saved_actions.append(SavedAction(m.log_prob(action), state_value))

    # the action to take (left or right)
    return action.item()


def finish_episode():
    """
    Training code. Calculates actor and critic loss and performs backprop.
    """
    R = 0
    saved_actions = model.saved_actions
    policy_losses = [] # list to save actor (policy) loss
    value_losses = [] # list to save critic (value) loss
    returns = [] # list to save the true values

    # calculate the true value using rewards returned from the environment
    for r in model.rewards[::-1]:
        # calculate the discounted value
        R = r + args.gamma * R
        returns.insert(0, R)

    returns = sg.tensor(returns, dtype=sg.double)  # changed: float64 (PyTorch's default is float32)
    returns = (returns - returns.mean()) / (returns.std() + eps)

    for (log_prob, value), R in zip(saved_actions, returns):
        advantage = R - value.item()

        # calculate actor (policy) loss
        policy_losses.append(-log_prob * advantage)

        # calculate critic (value) loss using L1 smooth loss
        value_losses.append(F.smooth_l1_loss(value, sg.tensor([R])))

    # reset gradients
    optimizer.zero_grad()

    # sum up all the values of policy_losses and value_losses
    loss = sg.stack(policy_losses).sum() + sg.stack(value_losses).sum()

    # perform backprop
    loss.backward()
    optimizer.step()

    # reset rewards and action buffer
    del model.rewards[:]
    del model.saved_actions[:]
    return loss.item()  # changed: printed


def main():
    running_reward = 10

    # run infinitely many episodes
    for i_episode in count(1):

        # reset environment and episode reward
        state, _ = env.reset()
        ep_reward = 0

        # for each episode, only run 9999 steps so that we don't
        # infinite loop while learning
        for t in range(1, 10000):

            # select action from policy
            action = select_action(state)

            # take the action
            state, reward, terminated, truncated, _ = env.step(action)

            model.rewards.append(reward)
            ep_reward += reward
            if terminated or truncated:
                break

        # update cumulative reward
        running_reward = 0.05 * ep_reward + (1 - 0.05) * running_reward

        # perform backprop
        loss = finish_episode()  # changed: its loss printed

        # log results
        if i_episode % args.log_interval == 0:
            print(f'Episode {i_episode}\tLast reward: {ep_reward:.2f}\tAverage reward: {running_reward:.2f}')
            print(f'loss {loss} value head {model.value_head.weight.norm().item()}')  # changed: numbers to compare

        # check if we have "solved" the cart pole problem
        if running_reward > env.spec.reward_threshold or i_episode == 6:  # changed: at most 6 episodes
            print(f"Solved! Running reward is now {running_reward} and "
                  f"the last episode runs to {t} time steps!")
            break


if __name__ == '__main__':
    main()
