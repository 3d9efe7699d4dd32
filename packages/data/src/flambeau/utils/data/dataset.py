"""Datasets: PyTorch's ``torch.utils.data.dataset`` with the same names, errors and defaults.

``TensorDataset`` and ``Subset`` (over a TensorDataset) also gather a whole batch with one
``index_select`` per tensor when the DataLoader collates with ``default_collate``
(``_gather``), instead of one Python call per sample and a stack.
"""

from __future__ import annotations

import bisect
import itertools
import math
import warnings
from collections.abc import Iterable, Sequence
from typing import Generic, TypeVar

import flambeau
from flambeau import Tensor, randperm

__all__ = [
    "ChainDataset",
    "ConcatDataset",
    "Dataset",
    "IterableDataset",
    "StackDataset",
    "Subset",
    "TensorDataset",
    "random_split",
]

_T = TypeVar("_T")
_T_co = TypeVar("_T_co", covariant=True)


class Dataset(Generic[_T_co]):
    """An abstract map-style dataset: a key (usually an index) gives a sample.

    Subclasses implement ``__getitem__`` and usually ``__len__``; they may implement
    ``__getitems__(indices)`` to fetch a batch in one call (the DataLoader uses it).

    >>> from flambeau.utils.data import DataLoader, Dataset
    >>> class Squares(Dataset):
    ...     def __len__(self):
    ...         return 5
    ...     def __getitem__(self, i):
    ...         return i * i
    >>> list(DataLoader(Squares(), batch_size=2))
    [tensor([0, 1]), tensor([4, 9]), tensor([16])]
    """

    def __getitem__(self, index) -> _T_co:
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: Dataset[_T_co]) -> ConcatDataset[_T_co]:
        return ConcatDataset([self, other])


class IterableDataset(Dataset[_T_co], Iterable[_T_co]):
    """An iterable-style dataset: ``__iter__`` yields the samples.

    With worker processes each worker iterates its own copy; use ``get_worker_info()`` in
    ``__iter__`` (or a ``worker_init_fn``) to give each worker its shard.

    >>> from flambeau.utils.data import DataLoader, IterableDataset
    >>> class Count(IterableDataset):
    ...     def __iter__(self):
    ...         return iter(range(5))
    >>> list(DataLoader(Count(), batch_size=2))
    [tensor([0, 1]), tensor([2, 3]), tensor([4])]
    """

    def __add__(self, other: Dataset[_T_co]):
        return ChainDataset([self, other])


def _gather(tensors, indices, alloc):
    """One index_select per tensor: the batch default_collate would build from the
    samples. `alloc(dtype, shape)` gives the output tensors (a worker's shared memory),
    or None. Returns None when the fast path does not apply (the caller falls back to
    per-sample fetching, which raises PyTorch's errors for bad indices)."""
    if isinstance(indices, flambeau.Tensor):
        index = indices  # int64, from the loader's index batches
    else:
        try:
            index = flambeau.tensor(indices, dtype=flambeau.int64)
        except (TypeError, ValueError, RuntimeError, OverflowError):
            return None
    if index.dim() != 1 or index.numel() == 0:
        return None
    out = []
    try:
        for t in tensors:
            if alloc is None or t.device.type != "cpu":
                out.append(t.index_select(0, index))
            else:
                o = alloc(t.dtype, (index.numel(), *t.shape[1:]))
                flambeau.index_select(t, 0, index, out=o)
                out.append(o)
    except (IndexError, RuntimeError):
        return None  # negative or out-of-range indices: the per-sample path handles them
    return out


