"""A tour of flambeau-autograd: gradients, and a small model fitted by gradient descent."""

import flambeau as torch  # the PyTorch spelling works unchanged

print("== gradients ==")
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = (x * x + 2 * x).sum()
y.backward()
print("d/dx sum(x^2 + 2x) at", x.detach().tolist(), "=", x.grad.tolist())

print("\n== fitting y = 3x - 1 + noise with a 1-16-1 network ==")
torch.manual_seed(0)
inputs = torch.linspace(-2, 2, 64).reshape(64, 1)
targets = 3 * inputs - 1 + 0.1 * torch.randn(64, 1)
w1 = (torch.randn(1, 16) * 0.5).requires_grad_()
b1 = torch.zeros(16, requires_grad=True)
w2 = (torch.randn(16, 1) * 0.5).requires_grad_()
b2 = torch.zeros(1, requires_grad=True)
params = [w1, b1, w2, b2]
for step in range(301):
    hidden = torch.tanh(inputs @ w1 + b1)
    loss = ((hidden @ w2 + b2 - targets) ** 2).mean()
    for p in params:
        p.grad = None
    loss.backward()
    with torch.autograd.no_grad():
        for p in params:
            p.sub_(0.1 * p.grad)
    if step % 100 == 0:
        print(f"step {step:3d}  loss {loss.item():.4f}")
