"""Hogwild training, as PyTorch's mnist_hogwild example: one convnet in shared memory,
trained at once by two spawned processes, each with its own optimizer over the shared
parameters, then evaluated in the parent.

Synthetic "digits" as in mnist_convnet.py: 16x16 noise with a bright square in one of
four quadrants; the quadrant is the class.
"""

import argparse

import flambeau as torch
import flambeau.multiprocessing as mp
import flambeau.nn as nn
import flambeau.nn.functional as F
import flambeau.optim as optim


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, kernel_size=3)
        self.conv2 = nn.Conv2d(8, 16, kernel_size=3)
        self.fc1 = nn.Linear(16 * 6 * 6, 32)
        self.fc2 = nn.Linear(32, 4)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.relu(F.max_pool2d(self.conv2(x), 2))
        x = x.view(-1, 16 * 6 * 6)
        x = F.relu(self.fc1(x))
        return F.log_softmax(self.fc2(x), dim=1)


def make_dataset(n, seed):
    g = torch.Generator().manual_seed(seed)
    images = torch.rand(n, 1, 16, 16, generator=g) * 0.5
    labels = torch.randint(0, 4, (n,), generator=g)
    for i, label in enumerate(labels.tolist()):
        row, col = divmod(label, 2)
        images[i, 0, 2 + row * 8 : 6 + row * 8, 2 + col * 8 : 6 + col * 8] += 1.0
    return (images - 0.5) / 0.5, labels


def train(rank, args, model, dataset):
    torch.manual_seed(args.seed + rank)
    images, labels = dataset
    optimizer = optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)
    model.train()
    for _ in range(args.epochs):
        order = torch.randperm(len(labels))
        for start in range(0, len(labels), args.batch_size):
            idx = order[start : start + args.batch_size]
            optimizer.zero_grad()
            loss = F.nll_loss(model(images[idx]), labels[idx])
            loss.backward()
            optimizer.step()


def test(model, dataset):
    images, labels = dataset
    model.eval()
    with torch.no_grad():
        output = model(images)
        loss = F.nll_loss(output, labels).item()
        accuracy = output.argmax(dim=1).eq(labels).float().mean().item()
    return loss, accuracy


def main():
    parser = argparse.ArgumentParser(description="Hogwild training")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--momentum", type=float, default=0.5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--num-processes", type=int, default=2)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    model = Net()
    model.share_memory()  # gradients are allocated lazily, in each process
    assert all(p.is_shared() for p in model.parameters())
    train_set, test_set = make_dataset(1024, 0), make_dataset(256, 1)
    before = test(model, test_set)
    untouched = model.fc2.weight.detach().clone()

    ctx = mp.get_context("spawn")
    processes = []
    for rank in range(args.num_processes):
        p = ctx.Process(target=train, args=(rank, args, model, train_set))
        p.start()
        processes.append(p)
    for p in processes:
        p.join()
        assert p.exitcode == 0, f"a training process failed with exit code {p.exitcode}"

    # The children trained the parent's parameters in place.
    assert not torch.equal(model.fc2.weight, untouched)
    loss, accuracy = test(model, test_set)
    print(f"before: loss {before[0]:.3f} accuracy {before[1]:.2f}")
    print(f"after: loss {loss:.3f} accuracy {accuracy:.2f}")
    assert loss < before[0] * 0.5 and accuracy > 0.9, (loss, accuracy)


if __name__ == "__main__":
    main()
