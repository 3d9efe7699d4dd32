"""``flambeau.nn.functional``: the stateless functions behind the layers.

Functions either call the core's NN kernels (softmax, the activations, normalisation,
dropout, embeddings, the cross-entropy family and the pointwise losses), whose autograd
formulas live in the autograd package, or compose the core's operators, so autograd
differentiates them through their formulas.
"""

from __future__ import annotations

import math
import warnings

import flambeau

# PyTorch's torch.nn.functional.<name> and torch.<name> are one function: it lives in the core.
from flambeau import (
    bilinear,
    celu_,
    cosine_similarity,
    pairwise_distance,
    prelu,
    relu_,
    selu_,
    threshold_,
)
from flambeau._arg_checks import check_tensor as _check_tensor
from flambeau._autocast_policy import autocast_policy
from flambeau.overrides import _dispatch_on

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
    # activations with kernels of their own
    "softmax",
    "log_softmax",
    "softmin",
    "gelu",
    "silu",
    "elu",
    "elu_",
    "selu",
    "selu_",
    "celu",
    "celu_",
    "leaky_relu",
    "leaky_relu_",
    "relu6",
    "hardtanh",
    "hardtanh_",
    "hardswish",
    "hardsigmoid",
    "mish",
    "softplus",
    "logsigmoid",
    "softshrink",
    "hardshrink",
    "glu",
    "prelu",
    # normalisation
    "layer_norm",
    "batch_norm",
    "group_norm",
    "instance_norm",
    "local_response_norm",
    # dropout
    "dropout",
    "dropout1d",
    "dropout2d",
    "dropout3d",
    "alpha_dropout",
    # embeddings
    "embedding",
    "embedding_bag",
    # losses with kernels of their own
    "cross_entropy",
    "nll_loss",
    "ctc_loss",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "kl_div",
    "smooth_l1_loss",
    "huber_loss",
    "multilabel_soft_margin_loss",
]


# ---- linear ---------------------------------------------------------------------------------


@_dispatch_on("input", "weight", "bias")
@autocast_policy("lower_precision_fp")
def linear(input, weight, bias=None):
    """y = input @ weight.T + bias; weight is (out_features, in_features).

    >>> import flambeau.nn.functional as F
    >>> x = flambeau.tensor([[1.0, 2.0]])
    >>> w = flambeau.tensor([[1.0, 0.0], [1.0, 1.0], [0.0, -1.0]])
    >>> F.linear(x, w, flambeau.tensor([0.5, 0.0, 1.0]))
    tensor([[ 1.5000,  3.0000, -1.0000]])
    """
    _check_tensor("linear", "input", 1, input)
    _check_tensor("linear", "weight", 2, weight)
    _check_tensor("linear", "bias", 3, bias, optional=True)
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
    if bias is not None and weight.dim() == 2 and input.dim() >= 2 and bias.dim() <= 1:
        # As PyTorch's: the bias folded into the product (addmm; AddmmBackward0), batch
        # dims of a contiguous input folded into its rows.
        if input.dim() == 2:
            return flambeau.addmm(bias, input, weight.t())
        if input.is_contiguous() and input.shape[-1] > 0:
            rows = input.reshape(-1, input.shape[-1])
            out = flambeau.addmm(bias, rows, weight.t())
            return out.view(*input.shape[:-1], weight.shape[0])
    out = flambeau.matmul(input, weight.t() if weight.dim() == 2 else weight)
    return out if bias is None else out + bias


# ---- activations ----------------------------------------------------------------------------


@_dispatch_on("input")
def relu(input, inplace: bool = False):
    """max(input, 0).

    >>> import flambeau.nn.functional as F
    >>> F.relu(flambeau.tensor([-1.0, 0.0, 2.5]))
    tensor([0.0000, 0.0000, 2.5000])
    """
    _check_tensor("relu", "input", 1, input)
    return input.relu_() if inplace else flambeau.relu(input)


@_dispatch_on("input")
def threshold(input, threshold: float, value: float, inplace: bool = False):
    """input where input > threshold, else value.

    >>> import flambeau.nn.functional as F
    >>> F.threshold(flambeau.tensor([0.5, 1.0, 1.5, 3.0]), 1.0, -1.0)
    tensor([-1.0000, -1.0000,  1.5000,  3.0000])
    """
    if inplace:
        return threshold_(input, threshold, value)
    _check_tensor("threshold", "input", 1, input)
    return flambeau.threshold(input, threshold, value)


def sigmoid(input):
    """Elementwise logistic sigmoid, ``1 / (1 + exp(-x))``: values in (0, 1). The same as
    :func:`flambeau.sigmoid`.

    >>> import flambeau.nn.functional as F
    >>> F.sigmoid(flambeau.tensor([-2.0, 0.0, 2.0]))
    tensor([0.1192, 0.5000, 0.8808])
    """
    return flambeau.sigmoid(input)


def tanh(input):
    """Elementwise hyperbolic tangent: values in (-1, 1). The same as
    :func:`flambeau.tanh`.

    >>> import flambeau.nn.functional as F
    >>> F.tanh(flambeau.tensor([-1.0, 0.0, 0.5]))
    tensor([-0.7616,  0.0000,  0.4621])
    """
    return flambeau.tanh(input)


@_dispatch_on("input")
def softsign(input):
    """input / (1 + |input|).

    >>> import flambeau.nn.functional as F
    >>> F.softsign(flambeau.tensor([-3.0, 0.0, 1.0]))
    tensor([-0.7500,  0.0000,  0.5000])
    """
    return input / (input.abs() + 1)


@_dispatch_on("input")
def tanhshrink(input):
    """input - tanh(input).

    >>> import flambeau.nn.functional as F
    >>> F.tanhshrink(flambeau.tensor([-1.0, 0.0, 2.0]))
    tensor([-0.2384,  0.0000,  1.0360])
    """
    return input - input.tanh()


# ---- distances ------------------------------------------------------------------------------


@_dispatch_on("input", "out")
def normalize(input, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out=None):
    """input / max(||input||_p along dim, eps).

    >>> import flambeau.nn.functional as F
    >>> F.normalize(flambeau.tensor([[3.0, 4.0], [1.0, 0.0]]), dim=1)
    tensor([[0.6000, 0.8000],
            [1.0000, 0.0000]])
    """
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    if out is None:
        return input / denom
    return flambeau.div(input, denom, out=out)


# ---- losses ---------------------------------------------------------------------------------


_reduce = _reduction.apply


def _zeros_like(t):
    # Zeros are constants: made from the detached tensor, they take no part in the graph.
    return flambeau.zeros_like(t.detach())


def _warn_size(input, target):
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}). This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.",
            stacklevel=4,
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


@_dispatch_on("input", "target", "weight")
def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """|input - target|, optionally weighted, reduced.

    >>> import flambeau.nn.functional as F
    >>> F.l1_loss(flambeau.tensor([1.0, 2.0, 3.0]), flambeau.tensor([1.5, 2.0, 1.0]))
    tensor(0.8333)
    """
    _warn_size(input, target)
    reduction = _reduction.resolve(size_average, reduce, reduction)
    if weight is None:
        return flambeau.l1_loss(input, target, _reduction_enum(reduction))
    return _pointwise_loss((input - target).abs(), input, weight, reduction)


