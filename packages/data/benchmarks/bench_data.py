"""DataLoader throughput beside PyTorch, on issue 15's workload: a TensorDataset of
60,000 x 784 float32 images and int64 labels, batch 128, shuffled (469 batches an epoch).

Rows: an epoch by manual slicing (randperm + index), by DataLoader with 0 and 2 workers
(persistent, so worker start is timed apart), the main process's CPU per batch with 2
workers (median of 7 epochs), the time to the first batch with 2 workers under each
start method, and a dataset with a ~30 us Python transform per sample (12,000 samples)
at 0 and 2 workers.
Wall times on a shared 2-core machine swing; CPU times are steadier.
"""

from __future__ import annotations

import sys
import time

import flambeau
import flambeau.utils.data  # noqa: F401
from flambeau_bench import attempt, measure, report

torch = None  # imported under __main__ only: spawned workers re-run this module's imports

N, D, B = 60_000, 784, 128


def data(lib):
    lib.manual_seed(0)
    return lib.randn(N, D), lib.randint(0, 10, (N,))


def manual_epoch(lib, x, y):
    def run():
        perm = lib.randperm(N)
        for i in range(0, N, B):
            idx = perm[i : i + B]
            x[idx], y[idx]

    return run


def loader_epoch(loader):
    def run():
        for _ in loader:
            pass

    return run


def parent_cpu_per_batch(loader):
    """The main process's CPU time per batch, the median of 7 epochs (measure's untimed
    first epoch starts the workers and their rings; a shared machine's epochs vary)."""
    cpu = measure(loader_epoch(loader), repeat=7, timer=time.process_time)
    return cpu.median / len(loader)


def first_batch(lib, x, y, method):
    """From DataLoader() to the first batch; the workers' shutdown is not timed (measure
    releases the iterator after the clock stops). The untimed first call starts a
    forkserver's server, which a program starts once."""

    def run(ds):
        loader = lib.utils.data.DataLoader(
            ds, batch_size=B, shuffle=True, num_workers=2, multiprocessing_context=method
        )
        it = iter(loader)
        next(it)
        return it

    return measure(run, setup=lambda: lib.utils.data.TensorDataset(x, y), repeat=3)


class Heavy:
    """A map-style dataset whose samples each take a ~30 us Python transform."""

    def __init__(self, lib, n=12_000):
        self.lib = lib
        self.x = lib.randn(n, 16)
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        acc = 0.0
        for k in range(1200):  # ~30 us of Python
            acc += k * 0.5
        return self.x[i], acc


def heavy_epoch(lib, workers):
    ds = Heavy(lib)
    kw = {"persistent_workers": True} if workers else {}
    loader = lib.utils.data.DataLoader(ds, batch_size=B, shuffle=True, num_workers=workers, **kw)
    return measure(loader_epoch(loader), repeat=3)


def rows_for(lib):
    x, y = data(lib)
    ds = lib.utils.data.TensorDataset(x, y)
    out = {}
    out["manual"] = measure(manual_epoch(lib, x, y))
    out["w0"] = measure(loader_epoch(lib.utils.data.DataLoader(ds, batch_size=B, shuffle=True)))
    l2 = lib.utils.data.DataLoader(
        ds, batch_size=B, shuffle=True, num_workers=2, persistent_workers=True
    )
    out["w2"] = measure(loader_epoch(l2))
    out["w2cpu"] = parent_cpu_per_batch(l2)
    del l2
    for method in ("fork", "spawn", "forkserver"):
        out[method] = attempt(lambda m=method: first_batch(lib, x, y, m), f"first batch {method}")
    out["heavy0"] = heavy_epoch(lib, 0)
    out["heavy2"] = heavy_epoch(lib, 2)
    return out


def cpu_epoch_w0(lib):
    x, y = data(lib)
    loader = lib.utils.data.DataLoader(
        lib.utils.data.TensorDataset(x, y), batch_size=B, shuffle=True
    )
    manual = manual_epoch(lib, x, y)
    res = {}
    for name, fn in (("manual", manual), ("w0", loader_epoch(loader))):
        res[name] = measure(fn, timer=time.process_time).best
    return res


if __name__ == "__main__":
    try:
        import torch
        import torch.utils.data  # noqa: F401
    except ImportError:
        torch = None
    if "--one-thread" in sys.argv:
        flambeau.set_num_threads(1)
        if torch is not None:
            torch.set_num_threads(1)
    ours = rows_for(flambeau)
    theirs = attempt(lambda: rows_for(torch), "torch") if torch is not None else None
    theirs = theirs or {}
    cpu_ours = cpu_epoch_w0(flambeau)
    cpu_theirs = cpu_epoch_w0(torch) if torch is not None else {}
    labels = [
        ("manual", "epoch, manual slicing (randperm + index)"),
        ("w0", "epoch, DataLoader num_workers=0"),
        ("w2", "epoch, DataLoader num_workers=2 (persistent)"),
        ("w2cpu", "main-process CPU per batch, num_workers=2"),
        ("fork", "first batch, 2 workers, fork"),
        ("spawn", "first batch, 2 workers, spawn"),
        ("forkserver", "first batch, 2 workers, forkserver"),
        ("heavy0", "epoch, ~30us/sample transform, 12k, workers=0"),
        ("heavy2", "epoch, ~30us/sample transform, 12k, workers=2"),
    ]
    report(
        "DataLoader, TensorDataset 60000x784 f32 + int64 labels, batch 128, shuffle",
        [(label, ours.get(k), None, theirs.get(k)) for k, label in labels],
    )
    report(
        "CPU seconds per epoch (process time, main process), workers=0",
        [
            ("manual slicing", cpu_ours["manual"], None, cpu_theirs.get("manual")),
            ("DataLoader num_workers=0", cpu_ours["w0"], None, cpu_theirs.get("w0")),
        ],
    )
    n_batches = -(-N // B)
    for name, r in (("flambeau", ours), ("torch", theirs)):
        if r.get("w0") and r.get("w2"):
            print(
                f"{name}: w0 {n_batches / r['w0'].best:,.0f} batches/s, "
                f"w2 {n_batches / r['w2'].best:,.0f} batches/s"
            )
    print(
        f"flambeau w0 CPU / manual-slicing CPU: {cpu_ours['w0'] / cpu_ours['manual']:.2f}"
        + (f"; torch: {cpu_theirs['w0'] / cpu_theirs['manual']:.2f}" if cpu_theirs else "")
    )
