"""A VAE written with torch.distributions, and a Gaussian mixture fitted by gradient descent.

In the style of Pyro-less VAE examples: the encoder returns an
Independent(Normal(loc, scale), 1) posterior whose rsample() is the
reparameterized draw, the decoder a Bernoulli(logits=...) likelihood, the ELBO
uses kl_divergence against the standard Normal prior (checked against the
analytic formula); then a MixtureSameFamily of Normals whose unconstrained
parameters are mapped through constraints with transform_to is fitted by
maximizing log_prob, and compared with the generating mixture.
"""

import math

import flambeau as torch
import flambeau.nn.functional as F
from flambeau import distributions as D
from flambeau import nn
from flambeau.distributions import constraints, transform_to

PIXELS = 36
LATENT = 3


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(PIXELS, 64), nn.Softplus())
        self.loc = nn.Linear(64, LATENT)
        self.log_scale = nn.Linear(64, LATENT)

    def forward(self, x):
        h = self.body(x)
        return D.Independent(D.Normal(self.loc(h), self.log_scale(h).exp()), 1)


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(LATENT, 64), nn.Softplus(), nn.Linear(64, PIXELS))

    def forward(self, z):
        return D.Independent(D.Bernoulli(logits=self.net(z)), 1)


def make_patterns(n, generator):
    """Binary 6x6 images: one of four prototypes with 5% of the pixels flipped."""
    protos = torch.zeros(4, 6, 6)
    protos[0, :3] = 1
    protos[1, :, :3] = 1
    protos[2] = torch.eye(6)
    protos[3, 1:5, 1:5] = 1
    idx = torch.randint(0, 4, (n,), generator=generator)
    flips = torch.rand(n, 6, 6, generator=generator) < 0.05
    x = protos[idx].clone()
    x[flips] = 1 - x[flips]
    return x.view(n, PIXELS)


def main():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    data = make_patterns(1024, g)
    test = make_patterns(256, g)
    encoder, decoder = Encoder(), Decoder()
    prior = D.Independent(D.Normal(torch.zeros(LATENT), torch.ones(LATENT)), 1)
    optimizer = torch.optim.Adam(list(encoder.parameters()) + list(decoder.parameters()), lr=3e-3)

    q = encoder(test[:5])
    assert q.batch_shape == (5,) and q.event_shape == (LATENT,)
    z = q.rsample()
    assert z.requires_grad and z.shape == (5, LATENT)
    # KL(N(mu, s^2) || N(0, 1)) = 0.5 * sum(mu^2 + s^2 - 1 - 2 log s)
    mu, s = q.base_dist.loc, q.base_dist.scale
    analytic = 0.5 * (mu**2 + s**2 - 1 - 2 * s.log()).sum(-1)
    assert torch.allclose(D.kl_divergence(q, prior), analytic, atol=1e-5)
    px = decoder(z)
    assert px.log_prob(test[:5]).shape == (5,)
    assert torch.allclose(
        px.log_prob(test[:5]),
        -F.binary_cross_entropy_with_logits(px.base_dist.logits, test[:5], reduction="none").sum(
            -1
        ),
        atol=1e-4,
    )

    def elbo(x):
        q = encoder(x)
        z = q.rsample()
        return (decoder(z).log_prob(x) - D.kl_divergence(q, prior)).mean()

    with torch.no_grad():
        start = elbo(test).item()
    print(f"initial test ELBO {start:.2f}")
    for epoch in range(10):
        perm = torch.randperm(len(data))
        for i in range(0, len(data), 64):
            loss = -elbo(data[perm[i : i + 64]])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        with torch.no_grad():
            value = elbo(test).item()
        if epoch % 3 == 0 or epoch == 9:
            print(f"epoch {epoch}: test ELBO {value:.2f}")
    assert value > start + 10, (start, value)
    # Perfectly reconstructing noiseless prototypes would cost ~36 * H(0.05) nats of noise.
    assert value > -25, value

    # Gaussian mixture: three components, fitted by gradient ascent on the log-likelihood.
    true_mix = D.MixtureSameFamily(
        D.Categorical(probs=torch.tensor([0.5, 0.3, 0.2])),
        D.Normal(torch.tensor([-3.0, 0.0, 4.0]), torch.tensor([0.5, 1.0, 0.7])),
    )
    samples = true_mix.sample((4000,))
    assert samples.shape == (4000,)
    logits = torch.zeros(3, requires_grad=True)
    locs = torch.tensor([-2.0, 0.5, 2.5], requires_grad=True)
    raw_scales = torch.zeros(3, requires_grad=True)
    to_positive = transform_to(constraints.positive)
    opt = torch.optim.Adam([logits, locs, raw_scales], lr=0.05)
    for _ in range(300):
        mix = D.MixtureSameFamily(
            D.Categorical(logits=logits), D.Normal(locs, to_positive(raw_scales))
        )
        nll = -mix.log_prob(samples).mean()
        opt.zero_grad()
        nll.backward()
        opt.step()
    order = locs.detach().argsort()
    print(
        "fitted locs",
        locs.detach()[order].tolist(),
        "scales",
        to_positive(raw_scales).detach()[order].tolist(),
    )
    assert torch.allclose(locs.detach()[order], torch.tensor([-3.0, 0.0, 4.0]), atol=0.3)
    weights = F.softmax(logits.detach(), 0)[order]
    assert torch.allclose(weights, torch.tensor([0.5, 0.3, 0.2]), atol=0.08), weights
    true_nll = -true_mix.log_prob(samples).mean().item()
    assert abs(nll.item() - true_nll) < 0.05, (nll.item(), true_nll)
    # The mixture density integrates to one.
    grid = torch.linspace(-10, 10, 4001)
    density = true_mix.log_prob(grid).exp()
    assert abs(torch.trapezoid(density, grid).item() - 1.0) < 1e-3
    assert (
        abs(
            D.Normal(0.0, 1.0).cdf(torch.tensor(1.0)).item()
            - 0.5 * (1 + math.erf(1 / math.sqrt(2)))
        )
        < 1e-6
    )


if __name__ == "__main__":
    main()
