"""Shared memory for storages: nameless segments, sub-allocated, counted across processes.

``share_memory_()`` moves a storage's bytes here; ``flambeau.multiprocessing`` sends the
segment's file descriptor to other processes, which map it. The design
(docs/design/shared-memory.md) in short:

- A *segment* is a ``memfd_create`` file: it has no name in any file system, so nothing
  can be left behind whichever processes die, SIGKILL included. The kernel frees its
  memory when the last descriptor and mapping of it are gone. Small storages share
  64 MiB segments; a storage of 16 MiB or more gets a segment of its own.
- A *block* is one storage's memory inside a segment, after a 64-byte header whose first
  8 bytes count the processes' references to it: the process that allocated it holds one
  while it uses the block, each message that carries the block adds one (taken over by
  the process that unpickles it), and each process drops its reference when its last
  storage over the block dies. Only the process that created a segment allocates from
  it, and it reuses a block only when the count is back at 0; a reference lost with a
  killed process only keeps that block out of reuse until the segment dies.
- Pages are reserved with ``posix_fallocate`` when a block is allocated, so running out
  of memory raises a RuntimeError naming the size, never a SIGBUS on first touch.
- After ``fork`` the child takes a reference to every block it inherited (its copies of
  the storages will drop one each) and never allocates from its parent's segments.
"""

from __future__ import annotations

import bisect
import collections
import fcntl
import mmap
import os
import threading
import weakref
from _weakref import _remove_dead_weakref

from flambeau import _C

SEGMENT_BYTES = 64 << 20
DEDICATED_BYTES = 16 << 20  # blocks at least this large get a segment of their own
HEADER = 64  # bytes before each block's data; the first 8 hold the reference count
_ALIGN = 64


def _round_up(n: int, to: int) -> int:
    return (n + to - 1) // to * to


def _no_memory(nbytes: int, err: OSError) -> RuntimeError:
    return RuntimeError(
        f"unable to allocate {nbytes} bytes of shared memory: {os.strerror(err.errno)} "
        "(the memory limit of this process or its container was reached)"
    )


class Segment:
    """One memfd, mapped into this process. `key` (device, inode) names it in every
    process that maps it; `fd` stays open so the segment can be sent on."""

    __slots__ = ("fd", "key", "size", "map", "view", "owned", "dedicated", "_free", "__weakref__")

    def __init__(self, fd: int, size: int, owned: bool, dedicated: bool = False):
        st = os.fstat(fd)
        if st.st_size < size:
            raise RuntimeError(f"shared memory segment holds {st.st_size} bytes, not {size}")
        self.fd = fd
        self.key = (st.st_dev, st.st_ino)
        self.size = size
        self.map = mmap.mmap(fd, size, flags=mmap.MAP_SHARED)
        self.view = memoryview(self.map)
        self.owned = owned
        self.dedicated = dedicated  # one block, never reused: it dies with its mappings
        self._free = [[0, size]] if owned else []  # sorted [start, length] ranges

    @classmethod
    def create(cls, size: int, dedicated: bool) -> Segment:
        fd = os.memfd_create("flambeau", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
        try:
            os.ftruncate(fd, size)
            # Fixed size from now on: no process can shrink it under another's mapping.
            fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW)
            return cls(fd, size, owned=True, dedicated=dedicated)
        except BaseException:
            os.close(fd)
            raise

    def counter(self, offset: int, delta: int) -> int:
        return _C._atomic_add_int64(self.view, offset, delta)

    def allocate(self, length: int) -> int | None:
        """First fit: the offset of `length` free bytes, or None."""
        for i, (start, size) in enumerate(self._free):
            if size >= length:
                if size == length:
                    del self._free[i]
                else:
                    self._free[i] = [start + length, size - length]
                return start
        return None

    def release(self, start: int, length: int) -> None:
        """Gives a range back, merging it with free neighbours."""
        free = self._free
        i = bisect.bisect_left(free, [start, 0])
        if i < len(free) and start + length == free[i][0]:
            length += free.pop(i)[1]
        if i > 0 and free[i - 1][0] + free[i - 1][1] == start:
            free[i - 1][1] += length
        else:
            free.insert(i, [start, length])

    def __del__(self):
        # The memoryview and map die with this object; the descriptor is closed here.
        try:
            os.close(self.fd)
        except (OSError, TypeError):
            pass


class Block:
    """A storage's memory: `nbytes` at `offset + HEADER` in `segment`. Holding a Block
    holds one reference to the block; `view` is what storages point at."""

    __slots__ = ("segment", "offset", "nbytes", "view", "__weakref__")

    def __init__(self, segment: Segment, offset: int, nbytes: int):
        self.segment = segment
        self.offset = offset
        self.nbytes = nbytes
        data = offset + HEADER
        self.view = segment.view[data : data + nbytes]
        _live_blocks[(segment.key, offset)] = self

    # Drops the block's count and, for a segment this process allocates from, appends
    # (segment, offset, nbytes, count left) to _arena.returned. Written in C++: a Python
    # finalizer would swallow a Ctrl-C arriving while it runs (storage_bindings.cpp).
    __del__ = _C._shared_block_finalizer


