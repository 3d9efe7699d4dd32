"""A job that shares tensors between a parent and a worker, for test_leaks.py.

Usage: python _leak_scenario.py MODE START_METHOD. The parent sends the worker a 200 MB
tensor and 2,000 small ones and prints "ready" once the worker holds them all; then:
exit: both finish normally; raise: the worker raises; otherwise the test kills
processes with SIGKILL. The worker leaves when its parent is gone, as data-loading
workers do.
"""

from __future__ import annotations

import os
import sys
import time

import flambeau
import flambeau.multiprocessing as mp


def worker(queue, ready, mode, parent):
    held = []
    while True:
        try:
            item = queue.get(timeout=0.2)
        except Exception:
            if os.getppid() != parent:
                return  # orphaned: the parent was killed
            continue
        if item is None:
            break
        held.append(item)
        if len(held) == 2001:
            ready.put(os.getpid())
    if mode == "raise":
        raise RuntimeError("the worker failed")
    while mode != "exit" and os.getppid() == parent:
        time.sleep(0.2)


def main(mode: str, method: str) -> None:
    ctx = mp.get_context(method)
    queue, ready = ctx.Queue(), ctx.Queue()
    p = ctx.Process(target=worker, args=(queue, ready, mode, os.getpid()))
    p.start()
    big = flambeau.ones(50 << 20)  # 200 MB
    queue.put(big)
    small = [flambeau.full((256,), float(i)) for i in range(2000)]
    for t in small:
        queue.put(t)
    child = ready.get(timeout=120)
    print(f"ready {os.getpid()} {child}", flush=True)
    queue.put(None)
    if mode in ("exit", "raise"):
        p.join(120)
        return
    time.sleep(600)  # until killed


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
