"""Indexing benchmarks beside NumPy and PyTorch (run like bench_core.py).

gather and index_select of 1M indices, boolean-mask select on 16M float32
(masked_select and x[mask]), advanced __getitem__/__setitem__, scatter_add and
index_put(accumulate=True) of 1M values. Each workload is guarded so that a
missing op prints n/a.
"""

from __future__ import annotations

import numpy as np

import flambeau
from flambeau_bench import banner, report
from flambeau_bench import compare as _compare

try:
    import torch
except ImportError:
    torch = None

N = 16 * 2**20
K = 2**20
MODULES = {"flambeau": flambeau, "numpy": np, "torch": torch}


def convert(lib: str, *arrays: np.ndarray) -> list:
    """The same data in each library (flambeau and torch share NumPy's buffer)."""
    return list(arrays) if lib == "numpy" else [MODULES[lib].from_numpy(a) for a in arrays]


def compare(name: str, make, *, number: int = 3) -> tuple:
    """One row: make(lib) sets up and returns the callable to time in `lib`."""
    return _compare(name, make, number=number)


def gather(src, index, dim):
    def make(lib):
        s, i = convert(lib, src, index)
        if lib == "numpy":
            return lambda: np.take_along_axis(s, i, axis=dim)
        return lambda: MODULES[lib].gather(s, dim, i)

    return make


def index_select(src, index):
    def make(lib):
        s, i = convert(lib, src, index)
        if lib == "numpy":
            return lambda: np.take(s, i, axis=0)
        return lambda: MODULES[lib].index_select(s, 0, i)

    return make


def masked_select(src, mask):
    def make(lib):
        s, m = convert(lib, src, mask)
        if lib == "numpy":
            return lambda: s[m]
        return lambda: MODULES[lib].masked_select(s, m)

    return make


def getitem(src, key):
    def make(lib):
        s, k = convert(lib, src, key)
        return lambda: s[k]

    return make


def setitem(dst, key, value):
    def make(lib):
        d, k, v = convert(lib, dst.copy(), key, value)

        def run():
            d[k] = v

        return run

    return make


def scatter_add(dst, index, values):
    def make(lib):
        d, i, v = convert(lib, dst, index, values)
        if lib == "numpy":
            return lambda: np.add.at(d.copy(), i, v)
        return lambda: MODULES[lib].scatter_add(d, 0, i, v)

    return make


def index_put_acc(dst, index, values):
    def make(lib):
        d, i, v = convert(lib, dst, index, values)
        if lib == "numpy":
            return lambda: np.add.at(d.copy(), i, v)
        return lambda: d.index_put((i,), v, accumulate=True)

    return make


def rows() -> list[tuple]:
    rng = np.random.default_rng(0)
    x = rng.random(N, dtype=np.float32)
    mask = x > 0.5
    table = rng.random((4096, 256), dtype=np.float32)
    flat_idx = rng.integers(0, N, K)
    gather_idx = rng.integers(0, 4096, (K // 256, 256))
    rows_idx = rng.integers(0, 4096, K // 256)
    small = np.zeros(65536, dtype=np.float32)
    acc_idx = rng.integers(0, 65536, K)
    acc_vals = rng.random(K, dtype=np.float32)
    return [
        compare("gather 1M idx (dim 0, 4096x256)", gather(table, gather_idx, 0)),
        compare("gather 1M idx (1-d, from 16M)", gather(x, flat_idx, 0)),
        compare("index_select 4096 rows of 256", index_select(table, rows_idx)),
        compare("masked_select 16M f32", masked_select(x, mask)),
        compare("x[mask] 16M f32", getitem(x, mask)),
        compare("x[idx] 1M idx from 16M", getitem(x, flat_idx)),
        compare("x[idx] = v 1M idx into 16M", setitem(x, flat_idx, acc_vals)),
        compare("scatter_add 1M into 64K", scatter_add(small, acc_idx, acc_vals)),
        compare("index_put acc 1M into 64K", index_put_acc(small, acc_idx, acc_vals)),
    ]


def main() -> None:
    banner("best of 5 runs; ratio above 1 = flambeau faster; numpy is single-threaded")
    report("tensor-core: indexing", rows())


if __name__ == "__main__":
    main()
