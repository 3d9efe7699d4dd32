"""The row-wise max pooling and separable resampling kernels against NumPy: window
order of ties and NaNs, edge windows of every stride, depth taps, and thread splits."""

from __future__ import annotations

import math

import numpy as np
import pytest

import flambeau
from flambeau_testing.optable.nn_pool import avg_pool_ref, max_pool_ref

rng = np.random.default_rng(7)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "kernel,stride,padding,dilation,ceil_mode",
    [
        (3, 2, 1, 1, False),
        (3, 1, 1, 1, False),
        (2, 2, 0, 1, False),
        (3, 3, 1, 1, True),
        (3, 2, 1, 2, False),
        ((2, 4), (1, 3), (1, 2), (2, 1), True),
        (5, 2, 2, 1, False),
    ],
)
def test_max_pool2d_values_and_indices(
    threads, dtype, kernel, stride, padding, dilation, ceil_mode
):
    # small integers: many ties, whose first position in window order must win
    x = rng.integers(-3, 4, (2, 5, 23, 31)).astype(dtype)
    x[0, 0, 4, 4] = -np.inf
    out, idx = flambeau.max_pool2d_with_indices(
        flambeau.from_numpy(x), kernel, stride, padding, dilation, ceil_mode
    )
    vals, want_idx = max_pool_ref(2, True)(x, kernel, stride, padding, dilation, ceil_mode)
    np.testing.assert_array_equal(out.numpy(), vals)
    np.testing.assert_array_equal(idx.numpy(), want_idx)


def test_max_pool_nan_wins_the_last_one_in_window_order():
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    x[0, 0, 0, 0] = x[0, 0, 1, 1] = np.nan  # one window, two NaNs: the later one counts
    x[0, 0, 2, 3] = np.nan
    out, idx = flambeau.max_pool2d_with_indices(flambeau.from_numpy(x), 2)
    assert np.isnan(out.numpy()[0, 0, 0, 0]) and np.isnan(out.numpy()[0, 0, 1, 1])
    np.testing.assert_array_equal(idx.numpy()[0, 0], [[5, 7], [13, 11]])


def test_max_pool_all_minus_inf_window_points_at_its_first_element():
    x = np.full((1, 1, 4, 4), -np.inf, dtype=np.float32)
    out, idx = flambeau.max_pool2d_with_indices(flambeau.from_numpy(x), 2)
    assert (out.numpy() == -np.inf).all()
    np.testing.assert_array_equal(idx.numpy()[0, 0], [[0, 2], [8, 10]])


def test_max_pool3d_and_1d_match_reference(threads):
    x = rng.standard_normal((2, 3, 7, 9, 11)).astype(np.float32)
    out, idx = flambeau.max_pool3d_with_indices(flambeau.from_numpy(x), 3, 2, 1)
    vals, want = max_pool_ref(3, True)(x, 3, 2, 1)
    np.testing.assert_array_equal(out.numpy(), vals)
    np.testing.assert_array_equal(idx.numpy(), want)
    y = rng.standard_normal((3, 4, 50)).astype(np.float64)
    out, idx = flambeau.max_pool1d_with_indices(flambeau.from_numpy(y), 4, 3, 2, 1, True)
    vals, want = max_pool_ref(1, True)(y, 4, 3, 2, 1, True)
    np.testing.assert_array_equal(out.numpy(), vals)
    np.testing.assert_array_equal(idx.numpy(), want)


