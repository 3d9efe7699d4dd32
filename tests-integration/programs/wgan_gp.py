"""A Wasserstein GAN with gradient penalty (WGAN-GP) on 8x8 synthetic images.

In the style of the WGAN-GP reference code: a convolutional critic with
LayerNorm-free LeakyReLU blocks, interpolates between real and fake samples,
torch.autograd.grad(..., create_graph=True, retain_graph=True,
grad_outputs=torch.ones_like(...)) for the critic's input gradient, the penalty
((||grad||_2 - 1)^2) backpropagated (a double backward through conv2d and
leaky_relu), n_critic updates per generator update, Adam(betas=(0.5, 0.9)),
and ConvTranspose2d in the generator.
"""

import flambeau as torch
from flambeau import autograd, nn

LATENT = 16


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(LATENT, 32 * 2 * 2)
        self.net = nn.Sequential(
            nn.BatchNorm2d(32),
            nn.ReLU(True),
            nn.ConvTranspose2d(32, 16, 4, stride=2, padding=1),
            nn.BatchNorm2d(16),
            nn.ReLU(True),
            nn.ConvTranspose2d(16, 1, 4, stride=2, padding=1),
            nn.Tanh(),
        )

    def forward(self, z):
        return self.net(self.fc(z).view(-1, 32, 2, 2))


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(1, 16, 3, stride=2, padding=1),
            nn.LeakyReLU(0.2),
            nn.Conv2d(16, 32, 3, stride=2, padding=1),
            nn.LeakyReLU(0.2),
            nn.Flatten(),
            nn.Linear(32 * 2 * 2, 1),
        )

    def forward(self, x):
        return self.net(x)


def real_images(n, generator=None):
    """A bright vertical bar at a random column, in [-1, 1]."""
    x = -torch.ones(n, 1, 8, 8)
    cols = torch.randint(1, 7, (n,), generator=generator)
    x[torch.arange(n), 0, :, cols] = 1.0
    return x


def compute_gradient_penalty(D, real_samples, fake_samples):
    alpha = torch.rand(real_samples.size(0), 1, 1, 1)
    interpolates = (alpha * real_samples + ((1 - alpha) * fake_samples)).requires_grad_(True)
    d_interpolates = D(interpolates)
    gradients = autograd.grad(
        outputs=d_interpolates,
        inputs=interpolates,
        grad_outputs=torch.ones_like(d_interpolates),
        create_graph=True,
        retain_graph=True,
        only_inputs=True,
    )[0]
    gradients = gradients.view(gradients.size(0), -1)
    return ((gradients.norm(2, dim=1) - 1) ** 2).mean()


def bar_score(images):
    """How bar-like images are: the fraction of bright pixels in the brightest column, less
    the fraction of bright pixels overall (0.875 for a real image, 0 for a blank or full one)."""
    bright = (images > 0).float()
    column = bright.mean(dim=2).max(dim=-1).values.squeeze(1)
    return (column - bright.mean(dim=(1, 2, 3))).mean().item()


def main():
    torch.manual_seed(0)
    G, D = Generator(), Critic()
    opt_g = torch.optim.Adam(G.parameters(), lr=2e-3, betas=(0.5, 0.9))
    opt_d = torch.optim.Adam(D.parameters(), lr=2e-3, betas=(0.5, 0.9))
    lambda_gp, n_critic = 10.0, 3

    # The penalty's gradient reaches the critic's weights (double backward).
    x = real_images(4)
    gp = compute_gradient_penalty(D, x, G(torch.randn(4, LATENT)).detach())
    gp.backward()
    for name, p in D.named_parameters():
        if name.endswith("weight"):
            assert p.grad is not None and p.grad.abs().sum() > 0, name
    # The input gradient does not depend on the last bias: its penalty gradient is zero.
    assert D.net[5].bias.grad is None or D.net[5].bias.grad.abs().sum() == 0
    D.zero_grad()

    # For a linear critic D(x) = w.x + b the input gradient is w everywhere.
    lin = nn.Sequential(nn.Flatten(), nn.Linear(64, 1))
    w = lin[1].weight.detach()
    gp_lin = compute_gradient_penalty(lin, x, -x)
    assert abs(gp_lin.item() - (w.norm() - 1).pow(2).item()) < 1e-5

    fixed_z = torch.randn(256, LATENT)
    G.eval()
    with torch.no_grad():
        score0 = bar_score(G(fixed_z))
    G.train()
    for it in range(120):
        for _ in range(n_critic):
            real = real_images(64)
            z = torch.randn(64, LATENT)
            fake = G(z).detach()
            gp = compute_gradient_penalty(D, real, fake)
            d_loss = -torch.mean(D(real)) + torch.mean(D(fake)) + lambda_gp * gp
            opt_d.zero_grad()
            d_loss.backward()
            opt_d.step()
        g_loss = -torch.mean(D(G(torch.randn(64, LATENT))))
        opt_g.zero_grad()
        g_loss.backward()
        opt_g.step()
        if it % 40 == 0:
            print(
                f"iter {it}: d_loss {d_loss.item():.3f} g_loss {g_loss.item():.3f}"
                f" gp {gp.item():.3f}"
            )
    G.eval()
    with torch.no_grad():
        samples = G(fixed_z)
    score = bar_score(samples)
    print(f"bar score {score0:.3f} -> {score:.3f} (real images: {bar_score(real_images(256)):.3f})")
    assert samples.shape == (256, 1, 8, 8)
    assert score > score0 + 0.2 and score > 0.6, (score0, score)


if __name__ == "__main__":
    main()
