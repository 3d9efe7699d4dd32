"""A capsule network with dynamic routing-by-agreement.

In the style of CapsNet reimplementations: a conv stem, primary capsules from a conv
layer reshaped and permuted into (batch, capsules, dim) vectors, the squash
non-linearity, class capsules predicted through a (1, in_caps, out_caps, out_dim,
in_dim) weight with torch.matmul broadcasting, three routing iterations (softmax of the
routing logits over output capsules, weighted sum, squash, agreement update with the
predictions detached except in the last iteration), the margin loss on capsule
lengths, and a reconstruction decoder fed the capsules masked by the true class. Data:
12x12 images of four shapes at random positions. Checks squash's norm identity, that
routing coefficients sum to one, learning, and that the decoder reconstructs.
"""

import flambeau as torch
import flambeau.nn as nn
import flambeau.nn.functional as F

SIZE, CLASSES = 12, 4


def make_shapes(n, generator):
    """Cross, square outline, diagonal line, filled 3x3 block, at random places."""
    glyphs = torch.zeros(CLASSES, 5, 5)
    glyphs[0, 2, :] = 1
    glyphs[0, :, 2] = 1
    glyphs[1, 0, :] = glyphs[1, 4, :] = glyphs[1, :, 0] = glyphs[1, :, 4] = 1
    glyphs[2] = torch.eye(5)
    glyphs[3, 1:4, 1:4] = 1
    labels = torch.randint(0, CLASSES, (n,), generator=generator)
    pos = torch.randint(0, SIZE - 4, (n, 2), generator=generator)
    images = torch.zeros(n, 1, SIZE, SIZE)
    for i in range(n):
        r, c = pos[i].tolist()
        images[i, 0, r : r + 5, c : c + 5] = glyphs[labels[i]]
    return images + 0.1 * torch.randn(images.shape, generator=generator), labels


def squash(s, dim=-1, eps=1e-8):
    sq = (s * s).sum(dim=dim, keepdim=True)
    return sq / (1 + sq) * s / torch.sqrt(sq + eps)


class PrimaryCaps(nn.Module):
    def __init__(self, cin, n_maps=8, caps_dim=8):
        super().__init__()
        self.caps_dim = caps_dim
        self.conv = nn.Conv2d(cin, n_maps * caps_dim, kernel_size=3, stride=2)

    def forward(self, x):
        out = self.conv(x)  # (B, maps * dim, H, W)
        b, _, h, w = out.shape
        out = out.view(b, -1, self.caps_dim, h, w).permute(0, 1, 3, 4, 2)
        return squash(out.reshape(b, -1, self.caps_dim))


class ClassCaps(nn.Module):
    def __init__(self, in_caps, in_dim, out_caps, out_dim, iterations=3):
        super().__init__()
        self.iterations = iterations
        self.W = nn.Parameter(0.05 * torch.randn(1, in_caps, out_caps, out_dim, in_dim))

    def forward(self, u):
        u_hat = torch.matmul(self.W, u[:, :, None, :, None]).squeeze(-1)  # (B, in, out, dim)
        b = torch.zeros(u_hat.shape[:3], device=u.device)
        u_hat_detached = u_hat.detach()
        for i in range(self.iterations):
            c = F.softmax(b, dim=2)
            last = i == self.iterations - 1
            s = (c.unsqueeze(-1) * (u_hat if last else u_hat_detached)).sum(dim=1)
            v = squash(s)
            if not last:
                b = b + (u_hat_detached * v.unsqueeze(1)).sum(dim=-1)
        self.coupling = c
        return v


class CapsNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(1, 32, kernel_size=3)
        self.primary = PrimaryCaps(32)
        self.classes = ClassCaps(in_caps=8 * 4 * 4, in_dim=8, out_caps=CLASSES, out_dim=12)
        self.decoder = nn.Sequential(
            nn.Linear(12 * CLASSES, 128), nn.ReLU(), nn.Linear(128, SIZE * SIZE), nn.Sigmoid()
        )

    def forward(self, x, y=None):
        v = self.classes(self.primary(F.relu(self.stem(x))))
        lengths = v.norm(dim=-1)
        if y is None:
            y = lengths.argmax(dim=1)
        mask = F.one_hot(y, CLASSES).unsqueeze(-1).to(v.dtype)
        recon = self.decoder((v * mask).flatten(1)).view(-1, 1, SIZE, SIZE)
        return lengths, recon


def margin_loss(lengths, labels, m_plus=0.9, m_minus=0.1, lam=0.5):
    t = F.one_hot(labels, CLASSES).float()
    present = t * F.relu(m_plus - lengths) ** 2
    absent = lam * (1 - t) * F.relu(lengths - m_minus) ** 2
    return (present + absent).sum(dim=1).mean()


def main():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    train_x, train_y = make_shapes(1024, g)
    test_x, test_y = make_shapes(256, g)

    s = torch.randn(5, 7)
    v = squash(s)
    norm = s.norm(dim=-1)
    assert torch.allclose(v.norm(dim=-1), norm**2 / (1 + norm**2), atol=1e-6)
    assert torch.allclose(F.normalize(v, dim=-1), F.normalize(s, dim=-1), atol=1e-6)

    model = CapsNet()
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)

    def evaluate():
        model.eval()
        with torch.no_grad():
            lengths, recon = model(test_x)
        model.train()
        acc = (lengths.argmax(1) == test_y).float().mean().item()
        return acc, F.mse_loss(recon, test_x.clamp(0, 1)).item()

    acc0, recon0 = evaluate()
    assert torch.allclose(model.classes.coupling.sum(dim=2), torch.ones(256, 128), atol=1e-5)
    for epoch in range(8):
        perm = torch.randperm(train_x.size(0))
        for i in range(0, train_x.size(0), 64):
            x, y = train_x[perm[i : i + 64]], train_y[perm[i : i + 64]]
            lengths, recon = model(x, y)
            loss = margin_loss(lengths, y) + 0.0005 * SIZE * SIZE * F.mse_loss(recon, x.clamp(0, 1))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        acc, recon_err = evaluate()
        print(f"epoch {epoch}: loss {loss.item():.4f} test acc {acc:.3f} recon mse {recon_err:.4f}")
    assert acc > 0.95 and acc0 < 0.5, (acc0, acc)
    assert recon_err < recon0 / 2, (recon0, recon_err)
    with torch.no_grad():
        lengths, _ = model(test_x)
    # Capsule lengths are probabilities-like: the predicted class long, the others short.
    assert lengths.max() < 1.0
    assert lengths.max(dim=1).values.mean() > 0.7


if __name__ == "__main__":
    main()
