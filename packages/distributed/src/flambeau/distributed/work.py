"""Waiting for MPI requests without ever hanging, and Work for async_op=True.

Every collective is posted as a nonblocking MPI call and then polled, never waited on
inside MPI: a poll can give up. Between polls the waiter checks, four times a second,
that its peers are alive (liveness.py) and that the process group's timeout has not
passed, and raises DistBackendError naming the dead rank and the operation otherwise.

A synchronous call polls in the caller's thread (no hand-over: a 4-byte all_reduce
costs a few microseconds). Operations posted with async_op=True belong to an engine,
which holds them (and so their buffers) until they finish, whether or not anyone waits
on their Work:
- `Engine`, a communication thread per process that polls all of them: MPI advances a
  nonblocking collective only while some thread is inside the library, so with a spare
  core this lets DistributedDataParallel's bucket all-reduces move while backward
  computes;
- `InlineEngine`, no thread: the posted operations are polled whenever this process
  enters the library again (the next operation, Work.wait, Work.is_completed). Chosen
  when a rank has no spare core (_runtime.communication_thread) or MPI has no thread
  support.
"""

from __future__ import annotations

import threading
import time
from datetime import timedelta

from ._runtime import mpi, oversubscribed
from .errors import DistBackendError

_future_lock = threading.Lock()
_CHECK_INTERVAL = 0.25  # seconds between liveness checks while waiting
_MIN_SLEEP, _MAX_SLEEP = 20e-6, 250e-6


class _PollPolicy:
    """Spin first (cheap when every rank has a core), then sleep with a growing pause.
    Oversubscribed, a spinning rank steals the core its peer needs: sleep at once."""

    def __init__(self):
        self.spins = 0 if oversubscribed() else 2000


_policy: _PollPolicy | None = None


def policy() -> _PollPolicy:
    global _policy
    if _policy is None:
        _policy = _PollPolicy()
    return _policy


