"""The exception classes PyTorch exposes at top level for device failures.

``flambeau.OutOfMemoryError`` is ``flambeau.cuda.OutOfMemoryError`` (one class, as in
PyTorch): what a backend plugin raises when its device runs out of memory. A failed CPU
allocation raises RuntimeError, as PyTorch's CPU allocator does. ``AcceleratorError`` is
what a plugin raises for a failure while executing on its device.
"""

from __future__ import annotations

__all__ = ["AcceleratorError", "OutOfMemoryError"]


class OutOfMemoryError(RuntimeError):
    """Exception raised when device is out of memory

    >>> try:
    ...     raise flambeau.OutOfMemoryError("device out of memory")
    ... except RuntimeError as e:
    ...     print(type(e).__name__, e)
    OutOfMemoryError device out of memory
    """


class AcceleratorError(RuntimeError):
    """Exception raised while executing on device

    >>> try:
    ...     raise flambeau.AcceleratorError("kernel launch failed")
    ... except RuntimeError as e:
    ...     print(type(e).__name__, e)
    AcceleratorError kernel launch failed
    """


# PyTorch's classes live in torch; these are flambeau's public names, not its private module.
OutOfMemoryError.__module__ = AcceleratorError.__module__ = "flambeau"
