"""Interrupt training and resume it from a checkpoint, bit for bit.

In the style of the "saving and loading a general checkpoint" recipe, taken to the
strict standard of preemptible jobs: a dict holding the epoch, model.state_dict(),
optimizer.state_dict() (AdamW with two parameter groups), the scheduler's state_dict
(MultiStepLR), the global RNG state (torch.get_rng_state), the DataLoader generator's
state, and the running metrics, written with torch.save to a file and read back with
torch.load(map_location="cpu", weights_only=True) into freshly constructed objects.
The model uses dropout and the loader shuffles, so resuming only matches when every
piece of state is restored. Checks that the resumed run's losses and final weights
equal an uninterrupted run's exactly, and that the learning actually happened.
"""

import os
import tempfile

import flambeau as torch
import flambeau.nn as nn
import flambeau.nn.functional as F
from flambeau.utils.data import DataLoader, TensorDataset

EPOCHS, INTERRUPT_AFTER = 6, 3


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(10, 64)
        self.drop = nn.Dropout(0.2)
        self.bn = nn.BatchNorm1d(64)
        self.fc2 = nn.Linear(64, 3)

    def forward(self, x):
        return self.fc2(self.drop(F.relu(self.bn(self.fc1(x)))))


def make_data():
    g = torch.Generator().manual_seed(123)
    x = torch.randn(1024, 10, generator=g)
    w = torch.randn(10, 3, generator=g)
    y = (x @ w + 0.3 * torch.randn(1024, 3, generator=g)).argmax(1)
    return TensorDataset(x, y)


def build():
    model = Net()
    decay = [p for n, p in model.named_parameters() if n.endswith("weight") and "bn" not in n]
    no_decay = [
        p for n, p in model.named_parameters() if not (n.endswith("weight") and "bn" not in n)
    ]
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": 0.05}, {"params": no_decay, "weight_decay": 0.0}],
        lr=3e-3,
    )
    scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[2, 4], gamma=0.3)
    return model, optimizer, scheduler


def train_epoch(model, optimizer, loader):
    model.train()
    losses = []
    for x, y in loader:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def run(dataset, checkpoint_path=None, resume_from=None):
    """Trains for EPOCHS epochs; saves after INTERRUPT_AFTER when given a path, stops
    there (the "preemption"); or starts from a checkpoint when resume_from is given."""
    torch.manual_seed(0)
    model, optimizer, scheduler = build()
    loader_gen = torch.Generator().manual_seed(7)
    loader = DataLoader(dataset, batch_size=64, shuffle=True, generator=loader_gen)
    start, history = 0, []
    if resume_from is not None:
        ckpt = torch.load(resume_from, map_location="cpu", weights_only=True)
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        scheduler.load_state_dict(ckpt["scheduler"])
        torch.set_rng_state(ckpt["rng"])
        loader_gen.set_state(ckpt["loader_rng"])
        start, history = ckpt["epoch"] + 1, ckpt["history"]
    for epoch in range(start, EPOCHS):
        history.append(train_epoch(model, optimizer, loader))
        scheduler.step()
        if checkpoint_path is not None and epoch == INTERRUPT_AFTER - 1:
            torch.save(
                {
                    "epoch": epoch,
                    "model": model.state_dict(),
                    "optimizer": optimizer.state_dict(),
                    "scheduler": scheduler.state_dict(),
                    "rng": torch.get_rng_state(),
                    "loader_rng": loader_gen.get_state(),
                    "history": history,
                },
                checkpoint_path,
            )
            return model, history
    return model, history


def main():
    dataset = make_data()
    full_model, full_history = run(dataset)
    first = sum(full_history[0]) / len(full_history[0])
    last = sum(full_history[-1]) / len(full_history[-1])
    print(f"uninterrupted: epoch loss {first:.4f} -> {last:.4f}")
    assert last < first - 0.3, (first, last)

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "checkpoint.pt")
        _, partial = run(dataset, checkpoint_path=path)
        assert len(partial) == INTERRUPT_AFTER
        ckpt = torch.load(path, weights_only=True)
        assert ckpt["epoch"] == INTERRUPT_AFTER - 1
        assert ckpt["scheduler"]["last_epoch"] == INTERRUPT_AFTER
        assert ckpt["scheduler"]["milestones"] == {2: 1, 4: 1}
        assert ckpt["rng"].dtype == torch.uint8
        opt_state = ckpt["optimizer"]
        assert len(opt_state["param_groups"]) == 2
        assert opt_state["param_groups"][0]["weight_decay"] == 0.05
        assert set(opt_state["state"][0]) == {"step", "exp_avg", "exp_avg_sq"}
        assert "bn.running_mean" in ckpt["model"] and "bn.num_batches_tracked" in ckpt["model"]
        resumed_model, resumed_history = run(dataset, resume_from=path)

    for epoch, (a, b) in enumerate(zip(full_history, resumed_history)):
        assert a == b, f"epoch {epoch} differs after resuming: {a[:3]} vs {b[:3]}"
    for (name, a), b in zip(full_model.state_dict().items(), resumed_model.state_dict().values()):
        assert torch.equal(a, b), name
    print(f"resumed after epoch {INTERRUPT_AFTER}: all {EPOCHS} epochs identical")

    # Without the RNG states the resumed run diverges (dropout masks and batch order).
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "checkpoint.pt")
        run(dataset, checkpoint_path=path)
        ckpt = torch.load(path, weights_only=True)
        ckpt["rng"] = torch.manual_seed(99).get_state()
        torch.save(ckpt, path)
        _, other = run(dataset, resume_from=path)
    assert other[:INTERRUPT_AFTER] == full_history[:INTERRUPT_AFTER]
    assert other[INTERRUPT_AFTER] != full_history[INTERRUPT_AFTER]


if __name__ == "__main__":
    main()
