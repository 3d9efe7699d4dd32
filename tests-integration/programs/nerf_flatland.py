"""A NeRF in flatland: a 2-D radiance field learned from 1-D images by volume rendering.

In the style of minimal NeRF implementations: rays from cameras placed on a circle,
stratified samples along each ray (torch.linspace plus uniform jitter), a sinusoidal
positional encoding of the sample points, an MLP giving density (softplus) and colour
(sigmoid), alpha compositing with an exclusive torch.cumprod of the transmittance, and
hierarchical sampling: inverse-transform sampling from the coarse weights with
torch.searchsorted, merged with the coarse samples by torch.sort. The scene is two
coloured discs; the ground-truth images are rendered from the true field with the same
renderer. Checks the importance sampler against the weights it samples from, the PSNR
on held-out views, and that rays which miss both discs stay transparent.
"""

import math

import flambeau as torch
import flambeau.nn as nn
import flambeau.nn.functional as F

NEAR, FAR = 0.5, 2.5
N_COARSE, N_FINE = 32, 32
FOV = math.radians(50)
DISCS = [((0.3, 0.0), 0.25, (1.0, 0.2, 0.2)), ((-0.3, 0.25), 0.2, (0.2, 0.4, 1.0))]


def true_field(points):
    sigma = torch.zeros(points.shape[:-1])
    rgb = torch.zeros(points.shape[:-1] + (3,))
    for center, radius, color in DISCS:
        inside = (points - torch.tensor(center)).norm(dim=-1) < radius
        sigma = torch.where(inside, torch.full_like(sigma, 25.0), sigma)
        rgb = torch.where(inside.unsqueeze(-1), torch.tensor(color).expand_as(rgb), rgb)
    return sigma, rgb


def camera_rays(angle, pixels=32, fov=FOV):
    origin = 1.5 * torch.tensor([math.cos(angle), math.sin(angle)])
    offsets = torch.linspace(-fov / 2, fov / 2, pixels)
    view = angle + math.pi + offsets
    directions = torch.stack([torch.cos(view), torch.sin(view)], dim=-1)
    return origin.expand(pixels, 2), directions


def positional_encoding(x, n_freqs=6):
    freqs = 2.0 ** torch.arange(n_freqs) * math.pi
    scaled = x.unsqueeze(-1) * freqs  # (..., 2, F)
    enc = torch.cat([torch.sin(scaled), torch.cos(scaled)], dim=-1).flatten(-2)
    return torch.cat([x, enc], dim=-1)


class RadianceField(nn.Module):
    def __init__(self, hidden=64, n_freqs=6):
        super().__init__()
        self.n_freqs = n_freqs
        self.mlp = nn.Sequential(
            nn.Linear(2 + 4 * n_freqs, hidden),
            nn.ReLU(),
            nn.Linear(hidden, hidden),
            nn.ReLU(),
            nn.Linear(hidden, hidden),
            nn.ReLU(),
            nn.Linear(hidden, 4),
        )

    def forward(self, points):
        out = self.mlp(positional_encoding(points, self.n_freqs))
        return F.softplus(out[..., 0] - 1.0), torch.sigmoid(out[..., 1:])


def render(field, origins, directions, t):
    points = origins.unsqueeze(1) + t.unsqueeze(-1) * directions.unsqueeze(1)  # (R, S, 2)
    sigma, rgb = field(points)
    deltas = torch.cat([t[:, 1:] - t[:, :-1], torch.full_like(t[:, :1], 1e10)], dim=-1)
    alpha = 1.0 - torch.exp(-sigma * deltas)
    transmittance = torch.cumprod(1.0 - alpha + 1e-10, dim=-1)
    transmittance = torch.cat([torch.ones_like(transmittance[:, :1]), transmittance[:, :-1]], -1)
    weights = alpha * transmittance
    return (weights.unsqueeze(-1) * rgb).sum(dim=1), weights


def stratified(n_rays, n_samples, jitter=True):
    edges = torch.linspace(NEAR, FAR, n_samples + 1)
    lower, width = edges[:-1], edges[1:] - edges[:-1]
    u = torch.rand(n_rays, n_samples) if jitter else torch.full((n_rays, n_samples), 0.5)
    return lower + u * width


