"""interpolate's bicubic, nearest-exact and antialiased modes and recompute_scale_factor:
forward against separable NumPy references, gradcheck in float64, nn.Upsample, errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from _helpers import f64, np_of, randn64

from flambeau import nn
from flambeau.autograd import gradcheck
from flambeau.nn import functional as F


def _scale(n, out, align_corners, scale):
    if align_corners:
        return (n - 1) / (out - 1) if out > 1 else 0.0
    return 1.0 / scale if scale else n / out


def _keys(x, a):
    """Keys' cubic convolution kernel."""
    x = abs(x)
    if x <= 1:
        return ((a + 2) * x - (a + 3)) * x * x + 1
    return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a if x < 2 else 0.0


def cubic_matrix(n, out, align_corners, scale=None):
    m, r = np.zeros((out, n)), _scale(n, out, align_corners, scale)
    for o in range(out):
        src = r * o if align_corners else r * (o + 0.5) - 0.5
        i0 = min(math.floor(src), n - 1)
        t = min(max(src - i0, 0.0), 1.0)
        for j in range(4):
            m[o, min(max(i0 - 1 + j, 0), n - 1)] += _keys(t + 1 - j, -0.75)
    return m


def aa_matrix(n, out, align_corners, scale=None, cubic=False):
    m, r = np.zeros((out, n)), _scale(n, out, align_corners, scale)
    half = 2.0 if cubic else 1.0
    support, inv = (half * r, 1 / r) if r >= 1 else (half, 1.0)
    for o in range(out):
        c = r * (o + 0.5)
        lo, hi = max(int(c - support + 0.5), 0), min(int(c + support + 0.5), n)
        w = [_keys(d, -0.5) if cubic else max(1 - abs(d), 0.0)
             for d in ((j - c + 0.5) * inv for j in range(lo, hi))]  # fmt: skip
        m[o, lo:hi] = np.array(w) / sum(w)
    return m


def nearest_exact_index(n, out, scale=None):
    s = np.float32(1.0 / scale) if scale else np.float32(n) / np.float32(out)
    return np.minimum(np.floor((np.arange(out) + 0.5).astype(np.float32) * s).astype(int), n - 1)


def separable(x, mh, mw):
    return np.einsum("oh,nchw,pw->ncop", mh, x, mw)


@pytest.mark.parametrize("align_corners", [False, True])
def test_bicubic(align_corners):
    x = randn64(2, 3, 4, 5, seed=1)
    out = F.interpolate(x, size=(7, 3), mode="bicubic", align_corners=align_corners)
    mh, mw = cubic_matrix(4, 7, align_corners), cubic_matrix(5, 3, align_corners)
    np.testing.assert_allclose(np_of(out), separable(np_of(x), mh, mw), rtol=1e-12, atol=1e-14)
    up = nn.Upsample(scale_factor=1.5, mode="bicubic", align_corners=align_corners)(x)
    s = None if align_corners else 1.5
    ref = separable(
        np_of(x), cubic_matrix(4, 6, align_corners, s), cubic_matrix(5, 7, align_corners, s)
    )
    np.testing.assert_allclose(np_of(up), ref, rtol=1e-12, atol=1e-14)
    xs = randn64(1, 1, 3, 4, seed=2)
    assert gradcheck(lambda a: F.interpolate(a, size=(5, 2), mode="bicubic",
                                             align_corners=align_corners), (xs,))  # fmt: skip


