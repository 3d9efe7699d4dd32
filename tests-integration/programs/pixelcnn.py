"""A PixelCNN on binary images, with type-A and type-B masked convolutions.

In the style of PixelCNN reimplementations: a MaskedConv2d subclass of nn.Conv2d whose
mask is a registered buffer (rows below and pixels to the right of the centre zeroed;
the centre itself too for type A) applied to the weight in forward() with F.conv2d,
a stack of type-B residual layers, per-pixel Bernoulli logits trained with
binary_cross_entropy_with_logits, a bits-per-pixel report, and raster-order sampling
with torch.bernoulli. The images are 8x8 bars (each image all-horizontal or
all-vertical bars). Checks the autoregressive property with autograd, the likelihood
against an independent-pixel baseline, and that samples are mostly pure-bar images.
"""

import math

import flambeau as torch
import flambeau.nn as nn
import flambeau.nn.functional as F

SIZE = 8


class MaskedConv2d(nn.Conv2d):
    def __init__(self, mask_type, *args, **kwargs):
        super().__init__(*args, **kwargs)
        assert mask_type in ("A", "B")
        self.register_buffer("mask", torch.ones_like(self.weight))
        _, _, kh, kw = self.weight.shape
        self.mask[:, :, kh // 2, kw // 2 + (mask_type == "B") :] = 0
        self.mask[:, :, kh // 2 + 1 :] = 0

    def forward(self, x):
        return F.conv2d(x, self.weight * self.mask, self.bias, self.stride, self.padding)


class ResidualMasked(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.net = nn.Sequential(
            nn.ReLU(),
            nn.Conv2d(channels, channels // 2, 1),
            nn.ReLU(),
            MaskedConv2d("B", channels // 2, channels // 2, 3, padding=1),
            nn.ReLU(),
            nn.Conv2d(channels // 2, channels, 1),
        )

    def forward(self, x):
        return x + self.net(x)


class PixelCNN(nn.Module):
    def __init__(self, channels=32, layers=4):
        super().__init__()
        self.net = nn.Sequential(
            MaskedConv2d("A", 1, channels, 7, padding=3),
            *[ResidualMasked(channels) for _ in range(layers)],
            nn.ReLU(),
            MaskedConv2d("B", channels, channels, 1),
            nn.ReLU(),
            nn.Conv2d(channels, 1, 1),
        )

    def forward(self, x):
        return self.net(x)

    @torch.no_grad()
    def sample(self, n, generator=None):
        x = torch.zeros(n, 1, SIZE, SIZE)
        for i in range(SIZE):
            for j in range(SIZE):
                probs = torch.sigmoid(self(x)[:, :, i, j])
                x[:, :, i, j] = torch.bernoulli(probs, generator=generator)
        return x


def make_bars(n, generator):
    bars = (torch.rand(n, SIZE, generator=generator) < 0.5).float()
    horizontal = torch.rand(n, generator=generator) < 0.5
    images = torch.where(
        horizontal.view(n, 1, 1),
        bars.unsqueeze(2).expand(n, SIZE, SIZE),
        bars.unsqueeze(1).expand(n, SIZE, SIZE),
    )
    return images.unsqueeze(1).contiguous()


def is_bar_image(img):
    img = img.squeeze(0)
    rows_constant = bool((img == img[:, :1]).all())
    cols_constant = bool((img == img[:1, :]).all())
    return rows_constant or cols_constant


def main():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    train = make_bars(2048, g)
    test = make_bars(512, g)
    model = PixelCNN()

    mask_a = model.net[0].mask[0, 0]
    assert mask_a[3, 3] == 0 and mask_a[3, 2] == 1 and mask_a[4].sum() == 0 and mask_a[:3].all()
    assert "net.0.mask" in model.state_dict()
    assert len(list(model.parameters())) == len([p for n, p in model.named_parameters()])

    # The logit of pixel (i, j) depends only on pixels before it in raster order.
    x = torch.rand(1, 1, SIZE, SIZE, requires_grad=True)
    i, j = 4, 5
    (grad,) = torch.autograd.grad(model(x)[0, 0, i, j], x)
    # (relative to the largest: fast convolution algorithms such as Winograd's, which
    # cuDNN uses too, leave rounding-level dependence through zeroed weights)
    dependent = grad[0, 0].abs() > 1e-4 * grad.abs().max()
    flat = dependent.flatten().nonzero().squeeze(1)
    assert flat.max().item() < i * SIZE + j, flat
    assert dependent[i - 1, j] and dependent[i, j - 1]

    # Baseline: each pixel an independent Bernoulli(0.5), 1 bit per pixel.
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-3)
    for epoch in range(4):
        perm = torch.randperm(train.size(0))
        for k in range(0, train.size(0), 64):
            batch = train[perm[k : k + 64]]
            loss = F.binary_cross_entropy_with_logits(model(batch), batch)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        with torch.no_grad():
            test_nll = F.binary_cross_entropy_with_logits(model(test), test).item()
        print(
            f"epoch {epoch}: train {loss.item() / math.log(2):.3f} bits/pixel, "
            f"test {test_nll / math.log(2):.3f} bits/pixel"
        )
    bits = test_nll / math.log(2)
    # The true entropy: 1 bit for the orientation and 8 for the bars, over 64 pixels.
    assert bits < 0.2, bits
    assert bits > 9 / 64 - 0.02, bits

    samples = model.sample(64, generator=torch.Generator().manual_seed(1))
    assert samples.shape == (64, 1, SIZE, SIZE)
    assert set(samples.unique().tolist()) <= {0.0, 1.0}
    pure = sum(is_bar_image(s) for s in samples)
    print(f"{pure}/64 samples are pure bar images")
    assert pure >= 40, pure


if __name__ == "__main__":
    main()
