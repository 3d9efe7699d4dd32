"""``flambeau.xpu``: Intel GPUs (device type ``"xpu"``) come from a backend plugin.

As :mod:`flambeau.cuda`: with a plugin for ``"xpu"`` installed every attribute is its
module's; without one, no XPU device is available and the module answers as PyTorch's
does on a machine without XPU.
"""

from flambeau import _device_facade as _f

_facade = _f.DeviceFacade(
    "xpu",
    "XPU",
    _f.CUDA_LIKE,
    # PyTorch asserts it was built with XPU before these.
    _f.refusals(
        AssertionError,
        "current_device",
        "current_stream",
        "get_device_capability",
        "get_device_name",
        "get_device_properties",
        "get_rng_state",
        "init",
        "initial_seed",
        "set_device",
        "set_per_process_memory_fraction",
        "synchronize",
    ),
)

is_available = _facade.is_available
device_count = _facade.device_count
__getattr__ = _facade.module_getattr
