"""A complex-valued network that learns a channel equalizer in the Fourier domain.

In the style of complex-valued deep-learning code (deep complex networks, learned
frequency-domain filters): signals pass through an unknown linear channel (a
convolution with a fixed kernel plus noise); the model takes torch.fft.rfft of the
received signal, applies a learned complex per-frequency filter (an nn.Parameter of
dtype torch.cfloat), then a small complex MLP (nn.Linear with dtype=torch.cfloat and a
modReLU activation built from torch.abs, torch.angle and torch.polar), and returns
to the time domain with torch.fft.irfft. Adam updates the complex parameters
(Wirtinger gradients). Checks: complex autograd against a hand-derived gradient
(d|z|^2/dz* = z convention), torch.view_as_real / view_as_complex round-trips,
that the learned filter approximates the inverse of the channel's frequency
response, and that the equalized signals are far closer to the clean ones.
"""

import math

import flambeau as torch
import flambeau.nn.functional as F
from flambeau import nn

N = 64  # samples per signal


class ModReLU(nn.Module):
    """modReLU(z) = relu(|z| + b) * z / |z|: keeps the phase, thresholds the modulus."""

    def __init__(self, features):
        super().__init__()
        self.bias = nn.Parameter(torch.full((features,), -0.05))

    def forward(self, z):
        magnitude = torch.abs(z)
        return torch.polar(F.relu(magnitude + self.bias), torch.angle(z))


class SpectralEqualizer(nn.Module):
    def __init__(self, n, hidden=48):
        super().__init__()
        bins = n // 2 + 1
        self.filter = nn.Parameter(torch.ones(bins, dtype=torch.cfloat))
        self.mix = nn.Sequential(
            nn.Linear(bins, hidden, dtype=torch.cfloat),
            ModReLU(hidden),
            nn.Linear(hidden, bins, dtype=torch.cfloat),
        )
        with torch.no_grad():  # start the residual branch near zero
            self.mix[2].weight.mul_(0.01)
            self.mix[2].bias.zero_()

    def forward(self, received):
        spectrum = torch.fft.rfft(received, dim=-1)
        filtered = spectrum * self.filter
        filtered = filtered + self.mix(filtered)
        return torch.fft.irfft(filtered, n=received.shape[-1], dim=-1)


def make_signals(batch, generator):
    t = torch.arange(N, dtype=torch.float32) / N
    freqs = torch.randint(1, 12, (batch, 3), generator=generator).float()
    phases = torch.rand(batch, 3, generator=generator) * 2 * math.pi
    amps = torch.rand(batch, 3, generator=generator) + 0.5
    waves = amps[..., None] * torch.sin(2 * math.pi * freqs[..., None] * t + phases[..., None])
    return waves.sum(1)


def channel(clean, kernel, generator):
    # circular convolution = multiplication of spectra
    spectrum = torch.fft.rfft(clean) * torch.fft.rfft(kernel, n=N)
    out = torch.fft.irfft(spectrum, n=N)
    return out + 0.01 * torch.randn(out.shape, generator=generator)


def check_complex_autograd():
    z = torch.tensor([1.0 + 2.0j, -0.5 + 0.25j], requires_grad=True)
    w = torch.tensor([0.5 - 1.0j, 2.0 + 0.0j])
    loss = (torch.abs(z * w) ** 2).sum()
    loss.backward()
    # PyTorch's convention: grad = dL/d(conj z) * 2 = 2 |w|^2 z for L = |w z|^2
    expected = 2 * (w.abs() ** 2) * z.detach()
    assert torch.allclose(z.grad, expected), (z.grad, expected)

    r = torch.view_as_real(z.detach())
    assert r.shape == (2, 2) and r[0].tolist() == [1.0, 2.0]
    assert torch.equal(torch.view_as_complex(r), z.detach())
    assert torch.complex(r[:, 0], r[:, 1]).dtype == torch.complex64
    assert torch.allclose(torch.polar(z.detach().abs(), z.detach().angle()), z.detach())
    assert z.detach().conj().imag.tolist() == [-2.0, -0.25]
    assert z.detach().is_complex() and not z.detach().real.is_complex()


def main():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    check_complex_autograd()

    kernel = torch.tensor([1.0, 0.6, -0.3, 0.1])
    train_clean = make_signals(512, g)
    train_rx = channel(train_clean, kernel, g)
    test_clean = make_signals(128, g)
    test_rx = channel(test_clean, kernel, g)

    model = SpectralEqualizer(N)
    params = list(model.parameters())
    real = {name for name, p in model.named_parameters() if not p.is_complex()}
    assert real == {"mix.1.bias"}, real
    assert not model.mix[1].bias.is_complex()
    opt = torch.optim.Adam(params, lr=1e-2)
    baseline = F.mse_loss(test_rx, test_clean).item()

    for epoch in range(40):
        perm = torch.randperm(train_clean.shape[0], generator=g)
        for i in range(0, 512, 128):
            idx = perm[i : i + 128]
            opt.zero_grad()
            loss = F.mse_loss(model(train_rx[idx]), train_clean[idx])
            loss.backward()
            opt.step()
        if epoch % 20 == 0:
            print(f"epoch {epoch} train mse {loss.item():.5f}")

    assert model.filter.grad.dtype == torch.complex64
    with torch.no_grad():
        test_mse = F.mse_loss(model(test_rx), test_clean).item()
    print(f"test mse: received {baseline:.4f} -> equalized {test_mse:.5f}")
    assert test_mse < 0.05 * baseline, (test_mse, baseline)

    # the filter should approximate 1 / H(f) at the frequencies the signals use
    response = torch.fft.rfft(kernel, n=N)
    learned = model.filter.detach()[1:12]
    inverse = 1.0 / response[1:12]
    rel_err = ((learned - inverse).abs() / inverse.abs()).mean().item()
    print(f"mean relative error of the learned inverse filter: {rel_err:.3f}")
    assert rel_err < 0.4, rel_err  # the complex MLP takes part of the correction

    state = model.state_dict()
    assert state["filter"].dtype == torch.complex64
    clone = SpectralEqualizer(N)
    clone.load_state_dict(state)
    with torch.no_grad():
        assert torch.allclose(clone(test_rx), model(test_rx), atol=1e-6)
    print("complex fourier filter OK")


if __name__ == "__main__":
    main()
