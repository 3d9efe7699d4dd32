"""save + load of a 100 MB state dict beside NumPy (np.savez) and PyTorch (run with `nox -s bench`).

The state dict is that of a small MLP-like model: twenty float32 tensors of
5 MB each. Every library writes to and reads from a file in the same temporary
directory (the page cache, so this measures the format, not the disk).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

import flambeau
from flambeau_bench import compare, report

try:
    import torch
except ImportError:
    torch = None

TENSORS, ELEMENTS = 20, 5 * 2**20 // 4  # 20 x 5 MiB of float32 = 100 MiB


def state(rng) -> dict[str, np.ndarray]:
    return {f"layer{i}.weight": rng.random(ELEMENTS, dtype=np.float32) for i in range(TENSORS)}


def make(lib: str, arrays: dict[str, np.ndarray], path: Path, what: str):
    if lib == "numpy":
        save = lambda: np.savez(path, **arrays)  # noqa: E731
        load = lambda: dict(np.load(path))  # noqa: E731
    else:
        mod = flambeau if lib == "flambeau" else torch
        sd = {k: mod.from_numpy(v) for k, v in arrays.items()}
        save = lambda: mod.save(sd, path)  # noqa: E731
        load = lambda: mod.load(path)  # noqa: E731
    save()
    return {"save": save, "load": load, "save+load": lambda: (save(), load())}[what]


def main() -> None:
    arrays = state(np.random.default_rng(0))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for what in ("save", "load", "save+load"):
            setup = lambda lib, what=what: make(lib, arrays, Path(tmp) / f"{lib}.npz", what)  # noqa: E731
            rows.append(compare(f"{what} 100 MiB state dict", setup, repeat=3))
    report("tensor-core: serialization", rows)


if __name__ == "__main__":
    main()
