"""Devices: the current one, switching, and what each one is."""

from __future__ import annotations

import flambeau
from flambeau_cuda._init_state import _C, _lazy_init, device_count


def _get_device_index(device, optional: bool = False) -> int:
    """The CUDA ordinal of ``device`` (int, "cuda:N", flambeau.device); the current
    device for None (or "cuda" without an index) when ``optional``."""
    if isinstance(device, str):
        device = flambeau.device(device)
    if isinstance(device, flambeau.device):
        if device.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {device}")
        index = device.index
    elif device is None:
        index = None
    elif isinstance(device, int) and not isinstance(device, bool):
        return device  # as given: -1 means "no device" to the context managers
    else:
        raise ValueError(f"Expected a cuda device, but got: {device!r}")
    if index is None:
        if not optional:
            raise ValueError(
                f"Expected a cuda device with a specified index or an integer, but got:{device}"
            )
        return current_device()
    return index


def current_device() -> int:
    """The index of the current CUDA device of this thread (initializes CUDA).

    >>> import flambeau
    >>> if flambeau.cuda.is_available():
    ...     assert 0 <= flambeau.cuda.current_device() < flambeau.cuda.device_count()
    """
    _lazy_init()
    return int(_C._current_device())


def set_device(device) -> None:
    """Makes ``device`` current for this thread; a negative index does nothing.

    >>> import flambeau
    >>> if flambeau.cuda.is_available():
    ...     flambeau.cuda.set_device(0)
    """
    index = _get_device_index(device, optional=True) if device is not None else -1
    if index >= 0:
        _C._set_device(index)


class device:
    """Context manager that makes ``device`` current, restoring the previous one on exit.

    ``None`` or a negative index changes nothing.

    >>> import flambeau
    >>> if flambeau.cuda.is_available():
    ...     with flambeau.cuda.device(0):
    ...         assert flambeau.cuda.current_device() == 0
    """

    def __init__(self, device):
        self.idx = -1 if device is None else _get_device_index(device, optional=True)
        self.prev_idx = -1

    def __enter__(self):
        if self.idx >= 0:
            self.prev_idx = current_device()
            if self.prev_idx != self.idx:
                _C._set_device(self.idx)

    def __exit__(self, *exc):
        if self.idx >= 0 and self.prev_idx != self.idx:
            _C._set_device(self.prev_idx)
        return False


class device_of(device):
    """Context manager that makes the device of tensor ``obj`` current (CPU: no change).

    >>> import flambeau
    >>> with flambeau.cuda.device_of(flambeau.ones(1)):
    ...     pass
    """

    def __init__(self, obj):
        idx = obj.get_device() if obj.is_cuda else -1
        super().__init__(idx)


class _CudaDeviceProperties:
    """What ``get_device_properties`` reports of one device."""

    def __init__(self, fields: dict):
        self.__dict__.update(fields)

    def __repr__(self):
        uuid = self.uuid.hex()
        uuid = f"{uuid[:8]}-{uuid[8:12]}-{uuid[12:16]}-{uuid[16:20]}-{uuid[20:]}"
        return (
            f"_CudaDeviceProperties(name='{self.name}', major={self.major}, "
            f"minor={self.minor}, total_memory={self.total_memory // (1024 * 1024)}MB, "
            f"multi_processor_count={self.multi_processor_count}, uuid={uuid}, "
            f"pci_bus_id={self.pci_bus_id}, pci_device_id={self.pci_device_id}, "
            f"pci_domain_id={self.pci_domain_id}, "
            f"L2_cache_size={self.L2_cache_size // (1024 * 1024)}MB)"
        )


def get_device_properties(device=None) -> _CudaDeviceProperties:
    """The properties of a device: ``name``, ``major``, ``minor``, ``total_memory``,
    ``multi_processor_count``, ``L2_cache_size``, ``uuid``, ...

    Raises AssertionError for an index out of range, as PyTorch does.

    >>> import flambeau
    >>> if flambeau.cuda.is_available():
    ...     assert flambeau.cuda.get_device_properties(0).total_memory > 0
    """
    _lazy_init()
    index = _get_device_index(device, optional=True)
    if index < 0 or index >= device_count():
        raise AssertionError("Invalid device id")
    return _CudaDeviceProperties(_C._device_properties(index))


def get_device_name(device=None) -> str:
    """The name of a device, e.g. ``"NVIDIA H100 80GB HBM3"``.

    >>> import flambeau
    >>> if flambeau.cuda.is_available():
    ...     assert isinstance(flambeau.cuda.get_device_name(0), str)
    """
    return get_device_properties(device).name


def get_device_capability(device=None) -> tuple[int, int]:
    """The compute capability of a device as (major, minor), e.g. (9, 0).

    >>> import flambeau
    >>> if flambeau.cuda.is_available():
    ...     assert flambeau.cuda.get_device_capability(0) >= (5, 0)
    """
    prop = get_device_properties(device)
    return prop.major, prop.minor


def synchronize(device=None) -> None:
    """Waits for all work queued on every stream of a device (default: the current one).

    >>> import flambeau
    >>> if flambeau.cuda.is_available():
    ...     flambeau.cuda.synchronize()
    """
    _lazy_init()
    _C._synchronize(_get_device_index(device, optional=True))


def get_arch_list() -> list[str]:
    """The architectures this build has kernels for (``[]`` without a device).

    >>> import flambeau
    >>> isinstance(flambeau.cuda.get_arch_list(), list)
    True
    """
    if not flambeau.cuda.is_available():
        return []
    archs = (a.split("-")[0] for a in _C.ARCHITECTURES.split(";"))
    return [f"sm_{a}" for a in archs if a.isdigit()]


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """Whether the current device computes in bfloat16 (compute capability 8.0 or later).

    >>> import flambeau
    >>> flambeau.cuda.is_bf16_supported() in (True, False)
    True
    """
    if not flambeau.cuda.is_available():
        return False
    return get_device_capability() >= (8, 0) or bool(including_emulation)


def is_tf32_supported() -> bool:
    """Whether the current device has TF32 tensor cores (compute capability 8.0 or later).

    >>> import flambeau
    >>> flambeau.cuda.is_tf32_supported() in (True, False)
    True
    """
    return flambeau.cuda.is_available() and get_device_capability() >= (8, 0)
