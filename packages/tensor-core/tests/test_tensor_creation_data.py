"""flambeau.tensor() and as_tensor() from Python data, and Tensor.tolist()."""

import array

import numpy as np
import pytest

import flambeau


@pytest.mark.parametrize(
    "data,dtype,shape",
    [
        (True, flambeau.bool, ()),
        (3, flambeau.int64, ()),
        (2.5, flambeau.float32, ()),
        (1 + 2j, flambeau.complex64, ()),
        ([True, False], flambeau.bool, (2,)),
        ([1, 2, 3], flambeau.int64, (3,)),
        ([True, 1], flambeau.int64, (2,)),
        ([1, 2.0], flambeau.float32, (2,)),
        ([True, 2.5], flambeau.float32, (2,)),
        ([1, 2j], flambeau.complex64, (2,)),
        ([[1, 2], [3, 4]], flambeau.int64, (2, 2)),
        (((1.0,), (2.0,)), flambeau.float32, (2, 1)),
        ([], flambeau.float32, (0,)),
        ([[], []], flambeau.float32, (2, 0)),
        ([[[1]]], flambeau.int64, (1, 1, 1)),
    ],
)
def test_dtype_and_shape_inference(data, dtype, shape):
    t = flambeau.tensor(data)
    assert t.dtype is dtype
    assert tuple(t.shape) == shape
    expected = np.array(data).tolist() if shape else data
    assert t.tolist() == expected


def test_default_dtype_drives_float_and_complex_inference():
    old = flambeau.get_default_dtype()
    try:
        flambeau.set_default_dtype(flambeau.float64)
        assert flambeau.tensor([1.5]).dtype is flambeau.float64
        assert flambeau.tensor([1j]).dtype is flambeau.complex128
        assert flambeau.tensor([1]).dtype is flambeau.int64
    finally:
        flambeau.set_default_dtype(old)


def test_explicit_dtype_converts_values():
    t = flambeau.tensor([1.7, -2.2, 3.0], dtype=flambeau.int32)
    assert t.dtype is flambeau.int32
    assert t.tolist() == [1, -2, 3]
    assert flambeau.tensor([0, 2], dtype=flambeau.bool).tolist() == [False, True]
    h = flambeau.tensor([0.1, 1000.5], dtype=flambeau.float16)
    assert h.tolist() == np.array([0.1, 1000.5], dtype=np.float16).astype(float).tolist()
    b = flambeau.tensor([1.0, 3.0], dtype=flambeau.bfloat16)
    assert b.dtype is flambeau.bfloat16 and b.tolist() == [1.0, 3.0]


@pytest.mark.parametrize(
    "data,message",
    [
        ([[1, 2, 3], [1, 2]], "expected sequence of length 3 at dim 1 (got 2)"),
        ([[1, 2], [3, 4], [5]], "expected sequence of length 2 at dim 1 (got 1)"),
        ([[[1], [2]], [[3], [4, 5]]], "expected sequence of length 1 at dim 2 (got 2)"),
        ([[1, 2], 3], "expected sequence of length 2 at dim 1 (got int)"),
        ([1, [2, 3]], "expected a number at dim 1"),
    ],
)
def test_ragged_input_errors(data, message):
    with pytest.raises(ValueError) as err:
        flambeau.tensor(data)
    assert message in str(err.value)


def test_invalid_element_types():
    with pytest.raises(TypeError, match="invalid data type 'str'"):
        flambeau.tensor(["a", "b"])
    with pytest.raises(TypeError):
        flambeau.tensor("abc")
    with pytest.raises(TypeError):
        flambeau.tensor(object())


def test_int_overflow_is_an_error():
    with pytest.raises(RuntimeError, match="Overflow"):
        flambeau.tensor([2**70])


def test_requires_grad():
    t = flambeau.tensor([1.0, 2.0], requires_grad=True)
    assert t.requires_grad
    with pytest.raises(RuntimeError, match="floating point"):
        flambeau.tensor([1, 2], requires_grad=True)


def test_from_numpy_array_copies():
    a = np.arange(6, dtype=np.float64).reshape(2, 3)
    t = flambeau.tensor(a)
    assert t.dtype is flambeau.float64 and tuple(t.shape) == (2, 3)
    assert t.tolist() == a.tolist()
    a[0, 0] = 100.0
    assert t.tolist()[0][0] == 0.0


