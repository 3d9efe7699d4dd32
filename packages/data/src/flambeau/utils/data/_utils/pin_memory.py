"""Page-locked (pinned) host memory for batches, when a device backend provides it.

On a CPU-only install the DataLoader's ``pin_memory=True`` warns once and does nothing,
as PyTorch does without an accelerator."""

from __future__ import annotations

import collections
import copy
import warnings

import flambeau


def _accelerator():
    # Through the module's dict: flambeau.accelerator is loaded on first access.
    try:
        from flambeau import accelerator as acc

        if acc.is_available():
            return acc.current_accelerator()
    except Exception:
        return None
    return None


def pin_device(pin_memory: bool, pin_memory_device: str = "") -> str | None:
    """The device type whose pinned memory a loader's batches go to, or None (no pinning),
    with PyTorch's warnings: `pin_memory_device` is deprecated (the current accelerator is
    used), and without an accelerator ``pin_memory=True`` does nothing."""
    if not pin_memory:
        return None
    acc = _accelerator()
    if pin_memory_device:
        warnings.warn(
            "pin_memory_device is deprecated, the current accelerator will be used as the "
            f"device,ignore pin_memory_device='{pin_memory_device}'.",
            stacklevel=4,
        )
    if acc is None:
        warnings.warn(
            "'pin_memory' argument is set as true but no accelerator is found, "
            "then device pinned memory won't be used.",
            stacklevel=4,
        )
        return None
    return acc.type


def pin_memory(data, device=None):
    """`data` with every tensor (nested in mappings, tuples and sequences) in pinned
    memory, and every object with a ``pin_memory()`` method pinned by it."""
    if isinstance(data, flambeau.Tensor):
        return data.pin_memory()
    if hasattr(data, "pin_memory"):
        return data.pin_memory()
    if isinstance(data, (str, bytes)):
        return data
    if isinstance(data, collections.abc.Mapping):
        try:
            if isinstance(data, collections.abc.MutableMapping):
                clone = copy.copy(data)
                clone.update({k: pin_memory(sample, device) for k, sample in data.items()})
                return clone
            return type(data)({k: pin_memory(sample, device) for k, sample in data.items()})
        except TypeError:
            return {k: pin_memory(sample, device) for k, sample in data.items()}
    if isinstance(data, tuple):
        if hasattr(data, "_fields"):  # namedtuple
            return type(data)(*(pin_memory(sample, device) for sample in data))
        return type(data)(pin_memory(sample, device) for sample in data)
    if isinstance(data, collections.abc.Sequence):
        try:
            if isinstance(data, collections.abc.MutableSequence):
                clone = copy.copy(data)
                for i, item in enumerate(data):
                    clone[i] = pin_memory(item, device)
                return clone
            return type(data)([pin_memory(sample, device) for sample in data])
        except TypeError:
            return [pin_memory(sample, device) for sample in data]
    return data
