"""The NumPy bridge: numpy(), from_numpy(), the __array__ protocol."""

import numpy as np
import pytest

import flambeau


def test_asarray_shares_memory():
    t = flambeau.tensor([[1.0, 2.0], [3.0, 4.0]])
    a = np.asarray(t)
    assert a.dtype == np.float32 and a.shape == (2, 2)
    assert np.shares_memory(a, t.numpy())
    a[0, 0] = 10.0
    assert t.tolist()[0][0] == 10.0


def test_asarray_of_strided_view_shares_memory():
    base = np.arange(12, dtype=np.float64).reshape(3, 4)
    t = flambeau.from_numpy(base[:, 1::2])
    a = np.asarray(t)
    assert np.shares_memory(a, base)
    np.testing.assert_array_equal(a, base[:, 1::2])


@pytest.mark.parametrize(
    "dtype",
    [
        "bool",
        "uint8",
        "int8",
        "int16",
        "int32",
        "int64",
        "float16",
        "float32",
        "float64",
        "complex64",
        "complex128",
    ],
)
def test_array_dtypes_round_trip(dtype):
    a = (np.arange(6) % 3).astype(dtype).reshape(2, 3)
    t = flambeau.from_numpy(a)
    b = np.asarray(t)
    assert b.dtype == a.dtype
    np.testing.assert_array_equal(a, b)


def test_array_with_dtype_and_copy():
    t = flambeau.tensor([1.5, 2.5])
    d = np.array(t, dtype=np.float64)
    assert d.dtype == np.float64 and d.tolist() == [1.5, 2.5]
    c = np.array(t, copy=True)
    assert not np.shares_memory(c, t.numpy())
    same = t.__array__(np.float32, copy=False)
    assert np.shares_memory(same, t.numpy())
    with pytest.raises(ValueError, match="copy"):
        t.__array__(np.float64, copy=False)


def test_bfloat16_is_a_clear_error():
    t = flambeau.tensor([1.0], dtype=flambeau.bfloat16)
    with pytest.raises(TypeError, match="bfloat16"):
        np.asarray(t)
    with pytest.raises(TypeError, match="bfloat16"):
        t.numpy()


def test_array_priority_and_ufuncs():
    t = flambeau.tensor([1.0, 4.0])
    assert t.__array_priority__ > 0
    np.testing.assert_allclose(np.sqrt(t), [1.0, 2.0])
    np.testing.assert_allclose(np.asarray(t) + np.ones(2, dtype=np.float32), [2.0, 5.0])


def test_zero_dim_and_empty():
    assert np.asarray(flambeau.tensor(3.0)).shape == ()
    assert np.asarray(flambeau.tensor(3.0)) == 3.0
    assert np.asarray(flambeau.zeros(0, 3)).shape == (0, 3)


def test_requires_grad_tensor_refuses():
    t = flambeau.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="requires grad"):
        np.asarray(t)


def test_array_keeps_tensor_alive():
    a = np.asarray(flambeau.tensor([7.0, 8.0]))
    import gc

    gc.collect()
    assert a.tolist() == [7.0, 8.0]


def test_tolist_matches_numpy():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 4, 5))
    assert flambeau.from_numpy(a).tolist() == a.tolist()
    assert flambeau.from_numpy(a.transpose(2, 0, 1)).tolist() == a.transpose(2, 0, 1).tolist()
