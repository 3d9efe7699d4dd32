"""Running workers under AddressSanitizer and UBSan, and reading their reports.

Python is not instrumented, so gcc's libasan.so is preloaded into each worker.
Each worker logs to its own files (ASan writes <prefix>.<pid>): a worker that
died with a report is a crash with the report attached, and a UBSan report that
let the call go on is charged to the call during which the log grew.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

# Huge requests fail as a null from malloc (the core raises) instead of ending the
# process; RLIMIT_AS cannot be used under ASan, which reserves terabytes of shadow.
ASAN_OPTIONS = (
    "detect_leaks=0:allocator_may_return_null=1:max_allocation_size_mb=4096:"
    "soft_rss_limit_mb=6144:abort_on_error=1:detect_stack_use_after_return=0:"
    "handle_abort=1:symbolize=1"
)
UBSAN_OPTIONS = "print_stacktrace=1:halt_on_error=0"


def default_runtime() -> str:
    """gcc's libasan.so, or '' when gcc has none."""
    try:
        path = subprocess.run(
            ["gcc", "-print-file-name=libasan.so"], capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""
    return path if os.path.isabs(path) and os.path.exists(path) else ""


def worker_env(env: dict, runtime: str, log_dir: Path, slot: int) -> dict:
    env = dict(env)
    preload = env.get("LD_PRELOAD", "")
    if runtime and runtime not in preload:
        env["LD_PRELOAD"] = f"{runtime} {preload}".strip()
    asan = f"{ASAN_OPTIONS}:log_path={log_dir / f'asan-{slot}'}"
    ubsan = f"{UBSAN_OPTIONS}:log_path={log_dir / f'ubsan-{slot}'}"
    # The caller's own options win (they come last).
    env["ASAN_OPTIONS"] = ":".join(x for x in (asan, env.get("ASAN_OPTIONS", "")) if x)
    env["UBSAN_OPTIONS"] = ":".join(x for x in (ubsan, env.get("UBSAN_OPTIONS", "")) if x)
    return env


def log_files(log_dir: Path, slot: int, pid: int) -> list[Path]:
    return [log_dir / f"{kind}-{slot}.{pid}" for kind in ("asan", "ubsan")]


def read_reports(log_dir: Path, slot: int, pid: int) -> str:
    parts = []
    for path in log_files(log_dir, slot, pid):
        if path.exists():
            parts.append(path.read_text(errors="replace"))
    return "\n".join(parts)


_REPORT_START = re.compile(
    r"^.*(runtime error:|ERROR: AddressSanitizer|ERROR: LeakSanitizer|"
    r"AddressSanitizer:DEADLYSIGNAL)",
    re.M,
)


def reports_in(text: str) -> str:
    """The sanitizer reports in a log, from the first one on; '' for warnings alone
    ("failed to allocate ..." is what allocator_may_return_null=1 prints)."""
    m = _REPORT_START.search(text)
    return text[m.start() :] if m else ""


_ASAN_KIND = re.compile(r"ERROR: AddressSanitizer: ([\w-]+)(?: on address)?")
_UBSAN = re.compile(r"(\S+?):(\d+):\d+: runtime error: ([^\n]*)")
_OWN_FRAME = re.compile(r"#\d+ 0x[0-9a-f]+ in (\S+) (\S*csrc/\S+?):(\d+)")


OOM_IN_NEW = "ASan out-of-memory in operator new"


def kind(report: str) -> str:
    """A short, stable name for the first error in a report: what findings are keyed by."""
    m = _ASAN_KIND.search(report)
    if m:
        line = report[m.start() : report.find("\n", m.start())]
        # operator new cannot return null under ASan: a size nobody checked, which a
        # normal build turns into MemoryError (PyTorch checks it and raises RuntimeError).
        if "out of memory" in line or "exceeds maximum supported size" in line:
            return OOM_IN_NEW
        return f"ASan {m.group(1)}"
    m = _UBSAN.search(report)
    if m:
        what = " ".join(re.findall(r"[A-Za-z]+", re.sub(r"'[^']*'", "", m.group(3)))[:3])
        return f"UBSan {what} ({m.group(1).rsplit('/', 1)[-1]})"
    if "Sanitizer" in report:
        return "sanitizer report"
    return ""


def where(report: str) -> str:
    """file:line of the first frame in the core's own sources (csrc/), if any."""
    m = _UBSAN.search(report)
    if m and "csrc/" in m.group(1):
        return f"{m.group(1).split('csrc/')[-1]}:{m.group(2)}"
    m = _OWN_FRAME.search(report)
    return f"{m.group(2).split('csrc/')[-1]}:{m.group(3)} ({m.group(1)})" if m else ""
