"""`spawn` and `start_processes`: run a function in N processes and watch them.

As PyTorch's: `fn(i, *args)` runs in process i; `join` waits for all of them, and the
first one to fail makes the others terminate and raises in the parent:
`ProcessRaisedException` (carrying the child's traceback) when the function raised,
`ProcessExitedException` (naming the exit code or the signal) when the process died.
A child reports its traceback through a pipe, so nothing is written to disk.
"""

from __future__ import annotations

import multiprocessing.connection
import signal
import sys
import traceback
import warnings

__all__ = [
    "ProcessContext",
    "ProcessException",
    "ProcessExitedException",
    "ProcessRaisedException",
    "SpawnContext",
    "spawn",
    "start_processes",
]


class ProcessException(Exception):
    """A process started by :func:`spawn` or :func:`start_processes` failed.

    ``error_index`` is the index of the failed process (the ``i`` its function was called
    with) and ``pid`` its process id. The subclasses say how it failed.

    >>> import flambeau.multiprocessing as mp
    >>> try:  # as join() raises it when process 1 fails
    ...     raise mp.ProcessRaisedException("ValueError: bad input", 1, 4242)
    ... except mp.ProcessException as err:
    ...     print(type(err).__name__, err.error_index, err.pid)
    ProcessRaisedException 1 4242
    """

    __slots__ = ["error_index", "error_pid"]

    def __init__(self, msg: str, error_index: int, pid: int):
        super().__init__(msg)
        self.msg = msg
        self.error_index = error_index
        self.pid = pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid)


class ProcessRaisedException(ProcessException):
    """The function raised in a child process; the message holds its traceback.

    >>> import flambeau.multiprocessing as mp
    >>> err = mp.ProcessRaisedException("Traceback ...", error_index=0, error_pid=4242)
    >>> err.error_index, err.pid, isinstance(err, mp.ProcessException)
    (0, 4242, True)
    """

    def __init__(self, msg: str, error_index: int, error_pid: int):
        super().__init__(msg, error_index, error_pid)


class ProcessExitedException(ProcessException):
    """A child process exited with a non-zero code or was killed by a signal.

    >>> import flambeau.multiprocessing as mp
    >>> err = mp.ProcessExitedException("process 1 terminated with signal SIGKILL",
    ...                                  error_index=1, error_pid=4242, exit_code=-9,
    ...                                  signal_name="SIGKILL")
    >>> err.exit_code, err.signal_name, isinstance(err, mp.ProcessException)
    (-9, 'SIGKILL', True)
    """

    __slots__ = ["exit_code"]

    def __init__(
        self,
        msg: str,
        error_index: int,
        error_pid: int,
        exit_code: int,
        signal_name: str | None = None,
    ):
        super().__init__(msg, error_index, error_pid)
        self.exit_code = exit_code
        self.signal_name = signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid, self.exit_code, self.signal_name)


def _wrap(fn, i: int, args, error_queue) -> None:
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass  # the parent interrupted us: nothing to report
    except Exception:
        error_queue.put(traceback.format_exc())
        sys.exit(1)


