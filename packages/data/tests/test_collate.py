"""default_collate and default_convert on nested structures, with PyTorch's results."""

from __future__ import annotations

import collections

import pytest

import flambeau
from flambeau.utils.data import default_collate, default_convert
from flambeau.utils.data._utils.collate import collate, default_collate_fn_map

np = pytest.importorskip("numpy")

Point = collections.namedtuple("Point", ["x", "y"])


def test_numbers_and_strings():
    t = default_collate([0, 1, 2, 3])
    assert t.dtype == flambeau.int64 and t.tolist() == [0, 1, 2, 3]
    f = default_collate([0.5, 1.5])
    assert f.dtype == flambeau.float64 and f.tolist() == [0.5, 1.5]
    assert default_collate(["a", "b"]) == ["a", "b"]
    assert default_collate([b"a", b"b"]) == [b"a", b"b"]
    b = default_collate([True, False])
    assert b.tolist() == [True, False]


def test_tensors_are_stacked():
    out = default_collate([flambeau.tensor([1, 2]), flambeau.tensor([3, 4])])
    assert out.shape == (2, 2) and out.tolist() == [[1, 2], [3, 4]]
    scalars = default_collate([flambeau.tensor(1.5), flambeau.tensor(2.5)])
    assert scalars.shape == (2,) and scalars.tolist() == [1.5, 2.5]
    with pytest.raises(RuntimeError):
        default_collate([flambeau.zeros(2), flambeau.zeros(3)])


def test_mapping_namedtuple_tuple_list():
    got = default_collate([{"A": 0, "B": 1}, {"A": 100, "B": 100}])
    assert set(got) == {"A", "B"}
    assert got["A"].tolist() == [0, 100] and got["B"].tolist() == [1, 100]
    p = default_collate([Point(0, 0), Point(1, 1)])
    assert type(p) is Point and p.x.tolist() == [0, 1] and p.y.tolist() == [0, 1]
    t = default_collate([(0, 1), (2, 3)])
    assert isinstance(t, list) and [v.tolist() for v in t] == [[0, 2], [1, 3]]
    lst = default_collate([[0, 1], [2, 3]])
    assert isinstance(lst, list) and [v.tolist() for v in lst] == [[0, 2], [1, 3]]
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal size"):
        default_collate([[0, 1], [2]])


def test_nested():
    batch = [
        {"img": flambeau.ones(2), "meta": {"id": 1, "name": "a"}, "pair": (1.0, [2, 3])},
        {"img": flambeau.zeros(2), "meta": {"id": 2, "name": "b"}, "pair": (3.0, [4, 5])},
    ]
    out = default_collate(batch)
    assert out["img"].tolist() == [[1.0, 1.0], [0.0, 0.0]]
    assert out["meta"]["id"].tolist() == [1, 2] and out["meta"]["name"] == ["a", "b"]
    first, second = out["pair"]
    assert first.tolist() == [1.0, 3.0]
    assert [v.tolist() for v in second] == [[2, 4], [3, 5]]


def test_numpy():
    out = default_collate(
        [np.array([1.0, 2.0], dtype=np.float32), np.array([3.0, 4.0], dtype=np.float32)]
    )
    assert out.dtype == flambeau.float32 and out.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    s = default_collate([np.int32(1), np.int32(2)])
    assert s.dtype == flambeau.int32 and s.tolist() == [1, 2]
    with pytest.raises(
        TypeError, match="default_collate: batch must contain tensors, numpy arrays"
    ):
        default_collate([np.array(["a"]), np.array(["b"])])


def test_uncollatable_raises_pytorchs_error():
    with pytest.raises(
        TypeError,
        match=r"default_collate: batch must contain tensors, numpy arrays, numbers, dicts or "
        r"lists; found <class 'object'>",
    ):
        default_collate([object(), object()])
    with pytest.raises(TypeError, match="found <class 'NoneType'>"):
        default_collate([None, None])


def test_custom_collate_fn_map():
    def as_len(batch, *, collate_fn_map):
        return len(batch)

    m = {**default_collate_fn_map, flambeau.Tensor: as_len}
    assert collate([{"t": flambeau.zeros(1)}] * 3, collate_fn_map=m) == {"t": 3}


def test_default_convert():
    assert default_convert(0) == 0
    t = default_convert(np.array([0, 1]))
    assert isinstance(t, flambeau.Tensor) and t.tolist() == [0, 1]
    p = default_convert(Point(np.array(0), np.array(1)))
    assert type(p) is Point and p.x.item() == 0
    lst = default_convert([np.array([0, 1]), np.array([2, 3])])
    assert [v.tolist() for v in lst] == [[0, 1], [2, 3]]
    assert isinstance(default_convert((np.array(1),)), list)
    d = default_convert({"a": np.array([1.5])})
    assert d["a"].tolist() == [1.5]
    strings = np.array(["x"])
    assert default_convert(strings) is strings
    assert default_convert("abc") == "abc"
