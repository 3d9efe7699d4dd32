"""A hook for measuring DDP without communication
(torch.distributed.algorithms.ddp_comm_hooks.debugging_hooks)."""

from __future__ import annotations

from typing import Any

import flambeau
from flambeau.futures import Future

from ...grad_bucket import GradBucket

__all__ = ["noop_hook"]


def noop_hook(_: Any, bucket: GradBucket) -> Future[flambeau.Tensor]:
    """Return the bucket unreduced: DDP's cost without its all-reduces (each rank keeps
    its own gradients).

    >>> import flambeau.distributed as dist
    >>> from flambeau.distributed.algorithms.ddp_comm_hooks.debugging_hooks import noop_hook
    >>> grads = flambeau.tensor([1.0, 2.0])
    >>> noop_hook(None, dist.GradBucket(0, grads, [grads], [], True)).wait()
    tensor([1., 2.])
    """
    fut: Future = Future()
    fut.set_result(bucket.buffer())
    return fut
