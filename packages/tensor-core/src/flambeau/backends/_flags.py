"""Module attributes that check what is assigned to them, for the flag modules here.

PyTorch's flag modules (``torch.backends.cudnn`` and the others) refuse a non-bool
``enabled = 1`` with a RuntimeError naming the setter; a module gets the same checks
by taking a ModuleType subclass holding these descriptors as its class.
"""

from __future__ import annotations

import sys
import types
from contextlib import contextmanager


class BoolFlag:
    """A bool setting; assigning anything but a bool raises RuntimeError."""

    def __init__(self, default: bool, setter: str, doc: str):
        self.value = default
        self.setter = setter  # the name PyTorch's error message gives the setter
        self.__doc__ = doc

    def __get__(self, module, owner=None):
        return self if module is None else self.value

    def __set__(self, module, value) -> None:
        if not isinstance(value, bool):
            raise RuntimeError(f"{self.setter} expects a bool, but got {type(value).__name__}")
        self.value = value


def install(module_name: str, flags: dict) -> types.ModuleType:
    """Gives module ``module_name`` the attributes ``flags`` (name -> descriptor)."""
    module = sys.modules[module_name]
    module.__class__ = type(f"{module_name.rsplit('.', 1)[-1]}_flags", (types.ModuleType,), flags)
    return module


def set_flags(module: types.ModuleType, values: dict) -> tuple:
    """Assigns module's flags from values (name -> value; None leaves a flag as it is), as the
    modules' set_flags do; returns the previous values, in the order of values."""
    old = tuple(getattr(module, name) for name in values)
    for name, value in values.items():
        if value is not None:
            setattr(module, name, value)
    return old


@contextmanager
def flags_set(set_flags_fn, *values):
    """A module's flags(...): set_flags_fn(*values) inside the ``with`` block, then the
    previous values back."""
    old = set_flags_fn(*values)
    try:
        yield
    finally:
        set_flags_fn(*old)
