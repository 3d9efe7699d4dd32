"""The legacy size_average/reduce arguments of the losses, mapped to `reduction`."""

from __future__ import annotations

import warnings

VALID = ("none", "mean", "sum")


def apply(loss, reduction: str):
    """loss itself ('none'), its mean or its sum."""
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(f"{reduction} is not a valid value for reduction")


def legacy_get_string(size_average, reduce, emit_warning: bool = True) -> str:
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if size_average and reduce:
        ret = "mean"
    elif reduce:
        ret = "sum"
    else:
        ret = "none"
    if emit_warning:
        warnings.warn(
            f"size_average and reduce args will be deprecated, please use reduction='{ret}' "
            "instead.",
            stacklevel=3,
        )
    return ret


def resolve(size_average, reduce, reduction: str) -> str:
    """The reduction to apply; the legacy arguments win when given (with a warning)."""
    if size_average is not None or reduce is not None:
        return legacy_get_string(size_average, reduce)
    if reduction == "elementwise_mean":
        warnings.warn(
            "reduction='elementwise_mean' is deprecated, please use reduction='mean' instead.",
            stacklevel=3,
        )
        return "mean"
    return reduction
