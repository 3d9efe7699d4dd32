"""``flambeau.mps``: Apple's Metal devices (device type ``"mps"``) come from a backend
plugin.

As :mod:`flambeau.cuda`: with a plugin for ``"mps"`` installed every attribute is its
module's; without one, no MPS device is available and the module answers as PyTorch's
does without MPS: only seeding is silently skipped (``flambeau.manual_seed`` may call
it), everything else needs the device. The build-time flags are
:mod:`flambeau.backends.mps`'s.
"""

from flambeau import _device_facade as _f


def _skip_seed(seed) -> None:
    """Without the device: does nothing (PyTorch does not even look at the seed)."""


_facade = _f.DeviceFacade(
    "mps",
    "MPS",
    {"manual_seed": _skip_seed},
    _f.refusals(
        RuntimeError,
        "current_allocated_memory",
        "driver_allocated_memory",
        "empty_cache",
        "get_rng_state",
        "recommended_max_memory",
        "seed",
        "set_per_process_memory_fraction",
        "set_rng_state",
        "synchronize",
    ),
)

is_available = _facade.is_available
device_count = _facade.device_count
__getattr__ = _facade.module_getattr
