"""DistributedDataParallel, provided by the flambeau-distributed package.

``flambeau.nn.parallel.DistributedDataParallel`` is that package's class
(``flambeau.distributed.DistributedDataParallel``). Without the package the name is a
placeholder class: ``isinstance(model, DistributedDataParallel)`` is False, as for any
single-process model, and constructing one raises ImportError naming the package.
"""

from __future__ import annotations

import importlib

from ..modules.module import Module

__all__ = ["DistributedDataParallel"]  # noqa: F822  (module __getattr__)

_PROVIDER = "flambeau.distributed"


def _provider():
    """(the DistributedDataParallel class, None) or (None, the ImportError to raise)."""
    try:
        module = importlib.import_module(_PROVIDER)
    except ImportError as e:
        return None, e
    cls = getattr(module, "DistributedDataParallel", None)
    if cls is None:
        return None, ImportError(
            f"{_PROVIDER} is installed but provides no DistributedDataParallel; install a "
            "flambeau-distributed that does",
            name=_PROVIDER,
        )
    return cls, None


_resolved = None  # (class, error), looked up once


def _lookup():
    global _resolved
    if _resolved is None:
        _resolved = _provider()
    return _resolved


class _MissingDistributedDataParallel(Module):
    """Stands for DistributedDataParallel while flambeau-distributed is not installed."""

    def __init__(self, *args, **kwargs):
        error = _lookup()[1]
        raise ImportError(str(error), name=_PROVIDER) from error


_MissingDistributedDataParallel.__name__ = "DistributedDataParallel"
_MissingDistributedDataParallel.__qualname__ = "DistributedDataParallel"


def resolve():
    """flambeau-distributed's DistributedDataParallel, or the placeholder without it."""
    cls = _lookup()[0]
    return cls if cls is not None else _MissingDistributedDataParallel


def __getattr__(name):
    if name == "DistributedDataParallel":
        return resolve()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
