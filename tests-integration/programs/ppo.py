"""Proximal policy optimization (PPO) with GAE on vectorized corridor environments.

In the style of CleanRL's ppo.py: a layer_init helper with nn.init.orthogonal_ and
std=np.sqrt(2), an Agent with separate critic and actor heads and
get_action_and_value built on Categorical(logits=...), rollout storage tensors filled
step by step, generalized advantage estimation computed backwards, minibatches from
np.random.shuffle over flattened batch indices, the clipped surrogate objective, clipped
value loss, an entropy bonus, approx_kl via ((ratio - 1) - logratio).mean() under
no_grad, learning-rate annealing by assigning optimizer.param_groups[0]["lr"], and
clip_grad_norm_.
"""

import numpy as np

import flambeau as torch
from flambeau import nn, optim
from flambeau.distributions.categorical import Categorical

N_ENVS = 8
LENGTH = 6  # corridor cells; reward at the right end


class Corridor:
    """N_ENVS corridors stepped together; observation is the one-hot position."""

    def __init__(self, n):
        self.n = n
        self.pos = torch.zeros(n, dtype=torch.long)
        self.t = torch.zeros(n, dtype=torch.long)

    def obs(self):
        return nn.functional.one_hot(self.pos, LENGTH).float()

    def reset(self):
        self.pos.zero_()
        self.t.zero_()
        return self.obs()

    def step(self, action):
        self.pos = (self.pos + torch.where(action == 1, 1, -1)).clamp(0, LENGTH - 1)
        self.t += 1
        reached = self.pos == LENGTH - 1
        timeout = self.t >= 3 * LENGTH
        reward = reached.float() - 0.01
        done = reached | timeout
        self.pos = torch.where(done, torch.zeros_like(self.pos), self.pos)
        self.t = torch.where(done, torch.zeros_like(self.t), self.t)
        return self.obs(), reward, done


def layer_init(layer, std=np.sqrt(2), bias_const=0.0):  # noqa: B008 - CleanRL's signature
    torch.nn.init.orthogonal_(layer.weight, std)
    torch.nn.init.constant_(layer.bias, bias_const)
    return layer


class Agent(nn.Module):
    def __init__(self):
        super().__init__()
        self.critic = nn.Sequential(
            layer_init(nn.Linear(LENGTH, 32)), nn.Tanh(), layer_init(nn.Linear(32, 1), std=1.0)
        )
        self.actor = nn.Sequential(
            layer_init(nn.Linear(LENGTH, 32)), nn.Tanh(), layer_init(nn.Linear(32, 2), std=0.01)
        )

    def get_value(self, x):
        return self.critic(x)

    def get_action_and_value(self, x, action=None):
        logits = self.actor(x)
        probs = Categorical(logits=logits)
        if action is None:
            action = probs.sample()
        return action, probs.log_prob(action), probs.entropy(), self.critic(x)


