"""Hooks that apply to every Module: torch.nn.modules.module's register_module_* functions.

Global forward and backward hooks run before each module's own; registration hooks see
(and may replace) every parameter, buffer and submodule as it is registered.
"""

from __future__ import annotations

from collections import OrderedDict

from flambeau.utils.hooks import RemovableHandle

__all__ = [
    "register_module_forward_pre_hook",
    "register_module_forward_hook",
    "register_module_full_backward_pre_hook",
    "register_module_full_backward_hook",
    "register_module_buffer_registration_hook",
    "register_module_module_registration_hook",
    "register_module_parameter_registration_hook",
]

forward_pre_hooks: OrderedDict = OrderedDict()
forward_hooks: OrderedDict = OrderedDict()
forward_hooks_with_kwargs: OrderedDict = OrderedDict()
forward_hooks_always_called: OrderedDict = OrderedDict()
backward_pre_hooks: OrderedDict = OrderedDict()
backward_hooks: OrderedDict = OrderedDict()
buffer_registration_hooks: OrderedDict = OrderedDict()
module_registration_hooks: OrderedDict = OrderedDict()
parameter_registration_hooks: OrderedDict = OrderedDict()


def _has_any_global_hook() -> bool:
    return bool(forward_pre_hooks or forward_hooks or backward_pre_hooks or backward_hooks)


def _add(table, hook, extra=None) -> RemovableHandle:
    handle = RemovableHandle(table, extra_dict=extra)
    table[handle.id] = hook
    return handle


def register_module_forward_pre_hook(hook) -> RemovableHandle:
    """hook(module, args) -> None or new args, before every module's forward."""
    return _add(forward_pre_hooks, hook)


def register_module_forward_hook(hook, *, with_kwargs: bool = False,
                                 always_call: bool = False) -> RemovableHandle:  # fmt: skip
    """hook(module, args, output) (with_kwargs: hook(module, args, kwargs, output)) -> None
    or a new output, after every module's forward; always_call runs it when forward raises."""
    handle = _add(forward_hooks, hook, [forward_hooks_with_kwargs, forward_hooks_always_called])
    if with_kwargs:
        forward_hooks_with_kwargs[handle.id] = True
    if always_call:
        forward_hooks_always_called[handle.id] = True
    return handle


def register_module_full_backward_pre_hook(hook) -> RemovableHandle:
    """hook(module, grad_output) -> None or new grad_output, for every module."""
    return _add(backward_pre_hooks, hook)


def register_module_full_backward_hook(hook) -> RemovableHandle:
    """hook(module, grad_input, grad_output) -> None or new grad_input, for every module."""
    return _add(backward_hooks, hook)


def register_module_buffer_registration_hook(hook) -> RemovableHandle:
    """hook(module, name, buffer) -> None or a buffer to register instead."""
    return _add(buffer_registration_hooks, hook)


def register_module_module_registration_hook(hook) -> RemovableHandle:
    """hook(module, name, submodule) -> None or a module to register instead."""
    return _add(module_registration_hooks, hook)


def register_module_parameter_registration_hook(hook) -> RemovableHandle:
    """hook(module, name, param) -> None or a parameter to register instead."""
    return _add(parameter_registration_hooks, hook)


def run_registration_hooks(table, module, name, value):
    for hook in table.values():
        output = hook(module, name, value)
        if output is not None:
            value = output
    return value
