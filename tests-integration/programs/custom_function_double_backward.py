"""Custom autograd.Functions with double backward, used in a gradient-penalty model.

In the style of PyTorch's "Double Backward with Custom Functions" tutorial: a Softplus-
like activation (a smooth, memory-saving activation of the kind efficientnet/swish
repos write by hand) as a torch.autograd.Function whose forward saves its input with
ctx.save_for_backward and whose backward is written with differentiable operations, so
a second derivative exists; a second Function whose backward calls another custom
Function (the tutorial's "custom function in backward" pattern), with
ctx.needs_input_grad and ctx.mark_non_differentiable; and one marked
@once_differentiable. torch.autograd.gradcheck and gradgradcheck verify them in double
precision. A small energy-based regressor then trains with an input-gradient penalty
(torch.autograd.grad(create_graph=True)), which needs the double backward. Checks the
derivatives against closed forms, that once_differentiable refuses a double backward,
that the model learned, and that a checkpoint round-trips.
"""

import os
import tempfile

import flambeau as torch
import flambeau.nn as nn
from flambeau.autograd import Function
from flambeau.autograd.function import once_differentiable


class SmoothReLU(Function):
    """softplus(x) = log(1 + e^x); backward written with differentiable ops."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.nn.functional.softplus(x)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * torch.sigmoid(x)


class SigmoidGrad(Function):
    """s * (1 - s): the sigmoid's derivative, with its own backward."""

    @staticmethod
    def forward(ctx, s):
        ctx.save_for_backward(s)
        return s * (1 - s)

    @staticmethod
    def backward(ctx, grad_out):
        (s,) = ctx.saved_tensors
        return grad_out * (1 - 2 * s)


class Sigmoid(Function):
    @staticmethod
    def forward(ctx, x):
        s = torch.sigmoid(x)
        ctx.save_for_backward(s)
        return s

    @staticmethod
    def backward(ctx, grad_out):
        (s,) = ctx.saved_tensors
        if not ctx.needs_input_grad[0]:
            return None
        return grad_out * SigmoidGrad.apply(s)


class ArgmaxWithScore(Function):
    """Returns the max value and its index; the index is non-differentiable."""

    @staticmethod
    def forward(ctx, x):
        value, index = x.max(dim=-1)
        ctx.mark_non_differentiable(index)
        ctx.save_for_backward(x, index)
        return value, index

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_value, grad_index):
        x, index = ctx.saved_tensors
        grad = torch.zeros_like(x)
        grad.scatter_(-1, index.unsqueeze(-1), grad_value.unsqueeze(-1))
        return grad


class Energy(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(2, 32)
        self.fc2 = nn.Linear(32, 32)
        self.fc3 = nn.Linear(32, 1)

    def forward(self, x):
        h = SmoothReLU.apply(self.fc1(x))
        h = Sigmoid.apply(self.fc2(h))
        return self.fc3(h).squeeze(-1)


def check_functions():
    x = torch.randn(5, dtype=torch.double, requires_grad=True)
    assert torch.autograd.gradcheck(SmoothReLU.apply, (x,))
    assert torch.autograd.gradgradcheck(SmoothReLU.apply, (x,))
    assert torch.autograd.gradcheck(Sigmoid.apply, (x,))
    assert torch.autograd.gradgradcheck(Sigmoid.apply, (x,))

    # Closed forms: softplus' = sigmoid, softplus'' = sigmoid * (1 - sigmoid).
    y = SmoothReLU.apply(x)
    (g1,) = torch.autograd.grad(y.sum(), x, create_graph=True)
    (g2,) = torch.autograd.grad(g1.sum(), x)
    s = torch.sigmoid(x.detach())
    assert torch.allclose(g1, s) and torch.allclose(g2, s * (1 - s))
    # sigmoid'' = s (1 - s) (1 - 2 s)
    (h1,) = torch.autograd.grad(Sigmoid.apply(x).sum(), x, create_graph=True)
    (h2,) = torch.autograd.grad(h1.sum(), x)
    assert torch.allclose(h2, s * (1 - s) * (1 - 2 * s))

    scores = torch.tensor([[1.0, 3.0, 2.0], [0.5, -1.0, 4.0]], requires_grad=True)
    value, index = ArgmaxWithScore.apply(scores)
    assert index.tolist() == [1, 2] and not index.requires_grad and index.dtype == torch.long
    (gv,) = torch.autograd.grad(value.sum(), scores, create_graph=True)
    assert gv.tolist() == [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    try:
        torch.autograd.grad(gv.sum(), scores)
    except RuntimeError as e:
        assert "once_differentiable" in str(e) or "does not require grad" in str(e), e
    else:
        raise AssertionError("double backward through once_differentiable did not raise")


def main():
    torch.manual_seed(0)
    check_functions()

    g = torch.Generator().manual_seed(0)
    x = torch.rand(512, 2, generator=g) * 4 - 2
    y = torch.sin(x[:, 0]) * torch.cos(x[:, 1])

    model = Energy()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    first = None
    for step in range(200):
        idx = torch.randint(0, 512, (64,), generator=g)
        xb = x[idx].requires_grad_(True)
        pred = model(xb)
        mse = (pred - y[idx]).pow(2).mean()
        (gx,) = torch.autograd.grad(pred.sum(), xb, create_graph=True)
        penalty = gx.pow(2).sum(-1).mean()
        loss = mse + 1e-3 * penalty
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if first is None:
            first = mse.item()
        if step % 50 == 0:
            print(f"step {step}: mse {mse.item():.4f} penalty {penalty.item():.4f}")
    with torch.no_grad():
        full = (model(x) - y).pow(2).mean().item()
    print(f"mse {first:.4f} -> {full:.4f}")
    assert full < first / 4 and full < 0.05, (first, full)
    assert all(p.grad is not None for p in model.parameters())

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "energy.pt")
        torch.save({"model": model.state_dict(), "optim": optimizer.state_dict()}, path)
        ckpt = torch.load(path, weights_only=True)
    restored = Energy()
    restored.load_state_dict(ckpt["model"])
    opt2 = torch.optim.Adam(restored.parameters(), lr=1e-2)
    opt2.load_state_dict(ckpt["optim"])
    with torch.no_grad():
        assert torch.equal(restored(x), model(x))
    assert opt2.state_dict()["state"][0]["step"] == optimizer.state_dict()["state"][0]["step"]


if __name__ == "__main__":
    main()
