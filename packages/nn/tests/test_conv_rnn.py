"""Convolution, pooling, padding, resampling, recurrent and attention layers: forward against
NumPy references, gradients by gradcheck in float64, packed-sequence round trips, errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from _helpers import f64, np_of, randn64

import flambeau
from flambeau import nn
from flambeau.autograd import gradcheck
from flambeau.nn import _functional_conv as FC
from flambeau.nn import _functional_rnn as FR
from flambeau.nn.utils import rnn as rnn_utils

# ---- NumPy references -----------------------------------------------------------------------


def np_conv(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    """Direct N-d cross-correlation loops over (N, C, *spatial)."""
    nd = x.ndim - 2
    s, p, d = ([v] * nd if isinstance(v, int) else list(v) for v in (stride, padding, dilation))
    x = np.pad(x, [(0, 0), (0, 0)] + [(pi, pi) for pi in p])
    n, cin = x.shape[:2]
    cout, cpg = w.shape[:2]
    k = w.shape[2:]
    out_sp = [(x.shape[2 + i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(nd)]
    out = np.zeros((n, cout, *out_sp))
    opg = cout // groups
    for o in range(cout):
        g = o // opg
        for pos in np.ndindex(*out_sp):
            for kk in np.ndindex(*k):
                idx = tuple(pos[i] * s[i] + kk[i] * d[i] for i in range(nd))
                patch = x[(slice(None), slice(g * cpg, (g + 1) * cpg), *idx)]
                out[(slice(None), o, *pos)] += patch @ w[(o, slice(None), *kk)]
    if b is not None:
        out += b.reshape(1, -1, *([1] * nd))
    return out


def np_conv_transpose(x, w, b=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """Scatter loops: each input pixel adds weight * value to its output window."""
    nd = x.ndim - 2
    s, p, op, d = ([v] * nd if isinstance(v, int) else list(v)
                   for v in (stride, padding, output_padding, dilation))  # fmt: skip
    n, cin = x.shape[:2]
    opg = w.shape[1]
    k = w.shape[2:]
    ipg = cin // groups
    full = [(x.shape[2 + i] - 1) * s[i] + d[i] * (k[i] - 1) + 1 + op[i] for i in range(nd)]
    out = np.zeros((n, opg * groups, *full))
    for c in range(cin):
        g = c // ipg
        for pos in np.ndindex(*x.shape[2:]):
            for kk in np.ndindex(*k):
                idx = tuple(pos[i] * s[i] + kk[i] * d[i] for i in range(nd))
                out[(slice(None), slice(g * opg, (g + 1) * opg), *idx)] += (
                    x[(slice(None), c, *pos)][:, None] * w[(c, slice(None), *kk)][None]
                )
    crop = tuple(slice(p[i], full[i] - p[i]) for i in range(nd))
    out = out[(slice(None), slice(None), *crop)]
    if b is not None:
        out += b.reshape(1, -1, *([1] * nd))
    return out


def np_pool(x, k, s, p, reduce, ceil_mode=False, count_include_pad=True):
    nd = x.ndim - 2
    fill = -np.inf if reduce == "max" else 0.0
    xp = np.pad(x, [(0, 0), (0, 0)] + [(p[i], p[i]) for i in range(nd)], constant_values=fill)
    sizes = []
    for i in range(nd):
        span = x.shape[2 + i] + 2 * p[i] - k[i]
        o = (-(-span // s[i]) if ceil_mode else span // s[i]) + 1
        if ceil_mode and (o - 1) * s[i] >= x.shape[2 + i] + p[i]:
            o -= 1
        sizes.append(o)
    out = np.zeros(x.shape[:2] + tuple(sizes))
    for pos in np.ndindex(*sizes):
        sl = tuple(slice(pos[i] * s[i], min(pos[i] * s[i] + k[i], xp.shape[2 + i]))
                   for i in range(nd))  # fmt: skip
        win = xp[(slice(None), slice(None), *sl)]
        if reduce == "max":
            out[(slice(None), slice(None), *pos)] = win.max(axis=tuple(range(2, 2 + nd)))
        else:
            if count_include_pad:
                cnt = math.prod(min(pos[i] * s[i] + k[i], x.shape[2 + i] + 2 * p[i])
                                - pos[i] * s[i] for i in range(nd))  # fmt: skip
            else:
                cnt = math.prod(min(pos[i] * s[i] + k[i], x.shape[2 + i] + p[i])
                                - max(pos[i] * s[i], p[i]) for i in range(nd))  # fmt: skip
            out[(slice(None), slice(None), *pos)] = win.sum(axis=tuple(range(2, 2 + nd))) / cnt
    return out


def sigmoid(v):
    return 1 / (1 + np.exp(-v))


def np_lstm_step(x, h, c, w_ih, w_hh, b_ih, b_hh):
    g = x @ w_ih.T + b_ih + h @ w_hh.T + b_hh
    i, f, gg, o = np.split(g, 4, axis=-1)
    c = sigmoid(f) * c + sigmoid(i) * np.tanh(gg)
    return sigmoid(o) * np.tanh(c), c


def np_gru_step(x, h, w_ih, w_hh, b_ih, b_hh):
    gi = x @ w_ih.T + b_ih
    gh = h @ w_hh.T + b_hh
    ir, iz, in_ = np.split(gi, 3, axis=-1)
    hr, hz, hn = np.split(gh, 3, axis=-1)
    r, z = sigmoid(ir + hr), sigmoid(iz + hz)
    n = np.tanh(in_ + r * hn)
    return (1 - z) * n + z * h


def params(m):
    return {k: np_of(v) for k, v in m.named_parameters()}


# ---- convolution ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "nd, kw",
    [
        (1, dict(stride=2, padding=1, dilation=2, groups=1)),
        (2, dict(stride=(1, 2), padding=(1, 0), dilation=1, groups=2)),
        (3, dict(stride=1, padding=1, dilation=1, groups=1)),
    ],
)
def test_conv_forward_matches_loops(nd, kw):
    x = randn64(2, 4, *([5] * nd), seed=1)
    w = randn64(6, 4 // kw["groups"], *([3] * nd), seed=2)
    b = randn64(6, seed=3)
    fn = (FC.conv1d, FC.conv2d, FC.conv3d)[nd - 1]
    ref = np_conv(np_of(x), np_of(w), np_of(b), **kw)
    np.testing.assert_allclose(np_of(fn(x, w, b, **kw)), ref, rtol=1e-10, atol=1e-12)


def test_conv2d_gradcheck_and_unbatched():
    x = randn64(1, 2, 4, 4, seed=4)
    w = randn64(3, 2, 2, 2, seed=5)
    b = randn64(3, seed=6)
    assert gradcheck(lambda x, w, b: FC.conv2d(x, w, b, stride=2, padding=1), (x, w, b))
    out = FC.conv2d(x[0], w, b)
    np.testing.assert_allclose(np_of(out), np_of(FC.conv2d(x, w, b))[0], rtol=1e-12)


@pytest.mark.parametrize("mode", ["zeros", "reflect", "replicate", "circular"])
def test_conv_module_padding_modes(mode):
    m = nn.Conv2d(2, 3, 3, padding=1, padding_mode=mode, dtype=flambeau.float64)
    x = randn64(1, 2, 3, 4, seed=7)
    np_mode = {"zeros": "constant", "reflect": "reflect", "replicate": "edge", "circular": "wrap"}
    xp = np.pad(np_of(x), [(0, 0), (0, 0), (1, 1), (1, 1)], mode=np_mode[mode])
    ref = np_conv(xp, np_of(m.weight), np_of(m.bias))
    np.testing.assert_allclose(np_of(m(x)), ref, rtol=1e-10, atol=1e-12)
    assert gradcheck(lambda x, w, b: m(x), (x, m.weight, m.bias))


def test_conv_same_valid_and_repr():
    m = nn.Conv1d(2, 2, 4, padding="same", dilation=2, padding_mode="reflect")
    assert m(flambeau.randn(1, 2, 9)).shape == (1, 2, 9)
    assert m._reversed_padding_repeated_twice == [3, 3]
    v = nn.Conv1d(2, 2, 4, padding="valid")
    assert v(flambeau.randn(1, 2, 9)).shape == (1, 2, 6)
    assert repr(nn.Conv2d(2, 4, 3, stride=2, bias=False)) == (
        "Conv2d(2, 4, kernel_size=(3, 3), stride=(2, 2), bias=False)"
    )
    with pytest.raises(ValueError, match="strided"):
        nn.Conv1d(2, 2, 3, stride=2, padding="same")


def test_conv_default_init_bounds():
    m = nn.Conv2d(4, 8, 3)
    bound = 1 / math.sqrt(4 * 9)
    assert np.abs(np_of(m.weight)).max() <= bound + 1e-7
    assert np.abs(np_of(m.bias)).max() <= bound + 1e-7
    t = nn.ConvTranspose2d(4, 6, 3, groups=2)
    assert tuple(t.weight.shape) == (4, 3, 3, 3)


def test_conv_errors_name_module_and_shapes():
    m = nn.Conv2d(3, 4, 3)
    with pytest.raises(RuntimeError, match=r"Conv2d.*3 channels.*\(1, 2, 5, 5\)"):
        m(flambeau.randn(1, 2, 5, 5))
    with pytest.raises(RuntimeError, match=r"Conv2d.*3-D.*4-D.*\(5, 5\)"):
        m(flambeau.randn(5, 5))
    with pytest.raises(RuntimeError, match="conv1d.*smaller than the dilated kernel"):
        FC.conv1d(flambeau.randn(1, 1, 2), flambeau.randn(1, 1, 3))
    with pytest.raises(ValueError, match="padding_mode"):
        nn.Conv1d(1, 1, 1, padding_mode="mirror")


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_conv_transpose_matches_scatter(nd):
    kw = dict(stride=2, padding=1, output_padding=1, groups=2, dilation=1)
    x = randn64(2, 4, *([3] * nd), seed=8)
    w = randn64(4, 3, *([2] * nd), seed=9)
    b = randn64(6, seed=10)
    fn = (FC.conv_transpose1d, FC.conv_transpose2d, FC.conv_transpose3d)[nd - 1]
    ref = np_conv_transpose(np_of(x), np_of(w), np_of(b), **kw)
    np.testing.assert_allclose(np_of(fn(x, w, b, **kw)), ref, rtol=1e-10, atol=1e-12)


def test_conv_transpose_module_output_size_and_gradcheck():
    m = nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1, dtype=flambeau.float64)
    x = randn64(1, 2, 3, 3, seed=11)
    assert m(x).shape == (1, 3, 5, 5)
    assert m(x, output_size=[6, 6]).shape == (1, 3, 6, 6)
    assert m(x, output_size=(1, 3, 6, 5)).shape == (1, 3, 6, 5)
    with pytest.raises(ValueError, match="ConvTranspose2d.*output size"):
        m(x, output_size=[8, 8])
    assert gradcheck(lambda x, w, b: m(x, output_size=[6, 6]), (x, m.weight, m.bias))
    m1 = nn.ConvTranspose1d(2, 2, 3, dilation=2, dtype=flambeau.float64)
    x1 = randn64(2, 2, 4, seed=12)
    ref = np_conv_transpose(np_of(x1), np_of(m1.weight), np_of(m1.bias), dilation=2)
    np.testing.assert_allclose(np_of(m1(x1)), ref, rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match="zeros"):
        nn.ConvTranspose1d(1, 1, 2, padding_mode="reflect")


# ---- pooling --------------------------------------------------------------------------------


@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("ceil_mode", [False, True])
def test_max_and_avg_pool_match_loops(nd, ceil_mode):
    x = randn64(2, 3, *([6] * nd), seed=13)
    k, s, p = [3] * nd, [2] * nd, [1] * nd
    mp = (nn.MaxPool1d, nn.MaxPool2d, nn.MaxPool3d)[nd - 1](3, 2, 1, ceil_mode=ceil_mode)
    ap = (nn.AvgPool1d, nn.AvgPool2d, nn.AvgPool3d)[nd - 1](3, 2, 1, ceil_mode=ceil_mode)
    np.testing.assert_allclose(np_of(mp(x)), np_pool(np_of(x), k, s, p, "max", ceil_mode))
    np.testing.assert_allclose(
        np_of(ap(x)), np_pool(np_of(x), k, s, p, "avg", ceil_mode), rtol=1e-12
    )
    apx = (nn.AvgPool1d, nn.AvgPool2d, nn.AvgPool3d)[nd - 1](
        3, 2, 1, ceil_mode=ceil_mode, count_include_pad=False
    )
    np.testing.assert_allclose(
        np_of(apx(x)), np_pool(np_of(x), k, s, p, "avg", ceil_mode, False), rtol=1e-12
    )


def test_pool_gradcheck_dilation_and_indices():
    x = randn64(1, 2, 5, 5, seed=14)
    assert gradcheck(lambda x: FC.max_pool2d(x, 2, 1, dilation=2), (x,))
    assert gradcheck(lambda x: FC.avg_pool2d(x, 3, 2, 1), (x,))
    assert gradcheck(lambda x: FC.avg_pool1d(x, 2), (randn64(1, 2, 6, seed=15),))
    out, idx = nn.MaxPool2d(2, return_indices=True)(x)
    flat = np_of(x).reshape(1, 2, -1)
    np.testing.assert_array_equal(
        np.take_along_axis(flat, np_of(idx).reshape(1, 2, -1), 2).reshape(out.shape), np_of(out)
    )
    dil = FC.max_pool1d(randn64(1, 1, 7, seed=16), 3, 1, dilation=2)
    xs = np_of(randn64(1, 1, 7, seed=16))[0, 0]
    np.testing.assert_allclose(np_of(dil)[0, 0], [xs[i : i + 5 : 2].max() for i in range(3)])


def test_max_unpool_round_trip_and_gradcheck():
    x = randn64(2, 3, 4, 6, seed=17)
    out, idx = FC.max_pool2d(x, 2, return_indices=True)
    up = nn.MaxUnpool2d(2)(out, idx)
    assert up.shape == x.shape
    ref = np.zeros(np_of(x).size // 1).reshape(2, 3, -1)
    np.put_along_axis(ref, np_of(idx).reshape(2, 3, -1), np_of(out).reshape(2, 3, -1), 2)
    np.testing.assert_allclose(np_of(up), ref.reshape(x.shape))
    assert nn.MaxUnpool2d(2)(out, idx, output_size=(5, 7)).shape == (2, 3, 5, 7)
    assert gradcheck(lambda o: FC.max_unpool2d(o, idx, 2), (out.detach().requires_grad_(),))
    o1, i1 = FC.max_pool1d(randn64(1, 2, 6, seed=18), 2, return_indices=True)
    assert nn.MaxUnpool1d(2)(o1, i1).shape == (1, 2, 6)
    o3, i3 = FC.max_pool3d(randn64(1, 1, 4, 4, 4, seed=19), 2, return_indices=True)
    assert nn.MaxUnpool3d(2)(o3, i3).shape == (1, 1, 4, 4, 4)
    with pytest.raises(ValueError, match="max_unpool2d.*invalid output_size"):
        FC.max_unpool2d(out, idx, 2, output_size=(9, 9))


def test_adaptive_pools():
    x = randn64(2, 3, 7, 5, seed=20)
    xs = np_of(x)
    out = nn.AdaptiveAvgPool2d((3, 2))(x)
    ref = np.zeros((2, 3, 3, 2))
    for i in range(3):
        for j in range(2):
            h0, h1 = (i * 7) // 3, -(-((i + 1) * 7) // 3)
            w0, w1 = (j * 5) // 2, -(-((j + 1) * 5) // 2)
            ref[:, :, i, j] = xs[:, :, h0:h1, w0:w1].mean(axis=(2, 3))
    np.testing.assert_allclose(np_of(out), ref, rtol=1e-12)
    m, idx = nn.AdaptiveMaxPool2d((3, 2), return_indices=True)(x)
    assert idx.dtype == flambeau.int64 and m.shape == (2, 3, 3, 2)
    assert nn.AdaptiveAvgPool2d((None, 1))(x).shape == (2, 3, 7, 1)
    assert nn.AdaptiveAvgPool1d(2)(x[0]).shape == (3, 7, 2)
    assert nn.AdaptiveAvgPool3d(1)(x.unsqueeze(2)).shape == (2, 3, 1, 1, 1)
    assert nn.AdaptiveMaxPool1d(3)(x[:, :, 0]).shape == (2, 3, 3)
    assert gradcheck(lambda x: FC.adaptive_avg_pool2d(x, (3, 2)), (x,))
    assert gradcheck(lambda x: FC.adaptive_max_pool2d(x, (3, 2)), (x,))


def test_lp_pool():
    x = randn64(1, 2, 6, seed=21)
    out = nn.LPPool1d(2, 3)(x)
    ref = np.sqrt((np_of(x) ** 2).reshape(1, 2, 2, 3).sum(-1))
    np.testing.assert_allclose(np_of(out), ref, rtol=1e-12)
    assert nn.LPPool2d(1, 2)(randn64(1, 1, 4, 4, seed=22)).shape == (1, 1, 2, 2)


def test_pool_errors():
    with pytest.raises(RuntimeError, match=r"max_pool2d.*3-D.*4-D.*\(5,\)"):
        nn.MaxPool2d(2)(flambeau.randn(5))
    with pytest.raises(RuntimeError, match="half of effective kernel"):
        FC.max_pool1d(flambeau.randn(1, 1, 8), 2, padding=2)


# ---- padding --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "cls, np_mode", [("Reflection", "reflect"), ("Replication", "edge"), ("Circular", "wrap")]
)
@pytest.mark.parametrize("nd", [1, 2, 3])
def test_padding_modules_match_numpy(cls, np_mode, nd):
    pads = (2, 1, 1, 2, 0, 1)[: 2 * nd]
    m = getattr(nn, f"{cls}Pad{nd}d")(pads)
    x = randn64(2, 2, *([4] * nd), seed=23)
    width = [(0, 0), (0, 0)] + [(pads[2 * i], pads[2 * i + 1]) for i in reversed(range(nd))]
    np.testing.assert_allclose(np_of(m(x)), np.pad(np_of(x), width, mode=np_mode))
    np.testing.assert_allclose(np_of(m(x[0])), np.pad(np_of(x[0]), width[1:], mode=np_mode))
    assert gradcheck(lambda x: m(x), (randn64(1, 1, *([3] * nd), seed=nd),))


def test_constant_and_zero_pad():
    x = randn64(1, 2, 3, seed=24)
    np.testing.assert_allclose(
        np_of(nn.ConstantPad1d((1, 2), 3.5)(x)),
        np.pad(np_of(x), [(0, 0), (0, 0), (1, 2)], constant_values=3.5),
    )
    assert nn.ZeroPad2d((1, 0, 2, 0))(randn64(1, 1, 2, 2)).shape == (1, 1, 4, 3)
    assert nn.ZeroPad3d(1)(randn64(1, 1, 2, 2, 2)).shape == (1, 1, 4, 4, 4)
    assert repr(nn.ZeroPad2d(1)) == "ZeroPad2d((1, 1, 1, 1))"
    assert FC.pad(x, (1, 1, 1, 1, 1, 1), value=2.0).shape == (3, 4, 5)
    with pytest.raises(RuntimeError, match="padding size should be less"):
        FC.pad(x, (3, 0), mode="reflect")
    with pytest.raises(ValueError, match="divisible by 2"):
        FC.pad(x, (1,))
    with pytest.raises(ValueError, match="ReflectionPad2d.*3-D or 4-D.*\\(2,\\)"):
        nn.ReflectionPad2d(1)(flambeau.randn(2))


# ---- resampling and pixel shuffle -----------------------------------------------------------


def np_linear_resize(x, out, align_corners, axis, scale=None):
    n = x.shape[axis]
    if align_corners:
        src = np.arange(out) * ((n - 1) / (out - 1) if out > 1 else 0.0)
    else:
        ratio = 1.0 / scale if scale else n / out
        src = np.maximum((np.arange(out) + 0.5) * ratio - 0.5, 0.0)
    lo = np.minimum(np.floor(src).astype(int), n - 1)
    hi = np.minimum(lo + 1, n - 1)
    frac = (src - lo).reshape([-1 if a == axis else 1 for a in range(x.ndim)])
    return np.take(x, lo, axis) * (1 - frac) + np.take(x, hi, axis) * frac


@pytest.mark.parametrize("align_corners", [False, True])
def test_interpolate_linear_modes(align_corners):
    x1 = randn64(2, 2, 5, seed=25)
    out = FC.interpolate(x1, size=8, mode="linear", align_corners=align_corners)
    np.testing.assert_allclose(np_of(out), np_linear_resize(np_of(x1), 8, align_corners, 2))
    x2 = randn64(1, 2, 3, 4, seed=26)
    out = nn.Upsample(size=(5, 7), mode="bilinear", align_corners=align_corners)(x2)
    ref = np_linear_resize(np_linear_resize(np_of(x2), 5, align_corners, 2), 7, align_corners, 3)
    np.testing.assert_allclose(np_of(out), ref, rtol=1e-12)
    x3 = randn64(1, 1, 2, 3, 2, seed=27)
    out = FC.interpolate(x3, scale_factor=2, mode="trilinear", align_corners=align_corners)
    ref = np_of(x3)
    for ax in (2, 3, 4):
        ref = np_linear_resize(ref, 2 * ref.shape[ax], align_corners, ax, 2.0)
    np.testing.assert_allclose(np_of(out), ref, rtol=1e-12)
    assert gradcheck(lambda x: FC.interpolate(x, size=(5, 7), mode="bilinear",
                                              align_corners=align_corners), (x2,))  # fmt: skip


def test_interpolate_nearest_and_area():
    x = randn64(1, 2, 3, 4, seed=28)
    out = nn.UpsamplingNearest2d(scale_factor=2)(x)
    np.testing.assert_allclose(np_of(out), np_of(x).repeat(2, 2).repeat(2, 3))
    out = FC.interpolate(x, size=(5, 3))
    rows = np.floor(np.arange(5) * 3 / 5).astype(int)
    cols = np.floor(np.arange(3) * 4 / 3).astype(int)
    np.testing.assert_allclose(np_of(out), np_of(x)[:, :, rows][:, :, :, cols])
    out = FC.interpolate(x, size=(1, 2), mode="area")
    np.testing.assert_allclose(
        np_of(out), np_of(x).reshape(1, 2, 1, 3, 2, 2).mean(axis=(3, 5)), rtol=1e-12
    )
    bil = nn.UpsamplingBilinear2d(size=(4, 4))(x)
    ref = np_linear_resize(np_linear_resize(np_of(x), 4, True, 2), 4, True, 3)
    np.testing.assert_allclose(np_of(bil), ref, rtol=1e-12)
    assert gradcheck(lambda x: FC.interpolate(x, scale_factor=(2, 1.5)), (x,))
    with pytest.raises(ValueError, match="exactly one"):
        FC.interpolate(x)
    with pytest.raises(ValueError, match="align_corners"):
        FC.interpolate(x, scale_factor=2, align_corners=True)
    with pytest.raises(NotImplementedError, match="'linear' needs a 3-D"):
        FC.interpolate(x, scale_factor=2, mode="linear")


def test_pixel_shuffle_round_trip():
    x = randn64(2, 8, 3, 2, seed=29)
    out = nn.PixelShuffle(2)(x)
    ref = np_of(x).reshape(2, 2, 2, 2, 3, 2).transpose(0, 1, 4, 2, 5, 3).reshape(2, 2, 6, 4)
    np.testing.assert_allclose(np_of(out), ref)
    np.testing.assert_allclose(np_of(nn.PixelUnshuffle(2)(out)), np_of(x))
    assert nn.PixelShuffle(2)(randn64(3, 2, 4, 1, 1)).shape == (3, 2, 1, 2, 2)
    assert gradcheck(lambda x: FC.pixel_shuffle(x, 2), (x,))
    with pytest.raises(RuntimeError, match="input.size\\(-3\\)=3 is not divisible by 4"):
        FC.pixel_shuffle(randn64(2, 3, 3, 2), 2)


def test_unfold_and_fold():
    x = randn64(2, 3, 4, 5, seed=30)
    cols = FC.unfold(x, (2, 3), padding=1, stride=(2, 1))
    xp = np.pad(np_of(x), [(0, 0), (0, 0), (1, 1), (1, 1)])
    ref = []
    for i in range(0, xp.shape[2] - 1, 2):
        for j in range(0, xp.shape[3] - 2):
            ref.append(xp[:, :, i : i + 2, j : j + 3].reshape(2, -1))
    np.testing.assert_allclose(np_of(cols), np.stack(ref, -1))
    back = FC.fold(cols, (4, 5), (2, 3), padding=1, stride=(2, 1))
    counts = FC.fold(FC.unfold(flambeau.ones(1, 1, 4, 5, dtype=flambeau.float64), (2, 3),
                               padding=1, stride=(2, 1)), (4, 5), (2, 3), padding=1,
                     stride=(2, 1))  # fmt: skip
    np.testing.assert_allclose(np_of(back), np_of(x) * np_of(counts), rtol=1e-12)
    assert gradcheck(lambda x: FC.unfold(x, 2, stride=2), (randn64(1, 2, 3, 4, seed=3),))


# ---- attention ------------------------------------------------------------------------------


def np_softmax(v):
    e = np.exp(v - v.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def test_scaled_dot_product_attention_masks():
    q, k, v = randn64(2, 3, 4, seed=31), randn64(2, 5, 4, seed=32), randn64(2, 5, 2, seed=33)
    qs, ks, vs = np_of(q), np_of(k), np_of(v)
    scores = qs @ ks.transpose(0, 2, 1) / 2.0
    np.testing.assert_allclose(
        np_of(FR.scaled_dot_product_attention(q, k, v)), np_softmax(scores) @ vs, rtol=1e-12
    )
    mask = np.random.default_rng(0).random((3, 5)) > 0.3
    mask[:, 0] = True
    out = FR.scaled_dot_product_attention(q, k, v, attn_mask=flambeau.tensor(mask), scale=0.3)
    ref = np_softmax(np.where(mask, qs @ ks.transpose(0, 2, 1) * 0.3, -np.inf)) @ vs
    np.testing.assert_allclose(np_of(out), ref, rtol=1e-12)
    fmask = np.random.default_rng(1).standard_normal((3, 5))
    out = FR.scaled_dot_product_attention(q, k, v, attn_mask=f64(fmask))
    np.testing.assert_allclose(np_of(out), np_softmax(scores + fmask) @ vs, rtol=1e-12)
    out = FR.scaled_dot_product_attention(q, k, v, is_causal=True)
    causal = np.tril(np.ones((3, 5), bool))
    np.testing.assert_allclose(
        np_of(out), np_softmax(np.where(causal, scores, -np.inf)) @ vs, rtol=1e-12
    )
    assert gradcheck(lambda q, k, v: FR.scaled_dot_product_attention(q, k, v, is_causal=True),
                     (q, k, v))  # fmt: skip
    flambeau.manual_seed(0)
    dropped = FR.scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    assert dropped.shape == (2, 3, 2)
    with pytest.raises(RuntimeError, match="is_causal"):
        FR.scaled_dot_product_attention(q, k, v, attn_mask=flambeau.tensor(mask), is_causal=True)
    with pytest.raises(RuntimeError, match=r"query.*\(2, 3, 4\).*key.*\(2, 5, 3\)"):
        FR.scaled_dot_product_attention(q, randn64(2, 5, 3), v)


def np_mha(q, k, v, p, heads, mask=None):
    """Sequence-first NumPy multi-head attention with the module's parameters."""
    e = q.shape[-1]
    w, b = p["in_proj_weight"], p["in_proj_bias"]
    qp, kp, vp = (
        q @ w[:e].T + b[:e],
        k @ w[e : 2 * e].T + b[e : 2 * e],
        v @ w[2 * e :].T + b[2 * e :],
    )
    L, N, _ = q.shape
    S = k.shape[0]
    hd = e // heads

    def split(t, n):
        return t.reshape(n, N, heads, hd).transpose(1, 2, 0, 3)

    scores = split(qp, L) @ split(kp, S).transpose(0, 1, 3, 2) / math.sqrt(hd)
    if mask is not None:
        scores = scores + mask
    att = np_softmax(scores)
    out = (att @ split(vp, S)).transpose(2, 0, 1, 3).reshape(L, N, e)
    return out @ p["out_proj.weight"].T + p["out_proj.bias"], att


