"""A multi-task model fed by a composed torch.utils.data pipeline.

In the style of multi-task training scripts: windows of a synthetic multichannel time
series are cut with Tensor.as_strided (checked against Tensor.unfold), two tasks
(regression of the next value, classification of the trend) share a trunk and keep
their heads in nn.ParameterDict and per-layer scales in nn.ParameterList. The data
side composes StackDataset (dict samples), Subset, ConcatDataset, ChainDataset over
IterableDatasets, SubsetRandomSampler and BatchSampler with a seeded generator, and
DistributedSampler with explicit num_replicas/rank (the ranks partition the data;
set_epoch reshuffles), default_collate on dicts and namedtuples. Per-task losses are
aggregated with Tensor.index_reduce_ / index_add_ / scatter_reduce. Checks the
pipeline's bookkeeping and that both tasks learn.
"""

import collections

import flambeau as torch
import flambeau.nn.functional as F
from flambeau import nn
from flambeau.utils.data import (
    BatchSampler,
    ChainDataset,
    ConcatDataset,
    DataLoader,
    DistributedSampler,
    IterableDataset,
    StackDataset,
    Subset,
    SubsetRandomSampler,
    TensorDataset,
    default_collate,
)

WINDOW, CHANNELS = 16, 3
Pair = collections.namedtuple("Pair", ["window", "label"])


def make_series(length, g):
    t = torch.arange(length, dtype=torch.float32)
    base = torch.stack([torch.sin(t / 7), torch.cos(t / 11), torch.sin(t / 3)], 1)
    drift = torch.cumsum(torch.randn(length, 1, generator=g) * 0.1, 0)
    return (base + drift + 0.05 * torch.randn(length, CHANNELS, generator=g)).contiguous()


def windows(series):
    """(length - WINDOW, WINDOW, CHANNELS) overlapping windows, without copying."""
    n = series.shape[0] - WINDOW
    s0, s1 = series.stride()
    w = series.as_strided((n, WINDOW, CHANNELS), (s0, s0, s1))
    assert torch.equal(w, series.unfold(0, WINDOW, 1)[:n].transpose(1, 2))
    return w


class Streaming(IterableDataset):
    def __init__(self, x, y):
        self.x, self.y = x, y

    def __iter__(self):
        for i in range(len(self.x)):
            yield {
                "x": self.x[i],
                "next": self.y[i],
                "trend": (self.y[i, 0] > self.x[i, -1, 0]).long(),
            }


