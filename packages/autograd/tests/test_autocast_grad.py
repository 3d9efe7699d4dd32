"""Gradients through autocast: the casts are recorded, so float32 leaves get float32
gradients, equal to the derivative of the bfloat16 computation (the cast's derivative
being the identity), checked against central finite differences in float64. Also the
weight cast cache and custom_fwd/custom_bwd."""

from __future__ import annotations

import numpy as np
import pytest

import flambeau
from flambeau import _C
from flambeau.autograd import Function

F32, BF16 = flambeau.float32, flambeau.bfloat16


def bf16_round(x: np.ndarray) -> np.ndarray:
    """float32 values rounded to the nearest bfloat16 (ties to even), as float64."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000
    return u.astype(np.uint32).view(np.float32).astype(np.float64)


def leaf(*shape, seed):
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return flambeau.from_numpy(x).requires_grad_()


def finite_difference(f, x: np.ndarray, eps=1e-6) -> np.ndarray:
    """Central differences of the scalar function f at x (float64)."""
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[i] = eps
        grad[i] = (f(x + step) - f(x - step)) / (2 * eps)
    return grad


def assert_grad_close(grad, expected):
    """A gradient computed by bfloat16 kernels (and cast back) against float64."""
    assert grad.dtype == F32
    scale = max(1.0, float(np.abs(expected).max()))
    np.testing.assert_allclose(grad.numpy(), expected, rtol=2**-6, atol=2**-6 * scale)


def test_matmul_gradients_reach_float32_leaves():
    a, b = leaf(4, 5, seed=0), leaf(5, 3, seed=1)
    w = np.random.default_rng(2).standard_normal((4, 3))
    with flambeau.autocast("cpu"):
        out = flambeau.matmul(a, b)
        assert out.dtype == BF16
        loss = (out.float() * flambeau.from_numpy(w.astype(np.float32))).sum()
    loss.backward()
    # The bfloat16 computation: the inputs (and the upstream gradient) rounded.
    ra, rb, rw = bf16_round(a.detach().numpy()), bf16_round(b.detach().numpy()), bf16_round(w)
    assert_grad_close(a.grad, finite_difference(lambda x: (rw * (x @ rb)).sum(), ra))
    assert_grad_close(b.grad, finite_difference(lambda y: (rw * (ra @ y)).sum(), rb))


def test_conv2d_gradients_reach_float32_leaves():
    x, w, bias = leaf(1, 2, 4, 4, seed=3), leaf(3, 2, 2, 2, seed=4), leaf(3, seed=5)
    with flambeau.autocast("cpu"):
        out = flambeau.conv2d(x, w, bias)
        assert out.dtype == BF16
    out.float().sum().backward()
    rx, rw = bf16_round(x.detach().numpy()), bf16_round(w.detach().numpy())

    def conv_sum(xx, ww):
        total = 0.0
        for i in range(2):
            for j in range(2):
                total += np.einsum("nchw,oc->", xx[:, :, i : i + 3, j : j + 3], ww[:, :, i, j])
        return total

    assert_grad_close(w.grad, finite_difference(lambda v: conv_sum(rx, v), rw))
    assert_grad_close(x.grad, finite_difference(lambda v: conv_sum(v, rw), rx))
    assert bias.grad.dtype == F32 and bias.grad.tolist() == [9.0, 9.0, 9.0]  # 3x3 outputs each


def test_fp32_operator_gradient_of_a_bfloat16_leaf():
    x = leaf(5, seed=6).detach().to(BF16).requires_grad_()
    y = flambeau.zeros(5, dtype=BF16)
    with flambeau.autocast("cpu"):
        loss = flambeau.mse_loss(x, y)
        assert loss.dtype == F32
    loss.backward()
    assert x.grad.dtype == BF16
    np.testing.assert_allclose(
        x.grad.float().numpy(), 2 * x.detach().float().numpy() / 5, rtol=2**-7
    )


def test_weight_cast_is_cached_within_a_region():
    w = leaf(3, 3, seed=7)
    u, v = leaf(3, 2, seed=8).detach(), leaf(3, 2, seed=9).detach()  # inputs, not weights
    with flambeau.autocast("cpu"):
        first = flambeau.mm(w, u)
        assert _C._autocast_cached_casts() == 1
        second = flambeau.mm(w, v)
        assert _C._autocast_cached_casts() == 1  # w was cast once, u and v are not kept
        (first.float().sum() + second.float().sum()).backward()
    assert _C._autocast_cached_casts() == 0  # leaving the region drops the casts
    # Both uses accumulate into w's gradient: d/dw sum(w @ (u + v)) = 1 (u + v)^T.
    ru, rv = bf16_round(u.numpy()), bf16_round(v.numpy())
    assert_grad_close(w.grad, np.ones((3, 2)) @ (ru + rv).T)


def test_cache_off_and_no_grad_make_no_entries():
    w, u = leaf(3, 3, seed=10), leaf(3, 3, seed=11)
    with flambeau.autocast("cpu", cache_enabled=False):
        flambeau.mm(w, u)
        assert _C._autocast_cached_casts() == 0
    with flambeau.autocast("cpu"):
        with flambeau.no_grad():
            flambeau.mm(w, u)
        assert _C._autocast_cached_casts() == 0
        out = flambeau.mm(w, u)  # a cast made now has a graph
        assert out.requires_grad


def test_a_weight_changed_in_place_is_cast_again():
    w, u = leaf(2, 2, seed=12), flambeau.eye(2)
    with flambeau.autocast("cpu"):
        before = flambeau.mm(w, u)
        with flambeau.no_grad():
            w.add_(1.0)
        after = flambeau.mm(w, u)
    np.testing.assert_allclose(
        after.detach().float().numpy(), before.detach().float().numpy() + 1.0, atol=2**-6
    )


class ScaledProduct(Function):
    """x @ y in whatever dtype forward gets; records the autocast state it ran in."""

    seen = {}

    @staticmethod
    @flambeau.amp.custom_fwd(device_type="cpu", cast_inputs=F32)
    def forward(ctx, x, y):
        ScaledProduct.seen["forward"] = (x.dtype, y.dtype, flambeau.is_autocast_enabled("cpu"))
        ctx.save_for_backward(x, y)
        return x @ y

    @staticmethod
    @flambeau.amp.custom_bwd(device_type="cpu")
    def backward(ctx, grad):
        ScaledProduct.seen["backward"] = flambeau.is_autocast_enabled("cpu")
        x, y = ctx.saved_tensors
        return grad @ y.t(), x.t() @ grad


def test_custom_fwd_casts_inputs_and_runs_without_autocast():
    x = leaf(2, 3, seed=13).detach().to(BF16).requires_grad_()
    y = leaf(3, 2, seed=14)
    with flambeau.autocast("cpu"):
        out = ScaledProduct.apply(x, y)
        assert flambeau.is_autocast_enabled("cpu")  # restored after forward
    assert ScaledProduct.seen["forward"] == (F32, F32, False)
    assert out.dtype == F32  # x @ y ran in float32, not lowered
    out.sum().backward()
    assert ScaledProduct.seen["backward"] is False  # as forward ran
    assert x.grad.dtype == BF16 and y.grad.dtype == F32


def test_custom_fwd_outside_a_region_changes_nothing():
    x, y = leaf(2, 3, seed=15), leaf(3, 2, seed=16)
    out = ScaledProduct.apply(x.detach().to(BF16), y.detach().to(BF16))
    assert out.dtype == BF16 and ScaledProduct.seen["forward"] == (BF16, BF16, False)


def test_custom_bwd_reenters_the_forward_state():
    class Plain(Function):
        @staticmethod
        @flambeau.amp.custom_fwd(device_type="cpu")
        def forward(ctx, x):
            ctx.autocast_in_forward = flambeau.is_autocast_enabled("cpu")
            return x * 2

        @staticmethod
        @flambeau.amp.custom_bwd(device_type="cpu")
        def backward(ctx, grad):
            ctx.autocast_in_backward = flambeau.is_autocast_enabled("cpu")
            ctx.dtype_in_backward = flambeau.get_autocast_dtype("cpu")
            return grad * 2

    x = leaf(3, seed=17)
    with flambeau.autocast("cpu", dtype=flambeau.float16):
        out = Plain.apply(x)
    ctx = out.grad_fn._ctx
    out.sum().backward()  # outside the region: custom_bwd turns it back on
    assert ctx.autocast_in_forward and ctx.autocast_in_backward
    assert ctx.dtype_in_backward == flambeau.float16
    assert x.grad.tolist() == [2.0, 2.0, 2.0]


@pytest.mark.parametrize("decorator", ["custom_fwd", "custom_bwd"])
def test_custom_decorators_need_a_str_device_type(decorator):
    with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
        getattr(flambeau.amp, decorator)(device_type=flambeau.device("cpu"))
