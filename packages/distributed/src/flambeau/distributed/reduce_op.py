"""ReduceOp: the reductions of all_reduce, reduce and reduce_scatter, as torch's."""

from __future__ import annotations

import enum

__all__ = ["ReduceOp", "RedOpType", "supports_complex"]


class RedOpType(enum.IntEnum):
    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7
    PREMUL_SUM = 8

    def __repr__(self) -> str:
        return f"<RedOpType.{self.name}: {self.value}>"

    def __str__(self) -> str:
        return f"RedOpType.{self.name}"


class ReduceOp:
    """``ReduceOp.SUM``, ``AVG``, ``PRODUCT``, ``MIN``, ``MAX``, ``BAND``, ``BOR``, ``BXOR``.

    As in PyTorch the members are ``ReduceOp.RedOpType`` values, and ``ReduceOp(op)``
    wraps one. PREMUL_SUM is NCCL's and is refused by the MPI backend.

    >>> import flambeau.distributed as dist
    >>> dist.ReduceOp.SUM, dist.ReduceOp(dist.ReduceOp.MAX) == dist.ReduceOp.MAX
    (<RedOpType.SUM: 0>, True)
    """

    RedOpType = RedOpType
    SUM = RedOpType.SUM
    AVG = RedOpType.AVG
    PRODUCT = RedOpType.PRODUCT
    MIN = RedOpType.MIN
    MAX = RedOpType.MAX
    BAND = RedOpType.BAND
    BOR = RedOpType.BOR
    BXOR = RedOpType.BXOR
    PREMUL_SUM = RedOpType.PREMUL_SUM

    def __init__(self, op: RedOpType = RedOpType.SUM) -> None:
        self.op = RedOpType(int(op))

    def __eq__(self, other) -> bool:
        if isinstance(other, ReduceOp):
            return self.op == other.op
        return isinstance(other, int) and int(self.op) == int(other)

    def __hash__(self) -> int:
        return hash(self.op)

    def __repr__(self) -> str:
        return f"ReduceOp({self.op!r})"


def as_red_op(op) -> RedOpType:
    """The RedOpType of `op` (a RedOpType, a ReduceOp, or torch's deprecated reduce_op)."""
    if isinstance(op, ReduceOp):
        return op.op
    if isinstance(op, RedOpType):
        return op
    if isinstance(op, int) and not isinstance(op, bool):
        try:
            return RedOpType(op)
        except ValueError:
            pass
    raise TypeError(f"expected a ReduceOp, got {op!r}")


# Complex tensors are reduced as pairs of reals: right for sums and averages, but an
# order (MIN, MAX), a product or a bitwise operation on the parts would be garbage.
_NOT_FOR_COMPLEX = {
    RedOpType.MAX,
    RedOpType.MIN,
    RedOpType.PRODUCT,
    RedOpType.BAND,
    RedOpType.BOR,
    RedOpType.BXOR,
}


def supports_complex(reduceOp) -> bool:  # noqa: N803 (PyTorch's argument name)
    """Whether the reduction `reduceOp` is defined on complex tensors: SUM, AVG and
    PREMUL_SUM are; MIN, MAX, PRODUCT and the bitwise ones are not (collectives raise
    ValueError for them on complex tensors).

    >>> import flambeau.distributed as dist
    >>> dist.supports_complex(dist.ReduceOp.SUM), dist.supports_complex(dist.ReduceOp.MAX)
    (True, False)
    """
    return as_red_op(reduceOp) not in _NOT_FOR_COMPLEX
