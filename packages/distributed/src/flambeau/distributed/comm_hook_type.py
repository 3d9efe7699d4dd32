"""BuiltinCommHookType: the communication hooks PyTorch builds into DDP's reducer, by
number, for ``DistributedDataParallel._register_builtin_comm_hook``."""

from __future__ import annotations

import enum

__all__ = ["BuiltinCommHookType"]


class BuiltinCommHookType(enum.IntEnum):
    """The built-in DDP communication hooks: ``ALLREDUCE`` (sum, then divide by the
    world size) and ``FP16_COMPRESS`` (the same in float16), registered with
    ``model._register_builtin_comm_hook(type)``; they are the hooks of
    ``ddp_comm_hooks.default_hooks`` of the same names.

    >>> import flambeau.distributed as dist
    >>> dist.BuiltinCommHookType.ALLREDUCE, dist.BuiltinCommHookType.FP16_COMPRESS.value
    (<BuiltinCommHookType.ALLREDUCE: 1>, 2)
    """

    ALLREDUCE = 1
    FP16_COMPRESS = 2

    def __str__(self) -> str:
        return f"BuiltinCommHookType.{self.name}"