class ProcessContext:
    """The processes :func:`spawn` or :func:`start_processes` started with ``join=False``.

    Call :meth:`join` until it returns True to wait for all of them; ``processes`` is the
    list of ``multiprocessing.Process`` objects and :meth:`pids` their process ids.

    >>> import flambeau.multiprocessing as mp
    >>> ctx = mp.start_processes(print, nprocs=0, join=False)  # n processes; none here
    >>> isinstance(ctx, mp.ProcessContext), ctx.pids()
    (True, [])
    >>> ctx.join()  # True once all have exited successfully
    True
    """

    def __init__(self, processes, error_queues):
        self.error_queues = error_queues
        self.processes = processes
        self.sentinels = {process.sentinel: index for index, process in enumerate(processes)}

    def pids(self) -> list[int]:
        """The process id of each process, in the order of their indices."""
        return [int(process.pid) for process in self.processes]

    def join(self, timeout: float | None = None, grace_period: float | None = None) -> bool:
        """Waits up to `timeout` for a process to finish. True when all have finished
        successfully; raises when one failed, after terminating the others (each gets
        `grace_period` seconds after SIGTERM before SIGKILL)."""
        if not self.sentinels:
            return True
        ready = multiprocessing.connection.wait(self.sentinels.keys(), timeout=timeout)
        error_index = None
        for sentinel in ready:
            index = self.sentinels.pop(sentinel)
            process = self.processes[index]
            process.join()
            if process.exitcode != 0:
                error_index = index
                break
        if error_index is None:
            return not self.sentinels
        self._terminate_others(grace_period)
        failed = self.processes[error_index]
        if self.error_queues[error_index].empty():
            code = failed.exitcode
            if code < 0:
                name = signal.Signals(-code).name
                raise ProcessExitedException(
                    f"process {error_index} terminated with signal {name}",
                    error_index=error_index, error_pid=failed.pid, exit_code=code, signal_name=name,
                )  # fmt: skip
            raise ProcessExitedException(
                f"process {error_index} terminated with exit code {code}",
                error_index=error_index, error_pid=failed.pid, exit_code=code,
            )  # fmt: skip
        trace = self.error_queues[error_index].get()
        msg = f"\n\n-- Process {error_index} terminated with the following error:\n{trace}"
        raise ProcessRaisedException(msg, error_index, failed.pid)

    def _terminate_others(self, grace_period: float | None) -> None:
        alive = [p for p in self.processes if p.is_alive()]
        for process in alive:
            process.terminate()
        for process in alive:
            process.join(grace_period)
            if process.is_alive():
                process.kill()
                process.join()


class SpawnContext(ProcessContext):
    """Deprecated name of ProcessContext, kept as PyTorch keeps it.

    >>> import flambeau.multiprocessing as mp
    >>> issubclass(mp.SpawnContext, mp.ProcessContext)
    True
    """

    def __init__(self, processes, error_queues):
        warnings.warn("SpawnContext is renamed to ProcessContext since 1.4 release.", stacklevel=2)
        super().__init__(processes, error_queues)


def start_processes(
    fn,
    args=(),
    nprocs: int = 1,
    join: bool = True,
    daemon: bool = False,
    start_method: str = "spawn",
):
    """Runs ``fn(i, *args)`` in ``nprocs`` processes started with ``start_method``. With
    ``join``, waits for all and returns None; otherwise returns their ProcessContext.

    >>> import flambeau.multiprocessing as mp
    >>> ctx = mp.start_processes(print, args=("hello",), nprocs=0, join=False)
    >>> ctx.pids(), ctx.join()  # with nprocs=2: two pids, and join() waits for them
    ([], True)
    """
    from flambeau.multiprocessing import get_context

    ctx = get_context(start_method)
    error_queues, processes = [], []
    for i in range(nprocs):
        error_queue = ctx.SimpleQueue()
        process = ctx.Process(target=_wrap, args=(fn, i, args, error_queue), daemon=daemon)
        process.start()
        error_queues.append(error_queue)
        processes.append(process)
    context = ProcessContext(processes, error_queues)
    if not join:
        return context
    while not context.join():
        pass
    return None


def spawn(
    fn,
    args=(),
    nprocs: int = 1,
    join: bool = True,
    daemon: bool = False,
    start_method: str = "spawn",
):
    """start_processes with the spawn start method (PyTorch's entry point).

    >>> import flambeau.multiprocessing as mp
    >>> mp.spawn(print, args=("hello",), nprocs=0)  # nprocs=2 runs print(i, "hello") twice
    """
    if start_method != "spawn":
        warnings.warn(
            f"This method only supports start_method=spawn (got: {start_method}).\n"
            "To use a different start_method use:\n\t\t"
            " flambeau.multiprocessing.start_processes(...)",
            FutureWarning,
            stacklevel=2,
        )
    return start_processes(fn, args, nprocs, join, daemon, start_method="spawn")
