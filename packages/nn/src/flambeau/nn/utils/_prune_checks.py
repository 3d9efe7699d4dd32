"""The argument checks and channel norms behind ``flambeau.nn.utils.prune``.

The names are PyTorch's (``torch.nn.utils.prune._validate_pruning_amount`` and
friends), which ported code sometimes reaches for; ``prune`` re-exports them.
"""

from __future__ import annotations

import numbers

import flambeau


def _validate_pruning_amount_init(amount) -> None:
    """Checks `amount` when a pruning method is built, before the tensor is known: a
    non-negative int (a count) or a float in [0, 1] (a fraction)."""
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if isinstance(amount, numbers.Integral):
        valid = amount >= 0
    else:
        valid = 0.0 <= float(amount) <= 1.0
    if not valid:
        raise ValueError(
            f"amount={amount} should either be a float in the range [0, 1] "
            "or a non-negative integer"
        )


def _validate_pruning_amount(amount, tensor_size: int) -> None:
    """Checks that a count of units to prune does not exceed the units there are."""
    if isinstance(amount, numbers.Integral) and amount > tensor_size:
        raise ValueError(
            f"amount={amount} should be smaller than the number of parameters to "
            f"prune={tensor_size}"
        )


def _validate_structured_pruning(t) -> None:
    """Channels only exist in a tensor of two dimensions or more."""
    shape = t.shape
    if len(shape) <= 1:
        raise ValueError(
            "Structured pruning can only be applied to multidimensional tensors. Found "
            f"tensor of shape {shape} with {len(shape)} dims"
        )


def _validate_pruning_dim(t, dim: int) -> None:
    """The channel dimension must exist (negative dims are checked later, as torch does)."""
    if dim >= t.dim():
        raise IndexError(f"Invalid index {dim} for tensor of size {t.shape}")


def _compute_nparams_toprune(amount, tensor_size: int) -> int:
    """The number of units to prune: `amount` itself if an int, else the rounded
    fraction of `tensor_size`."""
    if isinstance(amount, numbers.Integral):
        return amount
    return round(amount * tensor_size)


def _compute_norm(t, n, dim: int):
    """The L`n` norm of every channel along `dim`, taken over all the other dimensions."""
    channel_dim = dim + t.dim() if dim < 0 else dim
    others = [d for d in range(t.dim()) if d != channel_dim]
    return flambeau.norm(t, p=n, dim=others)
