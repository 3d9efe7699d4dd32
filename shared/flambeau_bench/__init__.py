"""The benchmark harness shared by every packages/*/benchmarks/bench_*.py.

`nox -s bench` puts shared/ on PYTHONPATH. A script times each workload with
`measure` (or `compare`, which measures one workload in every library), guards it
with `attempt`, and prints rows with `report`:

    row = ("add 16M f32", flambeau_time, numpy_time, torch_time)   # None: n/a

Ratios are numpy/flambeau and torch/flambeau: above 1 means flambeau is faster
(or smaller, for sizes; for rates in GFLOP/s they are flambeau/other: higher is faster).
Timings belong here, never in pass/fail tests.

Environment variables (all optional):

FLAMBEAU_BENCH_JSON
    Path of the run's results file; `nox -s bench` sets it to
    build/bench/<UTC timestamp>.json. Unset: nothing is written. Each `report` appends
    its table to this one JSON document: {"schema": 1, "created": ..., "machine": {...},
    "tables": [...]}. The machine facts (CPU model and flags, cores, OS, versions,
    threads, each library's CPU capability, the OpenBLAS libraries loaded and their
    core, the OPENBLAS_* environment)
    are written once, by the first report of the run; every table records its own
    script, tag, threads, OpenBLAS environment and core, since those differ between the
    processes of a run. A table is {"title", "tag", "script", "unit", "statistic",
    "threads", "openblas_env", "openblas_core", "rows"}; a row is {"workload",
    "seconds" (or "bytes", "gflop_s", "ratio", after the unit): {library: value or
    null}, "median" (the other statistic, for timings), "ratios": {"numpy/flambeau",
    "torch/flambeau"}}. Appending is a read-modify-write under an exclusive
    `fcntl.flock` on `<path>.lock` (left beside the file), and the new document
    replaces the old with `os.replace`, so concurrent or successive bench processes
    never lose or tear a table.
FLAMBEAU_BENCH_TAG
    Appended to every table's title (printed and in the JSON, where it is also "tag"),
    e.g. "[OpenBLAS env unset]".
FLAMBEAU_BENCH_ONLY=gemm
    Scripts run only their GEMM-bound rows (those they guard with `gemm_only()`);
    `nox -s bench` uses it to rerun those rows with OPENBLAS_CORETYPE and
    OPENBLAS_L2_SIZE removed from the environment (OpenBLAS reads them when loaded).
FLAMBEAU_BENCH_REPEAT=N
    Caps every `measure`'s repeat count at N: quick runs while developing.
"""

from __future__ import annotations

import ctypes
import datetime
import importlib
import importlib.metadata
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NamedTuple, TypeVar

__all__ = [
    "Timing",
    "attempt",
    "banner",
    "compare",
    "gemm_only",
    "library",
    "measure",
    "report",
]

T = TypeVar("T")
LIBRARIES = ("flambeau", "numpy", "torch")
OPENBLAS_ENV = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
CPU_FLAGS = ("avx2", "avx512f", "avx512bw", "avx512_bf16", "fma")
UNITS = {"s": "seconds", "bytes": "bytes", "GFLOP/s": "gflop_s", "x": "ratio"}  # -> JSON key


class Timing(NamedTuple):
    best: float  # seconds per call
    median: float


def _repeat(repeat: int) -> int:
    cap = os.environ.get("FLAMBEAU_BENCH_REPEAT")
    return max(1, min(repeat, int(cap))) if cap else repeat


def measure(
    fn: Callable[..., object],
    *,
    repeat: int = 5,
    number: int = 1,
    setup: Callable[[], object] | None = None,
    timer: Callable[[], float] = time.perf_counter,
) -> Timing:
    """Best and median seconds per call of `fn` over `repeat` runs of `number` calls.

    With `setup`, each call is `fn(setup())` and only `fn` is timed (e.g. backward of a
    graph that setup builds); what `fn` returns is released after the clock stops.
    `timer` may be time.process_time for CPU time. One untimed call comes first: lazy
    initialisation and first-touch allocation are not the steady state.
    """
    fn(setup()) if setup else fn()
    runs = [_run(fn, number, setup, timer) for _ in range(_repeat(repeat))]
    return Timing(min(runs), statistics.median(runs))


def _run(
    fn: Callable[..., object],
    number: int,
    setup: Callable[[], object] | None = None,
    timer: Callable[[], float] = time.perf_counter,
) -> float:
    """Seconds per call over one run of `number` calls (see measure)."""
    if setup is None:  # one clock around the loop: no timer overhead per call
        t = timer()
        for _ in range(number):
            fn()
        return (timer() - t) / number
    total = 0.0
    for _ in range(number):
        arg = setup()
        t = timer()
        out = fn(arg)
        total += timer() - t
        del arg, out
    return total / number


def attempt(fn: Callable[[], T], what: str = "") -> T | None:
    """`fn()`, or None (shown as n/a) when it raises, e.g. for an op not written yet."""
    try:
        return fn()
    except Exception as e:  # one missing op must not end the run
        print(f"  n/a {what}: {type(e).__name__}: {e}".rstrip(), file=sys.stderr)
        return None


