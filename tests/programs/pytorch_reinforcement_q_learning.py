# pytorch/tutorials intermediate_source/reinforcement_q_learning.py ("Reinforcement Learning (DQN) Tutorial", Adam
# Paszke and Mark Towers): a three-layer Q-network on CartPole's observations, epsilon-greedy actions
# (`max(1).indices.view(1, 1)`), a replay memory of namedtuple Transitions in a deque sampled by random.sample, a batch
# built by zip and cat, Q(s, a) by gather, the target network's `max(1).values` written under no_grad into a zeros
# tensor through a boolean mask of non-final states, SmoothL1Loss, clip_grad_value_, AdamW with amsgrad, and a soft
# update of the target network through its state_dict. `import torch` renamed. Changed (marked): gymnasium's
# CartPole is the stand-in tests/programs/cartpole.py (episodes truncated at 25 steps); float64 (states, rewards,
# networks); the weights from NumPy (symgrad's random numbers are not PyTorch's); Python's random seeded; hidden size
# 32, not 128, batches of 16, not 128; 6 episodes, not 600 or 50; each episode's duration and loss printed, not
# plotted (no matplotlib).
import cartpole as gym  # changed: a stand-in for gymnasium's CartPole-v1
import math
import random
from collections import namedtuple, deque
from itertools import count

import numpy as np  # changed: the weights' source
import symgrad as torch
import symgrad.nn as nn
import symgrad.optim as optim
import symgrad.nn.functional as F

env = gym.make("CartPole-v1", max_episode_steps=25)  # changed: 25 steps, not 500

random.seed(0)  # changed: the transitions and actions chosen alike on both runs

# if GPU is to be used
device = torch.device(
    "cuda" if torch.cuda.is_available() else
    "mps" if torch.backends.mps.is_available() else
    "cpu"
)

Transition = namedtuple('Transition',
                        ('state', 'action', 'next_state', 'reward'))


class ReplayMemory(object):

    def __init__(self, capacity):
        self.memory = deque([], maxlen=capacity)

    def push(self, *args):
        """Save a transition"""
        self.memory.append(Transition(*args))

    def sample(self, batch_size):
        return random.sample(self.memory, batch_size)

    def __len__(self):
        return len(self.memory)


class DQN(nn.Module):

    def __init__(self, n_observations, n_actions):
        super(DQN, self).__init__()
        self.layer1 = nn.Linear(n_observations, 32)  # changed: 128
        self.layer2 = nn.Linear(32, 32)  # changed: 128
        self.layer3 = nn.Linear(32, n_actions)  # changed: 128

    # Called with either one element to determine next action, or a batch
    # during optimization. Returns tensor([[left0exp,right0exp]...]).
    def forward(self, x):
        x = F.relu(self.layer1(x))
        x = F.relu(self.layer2(x))
        return self.layer3(x)


# BATCH_SIZE is the number of transitions sampled from the replay buffer
# GAMMA is the discount factor as mentioned in the previous section
# EPS_START is the starting value of epsilon
# EPS_END is the final value of epsilon
# EPS_DECAY controls the rate of exponential decay of epsilon, higher means a slower decay
# TAU is the update rate of the target network
# LR is the learning rate of the ``AdamW`` optimizer
BATCH_SIZE = 16  # changed: 128
GAMMA = 0.99
EPS_START = 0.9
EPS_END = 0.01
EPS_DECAY = 100  # changed: 2500
TAU = 0.005
LR = 3e-4

# Get number of actions from gym action space
n_actions = env.action_space.n
# Get the number of state observations
state, info = env.reset(seed=0)  # changed: seeded
n_observations = len(state)

policy_net = DQN(n_observations, n_actions).double().to(device)  # changed: float64
rng = np.random.default_rng(0)  # changed: fixed weights instead of PyTorch's random ones
policy_net.load_state_dict({name: torch.tensor(rng.uniform(-0.3, 0.3, tuple(p.shape)))  # changed
                            for name, p in policy_net.state_dict().items()})  # changed
target_net = DQN(n_observations, n_actions).double().to(device)  # changed: float64
target_net.load_state_dict(policy_net.state_dict())

optimizer = optim.AdamW(policy_net.parameters(), lr=LR, amsgrad=True)
memory = ReplayMemory(10000)


steps_done = 0


