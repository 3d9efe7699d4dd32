"""The worker process's side of the DataLoader (see docs/design/data-loading.rst).

A worker reads tasks from its own connection (a flambeau.multiprocessing Pipe, so that
shared-memory descriptors travel with messages), fetches and collates each batch, and
sends it back on the same connection.

Batches are written straight into shared memory. After its first batch a worker makes a
*ring*: one shared storage of `nslots` slots, each sized from that batch, and sends it to
the main process once. From then on collation (``default_collate``'s stack, or the
``index_select`` of a TensorDataset's batched fetch) writes into a free slot, and the
message carries only the slot number and each tensor's dtype, offset, shape and strides
(a persistent id in the pickle). The main process views the slot as the batch's storage;
when the last tensor viewing it dies, the slot's number goes back to the worker with its
next task. A batch that does not fit, or finds no free slot, goes to fresh shared memory
as any tensor sent through flambeau.multiprocessing does, so the worker never waits.
"""

from __future__ import annotations

import faulthandler
import io
import os
import random
import select
import signal
import sys
from dataclasses import dataclass
from multiprocessing.reduction import ForkingPickler

import flambeau
from flambeau.utils.data._utils import ExceptionWrapper
from flambeau.utils.data._utils import collate as _collate

__all__ = ["WorkerInfo", "get_worker_info"]

# Messages from the main process: (_TASK, task id, indices, freed slots),
# (_RESUME, freed slots) or None (exit).
_TASK = 0
_RESUME = 1
_ALIGN = 64
# dtypes by number in the messages of the ring (the same table in every process).
_DTYPE_NAMES = (
    "float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8",
    "uint8", "bool", "complex64", "complex128", "uint16", "uint32", "uint64",
)  # fmt: skip
DTYPES = tuple(getattr(flambeau, n) for n in _DTYPE_NAMES if hasattr(flambeau, n))
_DTYPE_CODE = {d: i for i, d in enumerate(DTYPES)}
# Name of the memfd a worker's faulthandler writes its stack to (on SIGUSR1).
STACK_FILE_NAME = "flambeau-dataloader-worker-stack"


@dataclass(frozen=True)
class WorkerInfo:
    """What ``get_worker_info()`` returns in a worker: its `id`, the `num_workers`, its
    `seed` (the loader's base seed + id) and its copy of the `dataset`."""

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
    own part of an IterableDataset."""
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


def _round_up(n: int, to: int) -> int:
    return (n + to - 1) // to * to


def _contiguous_strides(shape) -> list[int]:
    strides, acc = [], 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= max(int(s), 1)
    return strides[::-1]


class _SlotWriter:
    """The worker's ring: where collation writes each batch (module docstring)."""

    def __init__(self, nslots: int) -> None:
        self.nslots = nslots
        self.ring = None
        self.ring_ptr = 0
        self.slot_bytes = 0
        self.free: list[int] = []
        self.slot = -1  # the slot of the batch being made, or -1
        self.used = 0  # bytes of it used so far
        self.fresh = 0  # bytes the batch took outside the ring

    def begin(self) -> None:
        self.used = self.fresh = 0
        self.slot = self.free.pop() if self.free else -1

    def alloc(self, dtype, shape):
        shape = [int(s) for s in shape]
        numel = 1
        for s in shape:
            numel *= s
        itemsize = dtype.itemsize
        nbytes = numel * itemsize
        strides = _contiguous_strides(shape)
        if self.slot >= 0:
            n = _round_up(nbytes, _ALIGN)
            if self.used + n <= self.slot_bytes:
                start = self.slot * self.slot_bytes + self.used
                self.used += n
                return self.ring._view(dtype, start // itemsize, shape, strides)
        self.fresh += _round_up(nbytes, _ALIGN)
        storage = flambeau.UntypedStorage._new_shared(nbytes)
        return storage._view(dtype, 0, shape, strides)

    def end(self):
        """After a batch: the ring to send (once, after the first batch), or None."""
        if self.slot >= 0 and self.used == 0:
            self.free.append(self.slot)  # nothing went there
            self.slot = -1
        if self.ring is not None or self.fresh == 0 or self.nslots == 0:
            return None
        # Slots sized from the first batch, with room for batches a little larger.
        self.slot_bytes = _round_up(self.fresh + self.fresh // 4, 4096)
        self.ring = flambeau.UntypedStorage._new_shared(self.slot_bytes * self.nslots)
        self.ring_ptr = self.ring.data_ptr()
        self.free = list(range(self.nslots - 1, -1, -1))
        return (self.ring, self.slot_bytes, self.nslots)


class _ResultPickler(ForkingPickler):
    """Pickles a result: tensors in the current slot become persistent ids
    ``(slot, dtype, element offset in the slot, shape, strides)``; everything else
    (tensors elsewhere too) as flambeau.multiprocessing pickles it."""

    writer: _SlotWriter

    def persistent_id(self, obj):
        if obj.__class__ is not flambeau.Tensor:
            return None
        w = self.writer
        if w.slot < 0 or obj.requires_grad:
            return None
        if obj.untyped_storage().data_ptr() != w.ring_ptr:
            return None
        code = _DTYPE_CODE.get(obj.dtype)
        if code is None:
            return None
        itemsize = obj.element_size()
        start = w.slot * w.slot_bytes // itemsize
        return (
            w.slot,
            code,
            obj.storage_offset() - start,
            tuple(obj.shape),
            tuple(obj.stride()),
        )


def _dumps(writer: _SlotWriter, obj) -> bytes:
    buf = io.BytesIO()
    p = _ResultPickler(buf, 4)
    p.writer = writer
    p.dump(obj)
    return buf.getbuffer()


def _stack_file() -> int | None:
    """A memfd the worker's faulthandler writes all threads' stacks to on SIGUSR1; the
    main process reads it through /proc when a `timeout` expires."""
    try:
        fd = os.memfd_create(STACK_FILE_NAME, os.MFD_CLOEXEC)
        faulthandler.register(signal.SIGUSR1, file=fd, all_threads=True)
        return fd
    except (AttributeError, OSError, RuntimeError, ValueError):
        return None


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
    stack_fd = _stack_file()
    from flambeau.utils.data.dataloader import _DatasetKind

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
                conn.send_bytes(_dumps(writer, (-1, _ResumeIteration(), None)))
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
                payload = _dumps(writer, (task_id, data, ring))
            except Exception:
                data = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
                payload = _dumps(writer, (task_id, data, ring))
            del data
            try:
                conn.send_bytes(payload)
            except OSError:
                break  # the main process closed the connection
            del payload
    except KeyboardInterrupt:
        pass
    finally:
        if stack_fd is not None:
            faulthandler.unregister(signal.SIGUSR1)
            os.close(stack_fd)
