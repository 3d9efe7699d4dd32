"""Builds ``_allocator_harness``, the caching allocator over the fakecuda device as
a Python extension, with the system C++ compiler and pybind11's headers.

    python tests/harness/build.py OUT_DIR      # prints the module's path

The sources compile as separate objects, at most two at a time: the allocator
and the fake device at -O2 (the harness times them), the bindings at -O1 (a
third faster to compile, and nothing there is hot).
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2]
CSRC = PACKAGE / "csrc"
SOURCES = [
    *sorted((CSRC / "allocator").glob("*.cpp")),
    *sorted((CSRC / "fakecuda").glob("*.cpp")),
    Path(__file__).resolve().parent / "harness.cpp",
]
HEADERS = [*CSRC.rglob("*.h")]
MODULE = "_allocator_harness"


class BuildUnavailable(RuntimeError):
    """No C++ compiler, Python headers or pybind11 here: the harness cannot be built."""


def _compiler() -> str:
    for candidate in (os.environ.get("CXX"), "g++", "c++", "clang++"):
        if candidate and shutil.which(candidate):
            return candidate
    raise BuildUnavailable("no C++ compiler (set CXX, or install g++)")


def _includes() -> list[str]:
    try:
        import pybind11
    except ImportError as e:
        raise BuildUnavailable("pybind11 is not installed (pip install pybind11)") from e
    python_include = sysconfig.get_paths()["include"]
    if not Path(python_include, "Python.h").exists():
        raise BuildUnavailable(f"no Python.h in {python_include} (install the Python headers)")
    return [f"-I{CSRC}", f"-I{pybind11.get_include()}", f"-I{python_include}"]


def build(out_dir: str | os.PathLike, jobs: int = 2) -> Path:
    """Compiles the harness into ``out_dir`` (reused while newer than every source)
    and returns the extension's path."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    target = out / (MODULE + sysconfig.get_config_var("EXT_SUFFIX"))
    newest_source = max(p.stat().st_mtime for p in [*SOURCES, *HEADERS])
    if target.exists() and target.stat().st_mtime > newest_source:
        return target

    cxx = _compiler()
    flags = ["-std=c++17", "-fPIC", "-fvisibility=hidden", "-pthread", "-Wall", "-Wextra"]
    flags += _includes()
    extra = shlex.split(os.environ.get("CXXFLAGS", ""))  # e.g. --coverage; use a fresh out_dir
    objects = [out / (src.stem + ".o") for src in SOURCES]
    newest_header = max(p.stat().st_mtime for p in HEADERS)
    pending = [
        (src, obj)
        for src, obj in zip(SOURCES, objects)
        if not obj.exists() or obj.stat().st_mtime < max(src.stat().st_mtime, newest_header)
    ]
    running: list[tuple[subprocess.Popen, Path]] = []
    failures: list[str] = []
    # The longest compile (the bindings) starts first.
    pending.sort(key=lambda so: so[0].name != "harness.cpp")
    while pending or running:
        while pending and len(running) < jobs:
            src, obj = pending.pop(0)
            opt = "-O1" if src.name == "harness.cpp" else "-O2"
            cmd = [cxx, *flags, opt, *extra, "-c", str(src), "-o", str(obj)]
            running.append((subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True), src))
        proc, src = running.pop(0)
        _, err = proc.communicate()
        if proc.returncode != 0:
            failures.append(f"{src.name}:\n{err}")
    if failures:
        raise RuntimeError("building the allocator harness failed:\n" + "\n".join(failures))
    link = [cxx, "-shared", "-pthread", *extra, *map(str, objects), "-o", str(target)]
    subprocess.run(link, check=True)
    return target


if __name__ == "__main__":
    print(build(sys.argv[1] if len(sys.argv) > 1 else PACKAGE / "build" / "harness"))
