"""Autograd overheads beside PyTorch: recording one op, and backward per op of a chain."""

from __future__ import annotations

import flambeau
from flambeau_bench import attempt, measure, report

try:
    import torch
except ImportError:
    torch = None


def record_add(lib):
    a = lib.ones(1, requires_grad=True)
    b = lib.ones(1, requires_grad=True)
    return measure(lambda: a + b, repeat=5, number=20_000)


def add_no_grad_inputs(lib):
    a, b = lib.ones(1), lib.ones(1)
    return measure(lambda: a + b, repeat=5, number=50_000)


def chain_backward(lib, n=100):
    x = lib.ones(1, requires_grad=True)

    def run():
        y = x
        for _ in range(n):
            y = y * 1.0001
        y.backward()

    t = measure(run, repeat=5, number=20)
    return type(t)(t.best / n, t.median / n)


rows = []
for name, fn in [
    ("record c = a + b (requires grad)", record_add),
    ("c = a + b, no input requires grad", add_no_grad_inputs),
    ("chain of 100 muls: forward+backward per op", chain_backward),
]:
    ours = attempt(lambda fn=fn: fn(flambeau), name)
    theirs = attempt(lambda fn=fn: fn(torch), name) if torch is not None else None
    rows.append((name, ours, None, theirs))
report("autograd overheads (1-element float32 tensors)", rows)
