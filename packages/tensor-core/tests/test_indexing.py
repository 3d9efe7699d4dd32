"""Indexing: basic indices give views matching NumPy, advanced ones (tensors, lists, arrays,
masks) give copies with NumPy's placement of the index dims; __setitem__ writes either way."""

import warnings

import numpy as np
import pytest

import flambeau as torch

INDICES = [
    0,
    -1,
    2,
    (1, 2),
    (-2, -3, 1),
    slice(None),
    slice(1, 3),
    slice(None, None, 2),
    slice(-3, None),
    slice(10, 20),
    slice(-100, 100, 3),
    slice(2, 1),
    (slice(None), 1),
    (Ellipsis, 0),
    (0, Ellipsis),
    (Ellipsis,),
    (None,),
    (None, 1, None),
    (1, None, ..., None),
    (slice(None), None, slice(1, None, 2)),
    (..., None),
    (),
    Ellipsis,
    None,
    (0, 1, 2),
    (slice(1, None), Ellipsis, slice(None, None, 3)),
    np.int64(1),
    (np.int32(-1), slice(None, 2)),
]


def base():
    return np.arange(3 * 4 * 5, dtype=np.float32).reshape(3, 4, 5)


@pytest.mark.parametrize("index", INDICES, ids=[repr(i) for i in INDICES])
def test_getitem_matches_numpy_and_is_a_view(index):
    a = base()
    t = torch.from_numpy(a.copy())
    r = t[index]
    np.testing.assert_array_equal(r.numpy(), a[index])
    assert r._is_view_of(t)


@pytest.mark.parametrize("index", INDICES, ids=[repr(i) for i in INDICES])
def test_setitem_number_and_tensor(index):
    a = base()
    t = torch.from_numpy(a.copy())
    t[index] = -1.0
    a[index] = -1.0
    np.testing.assert_array_equal(t.numpy(), a)
    shape = a[index].shape
    src = np.asarray(np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape) + 100)
    t[index] = torch.from_numpy(src)  # converted to the destination's dtype
    a[index] = src
    np.testing.assert_array_equal(t.numpy(), a)


def test_getitem_on_noncontiguous_and_transposed():
    a = base()
    t = torch.from_numpy(a.copy()).transpose(0, 2)[:, 1::2]
    an = a.transpose(2, 1, 0)[:, 1::2]
    for index in [(1, 0), (slice(None, None, 2), ..., 1), (None, 2, slice(1, 2))]:
        np.testing.assert_array_equal(t[index].numpy(), an[index])


def test_setitem_broadcasts_and_writes_through_views():
    t = torch.zeros(3, 4)
    t[1] = torch.arange(4.0)
    t[:, 0] = 7
    t[2, 1:] = torch.tensor(5.0) if hasattr(torch, "tensor") else torch.full((), 5.0)
    v = t[0]
    v[3] = -2
    expected = np.zeros((3, 4), np.float32)
    expected[1] = np.arange(4)
    expected[:, 0] = 7
    expected[2, 1:] = 5
    expected[0, 3] = -2
    np.testing.assert_array_equal(t.numpy(), expected)
    with pytest.raises(RuntimeError, match="broadcast"):
        t[0] = torch.zeros(3)


def test_bool_scalar_indices():
    t = torch.arange(6).reshape(2, 3)
    assert t[True].shape == (1, 2, 3)
    assert t[False].shape == (0, 2, 3)
    assert t[None, True, 0].shape == (1, 1, 3)


def test_index_errors():
    t = torch.zeros(3, 4)
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 0 with size 3"):
        t[5]
    with pytest.raises(IndexError, match="index -5 is out of bounds for dimension 1 with size 4"):
        t[0, -5]
    with pytest.raises(IndexError, match="too many indices for tensor of dimension 2"):
        t[0, 0, 0]
    with pytest.raises(IndexError, match="single ellipsis"):
        t[..., ...]
    with pytest.raises(IndexError, match="invalid index of a 0-dim tensor"):
        t[0, 0][0]
    with pytest.raises(ValueError, match="step must be greater than zero"):
        t[::-1]
    with pytest.raises(ValueError):
        t[::0]
    with pytest.raises(IndexError):
        t[5] = 1.0


def test_zero_dim_integer_tensor_acts_as_int():
    t = torch.arange(10).reshape(5, 2)
    i = torch.arange(5)[3]
    np.testing.assert_array_equal(t[i].numpy(), [6, 7])


