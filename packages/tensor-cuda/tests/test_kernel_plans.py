"""The index and launch arithmetic of the CUDA reductions and of bmm, compiled for the
host with g++ and checked against naive references (tests/host_kernels/): the
reduction plan's outer/inner walk, and bmm's mapping of row-major products onto a
column-major strided-batched gemm (transposes, leading dimensions, batch strides)."""

from __future__ import annotations

import subprocess

import pytest
from host_build import compile_host_program


@pytest.mark.parametrize("program", ["check_reduce_plan.cpp", "check_matrix_layout.cpp"])
def test_host_check_passes(program, tmp_path):
    exe = compile_host_program(program, tmp_path)
    result = subprocess.run([str(exe)], capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.startswith("ok"), result.stdout
