"""Memory shared by the ranks of one node, and the all-reduce that works in it.

When every rank of a process group runs on one node, DistributedDataParallel keeps its
buckets in an MPI-3 shared-memory window (MPI_Win_allocate_shared): each rank has a
segment, and every rank maps every segment. A bucket is then all-reduced without
passing messages: after a barrier (all ranks have written their gradients), rank r sums
its chunk of the bucket over all segments, scales it, and writes the result into every
segment's chunk; after a second barrier each rank's segment holds the whole result.
Each rank reads and writes each byte of its chunk once per segment, where MPI's
message-based all-reduce copies the data through its own buffers several times
(measured, 3.2 MB on 2 ranks of this machine: 0.3-0.5 ms against 0.9-1.6 ms).

The barriers are nonblocking (MPI_Ibarrier) and polled by the process group's
operations (work.py), so a dead peer or a timeout raises as for any collective.

Windows are freed collectively (MPI_Win_free), so never from a garbage collector: each
process group keeps the windows it made, each with weak references to the arrays over
its segments; before making a new window, and at destroy_process_group, the ranks agree
(MIN over "nothing here uses it any more") which windows no rank uses and free those,
in the order they were made.
"""

from __future__ import annotations

import os
import weakref

import numpy as np

import flambeau

from ._runtime import mpi
from .errors import DistBackendError
from .reduce_op import RedOpType
from .work import Operation

ALIGN = 64  # bytes: each bucket starts on a cache line
ENV_SWITCH = "FLAMBEAU_DDP_SHARED_MEMORY"  # "0" turns the shared buckets off
# Where MPICH and Open MPI keep shared windows on Linux. A window larger than its free
# space would not fail when made but raise SIGBUS at the first touch of a missing page
# (a container's /dev/shm is often 64 MiB), so its room is checked first.
SHM_DIR = "/dev/shm"


class NoRoom(RuntimeError):
    """Some rank's shared-memory file system lacks the room for a window."""


def _free_shm_bytes() -> int | None:
    """Bytes free in SHM_DIR; None where there is no such directory (not Linux)."""
    try:
        st = os.statvfs(SHM_DIR)
    except OSError:
        return None
    return st.f_bavail * st.f_frsize


def enabled() -> bool:
    return os.environ.get(ENV_SWITCH, "1").strip().lower() not in ("0", "false", "no", "off")


def _round_up(n: int, to: int) -> int:
    return (n + to - 1) // to * to


class _NodeState:
    """Per process group: the node communicator (None when the group spans nodes) and
    the windows made over it, oldest first."""

    def __init__(self, pg):
        MPI = mpi()
        node = pg.comm.Split_type(MPI.COMM_TYPE_SHARED)
        # Shared buckets only when the whole group is on this node.
        if node.Get_size() != pg.size():
            node.Free()
            node = None
        self.node = node
        self.windows: list[tuple[object, list]] = []  # (window, weakrefs to its arrays)


def _state(pg) -> _NodeState:
    """The group's node state, made on first use: collective over the group."""
    state = getattr(pg, "_node_state", None)
    if state is None:
        state = pg._node_state = _NodeState(pg)
    return state


def usable(pg) -> bool:
    """Whether `pg` can keep buckets in shared memory (collective on first call)."""
    if pg.size() < 2 or not enabled():
        return False
    return _state(pg).node is not None


def _unused_here(refs) -> bool:
    return all(r() is None for r in refs)


def sweep(pg) -> None:
    """Free the windows of `pg` that no rank uses any more (collective)."""
    state = getattr(pg, "_node_state", None)
    if state is None or state.node is None or not state.windows:
        return
    flags = np.array([_unused_here(refs) for _, refs in state.windows], dtype=np.uint8)
    everywhere = np.empty_like(flags)
    req = state.node.Iallreduce(flags, everywhere, mpi().MIN)
    Operation(pg, [req], "the shared-memory window sweep").drive()
    kept = []
    for (win, refs), unused in zip(state.windows, everywhere):
        if unused:
            win.Unlock_all()
            win.Free()
        else:
            kept.append((win, refs))
    state.windows = kept


def release(pg) -> None:
    """At destroy_process_group: free the unused windows and the node communicator.
    A window some rank still uses (a DistributedDataParallel kept past the group)
    stays mapped until the process ends."""
    state = getattr(pg, "_node_state", None)
    if state is None or state.node is None:
        return
    try:
        sweep(pg)
    except DistBackendError:
        pass  # a rank left without destroying the group: its windows go with the process
    if not state.windows:
        state.node.Free()
    pg._node_state = None