def test_setitem_rejects_other_values():
    t = torch.zeros(3)
    with pytest.raises(TypeError, match="Tensor or a Python number"):
        t[0] = "x"


def test_iteration_over_dim0():
    t = torch.arange(6).reshape(3, 2)
    rows = list(t)
    assert len(rows) == 3 and all(r._is_view_of(t) for r in rows)
    np.testing.assert_array_equal(rows[2].numpy(), [4, 5])
    with pytest.raises(TypeError, match="0-d"):
        iter(torch.zeros(()))


# ---- advanced indexing


def arange_np(*shape):
    return np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)


def numpy_index(index):
    """The NumPy index meaning what index means to PyTorch: tensors as arrays, and a short
    list holding a sequence, slice, None, Ellipsis or tensor read as the tuple of its items
    (PyTorch's rule, which NumPy dropped)."""
    as_np = lambda i: i.numpy() if isinstance(i, torch.Tensor) else i  # noqa: E731
    if isinstance(index, list):
        if not index:
            return np.array([], dtype=np.int64)
        if len(index) < 32 and any(
            isinstance(i, (list, tuple, slice, torch.Tensor)) or i is None or i is Ellipsis
            for i in index
        ):
            return tuple(as_np(i) for i in index)
    if isinstance(index, tuple):
        return tuple(as_np(i) for i in index)
    return as_np(index)


ADVANCED = [
    lambda: [0, 2, -1],
    lambda: np.array([[0, 1], [2, 2]]),
    lambda: torch.tensor([1, 0]),
    lambda: torch.tensor([1, 0], dtype=torch.int32),
    lambda: (slice(None), [3, 0]),
    lambda: ([0, 2], slice(None), [4, 1]),  # separated: index dims first
    lambda: (slice(None), [[0], [3]], [1, 4]),  # adjacent: in place
    lambda: (..., [0, 4]),
    lambda: ([1], None, [2]),
    lambda: np.arange(3 * 4).reshape(3, 4) % 3 == 0,  # full-prefix mask
    lambda: (slice(1, None), np.array([True, False, True, True])),
    lambda: (np.arange(3) > 0, slice(None, None, 2), [1]),
    lambda: ([0, 1], True),
    lambda: ([0], False),
    lambda: (torch.tensor([2, 0]), ..., None),
    lambda: [],
    lambda: (slice(None, None, 2), [[0, 1]], slice(1, 4, 2)),
]


@pytest.mark.parametrize("make_index", ADVANCED, ids=[str(i) for i in range(len(ADVANCED))])
def test_advanced_getitem_matches_numpy_and_copies(make_index):
    a = arange_np(3, 4, 5)
    t = torch.from_numpy(a.copy())
    index = make_index()
    np_index = numpy_index(index)
    r = t[index]
    np.testing.assert_array_equal(r.numpy(), a[np_index])
    assert not r._is_view_of(t)


@pytest.mark.parametrize("make_index", ADVANCED, ids=[str(i) for i in range(len(ADVANCED))])
def test_advanced_setitem_matches_numpy(make_index):
    a = arange_np(3, 4, 5)
    t = torch.from_numpy(a.copy())
    index = make_index()
    np_index = numpy_index(index)
    t[index] = -1.0
    a[np_index] = -1.0
    np.testing.assert_array_equal(t.numpy(), a)
    shape = a[np_index].shape
    values = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape) + 100
    t[index] = torch.from_numpy(values)  # cast to float32
    a[np_index] = values
    np.testing.assert_array_equal(t.numpy(), a)


def test_short_list_of_indices_reads_as_a_tuple_with_a_warning():
    # PyTorch's rule (from old NumPy): x[[a, b]] is x[a, b] when the list holds a
    # sequence, slice, None, Ellipsis or tensor; a list of ints stays one index.
    a = arange_np(3, 4, 5)
    t = torch.from_numpy(a.copy())
    for index, expected in (
        ([slice(None), slice(0, 2)], a[:, 0:2]),
        ([None, 0], a[None, 0]),
        ([Ellipsis, 1], a[..., 1]),
        ([[0, 1], [1, 0]], a[[0, 1], [1, 0]]),
        ([torch.tensor([0, 2]), 1], a[[0, 2], 1]),
    ):
        with pytest.warns(UserWarning, match="non-tuple sequence for multidimensional"):
            np.testing.assert_array_equal(t[index].numpy(), expected)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(t[[0, 2, 2]].numpy(), a[[0, 2, 2]])
        np.testing.assert_array_equal(t[np.array([[0, 1], [1, 0]])].numpy(), a[[[0, 1], [1, 0]]])
        assert t[list(range(3)) * 11].shape == (33, 4, 5)  # 32 items or more: one index
    with pytest.warns(UserWarning):
        t[[slice(None), 0]] = -1.0
    assert (t[:, 0] == -1).all() and (t[:, 1:] != -1).all()


