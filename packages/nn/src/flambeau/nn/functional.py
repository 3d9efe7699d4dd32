"""``flambeau.nn.functional``: the stateless functions behind the layers.

Everything here composes the core's operators, so autograd differentiates it
through their formulas. Kernels of their own (softmax, normalisation, dropout,
convolution, pooling, the cross-entropy family) come with the core's NN family.
"""

from __future__ import annotations

import math
import warnings

import flambeau

from . import _reduction

__all__ = [
    "linear",
    "bilinear",
    "relu",
    "relu_",
    "threshold",
    "threshold_",
    "sigmoid",
    "tanh",
    "softsign",
    "tanhshrink",
    "normalize",
    "cosine_similarity",
    "pairwise_distance",
    "l1_loss",
    "mse_loss",
    "soft_margin_loss",
    "margin_ranking_loss",
    "hinge_embedding_loss",
    "cosine_embedding_loss",
    "poisson_nll_loss",
    "gaussian_nll_loss",
    "triplet_margin_loss",
    "triplet_margin_with_distance_loss",
]


# ---- linear ---------------------------------------------------------------------------------


def linear(input, weight, bias=None):
    """y = input @ weight.T + bias; weight is (out_features, in_features)."""
    if weight.dim() not in (1, 2):
        raise RuntimeError(
            f"linear(): weight should be 1-D or 2-D, but got a weight of shape "
            f"{tuple(weight.shape)}"
        )
    if input.dim() == 0 or input.shape[-1] != weight.shape[-1]:
        raise RuntimeError(
            f"linear(): input and weight shapes cannot be multiplied: input "
            f"{tuple(input.shape)}, weight {tuple(weight.shape)} (input.shape[-1] must equal "
            f"in_features = weight.shape[-1])"
        )
    out = flambeau.matmul(input, weight.t() if weight.dim() == 2 else weight)
    return out if bias is None else out + bias


def bilinear(input1, input2, weight, bias=None):
    """y[..., o] = sum_ij input1[..., i] * weight[o, i, j] * input2[..., j] + bias[o]."""
    if input1.dim() != input2.dim():
        raise RuntimeError(
            f"bilinear(): input dimensions do not match: got {input1.dim()} and {input2.dim()}"
        )
    if tuple(input1.shape[:-1]) != tuple(input2.shape[:-1]):
        raise RuntimeError(
            f"bilinear(): input batch dimensions do not match: got {list(input1.shape[:-1])} "
            f"and {list(input2.shape[:-1])}"
        )
    if weight.dim() != 3:
        raise RuntimeError(f"bilinear(): weight must be 3-D, got shape {tuple(weight.shape)}")
    out_f, in1, in2 = weight.shape
    if input1.shape[-1] != in1:
        raise RuntimeError(
            f"bilinear(): input1 size does not match weight size: got {input1.shape[-1]} but "
            f"expected {in1}"
        )
    if input2.shape[-1] != in2:
        raise RuntimeError(
            f"bilinear(): input2 size does not match weight size: got {input2.shape[-1]} but "
            f"expected {in2}"
        )
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != out_f):
        raise RuntimeError(
            f"bilinear(): bias size does not match weight size: got {tuple(bias.shape)} but "
            f"expected ({out_f},)"
        )
    batch = tuple(input1.shape[:-1])
    x1 = input1.reshape(-1, in1)
    x2 = input2.reshape(-1, in2)
    # (N, in1) @ (in1, out*in2) -> (N, out, in2), then contract with x2 over in2.
    w = weight.permute(1, 0, 2).reshape(in1, out_f * in2)
    t = flambeau.matmul(x1, w).reshape(-1, out_f, in2)
    y = flambeau.matmul(t, x2.unsqueeze(-1)).squeeze(-1)
    if bias is not None:
        y = y + bias
    return y.reshape(*batch, out_f)


# ---- activations ----------------------------------------------------------------------------


def relu(input, inplace: bool = False):
    """max(input, 0)."""
    return input.relu_() if inplace else flambeau.relu(input)


def relu_(input):
    return input.relu_()


def threshold(input, threshold: float, value: float, inplace: bool = False):
    """input where input > threshold, else value."""
    out = flambeau.where(input > threshold, input, flambeau.full((), value, dtype=input.dtype))
    return input.copy_(out) if inplace else out


def threshold_(input, threshold: float, value: float):
    return globals()["threshold"](input, threshold, value, inplace=True)


def sigmoid(input):
    return flambeau.sigmoid(input)


def tanh(input):
    return flambeau.tanh(input)


