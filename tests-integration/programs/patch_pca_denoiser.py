"""Patch-based image denoising: PCA of patches, then a learned patch denoiser.

In the style of classical patch-based denoisers (and of the im2col tricks in ViT/MAE
repos): F.unfold cuts overlapping patches, a low-rank PCA basis of clean patches comes
from torch.svd_lowrank (compared with torch.pca_lowrank and a full torch.linalg.svd),
denoised patches are put back with F.fold and divided by F.fold of ones (the overlap
count), and nn.Unfold / nn.Fold modules wrap the same. A small network then learns to
denoise patches, initialised from the PCA projection. Checks unfold/fold against loops,
the PCA reconstruction, that both denoisers beat the noisy input's PSNR, and that a
checkpoint round-trips.
"""

import math
import os
import tempfile

import flambeau as torch
import flambeau.nn as nn
import flambeau.nn.functional as F

P, STRIDE, RANK = 6, 3, 8


def make_images(n, size, g):
    """Smooth synthetic images: sums of oriented sinusoids and blobs, in [0, 1]."""
    coords = torch.linspace(0, 1, size)
    yy, xx = torch.meshgrid(coords, coords, indexing="ij")
    imgs = []
    for _ in range(n):
        f = torch.rand(3, generator=g) * 4 + 1
        th = torch.rand(3, generator=g) * math.pi
        img = sum(
            torch.sin(2 * math.pi * f[k] * (xx * torch.cos(th[k]) + yy * torch.sin(th[k])))
            for k in range(3)
        )
        c = torch.rand(2, generator=g)
        img = img + 2 * torch.exp(-((xx - c[0]) ** 2 + (yy - c[1]) ** 2) / 0.05)
        imgs.append((img - img.min()) / (img.max() - img.min()))
    return torch.stack(imgs).unsqueeze(1)


def psnr(a, b):
    return (10 * torch.log10(1.0 / F.mse_loss(a, b))).item()


def to_patches(x):
    # (N, C, H, W) -> (N * L, C * P * P)
    cols = F.unfold(x, kernel_size=P, stride=STRIDE)
    return cols.transpose(1, 2).reshape(-1, cols.size(1))


def from_patches(patches, like):
    n, c, h, w = like.shape
    cols = patches.reshape(n, -1, c * P * P).transpose(1, 2)
    summed = F.fold(cols, output_size=(h, w), kernel_size=P, stride=STRIDE)
    counts = F.fold(torch.ones_like(cols), output_size=(h, w), kernel_size=P, stride=STRIDE)
    return summed / counts


def check_unfold_fold():
    x = torch.arange(2 * 1 * 9 * 9, dtype=torch.float).reshape(2, 1, 9, 9)
    cols = F.unfold(x, kernel_size=P, stride=STRIDE)
    assert cols.shape == (2, P * P, 4)
    # Column `col` holds the patch at divmod(col, 2) * STRIDE, row-major.
    for col in range(4):
        i, j = divmod(col, 2)
        patch = x[:, :, i * STRIDE : i * STRIDE + P, j * STRIDE : j * STRIDE + P]
        assert torch.equal(cols[:, :, col], patch.reshape(2, -1))
    assert torch.equal(from_patches(to_patches(x), x), x)
    counts = F.fold(torch.ones(1, P * P, 4), (9, 9), kernel_size=P, stride=STRIDE)
    assert counts[0, 0, 0, 0].item() == 1 and counts[0, 0, 4, 4].item() == 4
    unfold, fold = nn.Unfold(P, stride=STRIDE), nn.Fold((9, 9), P, stride=STRIDE)
    assert torch.equal(fold(unfold(x)), x * counts)


