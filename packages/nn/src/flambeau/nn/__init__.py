"""flambeau.nn: modules, layers, losses, initialisation and functional, as torch.nn."""

from __future__ import annotations

from . import _serialization

_serialization.install()

from . import functional, init, utils  # noqa: E402,F401
from .modules import *  # noqa: E402,F403
from .modules import __all__ as _modules_all  # noqa: E402
from .parameter import Buffer, Parameter  # noqa: E402

__all__ = ["Parameter", "Buffer", "functional", "init", "utils", *_modules_all]
