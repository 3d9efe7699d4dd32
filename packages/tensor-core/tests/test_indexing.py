"""Basic indexing: __getitem__ gives views matching NumPy; __setitem__ writes through them."""

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


@pytest.mark.parametrize(
    "index,what",
    [
        (lambda: torch.tensor([0, 1]) if hasattr(torch, "tensor") else torch.arange(2), "Tensor"),
        (lambda: [0, 1], "list"),
        (lambda: "a", "str"),
        (lambda: 1.5, "float"),
        (lambda: (0, torch.zeros(2, dtype=torch.bool)), "Tensor"),
    ],
)
def test_advanced_indices_raise_type_error(index, what):
    t = torch.zeros(3, 4)
    with pytest.raises(TypeError, match=what):
        t[index()]
    with pytest.raises(TypeError, match=what):
        t[index()] = 1.0


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
