"""DistributedDataParallel's part in the join context (uneven inputs).

Inside ``with ddp.join():`` every forward of a rank still training, after Join's own
"still training" all-reduce, runs one small all-reduce saying which ranks train and
whether this iteration synchronizes gradients; the highest rank still training is then
the source of the buffer broadcast. A joined rank's hook answers that all-reduce with
zeros and shadows the rest of the step: bucket rebuild, buffer broadcast, each bucket's
reduction (communication hook included) on zeros, the unused-parameter vote. Finally the
parameters and buffers of a rank that trained to the end are broadcast to all.
"""

from __future__ import annotations

import flambeau

from .. import collectives
from ..algorithms.join import JoinHook
from ..reduce_op import ReduceOp
from .sync import broadcast_coalesced


def step_handshake(ddp, active: bool, sync: bool) -> tuple[list[int], bool]:
    """Which group ranks still train, and whether any of them syncs gradients."""
    pg = ddp.process_group
    flags = flambeau.zeros(pg.size() + 1, dtype=flambeau.int32)
    if active:
        flags[pg.rank()] = 1
        flags[pg.size()] = int(sync)
    collectives.all_reduce(flags, ReduceOp.SUM, pg)
    values = flags.tolist()
    return [r for r in range(pg.size()) if values[r]], bool(values[pg.size()])


def sync_buffers(ddp, group_rank: int) -> None:
    if ddp.broadcast_buffers and ddp._buffers_to_sync and ddp.process_group.size() > 1:
        broadcast_coalesced(
            ddp._buffers_to_sync, ddp.process_group.global_rank(group_rank), ddp.process_group
        )


def before_forward(ddp) -> None:
    """An active rank's collectives before its forward, inside the join context."""
    from ..algorithms.join import Join

    Join.notify_join_context(ddp)
    ddp.reducer.rebuild_buckets()
    active, _ = step_handshake(ddp, True, ddp.require_backward_grad_sync)
    if not ddp._divide_by_initial_world_size:
        ddp.reducer.divide_by = len(active)
    sync_buffers(ddp, max(active))


class DDPJoinHook(JoinHook):
    """Shadows the steps of the ranks still training (torch's _DDPJoinHook)."""

    def __init__(self, ddp, divide_by_initial_world_size: bool):
        self.ddp = ddp
        ddp._divide_by_initial_world_size = divide_by_initial_world_size

    def main_hook(self) -> None:
        ddp = self.ddp
        ddp.reducer.rebuild_buckets()
        active, sync = step_handshake(ddp, False, False)
        if not ddp._divide_by_initial_world_size:  # as the active ranks divide
            ddp.reducer.divide_by = len(active)
        sync_buffers(ddp, max(active))
        ddp.require_forward_param_sync = sync
        if sync:
            ddp.reducer.shadow_backward()

    def post_hook(self, is_last_joiner: bool) -> None:
        """Everyone takes the model of a rank that trained to the end."""
        ddp = self.ddp
        pg = ddp.process_group
        flag = flambeau.tensor([pg.rank() if is_last_joiner else -1], dtype=flambeau.int64)
        collectives.all_reduce(flag, ReduceOp.MAX, pg)
        src = pg.global_rank(int(flag.item()))
        broadcast_coalesced(list(ddp.module.parameters()) + ddp._buffers_to_sync, src, pg)
        ddp.reducer.divide_by = pg.size()
