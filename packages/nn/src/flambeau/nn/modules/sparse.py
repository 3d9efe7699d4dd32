"""Embedding and EmbeddingBag: lookup tables of learnt rows."""

from __future__ import annotations

import flambeau

from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module


def _normalise_padding_idx(name, padding_idx, num_embeddings):
    if padding_idx is None:
        return None
    if not -num_embeddings <= padding_idx < num_embeddings:
        raise AssertionError(
            f"{name}: padding_idx must be within num_embeddings (got padding_idx={padding_idx}, "
            f"num_embeddings={num_embeddings})"
        )
    return padding_idx if padding_idx >= 0 else padding_idx + num_embeddings


def _make_weight(name, num_embeddings, embedding_dim, _weight, _freeze, device, dtype):
    if _weight is None:
        shape = (num_embeddings, embedding_dim)
        return Parameter(flambeau.empty(shape, dtype=dtype, device=device), not _freeze), True
    if list(_weight.shape) != [num_embeddings, embedding_dim]:
        raise AssertionError(
            f"{name}: shape of weight {tuple(_weight.shape)} does not match num_embeddings and "
            f"embedding_dim ({num_embeddings}, {embedding_dim})"
        )
    return Parameter(_weight, requires_grad=not _freeze), False


def _check_pretrained(embeddings):
    if embeddings.dim() != 2:
        raise AssertionError(
            f"Embeddings parameter is expected to be 2-dimensional, but got shape "
            f"{tuple(embeddings.shape)}"
        )
    return embeddings.shape


class Embedding(Module):
    """A table of num_embeddings rows of size embedding_dim, looked up by index.

    >>> import flambeau.nn as nn
    >>> _ = flambeau.manual_seed(0)
    >>> emb = nn.Embedding(10, 3)
    >>> emb(flambeau.tensor([[1, 2, 4, 5], [4, 3, 2, 9]])).shape
    flambeau.Size([2, 4, 3])
    >>> nn.Embedding(5, 2, padding_idx=0)(flambeau.tensor([0]))
    tensor([[0., 0.]], grad_fn=<...>)
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx=None, max_norm=None,
                 norm_type: float = 2.0, scale_grad_by_freq: bool = False, sparse: bool = False,
                 _weight=None, _freeze: bool = False, device=None, dtype=None):  # fmt: skip
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.padding_idx = _normalise_padding_idx("Embedding", padding_idx, num_embeddings)
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.sparse = sparse
        self.weight, fresh = _make_weight(
            "Embedding", num_embeddings, embedding_dim, _weight, _freeze, device, dtype
        )
        if fresh:
            self.reset_parameters()

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self) -> None:
        if self.padding_idx is not None:
            with flambeau.no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, input):
        return F.embedding(
            input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
            self.scale_grad_by_freq, self.sparse,
        )  # fmt: skip

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        if self.sparse is not False:
            s += ", sparse=True"
        return s

    @classmethod
    def from_pretrained(cls, embeddings, freeze: bool = True, padding_idx=None, max_norm=None,
                        norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                        sparse: bool = False):  # fmt: skip
        """An Embedding whose weight is `embeddings` (frozen unless freeze=False)."""
        rows, cols = _check_pretrained(embeddings)
        return cls(
            num_embeddings=rows, embedding_dim=cols, _weight=embeddings, _freeze=freeze,
            padding_idx=padding_idx, max_norm=max_norm, norm_type=norm_type,
            scale_grad_by_freq=scale_grad_by_freq, sparse=sparse,
        )  # fmt: skip


class EmbeddingBag(Module):
    """Sums, means or maxes of bags of embedding rows, without building the rows.

    >>> import flambeau.nn as nn
    >>> bag = nn.EmbeddingBag(5, 2, mode="sum")
    >>> with flambeau.no_grad():
    ...     _ = bag.weight.copy_(flambeau.arange(10.0).reshape(5, 2))
    >>> bag(flambeau.tensor([0, 1, 2, 4]), offsets=flambeau.tensor([0, 2]))
    tensor([[ 2.,  4.],
            [12., 14.]], grad_fn=<...>)
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm=None,
                 norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean",
                 sparse: bool = False, _weight=None, include_last_offset: bool = False,
                 padding_idx=None, device=None, dtype=None):  # fmt: skip
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.padding_idx = _normalise_padding_idx("EmbeddingBag", padding_idx, num_embeddings)
        self.weight, fresh = _make_weight(
            "EmbeddingBag", num_embeddings, embedding_dim, _weight, False, device, dtype
        )
        self.mode = mode
        self.sparse = sparse
        self.include_last_offset = include_last_offset
        if fresh:
            self.reset_parameters()

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with flambeau.no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, input, offsets=None, per_sample_weights=None):
        return F.embedding_bag(
            input, self.weight, offsets, self.max_norm, self.norm_type,
            self.scale_grad_by_freq, self.mode, self.sparse, per_sample_weights,
            self.include_last_offset, self.padding_idx,
        )  # fmt: skip

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        s += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        return s

    @classmethod
    def from_pretrained(cls, embeddings, freeze: bool = True, max_norm=None,
                        norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                        mode: str = "mean", sparse: bool = False,
                        include_last_offset: bool = False, padding_idx=None):  # fmt: skip
        """An EmbeddingBag whose weight is `embeddings` (frozen unless freeze=False)."""
        rows, cols = _check_pretrained(embeddings)
        bag = cls(
            num_embeddings=rows, embedding_dim=cols, _weight=embeddings, max_norm=max_norm,
            norm_type=norm_type, scale_grad_by_freq=scale_grad_by_freq, mode=mode,
            sparse=sparse, include_last_offset=include_last_offset, padding_idx=padding_idx,
        )  # fmt: skip
        bag.weight.requires_grad = not freeze
        return bag
