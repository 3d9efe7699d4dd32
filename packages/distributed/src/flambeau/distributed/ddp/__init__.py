"""DistributedDataParallel and its parts (buckets, reducer, join), needing flambeau's
autograd and nn packages (the ``ddp`` extra)."""

from __future__ import annotations

try:
    import flambeau.autograd  # noqa: F401
    import flambeau.nn  # noqa: F401
except ImportError as e:
    from flambeau._siblings import install_hint

    raise ImportError(
        "DistributedDataParallel needs flambeau-autograd and flambeau-nn (the `ddp` extra); "
        f"{e.name or 'one of them'} is missing. {install_hint('flambeau-nn')}",
        name=e.name,
    ) from e

from .distributed import DistributedDataParallel

__all__ = ["DistributedDataParallel"]
