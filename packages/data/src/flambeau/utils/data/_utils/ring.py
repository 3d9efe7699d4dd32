"""The shared-memory ring a worker hands its batches over through, both ends of it.

After its first batch a worker makes a *ring*: one shared storage of `nslots` slots,
each sized from that batch, and sends it to the main process once. From then on
collation (``default_collate``'s stack, or the ``index_select`` of a TensorDataset's
batched fetch) writes into a free slot (`_SlotWriter.alloc`), and what crosses is the
slot number and each tensor's dtype, offset, shape and strides: a layout id in a result
record of the worker's channel (channel.py; `encode_result`), or a persistent id in a
pickle (`_ResultPickler`). The main process views the slot as the batch's storage
(`build`, `_ResultUnpickler`); when the last tensor viewing it dies, the slot's number
is queued (`_ParentRing.lease`) and goes back to the worker with its next task. A batch that does
not fit, or finds no free slot, goes to fresh shared memory as any tensor sent through
flambeau.multiprocessing does, so the worker never waits.
"""

from __future__ import annotations

import io
import pickle
import struct
from collections import deque
from multiprocessing.reduction import ForkingPickler

import flambeau
from flambeau import _C

_ALIGN = 64
# dtypes by number in the messages of the ring (the same table in every process). Read
# from the module's dict: a missing name would go through flambeau's module __getattr__,
# which looks for backend plugins (importlib.metadata, ~30 ms of a worker's start).
_DTYPE_NAMES = (
    "float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8",
    "uint8", "bool", "complex64", "complex128", "uint16", "uint32", "uint64",
)  # fmt: skip
DTYPES = tuple(vars(flambeau)[n] for n in _DTYPE_NAMES if n in vars(flambeau))
_from_buffer = flambeau.UntypedStorage._from_buffer
_DTYPE_CODE = {d: i for i, d in enumerate(DTYPES)}


def _round_up(n: int, to: int) -> int:
    return (n + to - 1) // to * to


def _contiguous_strides(shape) -> list[int]:
    strides, acc = [], 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= max(int(s), 1)
    return strides[::-1]


# The worker's end.


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
        self.layout_ids: dict[bytes, int] = {}  # fast-path layouts sent so far -> their ids

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
        return self.persistent_id_of(self.writer, obj)

    @staticmethod
    def persistent_id_of(w: _SlotWriter, obj):
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


# A batch that is a list or tuple of tensors, all in the current slot (the common case),
# goes without pickle, described by its *layout*: the container, then per tensor its
# dtype, rank, offset, shape and strides. The first time a worker uses a layout it sends
# it on its connection, after _FAST_HEAD (the marker _FAST, the layout's id, the slot,
# the task id); the main process parses it and keeps it by its id (per worker). From
# then on a batch of that layout is a result record of the worker's channel (channel.py:
# the id and the slot), and costs the main process a lease and a view per tensor. Past
# _MAX_LAYOUTS distinct layouts the others go on the connection each time, with the id
# _NO_ID. Everything else is a pickle (its first byte is 0x80).
_FAST = 0x46
_FAST_HEAD = struct.Struct("<BxHiq")
_TENSOR_HEAD = struct.Struct("<BBq")
_MAX_LAYOUTS = 256
_NO_ID = 0xFFFF


def _fast_layout(writer: _SlotWriter, data) -> bytes | None:
    cls = data.__class__
    if (cls is not list and cls is not tuple) or not data or len(data) > 64:
        return None
    parts = [b"\x01" if cls is tuple else b"\x00"]
    for t in data:
        if t.__class__ is not flambeau.Tensor or t.requires_grad:
            return None
        pid = _ResultPickler.persistent_id_of(writer, t)
        if pid is None:
            return None
        _, code, offset, shape, stride = pid
        nd = len(shape)
        parts.append(_TENSOR_HEAD.pack(code, nd, offset))
        parts.append(struct.pack(f"<{2 * nd}q", *shape, *stride))
    return b"".join(parts)


