"""REINFORCE with a baseline-free policy gradient on a small gridworld.

Follows pytorch/examples' reinforcement_learning/reinforce.py: a Policy module
that keeps saved_log_probs and rewards lists, torch.distributions.Categorical
sampling with m.log_prob(action), discounted returns computed backwards with
collections.deque.appendleft, returns standardized with
np.finfo(np.float32).eps.item(), torch.cat of per-step losses, and a running
reward; plus an entropy bonus from Categorical.entropy().
"""

from collections import deque

import numpy as np

import flambeau as torch
import flambeau.nn.functional as F
from flambeau import nn, optim
from flambeau.distributions import Categorical

SIZE = 4  # a SIZE x SIZE grid; start top-left, goal bottom-right
MOVES = [(-1, 0), (1, 0), (0, -1), (0, 1)]
eps = np.finfo(np.float32).eps.item()


class GridWorld:
    def reset(self):
        self.pos = (0, 0)
        return self.state()

    def state(self):
        s = np.zeros(SIZE * SIZE, dtype=np.float32)
        s[self.pos[0] * SIZE + self.pos[1]] = 1.0
        return s

    def step(self, action):
        dr, dc = MOVES[action]
        r = min(max(self.pos[0] + dr, 0), SIZE - 1)
        c = min(max(self.pos[1] + dc, 0), SIZE - 1)
        self.pos = (r, c)
        done = self.pos == (SIZE - 1, SIZE - 1)
        return self.state(), (10.0 if done else -0.1), done


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.affine1 = nn.Linear(SIZE * SIZE, 64)
        self.dropout = nn.Dropout(p=0.1)
        self.affine2 = nn.Linear(64, len(MOVES))
        self.saved_log_probs = []
        self.entropies = []
        self.rewards = []

    def forward(self, x):
        x = self.affine1(x)
        x = self.dropout(x)
        x = F.relu(x)
        action_scores = self.affine2(x)
        return F.softmax(action_scores, dim=1)


def main():
    torch.manual_seed(543)
    np.random.seed(543)
    gamma = 0.95
    env = GridWorld()
    policy = Policy()
    optimizer = optim.Adam(policy.parameters(), lr=1e-2)

    def select_action(state):
        state = torch.from_numpy(state).float().unsqueeze(0)
        probs = policy(state)
        m = Categorical(probs)
        action = m.sample()
        policy.saved_log_probs.append(m.log_prob(action))
        policy.entropies.append(m.entropy())
        return action.item()

    def finish_episode():
        R = 0
        policy_loss = []
        returns = deque()
        for r in policy.rewards[::-1]:
            R = r + gamma * R
            returns.appendleft(R)
        returns = torch.tensor(returns)
        returns = (returns - returns.mean()) / (returns.std() + eps)
        for log_prob, R in zip(policy.saved_log_probs, returns):
            policy_loss.append(-log_prob * R)
        optimizer.zero_grad()
        policy_loss = torch.cat(policy_loss).sum() - 0.01 * torch.cat(policy.entropies).sum()
        policy_loss.backward()
        optimizer.step()
        del policy.rewards[:]
        del policy.saved_log_probs[:]
        del policy.entropies[:]

    running_reward = None
    lengths = []
    for i_episode in range(1, 201):
        state, ep_reward = env.reset(), 0
        for t in range(1, 60):  # noqa: B007 - t is the episode's length after the loop
            action = select_action(state)
            state, reward, done = env.step(action)
            policy.rewards.append(reward)
            ep_reward += reward
            if done:
                break
        lengths.append(t)
        running_reward = (
            ep_reward if running_reward is None else 0.05 * ep_reward + (1 - 0.05) * running_reward
        )
        finish_episode()
        if i_episode % 40 == 0:
            print(f"Episode {i_episode}\tLast length: {t:5d}\tAverage reward: {running_reward:.2f}")
    optimal = 2 * (SIZE - 1)
    print(f"mean length of last 20 episodes {sum(lengths[-20:]) / 20:.1f} (optimal {optimal})")
    assert sum(lengths[-20:]) / 20 < 2 * optimal, lengths[-20:]
    assert running_reward > 8.0, running_reward

    # Categorical's log_prob and entropy agree with their definitions.
    probs = torch.tensor([[0.1, 0.2, 0.3, 0.4]])
    m = Categorical(probs)
    assert abs(m.log_prob(torch.tensor([2])).item() - np.log(0.3)) < 1e-6
    expected_entropy = -sum(p * np.log(p) for p in [0.1, 0.2, 0.3, 0.4])
    assert abs(m.entropy().item() - expected_entropy) < 1e-6
    m_logits = Categorical(logits=torch.log(probs) + 3.0)
    assert torch.allclose(m_logits.probs, probs)
    samples = m.sample((4000,))
    assert samples.shape == (4000, 1) and samples.dtype == torch.int64
    freq = torch.bincount(samples.flatten(), minlength=4).float() / 4000
    assert torch.allclose(freq, probs[0], atol=0.04), freq


if __name__ == "__main__":
    main()
