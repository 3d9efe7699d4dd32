"""Shifted-window self-attention (Swin Transformer blocks) on synthetic texture images.

In the style of the Swin reference implementation: window_partition /
window_reverse with view/permute/contiguous, a relative position bias table
indexed by a registered buffer built from torch.meshgrid/flatten/permute,
cyclic shifts with torch.roll and the attention mask made with masked_fill for
shifted windows, DropPath (stochastic depth) with torch.rand and floor_,
PatchMerging with strided slicing, adaptive average pooling over tokens, and
a check that shift + reverse shift is the identity.
"""

import flambeau as torch
import flambeau.nn.functional as F
from flambeau import nn

CLASSES = 3


def window_partition(x, window_size):
    B, H, W, C = x.shape
    x = x.view(B, H // window_size, window_size, W // window_size, window_size, C)
    return x.permute(0, 1, 3, 2, 4, 5).contiguous().view(-1, window_size, window_size, C)


def window_reverse(windows, window_size, H, W):
    B = int(windows.shape[0] / (H * W / window_size / window_size))
    x = windows.view(B, H // window_size, W // window_size, window_size, window_size, -1)
    return x.permute(0, 1, 3, 2, 4, 5).contiguous().view(B, H, W, -1)


class DropPath(nn.Module):
    def __init__(self, drop_prob=0.0):
        super().__init__()
        self.drop_prob = drop_prob

    def forward(self, x):
        if self.drop_prob == 0.0 or not self.training:
            return x
        keep_prob = 1 - self.drop_prob
        shape = (x.shape[0],) + (1,) * (x.ndim - 1)
        random_tensor = keep_prob + torch.rand(shape, dtype=x.dtype, device=x.device)
        random_tensor.floor_()
        return x.div(keep_prob) * random_tensor


class WindowAttention(nn.Module):
    def __init__(self, dim, window_size, num_heads):
        super().__init__()
        self.dim = dim
        self.window_size = window_size
        self.num_heads = num_heads
        head_dim = dim // num_heads
        self.scale = head_dim**-0.5
        self.relative_position_bias_table = nn.Parameter(
            torch.zeros((2 * window_size - 1) * (2 * window_size - 1), num_heads)
        )
        coords_h = torch.arange(window_size)
        coords_w = torch.arange(window_size)
        coords = torch.stack(torch.meshgrid([coords_h, coords_w], indexing="ij"))
        coords_flatten = torch.flatten(coords, 1)
        relative_coords = coords_flatten[:, :, None] - coords_flatten[:, None, :]
        relative_coords = relative_coords.permute(1, 2, 0).contiguous()
        relative_coords[:, :, 0] += window_size - 1
        relative_coords[:, :, 1] += window_size - 1
        relative_coords[:, :, 0] *= 2 * window_size - 1
        relative_position_index = relative_coords.sum(-1)
        self.register_buffer("relative_position_index", relative_position_index)
        self.qkv = nn.Linear(dim, dim * 3, bias=True)
        self.proj = nn.Linear(dim, dim)
        nn.init.trunc_normal_(self.relative_position_bias_table, std=0.02)
        self.softmax = nn.Softmax(dim=-1)

    def forward(self, x, mask=None):
        B_, N, C = x.shape
        qkv = (
            self.qkv(x)
            .reshape(B_, N, 3, self.num_heads, C // self.num_heads)
            .permute(2, 0, 3, 1, 4)
        )
        q, k, v = qkv[0], qkv[1], qkv[2]
        q = q * self.scale
        attn = q @ k.transpose(-2, -1)
        n = self.window_size * self.window_size
        bias = self.relative_position_bias_table[self.relative_position_index.view(-1)].view(
            n, n, -1
        )
        attn = attn + bias.permute(2, 0, 1).contiguous().unsqueeze(0)
        if mask is not None:
            nW = mask.shape[0]
            attn = attn.view(B_ // nW, nW, self.num_heads, N, N) + mask.unsqueeze(1).unsqueeze(0)
            attn = attn.view(-1, self.num_heads, N, N)
        attn = self.softmax(attn)
        x = (attn @ v).transpose(1, 2).reshape(B_, N, C)
        return self.proj(x)


class SwinBlock(nn.Module):
    def __init__(self, dim, resolution, num_heads, window_size=4, shift_size=0, drop_path=0.0):
        super().__init__()
        self.resolution = resolution
        self.window_size = window_size
        self.shift_size = shift_size
        self.norm1 = nn.LayerNorm(dim)
        self.attn = WindowAttention(dim, window_size, num_heads)
        self.drop_path = DropPath(drop_path)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))
        if shift_size > 0:
            H = W = resolution
            img_mask = torch.zeros((1, H, W, 1))
            slices = (
                slice(0, -window_size),
                slice(-window_size, -shift_size),
                slice(-shift_size, None),
            )
            cnt = 0
            for h in slices:
                for w in slices:
                    img_mask[:, h, w, :] = cnt
                    cnt += 1
            mask_windows = window_partition(img_mask, window_size).view(
                -1, window_size * window_size
            )
            attn_mask = mask_windows.unsqueeze(1) - mask_windows.unsqueeze(2)
            attn_mask = attn_mask.masked_fill(attn_mask != 0, (-100.0)).masked_fill(
                attn_mask == 0, 0.0
            )
        else:
            attn_mask = None
        self.register_buffer("attn_mask", attn_mask)

    def forward(self, x):
        H = W = self.resolution
        B, L, C = x.shape
        shortcut = x
        x = self.norm1(x).view(B, H, W, C)
        if self.shift_size > 0:
            x = torch.roll(x, shifts=(-self.shift_size, -self.shift_size), dims=(1, 2))
        x_windows = window_partition(x, self.window_size).view(
            -1, self.window_size * self.window_size, C
        )
        attn_windows = self.attn(x_windows, mask=self.attn_mask)
        attn_windows = attn_windows.view(-1, self.window_size, self.window_size, C)
        x = window_reverse(attn_windows, self.window_size, H, W)
        if self.shift_size > 0:
            x = torch.roll(x, shifts=(self.shift_size, self.shift_size), dims=(1, 2))
        x = shortcut + self.drop_path(x.view(B, H * W, C))
        return x + self.drop_path(self.mlp(self.norm2(x)))


class PatchMerging(nn.Module):
    def __init__(self, resolution, dim):
        super().__init__()
        self.resolution = resolution
        self.reduction = nn.Linear(4 * dim, 2 * dim, bias=False)
        self.norm = nn.LayerNorm(4 * dim)

    def forward(self, x):
        H = W = self.resolution
        B, L, C = x.shape
        x = x.view(B, H, W, C)
        x0 = x[:, 0::2, 0::2, :]
        x1 = x[:, 1::2, 0::2, :]
        x2 = x[:, 0::2, 1::2, :]
        x3 = x[:, 1::2, 1::2, :]
        x = torch.cat([x0, x1, x2, x3], -1).view(B, -1, 4 * C)
        return self.reduction(self.norm(x))


class TinySwin(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.patch_embed = nn.Conv2d(1, dim, kernel_size=2, stride=2)  # 16x16 -> 8x8 tokens
        self.blocks = nn.Sequential(
            SwinBlock(dim, 8, num_heads=2, shift_size=0, drop_path=0.0),
            SwinBlock(dim, 8, num_heads=2, shift_size=2, drop_path=0.1),
        )
        self.merge = PatchMerging(8, dim)
        self.norm = nn.LayerNorm(2 * dim)
        self.avgpool = nn.AdaptiveAvgPool1d(1)
        self.head = nn.Linear(2 * dim, CLASSES)

    def forward(self, x):
        x = self.patch_embed(x).flatten(2).transpose(1, 2)
        x = self.merge(self.blocks(x))
        x = self.avgpool(self.norm(x).transpose(1, 2))
        return self.head(torch.flatten(x, 1))


def make_textures(n, generator):
    """Class 0: horizontal stripes; 1: vertical stripes; 2: checkerboard; random phase, noise."""
    labels = torch.randint(0, CLASSES, (n,), generator=generator)
    ii, jj = torch.meshgrid(torch.arange(16), torch.arange(16), indexing="ij")
    phase = torch.randint(0, 4, (n, 1, 1), generator=generator)
    horizontal = ((ii + phase) // 2 % 2).float()
    vertical = ((jj + phase) // 2 % 2).float()
    checker = ((ii // 2 + jj // 2 + phase) % 2).float()
    options = torch.stack([horizontal, vertical, checker], dim=1)
    images = options[torch.arange(n), labels] + 0.3 * torch.randn(n, 16, 16, generator=generator)
    return images.unsqueeze(1), labels


def main():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    x = torch.randn(2, 8, 8, 5)
    windows = window_partition(x, 4)
    assert windows.shape == (8, 4, 4, 5)
    assert torch.equal(window_reverse(windows, 4, 8, 8), x)
    assert torch.equal(
        torch.roll(torch.roll(x, shifts=(-2, -2), dims=(1, 2)), shifts=(2, 2), dims=(1, 2)), x
    )

    model = TinySwin()
    block = model.blocks[1]
    assert block.attn_mask.shape == (4, 16, 16)
    assert set(block.attn_mask.unique().tolist()) == {-100.0, 0.0}
    assert model.blocks[0].attn_mask is None and "blocks.0.attn_mask" not in model.state_dict()
    idx = block.attn.relative_position_index
    assert idx.shape == (16, 16) and idx.min().item() == 0 and idx.max().item() == 48
    assert torch.equal(idx.diagonal(), torch.full((16,), 24))

    x_train, y_train = make_textures(384, g)
    x_test, y_test = make_textures(128, g)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.05)
    for epoch in range(5):
        model.train()
        perm = torch.randperm(len(x_train))
        for i in range(0, len(x_train), 32):
            idx_b = perm[i : i + 32]
            loss = F.cross_entropy(model(x_train[idx_b]), y_train[idx_b])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        model.eval()
        with torch.no_grad():
            acc = (model(x_test).argmax(1) == y_test).float().mean().item()
        print(f"epoch {epoch}: loss {loss.item():.3f} test accuracy {acc:.3f}")
    assert acc > 0.7, acc  # chance is 1/3
    assert model.blocks[1].attn.relative_position_bias_table.grad is not None

    # DropPath: in training, each sample is either zeroed or scaled by 1 / keep_prob.
    dp = DropPath(0.5).train()
    out = dp(torch.ones(1000, 3))
    values = set(out.unique().tolist())
    assert values <= {0.0, 2.0}, values
    assert 0.4 < (out[:, 0] == 0).float().mean().item() < 0.6


if __name__ == "__main__":
    main()