def encode_result(writer: _SlotWriter, obj) -> int | bytes:
    """A worker's message `obj` = (task id, data, ring): the id of its layout when it is
    a batch in the current slot (`writer.slot`) whose layout the main process knows
    (it goes as a result record), else its bytes for the connection (a layout's first
    use, or a pickle with the tensors in the slot by reference)."""
    task_id, data, ring = obj
    if ring is None and writer.slot >= 0:
        layout = _fast_layout(writer, data)
        if layout is not None:
            ids = writer.layout_ids
            lid = ids.get(layout)
            if lid is not None:
                return lid
            if len(ids) < _MAX_LAYOUTS:
                lid = ids[layout] = len(ids)
            else:
                lid = _NO_ID
            return _FAST_HEAD.pack(_FAST, lid, writer.slot, task_id) + layout
    buf = io.BytesIO()
    p = _ResultPickler(buf, 4)
    p.writer = writer
    p.dump(obj)
    return buf.getvalue()


# The main process's end.


class _ParentRing:
    """The main process's side of a worker's ring: a storage per slot, on demand."""

    def __init__(self, storage, slot_bytes: int, nslots: int, returned: deque) -> None:
        self.storage = storage  # keeps the memory mapped while a slot is leased
        view = storage._owner().view
        self.views = [view[i * slot_bytes : (i + 1) * slot_bytes] for i in range(nslots)]
        self.returned = returned

    def lease(self, slot: int):
        """A storage over the slot, which keeps the slot out of reuse while it lives: its
        owner gives the slot back when the storage dies (from C++: a finalizer in
        Python would lose a Ctrl-C arriving while it ran)."""
        lease = _C._ReleaseCall(self.returned.append, slot, self)
        return _from_buffer(self.views[slot], lease, True)


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


def loads_result(buf, ring):
    """A worker's message from `buf`; tensors in a slot of `ring` (a `_ParentRing`) view it."""
    return _ResultUnpickler(io.BytesIO(buf), ring).load()


class _Layout:
    """A parsed fast-path layout: the container, and each tensor's view arguments as
    columns (for ``map``)."""

    __slots__ = ("is_tuple", "dtypes", "offsets", "shapes", "strides")

    def __init__(self, layout) -> None:
        self.is_tuple = layout[0] == 1
        dtypes, offsets, shapes, strides = [], [], [], []
        pos = 1
        while pos < len(layout):
            code, nd, offset = _TENSOR_HEAD.unpack_from(layout, pos)
            pos += _TENSOR_HEAD.size
            dims = struct.unpack_from(f"<{2 * nd}q", layout, pos)
            pos += 16 * nd
            dtypes.append(DTYPES[code])
            offsets.append(offset)
            shapes.append(dims[:nd])
            strides.append(dims[nd:])
        self.dtypes, self.offsets = tuple(dtypes), tuple(offsets)
        self.shapes, self.strides = tuple(shapes), tuple(strides)


def build(ring: _ParentRing, slot: int, layout: _Layout):
    """The batch of `layout` in `slot` of `ring`: a lease, and a view per tensor."""
    storage = ring.lease(slot)
    out = list(map(storage._view, layout.dtypes, layout.offsets, layout.shapes, layout.strides))
    return tuple(out) if layout.is_tuple else out


def loads_fast(buf, offset: int, size: int, ring, layouts: dict):
    """(task id, batch) of a fast-path message at buf[offset:offset + size] (a layout's
    first use), keeping the layout by its id in `layouts`."""
    _, lid, slot, task_id = _FAST_HEAD.unpack_from(buf, offset)
    layout = _Layout(bytes(buf[offset + _FAST_HEAD.size : offset + size]))
    if lid != _NO_ID:
        layouts[lid] = layout
    return task_id, build(ring, slot, layout)
