"""fake_quantize_per_tensor_affine / fake_quantize_per_channel_affine against a NumPy
restatement of PyTorch's arithmetic (float32 reciprocal of the scale, round half to even,
clamp), hand-derived values and straight-through gradients."""

import numpy as np
import pytest

import flambeau as F


def reference(x, scale, zero_point, qmin, qmax, float_zero_point=False):
    """NumPy: x (float32/64), scale and zero_point broadcastable arrays."""
    inv = (np.float32(1) / np.asarray(scale, np.float32)).astype(np.float32)
    if float_zero_point:
        q = np.round(x * inv + np.asarray(zero_point, np.float32))
    else:
        q = np.round(x * inv) + np.asarray(zero_point)
    out = (np.clip(q, qmin, qmax) - zero_point) * np.asarray(scale, np.float32)
    return out.astype(x.dtype), (q >= qmin) & (q <= qmax)


def test_hand_derived_values_and_ties():
    # 0.5 and 2.5 quanta are ties: round half to even gives 0 and 2; 23 clamps to 20.
    x = F.tensor([0.05, 0.15, 0.25, -0.05, 2.0], dtype=F.float64)
    y = F.fake_quantize_per_tensor_affine(x, 0.1, 3, 0, 20)
    np.testing.assert_allclose(y.numpy(), [0.0, 0.2, 0.2, 0.0, 1.7], atol=1e-7)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_per_tensor_matches_reference(dtype):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(1000) * 3).astype(dtype)
    for scale, zp, qmin, qmax in [(0.05, 0, -128, 127), (0.1, 10, 0, 255), (0.37, -3, -8, 7)]:
        want, _ = reference(x, scale, zp, qmin, qmax)
        got = F.fake_quantize_per_tensor_affine(F.from_numpy(x), scale, zp, qmin, qmax)
        assert got.dtype == F.from_numpy(x).dtype
        np.testing.assert_array_equal(got.numpy(), want)
    # Scale and zero point as 0-dim tensors (PyTorch's tensor_qparams overload).
    got = F.fake_quantize_per_tensor_affine(F.from_numpy(x), F.tensor(0.1), F.tensor(10), 0, 255)
    np.testing.assert_array_equal(got.numpy(), reference(x, 0.1, 10, 0, 255)[0])


@pytest.mark.parametrize("zp_dtype", [F.int32, F.float32, F.float16])
def test_per_channel_matches_reference(zp_dtype):
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((3, 4, 5)) * 2).astype(np.float32)
    scale = np.array([0.05, 0.2, 0.5, 1.0], np.float32)
    zp = np.array([0, 3, -2, 7])
    got = F.fake_quantize_per_channel_affine(
        F.from_numpy(x), F.from_numpy(scale), F.from_numpy(zp).to(zp_dtype), 1, -10, 10
    )
    shaped = (scale.reshape(1, 4, 1), zp.reshape(1, 4, 1))
    want, _ = reference(x, *shaped, -10, 10, float_zero_point=zp_dtype != F.int32)
    np.testing.assert_array_equal(got.numpy(), want)


def test_straight_through_gradient():
    rng = np.random.default_rng(2)
    x = F.from_numpy(rng.standard_normal(50) * 2).requires_grad_()
    y = F.fake_quantize_per_tensor_affine(x, 0.1, 0, -10, 10)
    y.sum().backward()
    _, inside = reference(x.detach().numpy(), 0.1, 0, -10, 10)
    np.testing.assert_array_equal(x.grad.numpy(), inside.astype(np.float64))
    x.grad = None
    scale, zp = F.tensor([0.1, 0.5]), F.tensor([0, 2], dtype=F.int32)
    y = F.fake_quantize_per_channel_affine(x.reshape(25, 2), scale, zp, 1, -10, 10)
    (y * 3).sum().backward()
    _, inside = reference(
        x.detach().numpy().reshape(25, 2), np.array([[0.1, 0.5]]), np.array([[0, 2]]), -10, 10
    )
    np.testing.assert_array_equal(x.grad.numpy().reshape(25, 2), 3.0 * inside)


def per_tensor(*args):
    return F.fake_quantize_per_tensor_affine(*args)


def per_channel(x, scale, zero_point, *args):
    return F.fake_quantize_per_channel_affine(x, scale, zero_point, *args)


I32 = F.int32


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (lambda x: per_tensor(x, 0.1, 0, 10, 0), RuntimeError, "quant_min"),
        (lambda x: per_tensor(x, 0.1, 300, 0, 255), RuntimeError, "zero_point"),
        (lambda x: per_tensor(x.long(), 0.1, 0, 0, 255), NotImplementedError, "Long"),
        (lambda x: per_tensor([1.0], 0.1, 0, 0, 255), TypeError, "must be Tensor"),
        (
            lambda x: per_channel(x, F.ones(2).double(), F.zeros(2, dtype=I32), 0, 0, 9),
            RuntimeError,
            "Scale must be Float",
        ),
        (
            lambda x: per_channel(x, F.ones(2), F.zeros(2, dtype=F.int64), 0, 0, 9),
            RuntimeError,
            "Zero-point must be Int32",
        ),
        (
            lambda x: per_channel(x, F.ones(3), F.zeros(3, dtype=I32), 0, 0, 9),
            RuntimeError,
            "not consistent",
        ),
        (lambda x: per_channel(x, F.ones(2), F.zeros(2, dtype=I32), 2, 0, 9), RuntimeError, "axis"),
        (
            lambda x: per_channel(x, F.ones(2), F.full((2,), 20, dtype=I32), 0, 0, 9),
            RuntimeError,
            "zero_point",
        ),
    ],
)
def test_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call(F.ones(2, 3))


def test_agrees_with_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((4, 6)) * 4).astype(np.float32)
    want = torch.fake_quantize_per_tensor_affine(torch.from_numpy(x), 0.07, 5, -20, 40)
    got = F.fake_quantize_per_tensor_affine(F.from_numpy(x), 0.07, 5, -20, 40)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    s, z = np.linspace(0.05, 0.9, 6).astype(np.float32), np.arange(-3, 3, dtype=np.int32)
    want = torch.fake_quantize_per_channel_affine(
        torch.from_numpy(x), torch.from_numpy(s), torch.from_numpy(z), 1, -20, 40
    )
    got = F.fake_quantize_per_channel_affine(
        F.from_numpy(x), F.from_numpy(s), F.from_numpy(z), 1, -20, 40
    )
    np.testing.assert_array_equal(got.numpy(), want.numpy())
