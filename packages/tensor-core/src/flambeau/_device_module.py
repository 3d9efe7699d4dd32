"""``flambeau.get_device_module``: the module of a device type (``flambeau.cpu``,
``flambeau.cuda``, a backend plugin's ``flambeau.<device type>``), for device-agnostic code
such as ``flambeau.get_device_module(t.device).synchronize()``."""

from __future__ import annotations

import types

from flambeau import _C

__all__ = ["get_device_module"]


def get_device_module(device=None):
    """The module ``flambeau.<type>`` of a device, a device string or (None) the current
    accelerator, or the CPU when there is none.

    >>> flambeau.get_device_module("cpu")
    <module 'flambeau.cpu' from '...'>
    >>> flambeau.get_device_module(flambeau.zeros(1).device).synchronize()
    """
    import flambeau

    if isinstance(device, _C.device):
        name = device.type
    elif isinstance(device, str):
        name = _C.device(device).type
    elif device is None:
        from flambeau import accelerator

        found = accelerator.current_accelerator()
        name = "cpu" if found is None else found.type
    else:
        raise RuntimeError(
            f"Invalid value of device '{device}', expect flambeau.device, str, or None"
        )
    module = getattr(flambeau, name, None)
    if not isinstance(module, types.ModuleType):
        raise RuntimeError(
            f"Device '{name}' does not have a corresponding module registered as 'flambeau.{name}'."
        )
    return module