def test_integers_select_before_advanced_placement():
    # PyTorch applies integer indices first: they never separate the advanced ones.
    t = torch.from_numpy(arange_np(2, 3, 4))
    assert t[0, :, [1, 2]].shape == (3, 2)
    assert t[[0, 1], :, [1, 2]].shape == (2, 3)
    assert t[:, [0, 1], [1, 2]].shape == (2, 2)
    assert t[torch.tensor(1), :, [0, 1]].shape == (3, 2)


def test_setitem_broadcasts_and_casts():
    t = torch.zeros(4, 3, dtype=torch.int64)
    t[[0, 2]] = torch.tensor([1.7, 2.2, 3.9])  # broadcast over rows, cast to int64
    np.testing.assert_array_equal(t.numpy()[[0, 2]], [[1, 2, 3], [1, 2, 3]])
    t[t > 1] = 0
    np.testing.assert_array_equal(t.numpy(), [[1, 0, 0], [0, 0, 0], [1, 0, 0], [0, 0, 0]])
    t[:, torch.tensor([True, False, True])] = torch.tensor([[5], [6], [7], [8]])
    np.testing.assert_array_equal(t.numpy()[:, 0], [5, 6, 7, 8])
    np.testing.assert_array_equal(t.numpy()[:, 2], [5, 6, 7, 8])
    with pytest.raises(RuntimeError, match="shape mismatch"):
        t[[0, 1]] = torch.zeros(3, 3)


def test_setitem_drops_leading_ones_of_the_value():
    # PyTorch views the value without its leading size-1 dims before broadcasting, so a
    # (1, 1, n) value fills an (n,) row, through basic and advanced indexing alike.
    t = torch.zeros(3, 4)
    t[1] = torch.arange(4.0).reshape(1, 1, 4)
    t[[0, 2]] = torch.full((1, 1, 1, 4), 2.0)
    t[0:1, 0] = torch.full((1, 1, 1), 9.0)
    expected = np.array([[9, 2, 2, 2], [0, 1, 2, 3], [2, 2, 2, 2]], np.float32)
    np.testing.assert_array_equal(t.numpy(), expected)
    with pytest.raises(RuntimeError, match="broadcast"):
        t[0] = torch.zeros(2, 4)  # only size-1 dims are dropped
    # A value of the destination's own shape is copied as it is: assigning a size-1 view
    # to itself (what x[i] += v does) is a full overlap, allowed as in PyTorch.
    x = torch.arange(3.0).reshape(3, 1)
    x[1] = x[1]
    img = torch.zeros(1, 1, 4, 4)
    img[0, :, 1, 2] += 5.0
    assert x.flatten().tolist() == [0.0, 1.0, 2.0] and img.sum().item() == 5.0
    # A 0-dim value fills with its number, so it may overlap the destination.
    r = torch.arange(4.0)
    r[0:2] = r[1]
    assert r.tolist() == [1.0, 1.0, 2.0, 3.0]


def test_mask_select_on_views():
    a = arange_np(6, 5)[::2, 1:]
    t = torch.from_numpy(arange_np(6, 5))[::2, 1:]
    m = a > 10
    np.testing.assert_array_equal(t[torch.from_numpy(m)].numpy(), a[m])


def test_any_sequence_indexes_like_a_list():
    # x[range(n), y] is common in real programs (picking one entry per row).
    t = torch.arange(12.0).reshape(3, 4)
    expected = np.arange(12.0).reshape(3, 4)[range(3), [1, 0, 3]]
    np.testing.assert_array_equal(t[range(3), [1, 0, 3]].numpy(), expected)
    np.testing.assert_array_equal(t[range(1, 3)].numpy(), np.arange(12.0).reshape(3, 4)[1:3])
    t[range(3), torch.tensor([0, 1, 2])] = -1.0
    assert t.diagonal().tolist() == [-1.0, -1.0, -1.0]
    with pytest.raises(TypeError):
        t[b"ab"]


