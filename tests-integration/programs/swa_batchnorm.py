"""Stochastic weight averaging (SWA) of a batch-normalized classifier.

In the style of the torch.optim.swa_utils recipe: SGD with momentum under
CosineAnnealingLR for the first epochs, then AveragedModel(model) collecting an
equal-weight average once per epoch while SWALR anneals the learning rate to swa_lr
(anneal_strategy="linear"); at the end update_bn(loader, swa_model) recomputes the
BatchNorm statistics for the averaged weights, since averaged weights do not match
any batch statistics seen in training. Checks the averaged weights against snapshots
kept by hand, the schedule's learning rates against the formulas, the recomputed
running statistics against one pass over the data, and that the SWA model classifies
well.
"""

import math

import flambeau as torch
import flambeau.nn as nn
import flambeau.nn.functional as F
from flambeau.optim.lr_scheduler import CosineAnnealingLR
from flambeau.optim.swa_utils import SWALR, AveragedModel, update_bn
from flambeau.utils.data import DataLoader, TensorDataset


def spirals(n, generator):
    """Three interleaved noisy spirals in 2-D."""
    labels = torch.randint(0, 3, (n,), generator=generator)
    r = torch.rand(n, generator=generator) * 3 + 0.3
    theta = r * 1.6 + labels.float() * (2 * math.pi / 3)
    x = torch.stack([r * torch.cos(theta), r * torch.sin(theta)], dim=1)
    return x + 0.15 * torch.randn(n, 2, generator=generator), labels


def make_model():
    return nn.Sequential(
        nn.Linear(2, 64),
        nn.BatchNorm1d(64),
        nn.ReLU(),
        nn.Linear(64, 64),
        nn.BatchNorm1d(64),
        nn.ReLU(),
        nn.Linear(64, 3),
    )


def evaluate(model, x, y):
    model.eval()
    with torch.no_grad():
        logits = model(x)
        acc = (logits.argmax(1) == y).float().mean().item()
        loss = F.cross_entropy(logits, y).item()
    model.train()
    return loss, acc


def main():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    x_train, y_train = spirals(2048, g)
    x_test, y_test = spirals(1000, g)
    loader = DataLoader(TensorDataset(x_train, y_train), batch_size=128, shuffle=True)

    model = make_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    epochs, swa_start = 30, 20
    scheduler = CosineAnnealingLR(optimizer, T_max=swa_start)
    swa_model = AveragedModel(model)
    swa_scheduler = SWALR(optimizer, swa_lr=0.02, anneal_epochs=3, anneal_strategy="linear")
    snapshots = []
    lrs = []

    for epoch in range(epochs):
        lrs.append(optimizer.param_groups[0]["lr"])
        for x, y in loader:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
        if epoch >= swa_start:
            swa_model.update_parameters(model)
            snapshots.append([p.detach().clone() for p in model.parameters()])
            swa_scheduler.step()
        else:
            scheduler.step()
        if epoch % 5 == 0 or epoch == epochs - 1:
            test_loss, test_acc = evaluate(model, x_test, y_test)
            print(
                f"epoch {epoch:2d}: lr {lrs[-1]:.4f} test loss {test_loss:.3f} acc {test_acc:.3f}"
            )

    # Cosine annealing for the first epochs, then SWALR's linear anneal to swa_lr.
    for epoch in range(swa_start):
        expected = 0.1 * (1 + math.cos(math.pi * epoch / swa_start)) / 2
        assert abs(lrs[epoch] - expected) < 1e-9, (epoch, lrs[epoch], expected)
    # SWALR starts from the annealed-to-zero rate and moves linearly to swa_lr in 3 steps.
    assert abs(lrs[swa_start]) < 1e-9, lrs[swa_start]
    for i, expected in enumerate([0.02 / 3, 0.04 / 3] + [0.02] * (epochs - swa_start - 3)):
        assert abs(lrs[swa_start + 1 + i] - expected) < 1e-9, (i, lrs[swa_start + 1 + i])

    # The averaged weights are the plain mean of the per-epoch snapshots.
    assert swa_model.n_averaged.item() == epochs - swa_start
    for i, p in enumerate(swa_model.module.parameters()):
        mean = torch.stack([s[i] for s in snapshots]).mean(0)
        assert torch.allclose(p, mean, atol=1e-5), i

    # update_bn: fresh running statistics for the averaged network, one pass over the data.
    stats_loader = DataLoader(TensorDataset(x_train, y_train), batch_size=256)
    update_bn(stats_loader, swa_model)
    bn = swa_model.module[1]
    assert bn.momentum == 0.1  # restored after the cumulative pass
    with torch.no_grad():
        h = swa_model.module[0](x_train)
        batch_means = torch.stack([c.mean(0) for c in h.split(256)])
        batch_vars = torch.stack([c.var(0, unbiased=True) for c in h.split(256)])
    assert torch.allclose(bn.running_mean, batch_means.mean(0), atol=1e-4)
    assert torch.allclose(bn.running_var, batch_vars.mean(0), rtol=1e-4, atol=1e-4)

    final_loss, final_acc = evaluate(model, x_test, y_test)
    swa_loss, swa_acc = evaluate(swa_model, x_test, y_test)
    print(f"final model: loss {final_loss:.3f} acc {final_acc:.3f}")
    print(f"SWA model:   loss {swa_loss:.3f} acc {swa_acc:.3f}")
    assert swa_acc > 0.9, swa_acc
    assert swa_loss < final_loss + 0.05, (swa_loss, final_loss)

    # The averaged model checkpoints like any module.
    state = swa_model.state_dict()
    assert "n_averaged" in state and "module.1.running_mean" in state
    restored = AveragedModel(make_model())
    restored.load_state_dict(state)
    assert evaluate(restored, x_test, y_test) == (swa_loss, swa_acc)


if __name__ == "__main__":
    main()
