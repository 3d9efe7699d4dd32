"""Sorting benchmarks beside NumPy and PyTorch (run with `nox -s bench`).

sort of 1M float32, topk k=100 along the rows of a 4096x4096 float32 matrix,
unique of 1M int64. Every library gets the same data; a missing op prints n/a.
"""

from __future__ import annotations

import numpy as np

import flambeau
from flambeau_bench import banner, compare, report

try:
    import torch
except ImportError:
    torch = None

N = 2**20
M = 4096
K = 100
MODULES = {"flambeau": flambeau, "numpy": np, "torch": torch}


def convert(lib: str, a: np.ndarray):
    return a if lib == "numpy" else MODULES[lib].from_numpy(a)


def sort(a: np.ndarray):
    def make(lib):
        x = convert(lib, a)
        return (lambda: np.sort(x, kind="stable")) if lib == "numpy" else (lambda: x.sort())

    return make


def topk(a: np.ndarray):
    def make(lib):
        x = convert(lib, a)
        if lib == "numpy":  # argpartition finds the k largest, unsorted; then sort them
            return lambda: np.sort(np.partition(x, M - K, axis=1)[:, M - K :], axis=1)
        return lambda: x.topk(K, dim=1)

    return make


def unique(a: np.ndarray):
    def make(lib):
        x = convert(lib, a)
        return (lambda: np.unique(x)) if lib == "numpy" else (lambda: MODULES[lib].unique(x))

    return make


def compute_rows() -> list[tuple]:
    rng = np.random.default_rng(0)
    x = rng.random(N, dtype=np.float32)
    square = rng.random((M, M), dtype=np.float32)
    ints = rng.integers(0, N // 4, N, dtype=np.int64)
    return [
        compare("sort 1M f32", sort(x)),
        compare(f"topk k={K} 4096x4096 rows", topk(square)),
        compare("unique 1M i64", unique(ints)),
    ]


def main() -> None:
    banner("best of 5 runs; ratio above 1 = flambeau faster; numpy is single-threaded")
    report("tensor-core: sorting", compute_rows())


if __name__ == "__main__":
    main()
