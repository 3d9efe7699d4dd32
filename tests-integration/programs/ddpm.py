"""A denoising diffusion probabilistic model (DDPM) on a 2-D mixture of Gaussians.

In the style of minimal DDPM implementations: a linear beta schedule with
torch.linspace, alphas_cumprod via torch.cumprod, registered buffers, per-sample
coefficients gathered at random timesteps and reshaped for broadcasting,
sinusoidal timestep embeddings, an MLP noise predictor trained with mse_loss,
an exponential moving average of the weights kept by
torch.optim.swa_utils.AveragedModel(multi_avg_fn=get_ema_multi_avg_fn(...)),
and ancestral sampling under torch.inference_mode.
"""

import math

import flambeau as torch
import flambeau.nn.functional as F
from flambeau import nn
from flambeau.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn

T_STEPS = 50
CENTERS = [(-2.0, -2.0), (-2.0, 2.0), (2.0, -2.0), (2.0, 2.0)]


def sample_data(n, generator=None):
    centers = torch.tensor(CENTERS)
    idx = torch.randint(0, len(CENTERS), (n,), generator=generator)
    return centers[idx] + 0.2 * torch.randn(n, 2, generator=generator)


def timestep_embedding(timesteps, dim, max_period=10000):
    half = dim // 2
    freqs = torch.exp(
        -math.log(max_period) * torch.arange(start=0, end=half, dtype=torch.float32) / half
    )
    args = timesteps[:, None].float() * freqs[None]
    return torch.cat([torch.cos(args), torch.sin(args)], dim=-1)


class Denoiser(nn.Module):
    def __init__(self, hidden=128, temb=32):
        super().__init__()
        self.temb = temb
        self.t_mlp = nn.Sequential(nn.Linear(temb, hidden), nn.SiLU(), nn.Linear(hidden, hidden))
        self.inp = nn.Linear(2, hidden)
        self.net = nn.Sequential(
            nn.SiLU(),
            nn.Linear(hidden, hidden),
            nn.SiLU(),
            nn.Linear(hidden, hidden),
            nn.SiLU(),
            nn.Linear(hidden, 2),
        )

    def forward(self, x, t):
        return self.net(self.inp(x) + self.t_mlp(timestep_embedding(t, self.temb)))


class Diffusion(nn.Module):
    def __init__(self, model, timesteps=T_STEPS, beta_start=1e-4, beta_end=0.2):
        super().__init__()
        self.model = model
        self.timesteps = timesteps
        betas = torch.linspace(beta_start, beta_end, timesteps, dtype=torch.float64)
        alphas = 1.0 - betas
        alphas_cumprod = torch.cumprod(alphas, dim=0)
        alphas_cumprod_prev = F.pad(alphas_cumprod[:-1], (1, 0), value=1.0)
        posterior_variance = betas * (1.0 - alphas_cumprod_prev) / (1.0 - alphas_cumprod)

        def register(name, val):
            self.register_buffer(name, val.to(torch.float32))

        register("betas", betas)
        register("alphas_cumprod", alphas_cumprod)
        register("sqrt_alphas_cumprod", torch.sqrt(alphas_cumprod))
        register("sqrt_one_minus_alphas_cumprod", torch.sqrt(1.0 - alphas_cumprod))
        register("sqrt_recip_alphas", torch.sqrt(1.0 / alphas))
        register("posterior_variance", posterior_variance)

    @staticmethod
    def extract(a, t, x_shape):
        b = t.shape[0]
        out = a.gather(-1, t)
        return out.reshape(b, *((1,) * (len(x_shape) - 1)))

    def q_sample(self, x_start, t, noise):
        return (
            self.extract(self.sqrt_alphas_cumprod, t, x_start.shape) * x_start
            + self.extract(self.sqrt_one_minus_alphas_cumprod, t, x_start.shape) * noise
        )

    def forward(self, x_start):
        t = torch.randint(0, self.timesteps, (x_start.shape[0],), device=x_start.device).long()
        noise = torch.randn_like(x_start)
        x_noisy = self.q_sample(x_start, t, noise)
        return F.mse_loss(self.model(x_noisy, t), noise)

    @torch.inference_mode()
    def sample(self, model, n):
        x = torch.randn(n, 2)
        for i in reversed(range(self.timesteps)):
            t = torch.full((n,), i, dtype=torch.long)
            betas_t = self.extract(self.betas, t, x.shape)
            sqrt_one_minus = self.extract(self.sqrt_one_minus_alphas_cumprod, t, x.shape)
            sqrt_recip = self.extract(self.sqrt_recip_alphas, t, x.shape)
            mean = sqrt_recip * (x - betas_t * model(x, t) / sqrt_one_minus)
            if i == 0:
                x = mean
            else:
                var = self.extract(self.posterior_variance, t, x.shape)
                x = mean + torch.sqrt(var) * torch.randn_like(x)
        return x


def main():
    torch.manual_seed(0)
    denoiser = Denoiser()
    diffusion = Diffusion(denoiser)
    assert sorted(name for name, _ in diffusion.named_buffers())[0] == "alphas_cumprod"
    assert diffusion.alphas_cumprod.dtype == torch.float32
    # The forward process nearly destroys the signal by the last step.
    assert diffusion.alphas_cumprod[-1].item() < 0.01, diffusion.alphas_cumprod[-1]
    assert diffusion.posterior_variance[0].item() == 0.0

    ema = AveragedModel(denoiser, multi_avg_fn=get_ema_multi_avg_fn(0.99))
    optimizer = torch.optim.Adam(denoiser.parameters(), lr=2e-3)
    losses = []
    for step in range(600):
        x0 = sample_data(256)
        loss = diffusion(x0)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        ema.update_parameters(denoiser)
        losses.append(loss.item())
        if step % 100 == 0:
            print(f"step {step}: loss {sum(losses[-100:]) / len(losses[-100:]):.4f}")
    first, last = sum(losses[:50]) / 50, sum(losses[-50:]) / 50
    print(f"loss: first 50 steps {first:.4f}, last 50 steps {last:.4f}")
    assert last < 0.6 * first, (first, last)
    assert ema.n_averaged.item() == 600

    # EMA weights lag the live weights but are close to them.
    live = torch.nn.utils.parameters_to_vector(denoiser.parameters())
    averaged = torch.nn.utils.parameters_to_vector(ema.module.parameters())
    assert not torch.equal(live, averaged)
    assert (live - averaged).norm() < 0.2 * live.norm()

    samples = diffusion.sample(ema.module, 1000)
    assert samples.shape == (1000, 2) and not samples.requires_grad
    centers = torch.tensor(CENTERS)
    nearest = torch.cdist(samples, centers).min(dim=1)
    print(f"mean distance to nearest mode {nearest.values.mean().item():.3f}")
    assert nearest.values.median().item() < 0.6, nearest.values.median()
    counts = torch.bincount(nearest.indices, minlength=4)
    print("samples per mode", counts.tolist())
    assert counts.min().item() > 100, counts


if __name__ == "__main__":
    main()
