"""A small U-Net segmenting synthetic discs from a noisy background.

In the style of milesial/Pytorch-UNet: DoubleConv blocks (Conv-BN-ReLU twice,
bias=False), Down (MaxPool2d + DoubleConv), Up (ConvTranspose2d, F.pad to match
the skip connection's size, torch.cat), an OutConv 1x1; BCEWithLogitsLoss plus
a soft Dice loss; RMSprop with foreach, ReduceLROnPlateau on the validation
Dice; torch.utils.data random_split and DataLoader over a TensorDataset; and a
check that the net handles odd input sizes.
"""

import flambeau as torch
import flambeau.nn.functional as F
from flambeau import nn, optim
from flambeau.utils.data import DataLoader, TensorDataset, random_split


class DoubleConv(nn.Module):
    def __init__(self, in_channels, out_channels, mid_channels=None):
        super().__init__()
        if not mid_channels:
            mid_channels = out_channels
        self.double_conv = nn.Sequential(
            nn.Conv2d(in_channels, mid_channels, kernel_size=3, padding=1, bias=False),
            nn.BatchNorm2d(mid_channels),
            nn.ReLU(inplace=True),
            nn.Conv2d(mid_channels, out_channels, kernel_size=3, padding=1, bias=False),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(inplace=True),
        )

    def forward(self, x):
        return self.double_conv(x)


class Down(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.maxpool_conv = nn.Sequential(nn.MaxPool2d(2), DoubleConv(in_channels, out_channels))

    def forward(self, x):
        return self.maxpool_conv(x)


class Up(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.up = nn.ConvTranspose2d(in_channels, in_channels // 2, kernel_size=2, stride=2)
        self.conv = DoubleConv(in_channels, out_channels)

    def forward(self, x1, x2):
        x1 = self.up(x1)
        diffY = x2.size()[2] - x1.size()[2]
        diffX = x2.size()[3] - x1.size()[3]
        x1 = F.pad(x1, [diffX // 2, diffX - diffX // 2, diffY // 2, diffY - diffY // 2])
        x = torch.cat([x2, x1], dim=1)
        return self.conv(x)


class UNet(nn.Module):
    def __init__(self, n_channels, n_classes, width=8):
        super().__init__()
        self.n_channels = n_channels
        self.n_classes = n_classes
        self.inc = DoubleConv(n_channels, width)
        self.down1 = Down(width, 2 * width)
        self.down2 = Down(2 * width, 4 * width)
        self.up1 = Up(4 * width, 2 * width)
        self.up2 = Up(2 * width, width)
        self.outc = nn.Conv2d(width, n_classes, kernel_size=1)

    def forward(self, x):
        x1 = self.inc(x)
        x2 = self.down1(x1)
        x3 = self.down2(x2)
        x = self.up1(x3, x2)
        x = self.up2(x, x1)
        return self.outc(x)


def dice_coeff(input, target, epsilon=1e-6):
    sum_dim = (-1, -2)
    inter = 2 * (input * target).sum(dim=sum_dim)
    sets_sum = input.sum(dim=sum_dim) + target.sum(dim=sum_dim)
    sets_sum = torch.where(sets_sum == 0, inter, sets_sum)
    dice = (inter + epsilon) / (sets_sum + epsilon)
    return dice.mean()


def dice_loss(input, target):
    return 1 - dice_coeff(input, target)


def make_discs(n, side, generator):
    yy, xx = torch.meshgrid(torch.arange(side).float(), torch.arange(side).float(), indexing="ij")
    centers = torch.rand(n, 2, generator=generator) * (side - 8) + 4
    radii = torch.rand(n, generator=generator) * 3 + 2
    dist = ((yy - centers[:, 0, None, None]) ** 2 + (xx - centers[:, 1, None, None]) ** 2).sqrt()
    masks = (dist < radii[:, None, None]).float()
    images = masks * 0.6 + torch.randn(n, side, side, generator=generator) * 0.25
    return images.unsqueeze(1), masks.unsqueeze(1)


def main():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    images, masks = make_discs(192, 24, g)
    dataset = TensorDataset(images, masks)
    n_val = int(len(dataset) * 0.25)
    train_set, val_set = random_split(
        dataset, [len(dataset) - n_val, n_val], generator=torch.Generator().manual_seed(0)
    )
    assert len(train_set) == 144 and len(val_set) == 48
    train_loader = DataLoader(train_set, shuffle=True, batch_size=16, drop_last=True)
    val_loader = DataLoader(val_set, shuffle=False, batch_size=16, drop_last=False)

    model = UNet(n_channels=1, n_classes=1)
    model = model.to(memory_format=torch.channels_last)
    optimizer = optim.RMSprop(
        model.parameters(), lr=1e-3, weight_decay=1e-8, momentum=0.9, foreach=True
    )
    scheduler = optim.lr_scheduler.ReduceLROnPlateau(optimizer, "max", patience=2)
    criterion = nn.BCEWithLogitsLoss()

    def evaluate():
        model.eval()
        dice_score = 0
        with torch.no_grad():
            for image, mask_true in val_loader:
                image = image.to(memory_format=torch.channels_last)
                mask_pred = (F.sigmoid(model(image)) > 0.5).float()
                dice_score += dice_coeff(mask_pred, mask_true)
        model.train()
        return dice_score / max(len(val_loader), 1)

    dice0 = evaluate()
    print(f"initial validation Dice {dice0.item():.3f}")
    for epoch in range(1, 7):
        model.train()
        epoch_loss = 0
        for images_b, true_masks in train_loader:
            images_b = images_b.to(memory_format=torch.channels_last)
            masks_pred = model(images_b)
            loss = criterion(masks_pred, true_masks)
            loss += dice_loss(F.sigmoid(masks_pred), true_masks)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            epoch_loss += loss.item()
        val_score = evaluate()
        scheduler.step(val_score)
        print(
            f"epoch {epoch}: loss {epoch_loss / len(train_loader):.4f}"
            f" val Dice {val_score.item():.3f} lr {optimizer.param_groups[0]['lr']:.1e}"
        )
    assert val_score.item() > 0.8, val_score
    assert isinstance(val_score, torch.Tensor) and val_score.dim() == 0

    # Odd spatial sizes: Up pads the upsampled map to the skip connection's size.
    model.eval()
    with torch.no_grad():
        out = model(torch.randn(2, 1, 23, 29))
    assert out.shape == (2, 1, 23, 29), out.shape

    # Dice of a perfect prediction is 1; of an empty prediction against empty target, 1.
    m = masks[:4]
    assert abs(dice_coeff(m, m).item() - 1) < 1e-6
    z = torch.zeros(2, 1, 5, 5)
    assert abs(dice_coeff(z, z).item() - 1) < 1e-6

    state_dict = model.state_dict()
    state_dict["mask_values"] = [0, 1]
    torch.save(state_dict, "checkpoint_epoch6.pth")
    loaded = torch.load("checkpoint_epoch6.pth")
    mask_values = loaded.pop("mask_values")
    assert mask_values == [0, 1]
    fresh = UNet(n_channels=1, n_classes=1)
    fresh.load_state_dict(loaded)
    fresh.eval()
    x = images[:3]
    with torch.no_grad():
        assert torch.allclose(fresh(x), model(x), atol=1e-5)


if __name__ == "__main__":
    main()
