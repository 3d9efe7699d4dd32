"""The arithmetic of the CUDA indexing, sort and scan kernels (``index_math.h``),
compiled for the host with g++ and checked against the CPU kernels' rules
(tests/host_kernels/check_index_math.cpp): index bounds and negative indices, the
radix-sort keys of every real dtype (sorting them stably gives the CPU's order, NaN
above everything and -0.0 equal to +0.0, ascending and descending), and the scan
operators of cummax/cummin and logcumsumexp split into tiles as the block scan does
(the CPU loop's values and indices)."""

from __future__ import annotations

import subprocess

from host_build import compile_host_program


def test_index_sort_and_scan_arithmetic_matches_the_cpu_rules(tmp_path):
    exe = compile_host_program("check_index_math.cpp", tmp_path)
    result = subprocess.run([str(exe)], capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.startswith("ok"), result.stdout
