"""The worker process's side of the DataLoader (see docs/design/data-loading.rst).

A worker takes its tasks from its channel (channel.py: records in shared memory, counted
by a semaphore; what does not fit a record comes on its connection, a
flambeau.multiprocessing Pipe whose messages carry shared-memory descriptors), fetches
and collates each batch straight into a slot of its shared-memory ring (ring.py), and
answers with a result record (the slot and the batch's layout id) or, for anything
else, a message on the connection. It is seeded from the loader's base seed plus its
id, ignores SIGINT (the main process ends it), and exits when its channel is marked
done, the connection is closed, or the main process is gone.
"""

from __future__ import annotations

import os
import random
import signal
import socket
import struct
import sys
from dataclasses import dataclass
from multiprocessing.reduction import ForkingPickler

import flambeau
from flambeau.multiprocessing.connection import MessageReader
from flambeau.utils.data._utils import ExceptionWrapper
from flambeau.utils.data._utils import collate as _collate
from flambeau.utils.data._utils.channel import FAST, RAW, RESUME, RESUMED, SOCKET
from flambeau.utils.data._utils.failures import register_stack_file, unregister_stack_file
from flambeau.utils.data._utils.fetch import _DatasetKind
from flambeau.utils.data._utils.ring import _SlotWriter, encode_result
from flambeau.utils.data.sampler import _int64_tensor_over

__all__ = ["WorkerInfo", "get_worker_info"]

# Messages on the connection from the main process, each announced by a task record
# of kind SOCKET: (_TASK, task id, indices, freed slots) or (_RESUME, freed slots),
# pickled; or a raw task that did not fit a record: _RAW_HEAD (the marker _RAW_TASK, the
# number of freed slots, the task id), the freed slots as int64, then the batch's
# indices as native int64 bytes.
_TASK = 0
_RESUME = 1
_RAW_TASK = 0x49  # a pickle starts with 0x80
_RAW_HEAD = struct.Struct("<BxxxIq")  # 16 bytes: the indices that follow stay aligned


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
    channel,
    auto_collation,
    collate_fn,
    drop_last,
    base_seed,
    init_fn,
    worker_id,
    num_workers,
    persistent_workers,
    nslots,
) -> None:
    # Ctrl-C reaches the whole process group: the main process handles it and ends the
    # workers, which must not die half-way through a message.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    stack_fd = register_stack_file()
    start_ppid = os.getppid()  # the main process, or the forkserver's server

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

        reader = MessageReader(conn)  # the tasks that do not fit a record (channel.py)
        takes_tensors = getattr(fetcher, "takes_index_tensors", False)
        acquire = channel.tasks.acquire
        iteration_end = False
        while True:
            if not acquire(True, 1.0):
                if _parent_gone(reader.sock, start_ppid):
                    break
                continue
            if channel.done:
                break  # shutdown: what is queued is dropped
            kind, freed, task_id, raw = channel.take_task()
            if kind == SOCKET:
                try:
                    msg = _read_message(reader, takes_tensors)
                except (EOFError, OSError):
                    break
                if msg is None:
                    break
                if msg[0] == _RESUME:
                    kind, freed = RESUME, msg[1]
                else:
                    _, task_id, index, freed = msg
            elif kind == RAW:
                index = _int64_tensor_over(raw)
                if not takes_tensors:
                    index = index.tolist()
            if kind == RESUME:
                # Persistent workers: a new epoch, a new fetcher.
                writer.free.extend(freed)
                iteration_end = False
                fetcher = _DatasetKind.create_fetcher(
                    dataset_kind, dataset, auto_collation, collate_fn, drop_last
                )
                takes_tensors = getattr(fetcher, "takes_index_tensors", False)
                channel.post_result(RESUMED, 0, 0, -1)
                continue
            writer.free.extend(freed)
            if iteration_end:
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
            del index
            ring = writer.end()
            try:
                out = encode_result(writer, (task_id, data, ring))
            except Exception:
                data = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
                out = encode_result(writer, (task_id, data, ring))
            del data
            if not _post(channel, conn, writer, task_id, out):
                break  # the main process closed the connection
            del out
    except KeyboardInterrupt:
        pass
    finally:
        unregister_stack_file(stack_fd)


def _post(channel, conn, writer, task_id: int, out) -> bool:
    """Hands a result over: a record when it is a batch of a known layout (`out` is the
    layout's id), else a record announcing a message, then the message (its bytes)."""
    if out.__class__ is int:
        channel.post_result(FAST, out, writer.slot, task_id)
        return True
    channel.post_result(SOCKET, 0, 0, task_id)
    try:
        conn.send_bytes(out)
    except OSError:
        return False
    return True


def _parent_gone(sock, start_ppid: int) -> bool:
    """Whether the main process is gone: this process was reparented (fork, spawn), or
    the other end of the connection is closed (forkserver: the parent is its server)."""
    if os.getppid() != start_ppid:
        return True
    try:
        return sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def _read_message(reader: MessageReader, takes_tensors: bool):
    """The next message from the main process (blocking), a raw task decoded: its
    indices an int64 tensor when the fetcher gathers with one, else a list."""
    offset, size = reader.next_message()
    buf = reader.buf
    if size >= _RAW_HEAD.size and buf[offset] == _RAW_TASK:
        _, nfreed, task_id = _RAW_HEAD.unpack_from(buf, offset)
        pos = offset + _RAW_HEAD.size
        freed = struct.unpack_from(f"<{nfreed}q", buf, pos) if nfreed else ()
        pos += 8 * nfreed
        end = offset + size
        if end == pos:
            index = []
        else:
            # A copy: the reader's buffer is reused.
            index = _int64_tensor_over(buf[pos:end])
            if not takes_tensors:
                index = index.tolist()
        return (_TASK, task_id, index, freed)
    with memoryview(buf) as view:
        data = bytes(view[offset : offset + size])
    try:
        return reader.loads(ForkingPickler.loads, data)
    finally:
        reader.release_descriptors()
