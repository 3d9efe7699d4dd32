"""The index arithmetic of the nn group's CUDA kernels, compiled for the host with g++
and checked against the CPU kernels' walks (tests/host_kernels/):
- the convolution's im2col and col2im (``im2col_math.h``, check_im2col_math.cpp): the
  same input element for every column-matrix element, and the same additions, in the
  same order, for every input element of col2im;
- the resampling backward's gather (``resample_math.h``, check_resample_math.cpp): the
  contributions the CPU's scatter adds into each input element, in its order."""

from __future__ import annotations

import subprocess

import pytest
from host_build import compile_host_program


@pytest.mark.parametrize("source", ["check_im2col_math.cpp", "check_resample_math.cpp"])
def test_index_arithmetic_matches_the_cpu_walks(source, tmp_path):
    exe = compile_host_program(source, tmp_path)
    result = subprocess.run([str(exe)], capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.startswith("ok"), result.stdout
