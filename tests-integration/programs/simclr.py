"""SimCLR: contrastive self-supervised learning with the NT-Xent loss.

In the style of SimCLR reimplementations: two random augmentations of each image
(random circular shifts with torch.roll, random horizontal flips with torch.flip under
a boolean mask, brightness jitter and Gaussian noise), a small conv encoder with a
projection head, the normalized-temperature cross-entropy over the 2N x 2N cosine
similarity matrix (F.normalize, the diagonal masked with masked_fill(-inf), positives
as cross_entropy targets), LARS-free Adam with a cosine schedule. No labels are used in
training; the representation is judged by k-nearest-neighbour accuracy on the frozen
encoder's features (torch.cdist, topk, mode) against the same encoder untrained.
"""

import flambeau as torch
import flambeau.nn as nn
import flambeau.nn.functional as F

SIZE, CLASSES = 12, 4


def make_prototypes(generator):
    """Four kinds of pattern: horizontal stripes, vertical stripes, a checkerboard, a blob."""
    r = torch.arange(SIZE).float()
    rows, cols = torch.meshgrid(r, r, indexing="ij")
    return torch.stack(
        [
            torch.sin(rows * 1.5),
            torch.sin(cols * 1.5),
            torch.sign(torch.sin(rows * 1.2) * torch.sin(cols * 1.2)),
            torch.exp(-((rows - 5.5) ** 2 + (cols - 5.5) ** 2) / 8) * 2 - 1,
        ]
    )


def make_dataset(n, prototypes, generator):
    labels = torch.randint(0, CLASSES, (n,), generator=generator)
    images = prototypes[labels].unsqueeze(1).clone()
    # Each image sits at a random offset, with random contrast, offset and noise.
    shifts = torch.randint(0, SIZE, (n, 2), generator=generator)
    for i in range(n):
        images[i] = torch.roll(images[i], (int(shifts[i, 0]), int(shifts[i, 1])), dims=(1, 2))
    contrast = 0.5 + torch.rand(n, 1, 1, 1, generator=generator)
    offset = 0.5 * torch.randn(n, 1, 1, 1, generator=generator)
    images = images * contrast + offset + 0.5 * torch.randn(images.shape, generator=generator)
    return images, labels


def augment(images):
    n = images.size(0)
    out = torch.empty_like(images)
    shifts = torch.randint(-4, 5, (n, 2))
    for i in range(n):
        out[i] = torch.roll(
            images[i], shifts=(shifts[i, 0].item(), shifts[i, 1].item()), dims=(1, 2)
        )
    flip = torch.rand(n) < 0.5
    out[flip] = torch.flip(out[flip], dims=[3])
    out = out * (0.6 + 0.8 * torch.rand(n, 1, 1, 1)) + 0.2 * torch.randn(n, 1, 1, 1)
    return out + 0.2 * torch.randn_like(out)


class Encoder(nn.Module):
    def __init__(self, feature_dim=32, projection_dim=16):
        super().__init__()
        self.backbone = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1),
            nn.BatchNorm2d(16),
            nn.ReLU(inplace=True),
            nn.Conv2d(16, 32, 3, padding=1, stride=2),
            nn.BatchNorm2d(32),
            nn.ReLU(inplace=True),
            nn.AdaptiveAvgPool2d(1),
            nn.Flatten(),
            nn.Linear(32, feature_dim),
        )
        self.projector = nn.Sequential(
            nn.Linear(feature_dim, feature_dim), nn.ReLU(), nn.Linear(feature_dim, projection_dim)
        )

    def forward(self, x):
        h = self.backbone(x)
        return h, self.projector(h)


def nt_xent(z1, z2, temperature=0.2):
    n = z1.size(0)
    z = F.normalize(torch.cat([z1, z2], dim=0), dim=1)
    sim = z @ z.t() / temperature
    self_mask = torch.eye(2 * n, dtype=torch.bool, device=z.device)
    sim = sim.masked_fill(self_mask, float("-inf"))
    targets = torch.cat([torch.arange(n, 2 * n), torch.arange(0, n)]).to(z.device)
    return F.cross_entropy(sim, targets)


@torch.no_grad()
def knn_accuracy(encoder, train_x, train_y, test_x, test_y, k=5):
    encoder.eval()
    train_f = F.normalize(encoder(train_x)[0], dim=1)
    test_f = F.normalize(encoder(test_x)[0], dim=1)
    encoder.train()
    dist = torch.cdist(test_f, train_f)
    _, nearest = dist.topk(k, dim=1, largest=False)
    votes = train_y[nearest]
    pred = torch.mode(votes, dim=1).values
    return (pred == test_y).float().mean().item()


def main():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    prototypes = make_prototypes(g)
    train_x, train_y = make_dataset(512, prototypes, g)
    test_x, test_y = make_dataset(256, prototypes, g)

    # The loss by hand, for two pairs: -log softmax of the positive among the others.
    a, b = F.normalize(torch.randn(2, 3), dim=1), F.normalize(torch.randn(2, 3), dim=1)
    z = torch.cat([a, b])
    s = (z @ z.t() / 0.5).exp()
    manual = 0.0
    for i, j in [(0, 2), (1, 3), (2, 0), (3, 1)]:
        manual += -torch.log(s[i, j] / (s[i].sum() - s[i, i])) / 4
    assert torch.allclose(nt_xent(a, b, temperature=0.5), manual, atol=1e-5)
    assert torch.allclose(F.cosine_similarity(a, b, dim=1), (a * b).sum(1), atol=1e-6)

    encoder = Encoder()
    knn_before = knn_accuracy(encoder, train_x, train_y, test_x, test_y)
    epochs, batch = 12, 128
    optimizer = torch.optim.Adam(encoder.parameters(), lr=3e-3, weight_decay=1e-6)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=epochs * (512 // batch))
    first = None
    for epoch in range(epochs):
        perm = torch.randperm(train_x.size(0))
        total = 0.0
        for i in range(0, train_x.size(0), batch):
            images = train_x[perm[i : i + batch]]
            _, z1 = encoder(augment(images))
            _, z2 = encoder(augment(images))
            loss = nt_xent(z1, z2)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            scheduler.step()
            total += loss.item()
        mean = total / (512 // batch)
        first = mean if first is None else first
        if epoch % 3 == 0 or epoch == epochs - 1:
            print(f"epoch {epoch}: NT-Xent {mean:.3f}")

    knn_after = knn_accuracy(encoder, train_x, train_y, test_x, test_y)
    print(f"5-NN accuracy: untrained {knn_before:.3f}, trained {knn_after:.3f}")
    assert mean < first - 0.5, (first, mean)
    assert knn_after > 0.95, knn_after
    assert knn_after > knn_before + 0.05, (knn_before, knn_after)


if __name__ == "__main__":
    main()
