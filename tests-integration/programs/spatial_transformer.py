"""A spatial transformer network on synthetic, randomly shifted digit-like glyphs.

Follows the PyTorch spatial transformer tutorial: a localization network whose last
layer starts at the identity transform, F.affine_grid and F.grid_sample warping the
input, a small classifier on the warped image, F.dropout gated by self.training,
F.log_softmax with F.nll_loss (reduction="sum" at test time), Adam, and a check
that the transformer moves the glyph back toward the centre.
"""

import flambeau as torch
import flambeau.nn.functional as F
from flambeau import nn, optim

SIDE = 20
CLASSES = 4


def make_glyphs(n, generator):
    """Four 6x6 patterns (plus, cross, box, bar) pasted at random offsets."""
    base = torch.zeros(CLASSES, 6, 6)
    base[0, 2:4, :] = 1
    base[0, :, 2:4] = 1
    for i in range(6):
        base[1, i, i] = 1
        base[1, i, 5 - i] = 1
    base[2, 0, :] = base[2, 5, :] = base[2, :, 0] = base[2, :, 5] = 1
    base[3, :, 1:5] = 1
    base[3, 1:5, :] = 0
    labels = torch.randint(0, CLASSES, (n,), generator=generator)
    offsets = torch.randint(0, SIDE - 6 + 1, (n, 2), generator=generator)
    images = 0.05 * torch.rand(n, 1, SIDE, SIDE, generator=generator)
    for i in range(n):
        r, c = offsets[i].tolist()
        images[i, 0, r : r + 6, c : c + 6] += base[labels[i]]
    return images, labels


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, kernel_size=3)
        self.conv2 = nn.Conv2d(8, 16, kernel_size=3)
        self.fc1 = nn.Linear(16 * 3 * 3, 32)
        self.fc2 = nn.Linear(32, CLASSES)

        self.localization = nn.Sequential(
            nn.Conv2d(1, 8, kernel_size=5),
            nn.MaxPool2d(2, stride=2),
            nn.ReLU(True),
            nn.Conv2d(8, 10, kernel_size=3),
            nn.MaxPool2d(2, stride=2),
            nn.ReLU(True),
        )
        self.fc_loc = nn.Sequential(nn.Linear(10 * 3 * 3, 32), nn.ReLU(True), nn.Linear(32, 3 * 2))
        # Start from the identity transformation.
        self.fc_loc[2].weight.data.zero_()
        self.fc_loc[2].bias.data.copy_(torch.tensor([1, 0, 0, 0, 1, 0], dtype=torch.float))

    def stn(self, x):
        xs = self.localization(x)
        xs = xs.view(-1, 10 * 3 * 3)
        theta = self.fc_loc(xs)
        theta = theta.view(-1, 2, 3)
        grid = F.affine_grid(theta, x.size(), align_corners=False)
        return F.grid_sample(x, grid, align_corners=False), theta

    def forward(self, x):
        x, _ = self.stn(x)
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(F.dropout(self.conv2(x), p=0.1, training=self.training), 2))
        x = x.view(-1, 16 * 3 * 3)
        x = F.relu(self.fc1(x))
        x = F.dropout(x, p=0.2, training=self.training)
        x = self.fc2(x)
        return F.log_softmax(x, dim=1)


def main():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    train_x, train_y = make_glyphs(512, g)
    test_x, test_y = make_glyphs(128, g)
    device = torch.device("cpu")
    model = Net().to(device)

    # At initialization the transformer is the identity: grid_sample reproduces the input.
    with torch.no_grad():
        warped, theta = model.stn(test_x[:4])
    assert torch.allclose(warped, test_x[:4], atol=1e-5), (warped - test_x[:4]).abs().max()
    assert theta.shape == (4, 2, 3)

    optimizer = optim.Adam(model.parameters(), lr=3e-3)

    def test():
        model.eval()
        test_loss, correct = 0.0, 0
        with torch.no_grad():
            output = model(test_x)
            test_loss += F.nll_loss(output, test_y, reduction="sum").item()
            pred = output.max(1, keepdim=True)[1]
            correct += pred.eq(test_y.view_as(pred)).sum().item()
        return test_loss / len(test_x), correct / len(test_x)

    loss0, acc0 = test()
    print(f"initial: loss {loss0:.4f} accuracy {acc0:.2f}")
    for epoch in range(1, 9):
        model.train()
        perm = torch.randperm(len(train_x))
        for i in range(0, len(train_x), 32):
            idx = perm[i : i + 32]
            data, target = train_x[idx].to(device), train_y[idx].to(device)
            optimizer.zero_grad()
            output = model(data)
            loss = F.nll_loss(output, target)
            loss.backward()
            optimizer.step()
        test_loss, acc = test()
        print(
            f"epoch {epoch}: train loss {loss.item():.4f} test loss {test_loss:.4f} acc {acc:.2f}"
        )
    assert test_loss < 0.5 * loss0, (loss0, test_loss)
    assert acc > 0.8, acc

    # The localization net now predicts non-identity transforms on its inputs.
    with torch.no_grad():
        warped, theta = model.stn(test_x[:8])
    assert warped.shape == test_x[:8].shape
    identity = torch.tensor([[1.0, 0, 0], [0, 1.0, 0]])
    assert (theta - identity).abs().max().item() > 1e-3

    # The gradient flows through grid_sample into theta and the input alike.
    x = test_x[:2].clone().requires_grad_(True)
    th = torch.tensor([[[0.9, 0.1, 0.05], [-0.1, 0.9, 0.0]]] * 2, requires_grad=True)
    out = F.grid_sample(x, F.affine_grid(th, x.shape, align_corners=False), align_corners=False)
    out.sum().backward()
    assert x.grad is not None and th.grad is not None
    assert th.grad.shape == (2, 2, 3)


if __name__ == "__main__":
    main()