def softsign(input):
    """input / (1 + |input|)."""
    return input / (input.abs() + 1)


def tanhshrink(input):
    """input - tanh(input)."""
    return input - input.tanh()


# ---- distances ------------------------------------------------------------------------------


def normalize(input, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out=None):
    """input / max(||input||_p along dim, eps)."""
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    if out is None:
        return input / denom
    return flambeau.div(input, denom, out=out)


def _clamped_norm(x, dim, eps):
    # The norm clamped below at eps, with the gradient of the unclamped norm (the clamp
    # is a numerical guard, as in PyTorch, not part of the function differentiated).
    n = x.norm(2, dim, keepdim=True)
    return n + (n.clamp_min(eps) - n).detach()


def cosine_similarity(x1, x2, dim: int = 1, eps: float = 1e-8):
    """sum(x1 * x2) / (max(||x1||, eps) * max(||x2||, eps)) along dim, after broadcasting."""
    dtype = flambeau.result_type(x1, x2)
    if not dtype.is_floating_point:
        raise RuntimeError(
            f"cosine_similarity(): expected common dtype to be floating point, yet common dtype "
            f"is {dtype}"
        )
    shape = _broadcast_shape("cosine_similarity", x1, x2)
    x1 = (x1 if x1.dtype == dtype else x1.to(dtype)).expand(shape)
    x2 = (x2 if x2.dtype == dtype else x2.to(dtype)).expand(shape)
    return ((x1 / _clamped_norm(x1, dim, eps)) * (x2 / _clamped_norm(x2, dim, eps))).sum(dim)


def pairwise_distance(x1, x2, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False):
    """||x1 - x2 + eps||_p over the last dimension."""
    last = max(x1.dim(), x2.dim()) - 1
    return (x1 - x2 + eps).norm(p, last, keepdim=keepdim)


def _broadcast_shape(op, a, b):
    sa, sb = list(a.shape), list(b.shape)
    n = max(len(sa), len(sb))
    sa, sb = [1] * (n - len(sa)) + sa, [1] * (n - len(sb)) + sb
    out = []
    for i, (x, y) in enumerate(zip(sa, sb)):
        if x != y and 1 not in (x, y):
            raise RuntimeError(
                f"{op}(): the size of tensor a ({x}) must match the size of tensor b ({y}) at "
                f"non-singleton dimension {i}"
            )
        out.append(y if x == 1 else x)
    return out


# ---- losses ---------------------------------------------------------------------------------


def _reduce(loss, reduction: str):
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _zeros_like(t):
    # Zeros are constants: made from the detached tensor, they take no part in the graph.
    return flambeau.zeros_like(t.detach())


def _warn_size(input, target):
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}). This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.",
            stacklevel=3,
        )


