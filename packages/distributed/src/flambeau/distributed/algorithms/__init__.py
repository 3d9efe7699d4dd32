"""flambeau.distributed.algorithms: the join context manager for uneven inputs, and DDP
communication hooks (``ddp_comm_hooks``)."""

from .join import Join, Joinable, JoinHook

__all__ = ["Join", "JoinHook", "Joinable"]
