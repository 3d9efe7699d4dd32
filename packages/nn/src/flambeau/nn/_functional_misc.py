"""F.gumbel_softmax, composed of core ops; F.pdist, F.native_channel_shuffle and F.one_hot
are the core's functions, re-exported (PyTorch's torch.pdist, torch.native_channel_shuffle;
one_hot has no top-level name, but the distributions need it without flambeau-nn)."""

from __future__ import annotations

import warnings

import flambeau
from flambeau import native_channel_shuffle, pdist  # noqa: F401 - torch's functions, re-exported
from flambeau._nn_ops import one_hot  # noqa: F401
from flambeau.overrides import _dispatch_on

__all__ = ["one_hot", "gumbel_softmax", "pdist", "native_channel_shuffle"]


@_dispatch_on("logits")
def gumbel_softmax(logits, tau: float = 1, hard: bool = False, eps: float = 1e-10,
                   dim: int = -1):  # fmt: skip
    """A sample of the Gumbel-softmax (concrete) distribution over `dim`.

    softmax((logits + g) / tau) with g ~ Gumbel(0, 1). hard=True returns the one-hot of its
    argmax whose gradient is the soft sample's (straight-through estimator).

    >>> import flambeau.nn.functional as F
    >>> _ = flambeau.manual_seed(0)
    >>> logits = flambeau.tensor([[1.0, 2.0, 3.0]])
    >>> F.gumbel_softmax(logits, tau=0.5, hard=True)
    tensor([[0., 0., 1.]])
    """
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=3)
    # -log(E) with E ~ Exponential(1) is Gumbel(0, 1).
    gumbels = -flambeau.empty_like(logits).exponential_().log()
    soft = flambeau.softmax((logits + gumbels) / tau, dim)
    if not hard:
        return soft
    index = soft.argmax(dim, keepdim=True)
    one_hot_sample = flambeau.zeros_like(logits).scatter_(dim, index, 1.0)
    return one_hot_sample - soft.detach() + soft
