"""Contexts whose queues and pipes carry tensors' shared memory (connection.py).

Each of Python's start methods (fork, spawn, forkserver) has a context here that
differs from Python's only in its channels: `Queue`, `JoinableQueue`, `SimpleQueue` and
`Pipe` run over descriptor-carrying Unix sockets, and `Pool` uses them. Processes, locks,
managers and the start method itself are Python's: `set_start_method` here sets
Python's, so the two modules always agree.
"""

from __future__ import annotations

import multiprocessing
from multiprocessing import context as _context
from multiprocessing import queues as _queues

from flambeau.multiprocessing import connection


def _swap_pipe(queue) -> None:
    """Replaces the OS pipe Python's queue made with a descriptor-carrying one."""
    queue._reader.close()
    queue._writer.close()
    queue._reader, queue._writer = connection.Pipe(duplex=False)


class Queue(_queues.Queue):
    def __init__(self, maxsize: int = 0, *, ctx):
        super().__init__(maxsize, ctx=ctx)
        _swap_pipe(self)
        self._reset()


class JoinableQueue(_queues.JoinableQueue):
    def __init__(self, maxsize: int = 0, *, ctx):
        super().__init__(maxsize, ctx=ctx)
        _swap_pipe(self)
        self._reset()


class SimpleQueue(_queues.SimpleQueue):
    def __init__(self, *, ctx):
        super().__init__(ctx=ctx)
        _swap_pipe(self)
        self._poll = self._reader.poll


class _TensorChannels:
    """The channel factories every context of this module has."""

    def Queue(self, maxsize: int = 0):
        """A process-shared queue; tensors put on it arrive as views of the same memory.

        >>> import flambeau.multiprocessing as mp
        >>> q = mp.Queue()
        >>> t = flambeau.zeros(2)
        >>> q.put(t)  # usually to another process
        >>> received = q.get()
        >>> _ = received.add_(1)  # the same memory: t sees the write
        >>> t, t.is_shared()
        (tensor([1., 1.]), True)
        """
        return Queue(maxsize, ctx=self.get_context())

    def JoinableQueue(self, maxsize: int = 0):
        """A Queue with task_done() and join().

        >>> import flambeau.multiprocessing as mp
        >>> q = mp.JoinableQueue()
        >>> q.put(flambeau.tensor([1.0, 2.0]))
        >>> q.get()  # usually in a worker process
        tensor([1., 2.])
        >>> q.task_done()
        >>> q.join()  # returns once every item put was marked done
        """
        return JoinableQueue(maxsize, ctx=self.get_context())

    def SimpleQueue(self):
        """A lock-protected pipe; tensors arrive as views of the same memory.

        >>> import flambeau.multiprocessing as mp
        >>> q = mp.SimpleQueue()
        >>> t = flambeau.zeros(2)
        >>> q.put(t)  # usually to another process
        >>> _ = q.get().add_(1)  # the same memory: t sees the write
        >>> t
        tensor([1., 1.])
        """
        return SimpleQueue(ctx=self.get_context())

    def Pipe(self, duplex: bool = True):
        """Two connections; tensors sent arrive as views of the same memory.

        >>> import flambeau.multiprocessing as mp
        >>> a, b = mp.Pipe()
        >>> t = flambeau.zeros(2)
        >>> a.send(t)  # usually to another process
        >>> _ = b.recv().add_(1)  # the same memory: t sees the write
        >>> t
        tensor([1., 1.])
        """
        return connection.Pipe(duplex)

    def get_context(self, method=None):
        """This context when ``method`` is None, else the context of the start method
        named (``"fork"``, ``"spawn"`` or ``"forkserver"``), with tensor-carrying channels."""
        if method is None:
            return self
        return _concrete(method)


class ForkContext(_TensorChannels, _context.ForkContext):
    pass


class SpawnContext(_TensorChannels, _context.SpawnContext):
    pass


class ForkServerContext(_TensorChannels, _context.ForkServerContext):
    pass


_CONTEXTS = {"fork": ForkContext(), "spawn": SpawnContext(), "forkserver": ForkServerContext()}


def _concrete(method: str):
    try:
        ctx = _CONTEXTS[method]
    except KeyError:
        raise ValueError(f"cannot find context for {method!r}") from None
    ctx._check_available()
    return ctx


class DefaultContext(_TensorChannels, _context.DefaultContext):
    """The module-level functions: the context of Python's current start method."""

    def __init__(self):
        pass

    def get_context(self, method=None):
        """A context object for a start method: it has this module's functions (``Process``,
        ``Queue``, ``Pipe``, ``Pool``...) bound to that method, whose queues and pipes carry
        tensors as shared memory.

        Args:
            method: ``"fork"``, ``"spawn"`` or ``"forkserver"``; None (the default) for the
                current start method. One this platform lacks raises ValueError.

        >>> import flambeau.multiprocessing as mp
        >>> ctx = mp.get_context("spawn")
        >>> ctx.get_start_method()
        'spawn'
        >>> q = ctx.Queue()  # tensors put on it travel as shared memory
        """
        return _concrete(method or multiprocessing.get_start_method())

    def set_start_method(self, method, force: bool = False) -> None:
        """Sets how child processes are started: ``"fork"``, ``"spawn"`` or
        ``"forkserver"``. It is Python's own setting (this calls
        ``multiprocessing.set_start_method``), so both modules agree. Once the method is
        set, or used, setting it again raises RuntimeError unless ``force`` is True;
        ``method=None`` with ``force=True`` resets it to the platform's default.

        >>> import flambeau.multiprocessing as mp
        >>> before = mp.get_start_method()
        >>> mp.set_start_method("spawn", force=True)
        >>> mp.get_start_method()
        'spawn'
        >>> mp.set_start_method(before, force=True)
        """
        multiprocessing.set_start_method(method, force)

    def get_start_method(self, allow_none: bool = False):
        """The name of the start method in use (``"fork"``, ``"spawn"`` or
        ``"forkserver"``). When none was set yet, it fixes the platform's default and
        returns it, or returns None if ``allow_none`` is True.

        >>> import flambeau.multiprocessing as mp
        >>> mp.get_start_method() in mp.get_all_start_methods()
        True
        """
        return multiprocessing.get_start_method(allow_none)

    def get_all_start_methods(self):
        """The start methods this platform supports, as a list of names, its default
        first.

        >>> import flambeau.multiprocessing as mp
        >>> sorted(mp.get_all_start_methods())  # on Linux
        ['fork', 'forkserver', 'spawn']
        """
        return multiprocessing.get_all_start_methods()


default_context = DefaultContext()
