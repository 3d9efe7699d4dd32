"""``flambeau.Size``: the shape of a tensor, a tuple of ints."""


class Size(tuple):
    __slots__ = ()

    def __repr__(self) -> str:
        return f"flambeau.Size([{', '.join(str(s) for s in self)}])"

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n
