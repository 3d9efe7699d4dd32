"""flambeau.distributed: PyTorch's torch.distributed on MPI.

Processes are started by an MPI launcher (``python -m flambeau.distributed.run
--nproc-per-node N script.py``, ``mpiexec -n N python script.py``, srun, ...) and join
with ``init_process_group()``. Collectives run on the tensors' own memory through
mpi4py's buffer-based nonblocking calls. Nothing here initializes MPI until
init_process_group.
"""

from __future__ import annotations

from ._runtime import is_available as _mpi_importable
from .collectives import (
    all_gather,
    all_gather_into_tensor,
    all_reduce,
    all_to_all,
    all_to_all_single,
    barrier,
    broadcast,
    gather,
    monitored_barrier,
    reduce,
    reduce_scatter,
    reduce_scatter_tensor,
    scatter,
)
from .debug import DebugLevel, get_debug_level, set_debug_level, set_debug_level_from_env
from .errors import DistBackendError, DistError, DistNetworkError, DistStoreError
from .grad_bucket import GradBucket
from .objects import all_gather_object, broadcast_object_list, gather_object, scatter_object_list
from .p2p import P2POp, batch_isend_irecv, irecv, isend, recv, send
from .process_group import (
    Backend,
    GroupMember,
    ProcessGroup,
    default_pg_timeout,
    destroy_process_group,
    get_backend,
    get_global_rank,
    get_group_rank,
    get_process_group_ranks,
    get_rank,
    get_world_size,
    group,
    init_process_group,
    is_initialized,
    new_group,
)
from .reduce_op import ReduceOp
from .work import Work

reduce_op = ReduceOp  # torch's deprecated alias

__all__ = [
    "Backend",
    "DebugLevel",
    "DistBackendError",
    "DistError",
    "DistNetworkError",
    "DistStoreError",
    "DistributedDataParallel",
    "GradBucket",
    "GroupMember",
    "P2POp",
    "ProcessGroup",
    "ReduceOp",
    "Work",
    "all_gather",
    "all_gather_into_tensor",
    "all_gather_object",
    "all_reduce",
    "all_to_all",
    "all_to_all_single",
    "barrier",
    "batch_isend_irecv",
    "broadcast",
    "broadcast_object_list",
    "default_pg_timeout",
    "destroy_process_group",
    "gather",
    "gather_object",
    "get_backend",
    "get_debug_level",
    "get_global_rank",
    "get_group_rank",
    "get_process_group_ranks",
    "get_rank",
    "get_world_size",
    "group",
    "init_process_group",
    "irecv",
    "is_available",
    "is_gloo_available",
    "is_initialized",
    "is_mpi_available",
    "is_nccl_available",
    "is_torchelastic_launched",
    "isend",
    "monitored_barrier",
    "new_group",
    "recv",
    "reduce",
    "reduce_scatter",
    "reduce_scatter_tensor",
    "scatter",
    "scatter_object_list",
    "send",
    "set_debug_level",
    "set_debug_level_from_env",
]


def is_available() -> bool:
    """Whether the distributed package can be used (mpi4py and an MPI are installed).

    >>> import flambeau.distributed as dist
    >>> dist.is_available()
    True
    """
    return _mpi_importable()


def is_mpi_available() -> bool:
    """Whether the MPI backend can be used: True when mpi4py and an MPI library are
    installed. It is the backend every flambeau process group runs on.

    >>> import flambeau.distributed as dist
    >>> dist.is_mpi_available()
    True
    """
    return _mpi_importable()


def is_gloo_available() -> bool:
    """Always False: flambeau has no Gloo backend. ``init_process_group("gloo")`` still
    works, served by MPI, so scripts written for Gloo run unchanged.

    >>> import flambeau.distributed as dist
    >>> dist.is_gloo_available()
    False
    """
    return False


def is_nccl_available() -> bool:
    """Always False: flambeau has no NCCL backend (it runs collectives on CPU tensors
    through MPI), and ``init_process_group("nccl")`` raises RuntimeError.

    >>> import flambeau.distributed as dist
    >>> dist.is_nccl_available()
    False
    """
    return False


def is_torchelastic_launched() -> bool:
    """True in a process started by ``python -m flambeau.distributed.run`` (torchrun's
    counterpart), as torchrun's workers answer.

    >>> import flambeau.distributed as dist
    >>> dist.is_torchelastic_launched()  # not started by python -m flambeau.distributed.run
    False
    """
    import os

    return os.environ.get("TORCHELASTIC_RUN_ID") is not None


def __getattr__(name):
    # DDP needs autograd and nn; loaded on first use so the collectives need only the core.
    if name == "DistributedDataParallel":
        from .ddp import DistributedDataParallel

        return DistributedDataParallel
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
