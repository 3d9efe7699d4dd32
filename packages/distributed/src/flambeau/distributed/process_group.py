"""Process groups: the default (world) group, new_group, and the rank/size queries.

A ProcessGroup is a backend-agnostic face (ranks, size, timeout, sequence numbers,
fingerprint checks) over an MPI communicator; the collectives only need `comm` to post
nonblocking calls, so a second backend (NCCL through the CUDA plugin) can supply its
own communicator object later.
"""

from __future__ import annotations

import atexit
import os
import signal
import sys
import threading
from datetime import timedelta
from typing import NewType

import numpy as np

from . import debug, node_memory, rendezvous
from ._runtime import communication_thread, mpi, threads_supported
from .errors import DistBackendError
from .liveness import Liveness, install_excepthook
from .store import PrefixStore
from .work import Engine, InlineEngine, Operation, Work

__all__ = [
    "Backend",
    "GroupMember",
    "GroupName",
    "ProcessGroup",
    "default_pg_timeout",
    "destroy_process_group",
    "get_backend",
    "get_global_rank",
    "get_group_rank",
    "get_pg_count",
    "get_process_group_ranks",
    "get_rank",
    "get_world_size",
    "group",
    "init_process_group",
    "is_initialized",
    "new_group",
]

default_pg_timeout = timedelta(minutes=30)  # PyTorch's default

GroupName = NewType("GroupName", str)  # the name of a process group, as PyTorch types it


class Backend(str):
    """Backend names, as torch.distributed.Backend (a str subclass).

    >>> import flambeau.distributed as dist
    >>> dist.Backend("GLOO"), dist.Backend.MPI
    ('gloo', 'mpi')
    """

    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    UCC = "ucc"
    MPI = "mpi"
    XCCL = "xccl"
    FAKE = "fake"

    backend_list = [UNDEFINED, GLOO, NCCL, XCCL, UCC, MPI, FAKE]
    # PyTorch's tables (BackendConfig, get_default_backend_for_device read them).
    default_device_backend_map: dict[str, str] = {
        "cpu": GLOO,
        "cuda": NCCL,
        "xpu": XCCL,
        "mps": GLOO,
    }
    backend_capability: dict[str, list[str]] = {
        GLOO: ["cpu", "cuda"],
        NCCL: ["cuda"],
        XCCL: ["xpu"],
        UCC: ["cpu", "cuda"],
        MPI: ["cpu", "cuda"],
        FAKE: ["cpu", "cuda", "hpu", "xpu"],
    }

    def __new__(cls, name: str):
        if not isinstance(name, str):
            raise ValueError(f"Backend name must be a string, but got: {name}")
        return super().__new__(cls, name.lower())


class GroupMember:
    """``GroupMember.WORLD`` (the default group once initialized) and the value new_group
    returns on ranks outside the new group.

    >>> import flambeau.distributed as dist
    >>> dist.GroupMember.NON_GROUP_MEMBER
    -100
    >>> dist.init_process_group()
    >>> dist.GroupMember.WORLD
    <ProcessGroup '0' backend=mpi size=1>
    >>> dist.destroy_process_group()
    """

    WORLD: ProcessGroup | None = None
    NON_GROUP_MEMBER = -100


group = GroupMember  # torch.distributed.group.WORLD