@pytest.mark.parametrize("dtype,rtol", [(np.float32, 1e-5), (np.float64, 1e-12)])
@pytest.mark.parametrize(
    "kernel,stride,padding,ceil_mode,include_pad,divisor",
    [
        (3, 2, 1, False, True, None),
        (3, 2, 1, False, False, None),
        (3, 2, 1, True, True, None),
        (3, 2, 1, True, False, None),
        ((2, 5), (1, 3), (1, 2), True, True, None),
        (2, 2, 0, False, True, 3),
        (4, 3, 2, True, False, 5),
    ],
)
def test_avg_pool2d_matches_reference(threads, dtype, rtol, kernel, stride, padding, ceil_mode,
                                      include_pad, divisor):  # fmt: skip
    x = rng.standard_normal((2, 5, 23, 31)).astype(dtype)
    got = flambeau.avg_pool2d(
        flambeau.from_numpy(x), kernel, stride, padding, ceil_mode, include_pad, divisor
    )
    want = avg_pool_ref(2)(x, kernel, stride, padding, ceil_mode, include_pad, divisor)
    assert got.dtype == flambeau.from_numpy(x).dtype
    np.testing.assert_allclose(got.numpy(), want, rtol=rtol, atol=rtol)


def test_avg_pool3d_and_1d_match_reference(threads):
    x = rng.standard_normal((2, 3, 7, 9, 11)).astype(np.float32)
    got = flambeau.avg_pool3d(flambeau.from_numpy(x), 3, 2, 1, True, False)
    want = avg_pool_ref(3)(x, 3, 2, 1, True, False)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-6)
    y = rng.standard_normal((3, 4, 50))
    got = flambeau.avg_pool1d(flambeau.from_numpy(y), 4, 3, 2, True, True)
    np.testing.assert_allclose(got.numpy(), avg_pool_ref(1)(y, 4, 3, 2, True, True), rtol=1e-12)


def linear_matrix(n_in, n_out, align_corners):
    """(n_out, n_in) linear interpolation weights, PyTorch's coordinate rules."""
    m = np.zeros((n_out, n_in))
    for o in range(n_out):
        if align_corners:
            src = o * (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
        else:
            src = max((o + 0.5) * n_in / n_out - 0.5, 0.0)
        i0 = min(int(math.floor(src)), n_in - 1)
        i1 = min(i0 + 1, n_in - 1)
        lam = src - i0
        m[o, i0] += 1 - lam
        m[o, i1] += lam
    return m


@pytest.mark.parametrize("dtype,rtol", [(np.float32, 2e-6), (np.float64, 1e-13)])
@pytest.mark.parametrize("size", [(112, 112), (17, 9), (5, 40), (1, 1)])
@pytest.mark.parametrize("align_corners", [False, True])
def test_upsample_bilinear2d_matches_separable_reference(threads, dtype, rtol, size, align_corners):
    x = rng.standard_normal((2, 3, 14, 11)).astype(dtype)
    got = flambeau.upsample_bilinear2d(flambeau.from_numpy(x), list(size), align_corners).numpy()
    mh, mw = linear_matrix(14, size[0], align_corners), linear_matrix(11, size[1], align_corners)
    want = np.einsum("oh,nchw,pw->ncop", mh, x.astype(np.float64), mw)
    assert got.dtype == dtype
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * 4)


def test_upsample_trilinear3d_blends_depth_rows(threads):
    x = rng.standard_normal((2, 2, 5, 6, 7)).astype(np.float32)
    got = flambeau.upsample_trilinear3d(flambeau.from_numpy(x), [9, 4, 13], False).numpy()
    md, mh, mw = (linear_matrix(n, o, False) for n, o in ((5, 9), (6, 4), (7, 13)))
    want = np.einsum("ad,bh,cw,nkdhw->nkabc", md, mh, mw, x.astype(np.float64))
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-5)


def test_nearest_and_padding_are_exact_copies(threads):
    x = rng.standard_normal((3, 4, 10, 13)).astype(np.float32)
    t = flambeau.from_numpy(x)
    near = flambeau.upsample_nearest2d(t, [20, 26]).numpy()
    np.testing.assert_array_equal(near, x.repeat(2, 2).repeat(2, 3))
    rep = flambeau.pad(t, [2, 3, 1, 4], mode="replicate").numpy()
    np.testing.assert_array_equal(rep, np.pad(x, [(0, 0), (0, 0), (1, 4), (2, 3)], mode="edge"))
