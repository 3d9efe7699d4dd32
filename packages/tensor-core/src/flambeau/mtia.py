"""``flambeau.mtia``: Meta's training and inference accelerators (device type ``"mtia"``)
come from a backend plugin.

As :mod:`flambeau.cuda`: with a plugin for ``"mtia"`` installed every attribute is its
module's; without one, no MTIA device is available and the module answers as PyTorch's
does without MTIA.
"""

from flambeau import _device_facade as _f


def _no_memory_stats(device=None) -> dict:
    """Without the device: no allocator statistics."""
    return {}


def _nothing_for(device=None) -> None:
    """Without the device: does nothing."""


def _bf16(including_emulation: bool = True) -> bool:
    """True: PyTorch's answer for MTIA, which does not ask the device."""
    return True


_facade = _f.DeviceFacade(
    "mtia",
    "MTIA",
    {
        **_f.SEEDING,
        **_f.RNG_STATES,
        "is_initialized": _f.false,
        "memory_allocated": _f.no_bytes,
        "max_memory_allocated": _f.no_bytes,
        "reset_peak_memory_stats": _nothing_for,
        "memory_stats": _no_memory_stats,
        "is_bf16_supported": _bf16,
    },
    {
        # PyTorch asserts it was built with MTIA before these,
        **_f.refusals(AssertionError, "get_rng_state", "init", "initial_seed"),
        # and asks the missing runtime for the current device before these.
        **_f.refusals(
            RuntimeError,
            "current_device",
            "current_stream",
            "default_stream",
            "empty_cache",
            "get_device_capability",
            "get_device_properties",
            "set_device",
            "set_rng_state",
            "synchronize",
        ),
    },
)

is_available = _facade.is_available
device_count = _facade.device_count
__getattr__ = _facade.module_getattr