@_dispatch_on("input", "target", "weight")
def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """(input - target)^2, optionally weighted, reduced.

    >>> import flambeau.nn.functional as F
    >>> F.mse_loss(flambeau.tensor([1.0, 2.0, 3.0]), flambeau.tensor([1.5, 2.0, 1.0]))
    tensor(1.4167)
    """
    _warn_size(input, target)
    reduction = _reduction.resolve(size_average, reduce, reduction)
    if weight is None:
        return flambeau.mse_loss(input, target, _reduction_enum(reduction))
    return _pointwise_loss((input - target).square(), input, weight, reduction)


@_dispatch_on("input", "target")
@autocast_policy("fp32")
def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """log(1 + exp(-target * input)).

    >>> import flambeau.nn.functional as F
    >>> F.soft_margin_loss(flambeau.tensor([2.0, -1.0]), flambeau.tensor([1.0, 1.0]))
    tensor(0.7201)
    """
    _check_tensor("soft_margin_loss", "input", 1, input)
    _check_tensor("soft_margin_loss", "target", 2, target)
    reduction = _reduction.resolve(size_average, reduce, reduction)
    return _reduce(flambeau.log1p(flambeau.exp(-input * target)), reduction)


@_dispatch_on("input1", "input2", "target")
@autocast_policy("fp32")
def margin_ranking_loss(
    input1, input2, target, margin: float = 0, size_average=None, reduce=None, reduction="mean"
):
    """max(0, -target * (input1 - input2) + margin).

    >>> import flambeau.nn.functional as F
    >>> x1, x2 = flambeau.tensor([1.0, 2.0, 3.0]), flambeau.tensor([2.0, 2.0, 1.0])
    >>> y = flambeau.tensor([1.0, 1.0, -1.0])
    >>> F.margin_ranking_loss(x1, x2, y, margin=0.5, reduction="none")
    tensor([1.5000, 0.5000, 2.5000])
    """
    reduction = _reduction.resolve(size_average, reduce, reduction)
    if not input1.dim() == input2.dim() == target.dim():
        raise RuntimeError(
            "margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {input1.shape}, input2: {input2.shape}, target: {target.shape} "
        )
    return _reduce((-target * (input1 - input2) + margin).clamp_min(0), reduction)


@_dispatch_on("input", "target")
@autocast_policy("fp32")
def hinge_embedding_loss(
    input, target, margin: float = 1.0, size_average=None, reduce=None, reduction="mean"
):
    """input where target == 1, max(0, margin - input) where target == -1.

    >>> import flambeau.nn.functional as F
    >>> x = flambeau.tensor([0.3, 0.3, 2.0])
    >>> F.hinge_embedding_loss(x, flambeau.tensor([1.0, -1.0, -1.0]), reduction="none")
    tensor([0.3000, 0.7000, 0.0000])
    """
    _check_tensor("hinge_embedding_loss", "input", 1, input)
    _check_tensor("hinge_embedding_loss", "target", 2, target)
    reduction = _reduction.resolve(size_average, reduce, reduction)
    zeros = _zeros_like(input)
    below_margin = flambeau.where(target != 1, (margin - input).clamp_min(0), zeros)
    itself = flambeau.where(target != -1, input, zeros)
    return _reduce(below_margin + itself, reduction)


@_dispatch_on("input1", "input2", "target")
@autocast_policy("fp32")
def cosine_embedding_loss(
    input1, input2, target, margin: float = 0, size_average=None, reduce=None, reduction="mean"
):
    """1 - cos(x1, x2) where target == 1, max(0, cos(x1, x2) - margin) where target == -1.

    >>> import flambeau.nn.functional as F
    >>> x1 = flambeau.tensor([[1.0, 0.0], [1.0, 0.0]])
    >>> x2 = flambeau.tensor([[0.0, 1.0], [1.0, 1.0]])
    >>> F.cosine_embedding_loss(x1, x2, flambeau.tensor([1, -1]), reduction="none")
    tensor([1.0000, 0.7071])
    """
    _check_tensor("cosine_embedding_loss", "input1", 1, input1)
    _check_tensor("cosine_embedding_loss", "input2", 2, input2)
    _check_tensor("cosine_embedding_loss", "target", 3, target)
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


@_dispatch_on("input", "target")
@autocast_policy("fp32")
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
    """Negative log likelihood of target ~ Poisson(input) (or Poisson(exp(input))).

    >>> import flambeau.nn.functional as F
    >>> log_rate = flambeau.tensor([0.0, 1.0])
    >>> F.poisson_nll_loss(log_rate, flambeau.tensor([1.0, 2.0]), reduction="none")
    tensor([1.0000, 0.7183])
    """
    _check_tensor("poisson_nll_loss", "input", 1, input)
    _check_tensor("poisson_nll_loss", "target", 2, target)
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


@_dispatch_on("input", "target", "var")
def gaussian_nll_loss(input, target, var, full: bool = False, eps: float = 1e-6, reduction="mean"):
    """0.5 * (log(max(var, eps)) + (input - target)^2 / max(var, eps)) (+ 0.5 log(2 pi)).

    >>> import flambeau.nn.functional as F
    >>> mean, target = flambeau.tensor([1.0, 2.0]), flambeau.tensor([1.0, 4.0])
    >>> F.gaussian_nll_loss(mean, target, flambeau.tensor([1.0, 2.0]), reduction="none")
    tensor([0.0000, 1.3466])
    """
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


@_dispatch_on("anchor", "positive", "negative")
@autocast_policy("fp32")
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
    """max(0, margin + d(anchor, positive) - d(anchor, negative)), d the p-norm distance.

    >>> import flambeau.nn.functional as F
    >>> anchor = flambeau.tensor([[0.0, 0.0]])
    >>> pos, neg = flambeau.tensor([[3.0, 4.0]]), flambeau.tensor([[1.0, 0.0]])
    >>> F.triplet_margin_loss(anchor, pos, neg, margin=1.0)
    tensor(5.0000)
    """
    _check_tensor("triplet_margin_loss", "anchor", 1, anchor)
    _check_tensor("triplet_margin_loss", "positive", 2, positive)
    _check_tensor("triplet_margin_loss", "negative", 3, negative)
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


@_dispatch_on("anchor", "positive", "negative")
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
    """triplet_margin_loss with any distance function (pairwise_distance by default).

    >>> import flambeau.nn.functional as F
    >>> anchor = flambeau.tensor([[0.0, 0.0]])
    >>> pos, neg = flambeau.tensor([[3.0, 4.0]]), flambeau.tensor([[1.0, 0.0]])
    >>> l1 = lambda x, y: (x - y).abs().sum(-1)
    >>> F.triplet_margin_with_distance_loss(anchor, pos, neg, distance_function=l1)
    tensor(7.)
    """
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


# ---- activations with kernels of their own --------------------------------------------------


