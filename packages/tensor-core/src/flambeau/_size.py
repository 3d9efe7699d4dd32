"""``flambeau.Size``: the shape of a tensor, a tuple of ints."""

from flambeau._C import _SizeBase


class Size(_SizeBase):
    """The shape of a tensor (``tensor.shape``, ``tensor.size()``): a tuple of ints whose
    ``numel()`` is the number of elements of a tensor of that shape.

    >>> s = flambeau.zeros(2, 3).shape
    >>> s
    flambeau.Size([2, 3])
    >>> s[1], s.numel(), isinstance(s, tuple)
    (3, 6, True)
    >>> flambeau.Size([4, 5])
    flambeau.Size([4, 5])

    Slices, concatenations with tuples and repetitions are Sizes too; the constructor
    takes ints (or anything with ``__index__``):

    >>> s[1:], s + (4,)
    (flambeau.Size([3]), flambeau.Size([2, 3, 4]))
    >>> (1,) + s, s * 2
    (flambeau.Size([1, 2, 3]), flambeau.Size([2, 3, 2, 3]))
    >>> flambeau.Size([1.5])
    Traceback (most recent call last):
      ...
    TypeError: flambeau.Size() takes an iterable of 'int' (item 0 is 'float')
    """

    __slots__ = ()

    def __repr__(self) -> str:
        return f"flambeau.Size([{', '.join(str(s) for s in self)}])"

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n
