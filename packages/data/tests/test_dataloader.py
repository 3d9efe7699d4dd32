"""The DataLoader in the main process: arguments, errors, batching, len, pin_memory,
resume. Workers are tested in test_workers.py."""

from __future__ import annotations

import warnings

import pytest

import flambeau
from flambeau.utils.data import (
    BatchSampler,
    DataLoader,
    Dataset,
    IterableDataset,
    RandomSampler,
    SequentialSampler,
    Subset,
    TensorDataset,
)


class Squares(Dataset):
    def __init__(self, n):
        self.n = n
        self.getitem_calls = 0

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        self.getitem_calls += 1
        return i * i


class Count(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        return self.n


def values(loader):
    return [b.tolist() if isinstance(b, flambeau.Tensor) else b for b in loader]


def test_defaults_and_sequential_batches():
    dl = DataLoader(Squares(5), batch_size=2)
    assert dl.batch_size == 2 and dl.num_workers == 0 and dl.timeout == 0
    assert dl.prefetch_factor is None and not dl.drop_last and dl.in_order
    assert isinstance(dl.sampler, SequentialSampler) and isinstance(dl.batch_sampler, BatchSampler)
    assert values(dl) == [[0, 1], [4, 9], [16]]
    assert len(dl) == 3
    assert values(DataLoader(Squares(5), batch_size=2, drop_last=True)) == [[0, 1], [4, 9]]
    assert len(DataLoader(Squares(5), batch_size=2, drop_last=True)) == 2
    assert values(DataLoader(Squares(3))) == [[0], [1], [4]]


def test_batch_size_none_converts_samples():
    dl = DataLoader(Squares(3), batch_size=None)
    assert dl.batch_sampler is None
    assert values(dl) == [0, 1, 4]
    ds = TensorDataset(flambeau.arange(3))
    out = list(DataLoader(ds, batch_size=None))
    # default_convert turns each sample's tuple into a list (as PyTorch does).
    assert all(isinstance(s, list) for s in out)
    assert [t.item() for (t,) in out] == [0, 1, 2]


def test_shuffle_and_generator():
    ds = Squares(10)
    a = values(
        DataLoader(ds, batch_size=4, shuffle=True, generator=flambeau.Generator().manual_seed(1))
    )
    b = values(
        DataLoader(ds, batch_size=4, shuffle=True, generator=flambeau.Generator().manual_seed(1))
    )
    assert a == b
    assert sorted(v for batch in a for v in batch) == [i * i for i in range(10)]
    dl = DataLoader(ds, batch_size=4, shuffle=True)
    assert isinstance(dl.sampler, RandomSampler)
    flambeau.manual_seed(7)
    e1 = values(dl)
    e2 = values(dl)
    flambeau.manual_seed(7)
    assert values(dl) == e1 and e1 != e2  # reshuffled each epoch, repeatable by seed


def test_sampler_and_batch_sampler():
    ds = Squares(6)
    assert values(DataLoader(ds, sampler=[5, 0, 3], batch_size=2)) == [[25, 0], [9]]
    assert values(DataLoader(ds, batch_sampler=[[1, 2], [5]])) == [[1, 4], [25]]
    assert len(DataLoader(ds, batch_sampler=[[1, 2], [5]])) == 2


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"num_workers": -1}, ValueError, "num_workers option should be non-negative"),
        ({"timeout": -1}, ValueError, "timeout option should be non-negative"),
        ({"prefetch_factor": 2}, ValueError, "prefetch_factor option could only be specified"),
        (
            {"num_workers": 1, "prefetch_factor": -1},
            ValueError,
            "prefetch_factor option should be non-negative",
        ),
        (
            {"persistent_workers": True},
            ValueError,
            "persistent_workers option needs num_workers > 0",
        ),
        (
            {"sampler": [0], "shuffle": True},
            ValueError,
            "sampler option is mutually exclusive with shuffle",
        ),
        (
            {"batch_sampler": [[0]], "batch_size": 2},
            ValueError,
            "batch_sampler option is mutually exclusive",
        ),
        (
            {"batch_sampler": [[0]], "shuffle": True},
            ValueError,
            "batch_sampler option is mutually exclusive",
        ),
        (
            {"batch_sampler": [[0]], "drop_last": True},
            ValueError,
            "batch_sampler option is mutually exclusive",
        ),
        (
            {"batch_sampler": [[0]], "sampler": [0]},
            ValueError,
            "batch_sampler option is mutually exclusive",
        ),
        (
            {"batch_size": None, "drop_last": True},
            ValueError,
            "batch_size=None option disables auto-batching",
        ),
        (
            {"multiprocessing_context": "fork"},
            ValueError,
            "multiprocessing_context can only be used with",
        ),
        (
            {"num_workers": 1, "multiprocessing_context": "nope"},
            ValueError,
            "should specify a valid start method",
        ),
        (
            {"num_workers": 1, "multiprocessing_context": 3},
            TypeError,
            "should be a valid context object",
        ),
    ],
)
def test_argument_errors(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        DataLoader(Squares(3), **kwargs)


def test_iterable_dataset_errors_and_len():
    with pytest.raises(
        ValueError, match="expected unspecified shuffle option, but got shuffle=True"
    ):
        DataLoader(Count(3), shuffle=True)
    with pytest.raises(ValueError, match="expected unspecified sampler option"):
        DataLoader(Count(3), sampler=[0])
    with pytest.raises(ValueError, match="expected unspecified batch_sampler option"):
        DataLoader(Count(3), batch_sampler=[[0]])
    DataLoader(Count(3), shuffle=False)  # False is accepted
    dl = DataLoader(Count(7), batch_size=3)
    assert len(dl) == 3 and values(dl) == [[0, 1, 2], [3, 4, 5], [6]]
    assert len(DataLoader(Count(7), batch_size=3, drop_last=True)) == 2
    assert values(DataLoader(Count(7), batch_size=3, drop_last=True)) == [[0, 1, 2], [3, 4, 5]]
    assert values(DataLoader(Count(3), batch_size=None)) == [0, 1, 2]


def test_iterable_dataset_longer_than_its_len_warns():
    class Liar(Count):
        def __len__(self):
            return 2

    dl = DataLoader(Liar(4), batch_size=1)
    assert len(dl) == 2
    with pytest.warns(UserWarning, match="was reported to be 2"):
        list(dl)


def test_attributes_frozen_after_init():
    dl = DataLoader(Squares(3))
    for attr in (
        "batch_size",
        "batch_sampler",
        "sampler",
        "drop_last",
        "dataset",
        "persistent_workers",
    ):
        with pytest.raises(
            ValueError, match=f"{attr} attribute should not be set after DataLoader is initialized"
        ):
            setattr(dl, attr, None)
    dl.num_workers = 0  # others may change


def test_getitems_is_used():
    class Batched(Squares):
        def __getitems__(self, indices):
            self.batches = getattr(self, "batches", 0) + 1
            return [i * i for i in indices]

    ds = Batched(6)
    assert values(DataLoader(ds, batch_size=4)) == [[0, 1, 4, 9], [16, 25]]
    assert ds.batches == 2 and ds.getitem_calls == 0


def test_tensor_dataset_batches_and_custom_collate():
    x = flambeau.arange(12.0).reshape(6, 2)
    y = flambeau.arange(6)
    ds = TensorDataset(x, y)
    out = list(DataLoader(ds, batch_size=4))
    assert isinstance(out[0], list) and len(out[0]) == 2
    assert out[0][0].tolist() == x[:4].tolist() and out[1][1].tolist() == [4, 5]
    # A custom collate_fn sees the samples, as __getitem__ gives them.
    seen = []

    def collate(samples):
        seen.append(samples)
        return len(samples)

    assert list(DataLoader(ds, batch_size=4, collate_fn=collate)) == [4, 2]
    assert isinstance(seen[0], list) and seen[0][1][0].tolist() == [2.0, 3.0]
    assert seen[0][1][1].item() == 1
    # A bad index raises PyTorch's IndexError through the per-sample path.
    with pytest.raises(IndexError):
        list(DataLoader(ds, sampler=[6], batch_size=1))
    assert [b[1].tolist() for b in DataLoader(ds, sampler=[-1], batch_size=1)] == [[5]]


def test_pin_memory_is_a_noop_without_accelerator():
    ds = TensorDataset(flambeau.arange(4))
    with pytest.warns(UserWarning, match="no accelerator is found"):
        out = list(DataLoader(ds, batch_size=2, pin_memory=True))
    assert [b[0].tolist() for b in out] == [[0, 1], [2, 3]]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        list(DataLoader(ds, batch_size=2))


def test_too_many_workers_warns():
    with pytest.warns(UserWarning, match="This DataLoader will create 1000 worker processes"):
        DataLoader(Squares(3), num_workers=1000)


def test_state_dict_resume_mid_epoch():
    ds = Squares(20)
    g = flambeau.Generator().manual_seed(11)
    dl = DataLoader(ds, batch_size=3, shuffle=True, generator=g)
    it = iter(dl)
    head = [next(it).tolist() for _ in range(3)]
    state = dl.state_dict()
    tail = [b.tolist() for b in it]
    # A new loader (another process after a restart) resumes: the same remaining batches.
    dl2 = DataLoader(ds, batch_size=3, shuffle=True, generator=flambeau.Generator().manual_seed(99))
    dl2.load_state_dict(state)
    ds.getitem_calls = 0
    assert [b.tolist() for b in dl2] == tail
    assert ds.getitem_calls == 20 - 9  # the consumed batches are skipped, not read
    assert len(head) == 3


def test_state_dict_resume_global_generator_is_left_alone():
    ds = Squares(10)
    flambeau.manual_seed(5)
    dl = DataLoader(ds, batch_size=2, shuffle=True)
    it = iter(dl)
    next(it)
    state = dl.state_dict()
    tail = [b.tolist() for b in it]
    flambeau.manual_seed(1234)
    before = flambeau.get_rng_state()
    dl2 = DataLoader(ds, batch_size=2, shuffle=True)
    dl2.load_state_dict(state)
    assert [b.tolist() for b in dl2] == tail
    assert flambeau.equal(flambeau.get_rng_state(), before)


def test_state_dict_between_epochs_and_iterable():
    ds = Squares(6)
    dl = DataLoader(ds, batch_size=2, shuffle=True, generator=flambeau.Generator().manual_seed(3))
    list(dl)
    state = dl.state_dict()  # the next epoch, from its start
    nxt = values(dl)
    dl.load_state_dict(state)
    assert values(dl) == nxt
    it_dl = DataLoader(Count(7), batch_size=2)
    it = iter(it_dl)
    next(it)
    state = it_dl.state_dict()
    it_dl2 = DataLoader(Count(7), batch_size=2)
    it_dl2.load_state_dict(state)
    assert values(it_dl2) == [[2, 3], [4, 5], [6]]
    with pytest.raises(ValueError, match="not a state_dict of a DataLoader"):
        dl.load_state_dict({})


class _Plain(TensorDataset):
    """A TensorDataset whose subclass loses the batched gather: per-sample, by lists."""

    def __getitems__(self, indices):
        assert isinstance(indices, list)
        return super().__getitems__(indices)


@pytest.mark.parametrize(
    "kw",
    [
        {"shuffle": True},
        {"shuffle": False},
        {"shuffle": True, "drop_last": True},
        {"sampler": "replacement"},
        {"sampler": "more_than_n"},
    ],
)
def test_tensor_dataset_batches_match_the_per_sample_path(kw):
    # The loader gathers a TensorDataset's batches with slices of the sampler's index
    # tensors; they must be the batches of lists of indices, draw for draw.
    x = flambeau.arange(46.0).reshape(23, 2)
    kw = dict(kw)
    which = kw.pop("sampler", None)

    def run(cls):
        ds = cls(x, flambeau.arange(23))
        g = flambeau.Generator().manual_seed(5)
        if which == "replacement":
            kw["sampler"] = RandomSampler(ds, replacement=True, num_samples=70, generator=g)
        elif which == "more_than_n":
            kw["sampler"] = RandomSampler(ds, num_samples=50, generator=g)
        else:
            kw["generator"] = g
        return [(b[0].tolist(), b[1].tolist()) for b in DataLoader(ds, batch_size=4, **kw)]

    fast, plain = run(TensorDataset), run(_Plain)
    assert fast == plain
    assert all(xs == [[2.0 * i, 2.0 * i + 1] for i in idx] for xs, idx in fast)
    n = {"replacement": 70, "more_than_n": 50}.get(which, 23)
    assert sum(len(i) for _, i in fast) == (n // 4 * 4 if kw.get("drop_last") else n)


def test_subset_of_tensor_dataset_batches():
    ds = TensorDataset(flambeau.arange(23))
    sub = Subset(ds, list(range(22, -1, -1)))
    out = [b[0].tolist() for b in DataLoader(sub, batch_size=5)]
    assert out == [[22 - i for i in range(j, min(j + 5, 23))] for j in range(0, 23, 5)]


def test_tensor_dataset_out_of_range_sampler_raises_pytorchs_error():
    ds = TensorDataset(flambeau.arange(4))
    bigger = RandomSampler(range(10), generator=flambeau.Generator().manual_seed(0))
    with pytest.raises(IndexError):
        list(DataLoader(ds, batch_size=10, sampler=bigger))