def _softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call to include "
        "dim=X as an argument.",
        stacklevel=stacklevel,
    )
    return 0 if ndim in (0, 1, 3) else 1


@_dispatch_on("input")
def softmax(input, dim=None, _stacklevel: int = 3, dtype=None):
    """exp(x) / sum(exp(x)) along dim (cast to dtype first when given).

    >>> import flambeau.nn.functional as F
    >>> F.softmax(flambeau.tensor([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]]), dim=1)
    tensor([[0.0900, 0.2447, 0.6652],
            [0.3333, 0.3333, 0.3333]])
    """
    if dim is None:
        dim = _softmax_dim("softmax", input.dim(), _stacklevel + 1)
    return flambeau.softmax(input, dim, dtype=dtype)


@_dispatch_on("input")
def softmin(input, dim=None, _stacklevel: int = 3, dtype=None):
    """softmax(-x) along dim.

    >>> import flambeau.nn.functional as F
    >>> F.softmin(flambeau.tensor([1.0, 2.0, 3.0]), dim=0)
    tensor([0.6652, 0.2447, 0.0900])
    """
    if dim is None:
        dim = _softmax_dim("softmin", input.dim(), _stacklevel + 1)
    return flambeau.softmax(-input, dim, dtype=dtype)


@_dispatch_on("input")
def log_softmax(input, dim=None, _stacklevel: int = 3, dtype=None):
    """x - log(sum(exp(x))) along dim, computed stably.

    >>> import flambeau.nn.functional as F
    >>> F.log_softmax(flambeau.tensor([1.0, 2.0, 3.0]), dim=0)
    tensor([-2.4076, -1.4076, -0.4076])
    """
    if dim is None:
        dim = _softmax_dim("log_softmax", input.dim(), _stacklevel + 1)
    return flambeau.log_softmax(input, dim, dtype=dtype)


def gelu(input, approximate: str = "none"):
    """x * Phi(x), or its tanh approximation with approximate='tanh'.

    >>> import flambeau.nn.functional as F
    >>> F.gelu(flambeau.tensor([-1.0, 0.0, 1.0, 2.0]))
    tensor([-0.1587,  0.0000,  0.8413,  1.9545])
    """
    _check_tensor("gelu", "input", 1, input)
    if approximate not in ("none", "tanh"):
        raise RuntimeError(f"approximate argument must be either none or tanh, got {approximate!r}")
    return flambeau.gelu(input, approximate=approximate)


@_dispatch_on("input")
def silu(input, inplace: bool = False):
    """x * sigmoid(x).

    >>> import flambeau.nn.functional as F
    >>> F.silu(flambeau.tensor([-1.0, 0.0, 1.0, 2.0]))
    tensor([-0.2689,  0.0000,  0.7311,  1.7616])
    """
    _check_tensor("silu", "input", 1, input)
    return input.silu_() if inplace else flambeau.silu(input)


@_dispatch_on("input")
def elu(input, alpha: float = 1.0, inplace: bool = False):
    """x where x > 0, else alpha * (exp(x) - 1).

    >>> import flambeau.nn.functional as F
    >>> F.elu(flambeau.tensor([-2.0, -1.0, 0.0, 1.0]))
    tensor([-0.8647, -0.6321,  0.0000,  1.0000])
    """
    _check_tensor("elu", "input", 1, input)
    return input.elu_(alpha) if inplace else flambeau.elu(input, alpha)


def elu_(input, alpha: float = 1.0):
    """In-place :func:`elu`: ``input`` becomes ``x`` where ``x > 0``, else
    ``alpha * (exp(x) - 1)``. Returns ``input`` itself.

    >>> import flambeau.nn.functional as F
    >>> x = flambeau.tensor([-1.0, 0.0, 2.0])
    >>> _ = F.elu_(x, alpha=2.0)
    >>> x
    tensor([-1.2642,  0.0000,  2.0000])
    """
    _check_tensor("elu_", "input", 1, input)
    return input.elu_(alpha)


@_dispatch_on("input")
def selu(input, inplace: bool = False):
    """scale * elu(x, alpha) with the self-normalising constants.

    >>> import flambeau.nn.functional as F
    >>> F.selu(flambeau.tensor([-1.0, 0.0, 1.0]))
    tensor([-1.1113,  0.0000,  1.0507])
    """
    _check_tensor("selu", "input", 1, input)
    return selu_(input) if inplace else flambeau.selu(input)


