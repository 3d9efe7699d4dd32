"""Optimizer step time beside PyTorch: SGD with momentum and Adam over the parameters of a
784-512-256-10 MLP (about 0.5M parameters in 6 tensors) and over 200 small tensors."""

from __future__ import annotations

import numpy as np

import flambeau
import flambeau.optim  # noqa: F401  (torch.optim is imported with torch)
from flambeau_bench import compare, library, report

MLP = [(512, 784), (512,), (256, 512), (256,), (10, 256), (10,)]
SMALL = [(16, 16) if i % 2 == 0 else (16,) for i in range(200)]


def step(lib, shapes, make_opt):
    lib = library(lib)
    rng = np.random.default_rng(0)
    params = []
    for s in shapes:
        p = lib.from_numpy(rng.standard_normal(s).astype(np.float32)).requires_grad_()
        p.grad = lib.from_numpy(rng.standard_normal(s).astype(np.float32) * 1e-3)
        params.append(p)
    opt = make_opt(lib, params)
    return opt.step


def sgd(lib, params):
    return lib.optim.SGD(params, lr=0.01, momentum=0.9)


def adam(lib, params):
    return lib.optim.Adam(params, lr=1e-3)


def main() -> None:
    rows = []
    for label, shapes in [("MLP 784-512-256-10, 6 tensors", MLP), ("200 small tensors", SMALL)]:
        for name, make in [("SGD momentum", sgd), ("Adam", adam)]:
            rows.append(
                compare(
                    f"{name} step, {label}",
                    lambda lib, s=shapes, m=make: step(lib, s, m),
                    libs=("flambeau", "torch"),
                    repeat=7,
                    number=20,
                )
            )
    report("optimizer step (float32, CPU)", rows)


if __name__ == "__main__":
    main()
