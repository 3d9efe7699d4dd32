"""GradBucket: what a DDP communication hook receives (torch.distributed.GradBucket)."""

from __future__ import annotations

__all__ = ["GradBucket"]


class GradBucket:
    """One bucket of gradients handed to a communication hook: a flat buffer holding the
    gradients of some parameters (in bucket order), views of it shaped as those
    gradients, and the parameters themselves.

    >>> import flambeau.distributed as dist
    >>> grads = flambeau.tensor([1.0, 2.0, 3.0])
    >>> bucket = dist.GradBucket(0, grads, [grads[:2], grads[2:]], [], is_last=True)
    >>> bucket.buffer(), bucket.is_last()
    (tensor([1., 2., 3.]), True)
    """

    __slots__ = ("_index", "_buffer", "_gradients", "_parameters", "_is_last")

    def __init__(self, index: int, buffer, gradients: list, parameters: list, is_last: bool):
        self._index = index
        self._buffer = buffer
        self._gradients = gradients
        self._parameters = parameters
        self._is_last = is_last

    def index(self) -> int:
        """The bucket's index: 0 is the first bucket all-reduced in an iteration."""
        return self._index

    def buffer(self):
        """The flattened 1D tensor of the bucket's gradients."""
        return self._buffer

    def gradients(self) -> list:
        """The bucket's gradients, each a view of buffer() shaped as its parameter."""
        return list(self._gradients)

    def parameters(self) -> list:
        """The model parameters whose gradients the bucket holds, in buffer order."""
        return list(self._parameters)

    def is_last(self) -> bool:
        """Whether this is the last bucket all-reduced in an iteration."""
        return self._is_last

    def set_buffer(self, buffer) -> None:
        """Replace the bucket's flat buffer (a compression wrapper hands its hook a
        compressed copy)."""
        self._buffer = buffer

    def __repr__(self) -> str:
        return (
            f"GradBucket(index={self._index}, numel={self._buffer.numel()}, "
            f"dtype={self._buffer.dtype}, parameters={len(self._parameters)})"
        )
