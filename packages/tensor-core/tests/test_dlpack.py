"""DLPack exchange with NumPy, zero-copy both ways, capsule rules."""

import gc

import numpy as np
import pytest

import flambeau


def test_numpy_from_dlpack_shares_memory():
    t = flambeau.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    a = np.from_dlpack(t)
    assert a.shape == (2, 3) and a.dtype == np.float32
    assert np.shares_memory(a, t.numpy())
    a[1, 2] = -1.0
    assert t.tolist()[1][2] == -1.0


def test_from_dlpack_numpy_shares_memory():
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    t = flambeau.from_dlpack(a)
    assert t.dtype is flambeau.int32 and tuple(t.shape) == (3, 4)
    assert t.data_ptr() == a.ctypes.data
    assert np.shares_memory(t.numpy(), a)
    a[0, 0] = 99
    assert t.tolist()[0][0] == 99


def test_from_dlpack_strided_numpy_view():
    base = np.arange(20, dtype=np.float64).reshape(4, 5)
    view = base[1:, ::2]
    t = flambeau.from_dlpack(view)
    assert t.stride() == (5, 2)
    assert t.tolist() == view.tolist()
    assert np.shares_memory(t.numpy(), base)


def test_producer_memory_outlives_producer():
    a = np.arange(5, dtype=np.float64)
    t = flambeau.from_dlpack(a)
    del a
    gc.collect()
    assert t.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]


def test_exported_capsule_keeps_tensor_alive():
    t = flambeau.tensor([1.0, 2.0, 3.0])
    a = np.from_dlpack(t)
    del t
    gc.collect()
    assert a.tolist() == [1.0, 2.0, 3.0]


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
def test_dtypes_round_trip_through_numpy(dtype):
    a = (np.arange(6) % 2).astype(dtype).reshape(3, 2)
    t = flambeau.from_dlpack(a)
    b = np.from_dlpack(t)
    assert b.dtype == a.dtype and np.shares_memory(a, b)
    np.testing.assert_array_equal(a, b)


def test_bfloat16_round_trip_within_flambeau():
    t = flambeau.tensor([1.0, 2.0], dtype=flambeau.bfloat16)
    u = flambeau.from_dlpack(t)
    assert u.dtype is flambeau.bfloat16 and u.data_ptr() == t.data_ptr()
    assert u.tolist() == [1.0, 2.0]


def test_capsule_naming_and_single_consumption():
    t = flambeau.tensor([1.0, 2.0])
    cap = t.__dlpack__()
    assert "dltensor" in repr(cap) and "used_" not in repr(cap)
    u = flambeau.from_dlpack(cap)
    assert "used_dltensor" in repr(cap)
    assert u.data_ptr() == t.data_ptr()
    with pytest.raises(ValueError, match="consumed"):
        flambeau.from_dlpack(cap)


def test_versioned_capsule():
    t = flambeau.tensor([3, 4])
    cap = t.__dlpack__(max_version=(1, 0))
    assert '"dltensor_versioned"' in repr(cap)
    u = flambeau.from_dlpack(cap)
    assert '"used_dltensor_versioned"' in repr(cap)
    assert u.tolist() == [3, 4] and u.data_ptr() == t.data_ptr()
    legacy = t.__dlpack__(max_version=(0, 8))
    assert '"dltensor"' in repr(legacy)


def test_unconsumed_capsules_are_freed():
    t = flambeau.tensor([1.0])
    for _ in range(100):
        t.__dlpack__()
        t.__dlpack__(max_version=(1, 0))
    gc.collect()
    assert t.tolist() == [1.0]


def test_copy_flag():
    t = flambeau.tensor([1.0, 2.0])
    u = flambeau.from_dlpack(t.__dlpack__(copy=True))
    assert u.data_ptr() != t.data_ptr() and u.tolist() == [1.0, 2.0]


def test_dlpack_device_and_errors():
    t = flambeau.tensor([1.0])
    assert t.__dlpack_device__() == (1, 0)
    with pytest.raises(BufferError):
        t.__dlpack__(dl_device=(2, 0))
    with pytest.raises(TypeError):
        t.__dlpack__(stream="x")
    with pytest.raises(BufferError, match="require gradient"):  # as PyTorch
        flambeau.tensor([1.0], requires_grad=True).__dlpack__()
    with pytest.raises(TypeError, match="__dlpack__"):
        flambeau.from_dlpack([1, 2])


def test_zero_dim_and_empty():
    s = flambeau.from_dlpack(np.array(2.5))
    assert tuple(s.shape) == () and s.item() == 2.5
    e = flambeau.from_dlpack(np.zeros((0, 3), dtype=np.float32))
    assert tuple(e.shape) == (0, 3)
    assert np.from_dlpack(flambeau.tensor(4)).shape == ()


def test_foreign_producer_without_max_version():
    class OldProducer:
        def __init__(self, arr):
            self.arr = arr

        def __dlpack__(self, stream=None):
            return self.arr.__dlpack__()

        def __dlpack_device__(self):
            return self.arr.__dlpack_device__()

    a = np.arange(3, dtype=np.int64)
    t = flambeau.from_dlpack(OldProducer(a))
    assert t.tolist() == [0, 1, 2] and t.data_ptr() == a.ctypes.data