def test_advanced_index_errors():
    t = torch.zeros(3, 4)
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 0 with size 3"):
        t[[5]]
    with pytest.raises(IndexError, match="index -9 is out of bounds for dimension 1 with size 4"):
        t[:, torch.tensor([0, -9])]
    with pytest.raises(IndexError, match="index 3 is out of bounds for dimension 0 with size 3"):
        t[[3]] = 1.0
    with pytest.raises(IndexError, match="tensors used as indices must be long, int, byte or bool"):
        t[torch.tensor([1.0])]
    with pytest.raises(IndexError, match="shape of the mask"):
        t[torch.ones(2, 2, dtype=torch.bool)]
    with pytest.raises(IndexError, match="could not be broadcast together with shapes"):
        t[[0, 1], [0, 1, 2]]
    with pytest.raises(IndexError, match="too many indices"):
        t[[0], [0], [0]]
    with pytest.raises(IndexError, match="valid indices"):
        t[1.5]
    with pytest.raises(TypeError, match="str"):
        t["a"]
    with pytest.raises(TypeError):
        t[[0, 1]] = "x"


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_, np.int16, np.complex128])
def test_gather_along_dim0_of_rows_matches_numpy(dtype):
    g = np.random.default_rng(5)
    src = (g.standard_normal((300, 130)) * 10).astype(dtype)
    idx = g.integers(0, 300, (1000, 130))
    out = torch.gather(torch.from_numpy(src), 0, torch.from_numpy(idx))
    np.testing.assert_array_equal(out.numpy(), np.take_along_axis(src, idx, 0))
    narrow = idx[:, :70]  # index narrower than src: rows of the index, not of src
    out = torch.gather(torch.from_numpy(src), 0, torch.from_numpy(narrow))
    np.testing.assert_array_equal(out.numpy(), np.take_along_axis(src[:, :70], narrow, 0))
    idx[777, 99] = 300
    with pytest.raises(
        IndexError, match="index 300 is out of bounds for dimension 0 with size 300"
    ):
        torch.gather(torch.from_numpy(src), 0, torch.from_numpy(idx))


# ---- the operators' error messages


def test_operator_errors():
    x = torch.zeros(3, 4)
    i = torch.tensor([[0, 3]])
    with pytest.raises(IndexError, match="index 3 is out of bounds for dimension 0 with size 3"):
        torch.gather(x, 0, i)
    with pytest.raises(IndexError, match="index -1 is out of bounds for dimension 1 with size 4"):
        torch.gather(x, 1, torch.tensor([[-1]]))
    with pytest.raises(RuntimeError, match="int64"):
        torch.gather(x, 0, torch.tensor([[0.0]]))
    with pytest.raises(RuntimeError, match="same number of dimensions"):
        torch.gather(x, 0, torch.tensor([0]))
    with pytest.raises(RuntimeError, match="no larger than self"):
        torch.gather(x, 0, torch.zeros(2, 5, dtype=torch.int64))
    with pytest.raises(IndexError, match="Dimension out of range|out of range"):
        torch.gather(x, 2, i)
    with pytest.raises(RuntimeError, match="dtype"):
        x.scatter(0, i, torch.zeros(1, 2, dtype=torch.float64))
    with pytest.raises(RuntimeError, match="add or multiply"):
        x.scatter(0, torch.zeros(1, 1, dtype=torch.int64), 1.0, reduce="max")
    with pytest.raises(RuntimeError, match="reduce"):
        x.scatter_reduce(0, torch.zeros(1, 1, dtype=torch.int64), x, "median")
    with pytest.raises(IndexError, match="index 4 is out of bounds"):
        x.index_select(1, torch.tensor([4]))
    with pytest.raises(IndexError, match="vector"):
        x.index_select(1, torch.zeros(2, 2, dtype=torch.int64))
    with pytest.raises(RuntimeError, match="Number of indices"):
        x.index_add(0, torch.tensor([0, 1]), torch.ones(3, 4))
    with pytest.raises(RuntimeError, match="shape"):
        x.index_copy(0, torch.tensor([0]), torch.ones(1, 5))
    with pytest.raises(RuntimeError, match="boolean masks"):
        x.masked_fill(torch.zeros(3, 4), 1.0)
    with pytest.raises(RuntimeError, match="0-dimensional value tensor"):
        x.masked_fill(x > 0, torch.ones(2))
    with pytest.raises(RuntimeError, match="broadcast"):
        x.masked_fill_(torch.zeros(2, 3, 4, dtype=torch.bool), 1.0)
    with pytest.raises(RuntimeError, match="at least"):
        x.masked_scatter(x == 0, torch.ones(5))
    with pytest.raises(IndexError, match="index 12 is out of bounds"):
        torch.take(x, torch.tensor([12]))
    with pytest.raises(RuntimeError, match="shape mismatch"):
        torch.index_put(x, [torch.tensor([0, 1])], torch.ones(3))
    with pytest.raises(RuntimeError, match="dtypes match"):
        torch.index_put(x, [torch.tensor([0])], torch.ones(4, dtype=torch.float64))


