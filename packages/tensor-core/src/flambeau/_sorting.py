"""unique and unique_consecutive: like PyTorch's, they return the unique values
alone, or a tuple with the inverse indices and/or counts when asked for. The
core operators (_unique2, unique_dim, unique_consecutive) always return all three."""

from __future__ import annotations

from flambeau import _C
from flambeau._functional import with_table_example
from flambeau.overrides import _dispatch_on


def _pick(results, return_inverse, return_counts):
    out, inverse, counts = results
    if not return_inverse and not return_counts:
        return out
    picked = (out,) + ((inverse,) if return_inverse else ()) + ((counts,) if return_counts else ())
    return picked


@_dispatch_on("input")
def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """Unique elements of input (or unique slices along dim), in ascending order.

    >>> x = flambeau.tensor([3, 1, 3, 2, 1])
    >>> flambeau.unique(x)
    tensor([1, 2, 3])
    >>> flambeau.unique(x, return_inverse=True, return_counts=True)
    (tensor([1, 2, 3]), tensor([2, 0, 2, 1, 0]), tensor([2, 1, 2]))
    """
    if dim is None:
        results = _C._unique2(input, sorted, return_inverse, return_counts)
    else:
        results = _C.unique_dim(input, dim, sorted, return_inverse, return_counts)
    return _pick(results, return_inverse, return_counts)


@_dispatch_on("input")
@with_table_example(_C.unique_consecutive)
def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """Collapses each run of equal consecutive elements (or slices along dim) to one."""
    results = _C.unique_consecutive(input, return_inverse, return_counts, dim)
    return _pick(results, return_inverse, return_counts)


def install():
    _C.Tensor.unique = unique
    _C.Tensor.unique_consecutive = unique_consecutive
