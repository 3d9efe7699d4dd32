"""Helpers to run worker scripts under an MPI launcher with a hard timeout."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

WORKERS = Path(__file__).parent / "workers"
BIN = Path(sys.executable).parent


def mpiexec() -> str:
    found = BIN / "mpiexec"
    if not found.exists():
        pytest.skip("no mpiexec beside this Python (pip install mpich)")
    return str(found)


def _env(extra: dict | None) -> dict:
    env = dict(os.environ)
    env.setdefault("OMP_NUM_THREADS", "1")
    env.pop("TORCH_DISTRIBUTED_DEBUG", None)
    env.update(extra or {})
    return env


def run_workers(
    script: str, n: int, *args: str, timeout: float = 30, env=None, launcher=False, grace=5
):
    """Run tests/workers/`script` on `n` ranks; returns the CompletedProcess."""
    path = str(WORKERS / script)
    if launcher:
        cmd = [sys.executable, "-m", "flambeau.distributed.run", "--nproc-per-node", str(n)]
        cmd += ["--failure-grace", str(grace)]
        cmd += [path, *args]
    else:
        cmd = [mpiexec(), "-n", str(n), sys.executable, path, *args]
    try:
        return subprocess.run(
            cmd, capture_output=True, text=True, timeout=timeout, env=_env(env), cwd="/tmp"
        )
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"{script} on {n} ranks hung past {timeout}s:\n{e.stdout}\n{e.stderr}")


def expect_ok(result, n: int) -> None:
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    assert out.count("WORKER OK") == n, out
