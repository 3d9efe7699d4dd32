"""Hinton's forward-forward algorithm: each layer is trained alone on a local "goodness" loss.

The label is written into the first pixels of the input; positive data carry the
true label, negative data a wrong one. Exercises subclassing nn.Linear (passing
device/dtype through) with an optimizer per layer, Tensor.norm(2, 1, keepdim=True),
torch.mm with self.weight.T, advanced-index assignment x_[range(n), y] = x.max(),
torch.log1p(torch.exp(...)), Python sum() over tensors, per-label goodness
stacked with torch.cat and argmax, eq(...).float().mean().item() errors, and the
cuda -> xpu -> mps -> cpu device choice.
"""

import flambeau as torch
import flambeau.nn as nn
from flambeau.optim import Adam

CLASSES, DIM = 10, 40
if torch.cuda.is_available():
    device = torch.device("cuda")
elif torch.xpu.is_available():
    device = torch.device("xpu")
elif torch.backends.mps.is_available():
    device = torch.device("mps")
else:
    device = torch.device("cpu")


def get_y_neg(y):
    y_neg = y.clone()
    for idx, y_samp in enumerate(y):
        allowed_indices = list(range(CLASSES))
        allowed_indices.remove(y_samp.item())
        y_neg[idx] = torch.tensor(allowed_indices)[
            torch.randint(len(allowed_indices), size=(1,))
        ].item()
    return y_neg.to(device)


def overlay_y_on_x(x, y):
    """Replace the first CLASSES features with a one-hot of y, scaled by x.max()."""
    x_ = x.clone()
    x_[:, :CLASSES] *= 0.0
    x_[range(x.shape[0]), y] = x.max()
    return x_


class Layer(nn.Linear):
    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__(in_features, out_features, bias, device, dtype)
        self.relu = torch.nn.ReLU()
        self.opt = Adam(self.parameters(), lr=0.03)
        self.threshold = 2.0
        self.num_epochs = 60

    def forward(self, x):
        x_direction = x / (x.norm(2, 1, keepdim=True) + 1e-4)
        return self.relu(torch.mm(x_direction, self.weight.T) + self.bias.unsqueeze(0))

    def train(self, x_pos, x_neg):
        losses = []
        for _ in range(self.num_epochs):
            g_pos = self.forward(x_pos).pow(2).mean(1)
            g_neg = self.forward(x_neg).pow(2).mean(1)
            loss = torch.log1p(
                torch.exp(torch.cat([-g_pos + self.threshold, g_neg - self.threshold]))
            ).mean()
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            losses.append(loss.item())
        assert losses[-1] < losses[0], losses
        return self.forward(x_pos).detach(), self.forward(x_neg).detach()


class Net(torch.nn.Module):
    def __init__(self, dims):
        super().__init__()
        self.layers = []
        for d in range(len(dims) - 1):
            self.layers = self.layers + [Layer(dims[d], dims[d + 1]).to(device)]

    def predict(self, x):
        goodness_per_label = []
        for label in range(CLASSES):
            h = overlay_y_on_x(x, label)
            goodness = []
            for layer in self.layers:
                h = layer(h)
                goodness = goodness + [h.pow(2).mean(1)]
            goodness_per_label += [sum(goodness).unsqueeze(1)]
        goodness_per_label = torch.cat(goodness_per_label, 1)
        return goodness_per_label.argmax(1)

    def train(self, x_pos, x_neg):
        h_pos, h_neg = x_pos, x_neg
        for layer in self.layers:
            h_pos, h_neg = layer.train(h_pos, h_neg)


def make_data(centres, n):
    y = torch.randint(0, CLASSES, (n,))
    x = centres[y] + 0.3 * torch.randn(n, DIM)
    x[:, :CLASSES] = 0.0  # the label slots start empty, as MNIST's corner pixels are
    return x.to(device), y.to(device)


def main():
    torch.manual_seed(1234)
    centres = torch.randn(CLASSES, DIM)
    x, y = make_data(centres, 1000)
    x_te, y_te = make_data(centres, 300)

    net = Net([DIM, 100, 100])
    x_pos = overlay_y_on_x(x, y)
    y_neg = get_y_neg(y)
    assert not bool((y_neg == y).any())
    x_neg = overlay_y_on_x(x, y_neg)
    net.train(x_pos, x_neg)

    train_error = 1.0 - net.predict(x).eq(y).float().mean().item()
    test_error = 1.0 - net.predict(x_te).eq(y_te).float().mean().item()
    print("train error:", train_error)
    print("test error:", test_error)
    assert train_error < 0.2 and test_error < 0.2, (train_error, test_error)


if __name__ == "__main__":
    main()
