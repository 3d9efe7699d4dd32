"""nn beside PyTorch: Module call, Linear forward+backward, the issue's training steps (MLP,
small CNN; SGD with momentum from each library's optim), recurrent layers (LSTM forward,
LSTM and GRU forward+backward), and a state_dict round trip.

The last table puts LSTM(256, 256) forward+backward (sequence 50, batch 32) against
flambeau's own single-threaded sgemm rate: the GEMM flops of the step (forward: input
projection 2*T*B*I*4H plus recurrent 2*T*B*H*4H; backward: twice the forward) divided by
its time, as a share of the GFLOP/s of one thread on the step's largest GEMM
(T*B x I times I x 4H). Under FLAMBEAU_BENCH_ONLY=gemm only the GEMM-bound rows run.
"""

from __future__ import annotations

import flambeau
import flambeau.nn  # noqa: F401

try:
    import flambeau.optim  # noqa: F401  (optim is a separate distribution)
except ImportError:
    pass
from flambeau_bench import attempt, compare, gemm_only, library, measure, report

LIBS = ("flambeau", "torch")


def module_call(lib):
    m = library(lib).nn.Identity()
    x = library(lib).ones(1)
    return lambda: m(x)


def linear_fwd_bwd(lib):
    mod = library(lib)
    m = mod.nn.Linear(512, 256)
    x = mod.randn(128, 512)

    def step():
        m.zero_grad()
        m(x).sum().backward()

    return step


def training_step(mod, net, x, y, loss_fn):
    """One SGD-momentum step (the optimizer package of each library)."""
    opt = mod.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)

    def step():
        opt.zero_grad()
        loss_fn(net(x), y).backward()
        opt.step()

    return step


def mlp_step(lib):
    # The MLP: 784-512-256-10 ReLU, batch 128, cross-entropy, SGD with momentum.
    mod = library(lib)
    nn = mod.nn
    net = nn.Sequential(
        nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(), nn.Linear(256, 10),
    )  # fmt: skip
    x, y = mod.randn(128, 784), mod.randint(0, 10, (128,))
    return training_step(mod, net, x, y, nn.CrossEntropyLoss())


def cnn_step(lib):
    # Two 3x3 convolutions, a pool and a linear layer on 1x28x28, batch 64.
    mod = library(lib)
    nn = mod.nn
    net = nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(),
        nn.MaxPool2d(2), nn.Flatten(), nn.Linear(32 * 14 * 14, 10),
    )  # fmt: skip
    x, y = mod.randn(64, 1, 28, 28), mod.randint(0, 10, (64,))
    return training_step(mod, net, x, y, nn.CrossEntropyLoss())


def recurrent(kind, inputs, hidden, seq, batch, backward=True):
    """make(lib) for one layer of nn.<kind> on (seq, batch, inputs): forward (grad
    recorded, as in training) or forward+backward."""

    def make(lib):
        mod = library(lib)
        net = getattr(mod.nn, kind)(inputs, hidden)
        x = mod.randn(seq, batch, inputs)
        if not backward:
            return lambda: net(x)

        def step():
            net.zero_grad()
            out, _ = net(x)
            out.sum().backward()

        return step

    return make


def state_dict_round_trip(lib):
    nn = library(lib).nn
    net = nn.Sequential(*[nn.Linear(64, 64) for _ in range(20)])
    return lambda: net.load_state_dict(net.state_dict())


def sgemm_one_thread_gflops(m, k, n) -> float:
    """flambeau's float32 (m, k) @ (k, n) rate on one thread, in GFLOP/s."""
    before = flambeau.get_num_threads()
    flambeau.set_num_threads(1)
    try:
        a, b = flambeau.randn(m, k), flambeau.randn(k, n)
        t = measure(lambda: a @ b, repeat=5, number=5)
    finally:
        flambeau.set_num_threads(before)
    return 2.0 * m * k * n / t.best / 1e9


def lstm_share_of_sgemm() -> tuple:
    T, B, I, H = 50, 32, 256, 256  # noqa: E741
    forward = 2 * T * B * I * 4 * H + 2 * T * B * H * 4 * H
    flops = 3 * forward  # backward: about twice the forward
    name = f"LSTM({I}, {H}) seq {T} batch {B} fwd+bwd"
    _, ours, _, theirs = compare(name, recurrent("LSTM", I, H, T, B), libs=LIBS, number=2)
    peak = attempt(lambda: sgemm_one_thread_gflops(T * B, I, 4 * H), "1-thread sgemm")
    shares = []
    for lib, t in (("flambeau", ours), ("torch", theirs)):
        if t and peak:
            rate = flops / t.best / 1e9
            shares.append(f"{lib} {rate:.1f} GFLOP/s = {rate / peak:.0%}")
    detail = "; ".join(shares) or "n/a"
    sgemm = f"{peak:.1f}" if peak else "n/a"
    title = (
        f"{name}, {flops / 1e9:.2f} GFLOP of GEMM, against flambeau's 1-thread sgemm "
        f"{T * B}x{I}x{4 * H} ({sgemm} GFLOP/s)"
    )
    return title, [(f"{name} ({detail} of 1-thread sgemm)", ours, None, theirs)]


def main() -> None:
    rows = []
    for name, make, number, gemm_bound in [
        ("Identity module call", module_call, 20_000, False),
        ("Linear 512->256, batch 128: forward+backward", linear_fwd_bwd, 20, True),
        ("MLP 784-512-256-10 training step, batch 128", mlp_step, 10, True),
        ("CNN (2 conv 3x3, pool, linear) training step, batch 64", cnn_step, 5, True),
        (
            "LSTM 128->256, seq 32, batch 32: forward",
            recurrent("LSTM", 128, 256, 32, 32, backward=False),
            5,
            True,
        ),
        (
            "LSTM 128->256, seq 32, batch 32: forward+backward",
            recurrent("LSTM", 128, 256, 32, 32),
            5,
            True,
        ),
        (
            "GRU 128->256, seq 32, batch 32: forward+backward",
            recurrent("GRU", 128, 256, 32, 32),
            5,
            True,
        ),
        ("state_dict + load_state_dict, 20 Linear(64, 64)", state_dict_round_trip, 20, False),
    ]:
        if gemm_bound or not gemm_only():
            rows.append(compare(name, make, libs=LIBS, number=number))
    report("nn overheads (float32, CPU)", rows)
    title, share = lstm_share_of_sgemm()
    report(title, share)


if __name__ == "__main__":
    main()
