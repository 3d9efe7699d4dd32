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
import threading
import time
import weakref
from collections import deque
from multiprocessing.reduction import ForkingPickler

from flambeau.multiprocessing.connection import MessageReader
from flambeau.utils.data._utils import ExceptionWrapper
from flambeau.utils.data._utils.base_iter import _BaseDataLoaderIter
from flambeau.utils.data._utils.failures import dead_worker_message, dump_stack
from flambeau.utils.data._utils.pin_memory import pin_memory
from flambeau.utils.data._utils.ring import _ParentRing, is_fast, loads_fast, loads_result
from flambeau.utils.data._utils.start import context_of, preload_forkserver
from flambeau.utils.data._utils.worker import (
    _RESUME,
    _TASK,
    _IterableDatasetStopIteration,
    _worker_loop,
)


def _write_message(fd: int, buf: bytes) -> None:
    """`buf` in the connections' framing (a 4-byte length first) with one write: a task
    carries no descriptors, and one system call wakes the worker once."""
    data = _LEN.pack(len(buf)) + buf
    n = os.write(fd, data)
    if n < len(data):
        data = memoryview(data)[n:]
        while data:
            data = data[os.write(fd, data) :]


_LEN = struct.Struct("!i")

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
        super().__init__(loader)
        self._shutdown = True  # until the workers exist
        self._pid = os.getpid()
        self._prefetch_factor = max(1, loader.prefetch_factor)
        self._in_order = loader.in_order
        ctx = context_of(loader.multiprocessing_context)
        preload_forkserver(ctx)
        self._done_event = ctx.Event()
        # Slots per worker: its prefetched batches, plus two the program may hold.
        nslots = self._prefetch_factor + 2
        self._workers = []
        self._conns = []
        self._returned = [deque() for _ in range(self._num_workers)]
        self._rings = [None] * self._num_workers
        self._ring_lock = threading.Lock()
        try:
            for i in range(self._num_workers):
                parent_end, child_end = ctx.Pipe(duplex=True)
                w = ctx.Process(
                    target=_worker_loop,
                    args=(
                        self._dataset_kind,
                        self._dataset,
                        child_end,
                        self._done_event,
                        self._auto_collation,
                        self._collate_fn,
                        self._drop_last,
                        self._base_seed,
                        loader.worker_init_fn,
                        i,
                        self._num_workers,
                        self._persistent_workers,
                        nslots,
                        self._pid,
                    ),
                    daemon=True,
                )
                w.start()
                child_end.close()
                self._workers.append(w)
                self._conns.append(parent_end)
                self._shutdown = False
        finally:
            _live_iterators.add(self)
            if len(self._workers) < self._num_workers:
                self._shutdown_workers()
        self._sentinels = {w.sentinel: i for i, w in enumerate(self._workers)}
        # One reader per connection (the main process is its only reader): several
        # results per system call when they have queued up.
        self._readers = [MessageReader(c) for c in self._conns]
        self._layouts: dict = {}  # fast-path layouts, parsed once (ring.py)
        self._wait_pollers: dict = {}  # worker id (None: any) -> its poll object
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
                self._send(i, (_RESUME, self._take_returned(i)))
            pending = set(range(self._num_workers))
            while pending:
                for i in list(pending):
                    task_id, data = self._get_data(i)
                    if task_id == -1:
                        pending.discard(i)
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _take_returned(self, worker_id: int) -> list:
        q = self._returned[worker_id]
        if not q:
            return []
        out = []
        while q:
            out.append(q.popleft())
        return out

    def _send(self, worker_id: int, msg) -> None:
        conn = self._conns[worker_id]
        try:
            try:
                buf = pickle.dumps(msg, 5)  # lists of ints: plain pickle is enough
            except Exception:
                # With the descriptors of any tensor among the indices.
                conn.send_bytes(ForkingPickler.dumps(msg))
            else:
                _write_message(conn.fileno(), buf)
        except OSError:
            self._raise_dead(worker_id)

    def _try_put_index(self) -> None:
        max_tasks = self._prefetch_factor * self._num_workers
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
            index = self._next_index()
        except StopIteration:
            return
        self._send(worker_id, (_TASK, self._send_idx, index, self._take_returned(worker_id)))
        self._task_info[self._send_idx] = worker_id
        self._workers_num_tasks[worker_id] += 1
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _next_data(self):
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

            worker_id = info if self._in_order else None
            idx, data, worker_id = self._get_result(worker_id)
            self._tasks_outstanding -= 1
            self._workers_num_tasks[worker_id] -= 1
            if isinstance(data, _IterableDatasetStopIteration):
                if self._persistent_workers:
                    self._workers_status[data.worker_id] = False
                else:
                    self._mark_worker_as_unavailable(data.worker_id)
                self._task_info.pop(idx, None)
                self._try_put_index()
                continue
            if idx != self._rcvd_idx:
                if not self._in_order:
                    del self._task_info[idx]
                    return self._process_data(data, worker_id)
                self._task_info[idx] = (worker_id, data)
            else:
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

    def _get_result(self, worker_id):
        """(task id, data, worker id) of the next result from `worker_id` (any worker when
        None)."""
        if worker_id is not None:
            task_id, data = self._get_data(worker_id)
            return task_id, data, worker_id
        ready = [i for i, r in enumerate(self._readers) if r.poll()]
        if not ready:
            ready = self._wait(None)
        i = ready[0]
        task_id, data = self._recv(i)
        return task_id, data, i

    def _get_data(self, worker_id: int):
        if not self._readers[worker_id].poll():
            self._wait(worker_id)
        return self._recv(worker_id)

    def _recv(self, worker_id: int):
        reader = self._readers[worker_id]
        try:
            offset, size = reader.next_message()
        except (EOFError, OSError):
            self._raise_dead(worker_id)
        buf = reader.buf
        if size and is_fast(buf, offset):
            return loads_fast(buf, offset, size, self._rings[worker_id], self._layouts)
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

    def _wait(self, worker_id):
        """Blocks until `worker_id`'s connection (any worker's, when None) has data.
        A worker's exit ends the wait at once (its sentinel); `timeout` bounds it."""
        for i in range(self._num_workers) if worker_id is None else (worker_id,):
            if self._readers[i].buffered():
                return [i]
        poller, conns = self._wait_poller(worker_id)
        deadline = time.monotonic() + self._timeout if self._timeout > 0 else None
        while True:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            events = poller.poll(None if left is None else int(left * 1000) + 1)
            ready = [conns[fd] for fd, _ in events if fd in conns]
            if ready:
                return ready
            for fd, _ in events:
                i = self._sentinels.get(fd)
                if i is not None:
                    # Data it sent before exiting is still read first.
                    if (worker_id is None or i == worker_id) and self._readers[i].poll():
                        return [i]
                    self._raise_dead(i)
            if deadline is not None and time.monotonic() >= deadline:
                self._raise_timeout(worker_id)

    def _wait_poller(self, worker_id):
        """The poll object over `worker_id`'s connection (every worker's, when None) and
        all the sentinels, made once; and its connections' descriptors -> worker ids."""
        got = self._wait_pollers.get(worker_id)
        if got is None:
            poller = select.poll()
            conns = {}
            for i, c in enumerate(self._conns):
                if (worker_id is None or i == worker_id) and not c.closed:
                    poller.register(c.fileno(), select.POLLIN)
                    conns[c.fileno()] = i
            for fd, i in self._sentinels.items():
                if self._workers[i] is not None:
                    poller.register(fd, select.POLLIN)
            got = self._wait_pollers[worker_id] = (poller, conns)
        return got

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
            self._done_event.set()
            for c in self._conns:
                try:
                    c.send(None)
                except (OSError, ValueError):
                    pass
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
            for r in getattr(self, "_readers", ()):
                r.close()
            for c in self._conns:
                c.close()
        finally:
            _live_iterators.discard(self)

    def __del__(self):
        try:
            self._shutdown_workers()
        except Exception:
            pass