def test_inplace_is_untouched_after_a_bad_index():
    x = torch.zeros(5)
    with pytest.raises(IndexError):
        x.index_put_((torch.tensor([0, 1, 7]),), torch.ones(3))
    with pytest.raises(IndexError):
        x.scatter_(0, torch.tensor([0, 9]), torch.ones(2))
    assert x.sum().item() == 0


def test_accumulation_is_deterministic():
    rng = np.random.default_rng(0)
    vals = torch.from_numpy(rng.standard_normal(200_000).astype(np.float32))
    idx = torch.from_numpy(rng.integers(0, 7, 200_000))
    first = torch.zeros(7).index_put_((idx,), vals, accumulate=True)
    for _ in range(3):
        again = torch.zeros(7).index_put_((idx,), vals, accumulate=True)
        np.testing.assert_array_equal(first.numpy(), again.numpy())
        np.testing.assert_array_equal(
            torch.zeros(7).scatter_add(0, idx, vals).numpy(), first.numpy()
        )
        np.testing.assert_array_equal(torch.zeros(7).index_add(0, idx, vals).numpy(), first.numpy())


def test_nonzero_as_tuple_and_argwhere():
    x = torch.tensor([[0, 1, 0], [2, 0, 3]])
    rows, cols = torch.nonzero(x, as_tuple=True)
    np.testing.assert_array_equal(rows.numpy(), [0, 1, 1])
    np.testing.assert_array_equal(cols.numpy(), [1, 0, 2])
    np.testing.assert_array_equal(x.nonzero().numpy(), [[0, 1], [1, 0], [1, 2]])
    np.testing.assert_array_equal(x.nonzero(as_tuple=False).numpy(), torch.argwhere(x).numpy())
    assert x.argwhere().dtype == torch.int64


# ---- fuzzing __getitem__ against NumPy

from hypothesis import HealthCheck, example, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@st.composite
def index_expressions(draw):
    """(shape, items): a random mix of ints, slices, None, Ellipsis, bools, integer arrays,
    lists and bool masks that fits the shape."""
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=4)))
    items, dim, ellipsis = [], 0, False
    for _ in range(draw(st.integers(0, len(shape) + 1))):
        left = len(shape) - dim
        kinds = ["none", "bool"] + (["ellipsis"] if not ellipsis else [])
        if left:
            kinds += ["int", "slice", "array", "list", "mask"]
        kind = draw(st.sampled_from(kinds))
        if kind == "none":
            items.append(None)
        elif kind == "bool":
            items.append(draw(st.booleans()))
        elif kind == "ellipsis":
            items.append(Ellipsis)
            ellipsis = True
            dim += draw(st.integers(0, left))  # dims it stands for (at least)
        elif kind == "int":
            n = shape[dim]
            items.append(draw(st.integers(-n, n - 1)))
            dim += 1
        elif kind == "slice":
            n = shape[dim]
            start = draw(st.none() | st.integers(-n - 1, n + 1))
            stop = draw(st.none() | st.integers(-n - 1, n + 1))
            step = draw(st.none() | st.integers(1, 3))
            items.append(slice(start, stop, step))
            dim += 1
        elif kind in ("array", "list"):
            n = shape[dim]
            ishape = tuple(draw(st.lists(st.integers(1, 3), min_size=1, max_size=2)))
            vals = draw(
                st.lists(
                    st.integers(-n, n - 1),
                    min_size=int(np.prod(ishape)),
                    max_size=int(np.prod(ishape)),
                )
            )
            arr = np.array(vals, dtype=np.int64).reshape(ishape)
            items.append(arr if kind == "array" else arr.tolist())
            dim += 1
        else:
            k = draw(st.integers(1, left))
            bits = draw(
                st.lists(
                    st.booleans(),
                    min_size=int(np.prod(shape[dim : dim + k])),
                    max_size=int(np.prod(shape[dim : dim + k])),
                )
            )
            items.append(np.array(bits, dtype=bool).reshape(shape[dim : dim + k]))
            dim += k
    return shape, items