def test_multihead_attention_forward_masks_and_weights():
    m = nn.MultiheadAttention(6, 2, batch_first=True, dtype=flambeau.float64)
    flambeau.nn.init.normal_(m.in_proj_bias)
    q, kv = randn64(2, 3, 6, seed=34), randn64(2, 4, 6, seed=35)
    kpm = np.zeros((2, 4), bool)
    kpm[1, 3] = True
    am = np.zeros((3, 4), bool)
    am[0, 2] = True
    out, w = m(q, kv, kv, key_padding_mask=flambeau.tensor(kpm), attn_mask=flambeau.tensor(am),
               average_attn_weights=False)  # fmt: skip
    add = np.where(am[None, None] | kpm[:, None, None, :], -np.inf, 0.0)
    ref, att = np_mha(np_of(q).transpose(1, 0, 2), np_of(kv).transpose(1, 0, 2),
                      np_of(kv).transpose(1, 0, 2), params(m), 2, add)  # fmt: skip
    np.testing.assert_allclose(np_of(out), ref.transpose(1, 0, 2), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np_of(w), att, rtol=1e-10, atol=1e-12)
    _, wavg = m(q, kv, kv)
    assert wavg.shape == (2, 3, 4)
    np.testing.assert_allclose(np_of(wavg).sum(-1), np.ones((2, 3)))
    assert m(q, kv, kv, need_weights=False)[1] is None
    unb, wu = m(q[0], kv[0], kv[0])
    np.testing.assert_allclose(np_of(unb), np_of(m(q, kv, kv)[0])[0], rtol=1e-12)
    assert wu.shape == (3, 4)
    assert gradcheck(lambda q, w: m(q, kv, kv)[0], (q, m.in_proj_weight))
    with pytest.raises(RuntimeError, match=r"MultiheadAttention.*embed_dim 6.*\(2, 3, 5\)"):
        m(randn64(2, 3, 5), kv, kv)
    with pytest.raises(RuntimeError, match="2D attn_mask"):
        m(q, kv, kv, attn_mask=flambeau.zeros(3, 3, dtype=flambeau.bool))


