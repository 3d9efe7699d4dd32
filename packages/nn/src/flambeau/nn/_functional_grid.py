"""F.affine_grid and F.grid_sample: spatial transformers over 4-D and 5-D inputs.

grid_sample is a composite of core operators: the sampling points' neighbours are read with
one ``gather`` and blended with weights computed from the grid, so autograd gives the
gradient with respect to the input (through gather) and to the grid (through the weights).
Coordinate conventions, padding and rounding follow PyTorch's grid sampler.
"""

from __future__ import annotations

import functools
import itertools
import math
import warnings

import flambeau
from flambeau._arg_checks import check_tensor as _check_tensor
from flambeau._autocast_policy import autocast_policy
from flambeau.overrides import _dispatch_on

__all__ = [
    "GRID_SAMPLE_INTERPOLATION_MODES",
    "GRID_SAMPLE_PADDING_MODES",
    "affine_grid",
    "grid_sample",
]

GRID_SAMPLE_INTERPOLATION_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
GRID_SAMPLE_PADDING_MODES = {"zeros": 0, "border": 1, "reflection": 2}

_ALIGN_CORNERS_DEFAULT_WARNING = (
    "Default grid_sample and affine_grid behavior has changed to align_corners=False since "
    "1.3.0. Please specify align_corners=True if the old behavior is desired. See the "
    "documentation of grid_sample for details."
)

# Keys' cubic-convolution kernel with a = -0.75, as PyTorch's bicubic modes use.
_CUBIC_A = -0.75


def _resolve_align_corners(align_corners) -> bool:
    if align_corners is None:
        warnings.warn(_ALIGN_CORNERS_DEFAULT_WARNING, stacklevel=4)
        return False
    return bool(align_corners)


# ---- affine_grid ----------------------------------------------------------------------------


def _base_coordinates(steps: int, align_corners: bool, dtype):
    """The normalised coordinates of `steps` pixel centres (or corners) along one axis."""
    if steps <= 1:
        return flambeau.zeros(steps, dtype=dtype)
    coords = flambeau.linspace(-1.0, 1.0, steps, dtype=dtype)
    # Without aligned corners, -1 and 1 are the outer edges of the border pixels.
    return coords if align_corners else coords * ((steps - 1) / steps)


@_dispatch_on("theta")
def affine_grid(theta, size, align_corners=None):
    """The sampling grid of the affine maps `theta` (N, 2, 3) or (N, 3, 4) for an output of
    `size` (N, C, H, W) or (N, C, D, H, W); grid[..., 0] is x (width), [..., 1] y, [..., 2] z.

    >>> import flambeau.nn.functional as F
    >>> identity = flambeau.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
    >>> grid = F.affine_grid(identity, (1, 1, 2, 3), align_corners=True)
    >>> grid.shape
    flambeau.Size([1, 2, 3, 2])
    >>> grid[0, :, :, 0]
    tensor([[-1.,  0.,  1.],
            [-1.,  0.,  1.]])
    """
    align_corners = _resolve_align_corners(align_corners)
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = tuple(int(s) for s in size)
    if len(size) == 4:
        rows, cols, kind = 2, 3, "2D"
    elif len(size) == 5:
        rows, cols, kind = 3, 4, "3D"
    else:
        # PyTorch's error type for sizes other than 4-D and 5-D.
        raise NotImplementedError(
            "affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
            f"respectively. Got size {size}."
        )
    if theta.dim() != 3 or tuple(theta.shape[-2:]) != (rows, cols):
        raise ValueError(
            f"Expected a batch of {kind} affine matrices of shape Nx{rows}x{cols} for size "
            f"{size}. Got {tuple(theta.shape)}."
        )
    spatial = size[2:]
    if align_corners and min(spatial) == 1:
        warnings.warn(
            "Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
            "align_corners=True. This is not an intended use case of affine_grid. See the "
            "documentation of affine_grid for details.",
            stacklevel=3,
        )
    if min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    if theta.shape[0] != size[0]:
        raise RuntimeError(
            f"affine_grid(): theta holds {theta.shape[0]} affine matrices but size asks for a "
            f"batch of {size[0]}"
        )
    # Homogeneous coordinates (x, y[, z], 1) of every output point, x varying fastest.
    axes = [_base_coordinates(s, align_corners, theta.dtype) for s in reversed(spatial)]
    grids = flambeau.meshgrid(*reversed(axes), indexing="ij")  # each of shape `spatial`
    ones = flambeau.ones(spatial, dtype=theta.dtype)
    base = flambeau.stack([*reversed(grids), ones], dim=-1).reshape(1, -1, cols)
    grid = flambeau.matmul(base, theta.transpose(1, 2))
    return grid.reshape(size[0], *spatial, rows)


