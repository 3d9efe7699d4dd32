"""Neural-network functions PyTorch also has at top level (``flambeau.bilinear``,
``flambeau.cosine_similarity``, ``flambeau.pairwise_distance``, ``flambeau.pixel_shuffle``,
``flambeau.channel_shuffle``, ``flambeau.prelu``, ``flambeau.rrelu`` and the in-place
activations ``relu_``, ``celu_``, ``selu_``, ``rrelu_``, ``threshold_``).

In PyTorch ``torch.nn.functional.<name>`` is the same function, so the single implementation
lives here and flambeau.nn.functional re-exports it. Each composes core operators, so
autograd differentiates it through their formulas.
"""

from __future__ import annotations

from flambeau import _C
from flambeau._arg_checks import check_tensor, dtype_name, int_argument, require_floating
from flambeau._autocast_policy import autocast_policy
from flambeau._grad_mode import no_grad
from flambeau._shape_composites import broadcast_tensors
from flambeau.overrides import _dispatch_on

# ---- products and distances -----------------------------------------------------------------


@_dispatch_on("input1", "input2", "weight", "bias")
def bilinear(input1, input2, weight, bias=None):
    """y[..., o] = sum_ij input1[..., i] weight[o, i, j] input2[..., j] (+ bias[o]).

    >>> x1, x2 = flambeau.tensor([[1.0, 2.0]]), flambeau.tensor([[3.0, 4.0, 5.0]])
    >>> weight = flambeau.ones(1, 2, 3)
    >>> flambeau.bilinear(x1, x2, weight, flambeau.tensor([0.5]))
    tensor([[36.5000]])
    """
    for position, (name, t) in enumerate((("input1", input1), ("input2", input2)), 1):
        check_tensor("bilinear", name, position, t)
    check_tensor("bilinear", "weight", 3, weight)
    check_tensor("bilinear", "bias", 4, bias, optional=True)
    if input1.dim() != input2.dim():
        raise RuntimeError(
            f"bilinear(): input dimensions do not match: got {input1.dim()} and {input2.dim()}"
        )
    for d in range(input1.dim() - 1):
        if input1.shape[d] != input2.shape[d]:
            raise RuntimeError(
                f"bilinear(): input batch dimensions do not match at dim {d}: got "
                f"{input1.shape[d]} and {input2.shape[d]}"
            )
    if input1.dim() == 0:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    if weight.dim() != 3:
        # PyTorch indexes weight's size 2 first (IndexError below 3-D).
        error = IndexError if weight.dim() < 3 else RuntimeError
        raise error(
            "bilinear(): weight must be 3-D (out_features, in1_features, in2_features), got "
            f"shape {list(weight.shape)}"
        )
    tensors = {"input1": input1, "input2": input2, "weight": weight}
    if bias is not None:
        tensors["bias"] = bias
    if len({t.dtype for t in tensors.values()}) > 1:
        got = ", ".join(f"{k}: {dtype_name(t.dtype)}" for k, t in tensors.items())
        raise RuntimeError(f"All tensors must have the same dtype, got {got}")
    out_f, in1, in2 = weight.shape
    for which, t, size in (("input1", input1, in1), ("input2", input2, in2)):
        if t.shape[-1] != size:
            raise RuntimeError(
                f"bilinear(): {which} size does not match weight size: got {t.shape[-1]} but "
                f"expected {size}"
            )
    if bias is not None:
        if bias.dim() == 0:
            raise IndexError("Dimension specified as 0 but tensor has no dimensions")
        if bias.shape[0] != out_f:
            raise RuntimeError(
                f"bilinear(): bias size does not match weight size: got {bias.shape[0]} but "
                f"expected {out_f}"
            )
    batch = tuple(input1.shape[:-1])
    x1 = input1.reshape(-1, in1)
    x2 = input2.reshape(-1, in2)
    # (N, in1) @ (in1, out*in2) -> (N, out, in2), then contract with x2 over in2.
    w = weight.permute(1, 0, 2).reshape(in1, out_f * in2)
    y = _C.matmul(_C.matmul(x1, w).reshape(-1, out_f, in2), x2.unsqueeze(-1)).squeeze(-1)
    if bias is not None:
        y = y + bias
    return y.reshape(batch + (out_f,))


