"""``torch._dynamo.external_utils``'s names that libraries call."""

from __future__ import annotations

import functools

__all__ = ["is_compiling", "wrap_numpy"]


def is_compiling() -> bool:
    """False: flambeau never traces or compiles (``torch.compiler.is_compiling``).

    >>> from flambeau._dynamo.external_utils import is_compiling
    >>> is_compiling()
    False
    """
    return False


def wrap_numpy(f):
    """``f``, a function of NumPy arrays, as a function of tensors: tensor arguments go
    in as arrays (sharing memory) and array results come back as tensors. As in PyTorch
    without ``torch.compile``, the NumPy code runs as NumPy (on the CPU, without
    gradients).

    >>> import flambeau
    >>> from flambeau._dynamo.external_utils import wrap_numpy
    >>> @wrap_numpy
    ... def total(a):
    ...     return (a * a).sum(keepdims=True)
    >>> total(flambeau.tensor([1.0, 2.0]))
    tensor([5.])
    """
    try:
        import numpy as np
    except ModuleNotFoundError:
        return f

    import flambeau
    from flambeau.utils import _pytree as pytree

    @functools.wraps(f)
    def wrap(*args, **kwargs):
        args, kwargs = pytree.tree_map_only(flambeau.Tensor, lambda x: x.numpy(), (args, kwargs))
        out = f(*args, **kwargs)
        return pytree.tree_map_only(np.ndarray, flambeau.as_tensor, out)

    return wrap