@_dispatch_on("input")
def celu(input, alpha: float = 1.0, inplace: bool = False):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1)).

    >>> import flambeau.nn.functional as F
    >>> F.celu(flambeau.tensor([-2.0, 0.0, 1.0]), alpha=2.0)
    tensor([-1.2642,  0.0000,  1.0000])
    """
    _check_tensor("celu", "input", 1, input)
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: celu(): alpha must not be 0")
    return celu_(input, alpha) if inplace else flambeau.celu(input, alpha)


@_dispatch_on("input")
def leaky_relu(input, negative_slope: float = 0.01, inplace: bool = False):
    """x where x > 0, else negative_slope * x.

    >>> import flambeau.nn.functional as F
    >>> F.leaky_relu(flambeau.tensor([-2.0, 0.0, 3.0]), negative_slope=0.1)
    tensor([-0.2000,  0.0000,  3.0000])
    """
    _check_tensor("leaky_relu", "input", 1, input)
    if inplace:
        return input.leaky_relu_(negative_slope)
    return flambeau.leaky_relu(input, negative_slope)


def leaky_relu_(input, negative_slope: float = 0.01):
    """In-place :func:`leaky_relu`: negative elements of ``input`` are multiplied by
    ``negative_slope`` (default 0.01). Returns ``input`` itself.

    >>> import flambeau.nn.functional as F
    >>> x = flambeau.tensor([-2.0, 0.0, 3.0])
    >>> _ = F.leaky_relu_(x, 0.5)
    >>> x
    tensor([-1.,  0.,  3.])
    """
    _check_tensor("leaky_relu_", "input", 1, input)
    return input.leaky_relu_(negative_slope)


@_dispatch_on("input")
def relu6(input, inplace: bool = False):
    """min(max(x, 0), 6).

    >>> import flambeau.nn.functional as F
    >>> F.relu6(flambeau.tensor([-1.0, 3.0, 8.0]))
    tensor([0., 3., 6.])
    """
    _check_tensor("relu6", "input", 1, input)
    return input.hardtanh_(0.0, 6.0) if inplace else flambeau.relu6(input)


@_dispatch_on("input")
def hardtanh(input, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False):
    """x clamped to [min_val, max_val].

    >>> import flambeau.nn.functional as F
    >>> F.hardtanh(flambeau.tensor([-3.0, -0.5, 0.5, 3.0]))
    tensor([-1.0000, -0.5000,  0.5000,  1.0000])
    """
    _check_tensor("hardtanh", "input", 1, input)
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if inplace:
        return input.hardtanh_(min_val, max_val)
    return flambeau.hardtanh(input, min_val, max_val)


@_dispatch_on("input")
def hardtanh_(input, min_val: float = -1.0, max_val: float = 1.0):
    """In-place :func:`hardtanh`: ``input`` clamped to ``[min_val, max_val]`` (default
    [-1, 1]). Returns ``input`` itself; ValueError when ``min_val > max_val``.

    >>> import flambeau.nn.functional as F
    >>> x = flambeau.tensor([-3.0, 0.5, 3.0])
    >>> _ = F.hardtanh_(x, 0.0, 1.0)
    >>> x
    tensor([0.0000, 0.5000, 1.0000])
    """
    _check_tensor("hardtanh_", "input", 1, input)
    return hardtanh(input, min_val, max_val, inplace=True)


@_dispatch_on("input")
def hardswish(input, inplace: bool = False):
    """x * relu6(x + 3) / 6.

    >>> import flambeau.nn.functional as F
    >>> F.hardswish(flambeau.tensor([-1.0, 0.0, 1.0, 4.0]))
    tensor([-0.3333,  0.0000,  0.6667,  4.0000])
    """
    _check_tensor("hardswish", "input", 1, input)
    return input.hardswish_() if inplace else flambeau.hardswish(input)


@_dispatch_on("input")
def hardsigmoid(input, inplace: bool = False):
    """relu6(x + 3) / 6.

    >>> import flambeau.nn.functional as F
    >>> F.hardsigmoid(flambeau.tensor([-4.0, -1.5, 0.0, 1.5, 4.0]))
    tensor([0.0000, 0.2500, 0.5000, 0.7500, 1.0000])
    """
    _check_tensor("hardsigmoid", "input", 1, input)
    return input.hardsigmoid_() if inplace else flambeau.hardsigmoid(input)


@_dispatch_on("input")
def mish(input, inplace: bool = False):
    """x * tanh(softplus(x)).

    >>> import flambeau.nn.functional as F
    >>> F.mish(flambeau.tensor([-1.0, 0.0, 1.0]))
    tensor([-0.3034,  0.0000,  0.8651])
    """
    _check_tensor("mish", "input", 1, input)
    return input.mish_() if inplace else flambeau.mish(input)


def softplus(input, beta: float = 1.0, threshold: float = 20.0):
    """log(1 + exp(beta * x)) / beta, x itself where beta * x > threshold.

    >>> import flambeau.nn.functional as F
    >>> F.softplus(flambeau.tensor([-1.0, 0.0, 1.0, 30.0]))
    tensor([ 0.3133,  0.6931,  1.3133, 30.0000])
    """
    _check_tensor("softplus", "input", 1, input)
    return flambeau.softplus(input, beta, threshold)


def logsigmoid(input):
    """log(sigmoid(x)), without overflow.

    >>> import flambeau.nn.functional as F
    >>> F.logsigmoid(flambeau.tensor([-1.0, 0.0, 1.0]))
    tensor([-1.3133, -0.6931, -0.3133])
    """
    _check_tensor("logsigmoid", "input", 1, input)
    return flambeau.log_sigmoid(input)


def softshrink(input, lambd: float = 0.5):
    """x - lambd where x > lambd, x + lambd where x < -lambd, else 0.

    >>> import flambeau.nn.functional as F
    >>> F.softshrink(flambeau.tensor([-2.0, 0.0, 0.4, 1.5]), lambd=0.5)
    tensor([-1.5000,  0.0000,  0.0000,  1.0000])
    """
    _check_tensor("softshrink", "input", 1, input)
    if lambd < 0:
        raise RuntimeError(f"lambda must be greater or equal to 0, but found to be {float(lambd)}.")
    return flambeau.softshrink(input, lambd)


def hardshrink(input, lambd: float = 0.5):
    """x where |x| > lambd, else 0.

    >>> import flambeau.nn.functional as F
    >>> F.hardshrink(flambeau.tensor([-2.0, -0.3, 0.0, 0.4, 1.5]), lambd=0.5)
    tensor([-2.0000,  0.0000,  0.0000,  0.0000,  1.5000])
    """
    _check_tensor("hardshrink", "input", 1, input)
    return flambeau.hardshrink(input, lambd)


@_dispatch_on("input")
def glu(input, dim: int = -1):
    """a * sigmoid(b), where a and b are the two halves of input along dim.

    >>> import flambeau.nn.functional as F
    >>> F.glu(flambeau.tensor([[1.0, 2.0, 0.0, 100.0]]), dim=-1)
    tensor([[0.5000, 2.0000]])
    """
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    n = input.shape[dim]
    if n % 2:
        raise RuntimeError(
            f"Halving dimension must be even, but dimension {dim % input.dim()} is size {n}"
        )
    a, b = input.split(n // 2, dim)
    return a * flambeau.sigmoid(b)


# ---- normalisation --------------------------------------------------------------------------


def _verify_batch_size(size) -> None:
    values = 1
    for i, s in enumerate(size):
        if i != 1:
            values *= s
    if values == 1:
        raise ValueError(
            f"Expected more than 1 value per channel when training, got input size {size}"
        )


@_dispatch_on("input", "weight", "bias")
def layer_norm(input, normalized_shape, weight=None, bias=None, eps: float = 1e-5):
    """Normalise over the trailing normalized_shape dimensions, then scale and shift.

    >>> import flambeau.nn.functional as F
    >>> F.layer_norm(flambeau.tensor([[1.0, 2.0, 3.0], [2.0, 2.0, 2.0]]), (3,))
    tensor([[-1.2247,  0.0000,  1.2247],
            [ 0.0000,  0.0000,  0.0000]])
    """
    _check_tensor("layer_norm", "input", 1, input)
    _check_tensor("layer_norm", "weight", 3, weight, optional=True)
    _check_tensor("layer_norm", "bias", 4, bias, optional=True)
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    normalized_shape = tuple(normalized_shape)
    k = len(normalized_shape)
    if k == 0 or input.dim() < k or tuple(input.shape[input.dim() - k :]) != normalized_shape:
        raise RuntimeError(
            f"layer_norm(): given normalized_shape={list(normalized_shape)}, expected input with "
            f"shape [*, {', '.join(str(s) for s in normalized_shape)}], but got input of size "
            f"{list(input.shape)}"
        )
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != normalized_shape:
            raise RuntimeError(
                f"layer_norm(): expected {name} of shape {list(normalized_shape)}, but got "
                f"{list(t.shape)}"
            )
    return flambeau.layer_norm(input, list(normalized_shape), weight, bias, eps)


def _check_channel_vector(op, name, t, channels):
    if t is not None and (t.dim() != 1 or t.shape[0] != channels):
        raise RuntimeError(
            f"{op}(): expected {name} of shape ({channels},) (one per channel of input dim 1), "
            f"but got {tuple(t.shape)}"
        )


@_dispatch_on("input", "running_mean", "running_var", "weight", "bias")
def batch_norm(input, running_mean, running_var, weight=None, bias=None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-5):  # fmt: skip
    """Normalise each channel (dim 1) by batch statistics (training) or the running ones.

    In training the running statistics, when given, are updated in place:
    running = (1 - momentum) * running + momentum * batch statistic (unbiased variance).

    >>> import flambeau.nn.functional as F
    >>> x = flambeau.tensor([[1.0, 10.0], [3.0, 20.0]])
    >>> mean, var = flambeau.zeros(2), flambeau.ones(2)
    >>> F.batch_norm(x, mean, var, training=True)
    tensor([[-1.0000, -1.0000],
            [ 1.0000,  1.0000]])
    >>> mean
    tensor([0.2000, 1.5000])
    """
    _check_tensor("batch_norm", "input", 1, input)
    _check_tensor("batch_norm", "running_mean", 2, running_mean, optional=True)
    _check_tensor("batch_norm", "running_var", 3, running_var, optional=True)
    _check_tensor("batch_norm", "weight", 4, weight, optional=True)
    _check_tensor("batch_norm", "bias", 5, bias, optional=True)
    if input.dim() < 2:
        raise ValueError(
            f"batch_norm(): expected input with at least 2 dimensions (N, C, *), but got input "
            f"of shape {tuple(input.shape)}"
        )
    if training:
        _verify_batch_size(input.shape)
    c = input.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):  # fmt: skip
        _check_channel_vector("batch_norm", name, t, c)
    if not training and (running_mean is None or running_var is None):
        raise RuntimeError(
            "batch_norm(): running_mean and running_var must be given when training=False"
        )
    return flambeau.batch_norm(
        input, weight, bias, running_mean, running_var, training, momentum, eps, False
    )


@_dispatch_on("input", "running_mean", "running_var", "weight", "bias")
def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats: bool = True, momentum: float = 0.1,
                  eps: float = 1e-5):  # fmt: skip
    """Normalise each (sample, channel) over its spatial dimensions.

    >>> import flambeau.nn.functional as F
    >>> x = flambeau.tensor([[[1.0, 3.0], [0.0, 10.0]]])
    >>> F.instance_norm(x)
    tensor([[[-1.0000,  1.0000],
             [-1.0000,  1.0000]]])
    """
    _check_tensor("instance_norm", "running_mean", 2, running_mean, optional=True)
    _check_tensor("instance_norm", "running_var", 3, running_var, optional=True)
    _check_tensor("instance_norm", "weight", 4, weight, optional=True)
    _check_tensor("instance_norm", "bias", 5, bias, optional=True)
    if input.dim() < 3:
        raise ValueError(
            f"instance_norm(): expected input with at least 3 dimensions (N, C, *), but got "
            f"input of shape {tuple(input.shape)}"
        )
    if use_input_stats:
        spatial = 1
        for s in input.shape[2:]:
            spatial *= s
        if spatial == 1:
            raise ValueError(
                f"Expected more than 1 spatial element when training, got input size {input.shape}"
            )
    c = input.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):  # fmt: skip
        _check_channel_vector("instance_norm", name, t, c)
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError(
            "instance_norm(): expected running_mean and running_var to be defined when "
            "use_input_stats is false"
        )
    return flambeau.instance_norm(
        input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, False
    )


@_dispatch_on("input", "weight", "bias")
def group_norm(input, num_groups: int, weight=None, bias=None, eps: float = 1e-5):
    """Normalise each sample over groups of channels (and the spatial dimensions).

    >>> import flambeau.nn.functional as F
    >>> x = flambeau.tensor([[1.0, 3.0, 5.0, 5.0]])
    >>> F.group_norm(x, num_groups=2)
    tensor([[-1.0000,  1.0000,  0.0000,  0.0000]])
    """
    _check_tensor("group_norm", "weight", 3, weight, optional=True)
    _check_tensor("group_norm", "bias", 4, bias, optional=True)
    if input.dim() < 2:
        raise RuntimeError(
            f"Expected at least 2 dimensions for input tensor but received {input.dim()}"
        )
    c = input.shape[1]
    if num_groups <= 0 or c % num_groups:
        raise RuntimeError(
            f"Expected number of channels in input to be divisible by num_groups, but got input "
            f"of shape {list(input.shape)} and num_groups={num_groups}"
        )
    _verify_batch_size([input.shape[0] * c // num_groups, num_groups, *input.shape[2:]])
    _check_channel_vector("group_norm", "weight", weight, c)
    _check_channel_vector("group_norm", "bias", bias, c)
    return flambeau.group_norm(input, num_groups, weight, bias, eps, False)


@_dispatch_on("input")
def local_response_norm(input, size: int, alpha: float = 1e-4, beta: float = 0.75,
                        k: float = 1.0):  # fmt: skip
    """x / (k + alpha * mean of x^2 over `size` neighbouring channels) ** beta.

    >>> import flambeau.nn.functional as F
    >>> x = flambeau.tensor([[[1.0], [2.0], [3.0]]])
    >>> F.local_response_norm(x, size=2, alpha=1.0, beta=1.0, k=1.0)
    tensor([[[0.6667],
             [0.5714],
             [0.4000]]])
    """
    if input.dim() < 3:
        raise ValueError(
            f"Expected 3D or higher dimensionality input (got {input.dim()} dimensions)"
        )
    if input.numel() == 0:
        return input
    c = input.shape[1]
    sq = input * input
    # The window of channel i covers i - size//2 .. i + (size-1)//2, zero-padded at the ends.
    lo, hi = size // 2, (size - 1) // 2
    pad_shape = list(input.shape)
    parts = []
    if lo:
        pad_shape[1] = lo
        parts.append(flambeau.zeros(pad_shape, dtype=input.dtype, device=input.device))
    parts.append(sq)
    if hi:
        pad_shape[1] = hi
        parts.append(flambeau.zeros(pad_shape, dtype=input.dtype, device=input.device))
    padded = flambeau.cat(parts, 1) if len(parts) > 1 else sq
    total = padded.narrow(1, 0, c)
    for j in range(1, size):
        total = total + padded.narrow(1, j, c)
    div = (total * (alpha / size) + k).pow(beta)
    return input / div


# ---- dropout --------------------------------------------------------------------------------


def _check_p(p) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


@_dispatch_on("input")
def dropout(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zero each element with probability p, scaling the rest by 1 / (1 - p), when training.

    >>> import flambeau.nn.functional as F
    >>> _ = flambeau.manual_seed(0)
    >>> F.dropout(flambeau.ones(6), p=0.5)
    tensor([2., 0., 0., 0., 0., 2.])
    >>> F.dropout(flambeau.ones(3), p=0.5, training=False)
    tensor([1., 1., 1.])
    """
    _check_tensor("dropout", "input", 1, input)
    _check_p(p)
    if inplace:
        return input.dropout_(p, training)
    return flambeau.dropout(input, p, training)


