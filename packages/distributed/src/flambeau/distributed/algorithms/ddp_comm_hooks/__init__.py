"""DDP communication hooks (torch.distributed.algorithms.ddp_comm_hooks): the default
hooks, and DDPCommHookType to register one by name."""

from __future__ import annotations

import sys
from enum import Enum
from functools import partial

from . import debugging_hooks as debugging
from . import default_hooks as default

__all__ = ["DDPCommHookType", "register_ddp_comm_hook"]


def _member(value):
    # A partial in an Enum body is a member only when marked so (Python 3.11+).
    if sys.version_info >= (3, 11):
        from enum import member

        return member(value)
    return value


def _ddp_comm_hook_wrapper(comm_hook, model, state):
    model.register_comm_hook(state, comm_hook)


class DDPCommHookType(Enum):
    """The hooks of ``ddp_comm_hooks`` by name; ``DDPCommHookType.ALLREDUCE.value(model=
    model, state=process_group)`` registers one (as register_ddp_comm_hook does).

    >>> from flambeau.distributed.algorithms.ddp_comm_hooks import DDPCommHookType
    >>> list(DDPCommHookType.__members__)
    ['ALLREDUCE', 'FP16_COMPRESS', 'BF16_COMPRESS', 'NOOP']
    """

    ALLREDUCE = _member(partial(_ddp_comm_hook_wrapper, comm_hook=default.allreduce_hook))
    FP16_COMPRESS = _member(partial(_ddp_comm_hook_wrapper, comm_hook=default.fp16_compress_hook))
    BF16_COMPRESS = _member(partial(_ddp_comm_hook_wrapper, comm_hook=default.bf16_compress_hook))
    NOOP = _member(partial(_ddp_comm_hook_wrapper, comm_hook=debugging.noop_hook))


def register_ddp_comm_hook(comm_hook_type: DDPCommHookType, model, state=None) -> None:
    """Register the hook `comm_hook_type` names on the DistributedDataParallel `model`,
    with `state` (a process group for these hooks; None: the default group).

    >>> import flambeau.distributed as dist
    >>> from flambeau.distributed.algorithms import ddp_comm_hooks as hooks
    >>> dist.init_process_group()
    >>> model = dist.DistributedDataParallel(flambeau.nn.Linear(2, 1))
    >>> hooks.register_ddp_comm_hook(hooks.DDPCommHookType.FP16_COMPRESS, model)
    >>> dist.destroy_process_group()
    """
    if not isinstance(comm_hook_type, DDPCommHookType):
        raise TypeError(
            f"register_ddp_comm_hook expects a DDPCommHookType, got {type(comm_hook_type).__name__}"
        )
    comm_hook_type.value(model=model, state=state)
