"""Focused tests of convolution, pooling, padding and resizing: PyTorch's
errors (naming the shapes), edge cases, and identities between the kernels."""

from __future__ import annotations

import numpy as np
import pytest

import flambeau
from flambeau_testing.optable.nn_conv import conv_ref, conv_transpose_ref
from flambeau_testing.optable.nn_pool import max_pool_ref
from flambeau_testing.optable.nn_resize import pad_ref

rng = np.random.default_rng(0)


def t(*shape, dtype=np.float32):
    return flambeau.from_numpy(rng.standard_normal(shape).astype(dtype))


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: flambeau.conv2d(t(2, 3), t(4, 3, 3, 3)),
         r"Expected 3D \(unbatched\) or 4D \(batched\) input to conv2d, "
         r"but got input of size: \[2, 3\]"),
        (lambda: flambeau.conv2d(t(1, 2, 5, 5), t(4, 3, 3, 3)),
         r"expected input\[1, 2, 5, 5\] to have 3 channels, but got 2 channels instead"),
        (lambda: flambeau.conv2d(t(1, 3, 2, 2), t(4, 3, 3, 3)),
         r"Calculated padded input size per channel: \(2 x 2\). Kernel size: \(3 x 3\)"),
        (lambda: flambeau.conv2d(t(1, 4, 5, 5), t(4, 2, 3, 3), groups=3),
         "expected weight to be divisible by 3 at dimension 0"),
        (lambda: flambeau.conv2d(t(1, 3, 5, 5), t(4, 3, 3, 3), t(3)),
         r"expected bias to be 1-dimensional with 4 elements, but got bias of size \[3\]"),
        (lambda: flambeau.conv2d(t(1, 3, 5, 5), t(4, 3, 3, 3), stride=2, padding="same"),
         "padding='same' is not supported for strided convolutions"),
        (lambda: flambeau.conv2d(t(1, 3, 5, 5), t(4, 3, 3, 3), padding="foo"),
         "Invalid padding string: 'foo'"),
        (lambda: flambeau.conv2d(t(1, 3, 5, 5), t(4, 3, 3, 3), stride=0),
         "non-positive stride is not supported"),
        (lambda: flambeau.conv2d(t(1, 3, 5, 5), t(4, 3, 3, 3), padding=-1),
         "negative padding is not supported"),
        (lambda: flambeau.conv2d(t(1, 3, 5, 5, dtype=np.float64), t(4, 3, 3, 3)),
         "should be the same"),
        (lambda: flambeau.conv1d(flambeau.ones(1, 2, 5, dtype=flambeau.int64),
                                 flambeau.ones(1, 2, 3, dtype=flambeau.int64)),
         "not implemented for dtype int64"),
        (lambda: flambeau.conv_transpose2d(t(1, 3, 5, 5), t(4, 3, 3, 3)),
         r"Given transposed=1, weight of size \[4, 3, 3, 3\], "
         r"expected input\[1, 3, 5, 5\] to have 4"),
        (lambda: flambeau.conv_transpose2d(t(1, 3, 5, 5), t(3, 3, 3, 3), stride=2,
                                           output_padding=2),
         "output padding must be smaller than either stride or dilation"),
        (lambda: flambeau.max_pool2d(t(1, 3, 5, 5), 7),
         r"Given input size: \(3x5x5\). Calculated output size: \(3x0x0\). "
         "Output size is too small"),
        (lambda: flambeau.max_pool2d(t(1, 3, 5, 5), 3, padding=2),
         "pad should be at most half of effective kernel size"),
        (lambda: flambeau.max_pool2d(t(3, 5), 2), r"Expected 3D or 4D .*\[3, 5\]"),
        (lambda: flambeau.avg_pool2d(t(1, 3, 5, 5), 2, divisor_override=0),
         "divisor must be not zero"),
        (lambda: flambeau.adaptive_avg_pool2d(t(1, 3, 0, 5), 2),
         r"non-zero size for non-batch dimensions, but input has sizes \[1, 3, 0, 5\] with "
         "dimension 2 being empty"),
        (lambda: flambeau.max_unpool2d(t(1, 1, 2, 2), flambeau.full((1, 1, 2, 2), 9), [2, 2]),
         "Found an invalid max index: 9"),
        (lambda: flambeau.pad(t(1, 3, 5), [6, 6], mode="reflect"),
         r"Padding size should be less than the corresponding input dimension, but got: "
         r"padding \(6, 6\) at dimension 2 of input \[1, 3, 5\]"),
        (lambda: flambeau.pad(t(3, 5), [1, 1, 1]), "Padding length must be divisible by 2"),
        (lambda: flambeau.pad(t(3, 5), [1, 1], mode="reflect", value=1.0),
         "doesn't take in value argument"),
        (lambda: flambeau.constant_pad_nd(t(1, 3, 5), [-6, 0]),
         "resulted in a negative output size"),
        (lambda: flambeau.upsample_bilinear2d(t(3, 5), [4, 4], False), r"4D .*\[3, 5\]"),
        (lambda: flambeau.upsample_nearest2d(t(1, 1, 3, 5), [0, 4]),
         "Input and output sizes should be greater than 0"),
    ],
)  # fmt: skip
def test_errors_name_the_shapes(call, message):
    with pytest.raises(RuntimeError, match=message):
        call()