def _feature_dropout(input, p, training, inplace):
    if inplace:
        return input.feature_dropout_(p, training)
    return flambeau.feature_dropout(input, p, training)


def _unbatched_feature_dropout(input, p, training, inplace):
    # A single sample (C, *): dropped as a batch of one, so whole channels are zeroed.
    out = _feature_dropout(input.unsqueeze(0), p, training, False).squeeze(0)
    return input.copy_(out) if inplace else out


@_dispatch_on("input")
def dropout1d(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zero whole channels of (N, C, L) or (C, L) input with probability p.

    >>> import flambeau.nn.functional as F
    >>> _ = flambeau.manual_seed(0)
    >>> F.dropout1d(flambeau.ones(1, 4, 3), p=0.5)
    tensor([[[2., 2., 2.],
             [0., 0., 0.],
             [0., 0., 0.],
             [0., 0., 0.]]])
    """
    _check_p(p)
    if input.dim() not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {input.dim()}D input. Note that "
            "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial "
            "dimension, a channel dimension, and an optional batch dimension (i.e. 2D or 3D "
            "inputs)."
        )
    if input.dim() == 2:
        return _unbatched_feature_dropout(input, p, training, inplace)
    return _feature_dropout(input, p, training, inplace)


@_dispatch_on("input")
def dropout2d(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zero whole channels of (N, C, H, W) or (C, H, W) input with probability p.

    >>> import flambeau.nn.functional as F
    >>> _ = flambeau.manual_seed(0)
    >>> out = F.dropout2d(flambeau.ones(1, 4, 2, 2), p=0.5)
    >>> out.sum((2, 3))
    tensor([[8., 0., 0., 0.]])
    """
    _check_p(p)
    ndim = input.dim()
    if ndim not in (3, 4):
        warnings.warn(
            f"dropout2d: Received a {ndim}-D input to dropout2d, which is deprecated and will "
            "result in an error in a future release. To retain the behavior and silence this "
            "warning, please use dropout instead. Note that dropout2d exists to provide "
            "channel-wise dropout on inputs with 2 spatial dimensions, a channel dimension, and "
            "an optional batch dimension (i.e. 3D or 4D inputs).",
            stacklevel=3,
        )
    if ndim == 3:
        # As PyTorch: a 3-D input is read as (N, C, L) and dropped channel-wise, with a warning.
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
            "dropout behavior is desired - input is interpreted as shape (N, C, L), where C is "
            "the channel dim. This behavior will change in a future release to interpret the "
            "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
            "channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=3,
        )
    if ndim < 2:
        raise RuntimeError(
            f"dropout2d: feature dropout needs at least 2 dimensions (N, C, *), but got input "
            f"of shape {tuple(input.shape)}"
        )
    return _feature_dropout(input, p, training, inplace)


