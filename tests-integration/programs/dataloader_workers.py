"""Input pipelines with torch.utils.data: worker processes, samplers and collate functions.

In the style of real training scripts' data code: a map-style Dataset with a
custom collate_fn padding variable-length sequences, DataLoader(num_workers=2,
persistent_workers=True, worker_init_fn seeding numpy from
torch.utils.data.get_worker_info()), an IterableDataset sharded across workers
by worker_info.id, a WeightedRandomSampler balancing classes, a BatchSampler,
ConcatDataset and Subset, default_collate of dicts, and a small model trained
from the loader.
"""

import numpy as np

import flambeau as torch
import flambeau.nn.functional as F
from flambeau import nn
from flambeau.nn.utils.rnn import pad_sequence
from flambeau.utils.data import (
    BatchSampler,
    ConcatDataset,
    DataLoader,
    Dataset,
    IterableDataset,
    SequentialSampler,
    Subset,
    WeightedRandomSampler,
    default_collate,
    get_worker_info,
)


class SequenceDataset(Dataset):
    """Sequences of 2-9 values; the label is whether their sum is positive."""

    def __init__(self, n, seed):
        rng = np.random.default_rng(seed)
        self.items = [rng.standard_normal(rng.integers(2, 10)).astype(np.float32) for _ in range(n)]

    def __len__(self):
        return len(self.items)

    def __getitem__(self, idx):
        x = torch.from_numpy(self.items[idx])
        return {"x": x, "label": int(x.sum() > 0), "length": len(x)}


def collate_padded(batch):
    xs = [b["x"] for b in batch]
    return {
        "x": pad_sequence(xs, batch_first=True),
        "length": torch.tensor([b["length"] for b in batch]),
        "label": torch.tensor([b["label"] for b in batch]),
    }


class RangeStream(IterableDataset):
    def __init__(self, start, end):
        super().__init__()
        self.start, self.end = start, end

    def __iter__(self):
        info = get_worker_info()
        if info is None:
            lo, hi = self.start, self.end
        else:
            per_worker = int(np.ceil((self.end - self.start) / float(info.num_workers)))
            lo = self.start + info.id * per_worker
            hi = min(lo + per_worker, self.end)
        return iter(range(lo, hi))


def worker_init_fn(worker_id):
    info = get_worker_info()
    assert info.id == worker_id
    np.random.seed(info.seed % 2**32)


class Summer(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(1, 16, batch_first=True)
        self.head = nn.Linear(16, 2)

    def forward(self, x, lengths):
        packed = nn.utils.rnn.pack_padded_sequence(
            x.unsqueeze(-1), lengths, batch_first=True, enforce_sorted=False
        )
        _, h = self.rnn(packed)
        return self.head(h[-1])


def main():
    torch.manual_seed(0)
    train = SequenceDataset(600, 0)
    test = SequenceDataset(200, 1)

    # IterableDataset split across two workers yields every element exactly once.
    stream = DataLoader(RangeStream(3, 17), num_workers=2, batch_size=None)
    seen = sorted(int(v) for v in stream)
    assert seen == list(range(3, 17)), seen

    # Samplers.
    assert list(BatchSampler(SequentialSampler(range(7)), batch_size=3, drop_last=False)) == [
        [0, 1, 2],
        [3, 4, 5],
        [6],
    ]
    labels = torch.tensor([train[i]["label"] for i in range(len(train))])
    class_counts = torch.bincount(labels)
    weights = (1.0 / class_counts.float())[labels]
    sampler = WeightedRandomSampler(
        weights, num_samples=4000, replacement=True, generator=torch.Generator().manual_seed(0)
    )
    drawn = labels[torch.tensor(list(sampler))]
    assert abs(drawn.float().mean().item() - 0.5) < 0.05

    both = ConcatDataset([train, Subset(test, range(10))])
    assert len(both) == 610 and torch.equal(both[605]["x"], test[5]["x"])
    batch = default_collate([{"a": 1, "b": torch.ones(2)}, {"a": 2, "b": torch.zeros(2)}])
    assert batch["a"].tolist() == [1, 2] and batch["b"].shape == (2, 2)

    loader = DataLoader(
        train,
        batch_size=32,
        shuffle=True,
        num_workers=2,
        collate_fn=collate_padded,
        persistent_workers=True,
        worker_init_fn=worker_init_fn,
        generator=torch.Generator().manual_seed(0),
    )
    test_loader = DataLoader(test, batch_size=100, collate_fn=collate_padded)
    first = next(iter(loader))
    assert first["x"].dim() == 2 and first["x"].size(1) == first["length"].max().item()
    assert first["label"].dtype == torch.int64

    model = Summer()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)

    def accuracy():
        model.eval()
        correct = 0
        with torch.no_grad():
            for b in test_loader:
                correct += (model(b["x"], b["length"]).argmax(1) == b["label"]).sum().item()
        return correct / len(test)

    acc0 = accuracy()
    for epoch in range(6):
        model.train()
        n_batches = 0
        for b in loader:
            loss = F.cross_entropy(model(b["x"], b["length"]), b["label"])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            n_batches += 1
        assert n_batches == len(loader) == 19
        acc = accuracy()
        print(f"epoch {epoch}: loss {loss.item():.3f} accuracy {acc:.3f}")
    assert acc > max(0.85, acc0 + 0.2), (acc0, acc)


if __name__ == "__main__":
    main()