def _clamped_norm(x, dim, eps):
    # The norm clamped below at eps, with the gradient of the unclamped norm (the clamp is a
    # numerical guard, as in PyTorch, not part of the function differentiated).
    n = _C.linalg_vector_norm(x, 2, dim, keepdim=True)
    return n + (n.clamp_min(eps) - n).detach()


@_dispatch_on("x1", "x2")
def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """sum(x1 * x2) / (max(|x1|, eps) * max(|x2|, eps)) along dim, after broadcasting.

    >>> a = flambeau.tensor([[1.0, 0.0], [1.0, 1.0]])
    >>> b = flambeau.tensor([[0.0, 1.0], [2.0, 2.0]])
    >>> flambeau.cosine_similarity(a, b)
    tensor([0.0000, 1.0000])
    """
    check_tensor("cosine_similarity", "x1", 1, x1)
    check_tensor("cosine_similarity", "x2", 2, x2)
    dtype = _C.result_type(x1, x2)
    if not dtype.is_floating_point:
        raise RuntimeError(
            f"expected common dtype to be floating point, yet common dtype is {dtype_name(dtype)}"
        )
    a, b = broadcast_tensors(x1.to(dtype), x2.to(dtype))
    return ((a / _clamped_norm(a, dim, eps)) * (b / _clamped_norm(b, dim, eps))).sum(dim)


@_dispatch_on("x1", "x2")
def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """|x1 - x2 + eps|_p over the last dim.

    >>> a = flambeau.tensor([[0.0, 0.0], [1.0, 1.0]])
    >>> b = flambeau.tensor([[3.0, 4.0], [1.0, 1.0]])
    >>> flambeau.pairwise_distance(a, b, eps=0.0)
    tensor([5., 0.])
    """
    check_tensor("pairwise_distance", "x1", 1, x1)
    check_tensor("pairwise_distance", "x2", 2, x2)
    last = max(x1.dim(), x2.dim()) - 1
    return _C.linalg_vector_norm(x1 - x2 + eps, p, max(last, 0), keepdim=keepdim)


@_dispatch_on("input", "weight", "bias")
@autocast_policy("lower_precision_fp")
def conv_tbc(input, weight, bias, pad: int = 0):
    """1-D convolution in time-batch-channel layout: input (T, B, C_in), weight (K, C_in,
    C_out), bias (C_out,) -> (T + 2 * pad - K + 1, B, C_out); a negative pad crops.

    >>> x = flambeau.ones(4, 1, 2)  # (time, batch, in_channels)
    >>> weight = flambeau.ones(3, 2, 1)  # (kernel, in_channels, out_channels)
    >>> flambeau.conv_tbc(x, weight, flambeau.zeros(1)).flatten()
    tensor([6., 6.])
    >>> flambeau.conv_tbc(x, weight, flambeau.zeros(1), pad=1).shape
    flambeau.Size([4, 1, 1])
    """
    check_tensor("conv_tbc", "self", 1, input)
    check_tensor("conv_tbc", "weight", 2, weight)
    check_tensor("conv_tbc", "bias", 3, bias)
    padding = int_argument("conv_tbc", "pad", 4, pad)
    if input.dim() != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.dim() != 3:
        raise RuntimeError(
            "Weight tensor must have 3 dims: kernel_width, in_channels, out_channels."
        )
    if bias.dim() != 1:
        raise RuntimeError("Bias must be 1-D")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if weight.shape[2] != bias.shape[0]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    width, in_channels, out_channels = weight.shape
    batch = input.shape[1]
    steps = input.shape[0] + 2 * padding - width + 1
    if steps < 0 or input.shape[0] + 2 * padding < 0:
        raise RuntimeError(
            f"conv_tbc(): the kernel width ({width}) exceeds the padded input length "
            f"({input.shape[0] + 2 * padding})"
        )
    padded = _C.constant_pad_nd(input, (0, 0, 0, 0, padding, padding))
    # out[t] = sum_k padded[t + k] @ weight[k]: one matmul over the stacked windows.
    if width == 0:
        windows = _C.zeros((steps, batch, 0), dtype=input.dtype)
    else:
        shifted = [padded[k : k + steps] for k in range(width)]
        windows = _C.stack(shifted, dim=2).reshape(steps, batch, width * in_channels)
    return _C.matmul(windows, weight.reshape(width * in_channels, out_channels)) + bias