@_dispatch_on("input")
def dropout3d(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zero whole channels of (N, C, D, H, W) or (C, D, H, W) input with probability p.

    >>> import flambeau.nn.functional as F
    >>> _ = flambeau.manual_seed(0)
    >>> out = F.dropout3d(flambeau.ones(1, 4, 2, 2, 2), p=0.5)
    >>> out.sum((2, 3, 4))
    tensor([[16.,  0.,  0.,  0.]])
    """
    _check_p(p)
    ndim = input.dim()
    if ndim not in (4, 5):
        warnings.warn(
            f"dropout3d: Received a {ndim}-D input to dropout3d, which is deprecated and will "
            "result in an error in a future release. To retain the behavior and silence this "
            "warning, please use dropout instead. Note that dropout3d exists to provide "
            "channel-wise dropout on inputs with 3 spatial dimensions, a channel dimension, and "
            "an optional batch dimension (i.e. 4D or 5D inputs).",
            stacklevel=3,
        )
    if ndim == 4:
        return _unbatched_feature_dropout(input, p, training, inplace)
    if ndim < 2:
        raise RuntimeError(
            f"dropout3d: feature dropout needs at least 2 dimensions (N, C, *), but got input "
            f"of shape {tuple(input.shape)}"
        )
    return _feature_dropout(input, p, training, inplace)


@_dispatch_on("input")
def alpha_dropout(input, p: float = 0.5, training: bool = False, inplace: bool = False):
    """Dropout that keeps SELU's self-normalising mean and variance.

    >>> import flambeau.nn.functional as F
    >>> _ = flambeau.manual_seed(0)
    >>> F.alpha_dropout(flambeau.zeros(6), p=0.5, training=True)
    tensor([ 0.7792, -0.7792, -0.7792, -0.7792, -0.7792,  0.7792])
    """
    _check_tensor("alpha_dropout", "input", 1, input)
    _check_p(p)
    if inplace:
        return input.alpha_dropout_(p, training)
    return flambeau.alpha_dropout(input, p, training)


# ---- embeddings -----------------------------------------------------------------------------


def _padding_index(padding_idx, num_embeddings, default):
    if padding_idx is None:
        return default
    if padding_idx >= 0:
        if padding_idx >= num_embeddings:
            raise AssertionError(
                f"Padding_idx must be within num_embeddings (got padding_idx={padding_idx}, "
                f"num_embeddings={num_embeddings})"
            )
        return padding_idx
    if padding_idx < -num_embeddings:
        raise AssertionError(
            f"Padding_idx must be within num_embeddings (got padding_idx={padding_idx}, "
            f"num_embeddings={num_embeddings})"
        )
    return padding_idx + num_embeddings


def _renorm_rows(weight, indices, max_norm, norm_type):
    # Rows looked up are rescaled in place so their norm is at most max_norm; the update
    # is not recorded by autograd (as PyTorch's embedding_renorm_).
    with flambeau.no_grad():
        rows = flambeau.unique(indices.reshape(-1))
        if rows.numel() == 0:
            return
        picked = weight[rows]
        norms = picked.norm(norm_type, 1, keepdim=True)
        scale = flambeau.where(
            norms > max_norm, max_norm / (norms + 1e-7), flambeau.ones_like(norms)
        )
        weight[rows] = picked * scale


def _check_indices(op, input):
    if input.dtype not in (flambeau.int64, flambeau.int32):
        raise RuntimeError(
            f"{op}(): expected input indices of dtype Long or Int, but got {input.dtype}"
        )


@_dispatch_on("input", "weight")
def embedding(input, weight, padding_idx=None, max_norm=None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False):  # fmt: skip
    """Rows of weight picked by the indices in input (any shape).

    >>> import flambeau.nn.functional as F
    >>> weight = flambeau.tensor([[0.0, 0.0], [1.0, 1.0], [2.0, 4.0]])
    >>> F.embedding(flambeau.tensor([2, 0, 2]), weight)
    tensor([[2., 4.],
            [0., 0.],
            [2., 4.]])
    """
    _check_tensor("embedding", "input", 1, input)
    _check_tensor("embedding", "weight", 2, weight)
    if weight.dim() != 2:
        raise RuntimeError(
            f"embedding(): weight must be 2-D (num_embeddings, embedding_dim), but got shape "
            f"{tuple(weight.shape)}"
        )
    _check_indices("embedding", input)
    padding_idx = _padding_index(padding_idx, weight.shape[0], -1)
    if max_norm is not None:
        input = input.contiguous()
        _renorm_rows(weight, input, max_norm, norm_type)
    return flambeau.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)


_BAG_MODES = {"sum": 0, "mean": 1, "max": 2}


@_dispatch_on("input", "weight", "offsets", "per_sample_weights")
def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type: float = 2,
                  scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights=None, include_last_offset: bool = False,
                  padding_idx=None):  # fmt: skip
    """Sums, means or maxes of bags of embedding rows, without building the rows.

    >>> import flambeau.nn.functional as F
    >>> weight = flambeau.tensor([[0.0, 0.0], [1.0, 1.0], [2.0, 4.0]])
    >>> indices, offsets = flambeau.tensor([0, 1, 2, 2]), flambeau.tensor([0, 3])
    >>> F.embedding_bag(indices, weight, offsets, mode="sum")
    tensor([[3., 5.],
            [2., 4.]])
    """
    if weight.dim() != 2:
        raise ValueError(
            f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}"
        )
    _check_indices("embedding_bag", input)
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(
            f"embedding_bag: If per_sample_weights ({tuple(per_sample_weights.shape)}) is not "
            f"None, then it must have the same shape as the input ({tuple(input.shape)})"
        )
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError(
                "if input is 2D, then offsets has to be None, as input is treated is a "
                "mini-batch of fixed length sequences. However, found offsets of type "
                f"{type(offsets).__name__}"
            )
        offsets = flambeau.arange(
            0, input.numel(), input.shape[1], dtype=input.dtype, device=input.device
        )
        # These offsets hold only the bags' starts: one bag per row, whatever the caller's
        # include_last_offset (which would otherwise drop the last row, as a bag end).
        include_last_offset = False
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(
            f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}"
        )
    if mode not in _BAG_MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            "embedding_bag: per_sample_weights was not None. per_sample_weights is only "
            f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
            "GitHub."
        )
    padding_idx = _padding_index(padding_idx, weight.shape[0], None)
    if max_norm is not None:
        _renorm_rows(weight, input, max_norm, norm_type)
    out = flambeau.embedding_bag(
        weight, input, offsets, scale_grad_by_freq, _BAG_MODES[mode], sparse,
        per_sample_weights, include_last_offset, padding_idx,
    )  # fmt: skip
    return out[0]


# ---- losses with kernels of their own -------------------------------------------------------

_REDUCTION_ENUM = {"none": 0, "mean": 1, "sum": 2}


def _reduction_enum(reduction: str) -> int:
    """The core's int for a reduction string: none 0, mean 1, sum 2."""
    try:
        return _REDUCTION_ENUM[reduction]
    except (KeyError, TypeError):
        raise ValueError(f"{reduction} is not a valid value for reduction") from None


def _class_target_check(op, input, target):
    if input.dim() == 0:
        raise ValueError(f"{op}(): input tensor should be 1D or more, but got a 0-D input")
    if target.dtype.is_floating_point:
        return
    batch_in = input.shape[0] if input.dim() >= 2 else None
    batch_t = target.shape[0] if target.dim() >= 1 else None
    if batch_in is not None and batch_in != batch_t:
        raise ValueError(
            f"Expected input batch_size ({batch_in}) to match target batch_size "
            f"({batch_t if batch_t is not None else 'none: a 0-D target'})."
        )


@_dispatch_on("input", "target", "weight")
def nll_loss(input, target, weight=None, size_average=None, ignore_index: int = -100,
             reduce=None, reduction: str = "mean"):  # fmt: skip
    """-input[n, target[n]] (times weight[target[n]]), over classes in dim 1.

    >>> import flambeau.nn.functional as F
    >>> log_probs = flambeau.tensor([[-0.5, -1.0, -2.0], [-3.0, -0.1, -2.5]])
    >>> F.nll_loss(log_probs, flambeau.tensor([0, 1]))
    tensor(0.3000)
    """
    _check_tensor("nll_loss", "input", 1, input)
    _check_tensor("nll_loss", "target", 2, target)
    _check_tensor("nll_loss", "weight", 3, weight, optional=True)
    reduction = _reduction.resolve(size_average, reduce, reduction)
    _class_target_check("nll_loss", input, target)
    return flambeau.nll_loss(input, target, weight, _reduction_enum(reduction), ignore_index)


@_dispatch_on("log_probs", "targets", "input_lengths", "target_lengths")
def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank: int = 0,
             reduction: str = "mean", zero_infinity: bool = False):  # fmt: skip
    """Connectionist temporal classification loss of log_probs (T, N, C) or (T, C).

    targets are padded (N, S) or concatenated (sum(target_lengths)); the lengths are tuples
    of ints or integer tensors. mean divides each loss by its target length (at least 1)
    and averages over the batch; zero_infinity zeroes the losses (and gradients) of
    impossible alignments.

    >>> import flambeau.nn.functional as F
    >>> log_probs = flambeau.full((2, 1, 2), 0.5).log()
    >>> F.ctc_loss(log_probs, flambeau.tensor([[1]]), (2,), (1,), reduction="sum")
    tensor(0.2877)
    """
    _check_tensor("ctc_loss", "log_probs", 1, log_probs)
    _check_tensor("ctc_loss", "targets", 2, targets)
    for name, v in (("input_lengths", input_lengths), ("target_lengths", target_lengths)):
        if not isinstance(v, (list, tuple, flambeau.Tensor)):
            raise TypeError(
                f"ctc_loss(): {name} must be a tuple of ints or a Tensor, not {type(v).__name__}"
            )
    return flambeau.ctc_loss(
        log_probs, targets, input_lengths, target_lengths, blank, _reduction_enum(reduction),
        zero_infinity,
    )  # fmt: skip


