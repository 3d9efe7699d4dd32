"""nn beside PyTorch: Module call, Linear forward+backward, the issue's training steps (MLP,
small CNN, LSTM forward+backward; SGD with momentum from each library's optim), and a
state_dict round trip."""

from __future__ import annotations

import flambeau
import flambeau.nn  # noqa: F401

try:
    import flambeau.optim as flambeau_optim
except ImportError:  # optim is a separate distribution
    flambeau_optim = None
from flambeau_bench import attempt, measure, report

try:
    import torch
except ImportError:
    torch = None


def module_call(lib):
    m = lib.nn.Identity()
    x = lib.ones(1)
    return measure(lambda: m(x), repeat=5, number=20_000)


def linear_fwd_bwd(lib):
    m = lib.nn.Linear(512, 256)
    x = lib.randn(128, 512)

    def step():
        m.zero_grad()
        m(x).sum().backward()

    return measure(step, repeat=5, number=20)


def training_step(lib, net, x, y, loss_fn):
    """One SGD-momentum step (the optimizer package of each library)."""
    optim = lib.optim if lib is torch else flambeau_optim
    opt = optim.SGD(net.parameters(), lr=0.01, momentum=0.9)

    def step():
        opt.zero_grad()
        loss_fn(net(x), y).backward()
        opt.step()

    return step


def mlp_step(lib):
    # The MLP: 784-512-256-10 ReLU, batch 128, cross-entropy, SGD with momentum.
    net = lib.nn.Sequential(
        lib.nn.Linear(784, 512), lib.nn.ReLU(), lib.nn.Linear(512, 256), lib.nn.ReLU(),
        lib.nn.Linear(256, 10),
    )  # fmt: skip
    x, y = lib.randn(128, 784), lib.randint(0, 10, (128,))
    return measure(training_step(lib, net, x, y, lib.nn.CrossEntropyLoss()), repeat=5, number=10)


def cnn_step(lib):
    # Two 3x3 convolutions, a pool and a linear layer on 1x28x28, batch 64.
    nn = lib.nn
    net = nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(),
        nn.MaxPool2d(2), nn.Flatten(), nn.Linear(32 * 14 * 14, 10),
    )  # fmt: skip
    x, y = lib.randn(64, 1, 28, 28), lib.randint(0, 10, (64,))
    return measure(training_step(lib, net, x, y, nn.CrossEntropyLoss()), repeat=5, number=5)


def lstm_fwd_bwd(lib):
    # One layer, input 128, hidden 256, sequence 32, batch 32: forward and backward.
    net = lib.nn.LSTM(128, 256)
    x = lib.randn(32, 32, 128)

    def step():
        net.zero_grad()
        out, _ = net(x)
        out.sum().backward()

    return measure(step, repeat=5, number=5)


def state_dict_round_trip(lib):
    net = lib.nn.Sequential(*[lib.nn.Linear(64, 64) for _ in range(20)])
    return measure(lambda: net.load_state_dict(net.state_dict()), repeat=5, number=20)


rows = []
for name, fn in [
    ("Identity module call", module_call),
    ("Linear 512->256, batch 128: forward+backward", linear_fwd_bwd),
    ("MLP 784-512-256-10 training step, batch 128", mlp_step),
    ("CNN (2 conv 3x3, pool, linear) training step, batch 64", cnn_step),
    ("LSTM 128->256, seq 32, batch 32: forward+backward", lstm_fwd_bwd),
    ("state_dict + load_state_dict, 20 Linear(64, 64)", state_dict_round_trip),
]:
    ours = attempt(lambda fn=fn: fn(flambeau), name)
    theirs = attempt(lambda fn=fn: fn(torch), name) if torch is not None else None
    rows.append((name, ours, None, theirs))
report("nn overheads (float32, CPU)", rows)
