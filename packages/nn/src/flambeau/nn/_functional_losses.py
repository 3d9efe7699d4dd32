"""F.multi_margin_loss and F.multilabel_margin_loss.

Both compose core operators (gather, relu, masks), so autograd differentiates them through
the operators' formulas; a hinge at exactly zero has gradient zero, as in PyTorch's kernels.
"""

from __future__ import annotations

import flambeau
from flambeau._arg_checks import check_tensor as _check_tensor
from flambeau._arg_checks import dtype_name
from flambeau._autocast_policy import autocast_policy
from flambeau.overrides import _dispatch_on

from . import _reduction

__all__ = ["multi_margin_loss", "multilabel_margin_loss"]


_reduce = _reduction.apply


def _check_reduction(reduction: str) -> None:
    if reduction not in _reduction.VALID:
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _as_matrix(op: str, input):
    """(N, C) view of a (C) or (N, C) input; PyTorch's error for any other shape."""
    if input.dim() > 2 or (input.dim() == 2 and input.shape[1] == 0):
        raise RuntimeError(
            "Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
            f"{list(input.shape)}"
        )
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise NotImplementedError(f"{op}: not implemented for dtype {dtype_name(input.dtype)}")
    return input.reshape(1, -1) if input.dim() < 2 else input


def _check_long_target(target) -> None:
    if target.dtype != flambeau.int64:
        raise RuntimeError(f"expected scalar type Long but found {dtype_name(target.dtype)}")


@_dispatch_on("input", "target", "weight")
@autocast_policy("fp32")
def multi_margin_loss(input, target, p: int = 1, margin: float = 1.0, weight=None,
                      size_average=None, reduce=None, reduction: str = "mean"):  # fmt: skip
    """Multi-class hinge loss: sum over i != y of w[y] * max(0, margin - x[y] + x[i])^p / C.

    >>> import flambeau.nn.functional as F
    >>> x = flambeau.tensor([[0.1, 0.2, 0.4, 0.8]])
    >>> F.multi_margin_loss(x, flambeau.tensor([3]))
    tensor(0.3250)
    """
    _check_tensor("multi_margin_loss", "input", 1, input)
    _check_tensor("multi_margin_loss", "target", 2, target)
    _check_tensor("multi_margin_loss", "weight", 5, weight, optional=True)
    reduction = _reduction.resolve(size_average, reduce, reduction)
    _check_reduction(reduction)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    x = _as_matrix("multi_margin_loss", input)
    n, c = x.shape
    if input.dim() == 2:
        if target.dim() != 1 or target.shape[0] != n:
            raise RuntimeError(
                "multi_margin_loss: target tensor should be 1-D with size equal to the number "
                f"of input samples (batch size). Expected target size [{n}], but got "
                f"{list(target.shape)}. Input has shape {list(input.shape)}."
            )
    elif target.dim() > 1 or target.numel() != 1:
        raise RuntimeError(f"inconsistent target size, expected 1 but got {list(target.shape)}")
    _check_long_target(target)
    if weight is not None:
        if weight.numel() != c:
            raise RuntimeError(
                f"inconsistent weight size, expected {c} but got {list(weight.shape)}"
            )
        if weight.dtype != input.dtype:
            raise RuntimeError(
                f"expected scalar type {dtype_name(input.dtype)} but found "
                f"{dtype_name(weight.dtype)}"
            )
    t = target.reshape(-1)
    if t.numel() and bool(((t < 0) | (t >= c)).any()):
        raise RuntimeError("target out of range")
    x_target = x.gather(1, t.unsqueeze(1))
    hinge = flambeau.relu(x - x_target + margin)
    if p == 2:
        hinge = hinge * hinge
    if weight is not None:
        hinge = hinge * weight.gather(0, t).unsqueeze(1)
    is_target = flambeau.arange(c, device=x.device).unsqueeze(0) == t.unsqueeze(1)
    loss = hinge.masked_fill(is_target, 0).sum(1) / c
    if input.dim() < 2:
        loss = loss.reshape(target.shape)
    return _reduce(loss, reduction)


@_dispatch_on("input", "target")
@autocast_policy("fp32")
def multilabel_margin_loss(input, target, size_average=None, reduce=None,
                           reduction: str = "mean"):  # fmt: skip
    """Multi-label hinge loss over each target class y_j and each non-target class i.

    ``target`` holds class indices, read up to the first -1: the loss of a sample is
    sum over j, i of max(0, 1 - (x[y_j] - x[i])) / C.

    >>> import flambeau.nn.functional as F
    >>> x = flambeau.tensor([[0.1, 0.2, 0.4, 0.8]])
    >>> F.multilabel_margin_loss(x, flambeau.tensor([[3, 0, -1, 1]]))
    tensor(0.8500)
    """
    _check_tensor("multilabel_margin_loss", "input", 1, input)
    _check_tensor("multilabel_margin_loss", "target", 2, target)
    reduction = _reduction.resolve(size_average, reduce, reduction)
    _check_reduction(reduction)
    x = _as_matrix("multilabel_margin_loss", input)
    n, c = x.shape
    if tuple(target.shape) != tuple(input.shape) and not (
        input.dim() < 2 and target.numel() == c and target.dim() < 2
    ):
        raise RuntimeError(
            f"inconsistent target size: {list(target.shape)} for input of size: {list(input.shape)}"
        )
    _check_long_target(target)
    t = target.reshape(n, c)
    if t.numel() and bool(((t < -1) | (t >= c)).any()):
        raise RuntimeError("argument #2 'target' is out of range")
    # The targets of a sample are the entries before its first -1.
    valid = flambeau.cumprod((t != -1).to(flambeau.int64), 1).to(flambeau.bool)
    width = int(valid.sum(1).max()) if n else 0
    loss = x.sum(1) * 0
    if width:
        t, valid = t[:, :width], valid[:, :width]
        safe_t = t.masked_fill(~valid, 0)
        counts = flambeau.zeros((n, c), dtype=x.dtype, device=x.device)
        counts = counts.scatter_add(1, safe_t, valid.to(x.dtype))
        is_target = counts > 0
        x_target = x.gather(1, safe_t)
        hinge = flambeau.relu(1 - x_target.unsqueeze(2) + x.unsqueeze(1))
        keep = valid.unsqueeze(2) & ~is_target.unsqueeze(1)
        loss = hinge.masked_fill(~keep, 0).sum((1, 2)) / c
    if input.dim() < 2:
        loss = loss.reshape(())
    return _reduce(loss, reduction)
