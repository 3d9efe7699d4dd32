"""Availability and lazy initialization, with PyTorch's semantics and messages."""

from __future__ import annotations

from flambeau_cuda._loader import import_extension

_C = import_extension()


def is_available() -> bool:
    """Whether CUDA can be used: a driver and at least one device. Never raises.

    Without a driver or a GPU it returns False; ``flambeau_cuda._unavailable_reason()``
    says why.

    >>> import flambeau
    >>> isinstance(flambeau.cuda.is_available(), bool)
    True
    """
    return device_count() > 0


def device_count() -> int:
    """The number of CUDA devices (0 without a driver or a device). Never raises.

    >>> import flambeau
    >>> flambeau.cuda.device_count() >= 0
    True
    """
    return int(_C._probe()["device_count"])


def _unavailable_reason() -> str | None:
    """Why CUDA is not available (PyTorch's message), or None when it is."""
    probe = _C._probe()
    return None if probe["available"] else probe["reason"]


def is_initialized() -> bool:
    """Whether CUDA has been initialized in this process (a forked child's is not).

    >>> import flambeau
    >>> flambeau.cuda.is_initialized() in (True, False)
    True
    """
    return bool(_C._is_initialized())


def init() -> None:
    """Initializes CUDA now rather than at first use.

    Raises RuntimeError without a driver ("Found no NVIDIA driver on your system..."),
    without a device ("No CUDA GPUs are available") or in a child forked after the
    parent initialized CUDA ("Cannot re-initialize CUDA in forked subprocess...").

    >>> import flambeau
    >>> if flambeau.cuda.is_available():
    ...     flambeau.cuda.init()
    """
    _C._lazy_init()


def _lazy_init() -> None:
    _C._lazy_init()
