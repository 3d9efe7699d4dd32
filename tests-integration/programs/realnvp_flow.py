"""A RealNVP normalizing flow fitted to a 2-D two-moons density.

In the style of the RealNVP examples: affine coupling layers whose binary masks are
registered buffers, scale networks ending in Tanh, a log-determinant summed over
the layers, a torch.distributions.MultivariateNormal base distribution whose
log_prob scores the latents, inverse passes for sampling, Adam with
weight_decay, and an invertibility check (f^-1(f(x)) == x).
"""

import math

import flambeau as torch
from flambeau import distributions, nn


def two_moons(n, generator=None, noise=0.05):
    n1 = n // 2
    n2 = n - n1
    t1 = torch.rand(n1, generator=generator) * math.pi
    t2 = torch.rand(n2, generator=generator) * math.pi
    upper = torch.stack([torch.cos(t1), torch.sin(t1)], dim=1)
    lower = torch.stack([1 - torch.cos(t2), 0.5 - torch.sin(t2)], dim=1)
    x = torch.cat([upper, lower]) + noise * torch.randn(n, 2, generator=generator)
    return (x - torch.tensor([0.5, 0.25])) * 2


class RealNVP(nn.Module):
    def __init__(self, nets, nett, masks, prior):
        super().__init__()
        self.prior = prior
        self.register_buffer("mask", masks)
        self.t = nn.ModuleList([nett() for _ in range(len(masks))])
        self.s = nn.ModuleList([nets() for _ in range(len(masks))])

    def g(self, z):
        x = z
        for i in range(len(self.t)):
            x_ = x * self.mask[i]
            s = self.s[i](x_) * (1 - self.mask[i])
            t = self.t[i](x_) * (1 - self.mask[i])
            x = x_ + (1 - self.mask[i]) * (x * torch.exp(s) + t)
        return x

    def f(self, x):
        log_det_J, z = x.new_zeros(x.shape[0]), x
        for i in reversed(range(len(self.t))):
            z_ = self.mask[i] * z
            s = self.s[i](z_) * (1 - self.mask[i])
            t = self.t[i](z_) * (1 - self.mask[i])
            z = (1 - self.mask[i]) * (z - t) * torch.exp(-s) + z_
            log_det_J -= s.sum(dim=1)
        return z, log_det_J

    def log_prob(self, x):
        z, logp = self.f(x)
        return self.prior.log_prob(z) + logp

    def sample(self, batch_size):
        z = self.prior.sample((batch_size,))
        return self.g(z)


def main():
    torch.manual_seed(0)
    nets = lambda: nn.Sequential(  # noqa: E731
        nn.Linear(2, 32),
        nn.LeakyReLU(),
        nn.Linear(32, 32),
        nn.LeakyReLU(),
        nn.Linear(32, 2),
        nn.Tanh(),
    )
    nett = lambda: nn.Sequential(  # noqa: E731
        nn.Linear(2, 32), nn.LeakyReLU(), nn.Linear(32, 32), nn.LeakyReLU(), nn.Linear(32, 2)
    )
    masks = torch.from_numpy(__import__("numpy").array([[0, 1], [1, 0]] * 2).astype("float32"))
    prior = distributions.MultivariateNormal(torch.zeros(2), torch.eye(2))
    flow = RealNVP(nets, nett, masks, prior)
    assert flow.mask.shape == (4, 2) and "mask" in flow.state_dict()

    # The base density is the standard normal's.
    z = torch.tensor([[0.0, 0.0], [1.0, -1.0]])
    expected = torch.tensor([-math.log(2 * math.pi), -math.log(2 * math.pi) - 1.0])
    assert torch.allclose(prior.log_prob(z), expected, atol=1e-6)

    optimizer = torch.optim.Adam(
        [p for p in flow.parameters() if p.requires_grad], lr=3e-3, weight_decay=1e-5
    )
    test = two_moons(1000, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        nll0 = -flow.log_prob(test).mean().item()
    print(f"initial test NLL {nll0:.3f}")
    for t in range(400):
        batch = two_moons(256)
        loss = -flow.log_prob(batch).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if t % 100 == 0:
            print(f"iter {t}: loss = {loss.item():.3f}")
    with torch.no_grad():
        nll = -flow.log_prob(test).mean().item()
    print(f"final test NLL {nll:.3f}")
    assert nll < nll0 - 1.0, (nll0, nll)

    # f and g are inverses, and the log-determinant matches autograd's Jacobian.
    with torch.no_grad():
        z, _ = flow.f(test[:100])
        assert torch.allclose(flow.g(z), test[:100], atol=1e-4)
    x = test[:1].clone()
    jac = torch.autograd.functional.jacobian(lambda v: flow.f(v)[0], x).reshape(2, 2)
    _, logdet = flow.f(x)
    assert abs(torch.logdet(jac).item() - logdet.item()) < 1e-3, (torch.logdet(jac), logdet)

    # Samples land near the moons: their own log-density is higher than noise's.
    with torch.no_grad():
        samples = flow.sample(500)
        assert samples.shape == (500, 2)
        uniform = torch.rand(500, 2) * 6 - 3
        assert flow.log_prob(samples).mean() > flow.log_prob(uniform).mean() + 1.0


if __name__ == "__main__":
    main()