def main():
    np.random.seed(1)
    torch.manual_seed(1)
    num_steps, num_iterations = 32, 15
    gamma, gae_lambda, clip_coef, ent_coef, vf_coef = 0.95, 0.95, 0.2, 0.01, 0.5
    update_epochs, num_minibatches, learning_rate = 4, 4, 2.5e-3
    batch_size = N_ENVS * num_steps
    minibatch_size = batch_size // num_minibatches

    envs = Corridor(N_ENVS)
    agent = Agent()
    optimizer = optim.Adam(agent.parameters(), lr=learning_rate, eps=1e-5)
    w = agent.actor[0].weight.detach()
    assert torch.allclose(w.t() @ w, 2 * torch.eye(6), atol=1e-5)  # orthonormal columns, gain^2 = 2

    obs = torch.zeros((num_steps, N_ENVS, LENGTH))
    actions = torch.zeros((num_steps, N_ENVS))
    logprobs = torch.zeros((num_steps, N_ENVS))
    rewards = torch.zeros((num_steps, N_ENVS))
    dones = torch.zeros((num_steps, N_ENVS))
    values = torch.zeros((num_steps, N_ENVS))

    next_obs = envs.reset()
    next_done = torch.zeros(N_ENVS)
    episode_rewards, running = [], torch.zeros(N_ENVS)
    for iteration in range(1, num_iterations + 1):
        frac = 1.0 - (iteration - 1.0) / num_iterations
        optimizer.param_groups[0]["lr"] = frac * learning_rate
        for step in range(num_steps):
            obs[step] = next_obs
            dones[step] = next_done
            with torch.no_grad():
                action, logprob, _, value = agent.get_action_and_value(next_obs)
                values[step] = value.flatten()
            actions[step] = action
            logprobs[step] = logprob
            next_obs, reward, done = envs.step(action)
            rewards[step] = reward.view(-1)
            next_done = done.float()
            running += reward
            for i in torch.nonzero(done).flatten().tolist():
                episode_rewards.append(running[i].item())
                running[i] = 0

        with torch.no_grad():
            next_value = agent.get_value(next_obs).reshape(1, -1)
            advantages = torch.zeros_like(rewards)
            lastgaelam = 0
            for t in reversed(range(num_steps)):
                if t == num_steps - 1:
                    nextnonterminal = 1.0 - next_done
                    nextvalues = next_value
                else:
                    nextnonterminal = 1.0 - dones[t + 1]
                    nextvalues = values[t + 1]
                delta = rewards[t] + gamma * nextvalues * nextnonterminal - values[t]
                advantages[t] = lastgaelam = (
                    delta + gamma * gae_lambda * nextnonterminal * lastgaelam
                )
            returns = advantages + values

        b_obs = obs.reshape((-1, LENGTH))
        b_logprobs = logprobs.reshape(-1)
        b_actions = actions.reshape(-1)
        b_advantages = advantages.reshape(-1)
        b_returns = returns.reshape(-1)
        b_values = values.reshape(-1)
        b_inds = np.arange(batch_size)
        clipfracs = []
        for _ in range(update_epochs):
            np.random.shuffle(b_inds)
            for start in range(0, batch_size, minibatch_size):
                mb_inds = b_inds[start : start + minibatch_size]
                _, newlogprob, entropy, newvalue = agent.get_action_and_value(
                    b_obs[mb_inds], b_actions.long()[mb_inds]
                )
                logratio = newlogprob - b_logprobs[mb_inds]
                ratio = logratio.exp()
                with torch.no_grad():
                    approx_kl = ((ratio - 1) - logratio).mean()
                    clipfracs += [((ratio - 1.0).abs() > clip_coef).float().mean().item()]
                mb_advantages = b_advantages[mb_inds]
                mb_advantages = (mb_advantages - mb_advantages.mean()) / (
                    mb_advantages.std() + 1e-8
                )
                pg_loss1 = -mb_advantages * ratio
                pg_loss2 = -mb_advantages * torch.clamp(ratio, 1 - clip_coef, 1 + clip_coef)
                pg_loss = torch.max(pg_loss1, pg_loss2).mean()
                newvalue = newvalue.view(-1)
                v_loss_unclipped = (newvalue - b_returns[mb_inds]) ** 2
                v_clipped = b_values[mb_inds] + torch.clamp(
                    newvalue - b_values[mb_inds], -clip_coef, clip_coef
                )
                v_loss_clipped = (v_clipped - b_returns[mb_inds]) ** 2
                v_loss = 0.5 * torch.max(v_loss_unclipped, v_loss_clipped).mean()
                loss = pg_loss - ent_coef * entropy.mean() + v_loss * vf_coef
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), 0.5)
                optimizer.step()
        if iteration % 5 == 0:
            recent = episode_rewards[-20:]
            print(
                f"iteration {iteration}: mean episodic return {sum(recent) / len(recent):.3f}"
                f" approx_kl {approx_kl.item():.4f} clipfrac {np.mean(clipfracs):.3f}"
                f" lr {optimizer.param_groups[0]['lr']:.2e}"
            )

    best = 1.0 - 0.01 * (LENGTH - 1)  # walk straight right
    recent = episode_rewards[-20:]
    assert sum(recent) / len(recent) > best - 0.1, recent
    with torch.no_grad():
        probs = torch.softmax(agent.actor(torch.eye(LENGTH)[:-1]), dim=-1)
    print("P(right) per cell:", [round(p, 3) for p in probs[:, 1].tolist()])
    assert (probs[:, 1] > 0.8).all()


if __name__ == "__main__":
    main()