def test_from_numpy_with_dtype_and_negative_strides():
    a = np.arange(5, dtype=np.int32)[::-1]
    t = flambeau.tensor(a, dtype=flambeau.float32)
    assert t.dtype is flambeau.float32 and t.tolist() == [4.0, 3.0, 2.0, 1.0, 0.0]


def test_numpy_scalars_keep_their_dtype():
    assert flambeau.tensor(np.float64(1.5)).dtype is flambeau.float64
    assert flambeau.tensor(np.int32(7)).dtype is flambeau.int32
    assert flambeau.tensor([np.float64(1.0), 2.0]).dtype is flambeau.float64
    assert flambeau.tensor([np.float16(1.0), np.float16(2.0)]).dtype is flambeau.float16


def test_as_tensor_shares_numpy_memory_when_dtype_matches():
    a = np.arange(6, dtype=np.float32)
    t = flambeau.as_tensor(a)
    assert np.shares_memory(t.numpy(), a)
    a[1] = 42.0
    assert t.tolist()[1] == 42.0
    same = flambeau.as_tensor(a, dtype=flambeau.float32)
    assert np.shares_memory(same.numpy(), a)
    converted = flambeau.as_tensor(a, dtype=flambeau.float64)
    assert converted.dtype is flambeau.float64
    assert not np.shares_memory(converted.numpy(), a)


def test_tensor_input():
    src = flambeau.tensor([1.0, 2.0])
    copy = flambeau.tensor(src)
    assert copy.data_ptr() != src.data_ptr() and copy.tolist() == [1.0, 2.0]
    assert flambeau.as_tensor(src) is src
    as64 = flambeau.as_tensor(src, dtype=flambeau.float64)
    assert as64.dtype is flambeau.float64 and as64.data_ptr() != src.data_ptr()
    conv = flambeau.tensor(src, dtype=flambeau.int64)
    assert conv.dtype is flambeau.int64 and conv.tolist() == [1, 2]


def test_list_of_tensors_and_arrays():
    t = flambeau.tensor([flambeau.tensor([1, 2]), flambeau.tensor([3, 4])])
    assert tuple(t.shape) == (2, 2) and t.tolist() == [[1, 2], [3, 4]]
    mixed = flambeau.tensor([flambeau.tensor(1.5), 2])
    assert mixed.dtype is flambeau.float32 and mixed.tolist() == [1.5, 2.0]
    arrs = flambeau.tensor([np.array([1.0, 2.0]), np.array([3.0, 4.0])])
    assert arrs.dtype is flambeau.float64 and arrs.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    with pytest.raises(ValueError, match="shape"):
        flambeau.tensor([flambeau.tensor([1, 2]), flambeau.tensor([3])])


def test_array_protocol_and_buffer_objects():
    class HasArray:
        def __array__(self, dtype=None, copy=None):
            return np.array([[1, 2], [3, 4]], dtype=np.int16)

    t = flambeau.tensor(HasArray())
    assert t.dtype is flambeau.int16 and t.tolist() == [[1, 2], [3, 4]]
    buf = array.array("d", [1.0, 2.5])
    b = flambeau.tensor(buf)
    assert b.dtype is flambeau.float64 and b.tolist() == [1.0, 2.5]
    shared = flambeau.as_tensor(buf)
    buf[0] = 9.0
    assert shared.tolist()[0] == 9.0


def test_generic_sequences():
    assert flambeau.tensor(range(4)).tolist() == [0, 1, 2, 3]


def test_device_argument():
    assert flambeau.tensor([1], device="cpu").device == flambeau.device("cpu")


def test_tolist_of_views_and_dtypes():
    a = np.arange(12, dtype=np.int64).reshape(3, 4)
    t = flambeau.from_numpy(a[:, ::2])
    assert t.tolist() == a[:, ::2].tolist()
    assert flambeau.tensor(5).tolist() == 5
    assert flambeau.tensor([True]).tolist() == [True]
    assert isinstance(flambeau.tensor([1.0]).tolist()[0], float)
    assert isinstance(flambeau.tensor([1]).tolist()[0], int)
    assert flambeau.tensor([1 - 2j]).tolist() == [1 - 2j]
    assert flambeau.zeros(2, 0).tolist() == [[], []]


def test_large_list_round_trip():
    data = [float(i) for i in range(100_000)]
    t = flambeau.tensor(data, dtype=flambeau.float64)
    assert t.tolist() == data
