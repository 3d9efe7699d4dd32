"""Device arguments of the data-parallel functions, as PyTorch reads them."""

from __future__ import annotations

import flambeau


def available_device_type():
    """The accelerator kind DataParallel spreads over: "cuda" when one is usable, else None
    (PyTorch's answer on a machine without an accelerator)."""
    return "cuda" if flambeau.cuda.is_available() else None


def all_device_indices() -> list[int]:
    return list(range(flambeau.cuda.device_count()))


def device_index(device) -> int:
    """The index of an accelerator device given as an int, a string or a flambeau.device;
    -1 (or "cpu") means the CPU."""
    if isinstance(device, int) and not isinstance(device, bool):
        return device
    device = flambeau.device(device)
    if device.type == "cpu":
        return -1
    return 0 if device.index is None else device.index


def resolve_devices(device_ids, output_device) -> tuple[list[int], int]:
    """device_ids (every device when None) and output_device (the first of them when None)
    as indices; RuntimeError when there are none."""
    if device_ids is None:
        device_ids = all_device_indices()
    if not device_ids:
        raise RuntimeError("no available devices were found")
    ids = [device_index(d) for d in device_ids]
    return ids, device_index(ids[0] if output_device is None else output_device)


def as_device(device):
    """A flambeau.device from an index (-1: CPU, n >= 0: cuda:n), a string or a device."""
    if isinstance(device, int) and not isinstance(device, bool):
        if device < 0:
            return flambeau.device("cpu")
        if available_device_type() is None:
            raise RuntimeError(
                f"device index {device} names a CUDA device, but no CUDA device is available "
                "(flambeau.cuda.is_available() is False); pass devices such as 'cpu' instead"
            )
        return flambeau.device("cuda", device)
    return flambeau.device(device)
