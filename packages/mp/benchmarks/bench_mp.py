"""Tensors through a Queue between two processes, beside torch.multiprocessing.

Rows: one 100 MB tensor (already in shared memory, as after the first trip) from a
child to the parent, and 10,000 tensors of 1 KB; each timed from the first put in the
child to the last get in the parent (the child's start is not counted). Both with the
fork start method.
"""

from __future__ import annotations

import time

from flambeau_bench import Timing, attempt, report

try:
    import torch
    import torch.multiprocessing as torch_mp
except ImportError:
    torch = torch_mp = None

import flambeau
import flambeau.multiprocessing as flambeau_mp


def _producer(lib_name, queue, go, done, count, numel):
    lib = flambeau if lib_name == "flambeau" else torch
    tensors = [lib.ones(numel) for _ in range(count)]
    for t in tensors:
        t.share_memory_()  # the copy into shared memory is not what is measured
    go.wait()
    start = time.perf_counter()
    for t in tensors:
        queue.put(t)
    queue.put(start)
    done.wait(600)  # PyTorch's file_descriptor strategy needs the sender alive until then


def trip(mp, lib_name, count: int, numel: int, repeat: int = 3) -> Timing:
    ctx = mp.get_context("fork")
    runs = []
    for _ in range(repeat):
        queue, go, done = ctx.Queue(), ctx.Event(), ctx.Event()
        p = ctx.Process(target=_producer, args=(lib_name, queue, go, done, count, numel))
        p.start()
        try:
            go.set()
            got = [queue.get(timeout=300) for _ in range(count)]
            start = queue.get(timeout=300)
            runs.append(time.perf_counter() - start)
            assert float(got[-1][0]) == 1.0
            del got
        finally:
            done.set()
            p.join(60)
            if p.is_alive():
                p.kill()
    runs.sort()
    return Timing(runs[0], runs[len(runs) // 2])


rows = []
for what, count, numel in [
    ("one 100 MB tensor through a Queue", 1, 25 << 20),
    ("10,000 tensors of 1 KB through a Queue", 10_000, 256),
]:
    ours = attempt(lambda c=count, n=numel: trip(flambeau_mp, "flambeau", c, n), what)
    theirs = (
        attempt(lambda c=count, n=numel: trip(torch_mp, "torch", c, n), what) if torch else None
    )
    rows.append((what, ours, None, theirs))
report("multiprocessing (fork, CPU tensors)", rows)