class Operation:
    """Posted MPI requests, what they are (for messages), and what to run once done."""

    __slots__ = (
        "pg",
        "requests",
        "desc",
        "finish",
        "result",
        "statuses",
        "deadline",
        "done",
        "error",
        "event",
        "posted_at",
        "completed_at",
        "future",
        "stages",
        "_testing",
    )

    def __init__(self, pg, requests, desc, finish=None, result=None, statuses=None, stages=None):
        self.pg = pg
        # With `stages` (an iterator of request lists), the operation has several steps:
        # when one step's requests complete, the next is taken from it (which may compute
        # between posts); the operation is done when it is exhausted.
        self.stages = stages
        self.requests = requests if stages is None else next(stages)
        self.desc = desc
        self.finish = finish
        self.result = result
        self.statuses = statuses
        self.posted_at = time.perf_counter()
        self.completed_at = None
        self.deadline = time.monotonic() + pg.timeout_seconds
        self.done = False
        self.error: BaseException | None = None
        self.event = threading.Event()
        self.future = None
        self._testing = threading.Lock()  # MPI: one thread at a time tests a request

    def settle(self, error: BaseException | None = None) -> None:
        """Mark the operation finished (with `error` when it failed); wake its waiters and
        complete its Future."""
        if error is not None:
            self.error = error
        self.event.set()
        if self.future is not None:
            self.complete_future()

    def complete_future(self) -> None:
        with _future_lock:
            fut = self.future
            if fut.done():
                return
            if self.error is None:
                fut._complete(list(self.result or []), None)
            else:
                fut._complete(None, self.error)

    def test(self) -> bool:
        """One poll; completes the operation (running finish) when its requests are done."""
        MPI = mpi()
        if self.done:
            return True
        if not self._testing.acquire(blocking=False):
            return False  # another thread is testing it just now
        try:
            try:
                if self.statuses is not None:
                    ready = MPI.Request.Testall(self.requests, self.statuses)
                else:
                    ready = MPI.Request.Testall(self.requests)
            except MPI.Exception as e:
                raise DistBackendError(
                    f"[rank {self.pg.global_rank_of_self}] {self.desc} failed: MPI reported "
                    f"{e.Get_error_string()}"
                ) from e
            if ready and self.stages is not None:  # the next step, if any
                following = next(self.stages, None)
                if following is not None:
                    self.requests, ready = following, False
                else:
                    self.stages = None
        finally:
            self._testing.release()
        if ready:
            self.completed_at = time.perf_counter()
            if self.finish is not None:
                self.finish()
            self.done = True
        return ready

    def check(self, now: float) -> None:
        """Raise if a peer is gone or the deadline has passed."""
        failure = self.pg.world_liveness.check()
        if failure is not None:
            raise DistBackendError(
                f"[rank {self.pg.global_rank_of_self}] {self.desc} cannot complete: "
                f"{failure.describe()}"
            )
        if now >= self.deadline:
            timeout = timedelta(seconds=self.pg.timeout_seconds)
            from .liveness import Failure

            me = self.pg.global_rank_of_self
            self.pg.world_liveness.announce(
                Failure(me, f"gave up: {self.desc} timed out after {timeout}")
            )
            raise DistBackendError(
                f"[rank {self.pg.global_rank_of_self}] {self.desc} timed out after "
                f"{timeout} (the process group's timeout): some rank of "
                f"{self.pg.describe()} has not joined it; is one stuck, or running a "
                "different collective? (TORCH_DISTRIBUTED_DEBUG=DETAIL checks that ranks "
                "agree)"
            )

    def drive(self) -> None:
        """Poll in this thread until done; raises on a dead peer, a timeout or an MPI error."""
        self.pg.progress()
        try:
            spins = policy().spins
            polls, pause, next_check = 0, 0.0, 0.0
            while not self.test():
                polls += 1
                if polls > spins:
                    time.sleep(pause)
                    pause = min(max(pause * 2, _MIN_SLEEP), _MAX_SLEEP)
                elif polls & 255:
                    continue
                now = time.monotonic()
                if now >= next_check:
                    self.check(now)
                    next_check = now + _CHECK_INTERVAL
        except BaseException as e:
            self.pg.mark_broken(e)
            self.settle(e)
            raise
        self.settle()


class Engine:
    """The communication thread: polls every operation posted with async_op=True."""

    owns_operations = True  # a Work only waits for the thread to settle its operation

    def __init__(self):
        self._pending: list[Operation] = []
        self._cond = threading.Condition()
        self._stop = False
        self._thread = threading.Thread(
            target=self._run, name="flambeau-distributed-comm", daemon=True
        )
        self._thread.start()

    def submit(self, op: Operation) -> None:
        with self._cond:
            self._pending.append(op)
            self._cond.notify()

    def stop(self) -> None:
        with self._cond:
            self._stop = True
            self._cond.notify()
        self._thread.join(5)

    def _run(self) -> None:
        pause, next_check = 0.0, 0.0
        while True:
            with self._cond:
                while not self._pending and not self._stop:
                    self._cond.wait()
                    pause = 0.0
                if self._stop:
                    for op in self._pending:
                        self._fail(op, DistBackendError(f"{op.desc}: process group destroyed"))
                    self._pending.clear()
                    return
                ops = list(self._pending)
            finished = []
            for op in ops:
                try:
                    if op.test():
                        finished.append(op)
                        op.settle()
                except BaseException as e:
                    self._fail(op, e)
                    finished.append(op)
            now = time.monotonic()
            if now >= next_check:
                next_check = now + _CHECK_INTERVAL
                for op in ops:
                    if op in finished:
                        continue
                    try:
                        op.check(now)
                    except BaseException as e:
                        self._fail(op, e)
                        finished.append(op)
            if finished:
                with self._cond:
                    self._pending = [op for op in self._pending if op not in finished]
                pause = 0.0
            else:
                # sleep releases the interpreter lock to the computing thread.
                time.sleep(pause)
                pause = min(max(pause * 2, _MIN_SLEEP), _MAX_SLEEP)

    def progress(self) -> None:
        pass  # the thread polls

    @staticmethod
    def _fail(op: Operation, e: BaseException) -> None:
        op.pg.mark_broken(e)
        op.settle(e)


