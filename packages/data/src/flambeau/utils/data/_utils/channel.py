"""The rings of records between the main process and one worker (see
docs/design/data-loading.rst, "Worker protocol").

A `Channel` is one block of shared memory, made by the main process before the worker
starts, holding two rings of fixed-size records: tasks (main process -> worker) and
results (worker -> main process), each counted by a semaphore that the writer releases
after writing a record and the reader acquires before reading one. A semaphore costs no
system call unless its reader sleeps on it, so while the worker has tasks queued and
its results are ready when the main process wants them, a batch crosses with no system
call at all; the release/acquire pair also orders the record's bytes (no torn reads on
any CPU).

What does not fit a record goes through the worker's connection (flambeau.multiprocessing,
whose messages carry shared-memory descriptors): a record of kind ``SOCKET`` says that
the next message on the connection is the one to read. The record is released before the
message is written, so that a message longer than the socket's buffer never waits for a
reader that waits for its record.

Records (little-endian):

- task: `TASK_HEAD` (kind, number of freed slots, task id, number of indices), then at
  `TASK_FREED` the freed slots as int64, then at `indices_at` the batch's indices as
  int64. Kind ``RAW``: a task, all in the record; ``RESUME``: persistent workers start
  an epoch (the freed slots only); ``SOCKET``: a message on the connection.
- result: `RESULT` (kind, layout id, slot, task id). Kind ``FAST``: a batch in ring slot
  `slot` with the layout of id `layout id` (ring.py), which the main process knows
  already; ``RESUMED``: the answer to ``RESUME``; ``SOCKET``: a message on the
  connection.

The rings never overflow: each holds at most the tasks in flight, plus the control
messages of an epoch's start and of shutdown, and `capacity` leaves room for them.
Shutdown sets the `done` byte and releases the task semaphore with no record: a worker
checks `done` before each task.
"""

from __future__ import annotations

import struct

import flambeau

# Kinds of records. Tasks: RAW, SOCKET, RESUME; results: FAST, SOCKET, RESUMED.
RAW = 1
SOCKET = 2
FAST = 3
RESUME = 4
RESUMED = 5

TASK_HEAD = struct.Struct("<IIqq")
TASK_FREED = 32  # offset of the freed slots in a task record
RESULT = struct.Struct("<BxHiq")
_Q = struct.Struct("<q")
_HEADER = 64  # byte 0: done
_ALIGN = 64


def _round_up(n: int, to: int) -> int:
    return (n + to - 1) // to * to


class Channel:
    """Shared by the main process and one worker (inherited under fork, pickled with its
    shared storage and semaphores under spawn and forkserver). Each side keeps its own
    positions in the rings: `sent` and `taken` count the records it wrote and read."""

    def __init__(self, ctx, capacity: int, max_freed: int, max_indices: int, any_sem=None) -> None:
        self.capacity = capacity
        self.max_freed = max_freed
        self.max_indices = max_indices
        self.task_bytes = _round_up(TASK_FREED + 8 * (max_freed + max_indices), _ALIGN)
        self.indices_at = TASK_FREED + 8 * max_freed
        self.results_at = _HEADER + capacity * self.task_bytes
        nbytes = self.results_at + capacity * RESULT.size
        self.storage = flambeau.UntypedStorage._new_shared(nbytes)
        self.storage._owner().view[:_HEADER] = bytes(_HEADER)  # reused memory: not done
        self.tasks = ctx.Semaphore(0)
        self.results = ctx.Semaphore(0)
        self.any = any_sem  # also released with each result, when given (a shared hint)
        self._attach()

    def _attach(self) -> None:
        self.view = self.storage._owner().view
        self.sent = 0
        self.taken = 0

    def __getstate__(self):
        state = dict(self.__dict__)
        del state["view"]
        return state

    def __setstate__(self, state) -> None:
        self.__dict__.update(state)
        self._attach()

    # Both ends.

    @property
    def done(self) -> bool:
        return self.view[0] != 0

    def set_done(self) -> None:
        """Shutdown: the worker drops what is queued and exits once it wakes."""
        self.view[0] = 1
        self.tasks.release()

    # The main process's end.

    def send_raw(self, task_id: int, freed, index: memoryview, kind: int = RAW) -> bool:
        """A task whose indices (an int64 memoryview) fit a record, with the slots in
        `freed` (a deque, emptied); False when they do not fit (nothing is taken). With
        `kind` RESUME, the start of an epoch (`index` empty)."""
        n = len(index)
        nfreed = len(freed)
        if n > self.max_indices or nfreed > self.max_freed:
            return False
        at = _HEADER + self.sent % self.capacity * self.task_bytes
        view = self.view
        TASK_HEAD.pack_into(view, at, kind, nfreed, task_id, n)
        if nfreed == 1:
            _Q.pack_into(view, at + TASK_FREED, freed.popleft())
        elif nfreed:
            slots = [freed.popleft() for _ in range(nfreed)]
            struct.pack_into(f"<{nfreed}q", view, at + TASK_FREED, *slots)
        if n:
            at += self.indices_at
            view[at : at + 8 * n] = index.cast("B")
        self.sent += 1
        self.tasks.release()
        return True

    def announce_task(self) -> None:
        """The next task is a message on the connection (written after this)."""
        at = _HEADER + self.sent % self.capacity * self.task_bytes
        TASK_HEAD.pack_into(self.view, at, SOCKET, 0, -1, 0)
        self.sent += 1
        self.tasks.release()

    def take_result(self):
        """(kind, layout id, slot, task id) of the next result record; the caller
        acquired `results`."""
        at = self.results_at + self.taken % self.capacity * RESULT.size
        self.taken += 1
        return RESULT.unpack_from(self.view, at)

    # The worker's end.

    def take_task(self):
        """(kind, freed slots, task id, indices as a bytearray) of the next task record;
        the caller acquired `tasks`."""
        at = _HEADER + self.taken % self.capacity * self.task_bytes
        self.taken += 1
        view = self.view
        kind, nfreed, task_id, n = TASK_HEAD.unpack_from(view, at)
        if kind == SOCKET:
            return kind, (), task_id, None
        freed = struct.unpack_from(f"<{nfreed}q", view, at + TASK_FREED) if nfreed else ()
        start = at + self.indices_at
        return kind, freed, task_id, bytearray(view[start : start + 8 * n])

    def post_result(self, kind: int, layout_id: int, slot: int, task_id: int) -> None:
        at = self.results_at + self.sent % self.capacity * RESULT.size
        RESULT.pack_into(self.view, at, kind, layout_id, slot, task_id)
        self.sent += 1
        self.results.release()
        if self.any is not None:
            self.any.release()
