"""Sub-pixel convolution super-resolution (ESPCN) on synthetic smooth images.

Follows pytorch/examples' super_resolution: a net of convolutions ending in
nn.PixelShuffle, orthogonal initialization scaled by init.calculate_gain("relu"),
MSELoss, Adam, PSNR via math.log10, a bicubic F.interpolate baseline, a
torch.utils.data Dataset/DataLoader pair, and a whole-model torch.save.
"""

import math

import flambeau as torch
import flambeau.nn.functional as F
from flambeau import nn
from flambeau.nn import init
from flambeau.utils.data import DataLoader, Dataset

UPSCALE = 2
HR = 16


class Net(nn.Module):
    def __init__(self, upscale_factor):
        super().__init__()
        self.relu = nn.ReLU()
        self.conv1 = nn.Conv2d(1, 32, (5, 5), (1, 1), (2, 2))
        self.conv2 = nn.Conv2d(32, 32, (3, 3), (1, 1), (1, 1))
        self.conv3 = nn.Conv2d(32, 16, (3, 3), (1, 1), (1, 1))
        self.conv4 = nn.Conv2d(16, upscale_factor**2, (3, 3), (1, 1), (1, 1))
        self.pixel_shuffle = nn.PixelShuffle(upscale_factor)
        self._initialize_weights()

    def forward(self, x):
        x = self.relu(self.conv1(x))
        x = self.relu(self.conv2(x))
        x = self.relu(self.conv3(x))
        return self.pixel_shuffle(self.conv4(x))

    def _initialize_weights(self):
        init.orthogonal_(self.conv1.weight, init.calculate_gain("relu"))
        init.orthogonal_(self.conv2.weight, init.calculate_gain("relu"))
        init.orthogonal_(self.conv3.weight, init.calculate_gain("relu"))
        init.orthogonal_(self.conv4.weight)


class SmoothImages(Dataset):
    """Sums of random low-frequency sinusoids; input is the 2x average-pooled image."""

    def __init__(self, n, seed):
        g = torch.Generator().manual_seed(seed)
        coords = torch.linspace(0, 1, HR)
        yy, xx = torch.meshgrid(coords, coords, indexing="ij")
        freq = torch.rand(n, 3, 2, generator=g) * 4
        phase = torch.rand(n, 3, generator=g) * 2 * math.pi
        img = torch.zeros(n, HR, HR)
        for k in range(3):
            img += torch.sin(
                2 * math.pi * (freq[:, k, 0, None, None] * xx + freq[:, k, 1, None, None] * yy)
                + phase[:, k, None, None]
            )
        self.hr = ((img / 6) + 0.5).clamp(0, 1).unsqueeze(1)
        self.lr = F.avg_pool2d(self.hr, UPSCALE)

    def __len__(self):
        return len(self.hr)

    def __getitem__(self, index):
        return self.lr[index], self.hr[index]


def main():
    torch.manual_seed(123)
    train_set, test_set = SmoothImages(256, 0), SmoothImages(64, 1)
    training_data_loader = DataLoader(dataset=train_set, num_workers=0, batch_size=16, shuffle=True)
    testing_data_loader = DataLoader(dataset=test_set, num_workers=0, batch_size=64, shuffle=False)
    model = Net(upscale_factor=UPSCALE)
    # Orthogonal init: the flattened weight rows are orthonormal, scaled by the ReLU gain.
    w = model.conv2.weight.view(32, -1)
    gain = init.calculate_gain("relu")
    assert abs(gain - math.sqrt(2.0)) < 1e-12
    assert torch.allclose(w @ w.t(), gain**2 * torch.eye(32), atol=1e-4)

    criterion = nn.MSELoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)

    def test():
        avg_psnr = 0.0
        with torch.no_grad():
            for input, target in testing_data_loader:
                prediction = model(input)
                mse = criterion(prediction, target)
                avg_psnr += 10 * math.log10(1 / mse.item())
        return avg_psnr / len(testing_data_loader)

    lr, hr = next(iter(testing_data_loader))
    assert lr.shape == (64, 1, HR // 2, HR // 2) and hr.shape == (64, 1, HR, HR)
    bicubic = F.interpolate(lr, scale_factor=UPSCALE, mode="bicubic", align_corners=False)
    bicubic_psnr = 10 * math.log10(1 / criterion(bicubic, hr).item())
    print(f"bicubic baseline PSNR {bicubic_psnr:.2f} dB")
    psnr0 = test()
    print(f"initial PSNR {psnr0:.2f} dB")
    for epoch in range(1, 9):
        epoch_loss = 0.0
        for _iteration, batch in enumerate(training_data_loader, 1):
            input, target = batch[0], batch[1]
            optimizer.zero_grad()
            loss = criterion(model(input), target)
            epoch_loss += loss.item()
            loss.backward()
            optimizer.step()
        psnr = test()
        print(
            f"===> Epoch {epoch} Complete: Avg. Loss: {epoch_loss / len(training_data_loader):.5f}"
            f" Avg. PSNR: {psnr:.2f} dB"
        )
    assert psnr > psnr0 + 5, (psnr0, psnr)
    assert psnr > bicubic_psnr - 3, (bicubic_psnr, psnr)

    # PixelShuffle is the inverse of PixelUnshuffle, and moves channel blocks into space.
    x = torch.arange(16.0).view(1, 4, 2, 2)
    y = nn.PixelShuffle(2)(x)
    assert y.shape == (1, 1, 4, 4)
    assert y[0, 0, 0].tolist() == [0.0, 4.0, 1.0, 5.0]
    assert torch.equal(nn.PixelUnshuffle(2)(y), x)

    # The example saves the whole model object.
    torch.save(model, "model_epoch_8.pth")
    loaded = torch.load("model_epoch_8.pth", weights_only=False)
    assert isinstance(loaded, Net)
    with torch.no_grad():
        assert torch.equal(loaded(lr[:2]), model(lr[:2]))


if __name__ == "__main__":
    main()