# ---- grid_sample: coordinates ---------------------------------------------------------------


def _unnormalize(coord, size: int, align_corners: bool):
    """[-1, 1] to pixel index space: -1/1 are corner-pixel centres or the outer edges."""
    if align_corners:
        return (coord + 1) * ((size - 1) / 2)
    return ((coord + 1) * size - 1) / 2


def _reflect(coord, twice_low: int, twice_high: int):
    """Reflects coord into [twice_low / 2, twice_high / 2] by mirroring at both ends."""
    if twice_low == twice_high:
        return coord * 0
    low = twice_low / 2
    span = (twice_high - twice_low) / 2
    dist = (coord - low).abs()
    extra = flambeau.fmod(dist, span)
    flips = flambeau.floor(dist / span)
    even = flambeau.fmod(flips, 2) == 0
    return flambeau.where(even, extra + low, span - extra + low)


def _pad_coordinate(coord, size: int, padding_mode: str, align_corners: bool):
    """Maps a pixel coordinate into the input for border and reflection padding."""
    if padding_mode == "zeros":
        return coord
    if padding_mode == "reflection":
        if align_corners:
            coord = _reflect(coord, 0, 2 * (size - 1))
        else:
            coord = _reflect(coord, -1, 2 * size - 1)
    # Clipped to the input; as in PyTorch's sampler, the borders count as out of bounds
    # for the gradient: a coordinate at or past one gets none (clamp's would be 1 there).
    inside = (coord > 0) & (coord < size - 1)
    coord = flambeau.where(inside, coord, flambeau.clamp(coord.detach(), 0, size - 1))
    # A NaN coordinate reads pixel 0, as PyTorch's sampler does.
    return flambeau.nan_to_num(coord, nan=0.0)


def _in_bounds(index, size: int):
    return (index >= 0) & (index <= size - 1)


def _as_index(index, size: int):
    """A float pixel index (maybe out of range or NaN) as a safe int64 index into the axis."""
    index = flambeau.nan_to_num(flambeau.clamp(index.detach(), 0, size - 1), nan=0.0)
    return index.to(flambeau.int64)


def _cubic_weights(t):
    """The four cubic-convolution weights of the taps at offsets -1, 0, 1, 2 from floor."""
    a = _CUBIC_A

    def near(x):  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


# ---- grid_sample: sampling ------------------------------------------------------------------


@functools.cache
def _zero_grad_link():
    """A Function giving a zero scalar whose gradient to `t` is zeros: nearest sampling is
    flat in the grid, and PyTorch gives the grid a zero gradient rather than none. Made on
    first use, so that importing flambeau.nn does not import flambeau.autograd."""
    from flambeau.autograd import Function

    class ZeroGradLink(Function):
        @staticmethod
        def forward(ctx, t):
            ctx.shape, ctx.dtype = tuple(t.shape), t.dtype
            return flambeau.zeros((), dtype=t.dtype)

        @staticmethod
        def backward(ctx, grad):
            return flambeau.zeros(ctx.shape, dtype=ctx.dtype)

    return ZeroGradLink


def _taps(coords, spatial, padding_mode, align_corners, mode):
    """Per spatial axis, the list of (float index, weight or None) taps around each point."""
    taps = []
    for coord, size in zip(coords, spatial):
        if mode == "nearest":
            c = _pad_coordinate(coord, size, padding_mode, align_corners)
            taps.append([(flambeau.round(c), None)])
        elif mode == "bilinear":
            c = _pad_coordinate(coord, size, padding_mode, align_corners)
            lo = flambeau.floor(c.detach())
            frac = c - lo
            taps.append([(lo, 1 - frac), (lo + 1, frac)])
        else:  # bicubic: padding applies to each tap, the weights to the unpadded offset
            lo = flambeau.floor(coord.detach())
            weights = _cubic_weights(coord - lo)
            taps.append(
                [
                    (_pad_coordinate(lo + (j - 1), size, padding_mode, align_corners), w)
                    for j, w in enumerate(weights)
                ]
            )
    return taps


