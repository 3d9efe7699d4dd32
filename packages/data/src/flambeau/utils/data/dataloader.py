"""The DataLoader: PyTorch's arguments, defaults and errors; workers that pay off; resume.

The loader itself holds the arguments and makes an iterator per epoch; the pieces are in
``_utils``: argument checks (checks.py), the iterator without workers (single_process.py)
and with them (multi_process.py), what both share and resuming (base_iter.py), the worker
loop (worker.py), the shared-memory ring (ring.py), dead and stuck workers (failures.py),
start methods (start.py) and pinning (pin_memory.py). See docs/design/data-loading.rst.
"""

from __future__ import annotations

import math
import warnings
import weakref

# The iterators are named here too, as in PyTorch's module.
from flambeau.utils.data._utils.base_iter import _BaseDataLoaderIter, capture_rng  # noqa: F401
from flambeau.utils.data._utils.checks import (
    check_multiprocessing_context,
    check_sampling_args,
    check_worker_args,
    worker_number_warning,
)
from flambeau.utils.data._utils.collate import default_collate, default_convert
from flambeau.utils.data._utils.fetch import _DatasetKind
from flambeau.utils.data._utils.multi_process import _MultiProcessingDataLoaderIter
from flambeau.utils.data._utils.single_process import _SingleProcessDataLoaderIter
from flambeau.utils.data._utils.worker import get_worker_info
from flambeau.utils.data.dataset import Dataset, IterableDataset
from flambeau.utils.data.sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
)

__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info"]


class _InfiniteConstantSampler(Sampler):
    """None forever: the placeholder "index" of an IterableDataset."""

    def __iter__(self):
        while True:
            yield None


