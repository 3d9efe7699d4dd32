"""flambeau.Size (t.shape, t.size()): a tuple of ints whose slices, concatenations and
repetitions stay Sizes, as torch.Size's, and the cached device objects of t.device."""

import copy
import pickle

import numpy as np
import pytest

import flambeau


def test_shape_is_a_size_of_ints():
    s = flambeau.zeros(2, 3, 4).shape
    assert type(s) is flambeau.Size and isinstance(s, tuple)
    assert s == (2, 3, 4) and s != [2, 3, 4] and hash(s) == hash((2, 3, 4))
    assert [type(v) for v in s] == [int, int, int]
    assert s[0] == 2 and s[-1] == 4 and s.numel() == 24
    assert flambeau.ones(()).shape == () and flambeau.ones(()).shape.numel() == 1
    assert flambeau.zeros(5).size() == flambeau.Size([5])
    with pytest.raises(IndexError):
        s[3]


@pytest.mark.parametrize(
    "expr, want",
    [
        ("s[1:]", (3, 4)), ("s[::-1]", (4, 3, 2)), ("s[:]", (2, 3, 4)), ("s[5:]", ()),
        ("s + (5,)", (2, 3, 4, 5)), ("(1,) + s", (1, 2, 3, 4)), ("s + s", (2, 3, 4) * 2),
        ("s * 2", (2, 3, 4) * 2), ("2 * s", (2, 3, 4) * 2), ("s * 0", ()),
    ],
)  # fmt: skip
def test_slices_concatenations_and_repetitions_are_sizes(expr, want):
    got = eval(expr, {"s": flambeau.Size([2, 3, 4])})
    assert type(got) is flambeau.Size and got == want
    assert repr(got) == f"flambeau.Size({list(want)})"


def test_operands_that_are_not_tuples_or_ints_raise_type_error():
    s = flambeau.Size([2, 3])
    message = r"can only concatenate tuple \(not list\) to flambeau.Size"
    with pytest.raises(TypeError, match=message):
        s + [1]
    with pytest.raises(TypeError, match="can only concatenate list"):
        [1] + s
    with pytest.raises(TypeError):
        s * 1.5
    with pytest.raises(TypeError):
        1.5 * s


def test_the_constructor_takes_ints_and_what_has_index():
    assert flambeau.Size() == () and flambeau.Size(sizes=[2]) == (2,)
    got = flambeau.Size([True, np.int64(3), flambeau.tensor(4), -1])
    assert got == (1, 3, 4, -1) and [type(v) for v in got] == [int] * 4
    assert flambeau.Size(range(3)) == (0, 1, 2)
    with pytest.raises(TypeError, match=r"takes an iterable of 'int' \(item 1 is 'float'\)"):
        flambeau.Size([1, 2.5])
    with pytest.raises(TypeError, match="item 0 is 'str'"):
        flambeau.Size(["a"])
    with pytest.raises(TypeError, match="not iterable"):
        flambeau.Size(3)


def test_sizes_pickle_and_copy_as_sizes():
    s = flambeau.Size([2, 3])
    for got in (pickle.loads(pickle.dumps(s)), copy.copy(s), copy.deepcopy(s)):
        assert type(got) is flambeau.Size and got == s


def test_a_subclass_of_size_keeps_its_class():
    class Shape(flambeau.Size):
        __slots__ = ()

    s = Shape([2, 3])
    assert type(s[1:]) is Shape and type(s + (1,)) is Shape and type(s * 2) is Shape


def test_device_objects_are_shared_and_equal_fresh_ones():
    a, b = flambeau.ones(2), flambeau.zeros(3)
    assert a.device is b.device
    assert a.device == flambeau.device("cpu") and str(a.device) == "cpu"
    assert a.device.type == "cpu" and a.device.index is None
    m = flambeau.empty(2, device="meta")
    assert m.device == flambeau.device("meta") and m.device is not a.device
    assert {a.device: 1}[flambeau.device("cpu")] == 1