def library(name: str):
    """The module of library `name` ("flambeau", "numpy", "torch"), or None when absent.

    Imported on first use, so a script that imports the harness alone (a spawned worker)
    does not import torch."""
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def compare(
    name: str,
    make: Callable[[str], Callable[[], object] | None],
    *,
    libs: Sequence[str] = LIBRARIES,
    repeat: int = 5,
    number: int = 1,
) -> tuple:
    """One row of `report`: make(lib) sets up and returns the callable to time in `lib`
    ("flambeau", "numpy" or "torch"; `library(lib)` is the module), or a pair
    (fn, setup) timed as `measure(fn, setup=setup)`, or None for n/a. Libraries not in
    `libs` or not installed are n/a.

    Each library's runs come together, after its untimed call. Taking the libraries'
    runs in turns was tried (for a shared host whose memory bandwidth changes from
    minute to minute): every run then started while the other libraries' idle threads
    were still spinning (OpenBLAS's for tens of milliseconds), which slowed a 256^3
    sgemm 18x; in one block, only the untimed call and the first run meet them."""
    times = []
    for lib in LIBRARIES:
        fn = None
        if lib in libs and library(lib) is not None:
            fn = attempt(lambda lib=lib: make(lib), name)
        fn, setup = fn if isinstance(fn, tuple) else (fn, None)
        run = lambda fn=fn, setup=setup: measure(  # noqa: E731
            fn, repeat=repeat, number=number, setup=setup
        )
        times.append(attempt(run, name) if fn else None)
    return (name, *times)


def gemm_only() -> bool:
    """True when this run wants only the GEMM-bound rows (FLAMBEAU_BENCH_ONLY=gemm)."""
    return os.environ.get("FLAMBEAU_BENCH_ONLY") == "gemm"


def banner(note: str = "best of 5 runs; ratio above 1 = flambeau faster") -> int:
    """Run flambeau and torch on every core, print their versions and `note`; the thread
    count is returned."""
    threads = os.cpu_count() or 1
    flambeau, torch = library("flambeau"), library("torch")
    attempt(lambda: flambeau.set_num_threads(threads), "flambeau.set_num_threads")
    if torch is not None:
        torch.set_num_threads(threads)
    versions = ", ".join(f"{k} {v or 'not installed'}" for k, v in _versions().items())
    print(f"{versions}; {threads} threads")
    print(note)
    return threads


def _number(v: float | Timing | None, statistic: str = "best") -> float | None:
    return getattr(v, statistic) if isinstance(v, Timing) else v


def _format(v: float | None, unit: str) -> str:
    if v is None:
        return "n/a"
    if unit == "bytes":
        return f"{v / 2**20:.1f} MiB"
    if unit == "x":
        return f"{v:.3g}x"
    if unit != "s":
        return f"{v:.4g} {unit}"
    for scale, name in ((1, "s"), (1e-3, "ms"), (1e-6, "us")):
        if v >= scale:
            return f"{v / scale:.3g} {name}"
    return f"{v / 1e-9:.3g} ns"


def _ratio(other: float | None, ours: float | None, unit: str) -> float | None:
    if unit == "GFLOP/s":  # a rate: higher is faster
        other, ours = ours, other
    return None if other is None or not ours else other / ours


def report(title: str, rows: Sequence[tuple], *, unit: str = "s", statistic: str = "best") -> None:
    """Print an aligned table of (workload, flambeau, numpy, torch) rows with ratios, and
    append it to the run's JSON file (FLAMBEAU_BENCH_JSON) when one is set.

    Values are seconds (float or Timing, whose `statistic`, "best" or "median", is
    shown), or, with unit="bytes", sizes (smaller is better), with unit="GFLOP/s", rates
    (higher is better), with unit="x", dimensionless costs such as a slowdown (smaller is
    better); None prints n/a. The ratio columns always read "above 1: flambeau better".
    """
    tag = os.environ.get("FLAMBEAU_BENCH_TAG", "").strip()
    if tag:
        title = f"{title} {tag}"
    table = [["workload", *LIBRARIES, "numpy/flambeau", "torch/flambeau"]]
    records = []
    for name, *values in rows:
        ours, np_, torch_ = (_number(v, statistic) for v in values)
        pairs = (("numpy", np_), ("torch", torch_))
        ratios = {f"{lib}/flambeau": _ratio(v, ours, unit) for lib, v in pairs}
        cells = [_format(v, unit) for v in (ours, np_, torch_)]
        shown = ["n/a" if r is None else f"{r:.2f}x" for r in ratios.values()]
        table.append([name, *cells, *shown])
        record = {
            "workload": name,
            UNITS.get(unit, unit): dict(zip(LIBRARIES, (ours, np_, torch_))),
        }
        if any(isinstance(v, Timing) for v in values):
            other = "median" if statistic == "best" else "best"
            record[other] = {
                lib: _number(v, other) if isinstance(v, Timing) else None
                for lib, v in zip(LIBRARIES, values)
            }
        record["ratios"] = ratios
        records.append(record)
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    lines = []
    for row in table:
        cells = [c.rjust(w) for c, w in zip(row, widths, strict=True)]
        cells[0] = row[0].ljust(widths[0])  # names left-aligned, numbers right-aligned
        lines.append("  ".join(cells))
    print(f"\n{title}\n{'=' * len(title)}")
    print(lines[0], "-" * len(lines[0]), *lines[1:], sep="\n", flush=True)
    path = os.environ.get("FLAMBEAU_BENCH_JSON")
    if path:
        entry = {
            "title": title,
            "tag": tag or None,
            "script": Path(sys.argv[0]).name,
            "unit": unit,
            "statistic": statistic,
            "threads": _threads(),
            "openblas_env": {k: os.environ.get(k) for k in OPENBLAS_ENV},
            "openblas_core": {b["user"]: b.get("corename") for b in _openblas()},
            "rows": records,
        }
        attempt(lambda: _append(Path(path), entry), f"writing {path}")


