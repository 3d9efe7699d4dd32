"""The CUDA kernels' strided indexing, compiled for the host with g++ and checked against
the naive row-major walk (tests/host_kernels/check_strided_index.cpp). Needs no GPU and
no nvcc; skipped without a C++ compiler or an importable flambeau (for its C headers)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1]


def test_merged_strided_offsets_match_the_naive_walk(tmp_path):
    compiler = shutil.which("g++") or shutil.which("c++")
    if compiler is None:
        pytest.skip("no C++ compiler")
    flambeau = pytest.importorskip("flambeau")
    exe = tmp_path / "check_strided_index"
    subprocess.run(
        [
            compiler,
            "-std=c++17",
            "-O1",
            "-Wall",
            "-Werror",
            f"-I{PACKAGE / 'csrc'}",
            f"-I{flambeau.get_include()}",
            str(PACKAGE / "tests" / "host_kernels" / "check_strided_index.cpp"),
            "-o",
            str(exe),
        ],
        check=True,
    )
    result = subprocess.run([str(exe)], capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.startswith("ok"), result.stdout