class TensorDataset(Dataset[tuple[Tensor, ...]]):
    """A dataset wrapping tensors: sample ``i`` is ``tuple(t[i] for t in tensors)``.

    All tensors must have the same size in their first dimension.

    >>> from flambeau.utils.data import TensorDataset
    >>> ds = TensorDataset(flambeau.arange(6.0).reshape(3, 2), flambeau.tensor([0, 1, 0]))
    >>> len(ds), ds[1]
    (3, (tensor([2., 3.]), tensor(1)))
    """

    tensors: tuple[Tensor, ...]

    def __init__(self, *tensors: Tensor) -> None:
        if any(tensors[0].size(0) != tensor.size(0) for tensor in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(tensor[index] for tensor in self.tensors)

    def __getitems__(self, indices: list) -> list:
        # The samples of a batch, as __getitem__ gives them (a custom collate_fn sees
        # these); the DataLoader's default path gathers with _fast_batch instead.
        return [tuple(tensor[i] for tensor in self.tensors) for i in indices]

    def __len__(self) -> int:
        return self.tensors[0].size(0)

    def _fast_batch(self, indices, alloc):
        if type(self).__getitem__ is not TensorDataset.__getitem__ or (
            type(self).__getitems__ is not TensorDataset.__getitems__
        ):
            return None  # a subclass changed what a sample is
        return _gather(self.tensors, indices, alloc)


class StackDataset(Dataset):
    """Datasets of equal length stacked: sample ``i`` is a tuple (positional arguments)
    or a dict (keyword arguments) of each dataset's sample ``i``.

    >>> from flambeau.utils.data import StackDataset
    >>> ds = StackDataset(x=flambeau.tensor([1.0, 2.0, 3.0]), label=[0, 1, 0])
    >>> len(ds), ds[1]
    (3, {'x': tensor(2.), 'label': 1})
    """

    datasets: tuple | dict

    def __init__(self, *args: Dataset[_T_co], **kwargs: Dataset[_T_co]) -> None:
        if args:
            if kwargs:
                raise ValueError(
                    "Supported either ``tuple``- (via ``args``) or"
                    "``dict``- (via ``kwargs``) like input/output, but both types are given."
                )
            self._length = len(args[0])  # type: ignore[arg-type]
            if any(self._length != len(dataset) for dataset in args):  # type: ignore[arg-type]
                raise ValueError("Size mismatch between datasets")
            self.datasets = args
        elif kwargs:
            tmp = list(kwargs.values())
            self._length = len(tmp[0])  # type: ignore[arg-type]
            if any(self._length != len(dataset) for dataset in tmp):  # type: ignore[arg-type]
                raise ValueError("Size mismatch between datasets")
            self.datasets = kwargs
        else:
            raise ValueError("At least one dataset should be passed")

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: dataset[index] for k, dataset in self.datasets.items()}
        return tuple(dataset[index] for dataset in self.datasets)

    def _items(self, dataset, indices):
        if callable(getattr(dataset, "__getitems__", None)):
            items = dataset.__getitems__(indices)
            if len(items) != len(indices):
                raise ValueError(
                    "Nested dataset's output size mismatch. "
                    f"Expected {len(indices)}, got {len(items)}"
                )
            return items
        return [dataset[idx] for idx in indices]

    def __getitems__(self, indices: list):
        if isinstance(self.datasets, dict):
            dict_batch: list[dict] = [{} for _ in indices]
            for k, dataset in self.datasets.items():
                for data, d_sample in zip(self._items(dataset, indices), dict_batch):
                    d_sample[k] = data
            return dict_batch
        list_batch: list[list] = [[] for _ in indices]
        for dataset in self.datasets:
            for data, t_sample in zip(self._items(dataset, indices), list_batch):
                t_sample.append(data)
        return [tuple(sample) for sample in list_batch]

    def __len__(self) -> int:
        return self._length


class ConcatDataset(Dataset[_T_co]):
    """Several map-style datasets one after another.

    >>> from flambeau.utils.data import ConcatDataset
    >>> ds = ConcatDataset([range(3), range(10, 12)])
    >>> len(ds), ds[3], ds.cumulative_sizes
    (5, 10, [3, 5])
    """

    datasets: list[Dataset[_T_co]]
    cumulative_sizes: list[int]

    @staticmethod
    def cumsum(sequence):
        r, s = [], 0
        for e in sequence:
            n = len(e)
            r.append(n + s)
            s += n
        return r

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        super().__init__()
        self.datasets = list(datasets)
        if len(self.datasets) == 0:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        dataset_idx = bisect.bisect_right(self.cumulative_sizes, idx)
        if dataset_idx == 0:
            sample_idx = idx
        else:
            sample_idx = idx - self.cumulative_sizes[dataset_idx - 1]
        return self.datasets[dataset_idx][sample_idx]

    @property
    def cummulative_sizes(self):
        warnings.warn(
            "`cummulative_sizes` attribute is renamed to `cumulative_sizes`",
            FutureWarning,
            stacklevel=2,
        )
        return self.cumulative_sizes


