"""The worker process's side of the DataLoader (see docs/design/data-loading.rst).

A worker reads tasks from its own connection (a flambeau.multiprocessing Pipe, so that
shared-memory descriptors travel with messages), fetches and collates each batch straight
into a slot of its shared-memory ring (ring.py), and sends back on the same connection
the slot number and the tensors' shapes. It is seeded from the loader's base seed plus
its id, ignores SIGINT (the main process ends it), and exits when the main process
sends None, closes the connection or is gone.
"""

from __future__ import annotations

import os
import random
import select
import signal
import sys
from dataclasses import dataclass

import flambeau
from flambeau.utils.data._utils import ExceptionWrapper
from flambeau.utils.data._utils import collate as _collate
from flambeau.utils.data._utils.failures import register_stack_file, unregister_stack_file
from flambeau.utils.data._utils.fetch import _DatasetKind
from flambeau.utils.data._utils.ring import _SlotWriter, dumps_result

__all__ = ["WorkerInfo", "get_worker_info"]

# Messages from the main process: (_TASK, task id, indices, freed slots),
# (_RESUME, freed slots) or None (exit).
_TASK = 0
_RESUME = 1


@dataclass(frozen=True)
class WorkerInfo:
    """What ``get_worker_info()`` returns in a worker: its `id`, the `num_workers`, its
    `seed` (the loader's base seed + id) and its copy of the `dataset`.

    >>> from flambeau.utils.data import WorkerInfo, get_worker_info
    >>> print(get_worker_info())  # None in the main process; a WorkerInfo in a worker
    None
    >>> info = WorkerInfo(id=1, num_workers=4, seed=43, dataset=None)
    >>> info.id, info.num_workers, info.seed
    (1, 4, 43)
    """

    id: int
    num_workers: int
    seed: int
    dataset: object
    rng: object | None = None
    worker_method: str | None = "multiprocessing"


_worker_info: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """In a DataLoader worker process: its WorkerInfo; in the main process: None.

    Use it in a dataset's ``__iter__`` or a ``worker_init_fn`` to give each worker its
    own part of an IterableDataset.

    >>> from flambeau.utils.data import DataLoader, IterableDataset, get_worker_info
    >>> class Shards(IterableDataset):
    ...     def __iter__(self):
    ...         info = get_worker_info()  # None in the main process
    ...         start, step = (0, 1) if info is None else (info.id, info.num_workers)
    ...         return iter(range(start, 6, step))
    >>> list(DataLoader(Shards(), batch_size=3))
    [tensor([0, 1, 2]), tensor([3, 4, 5])]
    """
    return _worker_info


@dataclass(frozen=True)
class _IterableDatasetStopIteration:
    """A worker's IterableDataset is exhausted."""

    worker_id: int


@dataclass(frozen=True)
class _ResumeIteration:
    """Persistent workers: a new epoch starts (the worker re-creates its fetcher)."""

    seed: int | None = None


def _generate_state(base_seed: int, worker_id: int) -> list[int]:
    """NumPy's seed for a worker: PyTorch's function of the base seed and worker id (a
    SeedSequence-style hash), so that numpy.random in workers matches PyTorch's."""
    init_a, mult_a, init_b, mult_b = 0x43B0D7E5, 0x931E8875, 0x8B51F9DD, 0x58F38DED
    mix_mult_l, mix_mult_r, xshift, mask32 = 0xCA01F9DD, 0x4973F715, 16, 0xFFFFFFFF
    entropy = [worker_id, base_seed & mask32, base_seed >> 32, 0]
    pool = [0] * 4
    hash_const_a = init_a

    def hash_(value: int) -> int:
        nonlocal hash_const_a
        value = (value ^ hash_const_a) & mask32
        hash_const_a = (hash_const_a * mult_a) & mask32
        value = (value * hash_const_a) & mask32
        return (value ^ (value >> xshift)) & mask32

    def mix(x: int, y: int) -> int:
        result = ((mix_mult_l * x) & mask32) - ((mix_mult_r * y) & mask32) & mask32
        return (result ^ (result >> xshift)) & mask32

    for i in range(4):
        pool[i] = hash_(entropy[i])
    for i_src in range(4):
        for i_dst in range(4):
            if i_src != i_dst:
                pool[i_dst] = mix(pool[i_dst], hash_(pool[i_src]))
    hash_const_b = init_b
    state = []
    for i_dst in range(4):
        data_val = (pool[i_dst] ^ hash_const_b) & mask32
        hash_const_b = (hash_const_b * mult_b) & mask32
        data_val = (data_val * hash_const_b) & mask32
        state.append((data_val ^ (data_val >> xshift)) & mask32)
    return state


def _worker_loop(
    dataset_kind,
    dataset,
    conn,
    done_event,
    auto_collation,
    collate_fn,
    drop_last,
    base_seed,
    init_fn,
    worker_id,
    num_workers,
    persistent_workers,
    nslots,
    parent_pid,
) -> None:
    # Ctrl-C reaches the whole process group: the main process handles it and ends the
    # workers, which must not die half-way through a message.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    stack_fd = register_stack_file()

    global _worker_info
    try:
        flambeau.set_num_threads(1)
        seed = base_seed + worker_id
        random.seed(seed)
        flambeau.manual_seed(seed)
        if "numpy" in sys.modules:
            import numpy as np

            np.random.seed(_generate_state(base_seed, worker_id))

        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
        writer = _SlotWriter(nslots)
        _collate._out_allocator = writer.alloc

        init_exception = None
        fetcher = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = _DatasetKind.create_fetcher(
                dataset_kind, dataset, auto_collation, collate_fn, drop_last
            )
        except Exception:
            init_exception = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")

        poller = select.poll()
        poller.register(conn.fileno(), select.POLLIN)
        iteration_end = False
        while True:
            if not poller.poll(1000):
                if os.getppid() != parent_pid:
                    break  # the main process is gone
                continue
            try:
                msg = conn.recv()
            except (EOFError, OSError):
                break
            if msg is None:
                break
            if msg[0] == _RESUME:
                writer.free.extend(msg[1])
                iteration_end = False
                fetcher = _DatasetKind.create_fetcher(
                    dataset_kind, dataset, auto_collation, collate_fn, drop_last
                )
                conn.send_bytes(dumps_result(writer, (-1, _ResumeIteration(), None)))
                continue
            _, task_id, index, freed = msg
            writer.free.extend(freed)
            if done_event.is_set() or iteration_end:
                continue
            writer.begin()
            if init_exception is not None:
                data = init_exception
                init_exception = None
            else:
                try:
                    data = fetcher.fetch(index)
                except Exception as e:
                    if isinstance(e, StopIteration) and dataset_kind == _DatasetKind.Iterable:
                        data = _IterableDatasetStopIteration(worker_id)
                        iteration_end = True
                    else:
                        data = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
            ring = writer.end()
            try:
                payload = dumps_result(writer, (task_id, data, ring))
            except Exception:
                data = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
                payload = dumps_result(writer, (task_id, data, ring))
            del data
            try:
                conn.send_bytes(payload)
            except OSError:
                break  # the main process closed the connection
            del payload
    except KeyboardInterrupt:
        pass
    finally:
        unregister_stack_file(stack_fd)
