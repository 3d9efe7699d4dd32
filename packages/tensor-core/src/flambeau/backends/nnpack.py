"""``flambeau.backends.nnpack``: the NNPACK convolution library, which flambeau does not
use.

``is_available()`` is False. The global switch PyTorch keeps (``set_flags``, ``flags``)
is kept with its default and check, so programs that turn NNPACK off run unchanged; no
flambeau kernel reads it.
"""

from __future__ import annotations

from flambeau.backends import _flags

__all__ = ["flags", "is_available", "set_flags"]

_state = {"enabled": True}  # PyTorch's default


def is_available() -> bool:
    """False: flambeau's convolutions are its own, not NNPACK's.

    >>> flambeau.backends.nnpack.is_available()
    False
    """
    return False


def set_flags(_enabled) -> tuple:
    """Sets whether NNPACK may be used (a bool; RuntimeError otherwise) and returns the
    previous setting, as a 1-tuple.

    >>> from flambeau.backends import nnpack
    >>> previous = nnpack.set_flags(False)
    >>> previous
    (True,)
    >>> nnpack.set_flags(*previous)
    (False,)
    """
    if not isinstance(_enabled, bool):
        raise RuntimeError(f"set_enabled_NNPACK expects a bool, but got {type(_enabled).__name__}")
    previous = (_state["enabled"],)
    _state["enabled"] = _enabled
    return previous


def flags(enabled=False):
    """Sets whether NNPACK may be used inside the ``with`` block (off by default, as in
    PyTorch), then restores the previous setting.

    >>> from flambeau.backends import nnpack
    >>> with nnpack.flags():
    ...     print(nnpack.set_flags(False))
    (False,)
    >>> nnpack.set_flags(True)  # the previous setting came back
    (True,)
    """
    return _flags.flags_set(set_flags, enabled)
