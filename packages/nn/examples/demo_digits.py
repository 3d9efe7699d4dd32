"""Train a small CNN on scikit-learn's handwritten digits (8x8 images, ships offline).

Prints a progress bar per epoch, the test accuracy and a confusion matrix; saves
the model with flambeau.save into ./demo_digits/, reloads it into a fresh model
and checks that the predictions are identical; writes the loss and accuracy
curves beside it as a PNG (when matplotlib is installed).

    python packages/nn/examples/demo_digits.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

import flambeau
import flambeau.nn as nn
import flambeau.optim as optim
from flambeau.utils.data import DataLoader, TensorDataset

EPOCHS = 12
BATCH = 64


def load_digits():
    from sklearn.datasets import load_digits as sklearn_digits

    data = sklearn_digits()
    images = (data.images / 16.0).astype(np.float32)[:, None]  # N x 1 x 8 x 8 in [0, 1]
    labels = data.target.astype(np.int64)
    order = np.random.default_rng(0).permutation(len(labels))
    split = int(0.8 * len(labels))
    train, test = order[:split], order[split:]
    pick = lambda idx: (flambeau.from_numpy(images[idx]), flambeau.from_numpy(labels[idx]))  # noqa: E731
    return pick(train), pick(test)


def make_model() -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),  # 16 x 4 x 4
        nn.Conv2d(16, 32, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),  # 32 x 2 x 2
        nn.Flatten(),
        nn.Linear(32 * 2 * 2, 10),
    )


def progress(epoch: int, done: int, total: int, loss: float) -> None:
    width = 30
    filled = width * done // total
    bar = "#" * filled + "." * (width - filled)
    end = "\n" if done == total else ""
    print(f"\repoch {epoch:2d}/{EPOCHS} [{bar}] {done:4d}/{total} loss {loss:.4f}", end=end)
    sys.stdout.flush()


def predict(model: nn.Module, images) -> np.ndarray:
    model.eval()
    with flambeau.no_grad():
        return model(images).argmax(dim=1).numpy()


def train(model, train_set, test_set):
    loader = DataLoader(TensorDataset(*train_set), batch_size=BATCH, shuffle=True)
    loss_fn = nn.CrossEntropyLoss()
    opt = optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    history = {"loss": [], "accuracy": []}
    n = len(loader.dataset)
    for epoch in range(1, EPOCHS + 1):
        model.train()
        total, seen = 0.0, 0
        for step, (x, y) in enumerate(loader):
            opt.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
            total += loss.item() * len(y)
            seen += len(y)
            if step % 4 == 0 or seen == n:
                progress(epoch, seen, n, total / seen)
        accuracy = (predict(model, test_set[0]) == test_set[1].numpy()).mean()
        history["loss"].append(total / n)
        history["accuracy"].append(accuracy)
    return history


def confusion_matrix(truth: np.ndarray, predicted: np.ndarray) -> np.ndarray:
    m = np.zeros((10, 10), dtype=np.int64)
    np.add.at(m, (truth, predicted), 1)
    return m


def plot(history, path: Path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(matplotlib is not installed: no plot written)")
        return
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.5))
    epochs = range(1, len(history["loss"]) + 1)
    left.plot(epochs, history["loss"], marker="o")
    left.set(title="training loss", xlabel="epoch", ylabel="mean cross-entropy loss")
    right.plot(epochs, history["accuracy"], marker="o", color="tab:green")
    right.set(title="test accuracy", xlabel="epoch", ylabel="fraction correct", ylim=(0, 1))
    fig.tight_layout()
    fig.savefig(path)
    print(f"loss and accuracy curves: {path}")


def main() -> None:
    flambeau.manual_seed(0)
    train_set, test_set = load_digits()
    print(f"digits: {len(train_set[1])} training and {len(test_set[1])} test images, 8x8")
    model = make_model()
    started = time.perf_counter()
    history = train(model, train_set, test_set)
    print(f"trained in {time.perf_counter() - started:.1f} s")

    truth = test_set[1].numpy()
    predicted = predict(model, test_set[0])
    print(f"test accuracy: {(predicted == truth).mean():.3f}")
    print("confusion matrix (rows: true digit, columns: predicted):")
    print("     " + " ".join(f"{d:3d}" for d in range(10)))
    for d, row in enumerate(confusion_matrix(truth, predicted)):
        print(f"  {d}: " + " ".join(f"{v:3d}" for v in row))

    out = Path("demo_digits")
    out.mkdir(exist_ok=True)
    path = out / "digits_cnn.flambeau"
    flambeau.save(model.state_dict(), path)
    reloaded = make_model()
    reloaded.load_state_dict(flambeau.load(path))
    same = np.array_equal(predict(reloaded, test_set[0]), predicted)
    size = path.stat().st_size / 1024
    print(f"saved to {path} ({size:.0f} KiB) and reloaded: predictions identical: {same}")
    if not same:
        raise SystemExit("the reloaded model predicts differently")
    plot(history, out / "curves.png")


if __name__ == "__main__":
    main()