# ---- one-hot encoding ----------------------------------------------------------------------


@_dispatch_on("tensor")
def one_hot(tensor, num_classes: int = -1):
    """(*) int64 class indices -> (*, num_classes) int64 with a 1 at each index.

    num_classes=-1 takes one more than the largest index.

    >>> import flambeau.nn.functional as F
    >>> F.one_hot(flambeau.tensor([0, 2, 1]))
    tensor([[1, 0, 0],
            [0, 0, 1],
            [0, 1, 0]])
    """
    check_tensor("one_hot", "input", 1, tensor)
    num_classes = int_argument("one_hot", "num_classes", 2, num_classes)
    if tensor.dtype != _C.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    shape = tuple(tensor.shape)
    if tensor.numel() == 0:
        if num_classes <= 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        return _C.zeros((*shape, num_classes), dtype=_C.int64)
    if int(tensor.min()) < 0:
        raise RuntimeError("Class values must be non-negative.")
    largest = int(tensor.max())
    if num_classes == -1:
        num_classes = largest + 1
    elif largest >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    out = _C.zeros((*shape, num_classes), dtype=_C.int64)
    return out.scatter_(-1, tensor.unsqueeze(-1), 1)


# ---- rearrangements -------------------------------------------------------------------------


def _shuffle_factor(fn: str, name: str, input, factor) -> int:
    check_tensor(fn, "input", 1, input)
    r = int_argument(fn, name, 2, factor)
    if input.dim() < 3:
        raise RuntimeError(
            f"{fn} expects input to have at least 3 dimensions, but got input with "
            f"{input.dim()} dimension(s)"
        )
    if r <= 0:
        raise RuntimeError(f"{fn} expects a positive {name}, but got {r}")
    return r


