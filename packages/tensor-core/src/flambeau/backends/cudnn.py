"""``flambeau.backends.cudnn``: NVIDIA's cuDNN library, which flambeau does not use.

flambeau's kernels are its own (CPU) or a backend plugin's; none calls cuDNN, so
``is_available()`` is False and ``version()`` None. The flags exist so that programs
which set or read them (``cudnn.benchmark = True``, ``cudnn.deterministic = True``)
run unchanged: they keep PyTorch's defaults and checks, and a CUDA backend plugin may
read them, but flambeau's own kernels ignore them. For reproducible results use
``flambeau.use_deterministic_algorithms``, which the kernels do honour.
"""

from __future__ import annotations

from flambeau.backends import _flags
from flambeau.backends._flags import BoolFlag, install

# Also the flags enabled, benchmark, deterministic and allow_tf32 (descriptors of the module).
__all__ = ["benchmark_limit", "flags", "is_acceptable", "is_available", "set_flags", "version"]


def is_available() -> bool:
    """False: flambeau never calls cuDNN."""
    return False


def version() -> int | None:
    """None: no cuDNN is loaded."""
    return None


def is_acceptable(tensor) -> bool:
    """Whether cuDNN would be used for ``tensor``: never in flambeau."""
    del tensor
    return False


_module = install(
    __name__,
    {
        "enabled": BoolFlag(True, "set_enabled_cudnn", "Whether cuDNN may be used (no effect)."),
        "benchmark": BoolFlag(
            False, "set_benchmark_cudnn", "Whether cuDNN benchmarks algorithms (no effect)."
        ),
        "deterministic": BoolFlag(
            False, "set_deterministic_cudnn", "Whether cuDNN is deterministic (no effect)."
        ),
        "allow_tf32": BoolFlag(
            True, "set_allow_tf32_cublas", "Whether cuDNN may use TF32 (no effect)."
        ),
    },
)
# How many algorithms cuDNN's benchmark would try: None, as in PyTorch without CUDA.
benchmark_limit = None


def set_flags(
    _enabled=None, _benchmark=None, _benchmark_limit=None, _deterministic=None, _allow_tf32=None
) -> tuple:
    """Sets the given flags (None leaves one as it is); returns the previous values."""
    values = {
        "enabled": _enabled,
        "benchmark": _benchmark,
        "benchmark_limit": _benchmark_limit,
        "deterministic": _deterministic,
        "allow_tf32": _allow_tf32,
    }
    return _flags.set_flags(_module, values)


def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False, allow_tf32=True):
    """Sets the flags (with PyTorch's defaults for this call) inside the ``with`` block."""
    return _flags.flags_set(
        set_flags, enabled, benchmark, benchmark_limit, deterministic, allow_tf32
    )
