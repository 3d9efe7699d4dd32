"""Datasets and random_split, against hand-derived expectations."""

from __future__ import annotations

import warnings

import pytest

import flambeau
from flambeau.utils.data import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)


class Range(Dataset):
    def __init__(self, lo, hi):
        self.lo, self.hi = lo, hi

    def __len__(self):
        return self.hi - self.lo

    def __getitem__(self, i):
        if not 0 <= i < len(self):
            raise IndexError(i)
        return self.lo + i


class Stream(IterableDataset):
    def __init__(self, items):
        self.items = items

    def __iter__(self):
        return iter(self.items)

    def __len__(self):
        return len(self.items)


def test_dataset_base_raises():
    with pytest.raises(NotImplementedError, match="Subclasses of Dataset should implement"):
        Dataset()[0]


def test_tensor_dataset():
    x = flambeau.arange(12.0).reshape(4, 3)
    y = flambeau.tensor([7, 8, 9, 10])
    ds = TensorDataset(x, y)
    assert len(ds) == 4
    a, b = ds[2]
    assert a.tolist() == [6.0, 7.0, 8.0] and b.item() == 9
    items = ds.__getitems__([3, 0])
    assert [(a.tolist(), b.item()) for a, b in items] == [
        ([9.0, 10.0, 11.0], 10),
        ([0.0, 1.0, 2.0], 7),
    ]
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        TensorDataset(x, flambeau.zeros(3))


def test_tensor_dataset_fast_batch_equals_per_sample():
    x = flambeau.arange(20.0).reshape(10, 2)
    y = flambeau.arange(10)
    ds = TensorDataset(x, y)
    fx, fy = ds._fast_batch([4, 1, 9], None)
    assert fx.tolist() == [[8.0, 9.0], [2.0, 3.0], [18.0, 19.0]]
    assert fy.tolist() == [4, 1, 9]
    # Negative and out-of-range indices leave it to the per-sample path.
    assert ds._fast_batch([-1], None) is None
    assert ds._fast_batch([10], None) is None


def test_concat_dataset_and_add():
    ds = Range(0, 3) + Range(10, 12)
    assert isinstance(ds, ConcatDataset)
    assert len(ds) == 5
    assert [ds[i] for i in range(5)] == [0, 1, 2, 10, 11]
    assert ds[-1] == 11 and ds[-5] == 0
    assert ds.cumulative_sizes == [3, 5]
    with pytest.raises(ValueError, match="absolute value of index"):
        ds[-6]
    with pytest.raises(AssertionError, match="should not be an empty iterable"):
        ConcatDataset([])
    with pytest.raises(AssertionError, match="does not support IterableDataset"):
        ConcatDataset([Stream([1])])
    with pytest.warns(FutureWarning):
        assert ds.cummulative_sizes == [3, 5]


def test_chain_dataset():
    ds = Stream([1, 2]) + Stream([3])
    assert isinstance(ds, ChainDataset)
    assert list(ds) == [1, 2, 3]
    assert len(ds) == 3
    with pytest.raises(AssertionError, match="only supports IterableDataset"):
        list(ChainDataset([Range(0, 2)]))


def test_stack_dataset():
    a, b = Range(0, 3), Range(10, 13)
    t = StackDataset(a, b)
    assert len(t) == 3 and t[1] == (1, 11)
    assert t.__getitems__([2, 0]) == [(2, 12), (0, 10)]
    d = StackDataset(x=a, y=b)
    assert d[2] == {"x": 2, "y": 12}
    assert d.__getitems__([0, 1]) == [{"x": 0, "y": 10}, {"x": 1, "y": 11}]
    with pytest.raises(ValueError, match="Size mismatch between datasets"):
        StackDataset(a, Range(0, 2))
    with pytest.raises(ValueError, match="At least one dataset should be passed"):
        StackDataset()
    with pytest.raises(ValueError, match="both types are given"):
        StackDataset(a, y=b)


def test_subset():
    base = Range(100, 110)
    s = Subset(base, [9, 0, 4])
    assert len(s) == 3
    assert [s[i] for i in range(3)] == [109, 100, 104]
    assert s.__getitems__([2, 0]) == [104, 109]
    x = flambeau.arange(10)
    st = Subset(TensorDataset(x), [5, 6, 7])
    (got,) = st._fast_batch([2, 0], None)
    assert got.tolist() == [7, 5]

    class Bad(Subset):
        def __getitem__(self, idx):
            return 0

    with pytest.raises(NotImplementedError, match="overrides __getitem__ but not __getitems__"):
        Bad(base, [0])


def test_random_split_lengths_partition():
    ds = Range(0, 10)
    g = flambeau.Generator().manual_seed(3)
    parts = random_split(ds, [3, 7], generator=g)
    assert [len(p) for p in parts] == [3, 7]
    values = sorted(v for p in parts for v in (p[i] for i in range(len(p))))
    assert values == list(range(10))
    # Same generator seed, same split.
    again = random_split(ds, [3, 7], generator=flambeau.Generator().manual_seed(3))
    assert [list(p.indices) for p in again] == [list(p.indices) for p in parts]
    # The split is randperm's order cut at the lengths.
    perm = flambeau.randperm(10, generator=flambeau.Generator().manual_seed(3)).tolist()
    assert list(parts[0].indices) == perm[:3] and list(parts[1].indices) == perm[3:]


def test_random_split_fractions():
    ds = Range(0, 11)
    parts = random_split(ds, [0.5, 0.3, 0.2], generator=flambeau.Generator().manual_seed(0))
    # floor: 5, 3, 2 (sum 10); the remainder 1 goes to the first.
    assert [len(p) for p in parts] == [6, 3, 2]
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        random_split(Range(0, 2), [1.0, 0.0])
    with pytest.raises(ValueError, match="Sum of input lengths does not equal"):
        random_split(ds, [3, 3])
    with pytest.raises(ValueError, match="Fraction at index 0 is not between 0 and 1"):
        random_split(ds, [1.5, -0.5])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        random_split(ds, [0.5, 0.5])