def test_multihead_attention_kdim_bias_kv_zero_attn():
    m = nn.MultiheadAttention(4, 2, kdim=3, vdim=5, add_bias_kv=True, add_zero_attn=True,
                              dtype=flambeau.float64)  # fmt: skip
    names = [n for n, _ in m.named_parameters()]
    assert "q_proj_weight" in names and "bias_k" in names and "in_proj_weight" not in names
    out, w = m(randn64(3, 2, 4, seed=36), randn64(5, 2, 3, seed=37), randn64(5, 2, 5, seed=38))
    assert out.shape == (3, 2, 4) and w.shape == (2, 3, 7)


def test_transformer_layers_shapes_modes_and_gradcheck():
    layer = nn.TransformerEncoderLayer(4, 2, dim_feedforward=6, dropout=0.0, activation="gelu",
                                       norm_first=True, dtype=flambeau.float64)  # fmt: skip
    enc = nn.TransformerEncoder(layer, 2)
    assert len(enc.layers) == 2 and enc.layers[0].linear1.weight is not layer.linear1.weight
    x = randn64(3, 2, 4, seed=39)
    mask = nn.Transformer.generate_square_subsequent_mask(3, dtype=flambeau.float64)
    assert np.isneginf(np_of(mask)[0, 1]) and np_of(mask)[1, 0] == 0
    assert enc(x, mask=mask).shape == (3, 2, 4)
    assert gradcheck(lambda x: enc(x, mask=mask), (x,))
    # post-norm layer against a NumPy evaluation of the same parameters
    post = nn.TransformerEncoderLayer(4, 2, dim_feedforward=6, dropout=0.0,
                                      dtype=flambeau.float64)  # fmt: skip
    p = params(post)
    xs = np_of(x)

    def ln(v, w, b):
        mu, var = v.mean(-1, keepdims=True), v.var(-1, keepdims=True)
        return (v - mu) / np.sqrt(var + 1e-5) * w + b

    sa, _ = np_mha(xs, xs, xs, {k[len("self_attn.") :]: v for k, v in p.items()
                                if k.startswith("self_attn.")}, 2)  # fmt: skip
    h = ln(xs + sa, p["norm1.weight"], p["norm1.bias"])
    ff = np.maximum(h @ p["linear1.weight"].T + p["linear1.bias"], 0)
    ref = ln(h + ff @ p["linear2.weight"].T + p["linear2.bias"], p["norm2.weight"],
             p["norm2.bias"])  # fmt: skip
    np.testing.assert_allclose(np_of(post(x)), ref, rtol=1e-10, atol=1e-12)


