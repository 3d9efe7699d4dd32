"""The DataLoader: PyTorch's arguments, defaults and errors; workers that pay off; resume.

See docs/design/data-loading.rst for the worker protocol, the shared-memory ring, how
dead and stuck workers are detected and how a loader resumes mid-epoch.
"""

from __future__ import annotations

import atexit
import io
import itertools
import math
import multiprocessing as python_multiprocessing
import os
import pickle
import select
import signal
import threading
import time
import warnings
import weakref
from collections import deque
from multiprocessing.reduction import ForkingPickler

import flambeau
import flambeau.multiprocessing as _mp
from flambeau.utils.data import _utils
from flambeau.utils.data._utils import ExceptionWrapper
from flambeau.utils.data._utils.collate import default_collate, default_convert
from flambeau.utils.data._utils.fetch import _IterableDatasetFetcher, _MapDatasetFetcher
from flambeau.utils.data._utils.worker import (
    _RESUME,
    _TASK,
    DTYPES,
    STACK_FILE_NAME,
    _IterableDatasetStopIteration,
    _worker_loop,
    get_worker_info,
)
from flambeau.utils.data.dataset import Dataset, IterableDataset
from flambeau.utils.data.sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
)

__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info"]


class _DatasetKind:
    Map = 0
    Iterable = 1

    @staticmethod
    def create_fetcher(kind, dataset, auto_collation, collate_fn, drop_last):
        if kind == _DatasetKind.Map:
            return _MapDatasetFetcher(dataset, auto_collation, collate_fn, drop_last)
        return _IterableDatasetFetcher(dataset, auto_collation, collate_fn, drop_last)


class _InfiniteConstantSampler(Sampler):
    """None forever: the placeholder "index" of an IterableDataset."""

    def __iter__(self):
        while True:
            yield None


def _cpu_count() -> int | None:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count()


def _accelerator():
    acc = getattr(flambeau, "accelerator", None)
    try:
        if acc is not None and acc.is_available():
            return acc.current_accelerator()
    except Exception:
        return None
    return None


