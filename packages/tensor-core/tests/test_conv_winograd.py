"""The Winograd F(2x2, 3x3) path of 3x3 stride-1 convolutions (cpu/conv_winograd.cpp):
forward, the input and weight gradients and the stride-1 transposed convolution (which
run on it) against float64 references, on the shapes around its edges: odd output sizes (half
tiles), padding 0 to 2, one tile, channel counts that are not multiples of the GEMM's
panel width, enough tiles for several cache blocks per sample, and the shapes just
outside it (fewer than 8 channels, groups, dilation), which take im2col."""

from __future__ import annotations

import numpy as np
import pytest

import flambeau
from flambeau_testing.optable.nn_conv import conv_ref, conv_transpose_ref

rng = np.random.default_rng(7)
F = flambeau.from_numpy

# (N, C_in, C_out, H, W, padding)
SHAPES = [
    (2, 8, 8, 5, 5, 1),  # odd output: the last tile row and column are half tiles
    (3, 16, 24, 7, 9, 0),
    (1, 9, 10, 6, 4, 2),  # padding 2: tiles that lie mostly in the padding
    (2, 33, 17, 3, 3, 1),  # channels that do not fill the panels
    (1, 8, 8, 4, 4, 0),  # a single tile
    (2, 64, 72, 30, 31, 1),  # several cache blocks per sample
    (1, 130, 8, 9, 9, 1),  # many input channels: a small block of tiles
    (2, 40, 40, 9, 10, 1),  # two full panels and a part: AVX-512's 2-panel, 12-row tiles
    (1, 48, 36, 14, 14, 1),  # three full panels (input gradient): a pair, then one
]
# The weight gradient takes Winograd from 16 channels a side and 24 tiles per GEMM.
WEIGHT_SHAPES = [
    (2, 16, 24, 13, 11, 1),  # odd output: half tiles
    (1, 24, 16, 12, 12, 2),  # padding 2
    (3, 17, 20, 14, 11, 0),  # no padding, channels off the panel width
    (2, 256, 256, 14, 14, 1),  # deep: blocks of 28 tiles (SHAPES has several per sample)
]
NEAR = [  # the same sizes just outside the Winograd shapes
    dict(c_in=7, c_out=8),
    dict(c_in=8, c_out=6),
    dict(groups=2),
    dict(dilation=2),
    dict(stride=(1, 2)),
]


def arrays(n, cin, cout, h, w, dtype, groups=1):
    x = rng.standard_normal((n, cin, h, w)).astype(dtype)
    wt = rng.standard_normal((cout, cin // groups, 3, 3)).astype(dtype)
    b = rng.standard_normal(cout).astype(dtype)
    return x, wt, b


def weight_gradient_ref(g, x, padding):
    """dW[o, c, a, b] = sum over n, y, x of g[n, o, y, x] xpad[n, c, y + a, x + b], in
    float64 (padding zeros multiply too, as im2col's columns do)."""
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (padding, padding), (padding, padding)))
    windows = np.lib.stride_tricks.sliding_window_view(xp, (3, 3), axis=(2, 3))
    return np.einsum("noyx,ncyxab->ocab", g.astype(np.float64), windows)


def weight_gradient(g, x, wt, padding):
    _, gw, _ = flambeau.convolution_backward(
        F(g), F(x), F(wt), None, [1, 1], [padding] * 2, [1, 1], False, [0, 0], 1, [0, 1, 0]
    )
    return gw.numpy()


def tolerance(dtype, ref):
    scale = np.abs(ref).max()
    return dict(rtol=0, atol=(2e-6 if dtype == np.float32 else 1e-13) * scale)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", SHAPES)
def test_forward_matches_reference(shape, dtype):
    n, cin, cout, h, w, p = shape
    x, wt, b = arrays(n, cin, cout, h, w, dtype)
    out = flambeau.conv2d(F(x), F(wt), F(b), padding=p)
    ref = conv_ref(x, wt, b, padding=p)
    assert out.dtype == flambeau.from_numpy(x).dtype and tuple(out.shape) == ref.shape
    np.testing.assert_allclose(out.numpy(), ref, **tolerance(dtype, ref))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", SHAPES)
