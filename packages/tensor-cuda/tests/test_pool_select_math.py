"""The window arithmetic of the CUDA pooling kernels (``pool_math.h``) and what the
kthvalue, mode and searchsorted kernels pick from sorted rows (``select_math.h``),
compiled for the host with g++ and checked against brute-force walks and the CPU
kernels' rules (tests/host_kernels/check_pool_math.cpp, check_select_math.cpp)."""

from __future__ import annotations

import subprocess

import pytest
from host_build import compile_host_program


@pytest.mark.parametrize("source", ["check_pool_math.cpp", "check_select_math.cpp"])
def test_kernel_arithmetic_matches_the_cpu_rules(source, tmp_path):
    exe = compile_host_program(source, tmp_path)
    result = subprocess.run([str(exe)], capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.startswith("ok"), result.stdout
