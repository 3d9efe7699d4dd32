"""DistributedDataParallel.join(): training on uneven inputs.

Inside the context every forward of a rank still training starts with a small
all-reduce that says who is still training (and whether this iteration synchronizes
gradients). A rank whose inputs are exhausted leaves its loop and, on leaving the
context, keeps answering that all-reduce with "done" and shadows the collectives of the
ranks still training (buffer broadcast, bucket all-reduces with zero gradients) until
every rank is done. Finally the parameters of the rank that trained longest are
broadcast, so every rank ends with the same model.
"""

from __future__ import annotations

import flambeau

from .. import collectives
from ..reduce_op import ReduceOp
from .sync import broadcast_coalesced

EARLY_TERMINATION = "Detected at least one rank that exhausted inputs. Throwing across all ranks."


def join_allreduce(ddp, active: bool, sync: bool):
    """Who is active (one flag per rank) and whether any active rank syncs gradients."""
    pg = ddp.process_group
    flags = flambeau.zeros(pg.size() + 1, dtype=flambeau.int32)
    if active:
        flags[pg.rank()] = 1
        flags[pg.size()] = int(sync)
    collectives.all_reduce(flags, ReduceOp.SUM, pg)
    values = flags.tolist()
    return [r for r in range(pg.size()) if values[r]], bool(values[pg.size()])


class Join:
    """The context manager DistributedDataParallel.join() returns."""

    def __init__(self, ddp, divide_by_initial_world_size: bool, enable: bool, throw: bool):
        self.ddp = ddp
        self.divide_by_initial = divide_by_initial_world_size
        self.enable = enable
        self.throw = throw

    def __enter__(self):
        self.ddp._join = self if self.enable else None
        return self

    def before_forward(self) -> None:
        """The active rank's half of the per-iteration handshake."""
        ddp = self.ddp
        active, _ = join_allreduce(ddp, True, ddp.require_backward_grad_sync)
        if self.throw and len(active) < ddp.process_group.size():
            raise RuntimeError(EARLY_TERMINATION)
        ddp._authoritative_rank = ddp.process_group.global_rank(max(active))
        if not self.divide_by_initial:
            ddp.reducer.divide_by = len(active)

    def __exit__(self, exc_type, exc, tb):
        ddp = self.ddp
        ddp._join = None
        if not self.enable or exc_type is not None:
            return False
        pg = ddp.process_group
        last_joiner = True
        while True:
            active, sync = join_allreduce(ddp, False, False)
            if not active:
                break
            if self.throw:
                raise RuntimeError(EARLY_TERMINATION)
            last_joiner = False
            authoritative = pg.global_rank(max(active))
            if ddp.broadcast_buffers and ddp._buffers_to_sync:
                broadcast_coalesced(ddp._buffers_to_sync, authoritative, pg)
            if sync:
                self._shadow_backward(len(active))
        # The parameters of a rank that trained to the end, for everyone.
        flag = flambeau.tensor([pg.rank() if last_joiner else -1], dtype=flambeau.int64)
        collectives.all_reduce(flag, ReduceOp.MAX, pg)
        src = pg.global_rank(int(flag.item()))
        broadcast_coalesced(list(ddp.module.parameters()), src, pg)
        ddp.reducer.divide_by = pg.size()
        return False

    def _shadow_backward(self, n_active: int) -> None:
        """The bucket all-reduces of one backward, contributing zeros."""
        reducer = self.ddp.reducer
        works = []
        for bucket in reducer.buckets:
            with flambeau.no_grad():
                bucket.flat.zero_()
            works.append(
                collectives.all_reduce(bucket.flat, ReduceOp.SUM, reducer.pg, async_op=True)
            )
        if reducer.find_unused:
            # The active ranks' "globally unused" all-reduce: unused here, everywhere.
            flag = flambeau.ones(len(reducer.params), dtype=flambeau.uint8)
            for w in works:
                w.wait()
            collectives.all_reduce(flag, ReduceOp.MIN, reducer.pg)
        for w in works:
            w.wait()
