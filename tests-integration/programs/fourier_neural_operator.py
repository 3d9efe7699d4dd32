"""A 1-D Fourier Neural Operator learning the solution operator of the heat equation.

In the style of the neuraloperator reference implementation (Li et al., "Fourier Neural
Operator for Parametric PDEs"): each SpectralConv1d takes torch.fft.rfft of its input,
multiplies the lowest `modes` frequencies by learned complex weights (an nn.Parameter of
dtype torch.cfloat, mixed with torch.einsum over channels), and returns to physical space
with torch.fft.irfft(n=...). The target operator maps an initial condition u0(x) to u(x, t)
for the periodic heat equation, computed exactly in Fourier space. Checks that the
spectral layer matches a hand-written circular convolution, that training with Adam on the
complex weights cuts the relative L2 error, that the operator generalises to a finer grid
(resolution invariance), and that a checkpoint holding complex tensors round-trips.
"""

import math
import os
import tempfile

import flambeau as torch
import flambeau.nn as nn
import flambeau.nn.functional as F

N_GRID, MODES, WIDTH = 64, 12, 24


class SpectralConv1d(nn.Module):
    def __init__(self, in_channels, out_channels, modes):
        super().__init__()
        self.in_channels, self.out_channels, self.modes = in_channels, out_channels, modes
        self.scale = 1 / (in_channels * out_channels)
        self.weights = nn.Parameter(
            self.scale * torch.rand(in_channels, out_channels, modes, dtype=torch.cfloat)
        )

    def compl_mul1d(self, input, weights):
        # (batch, in_channel, x), (in_channel, out_channel, x) -> (batch, out_channel, x)
        return torch.einsum("bix,iox->box", input, weights)

    def forward(self, x):
        batchsize = x.shape[0]
        x_ft = torch.fft.rfft(x)
        out_ft = torch.zeros(
            batchsize, self.out_channels, x.size(-1) // 2 + 1, device=x.device, dtype=torch.cfloat
        )
        out_ft[:, :, : self.modes] = self.compl_mul1d(x_ft[:, :, : self.modes], self.weights)
        return torch.fft.irfft(out_ft, n=x.size(-1))


class FNO1d(nn.Module):
    def __init__(self, modes, width):
        super().__init__()
        self.fc0 = nn.Linear(2, width)  # input: (u0(x), x)
        self.convs = nn.ModuleList([SpectralConv1d(width, width, modes) for _ in range(3)])
        self.ws = nn.ModuleList([nn.Conv1d(width, width, 1) for _ in range(3)])
        self.fc1 = nn.Linear(width, 64)
        self.fc2 = nn.Linear(64, 1)

    def forward(self, x):
        grid = self.get_grid(x.shape, x.device)
        x = torch.cat((x, grid), dim=-1)
        x = self.fc0(x)
        x = x.permute(0, 2, 1)
        for i, (conv, w) in enumerate(zip(self.convs, self.ws)):
            x = conv(x) + w(x)
            if i < len(self.convs) - 1:
                x = F.gelu(x)
        x = x.permute(0, 2, 1)
        x = F.gelu(self.fc1(x))
        return self.fc2(x)

    def get_grid(self, shape, device):
        batchsize, size_x = shape[0], shape[1]
        gridx = torch.tensor(torch.linspace(0, 1, size_x + 1)[:-1].tolist(), dtype=torch.float)
        return gridx.reshape(1, size_x, 1).repeat([batchsize, 1, 1]).to(device)


def heat_data(n, grid, generator, t=0.02):
    """Random smooth periodic u0 and the exact heat-equation solution u(., t)."""
    k = torch.arange(1, 6, dtype=torch.float)
    a = torch.randn(n, 5, generator=generator) / k
    b = torch.randn(n, 5, generator=generator) / k
    x = torch.arange(grid, dtype=torch.float) / grid
    phase = 2 * math.pi * k[:, None] * x[None, :]  # (5, grid)
    u0 = a @ torch.cos(phase) + b @ torch.sin(phase)
    decay = torch.exp(-((2 * math.pi * k) ** 2) * t * 0.1)
    ut = (a * decay) @ torch.cos(phase) + (b * decay) @ torch.sin(phase)
    return u0.unsqueeze(-1), ut.unsqueeze(-1)


def rel_l2(pred, target):
    diff = torch.linalg.vector_norm((pred - target).flatten(1), dim=1)
    return (diff / torch.linalg.vector_norm(target.flatten(1), dim=1)).mean()


def check_spectral_conv():
    """One channel, all modes: the layer is a circular convolution with the kernel whose
    spectrum is the weights."""
    torch.manual_seed(1)
    n = 16
    conv = SpectralConv1d(1, 1, n // 2 + 1)
    x = torch.randn(2, 1, n)
    kernel = torch.fft.irfft(conv.weights.detach()[0, 0], n=n)
    idx = (torch.arange(n)[:, None] - torch.arange(n)[None, :]) % n
    expected = x[:, 0, :] @ kernel[idx].T
    # Imaginary parts of the DC and Nyquist weights are dropped by irfft, as in the layer.
    assert torch.allclose(conv(x)[:, 0, :], expected, atol=1e-5)


def main():
    check_spectral_conv()
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    x_train, y_train = heat_data(128, N_GRID, g)
    x_test, y_test = heat_data(64, N_GRID, g)

    model = FNO1d(MODES, WIDTH)
    assert model.convs[0].weights.dtype == torch.complex64
    assert model.convs[0].weights.is_complex()
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-3, weight_decay=1e-4)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=6, gamma=0.5)

    with torch.no_grad():
        first = rel_l2(model(x_test), y_test).item()
    for epoch in range(15):
        model.train()
        perm = torch.randperm(x_train.shape[0])
        for i in range(0, x_train.shape[0], 32):
            idx = perm[i : i + 32]
            optimizer.zero_grad()
            loss = rel_l2(model(x_train[idx]), y_train[idx])
            loss.backward()
            optimizer.step()
        scheduler.step()
        if epoch % 5 == 0:
            print(f"epoch {epoch}: train rel L2 {loss.item():.4f}")
    model.eval()
    with torch.no_grad():
        last = rel_l2(model(x_test), y_test).item()
        x_fine, y_fine = heat_data(32, 2 * N_GRID, torch.Generator().manual_seed(5))
        fine = rel_l2(model(x_fine), y_fine).item()
    print(f"test rel L2 {first:.3f} -> {last:.3f}; on a 2x finer grid {fine:.3f}")
    assert last < 0.1 and last < first / 5, (first, last)
    assert fine < 0.2, fine

    grad = model.convs[0].weights.grad
    assert grad is not None and grad.dtype == torch.complex64

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "fno.pt")
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, path)
        ckpt = torch.load(path, weights_only=True)
    assert ckpt["model"]["convs.0.weights"].dtype == torch.complex64
    assert ckpt["optimizer"]["state"][2]["exp_avg"].dtype == torch.complex64
    restored = FNO1d(MODES, WIDTH)
    restored.load_state_dict(ckpt["model"])
    with torch.no_grad():
        assert torch.equal(restored(x_test), model(x_test))
    for name, t in restored.state_dict().items():
        assert torch.equal(t, model.state_dict()[name]), name


if __name__ == "__main__":
    main()
