"""Linear-algebra benchmarks beside NumPy and PyTorch (run with `nox -s bench`).

sgemm at 256, 1024 and 2048 (time, then GFLOP/s with the share of the machine's
float32 peak when it can be estimated), and solve / svd / cholesky at 512 in
float64. Every library gets the same data; OpenBLAS runs on
flambeau.get_num_threads() threads. Under FLAMBEAU_BENCH_ONLY=gemm only the sgemm
tables run.
"""

from __future__ import annotations

import os
import re

import numpy as np

import flambeau
from flambeau_bench import banner, compare, gemm_only, report

try:
    import torch
except ImportError:
    torch = None

THREADS = os.cpu_count() or 1
MODULES = {"flambeau": flambeau, "numpy": np, "torch": torch}
GEMM_SIZES = (256, 1024, 2048)


def convert(lib: str, *arrays: np.ndarray) -> list:
    return list(arrays) if lib == "numpy" else [MODULES[lib].from_numpy(a) for a in arrays]


def sgemm(n: int):
    rng = np.random.default_rng(0)
    a, b = (rng.random((n, n), dtype=np.float32) for _ in range(2))

    def make(lib):
        x, y = convert(lib, a, b)
        return lambda: x @ y

    return make


def spd(n: int) -> np.ndarray:
    a = np.random.default_rng(1).random((n, n))
    return a @ a.T + n * np.eye(n)


def linalg_op(name: str, *arrays: np.ndarray):
    def make(lib):
        args = convert(lib, *arrays)
        if lib == "numpy":
            fn = {"solve": np.linalg.solve, "svd": np.linalg.svd, "cholesky": np.linalg.cholesky}
            return lambda: fn[name](*args)
        return lambda: getattr(MODULES[lib].linalg, name)(*args)

    return make


def cpu_peak_gflops() -> float | None:
    """float32 peak: cores x GHz x FLOPs/cycle (2 FMA units x 16 lanes with AVX-512, x 8
    with AVX2) at /proc/cpuinfo's clock; None off Linux. A virtual machine reports its
    nominal clock, which boost exceeds (a Zen 5 guest says 2.6 GHz and sustains about
    4.3 GHz of FMAs), so shares above 100% mean the clock, not the kernel, is off."""
    try:
        info = open("/proc/cpuinfo").read()
    except OSError:
        return None
    ghz = re.search(r"model name.*@ ([\d.]+)GHz", info)
    mhz = re.search(r"cpu MHz\s*:\s*([\d.]+)", info)
    clock = float(ghz.group(1)) if ghz else (float(mhz.group(1)) / 1000 if mhz else None)
    if clock is None:
        return None
    lanes = 16 if "avx512f" in info else (8 if "avx2" in info else 4)
    return THREADS * clock * 2 * 2 * lanes


def main() -> None:
    banner()
    gemm = [compare(f"sgemm {n}", sgemm(n), number=20 if n <= 256 else 1) for n in GEMM_SIZES]
    report("linalg: sgemm (float32 matmul)", gemm)
    peak = cpu_peak_gflops()
    rates = []
    for (name, *times), n in zip(gemm, GEMM_SIZES, strict=True):
        gflops = [None if t is None else 2.0 * n**3 / t.best / 1e9 for t in times]
        share = (
            f", flambeau at {gflops[0] / peak:.0%} of nominal peak" if peak and gflops[0] else ""
        )
        rates.append((f"{name}{share}", *gflops))
    peak_note = f"; nominal peak {peak:.0f} at the reported clock" if peak else ""
    report(f"linalg: sgemm rate (2 n^3 / best time){peak_note}", rates, unit="GFLOP/s")
    if gemm_only():
        return
    a = spd(512)
    b = np.random.default_rng(2).random((512, 512))
    report(
        "linalg: LAPACK at 512 (float64)",
        [
            compare("solve 512", linalg_op("solve", b + 512 * np.eye(512), b)),
            compare("svd 512", linalg_op("svd", b)),
            compare("cholesky 512", linalg_op("cholesky", a)),
        ],
    )


if __name__ == "__main__":
    main()