def test_transformer_full_model():
    model = nn.Transformer(d_model=4, nhead=2, num_encoder_layers=1, num_decoder_layers=2,
                           dim_feedforward=8, dropout=0.1, batch_first=True,
                           dtype=flambeau.float64)  # fmt: skip
    src, tgt = randn64(2, 5, 4, seed=40), randn64(2, 3, 4, seed=41)
    model.eval()
    a = model(src, tgt, tgt_mask=model.generate_square_subsequent_mask(3, dtype=flambeau.float64))
    b = model(src, tgt, tgt_mask=model.generate_square_subsequent_mask(3, dtype=flambeau.float64))
    assert a.shape == (2, 3, 4)
    np.testing.assert_allclose(np_of(a), np_of(b))
    dec = nn.TransformerDecoderLayer(4, 2, 8, dropout=0.0, norm_first=True, dtype=flambeau.float64)
    assert dec(tgt.transpose(0, 1), src.transpose(0, 1)).shape == (3, 2, 4)
    with pytest.raises(RuntimeError, match="Transformer.*batch number"):
        model(src, randn64(3, 3, 4))
    with pytest.raises(RuntimeError, match="relu/gelu"):
        nn.TransformerEncoderLayer(4, 2, activation="swish")


# ---- recurrent layers -----------------------------------------------------------------------