class DataLoader:
    """Combines a dataset and a sampler and iterates over batches of it, in the main
    process or in `num_workers` worker processes.

    The arguments, their defaults and the errors for conflicting ones are PyTorch's. Beyond
    PyTorch: ``state_dict()``/``load_state_dict()`` resume an epoch where it stopped, and a
    map-style dataset gives the same batches for a seed whatever `num_workers` is.

    Args:
        dataset: a map-style (``Dataset``) or iterable-style (``IterableDataset``) dataset.
        batch_size: samples per batch (default 1); None turns automatic batching off.
        shuffle: reshuffle every epoch (map-style only).
        sampler: the keys to read, in order (excludes `shuffle`).
        batch_sampler: lists of keys, one per batch (excludes `batch_size`, `shuffle`,
            `sampler`, `drop_last`).
        num_workers: worker processes (0: load in the main process).
        collate_fn: merges a list of samples into a batch (default ``default_collate``;
            ``default_convert`` without automatic batching).
        pin_memory: put batches in pinned memory (when a device backend provides it).
        drop_last: drop the last batch when it is not full.
        timeout: seconds to wait for a batch from the workers (0: forever).
        worker_init_fn: called in each worker with its id, after seeding.
        multiprocessing_context: "fork", "spawn", "forkserver" or a context object.
        generator: the random generator of the sampler and of the workers' base seed.
        prefetch_factor: batches each worker loads ahead (default 2 with workers).
        persistent_workers: keep the workers between epochs.
        pin_memory_device: deprecated in PyTorch; the current accelerator is used.
        in_order: give batches in sampler order (False: as workers finish them).
    """

    __initialized = False

    def __init__(
        self,
        dataset: Dataset,
        batch_size: int | None = 1,
        shuffle: bool | None = None,
        sampler=None,
        batch_sampler=None,
        num_workers: int = 0,
        collate_fn=None,
        pin_memory: bool = False,
        drop_last: bool = False,
        timeout: float = 0,
        worker_init_fn=None,
        multiprocessing_context=None,
        generator=None,
        *,
        prefetch_factor: int | None = None,
        persistent_workers: bool = False,
        pin_memory_device: str = "",
        in_order: bool = True,
    ) -> None:
        if num_workers < 0:
            raise ValueError(
                "num_workers option should be non-negative; "
                "use num_workers=0 to disable multiprocessing."
            )
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError(
                "prefetch_factor option could only be specified in multiprocessing."
                "let num_workers > 0 to enable multiprocessing, otherwise set "
                "prefetch_factor to None."
            )
        elif num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order

        if isinstance(dataset, IterableDataset):
            self._dataset_kind = _DatasetKind.Iterable
            if shuffle not in {False, None}:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified shuffle option, "
                    f"but got shuffle={shuffle}"
                )
            if sampler is not None:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified sampler option, "
                    f"but got sampler={sampler}"
                )
            elif batch_sampler is not None:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified "
                    f"batch_sampler option, but got batch_sampler={batch_sampler}"
                )
        else:
            shuffle = bool(shuffle)
            self._dataset_kind = _DatasetKind.Map

        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")

        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "batch_sampler option is mutually exclusive "
                    "with batch_size, shuffle, sampler, and "
                    "drop_last"
                )
            batch_size = None
            drop_last = False
        elif batch_size is None:
            if drop_last:
                raise ValueError(
                    "batch_size=None option disables auto-batching "
                    "and is mutually exclusive with drop_last"
                )

        if sampler is None:
            if self._dataset_kind == _DatasetKind.Iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)  # type: ignore[arg-type]
            else:
                sampler = SequentialSampler(dataset)  # type: ignore[arg-type]

        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator

        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers

        self.__initialized = True
        self._IterableDataset_len_called = None
        self._iterator = None
        self._last_iterator = None  # weak reference to the latest iterator, for state_dict
        self._resume_state = None  # set by load_state_dict, used by the next iterator

        self.check_worker_number_rationality()

    def _get_iterator(self):
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        self.check_worker_number_rationality()
        return _MultiProcessingDataLoaderIter(self)

    @property
    def multiprocessing_context(self):
        return self.__multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, multiprocessing_context) -> None:
        if multiprocessing_context is not None:
            if self.num_workers > 0:
                if isinstance(multiprocessing_context, str):
                    valid_start_methods = _mp.get_all_start_methods()
                    if multiprocessing_context not in valid_start_methods:
                        raise ValueError(
                            "multiprocessing_context option "
                            f"should specify a valid start method in {valid_start_methods!r}, "
                            f"but got multiprocessing_context={multiprocessing_context!r}"
                        )
                    multiprocessing_context = _mp.get_context(multiprocessing_context)
                if not isinstance(
                    multiprocessing_context, python_multiprocessing.context.BaseContext
                ):
                    raise TypeError(
                        "multiprocessing_context option should be a valid context "
                        "object or a string specifying the start method, but got "
                        f"multiprocessing_context={multiprocessing_context}"
                    )
            else:
                raise ValueError(
                    "multiprocessing_context can only be used with "
                    "multi-process loading (num_workers > 0), but got "
                    f"num_workers={self.num_workers}"
                )
        self.__multiprocessing_context = multiprocessing_context

    def __setattr__(self, attr, val) -> None:
        if self.__initialized and attr in (
            "batch_size",
            "batch_sampler",
            "sampler",
            "drop_last",
            "dataset",
            "persistent_workers",
        ):
            raise ValueError(
                f"{attr} attribute should not be set after {self.__class__.__name__} is initialized"
            )
        super().__setattr__(attr, val)

    def __iter__(self):
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            it = self._iterator
        else:
            it = self._get_iterator()
        self._last_iterator = weakref.ref(it)
        return it

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def __len__(self) -> int:
        if self._dataset_kind == _DatasetKind.Iterable:
            length = self._IterableDataset_len_called = len(self.dataset)  # type: ignore[arg-type]
            if self.batch_size is not None:
                if self.drop_last:
                    length = length // self.batch_size
                else:
                    length = math.ceil(length / self.batch_size)
            return length
        return len(self._index_sampler)

    def check_worker_number_rationality(self) -> None:
        """Warns when more workers are asked for than this process may use CPUs."""
        if not self.num_workers:
            return
        suggest = _cpu_count()
        if suggest is None or self.num_workers > suggest:
            cpuset_checked = hasattr(os, "sched_getaffinity")
            if suggest is not None:
                suggested = (
                    f"Our suggested max number of worker in current system is {suggest}"
                    f"{'' if cpuset_checked else ' (`cpuset` is not taken into account)'}, "
                    "which is smaller than what this DataLoader is going to create."
                )
            else:
                suggested = (
                    "DataLoader is not able to compute a suggested max number of worker in "
                    "current system."
                )
            warnings.warn(
                f"This DataLoader will create {self.num_workers} worker processes in total. "
                f"{suggested} Please be aware that excessive worker creation might get "
                "DataLoader running slow or even freeze, lower the worker number to avoid "
                "potential slowness/freeze if necessary.",
                stacklevel=2,
            )

    # Resuming (beyond PyTorch: torchdata's StatefulDataLoader and Grain have it).

    def state_dict(self) -> dict:
        """Where the current epoch stands: the random states its order was drawn from and
        how many batches it has given. ``load_state_dict`` of it makes the next iterator
        give the remaining batches of that epoch, the same ones.

        Taken between epochs (no iterator, or the last one exhausted), it describes the
        next epoch from its start."""
        it = self._last_iterator() if self._last_iterator is not None else None
        if it is not None and not it._finished and it._start_state is not None:
            return {
                "_version": 1,
                "rng": it._start_state,
                "num_yielded": it._num_yielded,
                "dataset_kind": self._dataset_kind,
            }
        if self._resume_state is not None:
            return dict(self._resume_state)
        return {
            "_version": 1,
            "rng": _capture_rng(self),
            "num_yielded": 0,
            "dataset_kind": self._dataset_kind,
        }

    def load_state_dict(self, state_dict: dict) -> None:
        """Makes the next iterator resume from `state_dict` (``state_dict()``'s): the
        random draws that ordered that epoch are repeated and the batches it had given
        are skipped (by index for map-style datasets, without reading them; by reading
        and dropping them for iterable datasets)."""
        if state_dict.get("_version") != 1:
            raise ValueError("DataLoader.load_state_dict: not a state_dict of a DataLoader")
        if state_dict.get("dataset_kind", self._dataset_kind) != self._dataset_kind:
            raise ValueError(
                "DataLoader.load_state_dict: the state is of a loader of another kind of dataset"
            )
        self._resume_state = dict(state_dict)