class InlineEngine:
    """No thread: operations posted with async_op=True wait in a list, which keeps them
    and their buffers alive until they finish (MPI would write into freed memory if a
    discarded Work let its buffer go), and are polled each time the process enters the
    library again; a Work's wait drives its operation itself."""

    owns_operations = False

    def __init__(self):
        self._pending: list[Operation] = []
        self._lock = threading.Lock()

    def submit(self, op: Operation) -> None:
        with self._lock:
            self._pending.append(op)

    def progress(self) -> None:
        """Settle the posted operations that have finished (one poll each)."""
        if not self._pending or not self._lock.acquire(blocking=False):
            return
        try:
            still = []
            for op in self._pending:
                if op.event.is_set():
                    continue
                try:
                    if op.test():
                        op.settle()
                        continue
                except BaseException as e:
                    Engine._fail(op, e)
                    continue
                still.append(op)
            self._pending = still
        finally:
            self._lock.release()

    def stop(self) -> None:
        self.progress()
        with self._lock:
            for op in self._pending:
                if not op.event.is_set():
                    Engine._fail(op, DistBackendError(f"{op.desc}: process group destroyed"))
            self._pending = []


class Work:
    """A handle on an operation posted with async_op=True (torch.distributed.Work).

    >>> import flambeau.distributed as dist
    >>> dist.init_process_group()
    >>> work = dist.all_reduce(flambeau.ones(2), async_op=True)
    >>> work.wait(), work.result()
    (True, [tensor([1., 1.])])
    >>> dist.destroy_process_group()
    """

    def __init__(self, op: Operation, owned_by_engine: bool):
        self._op = op
        self._engine = owned_by_engine

    def is_completed(self) -> bool:
        if not self._op.event.is_set() and not self._engine:
            try:
                if self._op.test():
                    self._op.settle()
            except BaseException as e:
                self._op.settle(e)
        return self._op.event.is_set()

    def is_success(self) -> bool:
        return self.is_completed() and self._op.error is None

    def exception(self):
        return self._op.error

    def wait(self, timeout: timedelta | float | None = None) -> bool:
        """Block until done; raise the operation's error (a DistBackendError naming a dead
        rank, a timeout, ...). `timeout` bounds this wait only."""
        op = self._op
        if not self._engine and not op.event.is_set():
            op.drive()
        limit = timeout.total_seconds() if isinstance(timeout, timedelta) else timeout
        if not op.event.wait(limit):
            raise DistBackendError(
                f"[rank {op.pg.global_rank_of_self}] Work.wait: {op.desc} did not complete "
                f"within {timedelta(seconds=limit)}"
            )
        if op.error is not None:
            raise op.error
        return True

    def result(self) -> list:
        self.wait()
        return list(self._op.result or [])

    def _source_rank(self) -> int:
        self.wait()
        status = self._op.statuses[0]
        return self._op.pg.global_rank(status.Get_source())

    def get_future(self):
        """A flambeau.futures.Future completed with the operation's output tensors (a
        list) once it finishes, or with its error."""
        from flambeau.futures import Future

        op = self._op
        if op.future is None:
            future = Future()
            future._driver = self._drive_quietly
            op.future = future
            if op.event.is_set():
                op.complete_future()
        return op.future

    def _drive_quietly(self) -> None:
        try:
            self.wait()
        except BaseException:
            pass  # the operation's error completes its future

    @property
    def _posted_at(self) -> float:
        return self._op.posted_at

    @property
    def _completed_at(self) -> float | None:
        return self._op.completed_at
