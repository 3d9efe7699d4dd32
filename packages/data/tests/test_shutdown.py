"""Interpreter exit and Ctrl-C end the workers, and nothing is left in /dev/shm."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

SCENARIO = Path(__file__).with_name("_exit_scenario.py")


def _entries() -> set[str]:
    # sem.* are Python's own (unlinked) locks; mpich_* belong to MPI jobs that other
    # test suites of this machine may run meanwhile.
    shm = {n for n in os.listdir("/dev/shm") if not n.startswith(("sem.", "mpich"))}
    tmp = tempfile.gettempdir()
    return shm | {n for n in os.listdir(tmp) if n.startswith(("pymp-", "torch", "flambeau"))}


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.parametrize("how", ["exit", "sigint", "kill"])
def test_workers_end_with_the_program(how):
    before = _entries()
    proc = subprocess.Popen(
        [sys.executable, str(SCENARIO), how],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        cwd=str(SCENARIO.parent),
    )
    try:
        pids = [int(p) for p in proc.stdout.readline().split()]
        assert len(pids) == 2, proc.stderr.read()
        if how == "sigint":
            time.sleep(0.3)
            os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C reaches the whole group
        if how == "kill":
            os.kill(proc.pid, signal.SIGKILL)  # the main process only
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    err = proc.stderr.read()
    if how == "sigint":
        assert "KeyboardInterrupt" in err
    elif how == "kill":
        assert proc.returncode == -signal.SIGKILL
    else:
        assert proc.returncode == 0, err
    deadline = time.monotonic() + 5
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(p) for p in pids), "workers outlived the program"
    assert _entries() - before == set()
