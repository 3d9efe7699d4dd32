"""Neural-network functions PyTorch also has at top level (``flambeau.bilinear``,
``flambeau.cosine_similarity``, ``flambeau.pixel_shuffle``, ``flambeau.prelu``,
``flambeau.channel_shuffle``, the in-place activations ``relu_``, ``celu_``, ``selu_``,
``rrelu_``, ``threshold_``) implemented in the core, so they work without flambeau-nn;
flambeau.nn.functional can call these instead of keeping its own copies.
"""

from __future__ import annotations

from flambeau import _C
from flambeau._shape_composites import broadcast_shapes


def bilinear(input1, input2, weight, bias=None):
    """y[..., o] = sum_ij input1[..., i] weight[o, i, j] input2[..., j] (+ bias[o])."""
    if weight.dim() != 3:
        raise RuntimeError(f"bilinear(): weight must be 3-D, got shape {tuple(weight.shape)}")
    out_f, in1, in2 = weight.shape
    if input1.shape[-1] != in1 or input2.shape[-1] != in2:
        raise RuntimeError(
            f"bilinear(): input sizes {input1.shape[-1]} and {input2.shape[-1]} do not match "
            f"weight sizes {in1} and {in2}"
        )
    if tuple(input1.shape[:-1]) != tuple(input2.shape[:-1]):
        raise RuntimeError(
            f"bilinear(): input batch dimensions do not match: got {list(input1.shape[:-1])} "
            f"and {list(input2.shape[:-1])}"
        )
    batch = tuple(input1.shape[:-1])
    x1 = input1.reshape(-1, in1)
    x2 = input2.reshape(-1, in2)
    w = weight.permute(1, 0, 2).reshape(in1, out_f * in2)
    y = _C.matmul(_C.matmul(x1, w).reshape(-1, out_f, in2), x2.unsqueeze(-1)).squeeze(-1)
    if bias is not None:
        y = y + bias
    return y.reshape(batch + (out_f,))


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """sum(x1 * x2) / (max(|x1|, eps) * max(|x2|, eps)) along dim, after broadcasting."""
    shape = broadcast_shapes(x1.shape, x2.shape)
    a, b = x1.expand(shape), x2.expand(shape)
    na = _C.linalg_vector_norm(a, 2, dim, keepdim=True).clamp_min(eps)
    nb = _C.linalg_vector_norm(b, 2, dim, keepdim=True).clamp_min(eps)
    return ((a / na) * (b / nb)).sum(dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """|x1 - x2 + eps|_p over the last dim."""
    last = max(x1.dim(), x2.dim()) - 1
    return _C.linalg_vector_norm(x1 - x2 + eps, p, max(last, 0), keepdim=keepdim)


def pixel_shuffle(input, upscale_factor):
    """(*, C r^2, H, W) -> (*, C, H r, W r)."""
    r = int(upscale_factor)
    if input.dim() < 3 or r <= 0 or input.shape[-3] % (r * r):
        raise RuntimeError(
            f"pixel_shuffle expects an input of at least 3 dims whose channel dim (-3) is "
            f"divisible by upscale_factor^2 = {r * r}, got shape {list(input.shape)}"
        )
    *batch, c, h, w = input.shape
    nb = len(batch)
    x = input.reshape(*batch, c // (r * r), r, r, h, w)
    perm = list(range(nb)) + [nb, nb + 3, nb + 1, nb + 4, nb + 2]
    return x.permute(perm).reshape(*batch, c // (r * r), h * r, w * r)


def pixel_unshuffle(input, downscale_factor):
    """(*, C, H r, W r) -> (*, C r^2, H, W)."""
    r = int(downscale_factor)
    if input.dim() < 3 or r <= 0 or input.shape[-1] % r or input.shape[-2] % r:
        raise RuntimeError(
            f"pixel_unshuffle expects an input of at least 3 dims whose height and width are "
            f"divisible by downscale_factor = {r}, got shape {list(input.shape)}"
        )
    *batch, c, h, w = input.shape
    nb = len(batch)
    x = input.reshape(*batch, c, h // r, r, w // r, r)
    perm = list(range(nb)) + [nb, nb + 2, nb + 4, nb + 1, nb + 3]
    return x.permute(perm).reshape(*batch, c * r * r, h // r, w // r)


def channel_shuffle(input, groups):
    """(N, g * k, *) -> channels regrouped as (k, g): channel i*g + j takes j*k + i."""
    if input.dim() < 3:
        raise RuntimeError(
            f"channel_shuffle expects input to have at least 3 dimensions, but got input with "
            f"sizes {list(input.shape)}"
        )
    if groups <= 0:
        raise RuntimeError(
            f"Number of groups to divide channels in must be positive. Value of groups:{groups}"
        )
    n, c, *rest = input.shape
    if c % groups:
        raise RuntimeError(
            f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups."
        )
    return input.reshape(n, groups, c // groups, *rest).transpose(1, 2).reshape(input.shape)


native_channel_shuffle = channel_shuffle


def prelu(input, weight):
    """x where x > 0, else weight * x, with one weight or one per channel (dim 1)."""
    channels = input.shape[1] if input.dim() >= 2 else 1
    if weight.dim() > 1:
        raise RuntimeError(
            f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.dim()}"
        )
    if weight.numel() not in (1, channels):
        raise RuntimeError(
            "Mismatch of parameter numbers and input channel size. Found parameter numbers = "
            f"{weight.numel()} and channel size = {channels}."
        )
    if weight.numel() != 1:
        weight = weight.reshape((channels,) + (1,) * (input.dim() - 2))
    return _C.where(input > 0, input, weight * input)


def relu_(input):
    return input.relu_()


def selu_(input):
    return input.selu_()


def celu_(input, alpha=1.0):
    return input.celu_(alpha)


def threshold_(input, threshold, value):
    """input replaced by value where input <= threshold (in place)."""
    return input.threshold_(threshold, value)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    """In place: x where x >= 0, else a * x with a ~ U(lower, upper) per element when
    training, else a = (lower + upper) / 2."""
    if training:
        slopes = _C.empty(input.shape, dtype=input.dtype).uniform_(
            lower, upper, generator=generator
        )
    else:
        slopes = (lower + upper) / 2
    return input.copy_(_C.where(input >= 0, input, input * slopes))


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    """rrelu_ out of place."""
    return rrelu_(input.clone(), lower, upper, training, generator)


__all__ = [
    "bilinear",
    "celu_",
    "channel_shuffle",
    "cosine_similarity",
    "native_channel_shuffle",
    "pairwise_distance",
    "pixel_shuffle",
    "pixel_unshuffle",
    "prelu",
    "relu_",
    "rrelu",
    "rrelu_",
    "selu_",
    "threshold_",
]


def install() -> None:
    T = _C.Tensor
    T.prelu = prelu
