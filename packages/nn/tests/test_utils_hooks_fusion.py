"""nn.utils: the hook-based weight_norm / spectral_norm, conv/linear + batch-norm fusion,
weight memory formats, skip_init and the deprecated clip_grad_norm alias."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest
from _helpers import f64, np_of, randn64

import flambeau
from flambeau import nn
from flambeau.autograd import gradcheck
from flambeau.nn import init, utils

# ---- weight_norm ----------------------------------------------------------------------------


def test_weight_norm_splits_magnitude_and_direction():
    m = nn.Linear(4, 3).double()
    w0 = np_of(m.weight).copy()
    with pytest.warns(FutureWarning, match="`torch.nn.utils.weight_norm` is deprecated"):
        assert utils.weight_norm(m) is m
    assert set(dict(m.named_parameters())) == {"bias", "weight_g", "weight_v"}
    assert m.weight_g.shape == (3, 1)
    np.testing.assert_allclose(np_of(m.weight_g)[:, 0], np.linalg.norm(w0, axis=1))
    np.testing.assert_allclose(np_of(m.weight), w0, rtol=1e-12)
    with flambeau.no_grad():
        m.weight_g.mul_(2.0)
    x = randn64(2, 4)
    m(x)  # the pre-hook recomputes the weight from g and v
    np.testing.assert_allclose(np_of(m.weight), 2 * w0, rtol=1e-12)
    assert gradcheck(lambda x, g, v: m(x), (x, m.weight_g, m.weight_v))
    assert set(m.state_dict()) == {"bias", "weight_g", "weight_v"}


@pytest.mark.parametrize("dim, g_shape, axes", [(None, (), None), (1, (1, 4), 0), (-1, (), None)])
def test_weight_norm_dims(dim, g_shape, axes):
    m = nn.Linear(4, 3).double()
    w0 = np_of(m.weight).copy()
    with pytest.warns(FutureWarning):
        utils.weight_norm(m, dim=dim)
    assert tuple(m.weight_g.shape) == g_shape  # dim=-1 means the whole tensor, as None
    norms = np.linalg.norm(w0) if axes is None else np.linalg.norm(w0, axis=axes)
    np.testing.assert_allclose(np_of(m.weight_g).ravel(), np.ravel(norms))
    np.testing.assert_allclose(np_of(m.weight), w0, rtol=1e-12)


def test_remove_weight_norm_and_errors():
    m = nn.Conv1d(2, 3, 2).double()
    with pytest.warns(FutureWarning):
        utils.weight_norm(m)
    with pytest.warns(FutureWarning), pytest.raises(RuntimeError, match="two weight_norm hooks"):
        utils.weight_norm(m)
    with flambeau.no_grad():
        m.weight_g.mul_(3.0)
    expected = 3 * np_of(m.weight_v)
    assert utils.remove_weight_norm(m) is m
    assert isinstance(m.weight, nn.Parameter) and not m._forward_pre_hooks
    assert set(dict(m.named_parameters())) == {"weight", "bias"}
    np.testing.assert_allclose(np_of(m.weight), expected, rtol=1e-12)
    with pytest.raises(ValueError, match="weight_norm of 'weight' not found in"):
        utils.remove_weight_norm(m)
    with pytest.warns(FutureWarning), pytest.raises(ValueError, match="uninitialized parameters"):
        utils.weight_norm(nn.LazyLinear(3))


# ---- spectral_norm --------------------------------------------------------------------------


def test_spectral_norm_makes_the_largest_singular_value_one():
    flambeau.manual_seed(0)
    m = nn.Linear(6, 5).double()
    w0 = np_of(m.weight).copy()
    utils.spectral_norm(m, n_power_iterations=3)
    assert set(dict(m.named_parameters())) == {"bias", "weight_orig"}
    assert {name for name, _ in m.named_buffers()} == {"weight_u", "weight_v"}
    x = randn64(2, 6)
    for _ in range(10):  # each training forward refines u and v
        m(x)
    sigma = np.linalg.svd(w0, compute_uv=False)[0]
    assert np.linalg.svd(np_of(m.weight), compute_uv=False)[0] == pytest.approx(1.0, rel=1e-8)
    np.testing.assert_allclose(np_of(m.weight), w0 / sigma, rtol=1e-8)
    u, v = np.linalg.svd(w0)[0][:, 0], np.linalg.svd(w0)[2][0]
    assert abs(np_of(m.weight_u) @ u) == pytest.approx(1.0) and abs(np_of(m.weight_v) @ v) == (
        pytest.approx(1.0)
    )
    m.eval()
    u_before = np_of(m.weight_u).copy()
    m(x)
    np.testing.assert_array_equal(np_of(m.weight_u), u_before)  # no power iteration in eval
    assert gradcheck(lambda x, w: m(x), (x, m.weight_orig))


def test_spectral_norm_conv_transpose_uses_dim_1_and_remove():
    m = nn.ConvTranspose2d(3, 5, 2).double()  # weight (in=3, out=5, 2, 2): outputs on dim 1
    utils.spectral_norm(m)
    assert tuple(m.weight_u.shape) == (5,) and tuple(m.weight_v.shape) == (12,)
    for _ in range(30):
        m(randn64(1, 3, 4, 4, requires_grad=False))
    mat = np_of(m.weight).transpose(1, 0, 2, 3).reshape(5, -1)
    assert np.linalg.svd(mat, compute_uv=False)[0] == pytest.approx(1.0, rel=1e-6)
    m.eval()
    m(randn64(1, 3, 4, 4, requires_grad=False))
    expected = np_of(m.weight).copy()
    assert utils.remove_spectral_norm(m) is m
    assert set(dict(m.named_parameters())) == {"weight", "bias"} and not list(m.buffers())
    assert not m._forward_pre_hooks and not m._state_dict_hooks
    assert not m._load_state_dict_pre_hooks
    np.testing.assert_allclose(np_of(m.weight), expected, rtol=1e-12)
    with pytest.raises(ValueError, match="spectral_norm of 'weight' not found in"):
        utils.remove_spectral_norm(m)


def test_spectral_norm_state_dict_round_trip_and_errors():
    flambeau.manual_seed(1)
    m = utils.spectral_norm(nn.Linear(4, 3).double())
    m(randn64(1, 4))
    sd = m.state_dict()
    assert set(sd) == {"bias", "weight_orig", "weight_u", "weight_v"}
    assert sd._metadata[""]["spectral_norm"] == {"weight.version": 1}
    other = utils.spectral_norm(nn.Linear(4, 3).double())
    other.load_state_dict(sd)
    other.eval(), m.eval()
    x = randn64(2, 4)
    np.testing.assert_allclose(np_of(other(x)), np_of(m(x)), rtol=1e-12)
    with pytest.raises(RuntimeError, match="two spectral_norm hooks"):
        utils.spectral_norm(m)
    with pytest.raises(ValueError, match="n_power_iterations to be positive"):
        utils.spectral_norm(nn.Linear(2, 2), n_power_iterations=0)
    bias_free = nn.Linear(2, 2, bias=False)
    with pytest.raises(ValueError, match="parameter `bias` is None"):
        utils.spectral_norm(bias_free, name="bias")
    with pytest.raises(ValueError, match="can't have uninitialized parameters"):
        utils.spectral_norm(nn.LazyLinear(3))


def test_spectral_norm_loads_the_versionless_format():
    """Old checkpoints stored the normalised weight and u, not v: loading solves for a v
    that reproduces the stored weight."""
    rng = np.random.default_rng(2)
    w_orig = rng.standard_normal((3, 4))
    u = rng.standard_normal(3)
    u /= np.linalg.norm(u)
    sigma = 2.5
    old = OrderedDict(
        weight_orig=f64(w_orig), weight=f64(w_orig / sigma), weight_u=f64(u), bias=f64(np.zeros(3))
    )
    m = utils.spectral_norm(nn.Linear(4, 3).double()).eval()
    m.load_state_dict(old)
    m(randn64(1, 4))
    np.testing.assert_allclose(np_of(m.weight), w_orig / sigma, rtol=1e-10)


# ---- fusion ---------------------------------------------------------------------------------


def _trained_bn(bn, channels_last_axis, shape, seed):
    """Gives bn non-trivial running statistics and affine parameters, then eval mode."""
    rng = np.random.default_rng(seed)
    bn.train()
    for _ in range(3):
        bn(f64(rng.standard_normal(shape) * 2 + 1))
    if bn.weight is not None:
        with flambeau.no_grad():
            bn.weight.copy_(f64(rng.uniform(0.5, 2.0, bn.num_features)))
            bn.bias.copy_(f64(rng.standard_normal(bn.num_features)))
    return bn.eval()


@pytest.mark.parametrize("conv_bias, affine", [(True, True), (False, True), (True, False)])
def test_fuse_conv_bn_eval_equals_conv_then_bn(conv_bias, affine):
    conv = nn.Conv2d(3, 4, 3, padding=1, bias=conv_bias).double().eval()
    bn = _trained_bn(nn.BatchNorm2d(4, affine=affine).double(), 1, (5, 4, 3, 3), seed=3)
    fused = utils.fuse_conv_bn_eval(conv, bn)
    assert fused is not conv and isinstance(fused, nn.Conv2d)
    x = randn64(2, 3, 5, 5, requires_grad=False)
    np.testing.assert_allclose(np_of(fused(x)), np_of(bn(conv(x))), atol=1e-12)
    assert isinstance(fused.weight, nn.Parameter) and fused.bias is not None


def test_fuse_transposed_conv_and_weights_function():
    conv = nn.ConvTranspose1d(3, 4, 2).double().eval()
    bn = _trained_bn(nn.BatchNorm1d(4).double(), 1, (6, 4, 5), seed=4)
    fused = utils.fuse_conv_bn_eval(conv, bn, transpose=True)
    x = randn64(2, 3, 5, requires_grad=False)
    np.testing.assert_allclose(np_of(fused(x)), np_of(bn(conv(x))), atol=1e-12)
    w, b = utils.fuse_conv_bn_weights(
        conv.weight, None, bn.running_mean, bn.running_var, bn.eps, None, None, transpose=True
    )
    scale = 1 / np.sqrt(np_of(bn.running_var) + bn.eps)
    np.testing.assert_allclose(np_of(w), np_of(conv.weight) * scale[None, :, None])
    np.testing.assert_allclose(np_of(b), -np_of(bn.running_mean) * scale)
    assert w.requires_grad and b.dtype == flambeau.float64


def test_fuse_linear_bn_eval_equals_linear_then_bn():
    linear = nn.Linear(3, 4).double().eval()
    bn = _trained_bn(nn.BatchNorm1d(4).double(), 1, (8, 4), seed=5)
    fused = utils.fuse_linear_bn_eval(linear, bn)
    x = randn64(6, 3, requires_grad=False)
    np.testing.assert_allclose(np_of(fused(x)), np_of(bn(linear(x))), atol=1e-12)
    single = _trained_bn(nn.BatchNorm1d(1).double(), 1, (8, 1), seed=6)
    fused = utils.fuse_linear_bn_eval(linear, single)  # one feature broadcasts over all four
    scale = np_of(single.weight) / np.sqrt(np_of(single.running_var) + single.eps)
    expected = (np_of(linear(x)) - np_of(single.running_mean)) * scale + np_of(single.bias)
    np.testing.assert_allclose(np_of(fused(x)), expected, atol=1e-12)


def test_fusion_errors():
    conv, bn = nn.Conv2d(2, 3, 1), nn.BatchNorm2d(3)
    with pytest.raises(AssertionError, match="Fusion only for eval!"):
        utils.fuse_conv_bn_eval(conv, bn.eval())
    with pytest.raises(AssertionError, match="Fusion only for eval!"):
        utils.fuse_linear_bn_eval(nn.Linear(2, 3).eval(), nn.BatchNorm1d(3))
    with pytest.raises(AssertionError, match="running_mean and bn.running_var must not be None"):
        utils.fuse_conv_bn_eval(conv.eval(), nn.BatchNorm2d(3, track_running_stats=False).eval())
    with pytest.raises(AssertionError, match="linear.out_features=3 and bn.num_features=2"):
        utils.fuse_linear_bn_eval(nn.Linear(2, 3).eval(), nn.BatchNorm1d(2).eval())


# ---- memory formats, skip_init, clip_grad_norm ----------------------------------------------


def test_convert_conv_weight_memory_format():
    net = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.Sequential(nn.ConvTranspose2d(4, 2, 2)),
                        nn.Conv3d(1, 1, 1))  # fmt: skip
    x = flambeau.randn(1, 3, 6, 6)
    before = net[2](net[1](net[0](x))).detach().numpy()
    weights = [np_of(net[0].weight).copy(), np_of(net[2][0].weight).copy()]
    assert utils.convert_conv2d_weight_memory_format(net, flambeau.channels_last) is net
    for conv, w in zip((net[0], net[2][0]), weights):
        assert conv.weight.is_contiguous(memory_format=flambeau.channels_last)
        assert isinstance(conv.weight, nn.Parameter) and conv.weight.requires_grad
        np.testing.assert_array_equal(np_of(conv.weight), w)
    assert net[3].weight.is_contiguous()  # 3-D convolutions are left alone
    np.testing.assert_allclose(net[2](net[1](net[0](x))).detach().numpy(), before, rtol=1e-6)
    conv3 = nn.Conv3d(2, 2, 2)
    utils.convert_conv3d_weight_memory_format(conv3, flambeau.channels_last_3d)
    assert conv3.weight.is_contiguous(memory_format=flambeau.channels_last_3d)


class Filled(nn.Module):
    def __init__(self, n, device=None):
        super().__init__()
        self.w = nn.Parameter(flambeau.full((n,), 1.0, device=device))
        init.constant_(self.w, 5.0)


def test_skip_init_skips_the_initialisers():
    assert (np_of(Filled(3).w) == 5).all()
    m = utils.skip_init(Filled, 3)
    assert (np_of(m.w) == 1).all() and m.w.requires_grad  # constant_ did not run
    linear = utils.skip_init(nn.Linear, in_features=5, out_features=2, device="cpu")
    assert tuple(linear.weight.shape) == (2, 5) and tuple(linear.bias.shape) == (2,)
    assert (np_of(Filled(2).w) == 5).all()  # the switch does not outlive the call
    with pytest.raises(RuntimeError, match="Expected a Module; got"):
        utils.skip_init(int, 3)

    class NoDevice(nn.Module):
        def __init__(self, n):
            super().__init__()

    with pytest.raises(RuntimeError, match="must support a 'device' arg"):
        utils.skip_init(NoDevice, 3)


def test_clip_grad_norm_alias_warns_and_clips():
    p = nn.Parameter(flambeau.tensor([3.0, 4.0]))
    p.grad = flambeau.tensor([3.0, 4.0])
    with pytest.warns(FutureWarning, match="clip_grad_norm` is now deprecated"):
        total = utils.clip_grad_norm(p, 1.0)
    assert total.item() == pytest.approx(5.0)
    np.testing.assert_allclose(p.grad.numpy(), [0.6, 0.8], rtol=1e-5)