class ProcessGroup:
    """A set of ranks that run collectives together, over their own MPI communicator.

    :func:`init_process_group` creates the default group of all ranks
    (``GroupMember.WORLD``) and :func:`new_group` creates subgroups; pass one as
    ``group=`` to a collective. Ranks inside a group are numbered from 0 (group ranks),
    which :func:`get_group_rank` and :func:`get_global_rank` translate. Not meant to be
    constructed directly.

    >>> import flambeau.distributed as dist
    >>> dist.init_process_group()
    >>> pg = dist.new_group([0])
    >>> pg, pg.rank(), pg.size()
    (<ProcessGroup '...' backend=mpi size=1>, 0, 1)
    >>> dist.destroy_process_group()
    """

    def __init__(self, comm, ranks: list[int], timeout: timedelta, world: _World, name: str):
        self.comm = comm
        self._ranks = ranks  # global rank of each group rank
        self._index = {g: i for i, g in enumerate(ranks)}
        self._rank = comm.Get_rank()
        self._size = comm.Get_size()
        self.timeout = timeout
        self.timeout_seconds = timeout.total_seconds()
        self._world = world
        self.group_name = name
        self._seq = 0
        self.global_rank_of_self = ranks[self._rank]

    # torch.distributed.ProcessGroup's queries
    def rank(self) -> int:
        """This process's rank within the group."""
        return self._rank

    def size(self) -> int:
        """The number of ranks in the group."""
        return self._size

    def name(self) -> str:
        """The name of the group's backend: always ``"mpi"``."""
        return "mpi"

    def describe(self) -> str:
        if self is self._world.default:
            return f"the default group (world size {self._size})"
        return f"group {self.group_name!r} (global ranks {self._ranks})"

    def __repr__(self) -> str:
        return f"<ProcessGroup {self.group_name!r} backend=mpi size={self._size}>"

    @property
    def world_liveness(self):
        return self._world.liveness

    def group_rank(self, global_rank: int) -> int:
        try:
            return self._index[global_rank]
        except KeyError:
            raise ValueError(
                f"Global rank {global_rank} is not part of group {self.group_name!r}"
            ) from None

    def global_rank(self, group_rank: int) -> int:
        if not 0 <= group_rank < self._size:
            raise ValueError(f"Group rank {group_rank} is not part of group {self.group_name!r}")
        return self._ranks[group_rank]

    def root(self, global_rank: int | None, group_rank: int | None, what: str) -> int:
        """The group rank of a root given as a global rank (src=) or group rank (group_src=)."""
        if global_rank is not None and group_rank is not None:
            raise ValueError(f"Can not specify both {what} and group_{what}")
        if group_rank is not None:
            self.global_rank(group_rank)
            return group_rank
        return self.group_rank(0 if global_rank is None else global_rank)

    def mark_broken(self, error: BaseException) -> None:
        self._world.broken = True

    # posting and completing
    def begin(self, op: str, dtype=None, numel: int = 0, root: int = -1, redop: int = -1) -> str:
        """The next sequence number's description; with TORCH_DISTRIBUTED_DEBUG=DETAIL,
        first checks that every rank of the group is making the same call."""
        self._world.check_usable()
        self._seq += 1
        desc = f"{op} (#{self._seq} on {self.describe()}"
        if dtype is not None:
            desc += f", {numel} elements of {dtype}"
        desc += ")"
        if debug.get_debug_level() == debug.DebugLevel.DETAIL and self._size > 1:
            self._check_agreement(debug.fingerprint(self._seq, op, dtype, numel, root, redop), desc)
        return desc

    def _check_agreement(self, mine: np.ndarray, desc: str) -> None:
        rows = np.empty((self._size, mine.size), dtype=np.int64)
        req = self.comm.Iallgather(mine, rows)
        Operation(self, [req], f"the DETAIL check of {desc}").drive()
        if (rows == rows[self._rank]).all():
            return
        lines = [
            f"rank {self._ranks[r]} is running {debug.describe(row)}" for r, row in enumerate(rows)
        ]
        raise DistBackendError(
            "Detected mismatch between collectives on ranks (TORCH_DISTRIBUTED_DEBUG=DETAIL):\n  "
            + "\n  ".join(lines)
        )

    def complete(
        self, requests, desc, finish=None, result=None, async_op=False, statuses=None, stages=None
    ):
        """Drive the posted `requests` (or the steps of `stages`, see work.Operation) here
        (returns None), or hand them to the communication thread and return their Work
        (async_op=True)."""
        op = Operation(self, requests, desc, finish, result, statuses, stages)
        if not async_op:
            op.drive()
            return None
        engine = self._world.engine
        engine.submit(op)
        return Work(op, owned_by_engine=engine.owns_operations)

    def progress(self) -> None:
        """Settle finished operations posted with async_op=True (a no-op with the
        communication thread, which does it)."""
        engine = self._world.engine
        if engine is not None:
            engine.progress()