class ChainDataset(IterableDataset):
    """Several iterable datasets chained: iterating yields each one's samples in turn.

    >>> from flambeau.utils.data import ChainDataset, IterableDataset
    >>> class Count(IterableDataset):
    ...     def __init__(self, n):
    ...         self.n = n
    ...     def __iter__(self):
    ...         return iter(range(self.n))
    >>> list(ChainDataset([Count(2), Count(3)]))
    [0, 1, 0, 1, 2]
    """

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        super().__init__()
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self) -> int:
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            total += len(d)  # type: ignore[arg-type]
        return total


class Subset(Dataset[_T_co]):
    """The samples of `dataset` at `indices`.

    >>> from flambeau.utils.data import Subset
    >>> s = Subset(range(10, 20), indices=[1, 3, 5])
    >>> len(s), s[1], list(s)
    (3, 13, [11, 13, 15])
    """

    dataset: Dataset[_T_co]
    indices: Sequence[int]

    def __init__(self, dataset: Dataset[_T_co], indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices
        if (
            type(self).__getitem__ is not Subset.__getitem__
            and type(self).__getitems__ is Subset.__getitems__
        ):
            raise NotImplementedError(
                f"{type(self).__name__} overrides __getitem__ but not __getitems__. "
                "When subclassing Subset and overriding __getitem__, you must also override "
                "__getitems__ to ensure DataLoader works correctly with your custom logic. "
                "A simple implementation:\n\n"
                "def __getitems__(self, indices):\n"
                "    return [self.__getitem__(idx) for idx in indices]"
            )

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices: list[int]) -> list[_T_co]:
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__([self.indices[idx] for idx in indices])  # type: ignore[attr-defined]
        return [self.dataset[self.indices[idx]] for idx in indices]

    def __len__(self) -> int:
        return len(self.indices)

    def _fast_batch(self, indices, alloc):
        if type(self).__getitems__ is not Subset.__getitems__:
            return None
        fast = getattr(self.dataset, "_fast_batch", None)
        if fast is None:
            return None
        if isinstance(indices, flambeau.Tensor):
            indices = indices.tolist()
        try:
            mapped = [self.indices[i] for i in indices]
        except (IndexError, TypeError):
            return None
        return fast(mapped, alloc)


def random_split(
    dataset: Dataset[_T],
    lengths: Sequence[int | float],
    generator: flambeau.Generator | None = flambeau.default_generator,
) -> list[Subset[_T]]:
    """Splits `dataset` at random into non-overlapping subsets of the given lengths, or of
    the given fractions of its length (the remainder dealt one by one from the first).

    >>> from flambeau.utils.data import random_split
    >>> g = flambeau.Generator().manual_seed(42)
    >>> train, val = random_split(range(10), [0.8, 0.2], generator=g)
    >>> len(train), len(val), sorted([*train, *val]) == list(range(10))
    (8, 2, True)
    """
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        subset_lengths: list[int] = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            subset_lengths.append(math.floor(len(dataset) * frac))  # type: ignore[arg-type]
        remainder = len(dataset) - sum(subset_lengths)  # type: ignore[arg-type]
        for i in range(remainder):
            subset_lengths[i % len(subset_lengths)] += 1
        lengths = subset_lengths
        for i, length in enumerate(lengths):
            if length == 0:
                warnings.warn(
                    f"Length of split at index {i} is 0. This might result in an empty dataset.",
                    stacklevel=2,
                )
    if sum(lengths) != len(dataset):  # type: ignore[arg-type]
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    indices = randperm(sum(lengths), generator=generator).tolist()  # type: ignore[arg-type]
    return [
        Subset(dataset, indices[offset - length : offset])
        for offset, length in zip(itertools.accumulate(lengths), lengths)  # type: ignore[arg-type]
    ]
