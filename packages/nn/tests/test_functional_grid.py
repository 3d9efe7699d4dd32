"""F.affine_grid and F.grid_sample: hand-derived grids, a per-point NumPy reference for every
mode, padding and align_corners (4-D and 5-D), gradcheck for input and grid, errors."""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest
from _helpers import f64, np_of

import flambeau
from flambeau.autograd import gradcheck
from flambeau.nn import functional as F

# ---- a scalar NumPy reference ---------------------------------------------------------------


def _unnormalize(g, size, align_corners):
    return (g + 1) / 2 * (size - 1) if align_corners else ((g + 1) * size - 1) / 2


def _mirror(c, lo, hi):
    """c folded into [lo, hi] by reflecting at both ends (period 2 * (hi - lo))."""
    if hi == lo:
        return lo
    period = 2 * (hi - lo)
    c = (c - lo) % period
    return lo + (period - c if c > hi - lo else c)


def _pad(c, size, padding, align_corners):
    """A finite pixel coordinate moved into the image by border or reflection padding."""
    if padding == "zeros":
        return c
    if padding == "reflection":
        lo, hi = (0, size - 1) if align_corners else (-0.5, size - 0.5)
        c = _mirror(c, lo, hi)
    return min(max(c, 0.0), size - 1)


def _read(img, idx):
    """img[idx], or 0 outside the image."""
    if all(0 <= i < s for i, s in zip(idx, img.shape)):
        return img[tuple(idx)]
    return 0.0


def _keys(s, a=-0.75):
    s = abs(s)
    if s <= 1:
        return (a + 2) * s**3 - (a + 3) * s**2 + 1
    return a * s**3 - 5 * a * s**2 + 8 * a * s - 4 * a if s < 2 else 0.0


def _sample_point(img, coords, mode, padding, align_corners):
    """img (*spatial) at pixel coordinates (spatial order)."""
    spatial = img.shape
    if mode == "bicubic":
        base = [math.floor(c) for c in coords]
        frac = [c - b for c, b in zip(coords, base)]
        total = 0.0
        for offsets in itertools.product(range(-1, 3), repeat=len(coords)):
            weight, idx = 1.0, []
            for k, o in enumerate(offsets):
                weight *= _keys(frac[k] - o)
                p = _pad(base[k] + o, spatial[k], padding, align_corners)
                idx.append(int(p))
            total += weight * _read(img, idx)
        return total
    coords = [_pad(c, s, padding, align_corners) for c, s in zip(coords, spatial)]
    if mode == "nearest":
        return _read(img, [int(np.rint(c)) for c in coords])
    base = [math.floor(c) for c in coords]
    total = 0.0
    for corner in itertools.product((0, 1), repeat=len(coords)):
        weight = 1.0
        for k, bit in enumerate(corner):
            t = coords[k] - base[k]
            weight *= t if bit else 1 - t
        total += weight * _read(img, [b + bit for b, bit in zip(base, corner)])
    return total


def reference_grid_sample(x, grid, mode, padding, align_corners):
    n, c = x.shape[:2]
    spatial = x.shape[2:]
    d = len(spatial)
    out = np.zeros((n, c, *grid.shape[1:-1]))
    for b in range(n):
        for pos in np.ndindex(*grid.shape[1:-1]):
            g = grid[(b, *pos)]
            coords = [_unnormalize(g[d - 1 - k], spatial[k], align_corners) for k in range(d)]
            for ch in range(c):
                out[(b, ch, *pos)] = _sample_point(x[b, ch], coords, mode, padding, align_corners)
    return out


MODES = ["bilinear", "nearest", "bicubic"]
PADDINGS = ["zeros", "border", "reflection"]


# ---- affine_grid ----------------------------------------------------------------------------


def test_affine_grid_identity_is_the_pixel_centres():
    theta = f64([[[1, 0, 0], [0, 1, 0]]])
    g = np_of(F.affine_grid(theta, (1, 1, 2, 3), align_corners=False))
    xs, ys = np.array([-2 / 3, 0, 2 / 3]), np.array([-0.5, 0.5])
    np.testing.assert_allclose(g[0, :, :, 0], np.broadcast_to(xs, (2, 3)), atol=1e-15)
    np.testing.assert_allclose(g[0, :, :, 1], np.broadcast_to(ys[:, None], (2, 3)), atol=1e-15)
    g = np_of(F.affine_grid(theta, (1, 1, 2, 3), align_corners=True))
    np.testing.assert_allclose(g[0, 1, :, 0], [-1, 0, 1])
    np.testing.assert_allclose(g[0, :, 0, 1], [-1, 1])