class _World:
    """The state init_process_group creates and destroy_process_group ends."""

    def __init__(self):
        self.default: ProcessGroup | None = None
        self.groups: list[ProcessGroup] = []
        self.liveness: Liveness | None = None
        self.engine: Engine | InlineEngine | None = None
        self.backend: str | None = None
        self.broken = False
        self.created = 0  # groups made by new_group, counted alike on every rank
        self.store = None  # the default group's store, when init_process_group got one
        self.lock = threading.Lock()

    def check_usable(self) -> None:
        if self.broken and self.liveness is not None and self.liveness.failure is not None:
            raise DistBackendError(
                f"the process group is unusable after a failure: {self.liveness.failure.describe()}"
            )


_world = _World()


def _default() -> ProcessGroup:
    if _world.default is None:
        raise ValueError(
            "Default process group has not been initialized, please make sure to call "
            "init_process_group."
        )
    return _world.default


def resolve_group(group) -> ProcessGroup | None:
    """The ProcessGroup to use, or None when this rank is not a member (the collective
    then does nothing, as in PyTorch)."""
    if group is None or group is GroupMember.WORLD:
        return _default()
    if group == GroupMember.NON_GROUP_MEMBER:
        return None
    if not isinstance(group, ProcessGroup):
        raise TypeError(f"expected a ProcessGroup, got {type(group).__name__}")
    _default()
    return group


def _resolve_backend(backend) -> str:
    name = "mpi" if backend is None else str(backend).lower()
    # "cpu:gloo,cuda:nccl" style: the CPU entry decides.
    if ":" in name:
        for part in name.split(","):
            device, _, value = part.partition(":")
            if device.strip() == "cpu":
                name = value.strip()
    if name in ("mpi", "gloo"):
        # Scripts written for gloo run unchanged: MPI serves CPU tensors.
        return "mpi"
    if name == "nccl":
        raise RuntimeError("Distributed package doesn't have NCCL built in")
    raise ValueError(f"Invalid backend: '{backend}'; flambeau.distributed provides 'mpi'")


def _rendezvous_world_size(init_method: str | None, world_size) -> int:
    """The world size a PyTorch-style rendezvous names: the argument, else ``world_size=``
    in a tcp:// or file:// URL, else WORLD_SIZE for env:// (init_process_group's default).

    The processes themselves are brought together by the MPI launcher, never by the URL:
    a script started once per rank (``RANK=0 python train.py & RANK=1 python train.py``)
    is a set of independent single-process MPI jobs, which MPI cannot merge without a
    name server the PyPI wheels do not run. The size check then names the launchers."""
    if world_size not in (None, -1):
        return world_size
    if init_method is None or init_method.startswith("env://"):
        value = os.environ.get("WORLD_SIZE")
        return int(value) if value and value.isdigit() else -1
    from urllib.parse import parse_qs, urlparse

    url = urlparse(init_method)
    if url.scheme not in ("tcp", "file"):
        raise ValueError(
            f"init_method {init_method!r}: expected an env://, tcp://host:port or file:// URL"
        )
    value = parse_qs(url.query).get("world_size", ["-1"])[0]
    try:
        return int(value)
    except ValueError:
        raise ValueError(
            f"init_method {init_method!r}: world_size={value!r} is not an int"
        ) from None


