"""CosineSimilarity and PairwiseDistance."""

from __future__ import annotations

from .. import functional as F
from .module import Module


class CosineSimilarity(Module):
    """Cosine of the angle between x1 and x2 along `dim`.

    >>> import flambeau.nn as nn
    >>> cos = nn.CosineSimilarity(dim=1)
    >>> x1 = flambeau.tensor([[1.0, 0.0], [1.0, 1.0]])
    >>> cos(x1, flambeau.tensor([[0.0, 1.0], [2.0, 2.0]]))
    tensor([0.0000, 1.0000])
    """

    def __init__(self, dim: int = 1, eps: float = 1e-8):
        super().__init__()
        self.dim = dim
        self.eps = eps

    def forward(self, x1, x2):
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """p-norm of x1 - x2 (+ eps) along the last dimension.

    >>> import flambeau.nn as nn
    >>> dist = nn.PairwiseDistance(p=2.0)
    >>> x1 = flambeau.tensor([[0.0, 0.0], [1.0, 1.0]])
    >>> dist(x1, flambeau.tensor([[3.0, 4.0], [1.0, 4.0]]))
    tensor([5.0000, 3.0000])
    """

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False):
        super().__init__()
        self.norm = p
        self.eps = eps
        self.keepdim = keepdim

    def forward(self, x1, x2):
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)