def test_input_gradient_matches_reference(shape, dtype):
    # The input gradient of conv with padding p is the transposed conv with padding p.
    n, cin, cout, h, w, p = shape
    x, wt, _ = arrays(n, cin, cout, h, w, dtype)
    g = rng.standard_normal(conv_ref(x, wt, padding=p).shape).astype(dtype)
    gi, _, _ = flambeau.convolution_backward(
        F(g), F(x), F(wt), None, [1, 1], [p, p], [1, 1], False, [0, 0], 1, [1, 0, 0]
    )
    ref = conv_transpose_ref(g, wt, padding=p)
    assert tuple(gi.shape) == x.shape
    np.testing.assert_allclose(gi.numpy(), ref, **tolerance(dtype, ref))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", WEIGHT_SHAPES + SHAPES)
def test_weight_gradient_matches_reference(shape, dtype):
    n, cin, cout, h, w, p = shape
    x, wt, _ = arrays(n, cin, cout, h, w, dtype)
    g = rng.standard_normal(conv_ref(x, wt, padding=p).shape).astype(dtype)
    gw = weight_gradient(g, x, wt, p)
    ref = weight_gradient_ref(g, x, p)
    assert gw.dtype == dtype and gw.shape == wt.shape
    # Sums over every tile of every sample: float32's tolerance scales with their length.
    atol = (2e-6 * np.sqrt(n * h * w) if dtype == np.float32 else 1e-13) * np.abs(ref).max()
    np.testing.assert_allclose(gw, ref, rtol=0, atol=atol)


@pytest.mark.parametrize("shape", SHAPES[:4])
def test_stride_one_transposed_conv_matches_reference(shape):
    n, cout, cin, h, w, p = shape  # the transposed conv maps cout channels back to cin
    g = rng.standard_normal((n, cout, h, w))
    wt = rng.standard_normal((cout, cin, 3, 3))
    b = rng.standard_normal(cin)
    out = flambeau.conv_transpose2d(F(g), F(wt), F(b), padding=min(p, 1))
    ref = conv_transpose_ref(g, wt, b, padding=min(p, 1))
    np.testing.assert_allclose(out.numpy(), ref, **tolerance(np.float64, ref))


@pytest.mark.parametrize("near", NEAR, ids=lambda d: ",".join(f"{k}={v}" for k, v in d.items()))
def test_shapes_beside_winograd_match_reference(near):
    cin, cout, groups = near.get("c_in", 8), near.get("c_out", 8), near.get("groups", 1)
    x, wt, b = arrays(2, cin, cout, 9, 10, np.float64, groups)
    kw = dict(padding=1, groups=groups, dilation=near.get("dilation", 1))
    kw["stride"] = near.get("stride", 1)
    out = flambeau.conv2d(F(x), F(wt), F(b), **kw)
    ref = conv_ref(x, wt, b, **kw)
    np.testing.assert_allclose(out.numpy(), ref, **tolerance(np.float64, ref))


def test_gradcheck_through_winograd_in_float64():
    autograd = pytest.importorskip("flambeau.autograd")
    x = flambeau.randn(1, 8, 4, 5, dtype=flambeau.float64, requires_grad=True)
    w = flambeau.randn(8, 8, 3, 3, dtype=flambeau.float64, requires_grad=True)
    b = flambeau.randn(8, dtype=flambeau.float64, requires_grad=True)
    assert autograd.gradcheck(lambda x, w, b: flambeau.conv2d(x, w, b, padding=1), (x, w, b))


def test_threads_and_one_thread_agree():
    x, wt, b = arrays(4, 16, 16, 12, 12, np.float32)
    before = flambeau.get_num_threads()
    try:
        flambeau.set_num_threads(1)
        one = flambeau.conv2d(F(x), F(wt), F(b), padding=1).numpy()
        flambeau.set_num_threads(max(2, before))
        many = flambeau.conv2d(F(x), F(wt), F(b), padding=1).numpy()
    finally:
        flambeau.set_num_threads(before)
    np.testing.assert_array_equal(one, many)  # blocks are the same whichever thread runs them


