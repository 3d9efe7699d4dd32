"""GraphSAGE-style node classification with sparse adjacency in CSR and COO layouts.

In the style of GNN code that avoids torch_geometric: a synthetic stochastic-block
graph as an edge list, deduplicated with torch.sparse_coo_tensor(...).coalesce(), its
row-normalized (mean-aggregation) adjacency built from torch.sparse.sum degrees and
converted with .to_sparse_csr() (crow_indices / col_indices / values checked against a
hand-built CSR and torch.sparse_csr_tensor), neighbourhood means with torch.sparse.mm
and the @ operator (gradients flowing to the dense features), plus a learned edge
attention normalized per row with torch.sparse.softmax on a COO tensor whose values
carry autograd. Checks the sparse results against dense computations and held-out
accuracy.
"""

import flambeau as torch
import flambeau.nn.functional as F
from flambeau import nn

N, C, FEAT = 150, 3, 12


def make_graph(g):
    labels = torch.arange(N) % C
    p_in, p_out = 0.1, 0.01
    same = labels[:, None] == labels[None, :]
    probs = torch.where(same, torch.tensor(p_in), torch.tensor(p_out))
    upper = torch.triu(torch.bernoulli(probs, generator=g), diagonal=1)
    src, dst = upper.nonzero(as_tuple=True)
    # both directions, self loops, and some duplicate edges that coalesce() must merge
    rows = torch.cat([src, dst, torch.arange(N), src[:20]])
    cols = torch.cat([dst, src, torch.arange(N), dst[:20]])
    features = F.one_hot(labels, C).float() @ torch.randn(C, FEAT, generator=g)
    features = features + 2.5 * torch.randn(N, FEAT, generator=g)
    return rows, cols, features, labels


def mean_adjacency(rows, cols):
    A = torch.sparse_coo_tensor(torch.stack([rows, cols]), torch.ones(len(rows)), (N, N))
    A = A.coalesce()
    A = torch.sparse_coo_tensor(A.indices(), torch.ones_like(A.values()), (N, N)).coalesce()
    deg = torch.sparse.sum(A, dim=1).to_dense()
    r, c = A.indices()
    return torch.sparse_coo_tensor(A.indices(), 1.0 / deg[r], (N, N)).coalesce(), deg


def check_csr(A_coo):
    A_csr = A_coo.to_sparse_csr()
    assert A_csr.layout == torch.sparse_csr and A_coo.layout == torch.sparse_coo
    r, c = A_coo.indices()
    counts = torch.bincount(r, minlength=N)
    crow = torch.cat([torch.zeros(1, dtype=torch.long), counts.cumsum(0)])
    assert torch.equal(A_csr.crow_indices(), crow)
    assert torch.equal(A_csr.col_indices(), c)
    assert torch.allclose(A_csr.values(), A_coo.values())
    rebuilt = torch.sparse_csr_tensor(crow, c, A_coo.values(), (N, N))
    assert torch.equal(rebuilt.to_dense(), A_coo.to_dense())
    assert A_csr._nnz() == A_coo._nnz() == len(c)
    return A_csr


class SAGELayer(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.self_lin = nn.Linear(d_in, d_out)
        self.neigh_lin = nn.Linear(d_in, d_out, bias=False)
        self.att = nn.Parameter(torch.zeros(2 * d_in))

    def forward(self, x, A_csr, edge_index):
        mean_neigh = A_csr @ x
        # attention over each row's edges, softmax-normalized per row
        r, c = edge_index
        scores = (torch.cat([x[r], x[c]], 1) * self.att).sum(1)
        S = torch.sparse_coo_tensor(edge_index, scores, (N, N))
        att = torch.sparse.softmax(S, dim=1)
        att_neigh = torch.sparse.mm(att, x)
        return self.self_lin(x) + self.neigh_lin(0.5 * (mean_neigh + att_neigh))


class SAGE(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = SAGELayer(FEAT, 16)
        self.l2 = SAGELayer(16, C)

    def forward(self, x, A_csr, edge_index):
        h = F.relu(self.l1(x, A_csr, edge_index))
        h = F.dropout(h, 0.2, self.training)
        return self.l2(h, A_csr, edge_index)


def main():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    rows, cols, x, labels = make_graph(g)
    A, deg = mean_adjacency(rows, cols)
    assert A.is_coalesced() and A._nnz() < len(rows)  # duplicates merged
    dense = A.to_dense()
    assert torch.allclose(dense.sum(1), torch.ones(N))
    A_csr = check_csr(A)

    # sparse products against dense ones, with gradients into the dense operand
    xr = x.clone().requires_grad_(True)
    (A_csr @ xr).pow(2).sum().backward()
    xd = x.clone().requires_grad_(True)
    (dense @ xd).pow(2).sum().backward()
    assert torch.allclose(xr.grad, xd.grad, atol=1e-4)
    assert torch.allclose(torch.sparse.mm(A, x), dense @ x, atol=1e-5)

    # sparse softmax against a masked dense softmax
    edge_index = A.indices()
    vals = torch.randn(edge_index.shape[1], generator=g, requires_grad=True)
    sm = torch.sparse.softmax(torch.sparse_coo_tensor(edge_index, vals, (N, N)), dim=1)
    masked = torch.full((N, N), float("-inf"))
    masked[edge_index[0], edge_index[1]] = vals.detach()
    assert torch.allclose(sm.to_dense(), torch.softmax(masked, 1), atol=1e-6)
    sm.coalesce().values()[:5].sum().backward()
    assert vals.grad is not None and vals.grad.abs().sum() > 0

    perm = torch.randperm(N, generator=g)
    train, test = perm[:60], perm[60:]
    model = SAGE()
    opt = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
    for epoch in range(60):
        model.train()
        opt.zero_grad()
        loss = F.cross_entropy(model(x, A_csr, edge_index)[train], labels[train])
        loss.backward()
        opt.step()
        if epoch % 20 == 0:
            print(f"epoch {epoch} loss {loss.item():.4f}")
    assert model.l1.att.grad is not None and model.l1.att.grad.abs().sum() > 0

    model.eval()
    with torch.no_grad():
        pred = model(x, A_csr, edge_index).argmax(1)
        mlp_like = F.cross_entropy(model(x, A_csr, edge_index)[test], labels[test]).item()
    acc = (pred[test] == labels[test]).float().mean().item()
    print(f"test accuracy {acc:.3f}, test loss {mlp_like:.3f}")
    assert acc > 0.8, acc
    print("graphsage sparse csr OK")


if __name__ == "__main__":
    main()
