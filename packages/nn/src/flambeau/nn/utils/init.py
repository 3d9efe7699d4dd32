"""skip_init: build a module without running its parameter initialisers."""

from __future__ import annotations

import inspect

from .. import init
from ..modules.module import Module

__all__ = ["skip_init"]


def skip_init(module_cls, *args, **kwargs):
    """module_cls(*args, **kwargs) with its parameters and buffers left uninitialised.

    PyTorch builds the module on its meta device; flambeau has none, so it builds it with
    every nn.init initialiser a no-op: parameters keep the uninitialised memory they were
    created with (as flambeau.empty). As in PyTorch, the module must take a `device`
    argument and compute nothing from its parameters in its constructor but their
    initialisation; `device` (default "cpu") places them.

    >>> import flambeau.nn as nn
    >>> layer = nn.utils.skip_init(nn.Linear, 4, 2)
    >>> layer.weight.shape
    flambeau.Size([2, 4])
    >>> _ = nn.init.zeros_(layer.weight)  # until set, it holds uninitialised memory
    >>> layer.weight.abs().sum().item()
    0.0
    """
    if not (isinstance(module_cls, type) and issubclass(module_cls, Module)):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    kwargs["device"] = kwargs.pop("device", "cpu")
    with init._skip_initialization():
        return module_cls(*args, **kwargs)
