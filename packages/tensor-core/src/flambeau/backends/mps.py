"""``flambeau.backends.mps``: Apple's Metal (MPS) device, which flambeau does not provide.

MPS would come as a backend plugin (device type ``"mps"``, entry point group
``flambeau.backends``); without one it is neither built nor available, as in a
PyTorch build without MPS.
"""

from __future__ import annotations

from flambeau import backends as _backends

__all__ = ["is_available", "is_built", "is_macos13_or_newer", "is_macos_or_newer"]


def is_built() -> bool:
    """Whether an MPS backend plugin is installed (available or not)."""
    return "mps" in _backends._installed()


def is_available() -> bool:
    """Whether an MPS backend plugin is installed, loads, and sees a device."""
    from flambeau import accelerator

    return accelerator._device_count_of("mps") > 0


def is_macos_or_newer(major: int, minor: int) -> bool:
    """Raises RuntimeError without an MPS backend, as PyTorch does."""
    module = _backends.module("mps") if is_built() else None
    if module is None or not hasattr(module, "is_macos_or_newer"):
        raise RuntimeError("Cannot execute isOnMacOSorNewer() without MPS backend.")
    return bool(module.is_macos_or_newer(major, minor))


def is_macos13_or_newer(minor: int = 0) -> bool:
    """Raises RuntimeError without an MPS backend, as PyTorch does."""
    return is_macos_or_newer(13, minor)
