"""Samplers: exact outputs where they are determined, distributions checked statistically
(chi-square against tabulated critical values at p = 0.001, with fixed seeds)."""

from __future__ import annotations

import itertools

import pytest

import flambeau
from flambeau.utils.data import (
    BatchSampler,
    RandomSampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)
from flambeau.utils.data.distributed import DistributedSampler
from flambeau.utils.data.sampler import _index_batches, _Int64Views

# Upper 0.1% points of the chi-square distribution, by degrees of freedom.
CHI2_999 = {3: 16.266, 4: 18.467, 9: 27.877, 16: 39.252}


def chi2(counts, expected):
    return sum((c - e) ** 2 / e for c, e in zip(counts, expected))


def gen(seed):
    return flambeau.Generator().manual_seed(seed)


def test_sequential():
    s = SequentialSampler(range(5))
    assert list(s) == [0, 1, 2, 3, 4] and len(s) == 5


def test_random_sampler_is_a_uniform_permutation():
    n, rounds = 5, 4000
    s = RandomSampler(range(n), generator=gen(0))
    table = [[0] * n for _ in range(n)]  # position x value
    for _ in range(rounds):
        perm = list(s)
        assert sorted(perm) == list(range(n))
        for pos, v in enumerate(perm):
            table[pos][v] += 1
    # Each row and column sums to `rounds`: (n-1)^2 degrees of freedom.
    stat = chi2([c for row in table for c in row], [rounds / n] * (n * n))
    assert stat < CHI2_999[16], stat


def test_random_sampler_global_generator_repeats_with_manual_seed():
    flambeau.manual_seed(123)
    a = list(RandomSampler(range(20)))
    flambeau.manual_seed(123)
    b = list(RandomSampler(range(20)))
    assert a == b and sorted(a) == list(range(20))


def test_random_sampler_num_samples_without_replacement():
    s = RandomSampler(range(4), num_samples=10, generator=gen(1))
    out = list(s)
    assert len(out) == len(s) == 10
    # Two whole permutations, then part of a third.
    assert sorted(out[:4]) == [0, 1, 2, 3] and sorted(out[4:8]) == [0, 1, 2, 3]
    assert len(set(out[8:])) == 2


def test_random_sampler_with_replacement_is_uniform():
    n, m = 10, 20_000
    s = RandomSampler(range(n), replacement=True, num_samples=m, generator=gen(2))
    out = list(s)
    assert len(out) == m and all(0 <= v < n for v in out)
    counts = [out.count(v) for v in range(n)]
    assert chi2(counts, [m / n] * n) < CHI2_999[9]
    assert len(list(RandomSampler(range(n), replacement=True, num_samples=70))) == 70


def test_random_sampler_errors():
    with pytest.raises(TypeError, match="replacement should be a boolean value"):
        RandomSampler(range(3), replacement=1)
    with pytest.raises(ValueError, match="num_samples should be a positive integer value"):
        RandomSampler(range(3), num_samples=0)
    with pytest.raises(ValueError, match="num_samples should be a positive integer value"):
        RandomSampler([])


def test_subset_random_sampler():
    idx = [10, 20, 30, 40]
    s = SubsetRandomSampler(idx, generator=gen(4))
    out = list(s)
    assert sorted(out) == idx and len(s) == 4
    assert list(SubsetRandomSampler(idx, generator=gen(4))) == out
    # The first element is uniform over the indices.
    s = SubsetRandomSampler(idx, generator=gen(5))
    firsts = [next(iter(s)) for _ in range(4000)]
    assert chi2([firsts.count(v) for v in idx], [1000] * 4) < CHI2_999[3]


def test_weighted_random_sampler_with_replacement():
    w = [1.0, 2.0, 3.0, 4.0]
    m = 20_000
    out = list(WeightedRandomSampler(w, m, generator=gen(6)))
    assert len(out) == m
    counts = [out.count(v) for v in range(4)]
    assert chi2(counts, [m * wi / 10 for wi in w]) < CHI2_999[3]


def test_weighted_random_sampler_without_replacement():
    w = [1.0, 2.0, 3.0, 4.0]
    s = WeightedRandomSampler(w, 4, replacement=False, generator=gen(7))
    firsts = []
    for _ in range(4000):
        out = list(s)
        assert sorted(out) == [0, 1, 2, 3]
        firsts.append(out[0])
    # The first draw is proportional to the weights.
    assert chi2([firsts.count(v) for v in range(4)], [400 * wi for wi in w]) < CHI2_999[3]
    # A zero weight is never drawn.
    out = list(WeightedRandomSampler([0.0, 1.0, 1.0], 1000, generator=gen(8)))
    assert 0 not in out
    with pytest.raises(RuntimeError):
        list(WeightedRandomSampler(w, 5, replacement=False))


def test_weighted_random_sampler_errors():
    with pytest.raises(ValueError, match="num_samples should be a positive integer"):
        WeightedRandomSampler([1.0], True)
    with pytest.raises(ValueError, match="replacement should be a boolean value"):
        WeightedRandomSampler([1.0], 1, replacement=0)
    with pytest.raises(ValueError, match=r"weights should be a 1d sequence .* \(2, 1\)"):
        WeightedRandomSampler([[1.0], [2.0]], 1)
    assert WeightedRandomSampler([1, 2], 3).weights.dtype == flambeau.float64


