"""Flatten and Unflatten."""

from __future__ import annotations

from .module import Module


class Flatten(Module):
    """Flattens dims start_dim..end_dim into one (the batch dimension 0 stays by default).

    >>> import flambeau.nn as nn
    >>> nn.Flatten()(flambeau.zeros(32, 1, 5, 5)).shape
    flambeau.Size([32, 25])
    >>> nn.Flatten(0, 2)(flambeau.zeros(32, 1, 5, 5)).shape
    flambeau.Size([160, 5])
    """

    def __init__(self, start_dim: int = 1, end_dim: int = -1):
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Expands dimension `dim` into the shape `unflattened_size`.

    >>> import flambeau.nn as nn
    >>> m = nn.Unflatten(1, (2, 5, 5))
    >>> m(flambeau.zeros(2, 50)).shape
    flambeau.Size([2, 2, 5, 5])
    """

    def __init__(self, dim: int, unflattened_size):
        super().__init__()
        if not isinstance(unflattened_size, (tuple, list)):
            raise TypeError(
                "unflattened_size must be a tuple of ints, but found type "
                f"{type(unflattened_size).__name__}"
            )
        for i, size in enumerate(unflattened_size):
            if not isinstance(size, int):
                raise TypeError(
                    "unflattened_size must be tuple of ints, but found element of type "
                    f"{type(size).__name__} at pos {i}"
                )
        self.dim = dim
        self.unflattened_size = unflattened_size

    def forward(self, input):
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
