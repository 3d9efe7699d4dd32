"""``DistributedSampler``: each of `num_replicas` processes reads its own part of a dataset."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import TypeVar

import flambeau
from flambeau.utils.data.dataset import Dataset
from flambeau.utils.data.sampler import Sampler

__all__ = ["DistributedSampler"]

_T_co = TypeVar("_T_co", covariant=True)


def _process_group(what: str) -> int:
    try:
        import flambeau.distributed as dist
    except ImportError:
        raise RuntimeError("Requires distributed package to be available") from None
    if not dist.is_available():
        raise RuntimeError("Requires distributed package to be available")
    return dist.get_world_size() if what == "world_size" else dist.get_rank()


class DistributedSampler(Sampler[_T_co]):
    """The indices of rank `rank` out of `num_replicas`: every replica gets
    ``ceil(len / num_replicas)`` indices (the list padded by repeating its start), or
    ``floor`` of it with `drop_last`; shuffled by `seed` + the epoch (`set_epoch`).

    Without `num_replicas` and `rank` they come from the default process group of
    flambeau.distributed; given both, no process group is needed.

    >>> from flambeau.utils.data import DistributedSampler
    >>> [list(DistributedSampler(range(5), num_replicas=2, rank=r, shuffle=False)) for r in (0, 1)]
    [[0, 2, 4], [1, 3, 0]]
    >>> sampler = DistributedSampler(range(5), num_replicas=2, rank=1)  # shuffled by seed + epoch
    >>> sampler.set_epoch(1)  # at the start of each epoch
    >>> len(sampler)
    3
    """

    def __init__(
        self,
        dataset: Dataset,
        num_replicas: int | None = None,
        rank: int | None = None,
        shuffle: bool = True,
        seed: int = 0,
        drop_last: bool = False,
    ) -> None:
        if num_replicas is None:
            num_replicas = _process_group("world_size")
        if rank is None:
            rank = _process_group("rank")
        if rank >= num_replicas or rank < 0:
            raise ValueError(
                f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]"
            )
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(self.dataset)  # type: ignore[arg-type]
        if self.drop_last and n % self.num_replicas != 0:
            self.num_samples = math.ceil((n - self.num_replicas) / self.num_replicas)
        else:
            self.num_samples = math.ceil(n / self.num_replicas)
        self.total_size = self.num_samples * self.num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self) -> Iterator[_T_co]:
        n = len(self.dataset)  # type: ignore[arg-type]
        if self.shuffle:
            g = flambeau.Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = flambeau.randperm(n, generator=g).tolist()
        else:
            indices = list(range(n))
        if not self.drop_last:
            padding_size = self.total_size - len(indices)
            if padding_size <= len(indices):
                indices += indices[:padding_size]
            else:
                indices += (indices * math.ceil(padding_size / len(indices)))[:padding_size]
        else:
            indices = indices[: self.total_size]
        if len(indices) != self.total_size:
            raise AssertionError(
                f"Number of indices ({len(indices)}) does not match total_size ({self.total_size})"
            )
        indices = indices[self.rank : self.total_size : self.num_replicas]
        if len(indices) != self.num_samples:
            raise AssertionError(
                f"Number of subsampled indices ({len(indices)}) does not match "
                f"num_samples ({self.num_samples})"
            )
        return iter(indices)

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Sets the epoch: with `shuffle`, each epoch has its own order (the same on every
        replica). Call it before each epoch's iterator is made."""
        self.epoch = epoch