class MultiTask(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.trunk = nn.ModuleList(
            [nn.Linear(WINDOW * CHANNELS, hidden), nn.Linear(hidden, hidden)]
        )
        self.scales = nn.ParameterList([nn.Parameter(torch.ones(hidden)) for _ in self.trunk])
        self.heads = nn.ParameterDict(
            {
                "next": nn.Parameter(torch.zeros(hidden, CHANNELS)),
                "trend": nn.Parameter(torch.zeros(hidden, 2)),
            }
        )
        for p in self.heads.values():
            nn.init.xavier_uniform_(p)

    def forward(self, x):
        last = x[:, -1]
        h = (x - last[:, None]).flatten(1)  # the shape of the window, not its level
        for layer, scale in zip(self.trunk, self.scales):
            h = torch.tanh(layer(h)) * scale
        out = {task: h @ w for task, w in self.heads.items()}
        out["next"] = out["next"] + last  # predict the change
        return out


def check_samplers(n):
    g = torch.Generator().manual_seed(0)
    idx = list(range(0, n, 2))
    sub = list(SubsetRandomSampler(idx, generator=g))
    assert sorted(sub) == idx and sub != idx
    batches = list(BatchSampler(range(10), batch_size=4, drop_last=True))
    assert batches == [[0, 1, 2, 3], [4, 5, 6, 7]]

    ds = TensorDataset(torch.arange(n))
    parts = [
        list(DistributedSampler(ds, num_replicas=2, rank=r, shuffle=True, seed=3)) for r in (0, 1)
    ]
    assert len(parts[0]) == len(parts[1]) == (n + 1) // 2
    assert set(parts[0]) | set(parts[1]) == set(range(n))
    sampler = DistributedSampler(ds, num_replicas=2, rank=0, shuffle=True, seed=3)
    sampler.set_epoch(1)
    assert list(sampler) != parts[0], "set_epoch must reshuffle"
    uneven = DistributedSampler(ds, num_replicas=3, rank=2, shuffle=False, drop_last=True)
    assert len(uneven) == n // 3 and list(uneven) == list(range(2, 3 * (n // 3), 3))

    batch = default_collate([Pair(torch.ones(2), 1), Pair(torch.zeros(2), 0)])
    assert (
        isinstance(batch, Pair) and batch.window.shape == (2, 2) and batch.label.tolist() == [1, 0]
    )
    batch = default_collate(
        [{"a": 1.5, "b": [torch.ones(1), 2]}, {"a": 2.5, "b": [torch.zeros(1), 3]}]
    )
    assert batch["a"].dtype == torch.float64 and batch["b"][1].tolist() == [2, 3]


def main():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    series = make_series(700, g)
    W = windows(series)
    nxt = series[WINDOW:]
    trend = (nxt[:, 0] > W[:, -1, 0]).long()
    n = len(W)
    check_samplers(n)

    stacked = StackDataset(x=W, next=nxt, trend=trend)
    sample = stacked[3]
    assert set(sample) == {"x", "next", "trend"} and sample["x"].shape == (WINDOW, CHANNELS)
    train_ds = ConcatDataset([Subset(stacked, range(0, 300)), Subset(stacked, range(300, 500))])
    assert len(train_ds) == 500 and torch.equal(train_ds[310]["x"], W[310])
    test_stream = ChainDataset([Streaming(W[500:600], nxt[500:600]), Streaming(W[600:], nxt[600:])])

    sampler = BatchSampler(
        SubsetRandomSampler(range(500), generator=g), batch_size=50, drop_last=False
    )
    loader = DataLoader(train_ds, batch_sampler=sampler)
    model = MultiTask()
    assert len(list(model.parameters())) == 4 + 2 + 2
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    task_ids = {"next": 0, "trend": 1}
    for epoch in range(25):
        totals = torch.zeros(2)
        counts = torch.zeros(2)
        for batch in loader:
            out = model(batch["x"])
            losses = torch.stack(
                [
                    F.mse_loss(out["next"], batch["next"]),
                    F.cross_entropy(out["trend"], batch["trend"]),
                ]
            )
            opt.zero_grad()
            losses.sum().backward()
            opt.step()
            ids = torch.tensor([task_ids["next"], task_ids["trend"]])
            totals.index_add_(0, ids, losses.detach())
            counts.index_add_(0, ids, torch.ones(2))
        means = totals / counts
        if epoch % 8 == 0:
            print(f"epoch {epoch} mse {means[0].item():.4f} ce {means[1].item():.4f}")

    # per-task mean losses three ways on a flat log of (task id, loss) pairs
    log_ids = torch.tensor([0, 1, 0, 1, 1])
    log_vals = torch.tensor([1.0, 2.0, 3.0, 4.0, 6.0])
    via_reduce = torch.zeros(2).index_reduce_(0, log_ids, log_vals, "mean", include_self=False)
    via_scatter = torch.zeros(2).scatter_reduce(0, log_ids, log_vals, "mean", include_self=False)
    assert via_reduce.tolist() == via_scatter.tolist() == [2.0, 4.0]
    assert torch.zeros(2).index_reduce_(
        0, log_ids, log_vals, "amax", include_self=False
    ).tolist() == [3.0, 6.0]

    model.eval()
    test_loader = DataLoader(test_stream, batch_size=64)
    mse, correct, seen = 0.0, 0, 0
    with torch.no_grad():
        for batch in test_loader:
            out = model(batch["x"])
            mse += F.mse_loss(out["next"], batch["next"], reduction="sum").item() / CHANNELS
            correct += (out["trend"].argmax(1) == batch["trend"]).sum().item()
            seen += len(batch["x"])
    assert seen == n - 500
    mse /= seen
    acc = correct / seen
    naive = F.mse_loss(W[500:, -1], nxt[500:]).item()
    print(
        f"test next-value mse {mse:.4f} (repeat-last baseline {naive:.4f}), "
        f"trend accuracy {acc:.3f}"
    )
    assert mse < 0.8 * naive and acc > 0.65, (mse, naive, acc)
    print("multitask data pipeline OK")


if __name__ == "__main__":
    main()
