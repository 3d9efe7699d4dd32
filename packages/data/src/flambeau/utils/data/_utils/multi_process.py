"""The DataLoader's iterator with worker processes: deals tasks, receives batches
through the shared-memory ring, notices dead and stuck workers, and ends the workers
(docs/design/data-loading.rst: "Worker protocol", "Failure detection", "Shutdown")."""

from __future__ import annotations

import atexit
import itertools
import os
import pickle
import select
import struct
import time
import weakref
from collections import deque
from multiprocessing.reduction import ForkingPickler

from flambeau.multiprocessing.connection import MessageReader
from flambeau.utils.data._utils import ExceptionWrapper
from flambeau.utils.data._utils.base_iter import _BaseDataLoaderIter
from flambeau.utils.data._utils.channel import FAST, RESUME, RESUMED, Channel
from flambeau.utils.data._utils.failures import dead_worker_message, dump_stack
from flambeau.utils.data._utils.fetch import gathers_index_tensors
from flambeau.utils.data._utils.pin_memory import pin_memory
from flambeau.utils.data._utils.ring import _FAST, _ParentRing, build, loads_fast, loads_result
from flambeau.utils.data._utils.start import context_of, import_for_workers, preload_forkserver
from flambeau.utils.data._utils.worker import (
    _RAW_HEAD,
    _RAW_TASK,
    _RESUME,
    _TASK,
    _IterableDatasetStopIteration,
    _worker_loop,
)
from flambeau.utils.data.sampler import _index_batches, _Int64Views

_LEN = struct.Struct("!i")
# While waiting for a result, the main process looks at the workers' sentinels this
# often (a killed worker is reported within it).
_SLICE = 0.1
_AGAIN = object()  # _received: no batch to return yet
_NO_INDICES = memoryview(b"").cast("q")
_RECORD_INDICES = 8192  # the most indices a task record holds (64 KiB)


def _write_message(fd: int, buf: bytes) -> None:
    """`buf` in the connections' framing (a 4-byte length first) with one write: a task
    carries no descriptors."""
    data = _LEN.pack(len(buf)) + buf
    n = os.write(fd, data)
    if n < len(data):
        data = memoryview(data)[n:]
        while data:
            data = data[os.write(fd, data) :]


# Iterators with live workers, ended at interpreter exit.
_live_iterators: weakref.WeakSet = weakref.WeakSet()


