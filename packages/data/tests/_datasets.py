"""Datasets for the worker tests, importable by spawned and forkserver workers."""

from __future__ import annotations

import os
import random
import signal
import time

import flambeau
from flambeau.utils.data import Dataset, IterableDataset, SharedList, get_worker_info


class Squares(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return i * i


class Nested(Dataset):
    """Samples of nested dicts, tuples and strings."""

    def __len__(self):
        return 10

    def __getitem__(self, i):
        return {"x": flambeau.full((2,), float(i)), "meta": (i, f"s{i}")}


class Shrinking(Dataset):
    """Sample i is arange(n - i): each batch of one a layout of its own."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return flambeau.arange(float(self.n - i))


class WorkerView(Dataset):
    """Each sample says which worker read it and what its random generators give."""

    def __len__(self):
        return 8

    def __getitem__(self, i):
        info = get_worker_info()
        np_value = -1.0
        try:
            import numpy as np

            np_value = float(np.random.rand())
        except ImportError:
            pass
        return {
            "index": i,
            "worker": -1 if info is None else info.id,
            "num_workers": -1 if info is None else info.num_workers,
            "seed": -1 if info is None else info.seed,
            "initial_seed": flambeau.initial_seed(),
            "random": random.random(),
            "numpy": np_value,
            "pid": os.getpid(),
        }


class Sharded(IterableDataset):
    """range(n), each worker reading every num_workers-th element from its id."""

    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        start, step = (0, 1) if info is None else (info.id, info.num_workers)
        return iter(range(start, self.n, step))


class Unsharded(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(range(self.n))


class Failing(Dataset):
    def __len__(self):
        return 10

    def __getitem__(self, i):
        if i == 5:
            raise ValueError(f"bad sample {i}")
        return i


class Dies(Dataset):
    """Sample `at` kills its worker with `sig`."""

    def __init__(self, sig, at=5):
        self.sig, self.at = sig, at

    def __len__(self):
        return 40

    def __getitem__(self, i):
        if i == self.at and get_worker_info() is not None:
            os.kill(os.getpid(), self.sig)
            time.sleep(10)
        return i


class Stuck(Dataset):
    def __len__(self):
        return 10

    def __getitem__(self, i):
        if i == 3 and get_worker_info() is not None:
            stuck_in_here()
        return i


def stuck_in_here():
    time.sleep(60)


class Slow(Dataset):
    """A ~`cost` seconds Python transform per sample."""

    def __init__(self, n, cost=0.002):
        self.n, self.cost = n, cost

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        end = time.perf_counter() + self.cost
        while time.perf_counter() < end:
            pass
        return i


class Items(Dataset):
    """Reads a chunk of `items` (a list or SharedList) per sample and reports how much
    the worker's private memory grew since its first sample."""

    def __init__(self, items, chunks):
        self.items = items
        self.chunks = chunks
        self.start = None

    def __len__(self):
        return self.chunks

    def __getitem__(self, c):
        if self.start is None:
            self.start = private_dirty_kb()
        n = len(self.items)
        lo, hi = c * n // self.chunks, (c + 1) * n // self.chunks
        total = 0
        for i in range(lo, hi):
            total += len(self.items[i])
        return total, private_dirty_kb() - self.start


def private_dirty_kb() -> int:
    with open("/proc/self/smaps_rollup") as f:
        for line in f:
            if line.startswith("Private_Dirty:"):
                return int(line.split()[1])
    return 0


def make_shared_list(n):
    return SharedList(f"item-{i}" for i in range(n))


def kill_self(sig):
    os.kill(os.getpid(), sig)


def init_fail(worker_id):
    raise RuntimeError(f"init of {worker_id} failed")


SIGNALS = {"SIGKILL": signal.SIGKILL, "SIGSEGV": signal.SIGSEGV, "SIGBUS": signal.SIGBUS}