# The random generators an epoch's order depends on: the loader's, its samplers', and the
# global one (used when they have none).


def _generators(loader) -> list:
    found = []
    for g in (
        loader.generator,
        getattr(loader.sampler, "generator", None),
        getattr(getattr(loader.batch_sampler, "sampler", None), "generator", None),
        getattr(loader.batch_sampler, "generator", None),
    ):
        if isinstance(g, flambeau.Generator) and all(g is not h for h in found):
            found.append(g)
    return found


def _capture_rng(loader) -> dict:
    return {
        "global": flambeau.get_rng_state(),
        "generators": [g.get_state() for g in _generators(loader)],
    }


class _BaseDataLoaderIter:
    def __init__(self, loader: DataLoader) -> None:
        self._dataset = loader.dataset
        self._dataset_kind = loader._dataset_kind
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        acc = _accelerator()
        if loader.pin_memory and loader.pin_memory_device:
            warnings.warn(
                "pin_memory_device is deprecated, the current accelerator will be used as the "
                f"device,ignore pin_memory_device='{loader.pin_memory_device}'.",
                stacklevel=3,
            )
        if loader.pin_memory and acc is None:
            warnings.warn(
                "'pin_memory' argument is set as true but no accelerator is found, "
                "then device pinned memory won't be used.",
                stacklevel=3,
            )
        self._pin_memory = bool(loader.pin_memory) and acc is not None
        self._pin_memory_device = acc.type if self._pin_memory else None
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._persistent_workers = loader.persistent_workers
        self._finished = False
        self._start_state = None
        self._num_yielded = 0
        self._skip_fetch = 0
        self._begin_epoch(loader, first=True)

    def _begin_epoch(self, loader, first: bool) -> None:
        """The epoch's sampler iterator (and, the first time, the workers' base seed),
        resuming from a loaded state_dict when there is one."""
        resume, loader._resume_state = loader._resume_state, None
        self._finished = False
        self._num_yielded = 0
        self._skip_fetch = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        if resume is None:
            self._start_state = _capture_rng(loader)
            self._sampler_iter = iter(self._index_sampler)
            if first:
                self._base_seed = int(
                    flambeau.empty((), dtype=flambeau.int64).random_(generator=loader.generator)
                )
            return
        # Repeat the epoch's draws from its starting states. The global generator is the
        # program's: it is put back afterwards (the samplers draw from it only when their
        # iterator starts, which happens here).
        rng = resume["rng"]
        self._start_state = rng
        saved_global = flambeau.get_rng_state()
        flambeau.set_rng_state(rng["global"])
        try:
            for g, state in zip(_generators(loader), rng["generators"]):
                g.set_state(state)
            self._sampler_iter = iter(self._index_sampler)
            if first:
                self._base_seed = int(
                    flambeau.empty((), dtype=flambeau.int64).random_(generator=loader.generator)
                )
            n = int(resume.get("num_yielded", 0))
            if self._dataset_kind == _DatasetKind.Map:
                for _ in itertools.islice(self._sampler_iter, n):
                    pass
            else:
                self._skip_fetch = n
            try:
                head = next(self._sampler_iter)
            except StopIteration:
                pass
            else:
                self._sampler_iter = itertools.chain([head], self._sampler_iter)
        finally:
            flambeau.set_rng_state(saved_global)
        self._num_yielded = n

    def __iter__(self):
        return self

    def _reset(self, loader, first_iter: bool = False) -> None:
        self._begin_epoch(loader, first=first_iter)

    def _next_index(self):
        return next(self._sampler_iter)

    def _next_data(self):
        raise NotImplementedError

    def __next__(self):
        try:
            while self._skip_fetch > 0:
                self._next_data()  # resuming an iterable dataset: read and drop
                self._skip_fetch -= 1
            data = self._next_data()
        except StopIteration:
            self._finished = True
            raise
        self._num_yielded += 1
        if (
            self._dataset_kind == _DatasetKind.Iterable
            and self._IterableDataset_len_called is not None
            and self._num_yielded > self._IterableDataset_len_called
        ):
            warn_msg = (
                f"Length of IterableDataset {self._dataset} was reported to be "
                f"{self._IterableDataset_len_called}(when accessing len(dataloader)), but "
                f"{self._num_yielded} samples have been fetched. "
            )
            if self._num_workers > 0:
                warn_msg += (
                    "For multiprocessing data-loading, this could be caused by not properly "
                    "configuring the IterableDataset replica at each worker. Please see "
                    "the documentation of IterableDataset for examples."
                )
            warnings.warn(warn_msg, stacklevel=2)
        return data

    def __len__(self) -> int:
        return len(self._index_sampler)

    def __getstate__(self):
        raise NotImplementedError(f"{self.__class__.__name__} cannot be pickled")


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader) -> None:
        super().__init__(loader)
        if self._timeout != 0:
            raise AssertionError("_SingleProcessDataLoaderIter requires timeout == 0")
        if self._num_workers != 0:
            raise AssertionError("_SingleProcessDataLoaderIter requires num_workers == 0")
        self._dataset_fetcher = _DatasetKind.create_fetcher(
            self._dataset_kind,
            self._dataset,
            self._auto_collation,
            self._collate_fn,
            self._drop_last,
        )

    def _next_data(self):
        index = self._next_index()
        data = self._dataset_fetcher.fetch(index)
        if self._pin_memory:
            data = _utils.pin_memory.pin_memory(data, self._pin_memory_device)
        return data


