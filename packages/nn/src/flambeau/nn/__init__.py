"""flambeau.nn: modules, layers, losses, initialisation and functional, as torch.nn."""

from __future__ import annotations

from flambeau import serialization as _serialization

from . import (  # noqa: F401
    attention,
    common_types,
    functional,
    init,
    parallel,
    parameter,
    utils,
)
from .modules import *  # noqa: F403
from .modules import __all__ as _modules_all
from .parallel import DataParallel
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter

# flambeau.load rebuilds parameters without an explicit allow-list, as torch.load does.
_serialization.add_safe_globals([Parameter])


def factory_kwargs(kwargs):
    """The device / dtype / memory_format entries of `kwargs`, checked, as one dict.

    Layers that take ``**kwargs`` pass the result to tensor factories. A ``factory_kwargs``
    entry (a dict) supplies values whose names clash with the caller's own arguments.

    >>> import flambeau.nn as nn
    >>> nn.factory_kwargs({"device": "cpu", "factory_kwargs": {"dtype": flambeau.float64}})
    {'dtype': flambeau.float64, 'device': 'cpu'}
    """
    if kwargs is None:
        return {}
    simple = {"device", "dtype", "memory_format"}
    expected = simple | {"factory_kwargs"}
    if not kwargs.keys() <= expected:
        raise TypeError(f"unexpected kwargs {kwargs.keys() - expected}")
    result = dict(kwargs.get("factory_kwargs", {}))
    for key in simple:
        if key in kwargs:
            if key in result:
                raise TypeError(f"{key} specified twice, in **kwargs and in factory_kwargs")
            result[key] = kwargs[key]
    return result


__all__ = [
    "Parameter",
    "Buffer",
    "UninitializedParameter",
    "UninitializedBuffer",
    "DataParallel",
    "factory_kwargs",
    "attention",
    "functional",
    "init",
    "parallel",
    "parameter",
    "utils",
    *_modules_all,
]