@pytest.mark.parametrize("cubic", [False, True])
@pytest.mark.parametrize("align_corners", [False, True])
def test_antialias(cubic, align_corners):
    mode = "bicubic" if cubic else "bilinear"
    x = randn64(1, 2, 9, 8, seed=3)
    out = F.interpolate(x, size=(4, 3), mode=mode, align_corners=align_corners, antialias=True)
    mh = aa_matrix(9, 4, align_corners, cubic=cubic)
    mw = aa_matrix(8, 3, align_corners, cubic=cubic)
    np.testing.assert_allclose(np_of(out), separable(np_of(x), mh, mw), rtol=1e-12, atol=1e-14)
    out = F.interpolate(x, scale_factor=0.4, mode=mode, align_corners=align_corners,
                        antialias=True)  # fmt: skip
    s = None if align_corners else 0.4
    mh = aa_matrix(9, 3, align_corners, s, cubic)
    mw = aa_matrix(8, 3, align_corners, s, cubic)
    np.testing.assert_allclose(np_of(out), separable(np_of(x), mh, mw), rtol=1e-12, atol=1e-14)
    xs = randn64(1, 1, 6, 5, seed=4)
    assert gradcheck(lambda a: F.interpolate(a, size=(2, 3), mode=mode, antialias=True,
                                             align_corners=align_corners), (xs,))  # fmt: skip


def test_antialias_hand_values():
    x = f64([[[[1.0, 2.0, 3.0, 4.0]]]])
    out = F.interpolate(x, size=(1, 2), mode="bilinear", antialias=True)
    np.testing.assert_allclose(np_of(out).ravel(), [12 / 7, 23 / 7], rtol=1e-14)


def test_nearest_exact_all_ranks():
    for shape in ((1, 2, 5), (1, 2, 5, 4), (1, 1, 5, 4, 3)):
        x = randn64(*shape, seed=5)
        nd = len(shape) - 2
        size = [3, 7, 2][:nd]
        out = F.interpolate(x, size=size, mode="nearest-exact")
        ref = np_of(x)
        for i in range(nd):
            ref = np.take(ref, nearest_exact_index(shape[2 + i], size[i]), axis=2 + i)
        np.testing.assert_allclose(np_of(out), ref)
        assert gradcheck(lambda a, s=size: F.interpolate(a, size=s, mode="nearest-exact"), (x,))
    up = nn.Upsample(size=3, mode="nearest-exact")(randn64(1, 1, 5, seed=6))
    assert tuple(up.shape) == (1, 1, 3)


def test_recompute_scale_factor():
    x = randn64(1, 1, 5, seed=7)
    # The given scale (1.7) maps indices unless recompute_scale_factor=True (then 8 / 5).
    given = F.interpolate(x, scale_factor=1.7, mode="nearest-exact")
    recomputed = F.interpolate(x, scale_factor=1.7, mode="nearest-exact",
                               recompute_scale_factor=True)  # fmt: skip
    assert given.shape == recomputed.shape == (1, 1, 8)
    np.testing.assert_allclose(np_of(given), np_of(x)[..., nearest_exact_index(5, 8, 1.7)])
    np.testing.assert_allclose(np_of(recomputed), np_of(x)[..., nearest_exact_index(5, 8)])
    x2 = randn64(1, 1, 4, 5, seed=8)
    out = F.interpolate(x2, scale_factor=0.5, mode="bicubic", recompute_scale_factor=True)
    ref = separable(np_of(x2), cubic_matrix(4, 2, False), cubic_matrix(5, 2, False))
    np.testing.assert_allclose(np_of(out), ref, rtol=1e-12, atol=1e-14)
    with pytest.raises(ValueError, match="recompute_scale_factor is not meaningful"):
        F.interpolate(x, size=3, recompute_scale_factor=True)


def test_errors():
    x = randn64(1, 1, 4, 4)
    with pytest.raises(ValueError, match="anti-alias"):
        F.interpolate(x, size=2, mode="nearest", antialias=True)
    with pytest.raises(ValueError, match="anti-alias"):
        F.interpolate(randn64(1, 1, 4), size=2, mode="linear", antialias=True)
    with pytest.raises(NotImplementedError, match="'bicubic' needs a 4-D"):
        F.interpolate(randn64(1, 1, 4), size=2, mode="bicubic")
    with pytest.raises(ValueError, match="align_corners"):
        F.interpolate(x, size=2, mode="nearest-exact", align_corners=False)
    with pytest.raises(NotImplementedError, match="not supported"):
        F.interpolate(x, size=2, mode="lanczos")
