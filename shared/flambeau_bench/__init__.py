"""The benchmark harness shared by every packages/*/benchmarks/bench_*.py.

`nox -s bench` puts shared/ on PYTHONPATH. A script times each workload with
`measure`, guards it with `attempt`, and prints rows with `report`:

    row = ("add 16M f32", flambeau_time, numpy_time, torch_time)   # None: n/a

Ratios are numpy/flambeau and torch/flambeau: above 1 means flambeau is faster
(or smaller, for sizes). Timings belong here, never in pass/fail tests.
"""

from __future__ import annotations

import statistics
import sys
import timeit
from collections.abc import Callable, Sequence
from typing import NamedTuple, TypeVar

__all__ = ["Timing", "attempt", "measure", "report"]

T = TypeVar("T")
LIBRARIES = ("flambeau", "numpy", "torch")


class Timing(NamedTuple):
    best: float  # seconds per call
    median: float


def measure(fn: Callable[[], object], *, repeat: int = 5, number: int = 1) -> Timing:
    """Best and median seconds per call of `fn` over `repeat` runs of `number` calls."""
    fn()  # warm-up: lazy initialisation and first-touch allocation are not the steady state
    runs = [t / number for t in timeit.repeat(fn, repeat=repeat, number=number)]
    return Timing(min(runs), statistics.median(runs))


def attempt(fn: Callable[[], T], what: str = "") -> T | None:
    """`fn()`, or None (shown as n/a) when it raises, e.g. for an op not written yet."""
    try:
        return fn()
    except Exception as e:  # one missing op must not end the run
        print(f"  n/a {what}: {type(e).__name__}: {e}".rstrip(), file=sys.stderr)
        return None


def _number(v: float | Timing | None) -> float | None:
    return v.best if isinstance(v, Timing) else v


def _format(v: float | None, unit: str) -> str:
    if v is None:
        return "n/a"
    if unit == "bytes":
        return f"{v / 2**20:.1f} MiB"
    for scale, name in ((1, "s"), (1e-3, "ms"), (1e-6, "us")):
        if v >= scale:
            return f"{v / scale:.3g} {name}"
    return f"{v / 1e-9:.3g} ns"


def _ratio(other: float | None, ours: float | None) -> str:
    return "n/a" if other is None or not ours else f"{other / ours:.2f}x"


def report(title: str, rows: Sequence[tuple], *, unit: str = "s") -> None:
    """Print an aligned table of (workload, flambeau, numpy, torch) rows with ratios.

    Values are seconds (float or Timing, whose best is shown) or, with
    unit="bytes", sizes; None prints n/a.
    """
    table = [["workload", *LIBRARIES, "numpy/flambeau", "torch/flambeau"]]
    for name, *values in rows:
        ours, np_, torch_ = (_number(v) for v in values)
        cells = [_format(v, unit) for v in (ours, np_, torch_)]
        table.append([name, *cells, _ratio(np_, ours), _ratio(torch_, ours)])
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    lines = []
    for row in table:
        cells = [c.rjust(w) for c, w in zip(row, widths, strict=True)]
        cells[0] = row[0].ljust(widths[0])  # names left-aligned, numbers right-aligned
        lines.append("  ".join(cells))
    print(f"\n{title}\n{'=' * len(title)}")
    print(lines[0], "-" * len(lines[0]), *lines[1:], sep="\n", flush=True)