def _sample(input, coords, spatial, mode, padding_mode, align_corners):
    """Samples input (N, C, *spatial) at coords (one (N, P) tensor per axis) -> (N, C, P)."""
    n, c = input.shape[0], input.shape[1]
    points = coords[0].shape[1]
    strides = [math.prod(spatial[k + 1 :]) for k in range(len(spatial))]
    indices, weights, valid = [], [], []
    for combo in itertools.product(*_taps(coords, spatial, padding_mode, align_corners, mode)):
        flat, weight, inside = 0, None, None
        for (index, w), size, stride in zip(combo, spatial, strides):
            flat = flat + _as_index(index, size) * stride
            weight = w if weight is None else (weight if w is None else weight * w)
            ok = _in_bounds(index, size)
            inside = ok if inside is None else inside & ok
        indices.append(flat)
        weights.append(weight)
        valid.append(inside)
    taps = len(indices)
    index = flambeau.stack(indices, dim=1).reshape(n, 1, taps * points).expand(n, c, -1)
    flat_input = input.reshape(n, c, math.prod(spatial))
    values = flambeau.gather(flat_input, 2, index).reshape(n, c, taps, points)
    inside = flambeau.stack(valid, dim=1).unsqueeze(1)  # (N, 1, taps, P)
    # Out-of-range taps read zero (and never their clamped stand-in, which may be inf).
    values = flambeau.where(inside, values, flambeau.zeros((), dtype=values.dtype))
    if weights[0] is None:  # nearest
        return values.squeeze(2)
    # Multiplying (not selecting) keeps a NaN weight's NaN, as PyTorch's sampler gives.
    w = flambeau.stack(weights, dim=1).unsqueeze(1) * inside.to(values.dtype)
    return (values * w).sum(2)


def _check_grid_sample_args(input, grid, mode):
    nd = input.dim()
    if nd not in (4, 5) or grid.dim() != nd:
        raise RuntimeError(
            f"grid_sampler(): expected {4 if nd == 4 else 5}D input and grid with same number "
            f"of dimensions, but got input with sizes {list(input.shape)} and grid with sizes "
            f"{list(grid.shape)}"
        )
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(
            "grid_sampler(): expected grid and input to have same batch size, but got input "
            f"with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}"
        )
    if grid.shape[-1] != nd - 2:
        raise RuntimeError(
            f"grid_sampler(): expected grid to have size {nd - 2} in last dimension, but got "
            f"grid with sizes {list(grid.shape)}"
        )
    for d in range(2, nd):
        if input.shape[d] == 0:
            raise RuntimeError(
                "grid_sampler(): expected input to have non-empty spatial dimensions, but input "
                f"has sizes {list(input.shape)} with dimension {d} being empty"
            )
    if not input.is_floating_point():
        raise RuntimeError(
            f"grid_sample(): not implemented for dtype {str(input.dtype).split('.')[-1]} "
            "(expected a floating-point input)"
        )
    if grid.dtype != input.dtype:
        raise RuntimeError(
            f"grid_sample(): expected grid to have the dtype of input ({input.dtype}), but got "
            f"{grid.dtype}"
        )
    if mode == "bicubic" and nd != 4:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")


@_dispatch_on("input", "grid")
@autocast_policy("fp32")
def grid_sample(input, grid, mode: str = "bilinear", padding_mode: str = "zeros",
                align_corners=None):  # fmt: skip
    """Samples input (N, C, [D,] H, W) at grid (N, [Do,] Ho, Wo, 2 or 3) -> (N, C, [Do,] Ho, Wo).

    grid holds normalised (x, y[, z]) in [-1, 1]; modes bilinear (trilinear for 5-D),
    nearest and bicubic (4-D only); padding zeros, border or reflection.

    >>> import flambeau.nn.functional as F
    >>> img = flambeau.tensor([[[[0.0, 1.0], [2.0, 3.0]]]])
    >>> grid = flambeau.tensor([[[[-1.0, -1.0], [0.0, 0.0], [1.0, 1.0]]]])
    >>> F.grid_sample(img, grid, align_corners=True)
    tensor([[[[0.0000, 1.5000, 3.0000]]]])
    """
    if mode not in GRID_SAMPLE_INTERPOLATION_MODES:
        raise ValueError(
            "nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or "
            f"'bicubic', but got: '{mode}'"
        )
    if padding_mode not in GRID_SAMPLE_PADDING_MODES:
        raise ValueError(
            "nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
            f"'reflection', but got: '{padding_mode}'"
        )
    align_corners = _resolve_align_corners(align_corners)
    _check_tensor("grid_sampler", "input", 1, input)
    _check_tensor("grid_sampler", "grid", 2, grid)
    _check_grid_sample_args(input, grid, mode)

    n, c = input.shape[0], input.shape[1]
    spatial = tuple(input.shape[2:])
    out_spatial = tuple(grid.shape[1:-1])
    points = grid.reshape(n, math.prod(out_spatial), len(spatial))
    # grid's last axis is (x, y[, z]): x indexes the last spatial dimension.
    coords = [
        _unnormalize(points[..., len(spatial) - 1 - k], size, align_corners)
        for k, size in enumerate(spatial)
    ]
    out = _sample(input, coords, spatial, mode, padding_mode, align_corners)
    if mode == "nearest" and grid.requires_grad and flambeau.is_grad_enabled():
        out = out + _zero_grad_link().apply(grid)
    return out.reshape(n, c, *out_spatial)
