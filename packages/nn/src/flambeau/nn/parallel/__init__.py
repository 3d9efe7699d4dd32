"""flambeau.nn.parallel: data-parallel training (DataParallel and its functional pieces);
DistributedDataParallel comes from the flambeau-distributed package."""

from __future__ import annotations

from . import distributed as _distributed
from .data_parallel import DataParallel, data_parallel
from .parallel_apply import parallel_apply
from .replicate import replicate
from .scatter_gather import gather, scatter

__all__ = [
    "replicate",
    "scatter",
    "parallel_apply",
    "gather",
    "data_parallel",
    "DataParallel",
    "DistributedDataParallel",
]


def __getattr__(name):
    if name == "DistributedDataParallel":
        return _distributed.resolve()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
