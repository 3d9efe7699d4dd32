"""F.one_hot, F.gumbel_softmax, F.pdist and F.native_channel_shuffle, composed of core ops."""

from __future__ import annotations

import operator
import warnings

import numpy as np

import flambeau

from ._functional_conv import _check_tensor

__all__ = ["one_hot", "gumbel_softmax", "pdist", "native_channel_shuffle"]


def _int_argument(fn: str, name: str, position: int, value) -> int:
    """PyTorch's argument-parser TypeError where an int is expected (bool is not an int)."""
    try:
        if isinstance(value, bool):
            raise TypeError
        return operator.index(value)
    except TypeError:
        raise TypeError(
            f"{fn}(): argument '{name}' (position {position}) must be int, not "
            f"{type(value).__name__}"
        ) from None


def one_hot(tensor, num_classes: int = -1):
    """(*) int64 class indices -> (*, num_classes) int64 with a 1 at each index.

    num_classes=-1 takes one more than the largest index.
    """
    _check_tensor("one_hot", "input", 1, tensor)
    num_classes = _int_argument("one_hot", "num_classes", 2, num_classes)
    if tensor.dtype != flambeau.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    shape = tuple(tensor.shape)
    if tensor.numel() == 0:
        if num_classes <= 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        return flambeau.zeros((*shape, num_classes), dtype=flambeau.int64)
    if int(tensor.min()) < 0:
        raise RuntimeError("Class values must be non-negative.")
    largest = int(tensor.max())
    if num_classes == -1:
        num_classes = largest + 1
    elif largest >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    out = flambeau.zeros((*shape, num_classes), dtype=flambeau.int64)
    return out.scatter_(-1, tensor.unsqueeze(-1), 1)


def gumbel_softmax(logits, tau: float = 1, hard: bool = False, eps: float = 1e-10,
                   dim: int = -1):  # fmt: skip
    """A sample of the Gumbel-softmax (concrete) distribution over `dim`.

    softmax((logits + g) / tau) with g ~ Gumbel(0, 1). hard=True returns the one-hot of its
    argmax whose gradient is the soft sample's (straight-through estimator).
    """
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    # -log(E) with E ~ Exponential(1) is Gumbel(0, 1).
    gumbels = -flambeau.empty_like(logits).exponential_().log()
    soft = flambeau.softmax((logits + gumbels) / tau, dim)
    if not hard:
        return soft
    index = soft.argmax(dim, keepdim=True)
    one_hot_sample = flambeau.zeros_like(logits).scatter_(dim, index, 1.0)
    return one_hot_sample - soft.detach() + soft


def _p_norm_rows(diff, p: float):
    """The p-norm of each row of diff, with PyTorch's zero gradient at zero entries/norms."""
    magnitude = diff.abs()
    if p == 0:
        return magnitude.sign().sum(1)  # counts non-zeros; sign's gradient is zero
    if p == float("inf"):
        return magnitude.amax(1) if diff.shape[1] else magnitude.sum(1)
    if p == 1:
        return magnitude.sum(1)
    # Guard the powers so that zero entries and zero distances give gradient 0, not NaN.
    nonzero = magnitude > 0
    one = flambeau.ones((), dtype=diff.dtype)
    zero = flambeau.zeros((), dtype=diff.dtype)
    powered = flambeau.where(nonzero, flambeau.where(nonzero, magnitude, one) ** p, zero)
    total = powered.sum(1)
    positive = total > 0
    return flambeau.where(positive, flambeau.where(positive, total, one) ** (1.0 / p), zero)


def pdist(input, p: float = 2):
    """The p-norm distance between every pair of rows of input (N, M): the N(N-1)/2 entries
    above the diagonal of the distance matrix, row by row."""
    _check_tensor("pdist", "input", 1, input)
    if isinstance(p, bool) or not isinstance(p, (int, float)):
        raise TypeError(f"pdist(): argument 'p' (position 2) must be float, not {type(p).__name__}")
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if not input.is_floating_point():
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    rows, cols = np.triu_indices(input.shape[0], k=1)
    first = flambeau.from_numpy(rows.astype(np.int64))
    second = flambeau.from_numpy(cols.astype(np.int64))
    diff = input.index_select(0, first) - input.index_select(0, second)
    return _p_norm_rows(diff, float(p))


def native_channel_shuffle(input, groups: int):
    """(N, C, *) -> (N, C, *) with channels regrouped: channel g*(C/groups)+k moves to
    k*groups+g (ShuffleNet's channel shuffle)."""
    _check_tensor("native_channel_shuffle", "input", 1, input)
    groups = _int_argument("native_channel_shuffle", "groups", 2, groups)
    if input.dim() <= 2:
        raise RuntimeError(
            "channel_shuffle expects input with > 2 dims, but got input with sizes "
            f"{list(input.shape)}"
        )
    if groups <= 0:
        raise RuntimeError(
            f"Number of groups to divide channels in must be positive. Value of groups:{groups}"
        )
    channels = input.shape[1]
    if channels % groups != 0:
        raise RuntimeError(
            f"Number of channels must be divisible by groups. Got {channels} channels and "
            f"{groups} groups."
        )
    n, rest = input.shape[0], tuple(input.shape[2:])
    grouped = input.reshape(n, groups, channels // groups, *rest)
    return grouped.transpose(1, 2).reshape(n, channels, *rest)
