"""The "testdev" device: a flambeau backend plugin used by the integration tests.

Importing this module registers the device (the extension does it through the C
ABI). The functions here are what ``flambeau.testdev`` offers, as
``flambeau.cuda`` would for CUDA.
"""

import flambeau
from flambeau import _C
from flambeau_testdev import _testdev  # noqa: F401 (importing it registers the backend)

_NAME = "testdev"
# Naming our own device while flambeau loads us must work (re-entrancy).
_DEVICE = flambeau.device(_NAME)


def is_available() -> bool:
    return device_count() > 0


def device_count() -> int:
    return _C._device_count(_NAME)


def current_device() -> int:
    return _C._current_device(_NAME)


def set_device(index: int) -> None:
    _C._set_device(_NAME, index)


def synchronize(device: int = -1) -> None:
    _C._synchronize(_NAME, device)


def memory_stats(device: int = -1) -> dict:
    return _C._memory_stats(_NAME, device)


def memory_allocated(device: int = -1) -> int:
    return memory_stats(device)["allocated_bytes"]


def memory_reserved(device: int = -1) -> int:
    return memory_stats(device)["reserved_bytes"]


def max_memory_allocated(device: int = -1) -> int:
    return memory_stats(device)["peak_allocated_bytes"]


def reset_peak_memory_stats(device: int = -1) -> None:
    _C._reset_peak_memory_stats(_NAME, device)


def empty_cache(device: int = -1) -> None:
    _C._empty_cache(_NAME, device)


# ---- crossing processes ---------------------------------------------------------------------
# How flambeau.multiprocessing sends testdev tensors: this device's memory is private to
# its process, so a tensor travels through the host's shared memory and is copied back
# onto the device on arrival (a CUDA backend would send an IPC handle instead).


def _rebuild_tensor(host, requires_grad):
    return host.to(_NAME).requires_grad_(requires_grad)


def _reduce_tensor(tensor):
    return _rebuild_tensor, (tensor.detach().cpu(), tensor.requires_grad)


try:
    from flambeau.multiprocessing import reductions as _reductions
except ImportError:  # flambeau-mp is not installed: nothing to register with
    pass
else:
    _reductions.register_device_reducer(_NAME, _reduce_tensor)
