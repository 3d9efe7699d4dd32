"""flambeau.hash_tensor: the XOR of the elements' 64-bit patterns, checked bit for bit against
NumPy (float widened to float64, integers to int64, then XOR-reduced), and PyTorch's errors.
PyTorch returns uint64; flambeau returns int64 with the same bits."""

import numpy as np
import pytest

import flambeau as torch

rng = np.random.default_rng(7)


def np_hash(a, axis=None, keepdims=False):
    a = np.asarray(a)
    wide = a.astype(np.float64) if a.dtype.kind == "f" else a.astype(np.int64)
    bits = wide.view(np.int64) if a.dtype.kind == "f" else wide
    return np.bitwise_xor.reduce(bits, axis=axis, keepdims=keepdims)


def as_uint64(t):
    return t.numpy().astype(np.int64).view(np.uint64)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16])
def test_floating_tensors_hash_their_float64_bits(dtype):
    a = rng.standard_normal((4, 7))
    x = torch.tensor(a).to(dtype)
    reference = np.asarray(x.to(torch.float64).numpy())  # the values after rounding to dtype
    got = torch.hash_tensor(x)
    assert got.dtype == torch.int64 and got.shape == ()
    assert int(got) == int(np_hash(reference))
    np.testing.assert_array_equal(torch.hash_tensor(x, 1).numpy(), np_hash(reference, 1))
    np.testing.assert_array_equal(
        torch.hash_tensor(x, 0, keepdim=True).numpy(), np_hash(reference, 0, keepdims=True)
    )


def test_hand_derived_values():
    # 2.0 is 0x4000000000000000 in float64; -0.0 only has the sign bit.
    assert int(torch.hash_tensor(torch.tensor(2.0))) == 0x4000000000000000
    assert as_uint64(torch.hash_tensor(torch.tensor([-0.0])))[()] == 1 << 63
    # 1.5 ^ -2.25 ^ 3.0 in float64 bits, the example PyTorch's value 13831117405608214528 is of.
    assert int(as_uint64(torch.hash_tensor(torch.tensor([1.5, -2.25, 3.0])))) == (
        13831117405608214528
    )
    assert int(torch.hash_tensor(torch.tensor([True, False, True]))) == 0
    assert int(torch.hash_tensor(torch.tensor([True, False]))) == 1


@pytest.mark.parametrize(
    "dtype", [torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64, torch.bool]
)
def test_integer_tensors_hash_their_int64_values(dtype):
    a = rng.integers(-100, 100, size=(3, 5))
    x = torch.tensor(a).to(dtype)
    values = x.to(torch.int64).numpy()
    assert int(torch.hash_tensor(x)) == int(np_hash(values))
    np.testing.assert_array_equal(torch.hash_tensor(x, -1).numpy(), np_hash(values, 1))


def test_sign_extension_of_negative_integers():
    x = torch.tensor([-1], dtype=torch.int8)
    assert int(as_uint64(torch.hash_tensor(x))) == 2**64 - 1


def test_several_dims_and_order_independence():
    a = rng.standard_normal((2, 3, 4))
    x = torch.tensor(a)
    np.testing.assert_array_equal(torch.hash_tensor(x, (0, 2)).numpy(), np_hash(a, (0, 2)))
    np.testing.assert_array_equal(
        torch.hash_tensor(x, [2, 0], keepdim=True).numpy(), np_hash(a, (0, 2), keepdims=True)
    )
    flat = torch.tensor(a.reshape(-1))
    shuffled = torch.tensor(rng.permutation(a.reshape(-1)))
    assert int(torch.hash_tensor(flat)) == int(torch.hash_tensor(shuffled))
    assert int(torch.hash_tensor(x, [])) == int(torch.hash_tensor(x))
    np.testing.assert_array_equal(
        torch.hash_tensor(x, keepdim=True).numpy(), np_hash(a, None, keepdims=True)
    )


def test_odd_lengths_fold_correctly():
    for n in [1, 2, 3, 5, 7, 8, 9, 31]:
        a = rng.integers(-(2**40), 2**40, size=n)
        assert int(torch.hash_tensor(torch.tensor(a))) == int(np_hash(a))


def test_strided_input_method_out_and_grad():
    a = rng.standard_normal((5, 6))
    x = torch.tensor(a).t()[::2]
    np.testing.assert_array_equal(torch.hash_tensor(x, 1).numpy(), np_hash(a.T[::2], 1))
    assert int(x.hash_tensor()) == int(np_hash(a.T[::2]))
    out = torch.empty((3,), dtype=torch.int64)
    assert torch.hash_tensor(x, 1, out=out) is out
    np.testing.assert_array_equal(out.numpy(), np_hash(a.T[::2], 1))
    leaf = torch.ones(3, requires_grad=True)
    assert not torch.hash_tensor(leaf).requires_grad


def test_zero_dim_and_empty_inputs():
    assert int(torch.hash_tensor(torch.tensor(2.0), 0)) == 0x4000000000000000
    assert torch.hash_tensor(torch.tensor(2.0), 0, keepdim=True).shape == ()
    assert tuple(torch.hash_tensor(torch.zeros(0, 3), 1).shape) == (0,)


def test_errors():
    x = torch.ones(2, 3)
    with pytest.raises(RuntimeError, match="Unknown hash_tensor mode: 1"):
        torch.hash_tensor(x, mode=1)
    with pytest.raises(TypeError, match="'mode' must be int, not str"):
        torch.hash_tensor(x, mode="a")
    with pytest.raises(TypeError, match="'input' \\(position 1\\) must be Tensor"):
        torch.hash_tensor([1.0])
    with pytest.raises(RuntimeError, match="Expected reduction dim to be specified"):
        torch.hash_tensor(torch.tensor([]))
    with pytest.raises(IndexError, match="Expected reduction dim 0 to have non-zero size"):
        torch.hash_tensor(torch.zeros(0, 3), 0)
    with pytest.raises(IndexError, match="Dimension out of range"):
        torch.hash_tensor(x, 2)
    with pytest.raises(RuntimeError, match="dim 0 appears multiple times"):
        torch.hash_tensor(x, [0, 0])
    with pytest.raises(NotImplementedError, match="complex64"):
        torch.hash_tensor(torch.ones(2, dtype=torch.complex64))
