"""tensor-core benchmarks beside NumPy and PyTorch (run with `nox -s bench`).

Elementwise ops on 16M float32, float32 + int32 beside float32 + float32 (16M each;
the table after it gives mixed / same-dtype time per library), reductions over
4096x4096 (16M float32), transposing copies (2-d and batched), per-op overhead on
1-element tensors, import cost, and package size. Every library gets the same data;
each workload is guarded so that a missing op prints n/a.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

import flambeau
from flambeau_bench import attempt, banner, report
from flambeau_bench import compare as _compare

try:
    import torch
except ImportError:
    torch = None

ROOT = Path(__file__).resolve().parents[3]
N = 16 * 2**20
M = 4096


MODULES = {"flambeau": flambeau, "numpy": np, "torch": torch}


def convert(lib: str, *arrays: np.ndarray) -> list:
    """The same data in each library (flambeau and torch share NumPy's buffer)."""
    return list(arrays) if lib == "numpy" else [MODULES[lib].from_numpy(a) for a in arrays]


def function(name: str):
    """lib -> the library's function `name`, e.g. exp."""
    return lambda lib: getattr(MODULES[lib], name)


def relu(lib: str):
    if lib == "numpy":
        return lambda a: np.maximum(a, 0)
    if lib == "flambeau" and not hasattr(flambeau, "relu"):
        return lambda t: t.clamp(min=0)
    return MODULES[lib].relu


def add(lib: str):
    return lambda a, b: a + b


def add_f32(lib: str):
    """a + b with a float32 result: NumPy would promote float32 + int32 to float64."""
    if lib == "numpy":
        return lambda a, b: np.add(a, b, dtype=np.float32)
    return lambda a, b: a + b


def muladd(lib: str):
    return lambda a, b, c: a * b + c


def elementwise(op, *arrays: np.ndarray):
    """make(lib) for `op(lib)` applied to `arrays` converted to lib."""

    def make(lib):
        fn, args = op(lib), convert(lib, *arrays)
        return lambda: fn(*args)

    return make


def reduction(matrix: np.ndarray, dim: int | None):
    def make(lib):
        (a,) = convert(lib, matrix)
        if dim is None:
            return a.sum
        return (lambda: a.sum(axis=dim)) if lib == "numpy" else (lambda: a.sum(dim=dim))

    return make


def transposed_copy(array: np.ndarray):
    """make(lib) for a contiguous copy of `array` with its last two dims swapped."""

    def make(lib):
        (a,) = convert(lib, array)
        if lib == "numpy":
            return lambda: np.ascontiguousarray(np.swapaxes(a, -1, -2))
        return lambda: a.transpose(-1, -2).contiguous()

    return make


def compare(name: str, make, *, number: int = 3) -> tuple:
    """One row: make(lib) sets up and returns the callable to time in `lib`."""
    return _compare(name, make, number=number)


def compute_rows() -> list[tuple]:
    rng = np.random.default_rng(0)
    x, y, z = (rng.random(N, dtype=np.float32) - 0.5 for _ in range(3))
    ints = rng.integers(-1000, 1000, N, dtype=np.int32)
    square = rng.random((M, M), dtype=np.float32)
    one = np.ones(1, dtype=np.float32)
    matrix = rng.random((784, 512), dtype=np.float32)
    batch = rng.random((64, 128, 256), dtype=np.float32)
    return [
        compare("add 16M f32", elementwise(add, x, y)),
        compare("add 16M f32 + i32 (f32 result)", elementwise(add_f32, x, ints)),
        compare("a*b+c 16M f32", elementwise(muladd, x, y, z)),
        compare("exp 16M f32", elementwise(function("exp"), x)),
        compare("relu 16M f32", elementwise(relu, x)),
        compare("sum all 4096x4096 (16M f32)", reduction(square, None)),
        compare("sum dim=1 4096x4096 (16M f32)", reduction(square, 1)),
        compare("sum dim=0 4096x4096 (16M f32)", reduction(square, 0)),
        compare("x.t().contiguous() 784x512 f32", transposed_copy(matrix), number=20),
        compare("x.mT.contiguous() 64x128x256 f32", transposed_copy(batch)),
        compare("a + b, 1 element", elementwise(add, one, one), number=20000),
    ]


def mixed_over_same(rows: list[tuple]) -> tuple:
    """Each library's f32 + i32 time over its f32 + f32 time (1 = no cost for mixing)."""
    same = next(r for r in rows if r[0] == "add 16M f32")
    mixed = next(r for r in rows if r[0].startswith("add 16M f32 + i32"))
    return (
        "add 16M: (f32 + i32) / (f32 + f32)",
        *(m.best / s.best if m and s else None for m, s in zip(mixed[1:], same[1:])),
    )


# Runs in a fresh interpreter: seconds to import, then peak RSS in bytes. VmHWM, not
# getrusage's ru_maxrss, which Linux carries over from the parent across fork and exec.
PROBE = r"""
import re, sys, time
t = time.perf_counter()
if sys.argv[1]:
    __import__(sys.argv[1])
seconds = time.perf_counter() - t
status = open("/proc/self/status").read()
print(seconds, int(re.search(r"VmHWM:\s*(\d+) kB", status).group(1)) * 1024)
"""


def import_cost(module: str) -> tuple[float, float]:
    """Best import time over 3 fresh processes, and the RSS it adds to a bare interpreter."""
    runs = []
    with tempfile.TemporaryDirectory() as cwd:  # no source tree on sys.path
        for mod in (module, "") * 3:
            out = subprocess.run(
                [sys.executable, "-c", PROBE, mod], cwd=cwd, capture_output=True, text=True
            )
            out.check_returncode()
            runs.append((mod, *map(float, out.stdout.split())))
    seconds = min(t for m, t, _ in runs if m)
    rss = min(r for m, _, r in runs if m) - min(r for m, _, r in runs if not m)
    return seconds, rss


def import_rows() -> tuple[list[tuple], list[tuple]]:
    costs = [
        None if MODULES[lib] is None else attempt(lambda lib=lib: import_cost(lib), "import")
        for lib in MODULES
    ]
    seconds = [c and c[0] for c in costs]
    rss = [c and c[1] for c in costs]
    return [("import", *seconds)], [("RSS added by import", *rss)]


def dir_size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def torch_wheel_size() -> int:
    """Size of the torch wheel this environment installed (pip copies it from its source)."""
    version = torch.__version__.split("+")[0]
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "-q", f"torch=={version}", "--no-deps",
             "-d", tmp],
            check=True, capture_output=True, timeout=600,
        )  # fmt: skip
        return sum(f.stat().st_size for f in Path(tmp).glob("torch-*.whl"))


def size_rows() -> list[tuple]:
    def wheel():
        wheels = sorted(ROOT.glob("dist/flambeau_tensor_core-*.whl"), key=os.path.getmtime)
        return wheels[-1].stat().st_size

    has_torch = torch is not None
    return [
        (
            "wheel file",
            attempt(wheel, "flambeau wheel"),
            None,
            attempt(torch_wheel_size, "torch wheel") if has_torch else None,
        ),
        (
            "installed package",
            dir_size(Path(flambeau.__file__).parent),
            dir_size(Path(np.__file__).parent),
            dir_size(Path(torch.__file__).parent) if has_torch else None,
        ),
    ]


def main() -> None:
    banner("best of 5 runs; ratio above 1 = flambeau faster or smaller; numpy is single-threaded")
    rows = compute_rows()
    report("tensor-core: compute", rows)
    report(
        "tensor-core: mixed dtypes, f32 + i32 time / f32 + f32 time (16M)",
        [mixed_over_same(rows)],
        unit="x",
    )
    seconds, rss = import_rows()
    report("tensor-core: import time (fresh process)", seconds)
    report("tensor-core: memory and size", rss + size_rows(), unit="bytes")


if __name__ == "__main__":
    main()