def select_action(state):
    global steps_done
    sample = random.random()
    eps_threshold = EPS_END + (EPS_START - EPS_END) * \
        math.exp(-1. * steps_done / EPS_DECAY)
    steps_done += 1
    if sample > eps_threshold:
        with torch.no_grad():
            # t.max(1) will return the largest column value of each row.
            # second column on max result is index of where max element was
            # found, so we pick action with the larger expected reward.
            return policy_net(state).max(1).indices.view(1, 1)
    else:
        return torch.tensor([[env.action_space.sample()]], device=device, dtype=torch.long)


episode_durations = []
losses = []  # changed: the losses, to print


def plot_durations(show_result=False):  # changed: printed, not plotted
    durations_t = torch.tensor(episode_durations, dtype=torch.float)
    print('episode', len(durations_t), 'duration', durations_t[-1].item(), 'losses', losses[-3:])  # changed


def optimize_model():
    if len(memory) < BATCH_SIZE:
        return
    transitions = memory.sample(BATCH_SIZE)
    # Transpose the batch (see https://stackoverflow.com/a/19343/3343043 for
    # detailed explanation). This converts batch-array of Transitions
    # to Transition of batch-arrays.
    batch = Transition(*zip(*transitions))

    # Compute a mask of non-final states and concatenate the batch elements
    # (a final state would've been the one after which simulation ended)
    non_final_mask = torch.tensor(tuple(map(lambda s: s is not None,
                                          batch.next_state)), device=device, dtype=torch.bool)
    non_final_next_states = torch.cat([s for s in batch.next_state
                                                if s is not None])
    state_batch = torch.cat(batch.state)
    action_batch = torch.cat(batch.action)
    reward_batch = torch.cat(batch.reward)

    # Compute Q(s_t, a) - the model computes Q(s_t), then we select the
    # columns of actions taken. These are the actions which would've been taken
    # for each batch state according to policy_net
    state_action_values = policy_net(state_batch).gather(1, action_batch)

    # Compute V(s_{t+1}) for all next states.
    # Expected values of actions for non_final_next_states are computed based
    # on the "older" target_net; selecting their best reward with max(1).values
    # This is merged based on the mask, such that we'll have either the expected
    # state value or 0 in case the state was final.
    next_state_values = torch.zeros(BATCH_SIZE, device=device, dtype=torch.float64)  # changed: float64
    with torch.no_grad():
        next_state_values[non_final_mask] = target_net(non_final_next_states).max(1).values
    # Compute the expected Q values
    expected_state_action_values = (next_state_values * GAMMA) + reward_batch

    # Compute Huber loss
    criterion = nn.SmoothL1Loss()
    loss = criterion(state_action_values, expected_state_action_values.unsqueeze(1))
    losses.append(loss.item())  # changed: kept to print

    # Optimize the model
    optimizer.zero_grad()
    loss.backward()
    # In-place gradient clipping
    torch.nn.utils.clip_grad_value_(policy_net.parameters(), 100)
    optimizer.step()


num_episodes = 6  # changed: 600 on a GPU, 50 on a CPU

for i_episode in range(num_episodes):
    # Initialize the environment and get its state
    state, info = env.reset()
    state = torch.tensor(state, dtype=torch.float64, device=device).unsqueeze(0)  # changed: float64
    for t in count():
        action = select_action(state)
        observation, reward, terminated, truncated, _ = env.step(action.item())
        reward = torch.tensor([reward], device=device, dtype=torch.float64)  # changed: float64
        done = terminated or truncated

        if terminated:
            next_state = None
        else:
            next_state = torch.tensor(observation, dtype=torch.float64, device=device).unsqueeze(0)  # changed

        # Store the transition in memory
        memory.push(state, action, next_state, reward)

        # Move to the next state
        state = next_state

        # Perform one step of the optimization (on the policy network)
        optimize_model()

        # Soft update of the target network's weights
        # θ′ ← τ θ + (1 −τ )θ′
        target_net_state_dict = target_net.state_dict()
        policy_net_state_dict = policy_net.state_dict()
        for key in policy_net_state_dict:
            target_net_state_dict[key] = policy_net_state_dict[key]*TAU + target_net_state_dict[key]*(1-TAU)
        target_net.load_state_dict(target_net_state_dict)

        if done:
            episode_durations.append(t + 1)
            plot_durations()
            break

print('Complete')
print(policy_net.layer3.bias.tolist(), target_net.layer3.bias.tolist())  # changed: numbers to compare