def test_pad_unknown_mode_is_value_error():
    with pytest.raises(ValueError, match="foo"):
        flambeau.pad(t(1, 3, 5), [1, 1], mode="foo")


@pytest.mark.parametrize("k", [2, 3, 4])
def test_same_padding_even_kernels_keep_the_size(k):
    x, w = rng.standard_normal((1, 2, 7, 6)), rng.standard_normal((3, 2, k, k - 1))
    out = flambeau.conv2d(flambeau.from_numpy(x), flambeau.from_numpy(w), padding="same")
    assert tuple(out.shape) == (1, 3, 7, 6)
    np.testing.assert_allclose(out.numpy(), conv_ref(x, w, padding="same"), rtol=1e-10)


def test_transposed_conv_is_the_input_gradient_of_conv():
    x, w = rng.standard_normal((2, 4, 7, 7)), rng.standard_normal((6, 2, 3, 3))
    g = rng.standard_normal((2, 6, 4, 4))
    F = flambeau.from_numpy
    gi, gw, gb = flambeau.convolution_backward(
        F(g), F(x), F(w), [6], [2, 2], [1, 1], [1, 1], False, [0, 0], 2, [1, 1, 1]
    )
    # the transposed conv of g with the same weight (output_padding restores the odd size)
    ct = flambeau.conv_transpose2d(F(g), F(w), stride=2, padding=1, output_padding=0, groups=2)
    np.testing.assert_allclose(ct.numpy(), gi.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(gb.numpy(), g.sum(axis=(0, 2, 3)), rtol=1e-10)
    # <conv(x, w), g> is linear in w: its gradient is gw
    eps = 1e-6
    dw = rng.standard_normal(w.shape)
    lhs = (conv_ref(x, w + eps * dw, stride=2, padding=1, groups=2) * g).sum()
    rhs = (conv_ref(x, w, stride=2, padding=1, groups=2) * g).sum()
    np.testing.assert_allclose((lhs - rhs) / eps, (gw.numpy() * dw).sum(), rtol=1e-5)


def test_output_mask_leaves_gradients_out():
    F = flambeau.from_numpy
    x, w = rng.standard_normal((1, 2, 4, 4)), rng.standard_normal((3, 2, 3, 3))
    g = rng.standard_normal((1, 3, 2, 2))
    gi, gw, gb = flambeau.convolution_backward(
        F(g), F(x), F(w), None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1, [0, 1, 1]
    )
    assert gi is None and gb is None and tuple(gw.shape) == (3, 2, 3, 3)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_conv_16_bit_goes_through_float32(dtype):
    x = rng.standard_normal((1, 2, 6, 6)).astype(np.float32)
    w = rng.standard_normal((3, 2, 3, 3)).astype(np.float32)
    d = getattr(flambeau, dtype)
    xt, wt = flambeau.from_numpy(x).to(d), flambeau.from_numpy(w).to(d)
    out = flambeau.conv2d(xt, wt, padding=1)
    assert out.dtype == d
    ref = conv_ref(xt.float().numpy(), wt.float().numpy(), padding=1)
    np.testing.assert_allclose(out.float().numpy(), ref, rtol=5e-2, atol=5e-2)


def test_large_conv_matches_reference_with_threads():
    x = rng.standard_normal((3, 16, 20, 20)).astype(np.float32)
    w = rng.standard_normal((8, 16, 3, 3)).astype(np.float32)
    out = flambeau.conv2d(flambeau.from_numpy(x), flambeau.from_numpy(w), stride=1, padding=1)
    np.testing.assert_allclose(out.numpy(), conv_ref(x, w, padding=1), rtol=1e-4, atol=1e-4)
    xs, ws = x[:, :8].copy(), w[:, :4].copy()
    ct = flambeau.conv_transpose2d(flambeau.from_numpy(xs), flambeau.from_numpy(ws), stride=2)
    ref = conv_transpose_ref(xs, ws, stride=2)
    np.testing.assert_allclose(ct.numpy(), ref, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    "kw",
    [
        dict(padding=1),
        dict(stride=(1, 2), padding=(2, 1), dilation=(2, 1), groups=2),
        dict(padding=(0, 3), dilation=(1, 3)),
    ],
)
def test_stride_one_rows_conv_matches_reference(kw):
    # Stride 1 along H: the column matrix is built per kernel column, one GEMM per kernel row.
    x = rng.standard_normal((4, 6, 11, 13)).astype(np.float32)
    w = rng.standard_normal((8, 6 // kw.get("groups", 1), 3, 4)).astype(np.float32)
    b = rng.standard_normal(8).astype(np.float32)
    F = flambeau.from_numpy
    out = flambeau.conv2d(F(x), F(w), F(b), **kw)
    np.testing.assert_allclose(out.numpy(), conv_ref(x, w, b, **kw), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    "kw",
    [
        dict(padding=1),
        dict(stride=(1, 2), padding=(2, 1), dilation=(2, 1), groups=2),
        dict(padding=(0, 3), dilation=(1, 3)),
        dict(stride=2, padding=1),  # not by kernel rows: im2col's full matrix
    ],
)
def test_weight_gradient_is_the_adjoint_of_conv_in_the_weight(kw):
    # conv is linear in the weight: <conv(x, dw), g> = <grad_weight(g, x), dw> exactly.
    x = rng.standard_normal((5, 6, 11, 13))
    groups = kw.get("groups", 1)
    w = rng.standard_normal((8, 6 // groups, 3, 4))
    out_shape = conv_ref(x, w, **kw).shape
    g, dw = rng.standard_normal(out_shape), rng.standard_normal(w.shape)
    F = flambeau.from_numpy
    stride, padding, dilation = (
        list(np.broadcast_to(kw.get(k, d), 2))
        for k, d in (("stride", 1), ("padding", 0), ("dilation", 1))
    )
    _, gw, _ = flambeau.convolution_backward(
        F(g), F(x), F(w), None, stride, padding, dilation, False, [0, 0], groups, [0, 1, 0]
    )
    np.testing.assert_allclose(
        (gw.numpy() * dw).sum(), (conv_ref(x, dw, **kw) * g).sum(), rtol=1e-10
    )


def test_zero_channels_give_the_bias():
    x, w = flambeau.zeros(2, 0, 4, 4), flambeau.zeros(3, 0, 3, 3)
    out = flambeau.conv2d(x, w, flambeau.ones(3))
    assert tuple(out.shape) == (2, 3, 2, 2) and bool((out == 1).all())


def test_max_pool_propagates_nan_and_indices_point_at_it():
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    x[0, 0, 0, 1] = np.nan
    out, idx = flambeau.max_pool2d_with_indices(flambeau.from_numpy(x), 2)
    assert np.isnan(out.numpy()[0, 0, 0, 0]) and idx.numpy()[0, 0, 0, 0] == 1
    assert idx.dtype == flambeau.int64


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("size", [(4, 4), (5, 7), (28, 28), (2, 3)])
def test_max_pool_2x2_matches_reference_with_ties_and_nans(size, dtype):
    # 2x2 windows with stride 2 take their own loop: check the window-order rules there.
    x = rng.integers(0, 3, (3, 4) + size).astype(dtype)  # many ties: the first max wins
    x[0, 0, 0, 1] = x[1, 2, 1, 0] = np.nan
    x[2, 3, 0, 0] = x[2, 3, 1, 1] = np.nan  # two NaNs in one window: the last one
    out, idx = flambeau.max_pool2d_with_indices(flambeau.from_numpy(x), 2)
    ref_out, ref_idx = max_pool_ref(2, indices=True)(x, 2)
    np.testing.assert_array_equal(out.numpy(), ref_out.astype(dtype))
    finite = ~np.isnan(ref_out)
    np.testing.assert_array_equal(idx.numpy()[finite], ref_idx[finite])
    assert idx.numpy()[0, 0, 0, 0] == 1 and idx.numpy()[1, 2, 0, 0] == size[1]
    assert idx.numpy()[2, 3, 0, 0] == size[1] + 1
    # odd sizes: the last row or column is in no window
    assert tuple(out.shape) == (3, 4, size[0] // 2, size[1] // 2)


def test_max_pool_ceil_mode_matches_reference():
    x = rng.standard_normal((2, 3, 9, 7))
    out = flambeau.max_pool2d(flambeau.from_numpy(x), 3, 2, 1, ceil_mode=True)
    np.testing.assert_array_equal(out.numpy(), max_pool_ref(2)(x, 3, 2, 1, 1, True))


def test_pad_modes_match_numpy():
    x = rng.standard_normal((2, 3, 5, 6))
    for mode in ("reflect", "replicate", "circular"):
        out = flambeau.pad(flambeau.from_numpy(x), [2, 1, 1, 3], mode=mode)
        np.testing.assert_array_equal(out.numpy(), pad_ref(x, [2, 1, 1, 3], mode))
    out = flambeau.pad(flambeau.from_numpy(x), [1, 1], value=-2.0)
    assert out.numpy()[0, 0, 0, 0] == -2.0


def test_upsample_nearest_exact_doubling_and_bilinear_align_corners():
    x = flambeau.from_numpy(np.arange(6, dtype=np.float64).reshape(1, 1, 2, 3))
    near = flambeau.upsample_nearest2d(x, [4, 6]).numpy()
    np.testing.assert_array_equal(near[0, 0], np.repeat(np.repeat(x.numpy()[0, 0], 2, 0), 2, 1))
    lin = flambeau.upsample_bilinear2d(x, [3, 5], True).numpy()[0, 0]
    np.testing.assert_allclose(lin[[0, -1]][:, [0, -1]], [[0, 2], [3, 5]])
    np.testing.assert_allclose(lin[1, 2], 2.5)