def test_affine_grid_applies_theta_2d_and_3d():
    rng = np.random.default_rng(0)
    theta = rng.standard_normal((2, 2, 3))
    g = np_of(F.affine_grid(f64(theta), (2, 1, 3, 4), align_corners=True))
    for b, i, j in itertools.product(range(2), range(3), range(4)):
        point = np.array([np.linspace(-1, 1, 4)[j], np.linspace(-1, 1, 3)[i], 1.0])
        np.testing.assert_allclose(g[b, i, j], theta[b] @ point, atol=1e-12)
    theta3 = rng.standard_normal((1, 3, 4))
    g = np_of(F.affine_grid(f64(theta3), (1, 2, 2, 3, 4), align_corners=False))
    assert g.shape == (1, 2, 3, 4, 3)
    z, y, x = 1, 2, 3  # the last point of each axis: (n - 1) / n after the unaligned scaling
    point = np.array([3 / 4, 2 / 3, 1 / 2, 1.0])
    np.testing.assert_allclose(g[0, z, y, x], theta3[0] @ point, atol=1e-12)


def test_affine_grid_unit_size_and_gradient():
    theta = f64([[[2, 0, 0.5], [0, 3, 0.25]]])
    with pytest.warns(UserWarning, match="unit-size grids"):
        g = np_of(F.affine_grid(theta, (1, 1, 1, 3), align_corners=True))
    np.testing.assert_allclose(g[0, 0, :, 1], [0.25, 0.25, 0.25])  # y of the single row is 0
    t = f64(np.random.default_rng(1).standard_normal((2, 2, 3)), requires_grad=True)
    assert gradcheck(lambda th: F.affine_grid(th, (2, 1, 3, 2), align_corners=False), (t,))


def test_affine_grid_errors_and_warning():
    theta = f64([[[1, 0, 0], [0, 1, 0]]])
    with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
        F.affine_grid(theta, (1, 1, 2, 2))
    with pytest.raises(ValueError, match="floating point type"):
        F.affine_grid(flambeau.zeros(1, 2, 3, dtype=flambeau.int64), (1, 1, 2, 2), False)
    with pytest.raises(ValueError, match=r"shape Nx2x3"):
        F.affine_grid(flambeau.zeros(1, 3, 3), (1, 1, 2, 2), align_corners=False)
    with pytest.raises(ValueError, match=r"shape Nx3x4"):
        F.affine_grid(theta, (1, 1, 2, 2, 2), align_corners=False)
    with pytest.raises(NotImplementedError, match="only supports 4D and 5D sizes"):
        F.affine_grid(theta, (1, 1, 2), align_corners=False)
    with pytest.raises(ValueError, match="non-zero, positive output size"):
        F.affine_grid(theta, (1, 1, 0, 2), align_corners=False)
    with pytest.raises(RuntimeError, match="batch of 2"):
        F.affine_grid(theta, (2, 1, 2, 2), align_corners=False)


# ---- grid_sample ----------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_2d_matches_reference(mode, padding, align_corners):
    rng = np.random.default_rng(2)
    for spatial in [(3, 4), (1, 3)]:
        x = rng.standard_normal((2, 2, *spatial))
        grid = rng.uniform(-1.7, 1.7, (2, 3, 2, 2))
        out = F.grid_sample(f64(x), f64(grid), mode, padding, align_corners)
        ref = reference_grid_sample(x, grid, mode, padding, align_corners)
        np.testing.assert_allclose(np_of(out), ref, atol=1e-12)


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_3d_matches_reference(mode, padding, align_corners):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 2, 2, 3, 4))
    grid = rng.uniform(-1.7, 1.7, (1, 2, 2, 3, 3))
    out = F.grid_sample(f64(x), f64(grid), mode, padding, align_corners)
    ref = reference_grid_sample(x, grid, mode, padding, align_corners)
    np.testing.assert_allclose(np_of(out), ref, atol=1e-12)


