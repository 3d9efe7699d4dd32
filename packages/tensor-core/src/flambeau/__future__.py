"""flambeau.__future__: behaviours that will become the default, opted into now
(PyTorch's torch.__future__). Both settings concern how ``nn.Module`` conversions
(``.to()``, ``.double()``, ``.cuda()``, ...) and ``load_state_dict`` treat parameters."""

from __future__ import annotations

_overwrite_module_params_on_conversion: bool = False
_swap_module_params_on_conversion: bool = False


def set_overwrite_module_params_on_conversion(value: bool) -> None:
    """With True, converting a module gives each parameter a new Parameter object
    (``module.weight`` is then another tensor) instead of changing the existing
    parameter's data in place; its ``.grad`` is replaced likewise.

    >>> import flambeau.nn as nn
    >>> flambeau.__future__.set_overwrite_module_params_on_conversion(True)
    >>> m = nn.Linear(2, 2)
    >>> w = m.weight
    >>> m.double().weight is w
    False
    >>> flambeau.__future__.set_overwrite_module_params_on_conversion(False)
    """
    global _overwrite_module_params_on_conversion
    _overwrite_module_params_on_conversion = value


def get_overwrite_module_params_on_conversion() -> bool:
    """Whether module conversions assign new parameters (see the setter). Default False.

    >>> flambeau.__future__.get_overwrite_module_params_on_conversion()
    False
    """
    return _overwrite_module_params_on_conversion


def set_swap_module_params_on_conversion(value: bool) -> None:
    """With True, module conversions and ``load_state_dict`` put the new values into the
    existing parameter objects with ``flambeau.utils.swap_tensors`` (so that references
    to them, an optimizer's say, see the new tensors); it overrides the overwrite
    setting. ``load_state_dict`` then calls ``param.module_load(value)`` to make each
    new value.

    >>> import flambeau.nn as nn
    >>> flambeau.__future__.set_swap_module_params_on_conversion(True)
    >>> m = nn.Linear(2, 2)
    >>> w = m.weight
    >>> m.double().weight is w, w.dtype
    (True, flambeau.float64)
    >>> flambeau.__future__.set_swap_module_params_on_conversion(False)
    """
    global _swap_module_params_on_conversion
    _swap_module_params_on_conversion = value


def get_swap_module_params_on_conversion() -> bool:
    """Whether module conversions swap parameters (see the setter). Default False.

    >>> flambeau.__future__.get_swap_module_params_on_conversion()
    False
    """
    return _swap_module_params_on_conversion
