"""A physics-informed network (PINN) solving Poisson's equation, with torch.func.

In the style of the functorch PINN examples: the network is made a pure function of its
parameters with torch.func.functional_call, the PDE residual u''(x) + f(x) = 0 uses
torch.func.hessian (and jacrev for u') per point, batched over collocation points with
torch.func.vmap, and the loss is differentiated with torch.func.grad over the parameter
dict; optimisation is a hand-written Adam on that dict (torch._foreach-free, tree_map
style). The same residual computed the classic way (torch.autograd.grad with
create_graph=True) must agree. Solves -u'' = pi^2 sin(pi x) on [0, 1] with u(0)=u(1)=0,
whose solution is sin(pi x), and checks the error and a checkpoint round-trip.
"""

import math
import os
import tempfile

import flambeau as torch
import flambeau.nn as nn
from flambeau.func import functional_call, grad, hessian, jacrev, vmap


class MLP(nn.Module):
    def __init__(self, width=16):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(1, width), nn.Tanh(), nn.Linear(width, width), nn.Tanh(), nn.Linear(width, 1)
        )

    def forward(self, x):
        return self.net(x)


def source(x):
    return math.pi**2 * torch.sin(math.pi * x)


def make_u(model):
    def u(params, x):
        # x: a scalar point -> scalar u(x)
        return functional_call(model, params, (x.reshape(1, 1),)).squeeze()

    return u


def residual_func(model, params, xs):
    u = make_u(model)
    u_xx = vmap(hessian(u, argnums=1), in_dims=(None, 0))(params, xs)
    return u_xx + source(xs)


def residual_autograd(model, xs):
    x = xs.clone().unsqueeze(-1).requires_grad_(True)
    out = model(x)
    (u_x,) = torch.autograd.grad(out.sum(), x, create_graph=True)
    (u_xx,) = torch.autograd.grad(u_x.sum(), x, create_graph=True)
    return u_xx.squeeze(-1) + source(xs)


def main():
    torch.manual_seed(0)
    model = MLP()
    params = {k: v.detach() for k, v in model.named_parameters()}
    u = make_u(model)

    xs = torch.linspace(0.05, 0.95, 7)
    assert torch.allclose(residual_func(model, params, xs), residual_autograd(model, xs), atol=1e-4)
    du = vmap(jacrev(u, argnums=1), in_dims=(None, 0))(params, xs)
    x = xs.clone().unsqueeze(-1).requires_grad_(True)
    (du_ref,) = torch.autograd.grad(model(x).sum(), x)
    assert torch.allclose(du, du_ref.squeeze(-1), atol=1e-5)

    boundary = torch.tensor([0.0, 1.0])

    def loss_fn(params, xs):
        pde = residual_func(model, params, xs).pow(2).mean()
        bc = vmap(u, in_dims=(None, 0))(params, boundary).pow(2).mean()
        return pde + 10.0 * bc

    grad_fn = grad(loss_fn)
    # Adam by hand on the parameter dict.
    lr, b1, b2, eps = 2e-2, 0.9, 0.999, 1e-8
    m = {k: torch.zeros_like(v) for k, v in params.items()}
    v = {k: torch.zeros_like(p) for k, p in params.items()}
    g = torch.Generator().manual_seed(1)
    first = None
    for step in range(1, 151):
        pts = torch.rand(32, generator=g)
        grads = grad_fn(params, pts)
        for k in params:
            m[k] = b1 * m[k] + (1 - b1) * grads[k]
            v[k] = b2 * v[k] + (1 - b2) * grads[k] ** 2
            m_hat, v_hat = m[k] / (1 - b1**step), v[k] / (1 - b2**step)
            params[k] = params[k] - lr * m_hat / (v_hat.sqrt() + eps)
        if step == 1:
            first = loss_fn(params, pts).item()
        if step % 50 == 0:
            print(f"step {step}: loss {loss_fn(params, pts).item():.5f}")

    grid = torch.linspace(0, 1, 101)
    with torch.no_grad():
        pred = vmap(u, in_dims=(None, 0))(params, grid)
    err = (pred - torch.sin(math.pi * grid)).abs().max().item()
    print(f"max error against sin(pi x): {err:.4f}")
    last = loss_fn(params, torch.rand(256, generator=g)).item()
    assert last < first / 20, (first, last)
    assert err < 0.1, err

    # Back into the module, through the usual state_dict path.
    model.load_state_dict(params)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "pinn.pt")
        torch.save(model.state_dict(), path)
        restored = MLP()
        restored.load_state_dict(torch.load(path, weights_only=True))
    with torch.no_grad():
        assert torch.allclose(restored(grid.unsqueeze(-1)).squeeze(-1), pred, atol=1e-6)
    res = residual_autograd(restored, torch.linspace(0.1, 0.9, 9)).abs().max().item()
    assert res < 1.0, res


if __name__ == "__main__":
    main()