class DataLoader:
    """Combines a dataset and a sampler and iterates over batches of it, in the main
    process or in `num_workers` worker processes.

    The arguments, their defaults and the errors for conflicting ones are PyTorch's. Beyond
    PyTorch: ``state_dict()``/``load_state_dict()`` resume an epoch where it stopped, and a
    map-style dataset gives the same batches for a seed whatever `num_workers` is.

    Args:
        dataset: a map-style (``Dataset``) or iterable-style (``IterableDataset``) dataset.
        batch_size: samples per batch (default 1); None turns automatic batching off.
        shuffle: reshuffle every epoch (map-style only).
        sampler: the keys to read, in order (excludes `shuffle`).
        batch_sampler: lists of keys, one per batch (excludes `batch_size`, `shuffle`,
            `sampler`, `drop_last`).
        num_workers: worker processes (0: load in the main process).
        collate_fn: merges a list of samples into a batch (default ``default_collate``;
            ``default_convert`` without automatic batching).
        pin_memory: put batches in pinned memory (when a device backend provides it).
        drop_last: drop the last batch when it is not full.
        timeout: seconds to wait for a batch from the workers (0: forever).
        worker_init_fn: called in each worker with its id, after seeding.
        multiprocessing_context: "fork", "spawn", "forkserver" or a context object.
        generator: the random generator of the sampler and of the workers' base seed.
        prefetch_factor: batches each worker loads ahead (default 2 with workers).
        persistent_workers: keep the workers between epochs.
        pin_memory_device: deprecated in PyTorch; the current accelerator is used.
        in_order: give batches in sampler order (False: as workers finish them).

    >>> from flambeau.utils.data import DataLoader, TensorDataset
    >>> ds = TensorDataset(flambeau.arange(10.0).reshape(5, 2), flambeau.tensor([0, 1, 0, 1, 1]))
    >>> loader = DataLoader(ds, batch_size=2)  # num_workers=0: loads in this process
    >>> for x, y in loader:
    ...     print(x.shape, y)
    flambeau.Size([2, 2]) tensor([0, 1])
    flambeau.Size([2, 2]) tensor([0, 1])
    flambeau.Size([1, 2]) tensor([1])
    >>> len(loader)
    3
    """

    __initialized = False

    def __init__(
        self,
        dataset: Dataset,
        batch_size: int | None = 1,
        shuffle: bool | None = None,
        sampler=None,
        batch_sampler=None,
        num_workers: int = 0,
        collate_fn=None,
        pin_memory: bool = False,
        drop_last: bool = False,
        timeout: float = 0,
        worker_init_fn=None,
        multiprocessing_context=None,
        generator=None,
        *,
        prefetch_factor: int | None = None,
        persistent_workers: bool = False,
        pin_memory_device: str = "",
        in_order: bool = True,
    ) -> None:
        prefetch_factor = check_worker_args(
            num_workers, timeout, prefetch_factor, persistent_workers
        )
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order

        iterable = isinstance(dataset, IterableDataset)
        self._dataset_kind = _DatasetKind.Iterable if iterable else _DatasetKind.Map
        shuffle, batch_size, drop_last = check_sampling_args(
            iterable, shuffle, sampler, batch_sampler, batch_size, drop_last
        )

        if sampler is None:
            if self._dataset_kind == _DatasetKind.Iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)  # type: ignore[arg-type]
            else:
                sampler = SequentialSampler(dataset)  # type: ignore[arg-type]

        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator

        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers

        self.__initialized = True
        self._IterableDataset_len_called = None
        self._iterator = None
        self._last_iterator = None  # weak reference to the latest iterator, for state_dict
        self._resume_state = None  # set by load_state_dict, used by the next iterator

        self.check_worker_number_rationality()

    def _get_iterator(self):
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        self.check_worker_number_rationality()
        return _MultiProcessingDataLoaderIter(self)

    @property
    def multiprocessing_context(self):
        return self.__multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, multiprocessing_context) -> None:
        self.__multiprocessing_context = check_multiprocessing_context(
            multiprocessing_context, self.num_workers
        )

    def __setattr__(self, attr, val) -> None:
        if self.__initialized and attr in (
            "batch_size",
            "batch_sampler",
            "sampler",
            "drop_last",
            "dataset",
            "persistent_workers",
        ):
            raise ValueError(
                f"{attr} attribute should not be set after {self.__class__.__name__} is initialized"
            )
        super().__setattr__(attr, val)

    def __iter__(self):
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            it = self._iterator
        else:
            it = self._get_iterator()
        self._last_iterator = weakref.ref(it)
        return it

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def __len__(self) -> int:
        if self._dataset_kind == _DatasetKind.Iterable:
            length = self._IterableDataset_len_called = len(self.dataset)  # type: ignore[arg-type]
            if self.batch_size is not None:
                if self.drop_last:
                    length = length // self.batch_size
                else:
                    length = math.ceil(length / self.batch_size)
            return length
        return len(self._index_sampler)

    def check_worker_number_rationality(self) -> None:
        """Warns when more workers are asked for than this process may use CPUs."""
        msg = worker_number_warning(self.num_workers)
        if msg is not None:
            warnings.warn(msg, stacklevel=2)

    # Resuming (beyond PyTorch: torchdata's StatefulDataLoader and Grain have it).

    def state_dict(self) -> dict:
        """Where the current epoch stands: the random states its order was drawn from and
        how many batches it has given. ``load_state_dict`` of it makes the next iterator
        give the remaining batches of that epoch, the same ones.

        Taken between epochs (no iterator, or the last one exhausted), it describes the
        next epoch from its start."""
        it = self._last_iterator() if self._last_iterator is not None else None
        if it is not None and not it._finished and it._start_state is not None:
            return {
                "_version": 1,
                "rng": it._start_state,
                "num_yielded": it._num_yielded,
                "dataset_kind": self._dataset_kind,
            }
        if self._resume_state is not None:
            return dict(self._resume_state)
        return {
            "_version": 1,
            "rng": capture_rng(self),
            "num_yielded": 0,
            "dataset_kind": self._dataset_kind,
        }

    def load_state_dict(self, state_dict: dict) -> None:
        """Makes the next iterator resume from `state_dict` (``state_dict()``'s): the
        random draws that ordered that epoch are repeated and the batches it had given
        are skipped (by index for map-style datasets, without reading them; by reading
        and dropping them for iterable datasets)."""
        if state_dict.get("_version") != 1:
            raise ValueError("DataLoader.load_state_dict: not a state_dict of a DataLoader")
        if state_dict.get("dataset_kind", self._dataset_kind) != self._dataset_kind:
            raise ValueError(
                "DataLoader.load_state_dict: the state is of a loader of another kind of dataset"
            )
        self._resume_state = dict(state_dict)
