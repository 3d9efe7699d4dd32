"""``flambeau.backends.mkldnn``: Intel's oneDNN (MKL-DNN), which flambeau does not use.

``is_available()`` is False; ``enabled`` and ``deterministic`` keep PyTorch's defaults
and checks so programs that set them run unchanged, but no flambeau kernel reads them.
"""

from __future__ import annotations

from flambeau.backends import _flags
from flambeau.backends._flags import BoolFlag, install

# Also the flags enabled and deterministic (descriptors of the module).
__all__ = ["flags", "is_available", "set_flags"]


def is_available() -> bool:
    """False: flambeau has no oneDNN kernels."""
    return False


_module = install(
    __name__,
    {
        "enabled": BoolFlag(True, "set_enabled_mkldnn", "Whether oneDNN may be used (no effect)."),
        "deterministic": BoolFlag(
            False, "set_deterministic_mkldnn", "Whether oneDNN is deterministic (no effect)."
        ),
    },
)


def set_flags(_enabled=None, _deterministic=None) -> tuple:
    """Sets the given flags (None leaves one as it is); returns the previous values."""
    return _flags.set_flags(_module, {"enabled": _enabled, "deterministic": _deterministic})


def flags(enabled=False, deterministic=False):
    """Sets the flags (with PyTorch's defaults for this call) inside the ``with`` block."""
    return _flags.flags_set(set_flags, enabled, deterministic)
