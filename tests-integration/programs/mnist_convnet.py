"""A small convolutional classifier trained the way MNIST examples train one.

Synthetic "digits": 16x16 noise images with a bright square in one of four
quadrants; the quadrant is the class. Exercises Conv2d, dropout, max pooling,
log_softmax + nll_loss, Adadelta with a StepLR schedule, argmax/eq accuracy,
the accelerator device idiom and a state_dict save/load round trip.
"""

import argparse
import os
import tempfile

import flambeau as torch
import flambeau.nn as nn
import flambeau.nn.functional as F
import flambeau.optim as optim
from flambeau.optim.lr_scheduler import StepLR


class Net(nn.Module):
    def __init__(self, num_classes=4):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, 1)
        self.conv2 = nn.Conv2d(8, 16, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(16 * 6 * 6, 64)
        self.fc2 = nn.Linear(64, num_classes)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = self.dropout2(x)
        return F.log_softmax(self.fc2(x), dim=1)


def make_dataset(n, generator):
    images = torch.rand(n, 1, 16, 16, generator=generator) * 0.5
    labels = torch.randint(0, 4, (n,), generator=generator)
    for i, label in enumerate(labels.tolist()):
        row, col = divmod(label, 2)
        r0, c0 = 2 + row * 8, 2 + col * 8
        images[i, 0, r0 : r0 + 4, c0 : c0 + 4] += 1.0
    # Normalize as the usual transform does: (x - mean) / std.
    images = (images - images.mean()) / images.std()
    return images, labels


def batches(images, labels, batch_size, shuffle):
    order = torch.randperm(len(images)) if shuffle else torch.arange(len(images))
    for start in range(0, len(images), batch_size):
        idx = order[start : start + batch_size]
        yield images[idx], labels[idx]


def train(args, model, device, data, optimizer, epoch):
    model.train()
    images, labels = data
    for batch_idx, (x, target) in enumerate(batches(images, labels, args.batch_size, True)):
        x, target = x.to(device), target.to(device)
        optimizer.zero_grad()
        output = model(x)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        if batch_idx % args.log_interval == 0:
            print(
                f"Train Epoch: {epoch} [{batch_idx * len(x)}/{len(images)}"
                f" ({100.0 * batch_idx * len(x) / len(images):.0f}%)]\tLoss: {loss.item():.6f}"
            )


def test(model, device, data, batch_size):
    model.eval()
    test_loss = 0
    correct = 0
    images, labels = data
    with torch.no_grad():
        for x, target in batches(images, labels, batch_size, False):
            x, target = x.to(device), target.to(device)
            output = model(x)
            test_loss += F.nll_loss(output, target, reduction="sum").item()
            pred = output.argmax(dim=1, keepdim=True)
            correct += pred.eq(target.view_as(pred)).sum().item()
    test_loss /= len(images)
    accuracy = 100.0 * correct / len(images)
    print(
        f"Test set: Average loss: {test_loss:.4f}, "
        f"Accuracy: {correct}/{len(images)} ({accuracy:.0f}%)"
    )
    return test_loss, accuracy


def main():
    parser = argparse.ArgumentParser(description="convnet on synthetic digits")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--lr", type=float, default=1.0)
    parser.add_argument("--gamma", type=float, default=0.7)
    parser.add_argument("--no-accel", action="store_true")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--log-interval", type=int, default=4)
    args = parser.parse_args()

    use_accel = not args.no_accel and torch.accelerator.is_available()
    torch.manual_seed(args.seed)
    if use_accel:
        device = torch.accelerator.current_accelerator()
    else:
        device = torch.device("cpu")
    print(f"Using {device} device")

    generator = torch.Generator().manual_seed(0)
    train_data = make_dataset(512, generator)
    test_data = make_dataset(256, generator)

    model = Net().to(device)
    optimizer = optim.Adadelta(model.parameters(), lr=args.lr)
    scheduler = StepLR(optimizer, step_size=1, gamma=args.gamma)

    first_loss, _ = test(model, device, test_data, args.batch_size)
    for epoch in range(1, args.epochs + 1):
        train(args, model, device, train_data, optimizer, epoch)
        test_loss, accuracy = test(model, device, test_data, args.batch_size)
        scheduler.step()
    assert test_loss < first_loss / 4, (first_loss, test_loss)
    assert accuracy > 90, accuracy
    assert abs(scheduler.get_last_lr()[0] - args.lr * args.gamma**args.epochs) < 1e-9

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "mnist_cnn.pt")
        torch.save(model.state_dict(), path)
        restored = Net().to(device)
        restored.load_state_dict(torch.load(path, weights_only=True))
        restored.eval()
        x = test_data[0][:32].to(device)
        with torch.no_grad():
            assert torch.equal(restored(x), model(x))

        # A general checkpoint: resuming from it must retrace the uninterrupted run exactly.
        ckpt = os.path.join(tmp, "checkpoint.tar")
        torch.save(
            {
                "epoch": args.epochs,
                "model_state_dict": model.state_dict(),
                "optimizer_state_dict": optimizer.state_dict(),
                "scheduler_state_dict": scheduler.state_dict(),
                "rng_state": torch.get_rng_state(),
            },
            ckpt,
        )
        train(args, model, device, train_data, optimizer, args.epochs + 1)
        scheduler.step()

        checkpoint = torch.load(ckpt, weights_only=True)
        resumed = Net().to(device)
        resumed_optimizer = optim.Adadelta(resumed.parameters(), lr=args.lr)
        resumed_scheduler = StepLR(resumed_optimizer, step_size=1, gamma=args.gamma)
        resumed.load_state_dict(checkpoint["model_state_dict"])
        resumed_optimizer.load_state_dict(checkpoint["optimizer_state_dict"])
        resumed_scheduler.load_state_dict(checkpoint["scheduler_state_dict"])
        torch.set_rng_state(checkpoint["rng_state"])
        train(args, resumed, device, train_data, resumed_optimizer, checkpoint["epoch"] + 1)
        resumed_scheduler.step()
    for (name, p), q in zip(model.named_parameters(), resumed.parameters()):
        assert torch.equal(p, q), name
    assert resumed_scheduler.get_last_lr() == scheduler.get_last_lr()


if __name__ == "__main__":
    main()