@_dispatch_on("input", "target", "weight")
def cross_entropy(input, target, weight=None, size_average=None, ignore_index: int = -100,
                  reduce=None, reduction: str = "mean",
                  label_smoothing: float = 0.0):  # fmt: skip
    """log_softmax over dim 1 then nll_loss (class indices), or soft-label cross entropy.

    >>> import flambeau.nn.functional as F
    >>> logits = flambeau.tensor([[2.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    >>> F.cross_entropy(logits, flambeau.tensor([0, 2]), reduction="none")
    tensor([0.2395, 1.0986])
    """
    _check_tensor("cross_entropy", "input", 1, input)
    _check_tensor("cross_entropy", "target", 2, target)
    _check_tensor("cross_entropy", "weight", 3, weight, optional=True)
    reduction = _reduction.resolve(size_average, reduce, reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    if target.dtype.is_floating_point and tuple(target.shape) != tuple(input.shape):
        raise RuntimeError(
            f"cross_entropy(): class-probability targets must have the input's shape: input "
            f"{tuple(input.shape)}, target {tuple(target.shape)}"
        )
    _class_target_check("cross_entropy", input, target)
    return flambeau.cross_entropy_loss(
        input, target, weight, _reduction_enum(reduction), ignore_index, label_smoothing
    )


@_dispatch_on("input", "target", "weight")
def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction: str = "mean"):  # fmt: skip
    """-(target * log(input) + (1 - target) * log(1 - input)), input probabilities.

    >>> import flambeau.nn.functional as F
    >>> probs = flambeau.tensor([0.9, 0.2, 0.5])
    >>> F.binary_cross_entropy(probs, flambeau.tensor([1.0, 0.0, 1.0]), reduction="none")
    tensor([0.1054, 0.2231, 0.6931])
    """
    reduction = _reduction.resolve(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}) is deprecated. Please ensure they have the same size."
        )
    if weight is not None:
        weight = weight.expand(flambeau.broadcast_shapes(target.shape, weight.shape))
    return flambeau.binary_cross_entropy(input, target, weight, _reduction_enum(reduction))