def sample_pdf(bins, weights, n_samples):
    """Inverse-transform sampling of a piecewise-constant density over `bins`."""
    pdf = (weights + 1e-5) / (weights + 1e-5).sum(dim=-1, keepdim=True)
    cdf = torch.cumsum(pdf, dim=-1)
    cdf = torch.cat([torch.zeros_like(cdf[:, :1]), cdf], dim=-1)  # (R, B + 1)
    u = torch.rand(cdf.shape[0], n_samples).contiguous()
    idx = torch.searchsorted(cdf, u, right=True)
    below = (idx - 1).clamp(min=0)
    above = idx.clamp(max=cdf.shape[-1] - 1)
    cdf_lo, cdf_hi = cdf.gather(1, below), cdf.gather(1, above)
    bin_lo, bin_hi = bins.gather(1, below), bins.gather(1, above)
    denom = torch.where(cdf_hi - cdf_lo < 1e-5, torch.ones_like(cdf_hi), cdf_hi - cdf_lo)
    return bin_lo + (u - cdf_lo) / denom * (bin_hi - bin_lo)


def render_hierarchical(field, origins, directions, jitter=True):
    t_coarse = stratified(origins.shape[0], N_COARSE, jitter)
    rgb_coarse, weights = render(field, origins, directions, t_coarse)
    edges = torch.linspace(NEAR, FAR, N_COARSE + 1).expand(origins.shape[0], -1).contiguous()
    t_fine = sample_pdf(edges, weights.detach(), N_FINE)
    t_all, _ = torch.sort(torch.cat([t_coarse, t_fine], dim=-1), dim=-1)
    rgb_fine, weights_fine = render(field, origins, directions, t_all)
    return rgb_coarse, rgb_fine, weights_fine


def psnr(a, b):
    return -10 * math.log10(F.mse_loss(a, b).item())


def main():
    torch.manual_seed(0)
    train_angles = [2 * math.pi * k / 16 for k in range(16)]
    test_angles = [2 * math.pi * (k + 0.5) / 16 for k in range(0, 16, 4)]

    def dataset(angles):
        origins, directions = zip(*[camera_rays(a) for a in angles])
        origins, directions = torch.cat(origins), torch.cat(directions)
        with torch.no_grad():
            t = stratified(origins.shape[0], 512, jitter=False)
            target, _ = render(true_field, origins, directions, t)
        return origins, directions, target

    train_o, train_d, train_rgb = dataset(train_angles)
    test_o, test_d, test_rgb = dataset(test_angles)

    # The importance sampler follows the weights: a bin with 70% of the weight gets ~70%.
    edges = torch.linspace(0.0, 1.0, 5).expand(1, -1).contiguous()
    samples = sample_pdf(edges, torch.tensor([[0.1, 0.7, 0.1, 0.1]]), 20000)
    share = ((samples >= 0.25) & (samples < 0.5)).float().mean().item()
    assert abs(share - 0.7) < 0.02, share
    assert samples.min() >= 0.0 and samples.max() <= 1.0

    field = RadianceField()
    optimizer = torch.optim.Adam(field.parameters(), lr=1e-2)
    scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.995)
    with torch.no_grad():
        _, before, _ = render_hierarchical(field, test_o, test_d, jitter=False)
    for step in range(400):
        idx = torch.randint(0, train_o.shape[0], (128,))
        rgb_coarse, rgb_fine, _ = render_hierarchical(field, train_o[idx], train_d[idx])
        loss = F.mse_loss(rgb_coarse, train_rgb[idx]) + F.mse_loss(rgb_fine, train_rgb[idx])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()
        if step % 100 == 0:
            print(f"step {step}: loss {loss.item():.4f}")

    with torch.no_grad():
        _, after, weights = render_hierarchical(field, test_o, test_d, jitter=False)
    print(f"test PSNR {psnr(before, test_rgb):.1f} dB -> {psnr(after, test_rgb):.1f} dB")
    assert psnr(after, test_rgb) > 22, psnr(after, test_rgb)
    assert psnr(after, test_rgb) > psnr(before, test_rgb) + 10
    opacity = weights.sum(-1)
    assert opacity.max() <= 1.0 + 1e-4
    # Rays that miss both discs render (near) black on average, the background.
    miss = test_rgb.sum(-1) < 1e-3
    assert miss.any() and (~miss).any()
    assert after[miss].abs().mean() < 0.05, after[miss].abs().mean()


if __name__ == "__main__":
    main()
