"""The DataLoader's iterator without workers: fetches each batch in the main process."""

from __future__ import annotations

from flambeau.utils.data._utils.base_iter import _BaseDataLoaderIter
from flambeau.utils.data._utils.fetch import _DatasetKind
from flambeau.utils.data._utils.pin_memory import pin_memory
from flambeau.utils.data.sampler import _index_batches


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader) -> None:
        # Made first: whether it gathers with index tensors decides the sampler iterator.
        self._dataset_fetcher = _DatasetKind.create_fetcher(
            loader._dataset_kind,
            loader.dataset,
            loader._auto_collation,
            loader.collate_fn,
            loader.drop_last,
        )
        super().__init__(loader)
        if self._timeout != 0:
            raise AssertionError("_SingleProcessDataLoaderIter requires timeout == 0")
        if self._num_workers != 0:
            raise AssertionError("_SingleProcessDataLoaderIter requires num_workers == 0")

    def _index_iter(self):
        # A TensorDataset's batches gathered with slices of the sampler's permutation (no
        # list of ints per batch); the same indices as the batch sampler's lists.
        if getattr(self._dataset_fetcher, "takes_index_tensors", False):
            batches = _index_batches(self._index_sampler)
            if batches is not None:
                return batches
        return super()._index_iter()

    def _next_data(self):
        index = self._next_index()
        data = self._dataset_fetcher.fetch(index)
        if self._pin_memory:
            data = pin_memory(data, self._pin_memory_device)
        return data
