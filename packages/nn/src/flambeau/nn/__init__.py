"""flambeau.nn: modules, layers, losses, initialisation and functional, as torch.nn."""

from __future__ import annotations

from flambeau import serialization as _serialization

from . import functional, init, utils  # noqa: F401
from .modules import *  # noqa: F403
from .modules import __all__ as _modules_all
from .parameter import Buffer, Parameter

# flambeau.load rebuilds parameters without an explicit allow-list, as torch.load does.
_serialization.add_safe_globals([Parameter])

__all__ = ["Parameter", "Buffer", "functional", "init", "utils", *_modules_all]
