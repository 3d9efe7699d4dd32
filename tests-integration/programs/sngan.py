"""A GAN with a spectrally normalized critic and a weight-normalized generator.

In the style of SN-GAN code: torch.nn.utils.parametrizations.spectral_norm on
every critic layer, torch.nn.utils.parametrizations.weight_norm on the generator's
layers, the hinge loss, Adam(betas=(0.0, 0.9)), two critic steps per generator
step, detach() on fakes for the critic update, and state_dicts holding the
parametrizations' original0/original1 tensors that load back into fresh models.
The data is a ring of 8 Gaussians in 2-D.
"""

import math

import flambeau as torch
import flambeau.nn.functional as F
from flambeau import nn
from flambeau.nn.utils import parametrize
from flambeau.nn.utils.parametrizations import spectral_norm, weight_norm

LATENT = 8


def ring(n, generator=None):
    angles = torch.randint(0, 8, (n,), generator=generator).float() * (2 * math.pi / 8)
    centers = torch.stack([torch.cos(angles), torch.sin(angles)], dim=1) * 2
    return centers + 0.05 * torch.randn(n, 2, generator=generator)


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            weight_norm(nn.Linear(LATENT, 64)),
            nn.ReLU(),
            weight_norm(nn.Linear(64, 64)),
            nn.ReLU(),
            nn.Linear(64, 2),
        )

    def forward(self, z):
        return self.net(z)


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            spectral_norm(nn.Linear(2, 64)),
            nn.LeakyReLU(0.2),
            spectral_norm(nn.Linear(64, 64)),
            nn.LeakyReLU(0.2),
            spectral_norm(nn.Linear(64, 1)),
        )

    def forward(self, x):
        return self.net(x).view(-1)


def main():
    torch.manual_seed(0)
    G, D = Generator(), Critic()
    lin = D.net[0]
    assert parametrize.is_parametrized(lin, "weight")
    assert isinstance(lin.parametrizations.weight.original, nn.Parameter)
    assert sorted(k for k in D.state_dict() if k.startswith("net.0.")) == [
        "net.0.bias",
        "net.0.parametrizations.weight.0._u",
        "net.0.parametrizations.weight.0._v",
        "net.0.parametrizations.weight.original",
    ]
    assert "net.0.parametrizations.weight.original0" in G.state_dict()  # g
    assert "net.0.parametrizations.weight.original1" in G.state_dict()  # v
    g = G.net[0].parametrizations.weight.original0
    assert g.shape == (64, 1)

    opt_g = torch.optim.Adam(G.parameters(), lr=1e-3, betas=(0.0, 0.9))
    opt_d = torch.optim.Adam(D.parameters(), lr=1e-3, betas=(0.0, 0.9))

    def mean_distance_to_ring(points):
        return (points.norm(dim=1) - 2).abs().mean().item()

    fixed_z = torch.randn(1000, LATENT)
    with torch.no_grad():
        before = mean_distance_to_ring(G(fixed_z))
    print(f"initial mean distance of samples to the ring {before:.3f}")
    for step in range(400):
        for _ in range(2):
            real = ring(128)
            fake = G(torch.randn(128, LATENT)).detach()
            loss_d = F.relu(1.0 - D(real)).mean() + F.relu(1.0 + D(fake)).mean()
            opt_d.zero_grad()
            loss_d.backward()
            opt_d.step()
        loss_g = -D(G(torch.randn(128, LATENT))).mean()
        opt_g.zero_grad()
        loss_g.backward()
        opt_g.step()
        if step % 100 == 0:
            print(f"step {step}: loss_d {loss_d.item():.3f} loss_g {loss_g.item():.3f}")
    with torch.no_grad():
        samples = G(fixed_z)
        after = mean_distance_to_ring(samples)
    print(f"final mean distance of samples to the ring {after:.3f}")
    assert after < 0.5 * before and after < 0.4, (before, after)

    # In training mode each forward runs one power iteration; the normalized weight's
    # largest singular value is then (close to) one.
    D.train()
    for _ in range(20):
        D(ring(4))
    for layer in (D.net[0], D.net[2], D.net[4]):
        sigma = torch.linalg.matrix_norm(layer.weight.detach(), ord=2).item()
        assert abs(sigma - 1.0) < 0.05, sigma

    # weight_norm: weight = g * v / ||v|| row-wise.
    layer = G.net[2]
    g0 = layer.parametrizations.weight.original0
    v = layer.parametrizations.weight.original1
    assert torch.allclose(layer.weight, g0 * v / v.norm(dim=1, keepdim=True), atol=1e-6)

    # The state dicts load into fresh models and reproduce them.
    D.eval()
    G2, D2 = Generator(), Critic()
    G2.load_state_dict(G.state_dict())
    D2.load_state_dict(D.state_dict())
    D2.eval()
    x = ring(16)
    with torch.no_grad():
        assert torch.allclose(G2(fixed_z[:16]), G(fixed_z[:16]))
        assert torch.allclose(D2(x), D(x), atol=1e-6)

    # remove_parametrizations bakes the current weight in.
    w = layer.weight.detach().clone()
    parametrize.remove_parametrizations(layer, "weight")
    assert not parametrize.is_parametrized(layer)
    assert isinstance(layer.weight, nn.Parameter) and torch.equal(layer.weight, w)


if __name__ == "__main__":
    main()
