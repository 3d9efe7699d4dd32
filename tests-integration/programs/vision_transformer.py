"""A small Vision Transformer classifying synthetic oriented-stripe images.

In the style of ViT reference implementations: a Conv2d patch embedding
flattened with .flatten(2).transpose(1, 2), a learnable class token expanded over
the batch, learned position embeddings initialized with nn.init.trunc_normal_,
nn.TransformerEncoder of pre-norm (norm_first=True) GELU layers with
batch_first=True, AdamW with a no-weight-decay parameter group for biases and
norms, a LinearLR warmup chained into CosineAnnealingLR with SequentialLR,
CrossEntropyLoss(label_smoothing=0.1), and attention weights read back from
nn.MultiheadAttention.
"""

import math

import flambeau as torch
from flambeau import nn

SIDE = 16
PATCH = 4
CLASSES = 4


class PatchEmbed(nn.Module):
    def __init__(self, img_size=SIDE, patch_size=PATCH, in_chans=1, embed_dim=32):
        super().__init__()
        self.num_patches = (img_size // patch_size) ** 2
        self.proj = nn.Conv2d(in_chans, embed_dim, kernel_size=patch_size, stride=patch_size)

    def forward(self, x):
        return self.proj(x).flatten(2).transpose(1, 2)  # B, N, C


class ViT(nn.Module):
    def __init__(
        self, num_classes=CLASSES, embed_dim=32, depth=2, num_heads=4, mlp_ratio=2.0, dropout=0.0
    ):
        super().__init__()
        self.patch_embed = PatchEmbed(embed_dim=embed_dim)
        num_patches = self.patch_embed.num_patches
        self.cls_token = nn.Parameter(torch.zeros(1, 1, embed_dim))
        self.pos_embed = nn.Parameter(torch.zeros(1, num_patches + 1, embed_dim))
        self.pos_drop = nn.Dropout(p=dropout)
        layer = nn.TransformerEncoderLayer(
            d_model=embed_dim,
            nhead=num_heads,
            dim_feedforward=int(embed_dim * mlp_ratio),
            dropout=dropout,
            activation="gelu",
            batch_first=True,
            norm_first=True,
        )
        self.encoder = nn.TransformerEncoder(layer, num_layers=depth, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(embed_dim, eps=1e-6)
        self.head = nn.Linear(embed_dim, num_classes)
        nn.init.trunc_normal_(self.pos_embed, std=0.02)
        nn.init.trunc_normal_(self.cls_token, std=0.02)
        self.apply(self._init_weights)

    def _init_weights(self, m):
        if isinstance(m, nn.Linear):
            nn.init.trunc_normal_(m.weight, std=0.02)
            if m.bias is not None:
                nn.init.constant_(m.bias, 0)
        elif isinstance(m, nn.LayerNorm):
            nn.init.constant_(m.bias, 0)
            nn.init.constant_(m.weight, 1.0)

    def forward(self, x):
        B = x.shape[0]
        x = self.patch_embed(x)
        cls_tokens = self.cls_token.expand(B, -1, -1)
        x = torch.cat((cls_tokens, x), dim=1)
        x = self.pos_drop(x + self.pos_embed)
        x = self.encoder(x)
        x = self.norm(x)
        return self.head(x[:, 0])


def make_stripes(n, generator):
    """Class k: stripes at angle k * 45 degrees with random phase and frequency."""
    labels = torch.randint(0, CLASSES, (n,), generator=generator)
    coords = torch.arange(SIDE).float()
    yy, xx = torch.meshgrid(coords, coords, indexing="ij")
    angle = labels.float() * math.pi / 4
    freq = 0.5 + torch.rand(n, generator=generator) * 0.5
    phase = torch.rand(n, generator=generator) * 2 * math.pi
    proj = torch.cos(angle)[:, None, None] * xx + torch.sin(angle)[:, None, None] * yy
    images = torch.sin(freq[:, None, None] * proj + phase[:, None, None])
    images = images + 0.3 * torch.randn(n, SIDE, SIDE, generator=generator)
    return images.unsqueeze(1), labels


def main():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    x_train, y_train = make_stripes(512, g)
    x_test, y_test = make_stripes(128, g)
    model = ViT()
    n_params = sum(p.numel() for p in model.parameters() if p.requires_grad)
    print(f"{n_params} parameters")
    # trunc_normal_'s bounds a=-2, b=2 are absolute, so std=0.02 is barely truncated.
    assert abs(model.pos_embed.std().item() - 0.02) < 0.004, model.pos_embed.std()
    w = torch.empty(1000)
    nn.init.trunc_normal_(w, mean=0.0, std=1.0, a=-0.5, b=0.5)
    assert w.min().item() >= -0.5 and w.max().item() <= 0.5 and w.std().item() < 0.35

    decay, no_decay = [], []
    for name, p in model.named_parameters():
        (no_decay if p.ndim <= 1 or name.endswith(("cls_token", "pos_embed")) else decay).append(p)
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": 0.05}, {"params": no_decay, "weight_decay": 0.0}],
        lr=3e-3,
        betas=(0.9, 0.999),
    )
    epochs, steps_per_epoch = 8, len(x_train) // 64
    warmup = torch.optim.lr_scheduler.LinearLR(
        optimizer, start_factor=0.1, total_iters=steps_per_epoch
    )
    cosine = torch.optim.lr_scheduler.CosineAnnealingLR(
        optimizer, T_max=(epochs - 1) * steps_per_epoch
    )
    scheduler = torch.optim.lr_scheduler.SequentialLR(
        optimizer, [warmup, cosine], milestones=[steps_per_epoch]
    )
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
    assert abs(optimizer.param_groups[0]["lr"] - 3e-4) < 1e-12

    def accuracy():
        model.eval()
        with torch.no_grad():
            return (model(x_test).argmax(-1) == y_test).float().mean().item()

    lrs = []
    for epoch in range(epochs):
        model.train()
        perm = torch.randperm(len(x_train))
        total = 0.0
        for i in range(steps_per_epoch):
            idx = perm[i * 64 : (i + 1) * 64]
            loss = criterion(model(x_train[idx]), y_train[idx])
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
            optimizer.step()
            scheduler.step()
            lrs.append(scheduler.get_last_lr()[0])
            total += loss.item()
        print(
            f"epoch {epoch}: loss {total / steps_per_epoch:.4f}"
            f" test accuracy {accuracy():.3f} lr {lrs[-1]:.2e}"
        )
    acc = accuracy()
    assert acc > 0.9, acc
    assert max(lrs) == lrs[steps_per_epoch - 1] and abs(max(lrs) - 3e-3) < 1e-9, lrs
    assert lrs[-1] < 1e-6, lrs[-1]

    # Attention weights of the first layer, averaged over heads, sum to one over keys.
    with torch.no_grad():
        tokens = (
            torch.cat((model.cls_token.expand(2, -1, -1), model.patch_embed(x_test[:2])), dim=1)
            + model.pos_embed
        )
        layer = model.encoder.layers[0]
        h = layer.norm1(tokens)
        _, weights = layer.self_attn(h, h, h, need_weights=True)
    assert weights.shape == (2, 17, 17)
    assert torch.allclose(weights.sum(-1), torch.ones(2, 17), atol=1e-5)

    # Label smoothing: a uniform prediction costs log(C) whatever the smoothing.
    uniform = torch.zeros(3, CLASSES)
    assert abs(criterion(uniform, torch.tensor([0, 1, 2])).item() - math.log(CLASSES)) < 1e-6


if __name__ == "__main__":
    main()
