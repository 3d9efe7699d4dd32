"""The rings of records between the main process and a worker (_utils/channel.py):
records go round, what does not fit is refused (it goes on the connection), and the
end of the worker's epoch and shutdown are records or flags too."""

from __future__ import annotations

import array
import copy
import multiprocessing
from collections import deque

from flambeau.utils.data._utils.channel import FAST, RAW, RESUME, RESUMED, SOCKET, Channel

ctx = multiprocessing.get_context("fork")


def int64(values) -> memoryview:
    return memoryview(array.array("q", values))


def ends(capacity=3, max_freed=2, max_indices=4, any_sem=None):
    """The main process's end and a worker's (its own positions, the same memory and
    semaphores: what the worker has after fork or unpickling)."""
    main = Channel(ctx, capacity, max_freed, max_indices, any_sem)
    return main, copy.copy(main)


def test_records_go_round_the_rings():
    main, worker = ends()
    for k in range(7):  # more than the capacity: the rings wrap around
        freed = deque([k, 9])
        assert main.send_raw(100 + k, freed, int64([1, 2, k]))
        assert not freed  # the slots went with the task
        assert worker.tasks.acquire(False)
        kind, slots, task_id, raw = worker.take_task()
        assert (kind, slots, task_id) == (RAW, (k, 9), 100 + k)
        assert list(memoryview(raw).cast("q")) == [1, 2, k]
        worker.post_result(FAST, 3, k % 2, 100 + k)
        assert main.results.acquire(False)
        assert main.take_result() == (FAST, 3, k % 2, 100 + k)
    assert not worker.tasks.acquire(False) and not main.results.acquire(False)


def test_what_does_not_fit_a_record_is_refused():
    main, worker = ends()
    freed = deque([1, 2, 3])
    assert not main.send_raw(0, freed, int64([0]))  # more freed slots than a record holds
    assert list(freed) == [1, 2, 3]  # nothing taken
    assert not main.send_raw(0, deque(), int64(range(5)))  # more indices
    assert not worker.tasks.acquire(False)  # nothing was posted
    main.announce_task()  # the task goes on the connection instead
    assert worker.tasks.acquire(False) and worker.take_task()[0] == SOCKET


def test_resume_shutdown_and_the_shared_hint():
    hint = ctx.Semaphore(0)
    main, worker = ends(any_sem=hint)
    empty = memoryview(b"").cast("q")
    assert main.send_raw(-1, deque([2]), empty, RESUME)
    assert worker.tasks.acquire(False)
    assert worker.take_task() == (RESUME, (2,), -1, bytearray())
    worker.post_result(RESUMED, 0, 0, -1)
    # in_order=False: each result also releases the semaphore shared by all workers.
    assert hint.acquire(False) and main.results.acquire(False)
    assert main.take_result()[0] == RESUMED
    assert not worker.done
    main.set_done()  # shutdown: a flag, and a wake-up with no record
    assert worker.done and worker.tasks.acquire(False)


def test_a_channel_in_reused_memory_starts_afresh():
    # Shared memory is sub-allocated and reused: a channel made where an ended one was
    # must not look ended.
    for _ in range(3):
        main, worker = ends()
        assert not worker.done
        main.set_done()
        del main, worker
