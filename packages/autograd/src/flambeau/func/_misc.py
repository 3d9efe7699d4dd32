"""flambeau.func.functionalize and debug_unwrap: PyTorch's program-transformation and
debugging helpers, which flambeau's eager transforms need no work for."""

from __future__ import annotations

import functools


def functionalize(func, *, remove="mutations"):
    """A function computing what ``func`` computes, with PyTorch's functionalize's
    signature.

    PyTorch's functionalize rewrites the operators ``func`` runs so that in-place and
    ``out=`` operations (and, with ``remove='mutations_and_views'``, views) become
    out-of-place ones, for tracing and compilers; what a caller observes, outputs and
    the mutations of its inputs, stays the same. flambeau has no functionalization pass
    and no tracer, so the returned function simply calls ``func``: the results are the
    ones functionalize gives. ``remove`` is checked as PyTorch checks it.

    >>> def f(x):
    ...     y = x.clone()
    ...     y.add_(1)
    ...     return y
    >>> flambeau.func.functionalize(f)(flambeau.tensor([1.0, 2.0]))
    tensor([2., 3.])
    """
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(
            f"functionalize(f, remove='mutations'): received invalid argument for "
            f"remove={remove}. Valid options are:\n"
            "     remove='mutations': all inplace and out= operators will be removed from the "
            "program, and replaced with their out-of-place equivalents.\n"
            "     remove='mutations_and_views': In addition to the above, all aten view "
            "operators will be removed from the program, and replaced with their view_copy "
            "equivalents."
        )

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        return func(*args, **kwargs)

    return wrapped


def debug_unwrap(tensor, *, recurse=True):
    """The tensor underneath flambeau.func's wrappers: ``tensor`` itself.

    PyTorch's transforms hand the function wrapper tensors (BatchedTensor,
    GradTrackingTensor), which this unwraps for debugging. flambeau's transforms hand it
    ordinary tensors (vmap's per-element slices, grad's graph inputs), so there is
    nothing to unwrap.

    >>> x = flambeau.tensor([1.0, 2.0])
    >>> flambeau.func.debug_unwrap(x) is x
    True
    """
    return tensor
