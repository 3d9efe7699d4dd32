"""LinearCrossEntropyOptions: PyTorch's settings for a batch-chunked linear_cross_entropy.

flambeau validates and keeps them; F.linear_cross_entropy computes the same loss in one
piece whatever they say (chunking only saves memory).
"""

from __future__ import annotations

import dataclasses

import flambeau

__all__ = ["LinearCrossEntropyOptions"]

_ACC_POLICIES = ("auto", "accurate", "balanced", "compact")
_ACC_DTYPES = (flambeau.float16, flambeau.bfloat16, flambeau.float32, flambeau.float64)


@dataclasses.dataclass(slots=True, frozen=True)
class LinearCrossEntropyOptions:
    """How to chunk the batch of linear_cross_entropy, and at which precision to accumulate.

    allow_retain_graph: allow a second backward; batch_chunk_size: rows per chunk (None:
    one chunk); chunking_method: "auto", "aspect_ratio" or "aspect_ratio:<factor>";
    acc_policy: "auto", "accurate", "balanced" or "compact"; acc_dtype: None or a
    floating dtype.

    >>> import flambeau.nn as nn
    >>> opts = nn.LinearCrossEntropyOptions(batch_chunk_size=2, acc_dtype=flambeau.float32)
    >>> opts.batch_chunk_size, opts.acc_policy
    (2, 'auto')
    """

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: str = "auto"
    acc_dtype: flambeau.dtype | None = None

    def __post_init__(self):
        if self.acc_policy not in _ACC_POLICIES:
            raise ValueError(f"invalid acc_policy: {self.acc_policy!r}")
        if self.chunking_method is not None and self.chunking_method != "auto":
            name, sep, factor = str(self.chunking_method).partition(":")
            factor = factor if sep else "1"
            if not (name == "aspect_ratio" and factor.isdigit() and int(factor) > 0):
                raise ValueError(f"invalid chunking_method: {self.chunking_method!r}")
        size = self.batch_chunk_size
        if not (
            size is None or (isinstance(size, int) and not isinstance(size, bool) and size > 0)
        ):
            raise ValueError(f"batch_chunk_size must be positive int or None, got {size!r}")
        if self.acc_dtype is not None and self.acc_dtype not in _ACC_DTYPES:
            raise ValueError(
                "acc_dtype must be one of {None, flambeau.float16, flambeau.bfloat16, "
                f"flambeau.float32, flambeau.float64}}, got {self.acc_dtype!r}. Pass "
                "acc_dtype=None to let the op pick automatically."
            )