def init_process_group(
    backend: str | None = None,
    init_method: str | None = None,
    timeout: timedelta | None = None,
    world_size: int = -1,
    rank: int = -1,
    store=None,
    group_name: str = "",
    pg_options=None,
    device_id=None,
) -> None:
    """Join the processes an MPI launcher started (mpiexec, srun, or
    ``python -m flambeau.distributed.run``) into the default process group.

    MPI has already done the rendezvous, so `init_method` and `store` are accepted and
    not needed; `world_size` must then equal the number of processes started, and
    `rank`, when given, renumbers them (each process must give a different one).

    A `store` (a :class:`TCPStore`, :class:`FileStore`, ...) needs `world_size` and
    `rank`, as in PyTorch (AssertionError otherwise), and excludes `init_method`. It
    carries nothing here, since MPI connects the ranks (PyTorch's MPI backend ignores
    its store too): it is checked and kept as the default group's store, under the
    prefix ``default_pg`` as PyTorch keeps it. An `init_method` whose scheme has a
    handler from :func:`register_rendezvous_handler` is handed to it, and the
    ``(store, rank, world_size)`` it yields are used so.

    >>> import flambeau.distributed as dist
    >>> dist.init_process_group("gloo")  # each process a launcher started; here just one
    >>> dist.is_initialized(), dist.get_rank(), dist.get_world_size()
    (True, 0, 1)
    >>> dist.destroy_process_group()
    """
    if _world.default is not None:
        raise ValueError("trying to initialize the default process group twice!")
    if store is not None and init_method is not None:
        raise ValueError("Cannot specify both init_method and store.")
    _resolve_backend(backend)
    if timeout is None:
        timeout = default_pg_timeout
    if not isinstance(timeout, timedelta):
        raise TypeError(
            f"Expected timeout argument to be of type datetime.timedelta, got {timeout}"
        )
    if store is None and rendezvous.registered_handler(init_method) is not None:
        store, rank, world_size = rendezvous.rendezvous(init_method, rank, world_size, timeout)
        init_method = None
    if store is not None:
        if not world_size > 0:
            raise AssertionError("world_size must be positive if using store")
        if not rank >= 0:
            raise AssertionError("rank must be non-negative if using store")
    world_size = _rendezvous_world_size(init_method, world_size)
    MPI = mpi()
    world = MPI.COMM_WORLD
    size = world.Get_size()
    if world_size is not None and world_size not in (-1, size):
        hint = (
            "it was started as a single process: start the processes with an MPI launcher "
            f"(python -m flambeau.distributed.run --nproc-per-node {world_size} script.py, or "
            f"mpiexec -n {world_size} python script.py) rather than one by one"
            if size == 1
            else f"it was started with {size} processes"
        )
        raise ValueError(f"init_process_group(world_size={world_size}), but {hint}")
    if rank is not None and rank != -1 and not 0 <= rank < size:
        raise ValueError(f"Invalid rank {rank}: should be in [0, {size - 1}]")
    if rank is None or rank == -1:
        comm = world.Dup()
    else:
        # Collective: renumber the processes by the ranks they ask for.
        asked = world.allgather(rank)
        if sorted(asked) != list(range(size)):
            raise ValueError(f"init_process_group: the ranks given are not a permutation: {asked}")
        comm = world.Split(0, rank)
    comm.Set_errhandler(MPI.ERRORS_RETURN)
    _world.broken = False
    _world.backend = "mpi"
    _world.store = None if store is None else PrefixStore("default_pg", store)
    _world.liveness = Liveness(comm)
    _world.engine = Engine() if communication_thread() and threads_supported() else InlineEngine()
    pg = ProcessGroup(comm, list(range(size)), timeout, _world, group_name or "0")
    _world.default = pg
    _world.groups = [pg]
    GroupMember.WORLD = pg
    install_excepthook(_world.liveness)
    _register_exit()
    _tell_launcher(pg)


_my_rank_file: str | None = None


def _tell_launcher_exit(failed: bool) -> None:
    if _my_rank_file:
        try:
            with open(_my_rank_file + (".failed" if failed else ".done"), "w"):
                pass
        except OSError:
            pass


def _tell_launcher(pg: ProcessGroup) -> None:
    """Leave this rank's pid where flambeau.distributed.run looks when a rank dies, so
    that it can name the rank."""
    run_dir = os.environ.get("FLAMBEAU_RUN_DIR")
    if not run_dir or not os.path.isdir(run_dir):
        return
    host, pid = _world.liveness.peers[pg.rank()]
    global _my_rank_file
    path = os.path.join(run_dir, f"rank-{pg.rank()}")
    try:
        with open(path + ".tmp", "w") as f:
            f.write(f"{pg.rank()} {pid} {host}")
        os.replace(path + ".tmp", path)
        _my_rank_file = path
    except OSError:
        pass


