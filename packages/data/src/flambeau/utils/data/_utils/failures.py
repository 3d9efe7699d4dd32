"""What the main process says when a worker dies or gets stuck.

A dead worker: `dead_worker_message` names its pid, id, the signal (for SIGBUS, that
shared memory ran out) and the batches in flight. A stuck one: each worker registers
``faulthandler`` on SIGUSR1 writing into a memfd of its own (`register_stack_file`);
when `timeout` runs out the main process finds that memfd under ``/proc/<pid>/fd``,
signals the worker and reads all its threads' stacks (`dump_stack`).
"""

from __future__ import annotations

import faulthandler
import os
import signal
import time

# Name of the memfd a worker's faulthandler writes its stack to (on SIGUSR1).
STACK_FILE_NAME = "flambeau-dataloader-worker-stack"


def register_stack_file() -> int | None:
    """In a worker: a memfd its faulthandler writes all threads' stacks to on SIGUSR1
    (undo with `unregister_stack_file`)."""
    try:
        fd = os.memfd_create(STACK_FILE_NAME, os.MFD_CLOEXEC)
        faulthandler.register(signal.SIGUSR1, file=fd, all_threads=True)
        return fd
    except (AttributeError, OSError, RuntimeError, ValueError):
        return None


def unregister_stack_file(fd: int | None) -> None:
    if fd is not None:
        faulthandler.unregister(signal.SIGUSR1)
        os.close(fd)


def dump_stack(pid: int, wait: float = 1.0) -> str:
    """The Python stack of worker `pid`: its faulthandler writes it to a memfd on
    SIGUSR1, which is read here through /proc."""
    fd_dir = f"/proc/{pid}/fd"
    path = None
    try:
        for name in os.listdir(fd_dir):
            try:
                if STACK_FILE_NAME in os.readlink(f"{fd_dir}/{name}"):
                    path = f"{fd_dir}/{name}"
                    break
            except OSError:
                continue
    except OSError:
        return ""
    if path is None:
        return ""
    try:
        os.kill(pid, signal.SIGUSR1)
    except OSError:
        return ""
    deadline = time.monotonic() + wait
    text, last = "", None
    while time.monotonic() < deadline:
        time.sleep(0.05)
        try:
            with open(path, "rb") as f:
                text = f.read().decode(errors="replace")
        except OSError:
            break
        if text and text == last:
            break  # written in full
        last = text
    return text


def dead_worker_message(pid: int, exitcode: int | None, worker_id: int, in_flight: int) -> str:
    """PyTorch's message for a worker that exited (by a signal when `exitcode` < 0, or
    closed its connection while still running when it is None), with its id and the
    batches it had in flight."""
    if exitcode is not None and exitcode < 0:
        sig = -exitcode
        try:
            name = signal.strsignal(sig) or f"signal {sig}"
        except ValueError:
            name = f"signal {sig}"
        msg = (
            f"DataLoader worker (pid {pid}) is killed by signal: {name}. "
            f"(worker {worker_id}, signal {sig}, {in_flight} batch(es) in flight)"
        )
        if sig == signal.SIGBUS:
            msg += (
                " It is possible that dataloader's workers are out of shared memory. "
                "Please try to raise your shared memory limit (flambeau's shared memory "
                "is memfd, counted against the memory limit of the process's cgroup, "
                "not the size of /dev/shm)."
            )
        return msg
    if exitcode is not None:
        return (
            f"DataLoader worker (pid(s) {pid}) exited unexpectedly with exit code "
            f"{exitcode} (worker {worker_id}, {in_flight} batch(es) in flight)."
        )
    return (
        f"DataLoader worker (pid(s) {pid}) exited unexpectedly "
        f"(worker {worker_id} closed its connection)"
    )
