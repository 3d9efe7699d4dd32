"""Differentially private SGD (DP-SGD) with per-sample gradients from torch.func.

In the style of Opacus-free DP-SGD code: torch.func.functional_call over detached
parameter and buffer dicts, grad_and_value of a single-example loss (unsqueezed into a
batch of one), vmap over the batch with in_dims=(None, None, 0, 0), each example's
gradient clipped to norm C by a per-sample factor, Gaussian noise of standard
deviation sigma * C added to the sum, the result written into .grad and stepped by an
ordinary torch.optim.SGD. Checks the per-sample gradients against a Python loop of
backward calls, torch.func.jacrev against autograd.functional.jacobian, jvp against a
finite difference, that clipping bounds every example's contribution, and that the
private model still learns.
"""

import flambeau as torch
import flambeau.nn as nn
import flambeau.nn.functional as F
from flambeau.func import functional_call, grad_and_value, jacrev, jvp, vmap

CLIP, SIGMA, BATCH = 1.0, 0.8, 64


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 3))
        self.register_buffer("scale", torch.tensor(0.5))

    def forward(self, x):
        return self.net(x * self.scale)


def make_data(n, generator):
    centers = torch.tensor([[2.0] * 4 + [0.0] * 4, [0.0] * 4 + [2.0] * 4, [-2.0] * 8])
    y = torch.randint(0, 3, (n,), generator=generator)
    return centers[y] + torch.randn(n, 8, generator=generator), y


def per_sample_grads(model, x, y):
    params = {k: v.detach() for k, v in model.named_parameters()}
    buffers = {k: v.detach() for k, v in model.named_buffers()}

    def compute_loss(params, buffers, sample, target):
        out = functional_call(model, (params, buffers), (sample.unsqueeze(0),))
        return F.cross_entropy(out, target.unsqueeze(0))

    grads, losses = vmap(grad_and_value(compute_loss), in_dims=(None, None, 0, 0))(
        params, buffers, x, y
    )
    return grads, losses


def dp_step(model, optimizer, x, y, generator):
    grads, losses = per_sample_grads(model, x, y)
    norms = torch.stack([g.flatten(1).norm(dim=1) for g in grads.values()], dim=1).norm(dim=1)
    factors = (CLIP / (norms + 1e-6)).clamp(max=1.0)
    for name, p in model.named_parameters():
        clipped = torch.einsum("b,b...->...", factors, grads[name])
        noise = torch.randn(p.shape, generator=generator) * SIGMA * CLIP
        p.grad = (clipped + noise) / x.size(0)
    optimizer.step()
    return losses.mean().item(), norms, factors


def accuracy(model, x, y):
    with torch.no_grad():
        return (model(x).argmax(1) == y).float().mean().item()


def main():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    x, y = make_data(2048, g)
    x_test, y_test = make_data(512, g)
    model = Classifier()

    # vmap(grad) equals one backward per example.
    grads, losses = per_sample_grads(model, x[:5], y[:5])
    for i in range(5):
        model.zero_grad()
        loss = F.cross_entropy(model(x[i : i + 1]), y[i : i + 1])
        loss.backward()
        assert abs(loss.item() - losses[i].item()) < 1e-6
        for name, p in model.named_parameters():
            assert torch.allclose(grads[name][i], p.grad, atol=1e-6), name
    assert grads["net.0.weight"].shape == (5, 32, 8)
    model.zero_grad()

    # jacrev of the logits in the input, against autograd.functional.jacobian.
    def logits_of(sample):
        return model(sample.unsqueeze(0)).squeeze(0)

    J = jacrev(logits_of)(x[0])
    assert J.shape == (3, 8)
    assert torch.allclose(J, torch.autograd.functional.jacobian(logits_of, x[0]), atol=1e-6)
    # jvp against a central difference along a direction.
    v = torch.randn(8)
    _, tangent = jvp(logits_of, (x[0],), (v,))
    eps = 1e-3
    fd = (logits_of(x[0] + eps * v) - logits_of(x[0] - eps * v)) / (2 * eps)
    assert torch.allclose(tangent, fd, atol=1e-3), (tangent, fd)
    assert torch.allclose(tangent, J @ v, atol=1e-5)

    optimizer = torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.5)
    noise_gen = torch.Generator().manual_seed(1)
    acc0 = accuracy(model, x_test, y_test)
    for step in range(150):
        idx = torch.randint(0, x.size(0), (BATCH,))
        loss, norms, factors = dp_step(model, optimizer, x[idx], y[idx], noise_gen)
        # Each example's clipped contribution has norm at most CLIP.
        assert ((norms * factors) <= CLIP + 1e-4).all()
        if step % 30 == 0:
            print(f"step {step}: loss {loss:.3f}, clipped {(norms > CLIP).float().mean():.2f}")
    acc = accuracy(model, x_test, y_test)
    print(f"private model accuracy {acc0:.3f} -> {acc:.3f}")
    assert acc > 0.85 and acc > acc0 + 0.3, (acc0, acc)


if __name__ == "__main__":
    main()
