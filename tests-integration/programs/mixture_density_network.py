"""A mixture density network (MDN) for a multi-valued inverse problem.

In the style of MDN tutorials (Bishop's inverse-sine toy problem): x = y + 0.5 sin(2 pi y)
+ noise is easy to fit as y -> x, but its inverse x -> y has up to three branches, so a
network trained with mean squared error predicts their useless average. The MDN's head
outputs mixture logits, means and log standard deviations, turned into
torch.distributions.MixtureSameFamily(Categorical(logits=...), Normal(loc, scale)) whose
negative log_prob is the loss. Checks log_prob against a hand-written logsumexp, the
mixture's mean and variance against the law of total variance, sample() shapes, that
the MDN beats a single Gaussian in likelihood, that its samples fall on all three
branches of the true curve, and that its mean, like the MSE network's answer, is near E[y | x].
"""

import math

import flambeau as torch
import flambeau.nn as nn
import flambeau.nn.functional as F
from flambeau.distributions import Categorical, MixtureSameFamily, Normal

K = 5
AMPLITUDE, NOISE = 0.5, 0.05


def make_data(n, generator):
    y = torch.rand(n, 1, generator=generator)
    x = y + AMPLITUDE * torch.sin(2 * math.pi * y) + NOISE * torch.randn(n, 1, generator=generator)
    return x, y


class MDN(nn.Module):
    def __init__(self, hidden=64, k=K):
        super().__init__()
        self.body = nn.Sequential(
            nn.Linear(1, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh()
        )
        self.pi = nn.Linear(hidden, k)
        self.mu = nn.Linear(hidden, k)
        self.log_sigma = nn.Linear(hidden, k)

    def forward(self, x):
        h = self.body(x)
        scale = torch.exp(self.log_sigma(h).clamp(-7, 3))
        mix = Categorical(logits=self.pi(h))
        return MixtureSameFamily(mix, Normal(self.mu(h), scale))


def fit(name, model, loss_fn, x, y, steps=2000, lr=2e-3):
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    for step in range(steps):
        idx = torch.randint(0, x.size(0), (256,))
        loss = loss_fn(model, x[idx], y[idx])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 500 == 0 or step == steps - 1:
            print(f"{name} step {step}: loss {loss.item():.3f}")
    return loss.item()


def mdn_loss(model, x, y):
    return -model(x).log_prob(y.squeeze(-1)).mean()


class GaussianNet(nn.Module):
    def __init__(self, hidden=64):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(1, hidden), nn.Tanh(), nn.Linear(hidden, 2))

    def forward(self, x):
        loc, log_scale = self.net(x).unbind(-1)
        return Normal(loc, log_scale.exp())


def main():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    x, y = make_data(4000, g)
    x_test, y_test = make_data(1000, g)

    model = MDN()
    # log_prob is log sum_k pi_k N(y; mu_k, sigma_k), and the moments follow the mixture rules.
    with torch.no_grad():
        dist = model(x_test[:7])
        value = y_test[:7, 0]
        log_pi = F.log_softmax(dist.mixture_distribution.logits, dim=-1)
        comp = dist.component_distribution
        manual = torch.logsumexp(
            log_pi
            - 0.5 * ((value.unsqueeze(-1) - comp.loc) / comp.scale) ** 2
            - comp.scale.log()
            - 0.5 * math.log(2 * math.pi),
            dim=-1,
        )
        assert torch.allclose(dist.log_prob(value), manual, atol=1e-5)
        pi = log_pi.exp()
        mean = (pi * comp.loc).sum(-1)
        var = (pi * (comp.scale**2 + comp.loc**2)).sum(-1) - mean**2
        assert torch.allclose(dist.mean, mean, atol=1e-5)
        assert torch.allclose(dist.variance, var, atol=1e-5)
        assert dist.batch_shape == (7,) and dist.event_shape == ()
        assert dist.sample((3,)).shape == (3, 7)

    mdn_final = fit("MDN", model, mdn_loss, x, y)
    mse_net = nn.Sequential(
        nn.Linear(1, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, 1)
    )
    fit("MSE net", mse_net, lambda m, a, b: F.mse_loss(m(a), b), x, y)
    gauss = GaussianNet()
    fit("Gaussian", gauss, lambda m, a, b: -m(a).log_prob(b.squeeze(-1)).mean(), x, y)

    with torch.no_grad():
        nll_mdn = -model(x_test).log_prob(y_test.squeeze(-1)).mean().item()
        nll_gauss = -gauss(x_test).log_prob(y_test.squeeze(-1)).mean().item()
        print(
            f"test NLL: MDN {nll_mdn:.3f}, single Gaussian {nll_gauss:.3f} (train {mdn_final:.3f})"
        )
        assert nll_mdn < nll_gauss - 0.5, (nll_mdn, nll_gauss)

        # At x = 0.35 the inverse has three branches; find them by brute force on the curve.
        grid = torch.linspace(0, 1, 100001)
        curve = grid + AMPLITUDE * torch.sin(2 * math.pi * grid)
        near = (curve - 0.35).abs() < 1e-4
        starts = near & ~torch.cat([torch.tensor([False]), near[:-1]])
        groups = torch.cumsum(starts.long(), 0)[near] - 1
        branches = torch.zeros(3).index_add_(0, groups, grid[near]) / torch.bincount(groups)
        x0 = torch.tensor([[0.35]])
        dist = model(x0)
        samples = dist.sample((4000,)).squeeze(-1)
        to_branch = (samples.unsqueeze(1) - branches.unsqueeze(0)).abs()
        nearest = to_branch.argmin(dim=1)
        close = to_branch.min(dim=1).values < 0.06
        shares = torch.bincount(nearest[close], minlength=3).float() / samples.numel()
        print(
            f"x=0.35: branches {[round(b, 3) for b in branches.tolist()]}, "
            f"share of MDN samples on each {[round(s, 3) for s in shares.tolist()]}"
        )
        assert close.float().mean() > 0.8, close.float().mean()
        assert shares.min() > 0.1, shares
        # The true posterior p(y | x=0.35), up to a constant, on the grid: its mean is the
        # answer of the MSE net, and the MDN's mixture mean should be near it too.
        weight = torch.exp(-((0.35 - curve) ** 2) / (2 * NOISE**2))
        true_mean = ((weight * grid).sum() / weight.sum()).item()
        mse_pred = mse_net(x0).item()
        print(
            f"E[y | x=0.35] = {true_mean:.3f}; MSE net {mse_pred:.3f}, MDN {dist.mean.item():.3f}"
        )
        assert abs(mse_pred - true_mean) < 0.05, (mse_pred, true_mean)
        assert abs(dist.mean.item() - true_mean) < 0.1, (dist.mean, true_mean)


if __name__ == "__main__":
    main()