class _Arena:
    """This process's segments and the blocks it allocated from them."""

    def __init__(self):
        self.lock = threading.Lock()
        self.segments: list[Segment] = []
        # Blocks whose local reference died: (segment, offset, nbytes, count left). Freed
        # under the lock at the next allocation; deque appends are safe from __del__.
        self.returned: collections.deque = collections.deque()
        # Blocks other processes still reference, by (segment key, offset).
        self.waiting: dict = {}

    def _drain_returned(self) -> None:
        """Frees the returned blocks nobody else references; the others wait."""
        waiting = self.waiting
        while self.returned:
            segment, offset, nbytes, left = self.returned.popleft()
            key = (segment.key, offset)
            if left == 0:
                waiting.pop(key, None)
                segment.release(offset, _round_up(HEADER + nbytes, _ALIGN))
            else:
                waiting[key] = (segment, offset, nbytes)

    def _sweep_waiting(self) -> None:
        """Frees the waiting blocks other processes have let go of since (a pass over all
        of them: done only when no free range fits, not at every allocation)."""
        waiting = self.waiting
        for key, (segment, offset, nbytes) in list(waiting.items()):
            if segment.counter(offset, 0) == 0 and key not in _live_blocks:
                del waiting[key]
                segment.release(offset, _round_up(HEADER + nbytes, _ALIGN))

    def allocate(self, nbytes: int) -> Block:
        length = _round_up(HEADER + max(nbytes, 0), _ALIGN)
        if length >= DEDICATED_BYTES:
            segment = self._new_segment(_round_up(length, mmap.PAGESIZE), nbytes, True)
            offset = 0
        else:
            with self.lock:
                self._drain_returned()
                segment, offset = self._first_fit(length)
                if offset is None:
                    self._sweep_waiting()
                    segment, offset = self._first_fit(length)
                if offset is None:
                    segment = self._new_segment(SEGMENT_BYTES, nbytes, False)
                    self.segments.append(segment)
                    offset = segment.allocate(length)
        try:
            # Reserve the pages now: an exhausted memory limit is an error here, not a
            # SIGBUS when the data is first written.
            os.posix_fallocate(segment.fd, offset, length)
        except OSError as err:
            if not segment.dedicated:
                with self.lock:
                    segment.release(offset, length)
            raise _no_memory(nbytes, err) from None
        segment.counter(offset, 1)  # a free block's count is 0
        return Block(segment, offset, nbytes)

    def _first_fit(self, length: int):
        for segment in self.segments:
            offset = segment.allocate(length)
            if offset is not None:
                return segment, offset
        return None, None

    @staticmethod
    def _new_segment(size: int, nbytes: int, dedicated: bool) -> Segment:
        try:
            return Segment.create(size, dedicated)
        except OSError as err:
            raise _no_memory(nbytes, err) from None


class WeakValues:
    """A map to weak references of its values, with no callback when one dies (unlike
    WeakValueDictionary): nothing in Python runs as blocks and storages die, so a
    Ctrl-C cannot land in a finalizer and be lost. Dead entries read as missing and are
    pruned as the map grows."""

    __slots__ = ("_refs", "_prune_at")

    def __init__(self):
        self._refs: dict = {}
        self._prune_at = 64

    def get(self, key, default=None):
        ref = self._refs.get(key)
        value = ref() if ref is not None else None
        return default if value is None else value

    def __setitem__(self, key, value) -> None:
        self._refs[key] = weakref.ref(value)
        if len(self._refs) >= self._prune_at:
            for k, ref in list(self._refs.items()):
                if ref() is None:
                    _remove_dead_weakref(self._refs, k)  # only if still that dead ref
            self._prune_at = max(64, 2 * len(self._refs))

    def __contains__(self, key) -> bool:
        return self.get(key) is not None

    def items(self) -> list:
        return [
            (k, v) for k, v in ((k, ref()) for k, ref in list(self._refs.items())) if v is not None
        ]

    def values(self) -> list:
        return [v for _, v in self.items()]


_arena = _Arena()
_C._set_shared_block_returns(_arena.returned)
# Every Block alive in this process, by (segment key, offset): a block received twice
# is the same Block, and a fork knows which references its child inherits.
_live_blocks = WeakValues()
# Segments mapped in this process, by key: each is mapped once.
_segments = WeakValues()


def allocate(nbytes: int) -> Block:
    """A new block of `nbytes` in this process's shared memory."""
    block = _arena.allocate(nbytes)
    _segments[block.segment.key] = block.segment
    return block


def segment_for(key, fd_source, size: int) -> Segment:
    """The segment named `key`, mapped once per process. `fd_source()` gives a descriptor
    of it (this function takes it over) when it is not mapped yet."""
    segment = _segments.get(key)
    if segment is not None:
        return segment
    fd = fd_source()
    try:
        segment = Segment(fd, size, owned=False)
    except BaseException:
        os.close(fd)
        raise
    if segment.key != key:
        raise RuntimeError("shared memory: the descriptor received is not the segment sent")
    _segments[key] = segment
    return segment


def adopt(segment: Segment, offset: int, nbytes: int) -> Block:
    """The Block at `offset` of `segment`, taking over one reference that a message
    carried. A block this process already holds absorbs the reference."""
    if offset < 0 or offset + HEADER + nbytes > segment.size or offset % _ALIGN:
        raise RuntimeError(
            f"shared memory: block at {offset} of {nbytes} bytes is outside its segment"
        )
    block = _live_blocks.get((segment.key, offset))
    if block is not None:
        segment.counter(offset, -1)
        return block
    return Block(segment, offset, nbytes)


def take_reference(block: Block) -> None:
    """One more reference, for a message about to carry `block` to another process."""
    block.segment.counter(block.offset, 1)


def _after_fork_in_child() -> None:
    global _arena
    _arena = _Arena()
    for segment in list(_segments.values()):
        segment.owned = False
        segment._free = []
    for block in list(_live_blocks.values()):
        # The child's copies of the parent's storages each drop a reference when they die.
        block.segment.counter(block.offset, 1)


os.register_at_fork(after_in_child=_after_fork_in_child)
