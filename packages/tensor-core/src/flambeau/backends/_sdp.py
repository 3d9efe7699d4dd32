"""Which scaled_dot_product_attention kernels may run: PyTorch's global settings (one
enabled flag per backend, set by flambeau.backends.cuda's ``enable_*_sdp`` and by
flambeau.nn.attention's ``sdpa_kernel``, and the backends' priority order) and the
``SDPBackend`` enum that names the backends.

flambeau computes attention with one fused operator; on the CPU the flags decide, as
PyTorch's do, whether a call may run at all (flambeau.nn.functional's
scaled_dot_product_attention applies PyTorch's CPU rule), and a CUDA plugin may read them.
"""

from __future__ import annotations

import contextlib
import enum

__all__ = ["SDPBackend"]


class SDPBackend(enum.Enum):
    """The backends (kernels) of scaled_dot_product_attention, for
    :func:`flambeau.nn.attention.sdpa_kernel`: ``ERROR`` (no backend could be chosen),
    ``MATH``, ``FLASH_ATTENTION``, ``EFFICIENT_ATTENTION``, ``CUDNN_ATTENTION`` and
    ``OVERRIDEABLE``. ``int(backend)`` is its number in PyTorch.

    >>> from flambeau.backends.cuda import SDPBackend
    >>> SDPBackend.FLASH_ATTENTION, int(SDPBackend.MATH)
    (<SDPBackend.FLASH_ATTENTION: 1>, 0)
    """

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4

    def __int__(self) -> int:
        return self.value

    __index__ = __int__


# Whether each backend is enabled, under PyTorch's names for the flags, in the order
# PyTorch's sdpa_kernel lists them.
ENABLED = {"cudnn": True, "flash": True, "mem_efficient": True, "math": True, "overrideable": True}

BACKEND_OF_FLAG = {
    "cudnn": SDPBackend.CUDNN_ATTENTION,
    "flash": SDPBackend.FLASH_ATTENTION,
    "mem_efficient": SDPBackend.EFFICIENT_ATTENTION,
    "math": SDPBackend.MATH,
    "overrideable": SDPBackend.OVERRIDEABLE,
}

# The backends' priority order (their int values, first tried first): PyTorch's default.
PRIORITY = [1, 2, 0, 3, 4]

# Whether the math backend may reduce float16/bfloat16 inputs in their own precision
# (PyTorch's allow_fp16_bf16_reduction_math_sdp); off by default. flambeau's CPU kernel
# does not read it; a CUDA plugin may.
MATH_REDUCTION = {"fp16_bf16": False}


def check_bool(value, setter: str) -> bool:
    """value, when it is a bool; PyTorch's RuntimeError naming the setter otherwise."""
    if not isinstance(value, bool):
        raise RuntimeError(f"{setter} expects a bool, but got {type(value).__name__}")
    return value


def enabled_backends(with_priority: bool = False) -> list:
    """The enabled backends, in the flags' order or (with_priority) in priority order."""
    backends = [BACKEND_OF_FLAG[flag] for flag, enabled in ENABLED.items() if enabled]
    if with_priority:
        backends.sort(key=lambda backend: PRIORITY.index(int(backend)))
    return backends


def enable_only(backends: list, set_priority: bool) -> None:
    """Enables the backends listed and disables the others; with set_priority their
    order becomes the priority order (the others keep theirs, after them)."""
    for flag, backend in BACKEND_OF_FLAG.items():
        ENABLED[flag] = backend in backends
    if set_priority:
        order = [int(backend) for backend in backends]
        order += [b for b in PRIORITY if b not in order]
        PRIORITY[:] = order[: len(BACKEND_OF_FLAG)]  # as PyTorch's, one entry per backend


@contextlib.contextmanager
def only_enabled(backends: list, set_priority: bool = False):
    """Only ``backends`` enabled inside the ``with`` block (yielding ``{}``, as PyTorch's
    sdpa_kernel does); the previous flags (and priority order) come back after it."""
    previous = enabled_backends(with_priority=set_priority)
    try:
        enable_only(backends, set_priority)
        yield {}
    finally:
        enable_only(previous, set_priority)
