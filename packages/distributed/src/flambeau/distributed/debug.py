"""TORCH_DISTRIBUTED_DEBUG: with DETAIL, ranks check that they agree on each collective.

Before each collective every rank of the group shares a fingerprint of the call it is
making (sequence number, operation, dtype, element count, root, reduction) through one
small all-gather, and all raise, naming each rank's call, when they differ: a mismatch
is reported instead of deadlocking or corrupting data. It costs one extra small
collective per call, so it is off by default, as in PyTorch.
"""

from __future__ import annotations

import enum
import os
import zlib

import numpy as np

__all__ = ["DebugLevel", "get_debug_level", "set_debug_level", "set_debug_level_from_env"]


class DebugLevel(enum.IntEnum):
    """How much checking collectives do, set by ``TORCH_DISTRIBUTED_DEBUG``: ``OFF`` (the
    default), ``INFO``, or ``DETAIL``, where every rank checks before each collective that
    all ranks of the group are making the same call.

    >>> import flambeau.distributed as dist
    >>> dist.DebugLevel.DETAIL, dist.DebugLevel["INFO"]
    (<DebugLevel.DETAIL: 2>, <DebugLevel.INFO: 1>)
    """

    OFF = 0
    INFO = 1
    DETAIL = 2


_level: DebugLevel | None = None

OPS = [
    "all_reduce",
    "broadcast",
    "reduce",
    "all_gather",
    "all_gather_into_tensor",
    "gather",
    "scatter",
    "reduce_scatter",
    "reduce_scatter_tensor",
    "all_to_all",
    "all_to_all_single",
    "barrier",
    "broadcast_object_list",
    "all_gather_object",
    "gather_object",
    "scatter_object_list",
    "ddp_bucket_all_reduce",
    "all_gather_single",
    "reduce_scatter_single",
    "all_reduce_coalesced",
    "all_gather_coalesced",
]
_DTYPES: list = []  # dtype codes, filled on first use


def set_debug_level_from_env() -> None:
    """Sets the debug level from the ``TORCH_DISTRIBUTED_DEBUG`` environment variable:
    ``OFF`` (also when unset), ``INFO`` or ``DETAIL``, in any case. Any other value raises
    ValueError.

    >>> import os, flambeau.distributed as dist
    >>> os.environ["TORCH_DISTRIBUTED_DEBUG"] = "detail"
    >>> dist.set_debug_level_from_env()
    >>> dist.get_debug_level()
    <DebugLevel.DETAIL: 2>
    >>> del os.environ["TORCH_DISTRIBUTED_DEBUG"]; dist.set_debug_level_from_env()
    """
    global _level
    value = os.environ.get("TORCH_DISTRIBUTED_DEBUG", "OFF").strip().upper() or "OFF"
    if value not in DebugLevel.__members__:
        raise ValueError(
            "The value of TORCH_DISTRIBUTED_DEBUG must be OFF, INFO, or DETAIL, but it is "
            f"{value!r}"
        )
    _level = DebugLevel[value]


def set_debug_level(level: DebugLevel) -> None:
    """Sets the debug level (a :class:`DebugLevel` or its int value), overriding
    ``TORCH_DISTRIBUTED_DEBUG`` for the rest of the process. With ``DebugLevel.DETAIL``
    each collective first checks that every rank of the group makes the same call and
    raises, naming each rank's call, when they differ.

    >>> import flambeau.distributed as dist
    >>> dist.set_debug_level(dist.DebugLevel.DETAIL)
    >>> dist.get_debug_level()
    <DebugLevel.DETAIL: 2>
    >>> dist.set_debug_level(dist.DebugLevel.OFF)
    """
    global _level
    _level = DebugLevel(level)


def get_debug_level() -> DebugLevel:
    """The current :class:`DebugLevel`: the one :func:`set_debug_level` set, or else the
    one ``TORCH_DISTRIBUTED_DEBUG`` names (read on the first call).

    >>> import flambeau.distributed as dist
    >>> dist.get_debug_level()  # TORCH_DISTRIBUTED_DEBUG unset
    <DebugLevel.OFF: 0>
    """
    if _level is None:
        set_debug_level_from_env()
    return _level


def _code(dtype) -> int:
    # The same on every rank (hash() of a str is salted per process).
    return zlib.crc32(str(dtype).encode()) & 0x7FFFFFFF


def fingerprint(seq: int, op: str, dtype, numel: int, root: int, redop: int) -> np.ndarray:
    if dtype is None:
        code = -1
    else:
        if dtype not in _DTYPES:
            _DTYPES.append(dtype)
        code = _code(dtype)
    return np.array([seq, OPS.index(op), code, numel, root, redop], dtype=np.int64)


def describe(row) -> str:
    seq, op, code, numel, root, redop = (int(v) for v in row)
    dtype = next((str(d) for d in _DTYPES if _code(d) == code), "?")
    parts = [f"SequenceNumber={seq}", f"OpType={OPS[op]}"]
    if code != -1:
        parts += [f"TensorDtype={dtype}", f"NumElements={numel}"]
    if root >= 0:
        parts.append(f"Root={root}")
    if redop >= 0:
        from .reduce_op import RedOpType

        parts.append(f"ReduceOp={RedOpType(redop).name}")
    return "CollectiveFingerPrint(" + ", ".join(parts) + ")"
