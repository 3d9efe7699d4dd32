"""A sparse mixture-of-experts (MoE) layer with top-k routing and a load-balancing loss.

In the style of Switch/Mixtral-like MoE code: a linear router, softmax then topk(k=2)
per token with the kept weights renormalized, tokens dispatched to experts with boolean
masks over the flattened (token, slot) assignments and the expert outputs combined
back with index_add_, per-expert token counts with scatter_add_ (checked against
bincount), and the auxiliary balancing loss n_experts * sum(f_i * P_i). The data has
four regimes that need different functions; the router learns to separate them.
Checks the sparse dispatch against a dense computation built with scatter, the
learning, and the balance of expert use.
"""

import flambeau as torch
import flambeau.nn as nn
import flambeau.nn.functional as F

DIM, N_EXPERTS, TOP_K = 16, 4, 2


class MoELayer(nn.Module):
    def __init__(self, dim, hidden, n_experts, k):
        super().__init__()
        self.k = k
        self.n_experts = n_experts
        self.router = nn.Linear(dim, n_experts, bias=False)
        self.experts = nn.ModuleList(
            [
                nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim))
                for _ in range(n_experts)
            ]
        )

    def route(self, x):
        probs = F.softmax(self.router(x), dim=-1)
        topk_probs, topk_idx = torch.topk(probs, self.k, dim=-1)
        topk_probs = topk_probs / topk_probs.sum(dim=-1, keepdim=True)
        return probs, topk_probs, topk_idx

    def forward(self, x):
        tokens = x.reshape(-1, x.size(-1))
        probs, topk_probs, topk_idx = self.route(tokens)
        flat_expert = topk_idx.reshape(-1)
        flat_weight = topk_probs.reshape(-1)
        flat_token = torch.arange(tokens.size(0), device=x.device).repeat_interleave(self.k)
        out = torch.zeros_like(tokens)
        for e, expert in enumerate(self.experts):
            mask = flat_expert == e
            if not mask.any():
                continue
            token_ids = flat_token[mask]
            expert_out = expert(tokens[token_ids]) * flat_weight[mask].unsqueeze(-1)
            out.index_add_(0, token_ids, expert_out)

        counts = torch.zeros(self.n_experts, device=x.device).scatter_add_(
            0, flat_expert, torch.ones_like(flat_weight)
        )
        fraction = counts / flat_expert.numel()
        aux_loss = self.n_experts * (fraction * probs.mean(dim=0)).sum()
        self.last_counts = counts.detach()
        return out.reshape(x.shape), aux_loss

    def dense_forward(self, x):
        """Every expert on every token, weighted by a (tokens, experts) scatter-built matrix."""
        probs, topk_probs, topk_idx = self.route(x)
        gates = torch.zeros_like(probs).scatter(1, topk_idx, topk_probs)
        outs = torch.stack([expert(x) for expert in self.experts], dim=1)
        return (gates.unsqueeze(-1) * outs).sum(dim=1)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(DIM, DIM)
        self.norm = nn.LayerNorm(DIM)
        self.moe = MoELayer(DIM, 32, N_EXPERTS, TOP_K)
        self.head = nn.Linear(DIM, 1)

    def forward(self, x):
        h = self.inp(x)
        moe_out, aux = self.moe(self.norm(h))
        return self.head(h + moe_out).squeeze(-1), aux


def make_data(n, generator):
    """Four regimes, told apart by which of the first four features is largest."""
    x = torch.randn(n, DIM, generator=generator)
    regime = x[:, :4].argmax(dim=1)
    funcs = torch.stack(
        [
            torch.sin(2 * x[:, 4]),
            x[:, 5] * x[:, 6],
            torch.abs(x[:, 7]) - 0.8,
            torch.cos(x[:, 8] + x[:, 9]),
        ],
        dim=1,
    )
    y = funcs.gather(1, regime.unsqueeze(1)).squeeze(1)
    return x, y, regime


def main():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    x, y, _ = make_data(8192, g)
    x_test, y_test, regime_test = make_data(2048, g)

    model = Model()
    with torch.no_grad():
        tokens = model.norm(model.inp(x_test[:64]))
        sparse, _ = model.moe(tokens)
        dense = model.moe.dense_forward(tokens)
        assert torch.allclose(sparse, dense, atol=1e-5), (sparse - dense).abs().max()
        _, _, idx = model.moe.route(tokens)
        assert torch.equal(
            model.moe.last_counts, torch.bincount(idx.flatten(), minlength=N_EXPERTS).float()
        )
        assert model.moe.last_counts.sum().item() == 64 * TOP_K

    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    with torch.no_grad():
        test0 = F.mse_loss(model(x_test)[0], y_test).item()
    for step in range(800):
        idx = torch.randint(0, x.size(0), (256,))
        pred, aux = model(x[idx])
        loss = F.mse_loss(pred, y[idx]) + 0.01 * aux
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 100 == 0:
            print(f"step {step}: mse {loss.item() - 0.01 * aux.item():.4f} aux {aux.item():.3f}")
    # The router received gradients through the renormalized top-k weights and the aux loss.
    assert model.moe.router.weight.grad.abs().sum() > 0

    with torch.no_grad():
        pred, aux = model(x_test)
        test = F.mse_loss(pred, y_test).item()
        share = model.moe.last_counts / model.moe.last_counts.sum()
        _, _, idx = model.moe.route(model.norm(model.inp(x_test)))
    print(f"test mse {test0:.4f} -> {test:.4f}; expert shares {share.tolist()}")
    assert test < test0 / 3, (test0, test)
    assert share.min().item() > 0.1, share  # no expert collapsed
    assert aux.item() < 1.2, aux  # 1.0 is perfectly balanced
    # The router specializes: a regime's tokens mostly have the same first-choice expert
    # (a share of 0.25 would be no specialization).
    shares = []
    for r in range(4):
        first_choice = idx[regime_test == r, 0]
        counts = torch.bincount(first_choice, minlength=N_EXPERTS)
        shares.append(counts.max().item() / first_choice.numel())
    print(f"share of each regime's tokens sent first to its favourite expert: {shares}")
    assert sum(shares) / 4 > 0.6, shares


if __name__ == "__main__":
    main()