@_dispatch_on("input")
def pixel_shuffle(input, upscale_factor):
    """(*, C r^2, H, W) -> (*, C, H r, W r).

    >>> x = flambeau.arange(4.0).reshape(1, 4, 1, 1)
    >>> flambeau.pixel_shuffle(x, 2)
    tensor([[[[0., 1.],
              [2., 3.]]]])
    """
    r = _shuffle_factor("pixel_shuffle", "upscale_factor", input, upscale_factor)
    *batch, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(
            "pixel_shuffle expects its input's 'channel' dimension to be divisible by the "
            f"square of upscale_factor, but input.size(-3)={c} is not divisible by {r * r}"
        )
    nb = len(batch)
    x = input.reshape(*batch, c // (r * r), r, r, h, w)
    perm = list(range(nb)) + [nb, nb + 3, nb + 1, nb + 4, nb + 2]
    return x.permute(perm).reshape(*batch, c // (r * r), h * r, w * r)


@_dispatch_on("input")
def pixel_unshuffle(input, downscale_factor):
    """(*, C, H r, W r) -> (*, C r^2, H, W).

    >>> x = flambeau.arange(4.0).reshape(1, 1, 2, 2)
    >>> flambeau.pixel_unshuffle(x, 2).flatten()
    tensor([0., 1., 2., 3.])
    >>> flambeau.pixel_unshuffle(x, 2).shape
    flambeau.Size([1, 4, 1, 1])
    """
    r = _shuffle_factor("pixel_unshuffle", "downscale_factor", input, downscale_factor)
    *batch, c, h, w = input.shape
    for axis, size, dim in (("height", h, -2), ("width", w, -1)):
        if size % r:
            raise RuntimeError(
                f"pixel_unshuffle expects {axis} to be divisible by downscale_factor, but "
                f"input.size({dim})={size} is not divisible by {r}"
            )
    nb = len(batch)
    x = input.reshape(*batch, c, h // r, r, w // r, r)
    perm = list(range(nb)) + [nb, nb + 2, nb + 4, nb + 1, nb + 3]
    return x.permute(perm).reshape(*batch, c * r * r, h // r, w // r)


def _channel_shuffle(fn: str, input, groups):
    check_tensor(fn, "input", 1, input)
    groups = int_argument(fn, "groups", 2, groups)
    if input.dim() <= 2:
        raise RuntimeError(
            "channel_shuffle expects input with > 2 dims, but got input with sizes "
            f"{list(input.shape)}"
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


@_dispatch_on("input")
def channel_shuffle(input, groups):
    """(N, g * k, *) -> channels regrouped as (k, g): output channel i*g + j is input
    channel j*k + i (ShuffleNet's channel shuffle).

    >>> x = flambeau.arange(6.0).reshape(1, 6, 1, 1)
    >>> flambeau.channel_shuffle(x, 2).flatten()
    tensor([0., 3., 1., 4., 2., 5.])
    """
    return _channel_shuffle("channel_shuffle", input, groups)


@_dispatch_on("input")
def native_channel_shuffle(input, groups):
    """channel_shuffle under the name of PyTorch's kernel.

    >>> x = flambeau.arange(6.0).reshape(1, 6, 1, 1)
    >>> flambeau.native_channel_shuffle(x, 3).flatten()
    tensor([0., 2., 4., 1., 3., 5.])
    """
    return _channel_shuffle("native_channel_shuffle", input, groups)


# ---- activations ----------------------------------------------------------------------------


@_dispatch_on("input", "weight")
@autocast_policy("lower_precision_fp")
def prelu(input, weight):
    """x where x > 0, else weight * x, with one weight or one per channel (dim 1).

    >>> x = flambeau.tensor([-2.0, -1.0, 0.0, 3.0])
    >>> flambeau.prelu(x, flambeau.tensor([0.25]))
    tensor([-0.5000, -0.2500,  0.0000,  3.0000])
    """
    check_tensor("prelu", "input", 1, input)
    check_tensor("prelu", "weight", 2, weight)
    if input.dtype != weight.dtype:
        raise RuntimeError(
            f"prelu: Type promoting not supported. Got {dtype_name(input.dtype)} and "
            f"{dtype_name(weight.dtype)}"
        )
    require_floating("prelu", input)
    count = weight.numel()
    if count != 1:
        if input.dim() == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channels = input.shape[1] if input.dim() > 1 else 1
        if count != channels:
            raise RuntimeError(
                "Mismatch of parameter numbers and input channel size. Found parameter numbers "
                f"= {count} and channel size = {channels}."
            )
    if weight.dim() > 1:
        raise RuntimeError(
            f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.dim()}"
        )
    # One weight broadcasts as a scalar (the output keeps input's shape, 0-d included).
    w = weight.reshape(()) if count == 1 else weight.reshape((count,) + (1,) * (input.dim() - 2))
    return _C.where(input > 0, input, w * input)


@_dispatch_on("input")
def relu_(input):
    """In-place :func:`flambeau.relu`: sets every negative element of ``input`` to zero.

    Returns ``input`` itself, modified. As an in-place operation it fails on a leaf that
    requires grad, and autograd differentiates it through the result (the gradient is 1
    where the output is positive, 0 elsewhere).

    >>> x = flambeau.tensor([-1.0, 0.5, 2.0])
    >>> flambeau.relu_(x)
    tensor([0.0000, 0.5000, 2.0000])
    >>> x
    tensor([0.0000, 0.5000, 2.0000])
    """
    check_tensor("relu_", "input", 1, input)
    return input.relu_()


@_dispatch_on("input")
def selu_(input):
    """In-place SELU: ``input`` becomes ``scale * (max(0, x) + min(0, alpha * (exp(x) - 1)))``
    with PyTorch's fixed constants ``alpha ~ 1.6733`` and ``scale ~ 1.0507``.

    ``input`` must be a floating-point tensor; returns it, modified.

    >>> x = flambeau.tensor([-1.0, 0.0, 1.0])
    >>> flambeau.selu_(x)
    tensor([-1.1113,  0.0000,  1.0507])
    """
    check_tensor("selu_", "input", 1, input)
    return input.selu_()


@_dispatch_on("input")
def celu_(input, alpha=1.0):
    """In-place CELU: ``input`` becomes ``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``.

    Args:
        input: a floating-point tensor, overwritten with the result.
        alpha: the saturation value for negative inputs (default 1.0); must not be 0.

    Returns ``input`` itself.

    >>> x = flambeau.tensor([-1.0, 0.0, 2.0])
    >>> flambeau.celu_(x, alpha=2.0)
    tensor([-0.7869,  0.0000,  2.0000])
    """
    check_tensor("celu_", "input", 1, input)
    return input.celu_(alpha)


@_dispatch_on("input")
def threshold_(input, threshold, value):
    """input replaced by value where input <= threshold (in place).

    >>> x = flambeau.tensor([0.5, 1.0, 1.5, 2.0])
    >>> flambeau.threshold_(x, 1.0, -1.0)
    tensor([-1.0000, -1.0000,  1.5000,  2.0000])
    """
    check_tensor("threshold_", "input", 1, input)
    return input.threshold_(threshold, value)


def _rrelu(fn, input, lower, upper, training, generator, inplace):
    check_tensor(fn, "input", 1, input)
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    require_floating(fn, input)
    if not training:
        slope = (lower + upper) / 2
        return input.leaky_relu_(slope) if inplace else _C.leaky_relu(input, slope)
    with no_grad():
        # The factor each element is scaled by, a constant of the graph: a uniform slope where
        # x <= 0 (as PyTorch's kernel, so the gradient at 0 is the slope), else 1.
        noise = _C.empty_like(input).uniform_(lower, upper, generator=generator)
        noise.masked_fill_(input.detach() > 0, 1.0)
    return input.mul_(noise) if inplace else input * noise


@_dispatch_on("input")
def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    """Leaky ReLU whose negative slope is drawn from U(lower, upper) per element when
    training, and is (lower + upper) / 2 otherwise.

    >>> x = flambeau.tensor([-3.0, -1.0, 2.0])
    >>> flambeau.rrelu(x, lower=0.1, upper=0.3)
    tensor([-0.6000, -0.2000,  2.0000])
    """
    return _rrelu("rrelu", input, lower, upper, training, generator, inplace=False)


@_dispatch_on("input")
def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    """rrelu in place.

    >>> x = flambeau.tensor([-3.0, -1.0, 2.0])
    >>> _ = flambeau.rrelu_(x, lower=0.1, upper=0.3)
    >>> x
    tensor([-0.6000, -0.2000,  2.0000])
    """
    return _rrelu("rrelu_", input, lower, upper, training, generator, inplace=True)


# one_hot is torch.nn.functional's only (flambeau.nn.functional re-exports it); it lives here
# so that the distributions, which cannot import flambeau-nn, share it.
__all__ = [
    "bilinear",
    "celu_",
    "channel_shuffle",
    "conv_tbc",
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
