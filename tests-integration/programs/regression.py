"""Fits a random degree-4 polynomial with one Linear layer and hand-written SGD.

Exercises torch.cat of powers into polynomial features, x.mm(W) + b.item(),
F.smooth_l1_loss, Module.zero_grad, an update applied to param.data from
param.grad, and .view(-1).tolist() for printing the learned function.
"""

import flambeau as torch
import flambeau.nn.functional as F

POLY_DEGREE = 4
torch.manual_seed(42)
W_target = torch.randn(POLY_DEGREE, 1) * 5
b_target = torch.randn(1) * 5


def make_features(x):
    """Builds features i.e. a matrix with columns [x, x^2, x^3, x^4]."""
    x = x.unsqueeze(1)
    return torch.cat([x**i for i in range(1, POLY_DEGREE + 1)], 1)


def f(x):
    """Approximated function."""
    return x.mm(W_target) + b_target.item()


def poly_desc(W, b):
    """Creates a string description of a polynomial."""
    result = "y = "
    for i, w in enumerate(W):
        result += f"{w:+.2f} x^{i + 1} "
    result += f"{b[0]:+.2f}"
    return result


def get_batch(batch_size=32):
    """Builds a batch i.e. (x, f(x)) pair."""
    random = torch.randn(batch_size)
    x = make_features(random)
    y = f(x)
    return x, y


def main():
    fc = torch.nn.Linear(W_target.size(0), 1)
    for batch_idx in range(1, 20001):
        batch_x, batch_y = get_batch()
        fc.zero_grad()
        output = F.smooth_l1_loss(fc(batch_x), batch_y)
        loss = output.item()
        output.backward()
        for param in fc.parameters():
            param.data.add_(-0.1 * param.grad)
        if loss < 1e-3:
            print(f"Loss: {loss:.6f} after {batch_idx} batches")
            break

    print("==> Learned function:\t" + poly_desc(fc.weight.view(-1), fc.bias))
    print("==> Actual function:\t" + poly_desc(W_target.view(-1), b_target))
    assert loss < 1e-3, loss
    learned = fc.weight.view(-1).tolist() + fc.bias.tolist()
    actual = W_target.view(-1).tolist() + b_target.tolist()
    assert all(abs(a - b) < 0.3 for a, b in zip(learned, actual)), (learned, actual)


if __name__ == "__main__":
    main()
