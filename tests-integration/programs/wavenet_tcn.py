"""A WaveNet-style temporal convolutional network on mu-law quantized waveforms.

In the style of WaveNet/TCN implementations: causal Conv1d layers (left padding with
F.pad, dilation 1, 2, 4, 8, 16) wrapped in the classic torch.nn.utils.weight_norm
(weight_g / weight_v), gated tanh * sigmoid activations, 1x1 residual and skip
convolutions, mu-law companding (torch.sign, log1p) into 64 classes, next-sample
prediction with cross_entropy over (N, C, L) logits, and autoregressive generation
by feeding samples back. Checks causality with autograd (the output at time t has no
gradient from inputs after t), the receptive field, the learning, and that
remove_weight_norm leaves the network's function unchanged.
"""

import math

import flambeau as torch
import flambeau.nn as nn
import flambeau.nn.functional as F
from flambeau.nn.utils import remove_weight_norm, weight_norm

QUANT = 64
MU = QUANT - 1


def mu_law_encode(x):
    y = torch.sign(x) * torch.log1p(MU * x.abs()) / math.log1p(MU)
    return ((y + 1) / 2 * MU + 0.5).long().clamp(0, MU)


def mu_law_decode(q):
    y = 2 * q.float() / MU - 1
    return torch.sign(y) * ((1 + MU) ** y.abs() - 1) / MU


class CausalConv1d(nn.Module):
    def __init__(self, cin, cout, kernel_size, dilation=1):
        super().__init__()
        self.left = (kernel_size - 1) * dilation
        self.conv = weight_norm(nn.Conv1d(cin, cout, kernel_size, dilation=dilation))

    def forward(self, x):
        return self.conv(F.pad(x, (self.left, 0)))


class ResidualBlock(nn.Module):
    def __init__(self, channels, skip_channels, dilation):
        super().__init__()
        self.filter = CausalConv1d(channels, channels, 2, dilation)
        self.gate = CausalConv1d(channels, channels, 2, dilation)
        self.residual = nn.Conv1d(channels, channels, 1)
        self.skip = nn.Conv1d(channels, skip_channels, 1)

    def forward(self, x):
        h = torch.tanh(self.filter(x)) * torch.sigmoid(self.gate(x))
        return x + self.residual(h), self.skip(h)


class WaveNet(nn.Module):
    def __init__(self, channels=24, skip_channels=48, dilations=(1, 2, 4, 8, 16)):
        super().__init__()
        self.embed = nn.Embedding(QUANT, channels)
        self.causal = CausalConv1d(channels, channels, 2)
        self.blocks = nn.ModuleList(ResidualBlock(channels, skip_channels, d) for d in dilations)
        self.out = nn.Sequential(
            nn.ReLU(),
            nn.Conv1d(skip_channels, skip_channels, 1),
            nn.ReLU(),
            nn.Conv1d(skip_channels, QUANT, 1),
        )
        self.receptive_field = 1 + 1 + sum(dilations)

    def forward(self, q):  # q: (N, L) class indices -> (N, QUANT, L) logits
        x = self.causal(self.embed(q).transpose(1, 2))
        skips = 0
        for block in self.blocks:
            x, s = block(x)
            skips = skips + s
        return self.out(skips)


def make_waves(n, length, generator):
    t = torch.arange(length).float()
    freq = 0.02 + 0.08 * torch.rand(n, 2, 1, generator=generator)
    phase = 2 * math.pi * torch.rand(n, 2, 1, generator=generator)
    amp = torch.tensor([0.6, 0.3]).view(1, 2, 1)
    return (amp * torch.sin(2 * math.pi * freq * t + phase)).sum(1)


def main():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    waves = make_waves(256, 128, g)
    q = mu_law_encode(waves)
    assert (mu_law_decode(q) - waves).abs().max() < 0.08
    test_q = mu_law_encode(make_waves(64, 128, g))

    model = WaveNet()
    assert model.receptive_field == 33
    conv = model.blocks[0].filter.conv
    assert {n for n, _ in conv.named_parameters()} == {"bias", "weight_g", "weight_v"}
    assert torch.allclose(
        conv.weight_g, torch.linalg.vector_norm(conv.weight_v, dim=(1, 2), keepdim=True)
    )

    # Causality: the output at time t depends on inputs up to t only, and on at most
    # receptive_field of them.
    x = model.causal.conv.weight.new_zeros(1, 24, 64).normal_().requires_grad_()
    h = x
    skips = 0
    for block in model.blocks:
        h, s = block(h)
        skips = skips + s
    (grad,) = torch.autograd.grad(skips[0, :, 40].sum(), x)
    touched = grad.abs().sum((0, 1)).nonzero().squeeze(1)
    assert touched.max().item() == 40, touched
    assert touched.min().item() == 40 - (model.receptive_field - 2), touched

    optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)

    def evaluate():
        with torch.no_grad():
            logits = model(test_q[:, :-1])
            loss = F.cross_entropy(logits, test_q[:, 1:]).item()
            near = ((logits.argmax(1) - test_q[:, 1:]).abs() <= 1).float().mean().item()
        return loss, near

    loss0, near0 = evaluate()
    for step in range(250):
        idx = torch.randint(0, q.size(0), (16,))
        logits = model(q[idx, :-1])
        loss = F.cross_entropy(logits, q[idx, 1:])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 50 == 0:
            print(f"step {step}: loss {loss.item():.3f}")
    loss1, near1 = evaluate()
    print(f"test loss {loss0:.3f} -> {loss1:.3f}; within one bin {near0:.3f} -> {near1:.3f}")
    assert loss1 < loss0 - 2.0, (loss0, loss1)
    assert near1 > 0.6, near1

    # Generation: continue a test wave sample by sample from its first 40 steps.
    model.eval()
    seq = test_q[:4, :40].clone()
    with torch.no_grad():
        for _ in range(12):
            logits = model(seq[:, -model.receptive_field :])[:, :, -1]
            seq = torch.cat([seq, logits.argmax(1, keepdim=True)], dim=1)
    truth = mu_law_decode(test_q[:4, 40:52])
    err = (mu_law_decode(seq[:, 40:]) - truth).abs().mean().item()
    hold = (mu_law_decode(test_q[:4, 39:40]) - truth).abs().mean().item()
    print(f"mean abs error of 12 generated samples: {err:.3f} (repeating the last: {hold:.3f})")
    assert err < hold / 2, (err, hold)

    # Folding weight norm back into plain weights changes nothing.
    with torch.no_grad():
        before = model(test_q[:8])
        for module in model.modules():
            if isinstance(module, CausalConv1d):
                remove_weight_norm(module.conv)
        after = model(test_q[:8])
    assert "weight" in dict(conv.named_parameters()) and not hasattr(conv, "weight_g")
    assert torch.allclose(before, after, atol=1e-5)


if __name__ == "__main__":
    main()