class SharedBuffers:
    """One window holding tensors of the given (numel, dtype) layout in every rank's
    segment: `segments[s][k]` is tensor k of rank s (`mine` = this rank's)."""

    def __init__(self, pg, layout: list[tuple[int, object]]):
        MPI = mpi()
        sweep(pg)  # collective: every rank makes its windows in the same order
        node = _state(pg).node
        offsets, total = [], 0
        for numel, dtype in layout:
            offsets.append(total)
            total = _round_up(total + numel * dtype.itemsize, ALIGN)
        size = max(total, ALIGN)
        _check_room(pg, node, size * node.Get_size())
        win = MPI.Win.Allocate_shared(size, 1, comm=node)
        win.Lock_all(MPI.MODE_NOCHECK)  # an access epoch for Win.Sync, held for life
        self.window = win
        self.rank = node.Get_rank()
        self.segments = []
        arrays = []
        for s in range(node.Get_size()):
            buffer, _ = win.Shared_query(s)
            base = np.frombuffer(buffer, dtype=np.uint8, count=size)
            arrays.append(base)
            self.segments.append(
                [
                    _tensor_over(base, offset, numel, dtype)
                    for offset, (numel, dtype) in zip(offsets, layout)
                ]
            )
        _state(pg).windows.append((win, [weakref.ref(a) for a in arrays]))
        self.mine = self.segments[self.rank]

    def sync(self) -> None:
        """Order this process's loads and stores against the other ranks' (with a barrier)."""
        self.window.Sync()


def _check_room(pg, node, nbytes: int) -> None:
    """Raise NoRoom on every rank when some rank's SHM_DIR lacks nbytes (and a margin)."""
    free = _free_shm_bytes()
    room = free is None or free >= nbytes + nbytes // 8 + (1 << 20)
    mine = np.array([1 if room else 0], dtype=np.uint8)
    everywhere = np.empty_like(mine)
    req = node.Iallreduce(mine, everywhere, mpi().MIN)
    Operation(pg, [req], "the shared-memory room check").drive()
    if not everywhere[0]:
        raise NoRoom(
            f"DistributedDataParallel: the buckets need {nbytes / 2**20:.1f} MiB of shared "
            f"memory in {SHM_DIR}, which has {(free or 0) / 2**20:.1f} MiB free on this rank "
            "(or less on another): they are reduced through MPI's messages instead, which is "
            "slower. Give the machine or container more shared memory (docker run "
            "--shm-size=...), or set FLAMBEAU_DDP_SHARED_MEMORY=0 to silence this."
        )


def _tensor_over(base: np.ndarray, offset: int, numel: int, dtype):
    raw = flambeau.from_numpy(base[offset : offset + numel * dtype.itemsize])
    return raw.view(dtype) if numel else flambeau.empty(0, dtype=dtype)


def all_reduce(pg, shared: SharedBuffers, index: int, scale: int, async_op: bool):
    """Sum tensor `index` of `shared` over the ranks and divide it by `scale`, in place
    in every rank's segment; each rank must have written its own first."""
    # An all_reduce to TORCH_DISTRIBUTED_DEBUG=DETAIL's check of what the ranks run.
    mine = shared.mine[index]
    desc = "shared-memory " + pg.begin(
        "all_reduce", mine.dtype, mine.numel(), redop=int(RedOpType.SUM)
    )
    node = _state(pg).node
    parts = [seg[index] for seg in shared.segments]
    size, rank = len(parts), shared.rank
    n = parts[0].numel()
    step = _round_up(-(-n // size), 16)  # elements per chunk, a multiple of 16
    lo, hi = min(rank * step, n), min((rank + 1) * step, n)

    def stages():
        shared.sync()
        yield [node.Ibarrier()]  # every rank has written its segment
        shared.sync()
        if hi > lo:
            with flambeau.no_grad():
                acc = parts[rank][lo:hi]
                for s in range(size):
                    if s != rank:
                        acc.add_(parts[s][lo:hi])
                if scale != 1:
                    # A power of two divides exactly as a product; others divide.
                    if acc.is_floating_point() and scale & (scale - 1) == 0:
                        acc.mul_(1.0 / scale)
                    else:
                        acc.div_(scale)
                for s in range(size):
                    if s != rank:
                        parts[s][lo:hi].copy_(acc)
        shared.sync()
        yield [node.Ibarrier()]  # every chunk is written everywhere
        shared.sync()

    return pg.complete(None, desc, result=[parts[rank]], async_op=async_op, stages=stages())
