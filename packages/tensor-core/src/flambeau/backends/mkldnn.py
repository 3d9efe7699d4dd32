"""``flambeau.backends.mkldnn``: Intel's oneDNN (MKL-DNN), which flambeau does not use.

``is_available()`` is False; ``enabled`` and ``deterministic`` keep PyTorch's defaults
and checks so programs that set them run unchanged, but no flambeau kernel reads them.
"""

from __future__ import annotations

from contextlib import contextmanager

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
    old = (_module.enabled, _module.deterministic)
    if _enabled is not None:
        _module.enabled = _enabled
    if _deterministic is not None:
        _module.deterministic = _deterministic
    return old


@contextmanager
def flags(enabled=False, deterministic=False):
    """Sets the flags (with PyTorch's defaults for this call) inside the ``with`` block."""
    old = set_flags(enabled, deterministic)
    try:
        yield
    finally:
        set_flags(*old)
