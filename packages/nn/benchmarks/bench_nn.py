"""nn overheads beside PyTorch: Module call, Linear forward+backward, an MLP training step
(SGD written out, as optim is another package), state_dict round trip."""

from __future__ import annotations

import flambeau
import flambeau.nn  # noqa: F401
from flambeau.autograd import no_grad
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


def mlp_step(lib):
    # 784-512-256-10 ReLU MLP, batch 128, MSE to one-hot targets (cross-entropy arrives with
    # the core's NN kernels), plain SGD.
    net = lib.nn.Sequential(
        lib.nn.Linear(784, 512), lib.nn.ReLU(), lib.nn.Linear(512, 256), lib.nn.ReLU(),
        lib.nn.Linear(256, 10),
    )  # fmt: skip
    x, y = lib.randn(128, 784), lib.randn(128, 10)
    loss_fn = lib.nn.MSELoss()
    params = list(net.parameters())

    def step():
        net.zero_grad()
        loss_fn(net(x), y).backward()
        with lib.no_grad() if lib is torch else no_grad():
            for p in params:
                p.sub_(p.grad * 0.01)

    return measure(step, repeat=5, number=10)


def state_dict_round_trip(lib):
    net = lib.nn.Sequential(*[lib.nn.Linear(64, 64) for _ in range(20)])
    return measure(lambda: net.load_state_dict(net.state_dict()), repeat=5, number=20)


rows = []
for name, fn in [
    ("Identity module call", module_call),
    ("Linear 512->256, batch 128: forward+backward", linear_fwd_bwd),
    ("MLP 784-512-256-10 training step, batch 128", mlp_step),
    ("state_dict + load_state_dict, 20 Linear(64, 64)", state_dict_round_trip),
]:
    ours = attempt(lambda fn=fn: fn(flambeau), name)
    theirs = attempt(lambda fn=fn: fn(torch), name) if torch is not None else None
    rows.append((name, ours, None, theirs))
report("nn overheads (float32, CPU)", rows)
