"""Nothing is left behind, however the processes of a job end (SIGKILL included).

Each scenario (_leak_scenario.py) shares a 200 MB tensor and 2,000 small ones between a
parent and a worker in a session of their own, then ends as the case says. While it runs,
none of its processes maps or holds a named file in /dev/shm (POSIX semaphores, sem.*, are
Python's own locks and not counted): with nothing named, nothing can be left behind. Its
processes are checked rather than /dev/shm as a whole, which other programs on the machine
may write to meanwhile. Afterwards the temporary directory holds no new entry of
multiprocessing's, and the system's shared memory (Shmem in /proc/meminfo, where memfd
pages are counted) is back where it was.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

SCENARIO = Path(__file__).with_name("_leak_scenario.py")


def _temp_entries() -> set[str]:
    tmp = tempfile.gettempdir()
    return {f"{tmp}/{n}" for n in os.listdir(tmp) if n.startswith(("pymp-", "torch", "flambeau"))}


def _named_shared_memory(sid: int) -> set[str]:
    """Files under /dev/shm (but Python's semaphores) that a process of session `sid` maps
    or holds open."""
    named = set()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            if os.getsid(int(pid)) != sid:
                continue
            with open(f"/proc/{pid}/maps") as f:
                fields = [line.split(None, 5) for line in f]
            paths = {parts[5].strip() for parts in fields if len(parts) == 6}
            for fd in os.listdir(f"/proc/{pid}/fd"):
                try:
                    paths.add(os.readlink(f"/proc/{pid}/fd/{fd}"))
                except OSError:
                    continue
        except (ProcessLookupError, PermissionError, FileNotFoundError):
            continue
        named |= {p for p in paths if p.startswith("/dev/shm/") and "/sem." not in p}
    return named


def _shmem_mb() -> float:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("Shmem:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no Shmem line in /proc/meminfo")


def _session_alive(sid: int) -> bool:
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if os.getsid(int(pid)) == sid:
                    with open(f"/proc/{pid}/stat") as f:
                        if f.read().rsplit(")", 1)[1].split()[0] != "Z":
                            return True
            except (ProcessLookupError, PermissionError, FileNotFoundError):
                continue
    return False


def _wait_gone(sid: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while _session_alive(sid):
        if time.monotonic() > deadline:
            os.killpg(sid, signal.SIGKILL)
            raise AssertionError("the job's processes did not end")
        time.sleep(0.1)


@pytest.mark.parametrize("method", ["fork", "spawn"])
@pytest.mark.parametrize("mode", ["exit", "raise", "kill-worker", "kill-parent", "kill-group"])
def test_nothing_left_behind(mode, method):
    before_entries = _temp_entries()
    before_shmem = _shmem_mb()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    job = subprocess.Popen(
        [sys.executable, str(SCENARIO), "raise" if mode == "raise" else mode.split("-")[0], method],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        start_new_session=True,
    )  # fmt: skip
    try:
        line = job.stdout.readline()
        assert line.startswith("ready"), (line, job.stderr.read() if job.poll() is not None else "")
        _, parent, worker = line.split()
        during = _shmem_mb()
        assert during - before_shmem > 150  # the 200 MB are in shared memory meanwhile
        assert _named_shared_memory(job.pid) == set()  # and none of it has a name
        if mode == "kill-worker":
            os.kill(int(worker), signal.SIGKILL)
            time.sleep(0.5)
            os.kill(int(parent), signal.SIGKILL)
        elif mode == "kill-parent":
            os.kill(int(parent), signal.SIGKILL)
        elif mode == "kill-group":
            os.killpg(job.pid, signal.SIGKILL)
        job.wait(120)
        if mode == "exit":
            assert job.returncode == 0, job.stderr.read()
        _wait_gone(job.pid)
    finally:
        if job.poll() is None:
            os.killpg(job.pid, signal.SIGKILL)
            job.wait()
    assert _temp_entries() - before_entries == set()
    deadline = time.monotonic() + 10
    while _shmem_mb() - before_shmem > 50 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _shmem_mb() - before_shmem < 50
