"""Fetchers: how a worker (or the main process) turns indices into a collated batch."""

from __future__ import annotations

from flambeau.utils.data._utils import collate as _collate


class _BaseDatasetFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last) -> None:
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last

    def fetch(self, possibly_batched_index):
        raise NotImplementedError


class _IterableDatasetFetcher(_BaseDatasetFetcher):
    def __init__(self, dataset, auto_collation, collate_fn, drop_last) -> None:
        super().__init__(dataset, auto_collation, collate_fn, drop_last)
        self.dataset_iter = iter(dataset)
        self.ended = False

    def fetch(self, possibly_batched_index):
        if self.ended:
            raise StopIteration
        if self.auto_collation:
            data = []
            for _ in possibly_batched_index:
                try:
                    data.append(next(self.dataset_iter))
                except StopIteration:
                    self.ended = True
                    break
            if len(data) == 0 or (self.drop_last and len(data) < len(possibly_batched_index)):
                raise StopIteration
        else:
            data = next(self.dataset_iter)
        return self.collate_fn(data)


class _MapDatasetFetcher(_BaseDatasetFetcher):
    def __init__(self, dataset, auto_collation, collate_fn, drop_last) -> None:
        super().__init__(dataset, auto_collation, collate_fn, drop_last)
        # The batched fast path: a dataset that can gather a whole batch (TensorDataset,
        # a Subset of one) when the batch is collated by default_collate.
        fast = getattr(dataset, "_fast_batch", None)
        self._fast = fast if auto_collation and collate_fn is _collate.default_collate else None

    @property
    def takes_index_tensors(self) -> bool:
        """Whether a batch's indices may come as an int64 tensor (the batched fast path
        gathers with it; anything else gets them as a list)."""
        return self._fast is not None

    def fetch(self, possibly_batched_index):
        if self.auto_collation:
            if self._fast is not None:
                data = self._fast(possibly_batched_index, _collate._out_allocator)
                if data is not None:
                    return data
                if not isinstance(possibly_batched_index, list):  # an index tensor
                    possibly_batched_index = possibly_batched_index.tolist()
            if hasattr(self.dataset, "__getitems__") and self.dataset.__getitems__:
                data = self.dataset.__getitems__(possibly_batched_index)
            else:
                data = [self.dataset[idx] for idx in possibly_batched_index]
        else:
            data = self.dataset[possibly_batched_index]
        return self.collate_fn(data)


def gathers_index_tensors(kind, dataset, auto_collation, collate_fn) -> bool:
    """Whether a fetcher of these would take a batch's indices as an int64 tensor
    (`_MapDatasetFetcher.takes_index_tensors`), asked without making one."""
    return (
        kind == _DatasetKind.Map
        and auto_collation
        and collate_fn is _collate.default_collate
        and getattr(dataset, "_fast_batch", None) is not None
    )


class _DatasetKind:
    Map = 0
    Iterable = 1

    @staticmethod
    def create_fetcher(kind, dataset, auto_collation, collate_fn, drop_last):
        if kind == _DatasetKind.Map:
            return _MapDatasetFetcher(dataset, auto_collation, collate_fn, drop_last)
        return _IterableDatasetFetcher(dataset, auto_collation, collate_fn, drop_last)