class PatchDenoiser(nn.Module):
    def __init__(self, basis, mean):
        super().__init__()
        self.register_buffer("mean", mean)
        self.encode = nn.Linear(basis.size(0), basis.size(1), bias=False)
        self.decode = nn.Linear(basis.size(1), basis.size(0), bias=False)
        self.residual = nn.Sequential(
            nn.Linear(basis.size(1), 64), nn.ReLU(), nn.Linear(64, basis.size(0))
        )
        with torch.no_grad():
            self.encode.weight.copy_(basis.T)
            self.decode.weight.copy_(basis)
            self.residual[-1].weight.zero_()
            self.residual[-1].bias.zero_()

    def forward(self, patches):
        z = self.encode(patches - self.mean)
        return self.decode(z) + self.residual(z) + self.mean


def main():
    torch.manual_seed(0)
    check_unfold_fold()
    g = torch.Generator().manual_seed(0)
    clean = make_images(24, 24, g)
    train_clean, test_clean = clean[:16], clean[16:]
    sigma = 0.15
    noisy_train = train_clean + sigma * torch.randn(train_clean.shape, generator=g)
    noisy_test = test_clean + sigma * torch.randn(test_clean.shape, generator=g)

    patches = to_patches(train_clean)
    mean = patches.mean(0)
    # Oversample, as the randomized SVD's docs advise, and keep the leading RANK.
    U, S, V = torch.svd_lowrank(patches - mean, q=RANK + 6, niter=4)
    U, S, V = U[:, :RANK], S[:RANK], V[:, :RANK]
    assert U.shape == (patches.size(0), RANK) and V.shape == (P * P, RANK)
    S_full = torch.linalg.svdvals(patches - mean)
    assert torch.allclose(S, S_full[:RANK], rtol=1e-2), (S, S_full[:RANK])
    U2, S2, V2 = torch.pca_lowrank(patches, q=RANK + 6, center=True, niter=4)
    assert torch.allclose(S2[:RANK], S, rtol=1e-2)
    assert torch.allclose((V2[:, :RANK].T @ V).abs(), torch.eye(RANK), atol=2e-2)
    assert torch.allclose(V.T @ V, torch.eye(RANK), atol=1e-4)
    explained = (S**2).sum() / (S_full**2).sum()
    print(f"{RANK} components explain {explained.item():.3f} of the patch variance")
    assert explained > 0.9

    def pca_denoise(noisy):
        p = to_patches(noisy)
        return from_patches((p - mean) @ V @ V.T + mean, noisy)

    base = psnr(noisy_test, test_clean)
    pca = psnr(pca_denoise(noisy_test), test_clean)
    print(f"test PSNR: noisy {base:.2f} dB, PCA {pca:.2f} dB")
    assert pca > base + 3, (base, pca)

    model = PatchDenoiser(V, mean)
    with torch.no_grad():
        same = from_patches(model(to_patches(noisy_test)), noisy_test)
    assert torch.allclose(same, pca_denoise(noisy_test), atol=1e-5)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x_p, y_p = to_patches(noisy_train), to_patches(train_clean)
    for step in range(300):
        idx = torch.randint(0, x_p.size(0), (256,), generator=g)
        loss = F.mse_loss(model(x_p[idx]), y_p[idx])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 100 == 0:
            print(f"step {step}: patch mse {loss.item():.5f}")
    model.eval()
    with torch.no_grad():
        learned = psnr(from_patches(model(to_patches(noisy_test)), noisy_test), test_clean)
    print(f"test PSNR: learned {learned:.2f} dB")
    assert learned > base + 3 and learned > pca - 0.1, (base, pca, learned)

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "denoiser.pt")
        torch.save(model.state_dict(), path)
        state = torch.load(path, weights_only=True)
    assert set(state) >= {"mean", "encode.weight", "decode.weight"}
    restored = PatchDenoiser(torch.zeros_like(V), torch.zeros_like(mean))
    restored.load_state_dict(state)
    with torch.no_grad():
        assert torch.equal(restored(to_patches(noisy_test)), model(to_patches(noisy_test)))


if __name__ == "__main__":
    main()
