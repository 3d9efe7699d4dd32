"""flambeau.__future__: behaviours that will become the default, opted into now
(PyTorch's torch.__future__). Both settings concern how ``nn.Module`` conversions
(``.to()``, ``.double()``, ``.cuda()``, ...) and ``load_state_dict`` treat parameters."""

from __future__ import annotations

_overwrite_module_params_on_conversion: bool = False
_swap_module_params_on_conversion: bool = False


def set_overwrite_module_params_on_conversion(value: bool) -> None:
    """With True, converting a module gives each parameter a new Parameter object
    (``module.weight`` is then another tensor) instead of changing the existing
    parameter's data in place; its ``.grad`` is replaced likewise."""
    global _overwrite_module_params_on_conversion
    _overwrite_module_params_on_conversion = value


def get_overwrite_module_params_on_conversion() -> bool:
    """Whether module conversions assign new parameters (see the setter). Default False."""
    return _overwrite_module_params_on_conversion


def set_swap_module_params_on_conversion(value: bool) -> None:
    """With True, module conversions and ``load_state_dict`` put the new values into the
    existing parameter objects with ``flambeau.utils.swap_tensors`` (so that references
    to them, an optimizer's say, see the new tensors); it overrides the overwrite
    setting. ``load_state_dict`` then calls ``param.module_load(value)`` to make each
    new value."""
    global _swap_module_params_on_conversion
    _swap_module_params_on_conversion = value


def get_swap_module_params_on_conversion() -> bool:
    """Whether module conversions swap parameters (see the setter). Default False."""
    return _swap_module_params_on_conversion
