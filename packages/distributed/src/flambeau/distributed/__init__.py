"""flambeau.distributed: PyTorch's torch.distributed on MPI.

Processes are started by an MPI launcher (``python -m flambeau.distributed.run
--nproc-per-node N script.py``, ``mpiexec -n N python script.py``, srun, ...) and join
with ``init_process_group()``. Collectives run on the tensors' own memory through
mpi4py's buffer-based nonblocking calls. Nothing here initializes MPI until
init_process_group.
"""

from __future__ import annotations

from ._runtime import is_available as _mpi_importable
from .backend_config import (
    BackendConfig,
    get_backend_config,
    get_default_backend_for_device,
    is_backend_available,
)
from .coalesced import all_gather_coalesced, all_reduce_coalesced
from .collectives import (
    all_gather,
    all_gather_into_tensor,
    all_gather_single,
    all_reduce,
    all_to_all,
    all_to_all_single,
    barrier,
    broadcast,
    gather,
    monitored_barrier,
    reduce,
    reduce_scatter,
    reduce_scatter_single,
    reduce_scatter_tensor,
    scatter,
)
from .comm_hook_type import BuiltinCommHookType
from .debug import DebugLevel, get_debug_level, set_debug_level, set_debug_level_from_env
from .errors import DistBackendError, DistError, DistNetworkError, DistStoreError, QueueEmptyError
from .grad_bucket import GradBucket
from .objects import (
    all_gather_object,
    broadcast_object_list,
    gather_object,
    recv_object_list,
    scatter_object_list,
    send_object_list,
)
from .p2p import P2POp, batch_isend_irecv, irecv, isend, recv, send
from .process_group import (
    Backend,
    GroupMember,
    GroupName,
    ProcessGroup,
    default_pg_timeout,
    destroy_process_group,
    get_backend,
    get_global_rank,
    get_group_rank,
    get_pg_count,
    get_process_group_ranks,
    get_rank,
    get_world_size,
    group,
    init_process_group,
    is_initialized,
    new_group,
)
from .reduce_op import ReduceOp, supports_complex
from .rendezvous import register_rendezvous_handler
from .store import FileStore, HashStore, PrefixStore, Store, TCPStore
from .subgroups import new_subgroups, new_subgroups_by_enumeration
from .work import Work

reduce_op = ReduceOp  # torch's deprecated alias

__all__ = [
    "Backend",
    "BackendConfig",
    "BuiltinCommHookType",
    "DebugLevel",
    "DistBackendError",
    "DistError",
    "DistNetworkError",
    "DistStoreError",
    "DistributedDataParallel",
    "FileStore",
    "GradBucket",
    "GroupMember",
    "GroupName",
    "HashStore",
    "P2POp",
    "PrefixStore",
    "ProcessGroup",
    "QueueEmptyError",
    "ReduceOp",
    "Store",
    "TCPStore",
    "Work",
    "all_gather",
    "all_gather_coalesced",
    "all_gather_into_tensor",
    "all_gather_object",
    "all_gather_single",
    "all_reduce",
    "all_reduce_coalesced",
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
    "get_backend_config",
    "get_debug_level",
    "get_default_backend_for_device",
    "get_global_rank",
    "get_group_rank",
    "get_node_local_rank",
    "get_pg_count",
    "get_process_group_ranks",
    "get_rank",
    "get_world_size",
    "group",
    "init_process_group",
    "irecv",
    "is_available",
    "is_backend_available",
    "is_gloo_available",
    "is_initialized",
    "is_mpi_available",
    "is_nccl_available",
    "is_torchelastic_launched",
    "is_ucc_available",
    "is_xccl_available",
    "isend",
    "monitored_barrier",
    "new_group",
    "new_subgroups",
    "new_subgroups_by_enumeration",
    "recv",
    "recv_object_list",
    "reduce",
    "reduce_scatter",
    "reduce_scatter_single",
    "reduce_scatter_tensor",
    "register_rendezvous_handler",
    "scatter",
    "scatter_object_list",
    "send",
    "send_object_list",
    "set_debug_level",
    "set_debug_level_from_env",
    "supports_complex",
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


def is_ucc_available() -> bool:
    """Always False: flambeau has no UCC backend.

    >>> import flambeau.distributed as dist
    >>> dist.is_ucc_available()
    False
    """
    return False


def is_xccl_available() -> bool:
    """Always False: flambeau has no XCCL (Intel GPU) backend.

    >>> import flambeau.distributed as dist
    >>> dist.is_xccl_available()
    False
    """
    return False


def get_node_local_rank(fallback_rank: int | None = None) -> int:
    """This process's rank among those of its machine, from ``LOCAL_RANK`` (set by
    ``python -m flambeau.distributed.run`` and torchrun); `fallback_rank` when it is
    unset, and RuntimeError when that is None too.

    >>> import flambeau.distributed as dist
    >>> dist.get_node_local_rank(fallback_rank=0)  # LOCAL_RANK unset here
    0
    """
    import os

    if "LOCAL_RANK" in os.environ:
        return int(os.environ["LOCAL_RANK"])
    if fallback_rank is not None:
        return int(fallback_rank)
    raise RuntimeError(
        "LOCAL_RANK is not in the environment. Consider passing fallback_rank to allow "
        "`get_node_local_rank` to work, assuming you are not running in a multi-device "
        "context and want the code to run locally instead."
    )


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