def test_weight_gradient_with_one_thread_and_several():
    # Each thread sums its own blocks: the order of the additions differs, not the result.
    x, wt, _ = arrays(4, 16, 16, 12, 12, np.float64)
    g = rng.standard_normal((4, 16, 12, 12))
    before = flambeau.get_num_threads()
    try:
        flambeau.set_num_threads(1)
        one = weight_gradient(g, x, wt, 1)
        flambeau.set_num_threads(max(2, before))
        many = weight_gradient(g, x, wt, 1)
    finally:
        flambeau.set_num_threads(before)
    np.testing.assert_allclose(one, many, rtol=1e-13, atol=1e-13 * np.abs(one).max())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "where",
    [
        "input",
        "weight",
        "grad_output",
        "weight gradient of input",
        "weight gradient of grad_output",
    ],
)
def test_infinities_and_nans_give_the_direct_sums(where, dtype):
    # The transforms subtract inputs from one another (inf - inf = NaN): blocks of
    # non-finite input are summed directly, non-finite weights take im2col, and so does
    # a weight gradient whose input or grad_output is not finite.
    x, wt, b = arrays(2, 16, 16, 9, 12, dtype)  # 30 tiles: Winograd's weight gradient too
    g = rng.standard_normal((2, 16, 9, 12)).astype(dtype)
    target = {"input": x, "weight": wt, "grad_output": g}[where.split(" of ")[-1]]
    flat = target.reshape(-1)
    flat[rng.choice(flat.size, 4, replace=False)] = [np.inf, np.inf, -np.inf, np.nan]
    if where.startswith("weight gradient"):
        got, ref = weight_gradient(g, x, wt, 1), weight_gradient_ref(g, x, 1)
    elif where == "grad_output":
        gi, _, _ = flambeau.convolution_backward(
            F(g), F(x), F(wt), None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1, [1, 0, 0]
        )
        got, ref = gi.numpy(), conv_transpose_ref(g, wt, padding=1)
    else:
        got = flambeau.conv2d(F(x), F(wt), F(b), padding=1).numpy()
        ref = conv_ref(x, wt, b, padding=1)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(ref))
    np.testing.assert_array_equal(np.isposinf(got), np.isposinf(ref))
    np.testing.assert_array_equal(np.isneginf(got), np.isneginf(ref))
    finite = np.isfinite(ref)
    assert finite.any()
    scale = np.abs(ref[finite]).max()
    np.testing.assert_allclose(got[finite], ref[finite], rtol=0, atol=1e-5 * scale)


def test_masked_kernels_let_nothing_through_the_masked_taps():
    # PixelCNN's causal mask zeroes the taps at and after the centre: an output may not
    # depend on the pixels those taps read, not even by rounding. Kernels that mix zero
    # and nonzero taps take im2col, as PyTorch's sums; all-zero kernels stay exact too.
    x, wt, b = arrays(2, 16, 16, 10, 10, np.float32)
    mask = np.ones((3, 3), np.float32)
    mask[1, 1:] = 0
    mask[2] = 0
    wt = wt * mask
    wt[:4] = 0  # whole kernels of zeros beside the masked ones
    inp = F(x).requires_grad_()
    out = flambeau.conv2d(inp, F(wt), F(b), padding=1)
    out[:, :, 4, 4].sum().backward()
    grad = inp.grad.numpy()
    # Row 4 from column 4 on, and every row below, is masked for output (4, 4).
    assert not grad[:, :, 4, 4:].any() and not grad[:, :, 5:].any()
    ref = conv_ref(x, wt, b, padding=1)
    got = out.detach().numpy()
    np.testing.assert_allclose(got, ref, rtol=0, atol=2e-6 * np.abs(ref).max())
    np.testing.assert_array_equal(got[:, :4], np.broadcast_to(b[:4, None, None], got[:, :4].shape))
