"""Knowing when a peer is gone, so that no rank waits for a dead one.

MPI itself gives no failure notification here: a rank waiting in a collective whose
peer was SIGKILLed waits forever (unless the launcher kills the whole job, as mpiexec
does by default). So every wait polls, and every quarter second it asks:

- Is the process of each rank on this host still there? (Its pid, shared at init;
  /proc tells a live process from a gone or zombie one.)
- Has the MPI launcher signalled a failure? Hydra's mpiexec, told not to kill the job
  when a rank dies (-disable-auto-cleanup, as flambeau.distributed.run runs it on one
  machine), sends SIGUSR1 to the others, whose default action would end them silently;
  a handler records it instead.
- Has another rank announced a failure? A rank that finds a dead peer, or whose
  program dies of an unhandled exception, sends a short notice to every rank on a
  communicator of its own, so ranks on other hosts learn of it too.

What is left, a lone rank dying on a host whose other ranks are all elsewhere, is caught
by the process group's timeout.
"""

from __future__ import annotations

import os
import signal
import socket
import sys
import threading
import time

from ._runtime import mpi

_NOTICE_TAG = 7001
_GRACE = 1.0  # seconds to wait for a notice naming the rank after the launcher's signal


def pid_alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except FileNotFoundError:
        return False
    except OSError:  # no /proc (not Linux): ask the kernel
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    # "pid (comm) S ...": the state follows the last parenthesis; Z and X are gone.
    state = stat[stat.rindex(b")") + 2 : stat.rindex(b")") + 3]
    return state not in (b"Z", b"X")


class Failure:
    """A rank that is gone (or failed), and why."""

    __slots__ = ("rank", "reason")

    def __init__(self, rank: int, reason: str):
        self.rank, self.reason = rank, reason

    def describe(self) -> str:
        return f"rank {self.rank} {self.reason}" if self.rank >= 0 else f"a rank {self.reason}"


class Liveness:
    """Watches the ranks of the world communicator `comm` (collective to construct)."""

    def __init__(self, comm):
        MPI = mpi()
        self.rank = comm.Get_rank()
        self.host = socket.gethostname()
        self.peers = comm.allgather((self.host, os.getpid()))
        self.local = {
            r: pid
            for r, (host, pid) in enumerate(self.peers)
            if host == self.host and r != self.rank
        }
        self.ctrl = comm.Dup()  # notices travel apart from the program's messages
        self.ctrl.Set_errhandler(MPI.ERRORS_RETURN)
        self.failure: Failure | None = None
        self._sent: list = []  # notices in flight; never waited for
        self._lock = threading.Lock()
        self.signalled_at: float | None = None
        self.handles_signal = False
        self._install_signal_handler()

    def _install_signal_handler(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        if signal.getsignal(signal.SIGUSR1) not in (signal.SIG_DFL, None):
            return  # the program handles it itself

        def on_failure_signal(signum, frame):
            if self.signalled_at is None:
                self.signalled_at = time.monotonic()

        signal.signal(signal.SIGUSR1, on_failure_signal)
        self.handles_signal = True

    def where(self, rank: int) -> str:
        host, pid = self.peers[rank]
        return f"pid {pid} on {host}"

    def check(self) -> Failure | None:
        """The first failure known to this rank, looking for new ones."""
        with self._lock:
            if self.failure is None:
                self._read_notices()
            if self.failure is None:
                for r, pid in self.local.items():
                    if not pid_alive(pid):
                        self.failure = Failure(r, f"({self.where(r)}) died: its process is gone")
                        self._announce(self.failure)
                        break
            if (
                self.failure is None
                and self.signalled_at is not None
                and time.monotonic() - self.signalled_at > _GRACE
            ):
                self.failure = Failure(
                    -1, "died on another host (the MPI launcher reported a failed process)"
                )
            return self.failure

    def announce(self, failure: Failure) -> None:
        with self._lock:
            if self.failure is None:
                self.failure = failure
            self._announce(failure)

    def _announce(self, failure: Failure) -> None:
        MPI = mpi()
        payload = f"{failure.rank}|{failure.reason}".encode()[:4096]
        for r in range(len(self.peers)):
            if r in (self.rank, failure.rank):
                continue
            try:
                self._sent.append(self.ctrl.Isend([payload, MPI.BYTE], dest=r, tag=_NOTICE_TAG))
            except Exception:  # a dead peer may refuse; the others still hear
                pass

    def _read_notices(self) -> None:
        MPI = mpi()
        status = MPI.Status()
        while self.ctrl.Iprobe(source=MPI.ANY_SOURCE, tag=_NOTICE_TAG, status=status):
            buf = bytearray(status.Get_count(MPI.BYTE))
            self.ctrl.Recv([buf, MPI.BYTE], source=status.Get_source(), tag=_NOTICE_TAG)
            rank, _, reason = bytes(buf).decode(errors="replace").partition("|")
            if self.failure is None:
                self.failure = Failure(int(rank), reason)

    def free(self) -> None:
        try:
            self.ctrl.Free()
        except Exception:
            pass


def install_excepthook(liveness: Liveness) -> None:
    """Announce this rank's death by an unhandled exception before Python prints it."""
    previous = sys.excepthook

    def hook(exc_type, exc, tb):
        from .errors import DistBackendError

        # A DistBackendError about a peer repeats a failure already announced.
        if liveness.failure is None and not issubclass(exc_type, DistBackendError):
            try:
                reason = f"({liveness.where(liveness.rank)}) raised {exc_type.__name__}: {exc}"
                liveness.announce(Failure(liveness.rank, reason[:2000]))
            except Exception:
                pass
        previous(exc_type, exc, tb)

    hook._flambeau_distributed = True  # type: ignore[attr-defined]
    if not getattr(previous, "_flambeau_distributed", False):
        sys.excepthook = hook