def torch_semantics_reference(a, items):
    """NumPy's result for PyTorch's rule: integers select first (as basic indices), so they
    never separate advanced indices; the rest is NumPy advanced indexing."""
    advanced = any(isinstance(i, (np.ndarray, list)) for i in items)

    def dims(i):
        if i is None or i is Ellipsis or isinstance(i, bool):
            return 0
        return i.ndim if isinstance(i, np.ndarray) and i.dtype == bool else 1

    consumed = sum(dims(i) for i in items)
    first, second = [], []
    for item in items:
        if item is Ellipsis:
            first.append(Ellipsis)
            second += [slice(None)] * (a.ndim - consumed)
        elif item is None:
            first.append(None)
            second.append(slice(None))
        elif isinstance(item, bool):  # a new unit dim, kept or emptied
            first.append(None)
            if advanced:
                second.append(np.array([0] if item else [], dtype=np.int64))
            else:
                second.append(slice(None) if item else slice(0, 0))
        elif isinstance(item, (np.ndarray, list)):
            first += [slice(None)] * dims(item)
            second.append(np.asarray(item))
        elif isinstance(item, slice):
            first.append(item)
            second.append(slice(None))
        else:  # int
            first.append(item)
    return a[tuple(first)][tuple(second)]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(index_expressions(), st.sampled_from(["contiguous", "transposed"]))
@example(((1, 1, 2, 1), [slice(None, 0), Ellipsis, np.array([1])]), "contiguous")
def test_fuzz_getitem_matches_numpy(expr, layout):
    shape, items = expr
    a = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    t = torch.from_numpy(a.copy())
    if layout == "transposed":
        a = np.ascontiguousarray(a.T).T
        t = torch.from_numpy(np.ascontiguousarray(a.T)).permute(*reversed(range(a.ndim)))
    index = tuple(items)
    try:
        expected = torch_semantics_reference(a, items)
    except IndexError:  # out-of-range, or index arrays that do not broadcast together
        try:
            got = t[index]
        except IndexError:
            return
        # PyTorch checks an index's range per selected element, so an empty selection
        # (a 0:0 slice beside an out-of-range array) checks none and is not an error.
        assert got.numel() == 0, (index, got.shape)
        return
    got = t[index]
    assert tuple(got.shape) == expected.shape, (index, got.shape, expected.shape)
    np.testing.assert_array_equal(got.numpy(), expected)
    # Assignment writes exactly the selected elements.
    t2, a2 = t.clone(), np.array(a, order="C", copy=True)
    t2[index] = -1
    a2_view = torch_semantics_reference(np.arange(a.size).reshape(a.shape), items)
    a2.reshape(-1)[np.asarray(a2_view).reshape(-1)] = -1
    np.testing.assert_array_equal(t2.numpy(), a2)


def test_indexing_is_differentiable():
    autograd = pytest.importorskip("flambeau.autograd")
    x = torch.arange(12.0, dtype=torch.float64).reshape(3, 4).requires_grad_(True)
    idx = torch.tensor([0, 1, 0])
    y = x[1:, None][idx, :, [3, 1, 3]]  # basic view, then `index` (duplicates)
    assert y.grad_fn is not None and y.shape == (3, 1)  # separated: index dims first
    (y.reshape(-1) * torch.arange(1.0, 4.0, dtype=torch.float64)).sum().backward()
    expected = np.zeros((3, 4))
    expected[1, 3] += 1 + 3
    expected[2, 1] += 2
    np.testing.assert_array_equal(x.grad.numpy(), expected)
    assert autograd.gradcheck(lambda t: t[[0, 0, 2], 1:3].sin(), (x.detach().requires_grad_(),))

    z = x.detach().clone().requires_grad_(True)
    w = z * 1.0
    w[[1, 1], [0, 2]] = torch.tensor([5.0, 6.0], dtype=torch.float64)
    w.sum().backward()
    grad = np.ones((3, 4))
    grad[1, [0, 2]] = 0
    np.testing.assert_array_equal(z.grad.numpy(), grad)