_exit_registered = False


def _register_exit() -> None:
    """After a rank failed (this one or a peer), MPI_Finalize could wait for the dead one
    forever: end the process without it then (status 1)."""
    global _exit_registered
    if _exit_registered:
        return
    _exit_registered = True

    def leave():
        failed = _world.liveness is not None and _world.liveness.failure is not None
        # Python resets its signal handlers while shutting down, and Hydra may still send
        # the notice of a peer's exit: ignored, it cannot end this process mid-exit.
        if _world.liveness is not None and _world.liveness.handles_signal:
            signal.signal(signal.SIGUSR1, signal.SIG_IGN)
        _tell_launcher_exit(failed)
        if failed:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(1)

    atexit.register(leave)


def destroy_process_group(group=None) -> None:
    """Free `group`'s communicator, or with None every group and the default one.

    >>> import flambeau.distributed as dist
    >>> dist.init_process_group()
    >>> dist.destroy_process_group()
    >>> dist.is_initialized()
    False
    """
    if group is None or group is GroupMember.WORLD:
        pg = _default()
        groups = list(_world.groups)
        healthy = not _world.broken
        if _world.engine is not None:
            _world.engine.stop()
        if healthy:
            for g in groups:
                try:
                    node_memory.release(g)
                    g.comm.Free()
                except Exception:
                    pass
            _world.liveness.free()
        del pg
        _world.default = None
        _world.groups = []
        _world.engine = None
        _world.backend = None
        _world.store = None
        _world.created = 0
        GroupMember.WORLD = None
        return
    if group == GroupMember.NON_GROUP_MEMBER:
        return
    if group in _world.groups:
        _world.groups.remove(group)
        if not _world.broken:
            node_memory.release(group)
            group.comm.Free()


def is_initialized() -> bool:
    """Whether :func:`init_process_group` has created the default group in this process
    (and :func:`destroy_process_group` has not destroyed it since).

    >>> import flambeau.distributed as dist
    >>> dist.is_initialized()
    False
    """
    return _world.default is not None


def get_pg_count() -> int:
    """The number of process groups made since :func:`init_process_group`: the default
    group and one for each :func:`new_group` call (on every rank, member or not); 0
    before init and after :func:`destroy_process_group`.

    >>> import flambeau.distributed as dist
    >>> dist.init_process_group()
    >>> _ = dist.new_group([0])
    >>> dist.get_pg_count()
    2
    >>> dist.destroy_process_group()
    >>> dist.get_pg_count()
    0
    """
    return 0 if _world.default is None else 1 + _world.created


def _get_default_store():
    """The store of the default group (init_process_group's `store` under the prefix
    ``default_pg``); ValueError before init or when init_process_group had none."""
    _default()
    if _world.store is None:
        raise ValueError(
            "the default process group has no store: init_process_group was given none "
            "(MPI brought the ranks together)"
        )
    return _world.store


def get_backend(group=None) -> str:
    """The backend of ``group`` (the default group when None), as a :class:`Backend`:
    always ``"mpi"``. Raises ValueError before :func:`init_process_group` or when this
    rank is not a member of ``group``.

    >>> import flambeau.distributed as dist
    >>> dist.init_process_group("gloo")  # served by MPI
    >>> dist.get_backend()
    'mpi'
    >>> dist.destroy_process_group()
    """
    pg = resolve_group(group)
    if pg is None:
        raise ValueError("Invalid process group specified")
    return Backend.MPI


def get_rank(group=None) -> int:
    """This process's rank in ``group`` (the default group when None), from 0 to
    ``get_world_size(group) - 1``; -1 when this process is not a member of ``group``.
    Raises ValueError before :func:`init_process_group`.

    >>> import flambeau.distributed as dist
    >>> dist.init_process_group()  # one process here: rank 0
    >>> dist.get_rank()
    0
    >>> dist.destroy_process_group()
    """
    pg = resolve_group(group)
    return -1 if pg is None else pg.rank()


