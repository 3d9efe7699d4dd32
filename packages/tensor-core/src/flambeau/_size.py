"""``flambeau.Size``: the shape of a tensor, a tuple of ints."""


class Size(tuple):
    """The shape of a tensor (``tensor.shape``, ``tensor.size()``): a tuple of ints whose
    ``numel()`` is the number of elements of a tensor of that shape.

    >>> s = flambeau.zeros(2, 3).shape
    >>> s
    flambeau.Size([2, 3])
    >>> s[1], s.numel(), isinstance(s, tuple)
    (3, 6, True)
    >>> flambeau.Size([4, 5])
    flambeau.Size([4, 5])
    """

    __slots__ = ()

    def __repr__(self) -> str:
        return f"flambeau.Size([{', '.join(str(s) for s in self)}])"

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n