@pytest.mark.parametrize("align_corners", [False, True])
def test_identity_transform_reproduces_the_input(align_corners):
    x = np.random.default_rng(4).standard_normal((2, 3, 4, 5))
    theta = f64(np.tile([[1.0, 0, 0], [0, 1, 0]], (2, 1, 1)))
    grid = F.affine_grid(theta, (2, 3, 4, 5), align_corners=align_corners)
    for mode in MODES:
        out = F.grid_sample(f64(x), grid, mode, "zeros", align_corners)
        np.testing.assert_allclose(np_of(out), x, atol=1e-12)


def test_nearest_rounds_half_to_even_and_nonfinite_grids():
    x = f64(np.arange(12.0).reshape(1, 1, 3, 4))
    # x = -0.5 lands on pixel 0.5 (between 0 and 1): rounds to the even 0.
    out = F.grid_sample(x, f64([[[[-0.5, 0.0]]]]), "nearest", "zeros", False)
    assert np_of(out).item() == 4.0
    nan = float("nan")
    for mode, padding, expected in [
        ("bilinear", "zeros", nan),
        ("nearest", "zeros", 0.0),
        ("bilinear", "border", 4.0),  # a NaN coordinate reads pixel 0
        ("nearest", "reflection", 4.0),
        ("bicubic", "border", nan),
    ]:
        out = np_of(F.grid_sample(x, f64([[[[nan, 0.0]]]]), mode, padding, False)).item()
        assert (math.isnan(out) and math.isnan(expected)) or out == expected, (mode, padding)
    inf = float("inf")
    assert np_of(F.grid_sample(x, f64([[[[inf, 0.0]]]]), "bilinear", "border", False)).item() == 7
    assert math.isnan(
        np_of(F.grid_sample(x, f64([[[[inf, 0.0]]]]), "bilinear", "zeros", False)).item()
    )


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_gradcheck_2d(mode, padding, align_corners):
    rng = np.random.default_rng(5)
    x = f64(rng.standard_normal((1, 2, 3, 4)), requires_grad=True)
    grid = f64(rng.uniform(-1.4, 1.4, (1, 2, 3, 2)), requires_grad=True)
    assert gradcheck(
        lambda a, g: F.grid_sample(a, g, mode, padding, align_corners), (x, grid), atol=1e-6
    )


@pytest.mark.parametrize("padding", PADDINGS)
def test_grid_sample_gradcheck_3d_and_nearest(padding):
    rng = np.random.default_rng(6)
    x = f64(rng.standard_normal((1, 1, 2, 3, 3)), requires_grad=True)
    grid = f64(rng.uniform(-1.3, 1.3, (1, 2, 1, 2, 3)), requires_grad=True)
    assert gradcheck(lambda a, g: F.grid_sample(a, g, "bilinear", padding, False), (x, grid))
    x2 = f64(rng.standard_normal((1, 2, 3, 4)), requires_grad=True)
    g2 = f64(rng.uniform(-1.3, 1.3, (1, 2, 2, 2)), requires_grad=True)
    assert gradcheck(lambda a, g: F.grid_sample(a, g, "nearest", padding, True), (x2, g2))
    # Nearest sampling is flat in the grid: its gradient is zero, not missing.
    F.grid_sample(x2, g2, "nearest", padding, True).sum().backward()
    assert g2.grad is not None and not np_of(g2.grad).any()


@pytest.mark.parametrize(
    ("padding", "border_grads"),
    [("zeros", [-3.0, 1.0]), ("border", [0.0, 0.0]), ("reflection", [0.0, 0.0])],
)
def test_grid_gradient_is_zero_at_clipped_borders(padding, border_grads):
    # Pixels [0, 1, 3] in a row, align_corners=True: x = 1 and x = -1 land exactly on the
    # last and first pixel. PyTorch's sampler counts the borders as out of bounds when it
    # clips (border and reflection padding), so the gradient there is 0; with zero padding
    # nothing is clipped and the one-sided slope toward the next tap is used (0 - 3 past
    # the right edge, 1 - 0 from the left edge). Inside, at x = 0.5 (pixel 1.5), the
    # slope is 3 - 1 = 2, times d(pixel)/dx = (3 - 1) / 2 = 1.
    x = f64([[[[0.0, 1.0, 3.0]]]])
    grid = f64([[[[1.0, 0.0], [-1.0, 0.0], [0.5, 0.0]]]], requires_grad=True)
    out = F.grid_sample(x, grid, "bilinear", padding, True)
    assert np_of(out).ravel().tolist() == [3.0, 0.0, 2.0]
    out.sum().backward()
    assert np_of(grid.grad)[0, 0, :, 0].tolist() == [*border_grads, 2.0]
    assert np_of(grid.grad)[0, 0, :, 1].tolist() == [0.0, 0.0, 0.0]