def test_lstm_matches_numpy_steps_multi_layer_bidirectional():
    m = nn.LSTM(3, 4, num_layers=2, bidirectional=True, dtype=flambeau.float64)
    p = params(m)
    x = randn64(5, 2, 3, seed=42)
    h0, c0 = randn64(4, 2, 4, seed=43), randn64(4, 2, 4, seed=44)
    out, (hn, cn) = m(x, (h0, c0))
    layer_in = np_of(x)
    ref_h, ref_c = [], []
    for layer in range(2):
        outs = []
        for d, sfx in enumerate(["", "_reverse"]):
            w = [p[f"{n}_l{layer}{sfx}"] for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
            h, c = np_of(h0)[2 * layer + d], np_of(c0)[2 * layer + d]
            seq = []
            for t in range(5)[:: -1 if d else 1]:
                h, c = np_lstm_step(layer_in[t], h, c, *w)
                seq.append(h)
            outs.append(np.stack(seq[:: -1 if d else 1]))
            ref_h.append(h)
            ref_c.append(c)
        layer_in = np.concatenate(outs, -1)
    np.testing.assert_allclose(np_of(out), layer_in, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np_of(hn), np.stack(ref_h), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np_of(cn), np.stack(ref_c), rtol=1e-10, atol=1e-12)


def test_gru_and_rnn_match_numpy_batch_first():
    g = nn.GRU(3, 2, batch_first=True, dtype=flambeau.float64)
    p = params(g)
    x = randn64(2, 4, 3, seed=45)
    out, hn = g(x)
    h = np.zeros((2, 2))
    seq = []
    for t in range(4):
        h = np_gru_step(
            np_of(x)[:, t],
            h,
            *(p[f"{n}_l0"] for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")),
        )
        seq.append(h)
    np.testing.assert_allclose(np_of(out), np.stack(seq, 1), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np_of(hn)[0], h, rtol=1e-10, atol=1e-12)
    for nl, act in (("tanh", np.tanh), ("relu", lambda v: np.maximum(v, 0))):
        r = nn.RNN(3, 2, nonlinearity=nl, bias=False, dtype=flambeau.float64)
        p = params(r)
        out, _ = r(x[0])  # unbatched (L, H_in)
        h = np.zeros(2)
        for t in range(4):
            h = act(np_of(x)[0, t] @ p["weight_ih_l0"].T + h @ p["weight_hh_l0"].T)
        np.testing.assert_allclose(np_of(out)[-1], h, rtol=1e-10, atol=1e-12)


def test_lstm_proj_size_and_parameter_names():
    m = nn.LSTM(3, 5, proj_size=2, dtype=flambeau.float64)
    names = [n for n, _ in m.named_parameters()]
    assert names == ["weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0", "weight_hr_l0"]
    assert tuple(m.weight_hh_l0.shape) == (20, 2)
    p = params(m)
    x = randn64(3, 1, 3, seed=46)
    out, (hn, cn) = m(x)
    h, c = np.zeros((1, 2)), np.zeros((1, 5))
    for t in range(3):
        h, c = np_lstm_step(np_of(x)[t], h, c, p["weight_ih_l0"], p["weight_hh_l0"],
                            p["bias_ih_l0"], p["bias_hh_l0"])  # fmt: skip
        h = h @ p["weight_hr_l0"].T
    np.testing.assert_allclose(np_of(out)[-1], h, rtol=1e-10, atol=1e-12)
    assert hn.shape == (1, 1, 2) and cn.shape == (1, 1, 5)
    assert repr(m) == "LSTM(3, 5, proj_size=2)"


@pytest.mark.parametrize("cls", ["LSTM", "GRU", "RNN"])
def test_rnn_gradcheck_inputs_and_parameters(cls):
    m = getattr(nn, cls)(2, 2, num_layers=2, bidirectional=True, dtype=flambeau.float64)
    x = randn64(3, 2, 2, seed=47)
    ps = list(m.parameters())

    def f(x, *weights):
        out, h = m(x)
        return out, h[0] if isinstance(h, tuple) else h

    assert gradcheck(f, (x, *ps[:4], ps[-1]))


def test_cells_match_numpy_and_gradcheck():
    x, h, c = randn64(2, 3, seed=48), randn64(2, 4, seed=49), randn64(2, 4, seed=50)
    lc = nn.LSTMCell(3, 4, dtype=flambeau.float64)
    hy, cy = lc(x, (h, c))
    p = params(lc)
    rh, rc = np_lstm_step(np_of(x), np_of(h), np_of(c), *p.values())
    np.testing.assert_allclose(np_of(hy), rh, rtol=1e-10)
    np.testing.assert_allclose(np_of(cy), rc, rtol=1e-10)
    gc = nn.GRUCell(3, 4, dtype=flambeau.float64)
    np.testing.assert_allclose(
        np_of(gc(x, h)), np_gru_step(np_of(x), np_of(h), *params(gc).values()), rtol=1e-10
    )
    rc_ = nn.RNNCell(3, 4, nonlinearity="relu", dtype=flambeau.float64)
    p = params(rc_)
    ref = np.maximum(np_of(x) @ p["weight_ih"].T + p["bias_ih"]
                     + np_of(h) @ p["weight_hh"].T + p["bias_hh"], 0)  # fmt: skip
    np.testing.assert_allclose(np_of(rc_(x, h)), ref, rtol=1e-10)
    assert lc(x[0])[0].shape == (4,)
    assert gradcheck(lambda x, h, c, w, b: lc(x, (h, c)), (x, h, c, lc.weight_ih, lc.bias_hh))
    assert gradcheck(lambda x, h, w, b: gc(x, h), (x, h, gc.weight_hh, gc.bias_hh))
    with pytest.raises(RuntimeError, match=r"GRUCell.*\(2, 5\).*\(2, 4\)"):
        gc(x, randn64(2, 5))
    with pytest.raises(RuntimeError, match="LSTMCell.*input_size.*got 2"):
        lc(randn64(2, 2))


def test_rnn_errors_name_module_and_shapes():
    m = nn.LSTM(3, 4, num_layers=2)
    with pytest.raises(RuntimeError, match="LSTM.*input_size. Expected 3, got 2"):
        m(flambeau.randn(5, 1, 2))
    with pytest.raises(RuntimeError, match=r"LSTM.*hidden size \(2, 1, 4\), got \(1, 1, 4\)"):
        m(flambeau.randn(5, 1, 3), (flambeau.zeros(1, 1, 4), flambeau.zeros(2, 1, 4)))
    with pytest.raises(ValueError, match="GRU.*2-D.*3-D.*\\(5,\\)"):
        nn.GRU(3, 4)(flambeau.randn(5))
    with pytest.raises(ValueError, match="proj_size"):
        nn.GRU(3, 4, proj_size=2)
    with pytest.raises(ValueError, match="nonlinearity"):
        nn.RNN(3, 4, nonlinearity="gelu")


def test_rnn_dropout_between_layers_only_in_training():
    m = nn.GRU(3, 4, num_layers=2, dropout=0.5, dtype=flambeau.float64)
    x = randn64(4, 2, 3, seed=51)
    m.eval()
    a, b = m(x)[0], m(x)[0]
    np.testing.assert_allclose(np_of(a), np_of(b))
    m.train()
    flambeau.manual_seed(1)
    assert not np.allclose(np_of(m(x)[0]), np_of(a))


# ---- packed sequences -----------------------------------------------------------------------


def test_pack_pad_round_trips():
    seqs = [randn64(2, 3, seed=52), randn64(4, 3, seed=53), randn64(1, 3, seed=54)]
    padded = rnn_utils.pad_sequence(seqs)
    assert padded.shape == (4, 3, 3)
    np.testing.assert_allclose(np_of(padded)[2:, 0], 0.0)
    left = rnn_utils.pad_sequence(seqs, batch_first=True, padding_value=-1.0, padding_side="left")
    np.testing.assert_allclose(np_of(left)[2, :3], -1.0)
    packed = rnn_utils.pack_sequence(seqs, enforce_sorted=False)
    assert packed.batch_sizes.tolist() == [3, 2, 1, 1]
    assert packed.sorted_indices.tolist() == [1, 0, 2]
    assert packed.unsorted_indices.tolist() == [1, 0, 2]
    firsts = np.stack([np_of(s)[0] for s in (seqs[1], seqs[0], seqs[2])])
    np.testing.assert_allclose(np_of(packed.data)[:3], firsts)
    out, lengths = rnn_utils.pad_packed_sequence(packed, batch_first=True, total_length=6)
    assert out.shape == (3, 6, 3) and lengths.tolist() == [2, 4, 1]
    for s, u in zip(seqs, rnn_utils.unpack_sequence(packed)):
        np.testing.assert_allclose(np_of(u), np_of(s))
    for s, u in zip(seqs, rnn_utils.unpad_sequence(padded, [2, 4, 1])):
        np.testing.assert_allclose(np_of(u), np_of(s))
    with pytest.raises(RuntimeError, match="not sorted"):
        rnn_utils.pack_sequence(seqs)
    with pytest.raises(ValueError, match="expected 3 lengths"):
        rnn_utils.pack_padded_sequence(padded, [4, 2])
    with pytest.raises(ValueError, match="total_length"):
        rnn_utils.pad_packed_sequence(packed, total_length=2)
    assert gradcheck(lambda x: rnn_utils.pack_padded_sequence(x, [3, 1]).data,
                     (randn64(3, 2, 2, seed=55),))  # fmt: skip


@pytest.mark.parametrize("cls", ["LSTM", "GRU", "RNN"])
def test_rnn_on_packed_equals_per_sequence_runs(cls):
    m = getattr(nn, cls)(3, 2, num_layers=2, bidirectional=True, batch_first=True,
                         dtype=flambeau.float64)  # fmt: skip
    seqs = [randn64(2, 3, seed=56), randn64(4, 3, seed=57), randn64(3, 3, seed=58)]
    packed = rnn_utils.pack_sequence(seqs, enforce_sorted=False)
    out, h = m(packed)
    assert isinstance(out, rnn_utils.PackedSequence)
    padded, lengths = rnn_utils.pad_packed_sequence(out, batch_first=True)
    hn = h[0] if isinstance(h, tuple) else h
    for i, s in enumerate(seqs):
        o1, h1 = m(s.unsqueeze(0))
        h1 = h1[0] if isinstance(h1, tuple) else h1
        np.testing.assert_allclose(np_of(padded)[i, : len(s)], np_of(o1)[0], rtol=1e-10,
                                   atol=1e-12)  # fmt: skip
        np.testing.assert_allclose(np_of(padded)[i, len(s) :], 0.0)
        np.testing.assert_allclose(np_of(hn)[:, i], np_of(h1)[:, 0], rtol=1e-10, atol=1e-12)
    # initial states are given in the caller's batch order
    h0 = randn64(4, 3, 2, seed=59)
    hx = (h0, randn64(4, 3, 2, seed=60)) if cls == "LSTM" else h0
    out, _ = m(packed, hx)
    first = m(seqs[0].unsqueeze(0), (hx[0][:, :1], hx[1][:, :1]) if cls == "LSTM" else h0[:, :1])
    padded, _ = rnn_utils.pad_packed_sequence(out, batch_first=True)
    np.testing.assert_allclose(np_of(padded)[0, :2], np_of(first[0])[0], rtol=1e-10, atol=1e-12)


def test_packed_lstm_gradcheck():
    m = nn.LSTM(2, 2, bidirectional=True, dtype=flambeau.float64)
    x = randn64(3, 2, 2, seed=61)

    def f(x, w):
        out, (h, c) = m(rnn_utils.pack_padded_sequence(x, [1, 3], enforce_sorted=False))
        return out.data, h, c

    assert gradcheck(f, (x, m.weight_hh_l0_reverse))