@_dispatch_on("input", "target", "weight", "pos_weight")
def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None,
                                     reduce=None, reduction: str = "mean",
                                     pos_weight=None):  # fmt: skip
    """binary_cross_entropy(sigmoid(input), target), computed stably; pos_weight scales
    the positive term.

    >>> import flambeau.nn.functional as F
    >>> logits, target = flambeau.tensor([2.0, -1.0, 0.0]), flambeau.tensor([1.0, 0.0, 1.0])
    >>> F.binary_cross_entropy_with_logits(logits, target, reduction="none")
    tensor([0.1269, 0.3133, 0.6931])
    """
    _check_tensor("binary_cross_entropy_with_logits", "weight", 3, weight, optional=True)
    _check_tensor("binary_cross_entropy_with_logits", "pos_weight", 7, pos_weight, optional=True)
    reduction = _reduction.resolve(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(
            f"Target size ({target.shape}) must be the same as input size ({input.shape})"
        )
    return flambeau.binary_cross_entropy_with_logits(
        input, target, weight, pos_weight, _reduction_enum(reduction)
    )


@_dispatch_on("input", "target")
def kl_div(input, target, size_average=None, reduce=None, reduction: str = "mean",
           log_target: bool = False):  # fmt: skip
    """target * (log(target) - input), input given as log-probabilities.

    >>> import flambeau.nn.functional as F
    >>> log_q = flambeau.tensor([[0.25, 0.75]]).log()
    >>> F.kl_div(log_q, flambeau.tensor([[0.5, 0.5]]), reduction="batchmean")
    tensor(0.1438)
    """
    _check_tensor("kl_div", "input", 1, input)
    _check_tensor("kl_div", "target", 2, target)
    if size_average is not None or reduce is not None:
        reduction = _reduction.legacy_get_string(size_average, reduce)
    elif reduction == "mean":
        warnings.warn(
            "reduction: 'mean' divides the total loss by both the batch size and the support "
            "size.'batchmean' divides only by the batch size, and aligns with the KL div math "
            "definition.'mean' will be changed to behave the same as 'batchmean' in the next "
            "major release.",
            stacklevel=3,
        )
    if reduction == "batchmean":
        total = flambeau.kl_div(input, target, 2, log_target=log_target)
        return total / input.shape[0] if input.dim() != 0 else total
    return flambeau.kl_div(input, target, _reduction_enum(reduction), log_target=log_target)


@_dispatch_on("input", "target")
def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction: str = "mean",
                   beta: float = 1.0):  # fmt: skip
    """0.5 (x - y)^2 / beta where |x - y| < beta, else |x - y| - 0.5 beta.

    >>> import flambeau.nn.functional as F
    >>> x, y = flambeau.tensor([0.5, 3.0]), flambeau.tensor([0.0, 0.0])
    >>> F.smooth_l1_loss(x, y, reduction="none", beta=1.0)
    tensor([0.1250, 2.5000])
    """
    _warn_size(input, target)
    reduction = _reduction.resolve(size_average, reduce, reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    if beta == 0.0:
        return flambeau.l1_loss(input, target, _reduction_enum(reduction))
    return flambeau.smooth_l1_loss(input, target, _reduction_enum(reduction), beta)


@_dispatch_on("input", "target", "weight")
def huber_loss(input, target, reduction: str = "mean", delta: float = 1.0, weight=None):
    """0.5 (x - y)^2 where |x - y| < delta, else delta (|x - y| - 0.5 delta).

    >>> import flambeau.nn.functional as F
    >>> x, y = flambeau.tensor([0.5, 3.0]), flambeau.tensor([0.0, 0.0])
    >>> F.huber_loss(x, y, reduction="none", delta=2.0)
    tensor([0.1250, 4.0000])
    """
    _warn_size(input, target)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    if weight is None:
        return flambeau.huber_loss(input, target, _reduction_enum(reduction), delta)
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")
    _reduction_enum(reduction)
    weighted = flambeau.huber_loss(input, target, 0, delta) * weight
    return weighted.mean() if reduction == "mean" else _reduce(weighted, reduction)


@_dispatch_on("input", "target", "weight")
def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction: str = "mean"):  # fmt: skip
    """-mean over classes of y log sigmoid(x) + (1 - y) log sigmoid(-x), per sample.

    >>> import flambeau.nn.functional as F
    >>> x = flambeau.tensor([[0.0, 2.0, -1.0]])
    >>> F.multilabel_soft_margin_loss(x, flambeau.tensor([[1.0, 1.0, 0.0]]))
    tensor(0.3778)
    """
    _check_tensor("multilabel_soft_margin_loss", "input", 1, input)
    reduction = _reduction.resolve(size_average, reduce, reduction)
    _reduction_enum(reduction)
    if input.dim() == 0:
        raise ValueError("multilabel_soft_margin_loss(): input must have at least 1 dimension")
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(class_dim) / input.shape[class_dim]
    return _reduce(loss, reduction)


# Convolution, pooling, padding, resampling and attention live in their own files.
from ._functional_conv import *  # noqa: E402,F401,F403
from ._functional_conv import __all__ as _conv_all  # noqa: E402
from ._functional_rnn import *  # noqa: E402,F401,F403
from ._functional_rnn import __all__ as _rnn_all  # noqa: E402

__all__ += [*_conv_all, *_rnn_all]

# Grid sampling, the torch-function protocol and the rest of the public functions.
from ._functional_grid import *  # noqa: E402,F401,F403
from ._functional_grid import __all__ as _grid_all  # noqa: E402
from ._functional_misc import *  # noqa: E402,F401,F403
from ._functional_misc import __all__ as _misc_all  # noqa: E402
from ._functional_products import *  # noqa: E402,F401,F403
from ._functional_products import __all__ as _products_all  # noqa: E402
from ._functional_protocol import *  # noqa: E402,F401,F403
from ._functional_protocol import __all__ as _protocol_all  # noqa: E402

__all__ += [*_grid_all, *_misc_all, *_products_all, *_protocol_all]

# ---- issue 13, nn modules helper: functions behind the added layers -------------------------
from ._functional_losses import *  # noqa: E402,F401,F403
from ._functional_losses import __all__ as _losses_all  # noqa: E402
from ._functional_shuffle_norm import *  # noqa: E402,F401,F403
from ._functional_shuffle_norm import __all__ as _shuffle_norm_all  # noqa: E402
from ._functional_stochastic import *  # noqa: E402,F401,F403
from ._functional_stochastic import __all__ as _stochastic_all  # noqa: E402

__all__ += [*_losses_all, *_shuffle_norm_all, *_stochastic_all]

# torch.nn.functional.grad is torch.nn.grad; imported last, as it needs nn.modules.
from . import grad  # noqa: E402,F401