# ----------------------------------------------------------------------------------------
# Worker processes


class _Lease:
    """Keeps a ring slot out of reuse while a storage views it: dies with the storage."""

    __slots__ = ("ring", "slot")

    def __init__(self, ring, slot) -> None:
        self.ring = ring
        self.slot = slot

    def __del__(self):
        self.ring.returned.append(self.slot)


class _ParentRing:
    """The main process's side of a worker's ring: a storage per slot, on demand."""

    def __init__(self, storage, slot_bytes: int, nslots: int, returned: deque) -> None:
        self.storage = storage  # keeps the memory mapped while a slot is leased
        view = storage._owner().view
        self.views = [view[i * slot_bytes : (i + 1) * slot_bytes] for i in range(nslots)]
        self.returned = returned

    def lease(self, slot: int):
        return flambeau.UntypedStorage._from_buffer(self.views[slot], _Lease(self, slot), True)


class _ResultUnpickler(pickle.Unpickler):
    """Unpickles a worker's result; persistent ids are tensors in a ring slot."""

    def __init__(self, file, ring) -> None:
        super().__init__(file)
        self.ring = ring
        self.slot_storage = None

    def persistent_load(self, pid):
        slot, dtype, offset, shape, stride = pid
        storage = self.slot_storage
        if storage is None:
            storage = self.slot_storage = self.ring.lease(slot)
        return storage._view(DTYPES[dtype], offset, list(shape), list(stride))