def test_grid_sample_learns_a_translation():
    """The grid gradient drives an affine transform towards the one that produced the target."""
    yy, xx = np.meshgrid(np.linspace(-1, 1, 12), np.linspace(-1, 1, 12), indexing="ij")
    image = f64(np.exp(-4 * (xx**2 + yy**2))[None, None])
    target = F.grid_sample(
        image, F.affine_grid(f64([[[1, 0, 0.3], [0, 1, -0.2]]]), (1, 1, 12, 12), False),
        align_corners=False,
    )  # fmt: skip
    shift = np.zeros(2)
    for _ in range(40):
        t = f64(shift, requires_grad=True)
        theta = flambeau.cat([flambeau.eye(2, dtype=flambeau.float64), t.reshape(2, 1)], 1)
        grid = F.affine_grid(theta.unsqueeze(0), (1, 1, 12, 12), align_corners=False)
        loss = ((F.grid_sample(image, grid, align_corners=False) - target) ** 2).sum()
        (g,) = flambeau.autograd.grad(loss, t)
        shift = shift - 0.003 * np_of(g)
    np.testing.assert_allclose(shift, [0.3, -0.2], atol=1e-4)


def test_grid_sample_shapes_dtypes_and_empty():
    x = flambeau.randn(2, 3, 4, 5)
    out = F.grid_sample(x, flambeau.zeros(2, 6, 7, 2), align_corners=False)
    assert tuple(out.shape) == (2, 3, 6, 7) and out.dtype == flambeau.float32
    assert tuple(F.grid_sample(x, flambeau.zeros(2, 0, 7, 2), align_corners=False).shape) == (
        2, 3, 0, 7,
    )  # fmt: skip
    empty_batch = F.grid_sample(flambeau.zeros(0, 3, 2, 2), flambeau.zeros(0, 2, 2, 2),
                                align_corners=False)  # fmt: skip
    assert tuple(empty_batch.shape) == (0, 3, 2, 2)
    assert F.GRID_SAMPLE_INTERPOLATION_MODES == {"bilinear": 0, "nearest": 1, "bicubic": 2}
    assert F.GRID_SAMPLE_PADDING_MODES == {"zeros": 0, "border": 1, "reflection": 2}


def test_grid_sample_errors_and_warning():
    x, g = flambeau.zeros(1, 1, 3, 4), flambeau.zeros(1, 2, 2, 2)
    with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
        F.grid_sample(x, g)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.grid_sample(x, g, align_corners=True)
    with pytest.raises(ValueError, match="expected mode to be 'bilinear', 'nearest' or 'bicubic'"):
        F.grid_sample(x, g, mode="linear", align_corners=False)
    with pytest.raises(ValueError, match="expected padding_mode to be 'zeros', 'border'"):
        F.grid_sample(x, g, padding_mode="wrap", align_corners=False)
    with pytest.raises(TypeError, match="must be Tensor"):
        F.grid_sample(x, [[0.0, 0.0]], align_corners=False)
    cases = [
        (flambeau.zeros(1, 1, 2, 2, 2), g, "same number of dimensions"),
        (x, flambeau.zeros(2, 2, 2, 2), "same batch size"),
        (x, flambeau.zeros(1, 2, 2, 3), "size 2 in last dimension"),
        (flambeau.zeros(1, 1, 0, 4), g, "non-empty spatial dimensions"),
        (x.double(), g, "dtype"),
        (x.to(flambeau.int64), g.to(flambeau.int64), "floating-point"),
    ]
    for inp, grid, message in cases:
        with pytest.raises(RuntimeError, match=message):
            F.grid_sample(inp, grid, align_corners=False)
    with pytest.raises(RuntimeError, match="bicubic interpolation only supports 4D input"):
        F.grid_sample(flambeau.zeros(1, 1, 2, 2, 2), flambeau.zeros(1, 1, 1, 1, 3), "bicubic",
                      align_corners=False)  # fmt: skip
