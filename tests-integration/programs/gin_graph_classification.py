"""Graph-level classification with a GIN on a mini-batch of graphs, no graph library.

In the style of PyTorch Geometric's message passing written by hand: many small graphs
are batched into one big disjoint graph (node features concatenated, edge_index offset,
a `batch` vector mapping each node to its graph) by a DataLoader collate_fn; a GIN
layer sums neighbour messages with Tensor.index_add_, and the readout pools nodes per
graph with Tensor.scatter_reduce (reduce="sum", "mean" and "amax", include_self=False)
and torch.bincount. The task, telling cycles from paths and stars, needs the graph
structure. Checks the pooling against a loop, that training reaches high test accuracy,
and that a checkpoint round-trips.
"""

import os
import tempfile

import flambeau as torch
import flambeau.nn as nn
import flambeau.nn.functional as F
from flambeau.utils.data import DataLoader, Dataset


def make_graph(kind, n, g):
    if kind == 0:  # cycle
        src = list(range(n))
        dst = [(i + 1) % n for i in range(n)]
    elif kind == 1:  # path
        src, dst = list(range(n - 1)), list(range(1, n))
    else:  # star
        src, dst = [0] * (n - 1), list(range(1, n))
    edge_index = torch.tensor([src + dst, dst + src], dtype=torch.long)
    x = torch.ones(n, 4) + 0.1 * torch.randn(n, 4, generator=g)
    return x, edge_index, kind


class GraphDataset(Dataset):
    def __init__(self, size, seed):
        g = torch.Generator().manual_seed(seed)
        kinds = torch.randint(0, 3, (size,), generator=g).tolist()
        sizes = torch.randint(5, 12, (size,), generator=g).tolist()
        self.graphs = [make_graph(k, n, g) for k, n in zip(kinds, sizes)]

    def __len__(self):
        return len(self.graphs)

    def __getitem__(self, i):
        return self.graphs[i]


def collate(batch):
    xs, edges, batch_vec, ys, offset = [], [], [], [], 0
    for i, (x, edge_index, y) in enumerate(batch):
        xs.append(x)
        edges.append(edge_index + offset)
        batch_vec.append(torch.full((x.size(0),), i, dtype=torch.long))
        ys.append(y)
        offset += x.size(0)
    return torch.cat(xs), torch.cat(edges, dim=1), torch.cat(batch_vec), torch.tensor(ys)


class GINConv(nn.Module):
    def __init__(self, in_dim, out_dim):
        super().__init__()
        self.eps = nn.Parameter(torch.zeros(1))
        self.mlp = nn.Sequential(
            nn.Linear(in_dim, out_dim),
            nn.BatchNorm1d(out_dim),
            nn.ReLU(),
            nn.Linear(out_dim, out_dim),
        )

    def forward(self, x, edge_index):
        src, dst = edge_index
        aggr = torch.zeros_like(x).index_add_(0, dst, x[src])
        return self.mlp((1 + self.eps) * x + aggr)


def global_pool(x, batch, num_graphs, reduce):
    index = batch.unsqueeze(-1).expand_as(x)
    out = torch.zeros(num_graphs, x.size(-1), dtype=x.dtype)
    return out.scatter_reduce(0, index, x, reduce=reduce, include_self=False)


class GIN(nn.Module):
    def __init__(self, in_dim=4, hidden=32, n_classes=3, layers=3):
        super().__init__()
        dims = [in_dim] + [hidden] * layers
        self.convs = nn.ModuleList(GINConv(a, b) for a, b in zip(dims[:-1], dims[1:]))
        self.classifier = nn.Sequential(
            nn.Linear(3 * hidden * layers, hidden),
            nn.ReLU(),
            nn.Dropout(0.2),
            nn.Linear(hidden, n_classes),
        )

    def forward(self, x, edge_index, batch):
        num_graphs = int(batch.max()) + 1
        readouts = []
        for conv in self.convs:
            x = F.relu(conv(x, edge_index))
            readouts += [global_pool(x, batch, num_graphs, r) for r in ("sum", "mean", "amax")]
        return self.classifier(torch.cat(readouts, dim=-1))


def check_pooling():
    x = torch.tensor([[1.0, -2.0], [3.0, 4.0], [5.0, -6.0], [-7.0, 8.0], [9.0, 0.5]])
    batch = torch.tensor([0, 0, 1, 1, 1])
    for reduce in ("sum", "mean", "amax", "amin"):
        got = global_pool(x, batch, 2, reduce)
        for b in range(2):
            rows = x[batch == b]
            want = {
                "sum": rows.sum(0),
                "mean": rows.mean(0),
                "amax": rows.amax(0),
                "amin": rows.amin(0),
            }[reduce]
            assert torch.allclose(got[b], want), (reduce, got[b], want)
    counts = torch.bincount(batch, minlength=3)
    assert counts.tolist() == [2, 3, 0]
    summed = torch.zeros(3, 2).index_add_(0, batch, x)
    assert torch.allclose(
        summed / counts.clamp(min=1).unsqueeze(-1),
        torch.cat([global_pool(x, batch, 2, "mean"), torch.zeros(1, 2)]),
    )
    # include_self=True folds in what the output held (here the ones).
    ones = torch.ones(2, 2).scatter_reduce(
        0, batch.unsqueeze(-1).expand_as(x), x, "amax", include_self=True
    )
    assert ones.tolist() == [[3.0, 4.0], [9.0, 8.0]]


def evaluate(model, loader):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for x, edge_index, batch, y in loader:
            correct += (model(x, edge_index, batch).argmax(-1) == y).sum().item()
            total += y.numel()
    return correct / total


def main():
    check_pooling()
    torch.manual_seed(0)
    train = DataLoader(GraphDataset(300, 1), batch_size=32, shuffle=True, collate_fn=collate)
    test = DataLoader(GraphDataset(120, 2), batch_size=64, collate_fn=collate)
    model = GIN()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    before = evaluate(model, test)
    for epoch in range(15):
        model.train()
        total = 0.0
        for x, edge_index, batch, y in train:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x, edge_index, batch), y)
            loss.backward()
            optimizer.step()
            total += loss.item()
        if epoch % 5 == 0:
            print(f"epoch {epoch}: loss {total / len(train):.4f}")
    after = evaluate(model, test)
    print(f"test accuracy {before:.3f} -> {after:.3f}")
    assert after > 0.95, after
    assert model.convs[0].eps.grad is not None

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "gin.pt")
        torch.save(model.state_dict(), path)
        restored = GIN()
        restored.load_state_dict(torch.load(path, weights_only=True))
    assert evaluate(restored, test) == after


if __name__ == "__main__":
    main()