@atexit.register
def _end_all_workers() -> None:
    for it in list(_live_iterators):
        try:
            it._shutdown_workers()
        except Exception:
            pass


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    """Iterates over the loader with worker processes (docs/design/data-loading.rst)."""

    def __init__(self, loader) -> None:
        # Whether the workers gather each batch with an index tensor: the sampler's
        # permutation is then sliced as raw int64 (`_index_iter`) into task records.
        self._raw_indices = gathers_index_tensors(
            loader._dataset_kind, loader.dataset, loader._auto_collation, loader.collate_fn
        )
        self._int64_views = _Int64Views()
        super().__init__(loader)
        self._shutdown = True  # until the workers exist
        self._pid = os.getpid()
        self._prefetch_factor = max(1, loader.prefetch_factor)
        self._in_order = loader.in_order
        self._max_tasks = self._prefetch_factor * self._num_workers
        ctx = context_of(loader.multiprocessing_context)
        import_for_workers(ctx)
        preload_forkserver(ctx)
        # Slots per worker: its prefetched batches, plus two the program may hold.
        nslots = self._prefetch_factor + 2
        # Task records hold a batch's indices when they come raw (a map-style dataset's
        # batched fetch; batches of at most _RECORD_INDICES, larger ones go on the
        # connection). Records per ring: every task in flight (a map-style dataset's
        # workers never stop, so each holds `prefetch_factor`; an iterable dataset's
        # may leave all to one) and an epoch's RESUME (or its answer), with room to
        # spare (channel.py).
        batch_size = getattr(self._index_sampler, "batch_size", None) or 0
        max_indices = batch_size if self._raw_indices and batch_size <= _RECORD_INDICES else 0
        in_flight = self._prefetch_factor if self._raw_indices else self._max_tasks
        capacity = in_flight + 8
        # in_order=False waits for any worker's result: each worker also releases this
        # shared semaphore, a hint that something arrived (the channels' own count).
        self._any = None if self._in_order else ctx.Semaphore(0)
        self._workers = []
        self._conns = []
        self._channels = []
        self._returned = [deque() for _ in range(self._num_workers)]
        self._rings = [None] * self._num_workers
        try:
            for i in range(self._num_workers):
                channel = Channel(ctx, capacity, nslots, max_indices, self._any)
                parent_end, child_end = ctx.Pipe(duplex=True)
                w = ctx.Process(
                    target=_worker_loop,
                    args=(
                        self._dataset_kind,
                        self._dataset,
                        child_end,
                        channel,
                        self._auto_collation,
                        self._collate_fn,
                        self._drop_last,
                        self._base_seed,
                        loader.worker_init_fn,
                        i,
                        self._num_workers,
                        self._persistent_workers,
                        nslots,
                    ),
                    daemon=True,
                )
                w.start()
                child_end.close()
                self._workers.append(w)
                self._conns.append(parent_end)
                self._channels.append(channel)
                self._shutdown = False
        finally:
            _live_iterators.add(self)
            if len(self._workers) < self._num_workers:
                self._shutdown_workers()
        self._sentinels = {w.sentinel: i for i, w in enumerate(self._workers)}
        self._sentinel_poller = select.poll()
        for fd in self._sentinels:
            self._sentinel_poller.register(fd, select.POLLIN)
        self._results = [c.results.acquire for c in self._channels]
        self._scan = 0  # in_order=False: the worker whose results are looked at first
        # The messages that do not fit a record: one reader per connection.
        self._readers = [MessageReader(c) for c in self._conns]
        # Per worker, its fast-path layouts by id, parsed once (ring.py).
        self._layouts: list[dict] = [{} for _ in range(self._num_workers)]
        self._reset(loader, first_iter=True)

    # The epoch's tasks.

    def _reset(self, loader, first_iter: bool = False) -> None:
        if not first_iter:
            super()._reset(loader, first_iter)
        self._send_idx = 0
        self._rcvd_idx = 0
        self._task_info: dict = {}  # task id -> worker id, or (worker id, data) once here
        self._tasks_outstanding = 0
        self._workers_num_tasks = [0] * self._num_workers
        self._workers_status = [True] * self._num_workers
        self._worker_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:
            # Persistent workers: a new epoch. Each worker acknowledges; results of the last
            # epoch still on their way are dropped.
            for i in range(self._num_workers):
                ch = self._channels[i]
                if not ch.send_raw(-1, self._returned[i], _NO_INDICES, RESUME):
                    self._send(i, (_RESUME, self._take_returned(i)))
            pending = set(range(self._num_workers))
            while pending:
                for i in list(pending):
                    task_id, data = self._get_data(i)
                    if task_id == -1:
                        pending.discard(i)
        for _ in range(self._max_tasks):
            self._try_put_index()

    def _index_iter(self):
        # Batches as int64 memoryviews sliced from the sampler's runs (no list of ints per
        # batch); the same indices as the batch sampler's lists.
        if self._raw_indices:
            batches = _index_batches(self._index_sampler, raw=self._int64_views)
            if batches is not None:
                return batches
        return super()._index_iter()

    def _take_returned(self, worker_id: int) -> list:
        q = self._returned[worker_id]
        if not q:
            return []
        out = []
        while q:
            out.append(q.popleft())
        return out

    def _send(self, worker_id: int, msg) -> None:
        """A task (or RESUME) on the worker's connection, announced by a record."""
        try:
            buf = pickle.dumps(msg, 5)  # lists of ints: plain pickle is enough
        except Exception:
            buf = None
        conn = self._conns[worker_id]
        self._channels[worker_id].announce_task()
        try:
            if buf is None:
                # With the descriptors of any tensor among the indices.
                conn.send_bytes(ForkingPickler.dumps(msg))
            else:
                _write_message(conn.fileno(), buf)
        except OSError:
            self._raise_dead(worker_id)

    def _send_raw(self, worker_id: int, task_id: int, index: memoryview) -> None:
        """A task whose indices (an int64 memoryview) do not fit a record (more freed
        slots than it holds): a raw message (worker.py) on the connection."""
        slots = self._take_returned(worker_id)
        head = _RAW_HEAD.pack(_RAW_TASK, len(slots), task_id)
        body = b"".join((head, struct.pack(f"<{len(slots)}q", *slots), index.cast("B")))
        self._channels[worker_id].announce_task()
        try:
            _write_message(self._conns[worker_id].fileno(), body)
        except OSError:
            self._raise_dead(worker_id)

    def _try_put_index(self) -> None:
        max_tasks = self._max_tasks
        if self._tasks_outstanding >= max_tasks:
            return
        status = self._workers_status
        if self._in_order:
            for _ in range(self._num_workers):
                worker_id = next(self._worker_cycle)
                if status[worker_id]:
                    break
            else:
                return  # no worker can take it
        else:
            active = sum(status)
            for _ in range(self._num_workers):
                worker_id = next(self._worker_cycle)
                if status[worker_id]:
                    if self._workers_num_tasks[worker_id] < max_tasks // max(active, 1):
                        break
            else:
                return  # no worker can take it
        try:
            index = next(self._sampler_iter)
        except StopIteration:
            return
        task_id = self._send_idx
        if index.__class__ is memoryview:
            if not self._channels[worker_id].send_raw(task_id, self._returned[worker_id], index):
                self._send_raw(worker_id, task_id, index)
        else:
            self._send(worker_id, (_TASK, task_id, index, self._take_returned(worker_id)))
        self._task_info[task_id] = worker_id
        self._workers_num_tasks[worker_id] += 1
        self._tasks_outstanding += 1
        self._send_idx = task_id + 1

    def _next_data(self):
        if self._in_order:
            # The common case: the next task's worker is active, its next result is that
            # task's batch.
            rcvd = self._rcvd_idx
            worker_id = self._task_info.get(rcvd)
            if worker_id.__class__ is int and self._workers_status[worker_id]:
                if not self._results[worker_id](False):
                    self._wait(worker_id)
                kind, layout_id, slot, idx = self._channels[worker_id].take_result()
                self._tasks_outstanding -= 1
                self._workers_num_tasks[worker_id] -= 1
                if kind == FAST and idx == rcvd:  # a batch (never an error)
                    data = build(self._rings[worker_id], slot, self._layouts[worker_id][layout_id])
                    del self._task_info[rcvd]
                    self._rcvd_idx = rcvd + 1
                    self._try_put_index()
                    if self._pin_memory:
                        data = pin_memory(data, self._pin_memory_device)
                    return data
                if kind == FAST:
                    data = build(self._rings[worker_id], slot, self._layouts[worker_id][layout_id])
                else:
                    idx, data = self._take_other(worker_id, kind)
                got = self._received(idx, data, worker_id)
                if got is not _AGAIN:
                    return got
        while True:
            # Skip the tasks of workers whose iterable dataset ended.
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info is None:
                    self._rcvd_idx += 1
                    continue
                if isinstance(info, tuple) or self._workers_status[info]:
                    break
                del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration

            info = self._task_info[self._rcvd_idx]
            if isinstance(info, tuple):  # arrived earlier, out of order
                worker_id, data = info
                del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
                return self._process_data(data, worker_id)

            if self._in_order:
                worker_id = info
                idx, data = self._get_data(worker_id)
            else:
                idx, data, worker_id = self._get_any()
            self._tasks_outstanding -= 1
            self._workers_num_tasks[worker_id] -= 1
            got = self._received(idx, data, worker_id)
            if got is not _AGAIN:
                return got

    def _received(self, idx: int, data, worker_id: int):
        """What a result of task `idx` from `worker_id` gives: the batch to return, or
        _AGAIN (the next one is still to come)."""
        if isinstance(data, _IterableDatasetStopIteration):
            if self._persistent_workers:
                self._workers_status[data.worker_id] = False
            else:
                self._mark_worker_as_unavailable(data.worker_id)
            self._task_info.pop(idx, None)
            self._try_put_index()
            return _AGAIN
        if idx != self._rcvd_idx:
            if not self._in_order:
                del self._task_info[idx]
                return self._process_data(data, worker_id)
            self._task_info[idx] = (worker_id, data)
            return _AGAIN
        del self._task_info[idx]
        self._rcvd_idx += 1
        return self._process_data(data, worker_id)

    def _process_data(self, data, worker_id: int):
        self._try_put_index()
        if isinstance(data, ExceptionWrapper):
            data.reraise()
        if self._pin_memory:
            data = pin_memory(data, self._pin_memory_device)
        return data

    def _mark_worker_as_unavailable(self, worker_id: int) -> None:
        self._workers_status[worker_id] = False

    # Receiving, with dead and stuck workers detected.

    def _get_data(self, worker_id: int):
        """(task id, data) of `worker_id`'s next result, waiting for it."""
        if not self._results[worker_id](False):
            self._wait(worker_id)
        return self._take(worker_id)

    def _get_any(self):
        """(task id, data, worker id) of the next result of any worker (in_order=False),
        waiting for one."""
        n = self._num_workers
        results = self._results
        while True:
            first = self._scan
            for k in range(n):
                i = (first + k) % n
                if results[i](False):
                    self._scan = (i + 1) % n
                    self._any.acquire(False)  # its hint, when it came already
                    task_id, data = self._take(i)
                    return task_id, data, i
            self._wait(None)  # a hint (maybe of a result taken since): look again

    def _take(self, worker_id: int):
        """(task id, data) of the result record just acquired from `worker_id`."""
        kind, layout_id, slot, task_id = self._channels[worker_id].take_result()
        if kind == FAST:
            return task_id, build(self._rings[worker_id], slot, self._layouts[worker_id][layout_id])
        return self._take_other(worker_id, kind)

    def _take_other(self, worker_id: int, kind: int):
        """(task id, data) of a result record of kind RESUMED or SOCKET (the message on
        `worker_id`'s connection that it announces)."""
        if kind == RESUMED:
            return -1, None
        reader = self._readers[worker_id]
        try:
            offset, size = reader.next_message()  # written right after its record
        except (EOFError, OSError):
            self._raise_dead(worker_id)
        buf = reader.buf
        if size and buf[offset] == _FAST:
            return loads_fast(buf, offset, size, self._rings[worker_id], self._layouts[worker_id])
        with memoryview(buf) as view:
            msg = bytes(view[offset : offset + size])
        try:
            task_id, data, ring = reader.loads(
                lambda b: loads_result(b, self._rings[worker_id]), msg
            )
        finally:
            reader.release_descriptors()
        if ring is not None:
            storage, slot_bytes, nslots = ring
            self._rings[worker_id] = _ParentRing(
                storage, slot_bytes, nslots, self._returned[worker_id]
            )
        return task_id, data

    def _wait(self, worker_id) -> None:
        """Blocks until `worker_id`'s results semaphore is acquired (None: until a hint
        that some worker has a result). Every _SLICE it looks at the workers' sentinels
        (a descriptor the kernel makes readable when the process exits), so a death ends
        the wait; `timeout` bounds it."""
        sem = self._channels[worker_id].results if worker_id is not None else self._any
        deadline = time.monotonic() + self._timeout if self._timeout > 0 else None
        while True:
            left = _SLICE
            if deadline is not None:
                left = min(left, max(0.0, deadline - time.monotonic()))
            if sem.acquire(True, left) or self._check_workers(worker_id, deadline):
                return

    def _check_workers(self, worker_id, deadline) -> bool:
        """Raises when a worker died (but True when it is `worker_id` and its result
        came first; with None, when any result came) or `deadline` passed."""
        for fd, _ in self._sentinel_poller.poll(0):
            i = self._sentinels.get(fd)
            if i is None:
                continue
            # What it posted before exiting is read first.
            if worker_id is None and self._channels[i].results.get_value() > 0:
                return True
            if i == worker_id and self._results[i](False):
                return True
            self._raise_dead(i)
        if deadline is not None and time.monotonic() >= deadline:
            self._raise_timeout(worker_id)
        return False

    def _raise_dead(self, worker_id: int):
        w = self._workers[worker_id]
        w.join(timeout=1.0)
        in_flight = sum(
            1 for v in self._task_info.values() if not isinstance(v, tuple) and v == worker_id
        )
        msg = dead_worker_message(w.pid, w.exitcode, worker_id, in_flight)
        self._shutdown_workers()
        raise RuntimeError(msg)

    def _raise_timeout(self, worker_id):
        stacks = []
        targets = [worker_id] if worker_id is not None else range(self._num_workers)
        for i in targets:
            if self._workers_num_tasks[i] > 0:
                stack = dump_stack(self._workers[i].pid)
                if stack:
                    stacks.append(f"\nWorker {i} (pid {self._workers[i].pid}) was at:\n{stack}")
        self._shutdown_workers(kill=True)
        raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds" + "".join(stacks))

    # Ending the workers.

    def _shutdown_workers(self, kill: bool = False) -> None:
        if self._shutdown or os.getpid() != getattr(self, "_pid", None):
            return
        self._shutdown = True
        try:
            for ch in getattr(self, "_channels", ()):
                ch.set_done()  # each worker drops what is queued and exits
            # A worker in the middle of a message gets an end of file (or EPIPE) instead.
            for r in getattr(self, "_readers", ()):
                r.close()
            for c in self._conns:
                c.close()
            deadline = time.monotonic() + (0 if kill else 2.0)
            for w in self._workers:
                w.join(timeout=max(0.0, deadline - time.monotonic()))
            for w in self._workers:
                if w.is_alive():
                    w.terminate()
            for w in self._workers:
                w.join(timeout=1.0)
                if w.is_alive():
                    w.kill()
                    w.join()
        finally:
            _live_iterators.discard(self)

    def __del__(self):
        try:
            self._shutdown_workers()
        except Exception:
            pass
