"""A fused custom activation in C++: forward and backward kernels, a custom operator, an
nn.Module, a few training steps and a gradient check.

    python packages/cpp-extension/examples/demo_fused_activation.py

The first run compiles swish.cpp (a few seconds); later runs import the cached module.
"""

from pathlib import Path

import flambeau as torch
from flambeau import nn
from flambeau.utils.cpp_extension import load

# 1. Build (or load from the cache) the C++ kernels.
_ext = load("swish_ext", [Path(__file__).with_name("swish.cpp")])

# 2. Make them an operator: flambeau.ops.flambeau_examples.swish, listed in ops_table().
_lib = torch.library.Library("flambeau_examples", "DEF")
_lib.define("swish(Tensor x, float beta=1.0) -> Tensor")
_lib.impl("swish", _ext.swish_forward, "CPU")  # the bound C++ function is the CPU kernel


def _setup_context(ctx, inputs, output):
    x, beta = inputs
    ctx.save_for_backward(x)
    ctx.beta = beta


def _backward(ctx, grad):
    (x,) = ctx.saved_tensors
    return _ext.swish_backward(grad, x, ctx.beta), None  # no gradient for beta


torch.library.register_autograd(
    "flambeau_examples::swish", _backward, setup_context=_setup_context, lib=_lib
)
swish = torch.ops.flambeau_examples.swish


class Swish(nn.Module):
    """x * sigmoid(beta * x), as one C++ kernel each way."""

    def __init__(self, beta: float = 1.0):
        super().__init__()
        self.beta = beta

    def forward(self, x):
        return swish(x, self.beta)


def main() -> None:
    torch.manual_seed(0)
    # The kernels agree with the composition of built-in operators...
    x = torch.randn(5, 4, dtype=torch.float64, requires_grad=True)
    expected = x * torch.sigmoid(1.5 * x)
    assert torch.allclose(swish(x, 1.5), expected)
    # ...and the registered derivative with finite differences.
    assert torch.autograd.gradcheck(lambda t: swish(t, 1.5), (x,))
    print("gradcheck passed")

    # Fit sin(x) on [-3, 3] with a small network using the C++ activation.
    xs = torch.linspace(-3, 3, 128).unsqueeze(1)
    ys = torch.sin(xs)
    model = nn.Sequential(nn.Linear(1, 32), Swish(), nn.Linear(32, 1))
    optimizer = torch.optim.Adam(model.parameters(), lr=0.02)
    for step in range(301):
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(xs), ys)
        loss.backward()
        optimizer.step()
        if step % 100 == 0:
            print(f"step {step:3d}  loss {loss.item():.5f}")
    assert loss.item() < 0.05, loss.item()


if __name__ == "__main__":
    main()