def get_world_size(group=None) -> int:
    """The number of ranks in ``group`` (the default group when None: every process of
    the job); -1 when this process is not a member of ``group``. Raises ValueError
    before :func:`init_process_group`.

    >>> import flambeau.distributed as dist
    >>> dist.init_process_group()  # one process here
    >>> dist.get_world_size()
    1
    >>> dist.destroy_process_group()
    """
    pg = resolve_group(group)
    return -1 if pg is None else pg.size()


def get_global_rank(group, group_rank: int) -> int:
    """The rank in the default group of the process whose rank in ``group`` is
    ``group_rank``. Raises ValueError when ``group_rank`` is out of range or this process
    is not a member of ``group``.

    >>> import flambeau.distributed as dist
    >>> dist.init_process_group()
    >>> dist.get_global_rank(dist.new_group([0]), 0)
    0
    >>> dist.destroy_process_group()
    """
    pg = resolve_group(group)
    if pg is None:
        raise ValueError("Group is not a member")
    return pg.global_rank(group_rank)


def get_group_rank(group, global_rank: int) -> int:
    """The rank in ``group`` of the process whose rank in the default group is
    ``global_rank``. Raises ValueError when that process is not in ``group`` or this
    process is not a member of it.

    >>> import flambeau.distributed as dist
    >>> dist.init_process_group()
    >>> dist.get_group_rank(dist.new_group([0]), 0)
    0
    >>> dist.destroy_process_group()
    """
    pg = resolve_group(group)
    if pg is None:
        raise ValueError("Group is not a member")
    return pg.group_rank(global_rank)


def get_process_group_ranks(group) -> list[int]:
    """The global ranks (ranks in the default group) of ``group``'s members, in the order
    of their group ranks. Raises ValueError when this process is not a member of
    ``group``.

    >>> import flambeau.distributed as dist
    >>> dist.init_process_group()
    >>> dist.get_process_group_ranks(dist.group.WORLD)
    [0]
    >>> dist.destroy_process_group()
    """
    pg = resolve_group(group)
    if pg is None:
        raise ValueError("Group is not a member")
    return list(pg._ranks)


def new_group(
    ranks=None,
    timeout: timedelta | None = None,
    backend=None,
    pg_options=None,
    use_local_synchronization: bool = False,
    group_desc=None,
    device_id=None,
):
    """A group of the given global ranks (all of them when None). Every rank of the
    world calls it; ranks outside the group get GroupMember.NON_GROUP_MEMBER.

    >>> import flambeau.distributed as dist
    >>> dist.init_process_group()  # one rank here
    >>> evens = dist.new_group(range(0, dist.get_world_size(), 2))
    >>> dist.get_process_group_ranks(evens)
    [0]
    >>> dist.destroy_process_group()
    """
    world_pg = _default()
    if backend is not None:
        _resolve_backend(backend)
    size = world_pg.size()
    if ranks is None:
        ranks = list(range(size))
    ranks = sorted(int(r) for r in ranks)
    if len(set(ranks)) != len(ranks):
        raise ValueError(f"new_group: ranks must be distinct, got {ranks}")
    for r in ranks:
        if not 0 <= r < size:
            raise ValueError(
                "The new group's rank should be within the world_size set by init_process_group"
            )
    MPI = mpi()
    me = world_pg.rank()
    member = me in ranks
    comm = world_pg.comm.Split(0 if member else MPI.UNDEFINED, ranks.index(me) if member else 0)
    _world.created += 1
    index = _world.created
    if not member:
        return GroupMember.NON_GROUP_MEMBER
    comm.Set_errhandler(MPI.ERRORS_RETURN)
    pg = ProcessGroup(comm, ranks, timeout or world_pg.timeout, _world, group_desc or str(index))
    _world.groups.append(pg)
    return pg