def test_batch_sampler():
    assert list(BatchSampler(range(10), 3, False)) == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
    assert list(BatchSampler(range(10), 3, True)) == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]
    assert len(BatchSampler(range(10), 3, False)) == 4
    assert len(BatchSampler(range(10), 3, True)) == 3
    seq = SequentialSampler(range(7))
    assert list(BatchSampler(seq, 4, False)) == [[0, 1, 2, 3], [4, 5, 6]]
    for bad in (0, -1, True, 2.0):
        with pytest.raises(ValueError, match="batch_size should be a positive integer value"):
            BatchSampler(range(3), bad, False)
    with pytest.raises(ValueError, match="drop_last should be a boolean value"):
        BatchSampler(range(3), 1, 0)


@pytest.mark.parametrize("drop_last", [False, True])
@pytest.mark.parametrize(
    "make",
    [
        lambda g: RandomSampler(range(10), generator=g),
        lambda g: RandomSampler(range(10), num_samples=23, generator=g),
        lambda g: RandomSampler(range(10), replacement=True, num_samples=45, generator=g),
    ],
)
def test_batch_sampler_fast_path_matches_one_by_one(make, drop_last):
    # BatchSampler slices RandomSampler's runs; the batches are those of its indices
    # taken one by one.
    fast = list(BatchSampler(make(gen(9)), 4, drop_last))
    flat = list(make(gen(9)))
    slow = [flat[i : i + 4] for i in range(0, len(flat), 4)]
    if drop_last and len(slow[-1]) < 4:
        slow.pop()
    assert fast == slow


@pytest.mark.parametrize("drop_last", [False, True])
@pytest.mark.parametrize(
    "make",
    [
        lambda g: RandomSampler(range(10), num_samples=23, generator=g),
        lambda g: RandomSampler(range(10), replacement=True, num_samples=45, generator=g),
        lambda g: SequentialSampler(range(11)),
        lambda g: RandomSampler(range(70_000), generator=g),  # copied in pieces
    ],
)
def test_index_batches_as_raw_int64_match_the_lists(make, drop_last):
    # The DataLoader's workers get a TensorDataset's batches as raw int64 slices of the
    # sampler's runs (copied into two buffers used in turn): the batch sampler's lists.
    lists = list(BatchSampler(make(gen(9)), 4, drop_last))
    views = _Int64Views()
    for _ in range(3):  # the buffers are reused from epoch to epoch
        raw = _index_batches(BatchSampler(make(gen(9)), 4, drop_last), raw=views)
        assert [list(b) for b in raw] == lists
    tensors = _index_batches(BatchSampler(make(gen(9)), 4, drop_last))
    assert [b.tolist() for b in tensors] == lists
    assert _index_batches(BatchSampler(list(make(gen(9))), 4, drop_last)) is None


def test_random_sampler_draws_like_pytorch_with_a_generator():
    # PyTorch draws one more permutation for the (here empty) rest of num_samples: with a
    # generator of the caller's, the next epoch depends on it, so it is still drawn.
    g, h = gen(5), gen(5)
    first = list(RandomSampler(range(8), generator=g))
    assert first == flambeau.randperm(8, generator=h).tolist()
    flambeau.randperm(8, generator=h)  # the rest's draw
    assert list(RandomSampler(range(8), generator=g)) == flambeau.randperm(8, generator=h).tolist()


def test_distributed_sampler_hand_derived():
    ds = list(range(10))
    got = [list(DistributedSampler(ds, num_replicas=3, rank=r, shuffle=False)) for r in range(3)]
    # 10 indices padded to 12 with the first two, dealt round-robin.
    assert got == [[0, 3, 6, 9], [1, 4, 7, 0], [2, 5, 8, 1]]
    got = [
        list(DistributedSampler(ds, num_replicas=3, rank=r, shuffle=False, drop_last=True))
        for r in range(3)
    ]
    assert got == [[0, 3, 6], [1, 4, 7], [2, 5, 8]]
    assert len(DistributedSampler(ds, num_replicas=3, rank=0)) == 4
    # Padding longer than the dataset repeats it.
    assert list(DistributedSampler([0, 1], num_replicas=5, rank=4, shuffle=False)) == [0]


def test_distributed_sampler_shuffle_and_epoch():
    ds = list(range(12))
    parts = [DistributedSampler(ds, num_replicas=4, rank=r, seed=5) for r in range(4)]
    epoch0 = [list(p) for p in parts]
    assert sorted(itertools.chain(*epoch0)) == ds  # a partition of the dataset
    # The order is randperm(seed + epoch), dealt round-robin.
    perm = flambeau.randperm(12, generator=gen(5)).tolist()
    assert epoch0[1] == perm[1::4]
    for p in parts:
        p.set_epoch(1)
    epoch1 = [list(p) for p in parts]
    assert epoch1 != epoch0 and sorted(itertools.chain(*epoch1)) == ds
    assert epoch1[2] == flambeau.randperm(12, generator=gen(6)).tolist()[2::4]


def test_distributed_sampler_errors():
    with pytest.raises(
        ValueError, match=r"Invalid rank 3, rank should be in the interval \[0, 2\]"
    ):
        DistributedSampler(range(4), num_replicas=3, rank=3)
    with pytest.raises(ValueError, match="Invalid rank -1"):
        DistributedSampler(range(4), num_replicas=3, rank=-1)
    with pytest.raises((RuntimeError, ValueError)):
        DistributedSampler(range(4))  # no process group
