"""What importing the package costs a worker: spawn and forkserver workers import it
fresh, so it must not pull in NumPy or the backend-plugin search (importlib.metadata)."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("numpy", "importlib.metadata")


def _run(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_import_adds_no_heavy_module():
    code = f"""
import sys, flambeau
before = {{m for m in {HEAVY!r} if m in sys.modules}}
import flambeau.utils.data
from flambeau.utils.data._utils import worker
print(sorted({{m for m in {HEAVY!r} if m in sys.modules}} - before))
"""
    assert _run(code) == "[]"


def test_numpy_collation_after_a_late_numpy_import():
    code = """
import flambeau
from flambeau.utils.data import default_collate
from flambeau.utils.data._utils.collate import default_collate_fn_map as m
import numpy as np
b = default_collate([np.arange(2), np.arange(2)])
s = default_collate([np.float64(1.5), np.float64(2.0)])
print(b.tolist(), s.dtype == flambeau.float64, list(m)[1] is np.ndarray)
"""
    assert _run(code) == "[[0, 1], [0, 1]] True True"


def test_forked_workers_inherit_numpy_random_instead_of_importing_it():
    # Each worker seeds NumPy's generator; forked workers used to import numpy.random
    # themselves (40-50 ms each, at once), the parent now does it once before forking.
    code = """
import sys
import numpy, flambeau
from flambeau.utils.data import DataLoader, TensorDataset
before = "numpy.random" in sys.modules
loader = DataLoader(TensorDataset(flambeau.arange(8.0)), batch_size=4, num_workers=1,
                    multiprocessing_context="fork")
got = [b[0].tolist() for b in loader]
print(before, "numpy.random" in sys.modules, got)
"""
    assert _run(code) == "False True [[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0]]"
