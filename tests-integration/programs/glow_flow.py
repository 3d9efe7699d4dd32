"""A Glow-style normalizing flow on small images: ActNorm, invertible 1x1 convolution, coupling.

In the style of Glow reimplementations: images squeezed with F.pixel_unshuffle, steps of
ActNorm (data-dependent initialization on the first batch), an invertible 1x1
convolution in its LU-decomposed form (torch.linalg.qr for a random rotation,
torch.linalg.lu for P, L, U; log|det| as the sum of log|diag(U)|, times height * width)
and an affine coupling whose scale is a shifted sigmoid and whose last convolution
starts at zero; the loss is bits per dimension. The images are 8x8 combinations of four
smooth patterns plus a little noise. Checks the 1x1 convolution's log-determinant
against torch.linalg.slogdet, the whole flow's against the log-determinant of its
autograd Jacobian, invertibility, the learning (against a per-pixel Gaussian), and that
samples lie near the patterns' span.
"""

import copy
import math

import flambeau as torch
import flambeau.nn as nn
import flambeau.nn.functional as F

SIZE = 8


class ActNorm(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.loc = nn.Parameter(torch.zeros(1, channels, 1, 1))
        self.log_scale = nn.Parameter(torch.zeros(1, channels, 1, 1))
        self.register_buffer("initialized", torch.tensor(0, dtype=torch.uint8))

    def forward(self, x):
        if self.initialized.item() == 0:
            with torch.no_grad():
                mean = x.mean(dim=(0, 2, 3), keepdim=True)
                std = x.std(dim=(0, 2, 3), keepdim=True)
                self.loc.data.copy_(-mean)
                self.log_scale.data.copy_(torch.log(1 / (std + 1e-6)))
                self.initialized.fill_(1)
        y = (x + self.loc) * torch.exp(self.log_scale)
        return y, x.shape[2] * x.shape[3] * self.log_scale.sum()

    def reverse(self, y):
        return y * torch.exp(-self.log_scale) - self.loc


class InvConv2dLU(nn.Module):
    def __init__(self, channels):
        super().__init__()
        q, _ = torch.linalg.qr(torch.randn(channels, channels))
        P, L, U = torch.linalg.lu(q)
        s = torch.diagonal(U)
        self.register_buffer("P", P)
        self.register_buffer("sign_s", torch.sign(s))
        self.register_buffer("lower_mask", torch.tril(torch.ones(channels, channels), -1))
        self.register_buffer("eye", torch.eye(channels))
        self.L = nn.Parameter(L)
        self.U = nn.Parameter(torch.triu(U, 1))
        self.log_s = nn.Parameter(torch.log(torch.abs(s)))

    def weight(self):
        L = self.L * self.lower_mask + self.eye
        U = self.U * self.lower_mask.T + torch.diag(self.sign_s * torch.exp(self.log_s))
        return self.P @ L @ U

    def forward(self, x):
        w = self.weight()
        return F.conv2d(x, w[:, :, None, None]), x.shape[2] * x.shape[3] * self.log_s.sum()

    def reverse(self, y):
        return F.conv2d(y, torch.linalg.inv(self.weight())[:, :, None, None])


class ZeroConv2d(nn.Conv2d):
    def __init__(self, cin, cout):
        super().__init__(cin, cout, 3, padding=1)
        nn.init.zeros_(self.weight)
        nn.init.zeros_(self.bias)


class AffineCoupling(nn.Module):
    def __init__(self, channels, hidden=32):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(channels // 2, hidden, 3, padding=1),
            nn.ReLU(),
            nn.Conv2d(hidden, hidden, 1),
            nn.ReLU(),
            ZeroConv2d(hidden, channels),
        )

    def forward(self, x):
        xa, xb = x.chunk(2, dim=1)
        log_s, t = self.net(xa).chunk(2, dim=1)
        s = torch.sigmoid(log_s + 2)
        yb = (xb + t) * s
        return torch.cat([xa, yb], dim=1), torch.log(s).flatten(1).sum(1)

    def reverse(self, y):
        ya, yb = y.chunk(2, dim=1)
        log_s, t = self.net(ya).chunk(2, dim=1)
        return torch.cat([ya, yb / torch.sigmoid(log_s + 2) - t], dim=1)


class Glow(nn.Module):
    def __init__(self, channels=4, steps=4):
        super().__init__()
        self.layers = nn.ModuleList()
        for _ in range(steps):
            self.layers.extend([ActNorm(channels), InvConv2dLU(channels), AffineCoupling(channels)])

    def forward(self, x):
        z = F.pixel_unshuffle(x, 2)
        logdet = torch.zeros(x.shape[0])
        for layer in self.layers:
            z, ld = layer(z)
            logdet = logdet + ld
        return z, logdet

    def reverse(self, z):
        for layer in reversed(self.layers):
            z = layer.reverse(z)
        return F.pixel_shuffle(z, 2)

    def log_prob(self, x):
        z, logdet = self(x)
        log_pz = (-0.5 * z**2 - 0.5 * math.log(2 * math.pi)).flatten(1).sum(1)
        return log_pz + logdet


def make_basis():
    r = torch.linspace(-1, 1, SIZE)
    rows, cols = torch.meshgrid(r, r, indexing="ij")
    basis = torch.stack([rows, cols, rows * cols, torch.exp(-3 * (rows**2 + cols**2))])
    return basis / basis.flatten(1).norm(dim=1).view(4, 1, 1)


def make_images(n, basis, generator):
    coeffs = torch.randn(n, 4, generator=generator) * torch.tensor([3.0, 3.0, 2.0, 2.0])
    images = torch.einsum("nk,khw->nhw", coeffs, basis)
    return (images + 0.05 * torch.randn(images.shape, generator=generator)).unsqueeze(1)


def bits_per_dim(log_prob):
    return (-log_prob.mean() / (SIZE * SIZE * math.log(2))).item()


def main():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    basis = make_basis()
    train = make_images(4096, basis, g)
    test = make_images(512, basis, g)

    inv = InvConv2dLU(4)
    with torch.no_grad():
        sign, logabsdet = torch.linalg.slogdet(inv.weight())
        assert abs(logabsdet.item() - inv.log_s.sum().item()) < 1e-5
        assert torch.allclose(inv.weight() @ inv.weight().T, torch.eye(4), atol=1e-5)

    flow = Glow()
    with torch.no_grad():
        z, _ = flow(train[:512])  # data-dependent ActNorm initialization
        first = flow.layers[0]
        h = first(F.pixel_unshuffle(train[:512], 2))[0]
        assert torch.allclose(h.mean(dim=(0, 2, 3)), torch.zeros(4), atol=1e-4)
        assert torch.allclose(h.std(dim=(0, 2, 3)), torch.ones(4), atol=1e-3)
        bpd0 = bits_per_dim(flow.log_prob(test))
    untrained = copy.deepcopy(flow)

    # Per-pixel Gaussian baseline: independent pixels, fitted mean and variance.
    mean, std = train.mean(0), train.std(0)
    baseline = torch.distributions.Normal(mean, std).log_prob(test).flatten(1).sum(1)
    bpd_baseline = bits_per_dim(baseline)

    optimizer = torch.optim.Adam(flow.parameters(), lr=2e-3)
    for step in range(300):
        idx = torch.randint(0, train.size(0), (64,))
        loss = -flow.log_prob(train[idx]).mean() / (SIZE * SIZE * math.log(2))
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(flow.parameters(), 50.0)
        optimizer.step()
        if step % 100 == 0:
            print(f"step {step}: {loss.item():.3f} bits/dim")
    with torch.no_grad():
        bpd = bits_per_dim(flow.log_prob(test))
    print(
        f"test bits/dim: initial {bpd0:.3f}, trained {bpd:.3f}, "
        f"per-pixel Gaussian {bpd_baseline:.3f}"
    )
    assert bpd < bpd0 - 1.0, (bpd0, bpd)
    assert bpd < bpd_baseline - 1.0, (bpd_baseline, bpd)

    with torch.no_grad():
        z, _ = flow(test[:16])
        assert torch.allclose(flow.reverse(z), test[:16], atol=1e-3)

    # The log-determinant the flow reports is log|det| of its Jacobian.
    x = test[:1]

    def f(flat):
        return flow(flat.view(1, 1, SIZE, SIZE))[0].flatten()

    jac = torch.autograd.functional.jacobian(f, x.flatten())
    _, logabsdet = torch.linalg.slogdet(jac)
    with torch.no_grad():
        _, logdet = flow(x)
    assert abs(logabsdet.item() - logdet.item()) < 1e-2 * max(1.0, abs(logdet.item())), (
        logabsdet,
        logdet,
    )

    # Samples at temperature 0.7 lie much closer to the span of the four patterns than
    # the untrained flow's samples or noise do.
    B = basis.flatten(1).T  # (64, 4)

    def off_span(images):
        images = images.flatten(1)
        coeffs = torch.linalg.lstsq(B, images.T).solution
        return ((images.T - B @ coeffs).norm() / images.norm()).item()

    with torch.no_grad():
        samples = flow.reverse(0.7 * torch.randn(64, 4, SIZE // 2, SIZE // 2))
        untrained_samples = untrained.reverse(0.7 * torch.randn(64, 4, SIZE // 2, SIZE // 2))
    residual, residual0 = off_span(samples), off_span(untrained_samples)
    noise_residual = off_span(torch.randn(64, SIZE * SIZE))
    print(
        f"relative norm off the patterns' span: samples {residual:.3f}, untrained flow's "
        f"{residual0:.3f}, noise {noise_residual:.3f}, data {off_span(test):.3f}"
    )
    assert residual < residual0 - 0.2, (residual0, residual)
    assert noise_residual > 0.9


if __name__ == "__main__":
    main()