def _pointwise_loss(errors, input, weight, reduction):
    if weight is None:
        return _reduce(errors, reduction)
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")
    weighted = errors * weight
    if reduction == "none":
        return weighted
    if reduction == "sum":
        return weighted.sum()
    if reduction == "mean":
        return weighted.sum() / weight.sum()
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """|input - target|, optionally weighted, reduced."""
    _warn_size(input, target)
    reduction = _reduction.resolve(size_average, reduce, reduction)
    return _pointwise_loss((input - target).abs(), input, weight, reduction)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """(input - target)^2, optionally weighted, reduced."""
    _warn_size(input, target)
    reduction = _reduction.resolve(size_average, reduce, reduction)
    return _pointwise_loss((input - target).square(), input, weight, reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """log(1 + exp(-target * input))."""
    reduction = _reduction.resolve(size_average, reduce, reduction)
    return _reduce(flambeau.log1p(flambeau.exp(-input * target)), reduction)


def margin_ranking_loss(
    input1, input2, target, margin: float = 0, size_average=None, reduce=None, reduction="mean"
):
    """max(0, -target * (input1 - input2) + margin)."""
    reduction = _reduction.resolve(size_average, reduce, reduction)
    if not input1.dim() == input2.dim() == target.dim():
        raise RuntimeError(
            "margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {input1.shape}, input2: {input2.shape}, target: {target.shape} "
        )
    return _reduce((-target * (input1 - input2) + margin).clamp_min(0), reduction)


def hinge_embedding_loss(
    input, target, margin: float = 1.0, size_average=None, reduce=None, reduction="mean"
):
    """input where target == 1, max(0, margin - input) where target == -1."""
    reduction = _reduction.resolve(size_average, reduce, reduction)
    zeros = _zeros_like(input)
    below_margin = flambeau.where(target != 1, (margin - input).clamp_min(0), zeros)
    itself = flambeau.where(target != -1, input, zeros)
    return _reduce(below_margin + itself, reduction)


def cosine_embedding_loss(
    input1, input2, target, margin: float = 0, size_average=None, reduce=None, reduction="mean"
):
    """1 - cos(x1, x2) where target == 1, max(0, cos(x1, x2) - margin) where target == -1."""
    reduction = _reduction.resolve(size_average, reduce, reduction)
    tdim = target.dim()
    if tdim not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    want = 2 if tdim == 1 else 1
    if input1.dim() != want or input2.dim() != want:
        raise RuntimeError(
            f"{tdim}D target tensor expects {want}D input tensors, but found inputs with sizes "
            f"{list(input1.shape)} and {list(input2.shape)}."
        )
    eps = 1e-12
    dot = (input1 * input2).sum(tdim)
    mag1 = (input1 * input1).sum(tdim) + eps
    mag2 = (input2 * input2).sum(tdim) + eps
    cos = dot / (mag1 * mag2).sqrt()
    zeros = _zeros_like(cos)
    pos = flambeau.where(target == 1, 1 - cos, zeros)
    neg = flambeau.where(target == -1, (cos - margin).clamp_min(0), zeros)
    return _reduce(pos + neg, reduction)


def poisson_nll_loss(
    input,
    target,
    log_input: bool = True,
    full: bool = False,
    size_average=None,
    eps: float = 1e-8,
    reduce=None,
    reduction="mean",
):
    """Negative log likelihood of target ~ Poisson(input) (or Poisson(exp(input)))."""
    reduction = _reduction.resolve(size_average, reduce, reduction)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if log_input:
        loss = flambeau.exp(input) - target * input
    else:
        loss = input - target * flambeau.log(input + eps)
    if full:
        # Stirling's approximation of log(target!), used where target > 1.
        stirling = target * flambeau.log(target) - target + 0.5 * flambeau.log(2 * math.pi * target)
        loss = loss + flambeau.where(target <= 1, _zeros_like(stirling), stirling)
    return _reduce(loss, reduction)


def gaussian_nll_loss(input, target, var, full: bool = False, eps: float = 1e-6, reduction="mean"):
    """0.5 * (log(max(var, eps)) + (input - target)^2 / max(var, eps)) (+ 0.5 log(2 pi))."""
    if isinstance(var, (int, float)):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * flambeau.ones_like(input)
    elif bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)  # homoscedastic: one variance per sample
        elif input.dim() == var.dim() and (
            sum(v for i, v in zip(input.shape, var.shape) if i != v) == 1
        ):
            pass  # homoscedastic: var broadcasts over one dimension
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    # Clamped for stability; the clamp is not differentiated (as in PyTorch).
    var = var + (var.clamp_min(eps) - var).detach()
    loss = 0.5 * (flambeau.log(var) + (input - target).square() / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def triplet_margin_loss(
    anchor,
    positive,
    negative,
    margin: float = 1.0,
    p: float = 2,
    eps: float = 1e-6,
    swap: bool = False,
    size_average=None,
    reduce=None,
    reduction="mean",
):
    """max(0, margin + d(anchor, positive) - d(anchor, negative)), d the p-norm distance."""
    reduction = _reduction.resolve(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    dims = (anchor.dim(), positive.dim(), negative.dim())
    if len(set(dims)) != 1:
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same number "
            f"of dimensions, but got: anchor {dims[0]}D, positive {dims[1]}D, and negative "
            f"{dims[2]}D inputs"
        )
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = flambeau.minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    return _reduce((margin + d_pos - d_neg).clamp_min(0), reduction)


def triplet_margin_with_distance_loss(
    anchor,
    positive,
    negative,
    *,
    distance_function=None,
    margin: float = 1.0,
    swap: bool = False,
    reduction: str = "mean",
):
    """triplet_margin_loss with any distance function (pairwise_distance by default)."""
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(
            "TripletMarginWithDistanceLoss: expected margin to be greater than 0, got "
            f"{margin} instead"
        )
    dims = (anchor.dim(), positive.dim(), negative.dim())
    if len(set(dims)) != 1:
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same number "
            f"of dimensions, but got: anchor {dims[0]}D, positive {dims[1]}D, and negative "
            f"{dims[2]}D inputs"
        )
    dist = distance_function if distance_function is not None else pairwise_distance
    d_pos = dist(anchor, positive)
    d_neg = dist(anchor, negative)
    if swap:
        d_neg = flambeau.minimum(d_neg, dist(positive, negative))
    return _reduce((margin + d_pos - d_neg).clamp_min(0), reduction)
