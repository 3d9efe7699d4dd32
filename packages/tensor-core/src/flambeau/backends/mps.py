"""``flambeau.backends.mps``: Apple's Metal (MPS) device, which flambeau does not provide.

MPS would come as a backend plugin (device type ``"mps"``, entry point group
``flambeau.backends``); without one it is neither built nor available, as in a
PyTorch build without MPS.
"""

from __future__ import annotations

from flambeau import backends as _backends

__all__ = [
    "get_core_count",
    "get_name",
    "is_available",
    "is_built",
    "is_macos13_or_newer",
    "is_macos_or_newer",
]


def is_built() -> bool:
    """Whether an MPS backend plugin is installed (available or not).

    >>> flambeau.backends.mps.is_built()  # no MPS plugin here
    False
    """
    return "mps" in _backends._installed()


def is_available() -> bool:
    """Whether an MPS backend plugin is installed, loads, and sees a device.

    >>> flambeau.backends.mps.is_available()
    False
    """
    from flambeau import accelerator

    return accelerator._device_count_of("mps") > 0


def is_macos_or_newer(major: int, minor: int) -> bool:
    """Whether the MPS device runs on macOS ``major.minor`` or newer; RuntimeError
    without an MPS backend, as PyTorch does.

    >>> flambeau.backends.mps.is_macos_or_newer(14, 0)  # no MPS plugin here
    Traceback (most recent call last):
      ...
    RuntimeError: Cannot execute isOnMacOSorNewer() without MPS backend.
    """
    module = _backends.module("mps") if is_built() else None
    if module is None or not hasattr(module, "is_macos_or_newer"):
        raise RuntimeError("Cannot execute isOnMacOSorNewer() without MPS backend.")
    return bool(module.is_macos_or_newer(major, minor))


def is_macos13_or_newer(minor: int = 0) -> bool:
    """Whether the MPS device runs on macOS 13.minor or newer; RuntimeError without an
    MPS backend, as PyTorch does.

    >>> flambeau.backends.mps.is_macos13_or_newer()  # no MPS plugin here
    Traceback (most recent call last):
      ...
    RuntimeError: Cannot execute isOnMacOSorNewer() without MPS backend.
    """
    return is_macos_or_newer(13, minor)


def _plugin_function(name: str):
    """The MPS plugin's function ``name``; AttributeError without one, as PyTorch's
    functions raise on a build without MPS."""
    module = _backends.module("mps") if is_built() else None
    function = getattr(module, name, None) if module is not None else None
    if function is None:
        raise AttributeError(
            f"flambeau.backends.mps.{name} needs an MPS backend: install a distribution "
            f"that provides the 'mps' entry point of group {_backends.GROUP!r}"
        )
    return function


def get_name() -> str:
    """The Metal device's name, from the MPS plugin; AttributeError without one.

    >>> flambeau.backends.mps.get_name()  # no MPS plugin here
    Traceback (most recent call last):
      ...
    AttributeError: flambeau.backends.mps.get_name needs an MPS backend: ...
    """
    return str(_plugin_function("get_name")())


def get_core_count() -> int:
    """The Metal device's GPU core count, from the MPS plugin; AttributeError without one.

    >>> flambeau.backends.mps.get_core_count()  # no MPS plugin here
    Traceback (most recent call last):
      ...
    AttributeError: flambeau.backends.mps.get_core_count needs an MPS backend: ...
    """
    return int(_plugin_function("get_core_count")())
