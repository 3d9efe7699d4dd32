"""Deep Q-learning with a replay memory on a small chain-walk environment.

Follows the PyTorch DQN tutorial: a Transition namedtuple and a deque-backed
ReplayMemory sampled with random.sample, epsilon-greedy action selection with
policy_net(state).max(1).indices.view(1, 1), a target network updated by a soft
(Polyak) blend of state_dicts, masks of non-final next states built with
torch.tensor(tuple(map(...)), dtype=torch.bool), gather of taken actions,
SmoothL1Loss, AdamW(amsgrad=True), and clip_grad_value_.
"""

import math
import random
from collections import deque, namedtuple

import flambeau as torch
import flambeau.nn.functional as F
from flambeau import nn, optim

N_STATES = 8
N_ACTIONS = 2  # left, right

Transition = namedtuple("Transition", ("state", "action", "next_state", "reward"))


class ChainEnv:
    """Walk on a line of N_STATES cells; reaching the right end pays 1 and ends the episode."""

    def reset(self):
        self.pos = 0
        self.t = 0
        return self.obs()

    def obs(self):
        return [1.0 if i == self.pos else 0.0 for i in range(N_STATES)]

    def step(self, action):
        self.t += 1
        self.pos = max(0, self.pos - 1) if action == 0 else self.pos + 1
        terminated = self.pos == N_STATES - 1
        truncated = self.t >= 3 * N_STATES
        reward = 1.0 if terminated else -0.01
        return self.obs(), reward, terminated, truncated


class ReplayMemory:
    def __init__(self, capacity):
        self.memory = deque([], maxlen=capacity)

    def push(self, *args):
        self.memory.append(Transition(*args))

    def sample(self, batch_size):
        return random.sample(self.memory, batch_size)

    def __len__(self):
        return len(self.memory)


class DQN(nn.Module):
    def __init__(self, n_observations, n_actions):
        super().__init__()
        self.layer1 = nn.Linear(n_observations, 64)
        self.layer2 = nn.Linear(64, 64)
        self.layer3 = nn.Linear(64, n_actions)

    def forward(self, x):
        x = F.relu(self.layer1(x))
        x = F.relu(self.layer2(x))
        return self.layer3(x)


BATCH_SIZE = 32
GAMMA = 0.95
EPS_START = 0.9
EPS_END = 0.05
EPS_DECAY = 300
TAU = 0.01
LR = 1e-3


def main():
    random.seed(0)
    torch.manual_seed(0)
    device = torch.device("cpu")
    env = ChainEnv()
    policy_net = DQN(N_STATES, N_ACTIONS).to(device)
    target_net = DQN(N_STATES, N_ACTIONS).to(device)
    target_net.load_state_dict(policy_net.state_dict())
    optimizer = optim.AdamW(policy_net.parameters(), lr=LR, amsgrad=True)
    memory = ReplayMemory(2000)
    steps_done = 0

    def select_action(state):
        nonlocal steps_done
        sample = random.random()
        eps_threshold = EPS_END + (EPS_START - EPS_END) * math.exp(-1.0 * steps_done / EPS_DECAY)
        steps_done += 1
        if sample > eps_threshold:
            with torch.no_grad():
                return policy_net(state).max(1).indices.view(1, 1)
        return torch.tensor([[random.randrange(N_ACTIONS)]], device=device, dtype=torch.long)

    def optimize_model():
        if len(memory) < BATCH_SIZE:
            return None
        transitions = memory.sample(BATCH_SIZE)
        batch = Transition(*zip(*transitions))
        non_final_mask = torch.tensor(
            tuple(map(lambda s: s is not None, batch.next_state)), device=device, dtype=torch.bool
        )
        non_final_next_states = torch.cat([s for s in batch.next_state if s is not None])
        state_batch = torch.cat(batch.state)
        action_batch = torch.cat(batch.action)
        reward_batch = torch.cat(batch.reward)

        state_action_values = policy_net(state_batch).gather(1, action_batch)
        next_state_values = torch.zeros(BATCH_SIZE, device=device)
        with torch.no_grad():
            next_state_values[non_final_mask] = target_net(non_final_next_states).max(1).values
        expected_state_action_values = (next_state_values * GAMMA) + reward_batch

        criterion = nn.SmoothL1Loss()
        loss = criterion(state_action_values, expected_state_action_values.unsqueeze(1))
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_value_(policy_net.parameters(), 100)
        optimizer.step()
        return loss.item()

    episode_durations = []
    for i_episode in range(60):
        state = env.reset()
        state = torch.tensor(state, dtype=torch.float32, device=device).unsqueeze(0)
        for t in range(1000):
            action = select_action(state)
            observation, reward, terminated, truncated = env.step(action.item())
            reward = torch.tensor([reward], device=device)
            done = terminated or truncated
            if terminated:
                next_state = None
            else:
                next_state = torch.tensor(
                    observation, dtype=torch.float32, device=device
                ).unsqueeze(0)
            memory.push(state, action, next_state, reward)
            state = next_state
            optimize_model()

            # Soft update of the target network's weights: θ′ ← τ θ + (1 −τ )θ′
            target_net_state_dict = target_net.state_dict()
            policy_net_state_dict = policy_net.state_dict()
            for key in policy_net_state_dict:
                target_net_state_dict[key] = policy_net_state_dict[
                    key
                ] * TAU + target_net_state_dict[key] * (1 - TAU)
            target_net.load_state_dict(target_net_state_dict)
            if done:
                episode_durations.append(t + 1)
                break
        if i_episode % 10 == 9:
            print(f"episode {i_episode + 1}: last durations {episode_durations[-10:]}")

    # The greedy policy walks straight to the goal.
    with torch.no_grad():
        states = torch.eye(N_STATES)[:-1]
        q = policy_net(states)
        greedy = q.argmax(dim=1)
    print("Q values:", q.tolist())
    assert q.shape == (N_STATES - 1, N_ACTIONS) and greedy.dtype == torch.int64
    assert greedy.tolist() == [1] * (N_STATES - 1), greedy
    assert sum(episode_durations[-5:]) / 5 < 2 * N_STATES, episode_durations
    # Q(s, right) approaches the discounted return of walking right.
    expected = [GAMMA ** (N_STATES - 2 - s) for s in range(N_STATES - 1)]
    assert abs(q[-1, 1].item() - expected[-1]) < 0.3, (q[-1, 1].item(), expected[-1])


if __name__ == "__main__":
    main()
