"""An actor-critic agent learns to walk right along a corridor to reach the goal.

The environment is a few lines of NumPy (no gym). Exercises a two-headed policy
(softmax action probabilities, state value), torch.distributions.Categorical
sample/log_prob, per-step tensors saved in a namedtuple, discounted returns
normalized with mean/std and np.finfo(np.float32).eps, F.smooth_l1_loss against
torch.tensor([R]), torch.stack(...).sum() of the per-step losses, and the
running-reward bookkeeping of the classic example.
"""

from collections import namedtuple

import numpy as np

import flambeau as torch
import flambeau.nn as nn
import flambeau.nn.functional as F
import flambeau.optim as optim
from flambeau.distributions import Categorical

SavedAction = namedtuple("SavedAction", ["log_prob", "value"])
CELLS, MAX_STEPS, GAMMA = 6, 20, 0.95
eps = np.finfo(np.float32).eps.item()


class Corridor:
    """Start in cell 0; action 1 moves right, 0 moves left; the last cell pays 1."""

    def reset(self):
        self.pos, self.steps = 0, 0
        return self._state()

    def _state(self):
        state = np.zeros(CELLS, dtype=np.float64)
        state[self.pos] = 1.0
        return state

    def step(self, action):
        self.pos = min(max(self.pos + (1 if action == 1 else -1), 0), CELLS - 1)
        self.steps += 1
        done = self.pos == CELLS - 1 or self.steps >= MAX_STEPS
        reward = 1.0 if self.pos == CELLS - 1 else -0.02
        return self._state(), reward, done


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.affine1 = nn.Linear(CELLS, 32)
        self.action_head = nn.Linear(32, 2)
        self.value_head = nn.Linear(32, 1)
        self.saved_actions = []
        self.rewards = []

    def forward(self, x):
        x = F.relu(self.affine1(x))
        action_prob = F.softmax(self.action_head(x), dim=-1)
        state_values = self.value_head(x)
        return action_prob, state_values


def select_action(model, state):
    state = torch.from_numpy(state).float()
    probs, state_value = model(state)
    m = Categorical(probs)
    action = m.sample()
    model.saved_actions.append(SavedAction(m.log_prob(action), state_value))
    return action.item()


def finish_episode(model, optimizer):
    R = 0
    saved_actions = model.saved_actions
    policy_losses = []
    value_losses = []
    returns = []
    for r in model.rewards[::-1]:
        R = r + GAMMA * R
        returns.insert(0, R)
    returns = torch.tensor(returns)
    if len(returns) > 1:
        returns = (returns - returns.mean()) / (returns.std() + eps)
    for (log_prob, value), R in zip(saved_actions, returns):
        advantage = R - value.item()
        policy_losses.append(-log_prob * advantage)
        value_losses.append(F.smooth_l1_loss(value, torch.tensor([R])))
    optimizer.zero_grad()
    loss = torch.stack(policy_losses).sum() + torch.stack(value_losses).sum()
    loss.backward()
    optimizer.step()
    del model.rewards[:]
    del model.saved_actions[:]


def main():
    torch.manual_seed(543)
    env = Corridor()
    model = Policy()
    optimizer = optim.Adam(model.parameters(), lr=3e-2)

    running_reward = None
    lengths = []
    for i_episode in range(1, 201):
        state, ep_reward = env.reset(), 0
        for t in range(1, MAX_STEPS + 1):
            action = select_action(model, state)
            state, reward, done = env.step(action)
            model.rewards.append(reward)
            ep_reward += reward
            if done:
                lengths.append(t)
                break
        running_reward = (
            ep_reward if running_reward is None else 0.05 * ep_reward + 0.95 * running_reward
        )
        finish_episode(model, optimizer)
        if i_episode % 50 == 0:
            print(
                f"Episode {i_episode}\tLast length: {lengths[-1]:3d}"
                f"\tAverage reward: {running_reward:.2f}"
            )

    # The shortest path takes CELLS - 1 steps; a random walk rarely arrives within MAX_STEPS.
    assert sum(lengths[-20:]) / 20 < CELLS + 1, lengths[-20:]
    assert sum(lengths[-20:]) < sum(lengths[:20]), (lengths[:20], lengths[-20:])
    with torch.no_grad():
        probs, _ = model(torch.eye(CELLS)[: CELLS - 1])
    assert bool((probs[:, 1] > 0.9).all()), probs


if __name__ == "__main__":
    main()
