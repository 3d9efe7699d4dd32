"""Compiling the kernels' host-side code (``__host__ __device__`` headers) with g++ for
the tests in ``tests/host_kernels/``: no GPU and no nvcc needed."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1]
HOST_KERNELS = PACKAGE / "tests" / "host_kernels"


def compile_host_program(source: str, out_dir: Path) -> Path:
    """``tests/host_kernels/<source>`` built with g++ against ``csrc`` and flambeau's
    headers; skips the test without a C++ compiler or an importable flambeau."""
    compiler = shutil.which("g++") or shutil.which("c++")
    if compiler is None:
        pytest.skip("no C++ compiler")
    flambeau = pytest.importorskip("flambeau")
    exe = out_dir / Path(source).stem
    subprocess.run(
        [
            compiler,
            "-std=c++17",
            "-O1",
            "-Wall",
            "-Werror",
            f"-I{PACKAGE / 'csrc'}",
            f"-I{flambeau.get_include()}",
            str(HOST_KERNELS / source),
            "-o",
            str(exe),
        ],
        check=True,
    )
    return exe