# Iterators with live workers, ended at interpreter exit.
_live_iterators: weakref.WeakSet = weakref.WeakSet()


@atexit.register
def _end_all_workers() -> None:
    for it in list(_live_iterators):
        try:
            it._shutdown_workers()
        except Exception:
            pass


def _context_of(ctx):
    """flambeau.multiprocessing's context for a start method or context: its Pipes carry
    shared-memory descriptors."""
    if ctx is None:
        return _mp.get_context()
    if isinstance(ctx, str):
        return _mp.get_context(ctx)
    if isinstance(ctx, _mp.context._TensorChannels):
        return ctx
    return _mp.get_context(ctx.get_start_method())


def _preload_forkserver(ctx) -> None:
    """Forkserver workers start from a server that imported flambeau once (unless the
    program chose its own preload list, or the server runs already)."""
    if ctx.get_start_method() != "forkserver":
        return
    from multiprocessing import forkserver

    server = forkserver._forkserver
    if getattr(server, "_forkserver_pid", None) is None and server._preload_modules == ["__main__"]:
        ctx.set_forkserver_preload(["__main__", "flambeau", "flambeau.utils.data"])


class _WorkerDied(Exception):
    pass


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    """Iterates over the loader with worker processes (docs/design/data-loading.rst)."""

    def __init__(self, loader) -> None:
        super().__init__(loader)
        self._shutdown = True  # until the workers exist
        self._pid = os.getpid()
        self._prefetch_factor = max(1, loader.prefetch_factor)
        self._in_order = loader.in_order
        ctx = _context_of(loader.multiprocessing_context)
        _preload_forkserver(ctx)
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
        self._pollers = []  # one per connection: is a result waiting? (no syscall setup)
        for c in self._conns:
            p = select.poll()
            p.register(c.fileno(), select.POLLIN)
            self._pollers.append(p)
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
                buf = ForkingPickler.dumps(msg)
            conn.send_bytes(buf)  # with the descriptors of any tensor among the indices
        except OSError:
            self._raise_dead(worker_id)

    def _try_put_index(self) -> None:
        max_tasks = self._prefetch_factor * self._num_workers
        if self._tasks_outstanding >= max_tasks:
            return
        active = sum(self._workers_status)
        for _ in range(self._num_workers):
            worker_id = next(self._worker_cycle)
            if self._workers_status[worker_id]:
                if self._in_order:
                    break
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
            data = _utils.pin_memory.pin_memory(data, self._pin_memory_device)
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
        ready = [i for i, p in enumerate(self._pollers) if p.poll(0)]
        if not ready:
            ready = self._wait(None)
        i = ready[0]
        task_id, data = self._recv(i)
        return task_id, data, i

    def _get_data(self, worker_id: int):
        if not self._pollers[worker_id].poll(0):
            self._wait(worker_id)
        return self._recv(worker_id)

    def _recv(self, worker_id: int):
        try:
            buf = self._conns[worker_id].recv_message()
        except (EOFError, OSError):
            self._raise_dead(worker_id)
        up = _ResultUnpickler(io.BytesIO(buf), self._rings[worker_id])
        task_id, data, ring = up.load()
        if ring is not None:
            storage, slot_bytes, nslots = ring
            self._rings[worker_id] = _ParentRing(
                storage, slot_bytes, nslots, self._returned[worker_id]
            )
        return task_id, data

    def _wait(self, worker_id):
        """Blocks until `worker_id`'s connection (any worker's, when None) has data.
        A worker's exit ends the wait at once (its sentinel); `timeout` bounds it."""
        poller = select.poll()
        conns = {}
        for i, c in enumerate(self._conns):
            if (worker_id is None or i == worker_id) and not c.closed:
                poller.register(c.fileno(), select.POLLIN)
                conns[c.fileno()] = i
        for fd, i in self._sentinels.items():
            if self._workers[i] is not None:
                poller.register(fd, select.POLLIN)
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
                    if self._conns[i].poll() and (worker_id is None or i == worker_id):
                        return [i]
                    self._raise_dead(i)
            if deadline is not None and time.monotonic() >= deadline:
                self._raise_timeout(worker_id)

    def _raise_dead(self, worker_id: int):
        w = self._workers[worker_id]
        w.join(timeout=1.0)
        code = w.exitcode
        in_flight = sum(
            1 for v in self._task_info.values() if not isinstance(v, tuple) and v == worker_id
        )
        if code is not None and code < 0:
            sig = -code
            try:
                name = signal.strsignal(sig) or f"signal {sig}"
            except ValueError:
                name = f"signal {sig}"
            msg = (
                f"DataLoader worker (pid {w.pid}) is killed by signal: {name}. "
                f"(worker {worker_id}, signal {sig}, {in_flight} batch(es) in flight)"
            )
            if sig == signal.SIGBUS:
                msg += (
                    " It is possible that dataloader's workers are out of shared memory. "
                    "Please try to raise your shared memory limit (flambeau's shared memory "
                    "is memfd, counted against the memory limit of the process's cgroup, "
                    "not the size of /dev/shm)."
                )
        elif code is not None:
            msg = (
                f"DataLoader worker (pid(s) {w.pid}) exited unexpectedly with exit code "
                f"{code} (worker {worker_id}, {in_flight} batch(es) in flight)."
            )
        else:
            msg = (
                f"DataLoader worker (pid(s) {w.pid}) exited unexpectedly "
                f"(worker {worker_id} closed its connection)"
            )
        self._shutdown_workers()
        raise RuntimeError(msg)

    def _raise_timeout(self, worker_id):
        stacks = []
        targets = [worker_id] if worker_id is not None else range(self._num_workers)
        for i in targets:
            if self._workers_num_tasks[i] > 0:
                stack = _dump_stack(self._workers[i].pid)
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
            for c in self._conns:
                c.close()
        finally:
            _live_iterators.discard(self)

    def __del__(self):
        try:
            self._shutdown_workers()
        except Exception:
            pass


def _dump_stack(pid: int, wait: float = 1.0) -> str:
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