# ---- the JSON results file ----------------------------------------------------------


def _versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {"python": platform.python_version()}
    for name, dist in (
        ("numpy", "numpy"),
        ("flambeau", "flambeau-tensor-core"),
        ("torch", "torch"),
    ):
        mod = sys.modules.get(name)
        version = getattr(mod, "__version__", None)
        if version is None:
            try:
                version = importlib.metadata.version(dist)
            except importlib.metadata.PackageNotFoundError:
                version = None
        out[name] = version
    return out


def _threads() -> dict[str, int | None]:
    """Threads flambeau and torch use now (None: not imported by this script)."""
    out = {}
    for name in ("flambeau", "torch"):
        mod = sys.modules.get(name)
        out[name] = attempt(mod.get_num_threads, f"{name}.get_num_threads") if mod else None
    return out


def _openblas() -> list[dict]:
    """Every OpenBLAS library mapped into this process: path, config string, core name.

    flambeau links the scipy-openblas32 wheel's libscipy_openblas.so (its "user" is
    flambeau); NumPy bundles an ILP64 copy of its own."""
    try:
        maps = open("/proc/self/maps").read().splitlines()
    except OSError:
        return []
    paths = sorted(
        {ln.split(None, 5)[-1] for ln in maps if "openblas" in ln.lower() and ".so" in ln}
    )
    found = []
    for path in paths:
        try:
            lib = ctypes.CDLL(path, mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
        except OSError:
            continue
        info: dict = {"path": path, "user": _blas_user(path)}
        for key, stem in (("config", "openblas_get_config"), ("corename", "openblas_get_corename")):
            for name in (f"scipy_{stem}", f"scipy_{stem}64_", stem, f"{stem}64_"):
                fn = getattr(lib, name, None)
                if fn is not None:
                    fn.restype = ctypes.c_char_p
                    info[key] = fn().decode(errors="replace").strip()
                    break
        found.append(info)
    return found


def _blas_user(path: str) -> str:
    if "scipy_openblas32" in path:
        return "flambeau"
    if "numpy" in path:
        return "numpy"
    if "torch" in path:
        return "torch"
    return "?"


def _machine() -> dict:
    try:
        info = open("/proc/cpuinfo").read()
    except OSError:
        info = ""
    model = next(
        (ln.split(":", 1)[1].strip() for ln in info.splitlines() if ln.startswith("model name")),
        platform.processor() or None,
    )
    flags_line = next((ln for ln in info.splitlines() if ln.startswith("flags")), "")
    flags = set(flags_line.split(":", 1)[-1].split())
    affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    return {
        "cpu_model": model,
        "cpu_flags": {f: f in flags for f in CPU_FLAGS},
        "cores": os.cpu_count(),
        "cores_available": affinity,
        "os": platform.platform(),
        "versions": _versions(),
        "threads": _threads(),
        "cpu_capability": _cpu_capability(),
        "openblas": _openblas(),
        "openblas_env": {k: os.environ.get(k) for k in OPENBLAS_ENV},
    }


def _cpu_capability() -> dict[str, str | None]:
    """The instruction set each library's vector loops run with (None: not imported)."""
    out = {}
    for name in ("flambeau", "torch"):
        mod = sys.modules.get(name)
        cpu = getattr(getattr(mod, "backends", None), "cpu", None) if mod else None
        out[name] = attempt(cpu.get_cpu_capability, f"{name} cpu capability") if cpu else None
    return out


def _append(path: Path, entry: dict) -> None:
    """Append one table to the run's document under an exclusive lock (see above)."""
    import fcntl  # POSIX only, like the rest of the bench

    path.parent.mkdir(parents=True, exist_ok=True)
    with open(f"{path}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            doc = json.loads(path.read_text()) if path.exists() else None
            if doc is None:
                now = datetime.datetime.now(datetime.timezone.utc)
                doc = {
                    "schema": 1,
                    "created": now.isoformat(timespec="seconds"),
                    "machine": _machine(),
                    "tables": [],
                }
            doc["tables"].append(entry)
            tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps(doc, indent=1) + "\n")
            os.replace(tmp, path)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
