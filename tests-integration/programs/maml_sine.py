"""Model-agnostic meta-learning (MAML) on sine-wave regression, with torch.func.

In the style of the MAML examples: inner-loop adaptation written with
torch.func.functional_call over a dict of parameters, fast weights computed with
torch.autograd.grad(create_graph=True) so the meta-gradient flows through the
inner step (second order), a meta-batch of tasks averaged into the outer loss;
then the torch.func per-sample-gradient recipe (vmap(grad(loss)) with
in_dims=(None, 0, 0)) checked against a Python loop, and model ensembling with
stack_module_state + vmap.
"""

import copy
import math

import flambeau as torch
import flambeau.nn.functional as F
from flambeau import nn
from flambeau.func import functional_call, grad, stack_module_state, vmap


class SineNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(1, 40), nn.ReLU(), nn.Linear(40, 40), nn.ReLU(), nn.Linear(40, 1)
        )

    def forward(self, x):
        return self.net(x)


def sample_task(generator):
    amplitude = 0.5 + 1.5 * torch.rand(1, generator=generator).item()
    phase = math.pi * torch.rand(1, generator=generator).item()

    def draw(n):
        x = torch.rand(n, 1, generator=generator) * 10 - 5
        return x, amplitude * torch.sin(x + phase)

    return draw


def adapt(model, params, x, y, inner_lr, steps, create_graph):
    for _ in range(steps):
        loss = F.mse_loss(functional_call(model, params, (x,)), y)
        grads = torch.autograd.grad(loss, list(params.values()), create_graph=create_graph)
        params = {name: p - inner_lr * g for (name, p), g in zip(params.items(), grads)}
    return params


def main():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    model = SineNet()
    meta_opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    inner_lr, k_shot = 0.01, 10

    # Second-order: the meta-gradient of one inner step includes the Hessian term.
    draw = sample_task(g)
    x, y = draw(k_shot)
    params = dict(model.named_parameters())
    fast = adapt(model, params, x, y, inner_lr, 1, create_graph=True)
    assert all(p.grad_fn is not None for p in fast.values())
    xq, yq = draw(k_shot)
    meta_grads = torch.autograd.grad(
        F.mse_loss(functional_call(model, fast, (xq,)), yq), list(params.values())
    )
    fast_fo = adapt(model, params, x, y, inner_lr, 1, create_graph=False)
    first_order = torch.autograd.grad(
        F.mse_loss(functional_call(model, fast_fo, (xq,)), yq),
        list(fast_fo.values()),
        allow_unused=True,
    )
    differs = any(
        not torch.allclose(a, b) for a, b in zip(meta_grads, first_order) if b is not None
    )
    assert differs

    eval_tasks = [sample_task(torch.Generator().manual_seed(100 + i)) for i in range(20)]
    eval_sets = [(d(k_shot), d(50)) for d in eval_tasks]

    def evaluate():
        total = 0.0
        for (xs, ys), (xq, yq) in eval_sets:
            fast = adapt(
                model, dict(model.named_parameters()), xs, ys, inner_lr, 5, create_graph=False
            )
            with torch.no_grad():
                total += F.mse_loss(functional_call(model, fast, (xq,)), yq).item()
        return total / len(eval_sets)

    before = evaluate()
    print(f"post-adaptation query loss before meta-training {before:.3f}")
    for it in range(300):
        meta_opt.zero_grad()
        meta_loss = 0.0
        for _ in range(4):
            draw = sample_task(g)
            xs, ys = draw(k_shot)
            xq, yq = draw(k_shot)
            fast = adapt(
                model, dict(model.named_parameters()), xs, ys, inner_lr, 1, create_graph=True
            )
            meta_loss = meta_loss + F.mse_loss(functional_call(model, fast, (xq,)), yq)
        (meta_loss / 4).backward()
        meta_opt.step()
        if it % 100 == 0:
            print(f"iter {it}: meta loss {meta_loss.item() / 4:.3f}")
    after = evaluate()
    print(f"post-adaptation query loss after meta-training {after:.3f}")
    assert after < 0.7 * before, (before, after)

    # Per-sample gradients with vmap(grad(...)) equal a loop of single-sample gradients.
    params = {k: v.detach() for k, v in model.named_parameters()}
    buffers = {k: v.detach() for k, v in model.named_buffers()}

    def compute_loss(params, buffers, sample, target):
        batch = sample.unsqueeze(0)
        targets = target.unsqueeze(0)
        predictions = functional_call(model, (params, buffers), (batch,))
        return F.mse_loss(predictions, targets)

    xs, ys = eval_sets[0][1]
    ft_compute_sample_grad = vmap(grad(compute_loss), in_dims=(None, None, 0, 0))
    per_sample = ft_compute_sample_grad(params, buffers, xs[:8], ys[:8])
    for i in range(8):
        model.zero_grad()
        F.mse_loss(model(xs[i : i + 1]), ys[i : i + 1]).backward()
        for name, p in model.named_parameters():
            assert torch.allclose(per_sample[name][i], p.grad, atol=1e-5), name
    assert per_sample["net.0.weight"].shape == (8, 40, 1)

    # Model ensembling: stack the parameters of several copies and vmap over them.
    models = [copy.deepcopy(model) for _ in range(3)]
    for i, m in enumerate(models):
        with torch.no_grad():
            for p in m.parameters():
                p.add_(0.01 * i)
    ens_params, ens_buffers = stack_module_state(models)
    base = copy.deepcopy(models[0])  # the tutorial moves it to the "meta" device

    def fmodel(params, buffers, x):
        return functional_call(base, (params, buffers), (x,))

    out = vmap(fmodel, in_dims=(0, 0, None))(ens_params, ens_buffers, xs[:5])
    assert out.shape == (3, 5, 1)
    for i, m in enumerate(models):
        assert torch.allclose(out[i], m(xs[:5]), atol=1e-5)


if __name__ == "__main__":
    main()
